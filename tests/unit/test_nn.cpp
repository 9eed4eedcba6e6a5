#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "onelearn/metrics/accuracy_score.hpp"
#include "onelearn/nn/sequential.hpp"
#include "nn_support.hpp"
#include "support.hpp"

using namespace onelearn;

namespace {

// ---------------------------------------------------------------------------------------------
// Finite-difference machinery (double precision, central differences).

using test::fd_step;
using test::fd_tolerance;
using test::relative_error;

/// Random values away from 0 (|v| >= 0.1), so kinks (ReLU, ELU at 0) are never crossed by ±h.
std::vector<double> random_values(std::mt19937_64& engine, index_t n, bool away_from_zero) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) {
    x = normal(engine);
    if (away_from_zero) x = (x < 0 ? -1 : 1) * (0.1 + std::abs(x));
  }
  return v;
}

/// Checks a layer's input gradient and parameter gradients against central differences of
/// L(x, params) = Σ r ⊙ layer(x) + layer.regularization_loss(), for a random x and r.
void check_layer_gradients(nn::Layer<double>& layer, const nn::Shape& sample_shape, index_t batch,
                           std::uint64_t seed) {
  CAPTURE(std::string(layer.class_name()));
  CAPTURE(sample_shape.to_string());
  CAPTURE(batch);
  CAPTURE(seed);
  std::mt19937_64 engine(seed);
  layer.build(sample_shape, seed);
  const nn::Shape shape = sample_shape.with_batch(batch);
  std::vector<double> x = random_values(engine, shape.size(), true);
  const nn::Shape out_shape = layer.output_shape(sample_shape).with_batch(batch);
  const std::vector<double> r = random_values(engine, out_shape.size(), false);

  auto objective = [&]() {
    const auto y = layer.forward({x.data(), shape}, true);
    REQUIRE(y.shape == out_shape);
    double total = layer.regularization_loss();
    for (index_t i = 0; i < y.size(); ++i) total += r[static_cast<std::size_t>(i)] * y.data[i];
    return total;
  };

  // Analytic gradients.
  (void)objective();
  const auto dx_view = layer.backward({r.data(), out_shape}, true);
  REQUIRE(dx_view.shape == shape);
  const std::vector<double> dx(dx_view.data, dx_view.data + dx_view.size());
  std::vector<std::vector<double>> dparams;
  for (const auto& g : layer.gradients()) dparams.emplace_back(g.begin(), g.end());

  // Numeric input gradient.
  std::vector<double> numeric(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + fd_step;
    const double plus = objective();
    x[i] = saved - fd_step;
    const double minus = objective();
    x[i] = saved;
    numeric[i] = (plus - minus) / (2 * fd_step);
  }
  CHECK(relative_error(dx, numeric) < fd_tolerance);

  // Numeric parameter gradients.
  auto params = layer.parameters();
  REQUIRE(params.size() == dparams.size());
  for (std::size_t b = 0; b < params.size(); ++b) {
    CAPTURE(b);
    std::vector<double> numeric_p(params[b].size());
    for (std::size_t i = 0; i < params[b].size(); ++i) {
      const double saved = params[b][i];
      params[b][i] = saved + fd_step;
      const double plus = objective();
      params[b][i] = saved - fd_step;
      const double minus = objective();
      params[b][i] = saved;
      numeric_p[i] = (plus - minus) / (2 * fd_step);
    }
    CHECK(relative_error(dparams[b], numeric_p) < fd_tolerance);
  }
}

/// A random per-sample shape of the given rank, each dimension in 1..5.
nn::Shape random_shape(std::mt19937_64& engine, int rank) {
  std::uniform_int_distribution<index_t> dim(1, 5);
  nn::Shape s;
  for (int i = 0; i < rank; ++i) s.push_back(dim(engine));
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Layers.

TEST_CASE("nn layers: input and parameter gradients match central differences") {
  const std::uint64_t seed = 20261122;
  CAPTURE(seed);
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<index_t> batch(1, 4);

  SUBCASE("Dense, plain and with every fused activation, bias, L2 and N-d input") {
    for (const char* activation :
         {"", "relu", "leaky_relu", "elu", "gelu", "sigmoid", "tanh", "softmax", "log_softmax"}) {
      CAPTURE(activation);
      for (int rep = 0; rep < 2; ++rep) {
        nn::DenseLayer<double> dense(nn::Dense(
            std::uniform_int_distribution<index_t>(1, 5)(engine),
            {.activation = activation, .use_bias = rep == 0, .kernel_l2 = rep == 1 ? 0.05 : 0.0}));
        check_layer_gradients(dense, random_shape(engine, 1 + rep), batch(engine), engine());
      }
    }
  }
  SUBCASE("activation layers on random shapes of rank 1 to 3") {
    std::vector<std::unique_ptr<nn::Layer<double>>> layers;
    layers.push_back(nn::ReLU{}.make<double>());
    layers.push_back(nn::LeakyReLU{0.2}.make<double>());
    layers.push_back(nn::ELU{0.7}.make<double>());
    layers.push_back(nn::GELU{}.make<double>());
    layers.push_back(nn::Sigmoid{}.make<double>());
    layers.push_back(nn::Tanh{}.make<double>());
    layers.push_back(nn::Softmax{}.make<double>());
    layers.push_back(nn::LogSoftmax{}.make<double>());
    for (auto& layer : layers) {
      for (int rank = 1; rank <= 3; ++rank) {
        check_layer_gradients(*layer, random_shape(engine, rank), batch(engine), engine());
      }
    }
  }
  SUBCASE("Flatten") {
    auto flatten = nn::Flatten{}.make<double>();
    check_layer_gradients(*flatten, nn::Shape{2, 3, 4}, 3, engine());
    CHECK(flatten->output_shape(nn::Shape{2, 3, 4}) == nn::Shape{24});
  }
}

TEST_CASE("nn activation values by hand") {
  // ReLU, LeakyReLU(0.1), ELU(1), GELU (exact: x Φ(x)), sigmoid, tanh at x = -1 and 2.
  const std::vector<double> x{-1.0, 2.0};
  auto apply = [&](const auto& spec) {
    auto layer = spec.template make<double>();
    const auto y = layer->forward({x.data(), nn::Shape{1, 2}}, false);
    return std::vector<double>(y.data, y.data + 2);
  };
  const double phi_minus1 = 0.5 * std::erfc(1 / std::sqrt(2.0));  // Φ(-1) = 0.15865525393145707
  CHECK(phi_minus1 == doctest::Approx(0.15865525393145707).epsilon(1e-14));
  CHECK(apply(nn::ReLU{}) == std::vector<double>{0.0, 2.0});
  CHECK(apply(nn::LeakyReLU{0.1}) == std::vector<double>{-0.1, 2.0});
  CHECK(apply(nn::ELU{})[0] == doctest::Approx(std::exp(-1.0) - 1).epsilon(1e-15));
  // torch.nn.functional.gelu(torch.tensor([-1., 2.], dtype=torch.float64)) =
  // [-0.15865525393145707, 1.9544997361036416] (x Φ(x)).
  CHECK(apply(nn::GELU{})[0] == doctest::Approx(-0.15865525393145707).epsilon(1e-14));
  CHECK(apply(nn::GELU{})[1] == doctest::Approx(1.9544997361036416).epsilon(1e-14));
  CHECK(apply(nn::Sigmoid{})[1] == doctest::Approx(1 / (1 + std::exp(-2.0))).epsilon(1e-14));
  CHECK(apply(nn::Tanh{})[0] == doctest::Approx(std::tanh(-1.0)).epsilon(1e-14));
  // softmax([-1, 2]) = [1, e^3] / (1 + e^3); log_softmax = log of it.
  const double p0 = 1 / (1 + std::exp(3.0));
  CHECK(apply(nn::Softmax{})[0] == doctest::Approx(p0).epsilon(1e-14));
  CHECK(apply(nn::LogSoftmax{})[1] == doctest::Approx(std::log(1 - p0)).epsilon(1e-14));
}

TEST_CASE("nn Dropout: inverted scaling, a gradient through the same mask, identity at inference") {
  auto layer = nn::Dropout{0.25, 11}.make<double>();
  layer->build(nn::Shape{1000}, 0);
  std::vector<double> x(4000);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1.0 + static_cast<double>(i % 7);
  const nn::Shape shape{4, 1000};
  const auto y = layer->forward({x.data(), shape}, true);
  std::vector<double> mask(x.size());
  index_t dropped = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mask[i] = y.data[i] / x[i];
    const bool zero = mask[i] == 0;
    dropped += zero ? 1 : 0;
    CHECK((zero || std::abs(mask[i] - 1 / 0.75) < 1e-15));
  }
  // 4000 Bernoulli(0.25) draws: mean 1000, sd 27; 6 sd either side.
  CHECK(dropped > 840);
  CHECK(dropped < 1160);
  // The layer is linear in x for a fixed mask: dL/dx = r ⊙ mask.
  std::vector<double> r(x.size());
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = std::sin(static_cast<double>(i));
  const auto dx = layer->backward({r.data(), shape}, true);
  double worst = 0;
  for (std::size_t i = 0; i < r.size(); ++i)
    worst = std::max(worst, std::abs(dx.data[i] - r[i] * mask[i]));
  CHECK(worst == 0);
  // Inference: the identity, the very same buffer.
  CHECK(layer->forward({x.data(), shape}, false).data == x.data());
  // The next training call draws a new mask; a new layer with the same seed repeats the first.
  const std::vector<double> first(y.data, y.data + y.size());
  const auto second = layer->forward({x.data(), shape}, true);
  CHECK(!std::equal(first.begin(), first.end(), second.data));
  auto again = nn::Dropout{0.25, 11}.make<double>();
  again->build(nn::Shape{1000}, 999);  // an explicit seed wins over the model's
  const auto repeat = again->forward({x.data(), shape}, true);
  CHECK(std::equal(first.begin(), first.end(), repeat.data));
  CHECK_THROWS_AS(nn::Dropout{1.0}.make<double>(), invalid_argument);
}

TEST_CASE("nn Dense initializers follow Keras's ranges") {
  // glorot_uniform: limit sqrt(6 / (fan_in + fan_out)); he_normal: |w| <= 2 stddev, stddev
  // sqrt(2 / fan_in) / 0.8796 (truncated normal), so |w| <= 2 sqrt(2 / 50) / 0.8796 = 0.4548.
  for (const char* init : {"glorot_uniform", "glorot_normal", "he_uniform", "he_normal"}) {
    CAPTURE(init);
    nn::DenseLayer<double> dense(nn::Dense(30, {.kernel_initializer = init, .seed = 5}));
    dense.build(nn::Shape{50}, 0);
    const auto params = dense.parameters();
    const auto& kernel = params[0];
    double limit = 0;
    if (std::string(init) == "glorot_uniform") limit = std::sqrt(6.0 / 80);
    if (std::string(init) == "glorot_normal") limit = 2 * std::sqrt(2.0 / 80) / 0.87962566103423978;
    if (std::string(init) == "he_uniform") limit = std::sqrt(6.0 / 50);
    if (std::string(init) == "he_normal") limit = 2 * std::sqrt(2.0 / 50) / 0.87962566103423978;
    double largest = 0, sum_sq = 0;
    for (double w : kernel) {
      largest = std::max(largest, std::abs(w));
      sum_sq += w * w;
    }
    CHECK(largest <= limit);
    CHECK(largest > 0.8 * limit);  // 1500 draws reach near the edge
    // Variance of all four is scale / n: 2/80 (Glorot) or 2/50 (He), within 10%.
    const double expected_var = std::string(init).starts_with("glorot") ? 2.0 / 80 : 2.0 / 50;
    CHECK(sum_sq / 1500 == doctest::Approx(expected_var).epsilon(0.1));
    for (double b : params[1]) CHECK(b == 0);
  }
  CHECK_THROWS_AS(nn::Dense(3, {.kernel_initializer = "lecun"}).make<float>(), invalid_argument);
  CHECK_THROWS_AS(nn::Dense(3, "swish").make<float>(), invalid_argument);
  CHECK_THROWS_AS(nn::Dense(0).make<float>(), invalid_argument);
  CHECK_THROWS_AS(nn::Dense(2, {.kernel_l2 = -1}).make<float>(), invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Losses.

namespace {

/// Checks a loss's gradient in its outputs against central differences.
void check_loss_gradient(const nn::Loss<double>& loss, std::vector<double> output,
                         const nn::Shape& shape, const nn::Targets<double>& targets) {
  CAPTURE(std::string(loss.name()));
  std::vector<double> grad(output.size());
  (void)loss.compute({output.data(), shape}, targets, {grad.data(), shape});
  std::vector<double> numeric(output.size());
  for (std::size_t i = 0; i < output.size(); ++i) {
    const double saved = output[i];
    output[i] = saved + fd_step;
    const double plus = loss.compute({output.data(), shape}, targets, {});
    output[i] = saved - fd_step;
    const double minus = loss.compute({output.data(), shape}, targets, {});
    output[i] = saved;
    numeric[i] = (plus - minus) / (2 * fd_step);
  }
  CHECK(relative_error(grad, numeric) < fd_tolerance);
}

}  // namespace

TEST_CASE("nn losses: gradients match central differences on random shapes") {
  const std::uint64_t seed = 77;
  CAPTURE(seed);
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> unit(0.05, 0.95);
  for (int rep = 0; rep < 3; ++rep) {
    const index_t rows = std::uniform_int_distribution<index_t>(1, 6)(engine);
    const index_t cols = std::uniform_int_distribution<index_t>(2, 5)(engine);
    const nn::Shape shape{rows, cols};
    std::vector<double> out = random_values(engine, rows * cols, false);
    std::vector<double> target = random_values(engine, rows * cols, false);
    // Keep |ŷ - y| away from MAE's kink (0) and Huber's (±delta = ±0.7).
    for (std::size_t i = 0; i < out.size(); ++i) {
      double e = out[i] - target[i];
      if (std::abs(e) < 0.05 || std::abs(std::abs(e) - 0.7) < 0.05) out[i] += 0.2;
      e = out[i] - target[i];
      (void)e;
    }
    const nn::Targets<double> real{nullptr, target.data(), cols};
    check_loss_gradient(*nn::MeanSquaredError{}.make<double>(), out, shape, real);
    check_loss_gradient(*nn::MeanAbsoluteError{}.make<double>(), out, shape, real);
    check_loss_gradient(*nn::Huber{0.7}.make<double>(), out, shape, real);
    check_loss_gradient(*nn::BinaryCrossentropy{.from_logits = true}.make<double>(), out, shape,
                        real);
    std::vector<double> probabilities(out.size()), binary_targets(out.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      probabilities[i] = unit(engine);
      binary_targets[i] = unit(engine);  // soft targets in (0, 1) are allowed
    }
    const nn::Targets<double> soft{nullptr, binary_targets.data(), cols};
    check_loss_gradient(*nn::BinaryCrossentropy{}.make<double>(), probabilities, shape, soft);
    std::vector<std::int64_t> labels(static_cast<std::size_t>(rows));
    for (auto& l : labels) l = std::uniform_int_distribution<std::int64_t>(0, cols - 1)(engine);
    const nn::Targets<double> sparse{labels.data(), nullptr, 0};
    check_loss_gradient(*nn::SparseCategoricalCrossentropy{.from_logits = true}.make<double>(), out,
                        shape, sparse);
    check_loss_gradient(*nn::SparseCategoricalCrossentropy{}.make<double>(), probabilities, shape,
                        sparse);
  }
}

TEST_CASE("nn loss values by hand") {
  const nn::Shape shape{2, 2};
  const std::vector<double> out{1.0, 2.0, -1.0, 0.5};
  const std::vector<double> y{0.0, 0.0, 0.0, 3.0};
  const nn::Targets<double> t{nullptr, y.data(), 2};
  // errors 1, 2, -1, -2.5: MSE (1 + 4 + 1 + 6.25) / 4; MAE 6.5 / 4;
  // Huber(1): 0.5, 1.5, 0.5, 2.0 -> 4.5 / 4.
  CHECK(nn::MeanSquaredError{}.make<double>()->compute({out.data(), shape}, t, {}) ==
        doctest::Approx(12.25 / 4));
  CHECK(nn::MeanAbsoluteError{}.make<double>()->compute({out.data(), shape}, t, {}) ==
        doctest::Approx(6.5 / 4));
  CHECK(nn::Huber{}.make<double>()->compute({out.data(), shape}, t, {}) ==
        doctest::Approx(4.5 / 4));
  // Cross-entropy from logits z = (0, ln 2, ln 3), label 2: log(1 + 2 + 3) - ln 3 = ln 2;
  // from probabilities (0.2, 0.3, 0.5) (sum 1), label 1: -ln 0.3.
  const std::vector<double> z{0.0, std::log(2.0), std::log(3.0)};
  const std::vector<std::int64_t> label{2};
  CHECK(nn::SparseCategoricalCrossentropy{.from_logits = true}.make<double>()->compute(
            {z.data(), nn::Shape{1, 3}}, {label.data(), nullptr, 0}, {}) ==
        doctest::Approx(std::log(2.0)).epsilon(1e-14));
  const std::vector<double> p{0.2, 0.3, 0.5};
  const std::vector<std::int64_t> label1{1};
  CHECK(nn::SparseCategoricalCrossentropy{}.make<double>()->compute(
            {p.data(), nn::Shape{1, 3}}, {label1.data(), nullptr, 0}, {}) ==
        doctest::Approx(-std::log(0.3)).epsilon(1e-14));
  // Binary cross-entropy of logit 0 is ln 2 whatever the target; of p = 0.8, y = 1: -ln 0.8.
  const std::vector<double> zero{0.0}, one{1.0}, p8{0.8};
  CHECK(nn::BinaryCrossentropy{.from_logits = true}.make<double>()->compute(
            {zero.data(), nn::Shape{1, 1}}, {nullptr, one.data(), 1}, {}) ==
        doctest::Approx(std::log(2.0)).epsilon(1e-14));
  CHECK(nn::BinaryCrossentropy{}.make<double>()->compute({p8.data(), nn::Shape{1, 1}},
                                                         {nullptr, one.data(), 1}, {}) ==
        doctest::Approx(-std::log(0.8)).epsilon(1e-14));
  // A huge logit stays finite (the stable form): loss of z = 1000, y = 0 is 1000.
  const std::vector<double> big{1000.0};
  CHECK(nn::BinaryCrossentropy{.from_logits = true}.make<double>()->compute(
            {big.data(), nn::Shape{1, 1}}, {nullptr, zero.data(), 1}, {}) == doctest::Approx(1000));
  CHECK_THROWS_AS(nn::Huber{0}.make<double>(), invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Optimizers: the first steps against PyTorch's documented update rules, written out here as
// plain scalar loops (torch.optim docs, "Algorithm" boxes), and first steps by hand.

namespace {

using Gradients = std::vector<std::vector<double>>;  // one gradient vector per step

// Gradients for three steps of a 3-parameter problem.
const std::vector<double> p0{1.0, -2.0, 0.5};
const Gradients grads{{0.1, -0.2, 0.3}, {-0.4, 0.1, 0.2}, {0.05, 0.3, -0.1}};

/// Runs the library optimizer for grads.size() steps on p0; returns the parameters after each.
Gradients run(nn::Optimizer<double>& opt, const Gradients& gs = grads) {
  std::vector<double> p = p0;
  std::vector<double> g;
  std::vector<std::span<double>> ps{std::span<double>(p)};
  opt.build(ps);
  Gradients out;
  for (const auto& step : gs) {
    g = step;
    std::vector<std::span<double>> gv{std::span<double>(g)};
    opt.step(ps, gv);
    out.push_back(p);
  }
  return out;
}

double max_abs_diff(const Gradients& a, const Gradients& b) {
  double worst = 0;
  for (std::size_t s = 0; s < a.size(); ++s) {
    for (std::size_t i = 0; i < a[s].size(); ++i)
      worst = std::max(worst, std::abs(a[s][i] - b[s][i]));
  }
  return worst;
}

}  // namespace

TEST_CASE("nn optimizers follow PyTorch's update rules") {
  const std::size_t n = p0.size();
  SUBCASE("SGD with momentum, Nesterov and weight decay") {
    for (bool nesterov : {false, true}) {
      CAPTURE(nesterov);
      const double lr = 0.1, mu = 0.9, wd = 0.01;
      auto opt =
          nn::SGD{.learning_rate = lr, .momentum = mu, .nesterov = nesterov, .weight_decay = wd}
              .make<double>();
      Gradients expected;
      std::vector<double> p = p0, b(n);
      for (std::size_t t = 0; t < grads.size(); ++t) {
        for (std::size_t i = 0; i < n; ++i) {
          double g = grads[t][i] + wd * p[i];
          b[i] = t == 0 ? g : mu * b[i] + g;  // dampening 0
          g = nesterov ? g + mu * b[i] : b[i];
          p[i] -= lr * g;
        }
        expected.push_back(p);
      }
      CHECK(max_abs_diff(run(*opt), expected) < 1e-15);
    }
    // First step by hand, no momentum: 1 - 0.1 * 0.1 = 0.99.
    auto plain = nn::SGD{.learning_rate = 0.1}.make<double>();
    CHECK(run(*plain)[0][0] == doctest::Approx(0.99).epsilon(1e-15));
  }
  SUBCASE("Adam and AdamW") {
    const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-7;
    for (bool decoupled : {false, true}) {
      CAPTURE(decoupled);
      const double wd = decoupled ? 0.05 : 0.02;
      std::unique_ptr<nn::Optimizer<double>> opt =
          decoupled ? nn::AdamW{.learning_rate = lr, .weight_decay = wd}.make<double>()
                    : nn::Adam{.learning_rate = lr, .weight_decay = wd}.make<double>();
      Gradients expected;
      std::vector<double> p = p0, m(n), v(n);
      for (std::size_t t = 1; t <= grads.size(); ++t) {
        for (std::size_t i = 0; i < n; ++i) {
          double g = grads[t - 1][i];
          if (decoupled) {
            p[i] -= lr * wd * p[i];
          } else {
            g += wd * p[i];
          }
          m[i] = b1 * m[i] + (1 - b1) * g;
          v[i] = b2 * v[i] + (1 - b2) * g * g;
          const double m_hat = m[i] / (1 - std::pow(b1, static_cast<double>(t)));
          const double v_hat = v[i] / (1 - std::pow(b2, static_cast<double>(t)));
          p[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
        }
        expected.push_back(p);
      }
      CHECK(max_abs_diff(run(*opt), expected) < 1e-14);
    }
    // First step by hand: m̂ = g, v̂ = g², so p1 = p0 - lr g / (|g| + eps) = 1 - 0.01 * 0.1 /
    // 0.1000001.
    auto adam = nn::Adam{.learning_rate = lr}.make<double>();
    CHECK(run(*adam)[0][0] == doctest::Approx(1 - 0.01 * 0.1 / 0.1000001).epsilon(1e-15));
  }
  SUBCASE("RMSprop, plain, centred and with momentum") {
    const double lr = 0.01, rho = 0.9, eps = 1e-7;
    for (int variant = 0; variant < 3; ++variant) {
      CAPTURE(variant);
      const bool centered = variant == 1;
      const double mu = variant == 2 ? 0.5 : 0.0;
      auto opt = nn::RMSprop{.learning_rate = lr, .rho = rho, .momentum = mu, .centered = centered}
                     .make<double>();
      Gradients expected;
      std::vector<double> p = p0, v(n), a(n), b(n);
      for (const auto& step : grads) {
        for (std::size_t i = 0; i < n; ++i) {
          const double g = step[i];
          v[i] = rho * v[i] + (1 - rho) * g * g;
          double tilde = v[i];
          if (centered) {
            a[i] = rho * a[i] + (1 - rho) * g;
            tilde -= a[i] * a[i];
          }
          const double d = std::sqrt(tilde) + eps;
          if (mu > 0) {
            b[i] = mu * b[i] + g / d;
            p[i] -= lr * b[i];
          } else {
            p[i] -= lr * g / d;
          }
        }
        expected.push_back(p);
      }
      CHECK(max_abs_diff(run(*opt), expected) < 1e-14);
    }
    // First step by hand: v = 0.1 g², p1 = 1 - 0.01 * 0.1 / (sqrt(0.001) + 1e-7).
    auto plain = nn::RMSprop{.learning_rate = lr}.make<double>();
    CHECK(run(*plain)[0][0] ==
          doctest::Approx(1 - 0.001 / (std::sqrt(0.001) + 1e-7)).epsilon(1e-15));
  }
  SUBCASE("Adagrad") {
    const double lr = 0.1, init = 0.1, eps = 1e-7;
    auto opt = nn::Adagrad{.learning_rate = lr}.make<double>();
    Gradients expected;
    std::vector<double> p = p0, s(n, init);
    for (const auto& step : grads) {
      for (std::size_t i = 0; i < n; ++i) {
        s[i] += step[i] * step[i];
        p[i] -= lr * step[i] / (std::sqrt(s[i]) + eps);
      }
      expected.push_back(p);
    }
    CHECK(max_abs_diff(run(*opt), expected) < 1e-15);
    // First step by hand: s = 0.1 + 0.01 = 0.11; p1 = 1 - 0.1 * 0.1 / (sqrt(0.11) + 1e-7).
    CHECK(run(*opt)[0][0] == doctest::Approx(1 - 0.01 / (std::sqrt(0.11) + 1e-7)).epsilon(1e-15));
  }
  SUBCASE("global_clipnorm scales every gradient by clipnorm / global norm") {
    // Two steps: g = (0.3, 0.4, 1.2) has norm 1.3 > 0.65, so it is halved; (0.03, 0.04, 0.12)
    // has norm 0.13 and is left alone. SGD lr 1.
    const Gradients gs{{0.3, 0.4, 1.2}, {0.03, 0.04, 0.12}};
    auto opt = nn::SGD{.learning_rate = 1.0, .global_clipnorm = 0.65}.make<double>();
    const Gradients got = run(*opt, gs);
    CHECK(got[0][0] == doctest::Approx(1 - 0.15).epsilon(1e-15));
    CHECK(got[0][2] == doctest::Approx(0.5 - 0.6).epsilon(1e-15));
    CHECK(got[1][1] == doctest::Approx(-2 - 0.2 - 0.04).epsilon(1e-15));
  }
  SUBCASE("bad hyper-parameters") {
    CHECK_THROWS_AS(nn::SGD{.learning_rate = -1}.make<double>(), invalid_argument);
    CHECK_THROWS_AS(nn::SGD{.momentum = 1}.make<double>(), invalid_argument);
    CHECK_THROWS_AS(nn::Adam{.beta_1 = 1.5}.make<double>(), invalid_argument);
    CHECK_THROWS_AS(nn::Adam{.epsilon = 0}.make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::RMSprop{.rho = -0.1}.make<double>(), invalid_argument);
    CHECK_THROWS_AS(nn::Adagrad{.global_clipnorm = -1}.make<double>(), invalid_argument);
    const nn::CosineDecay no_steps{.initial_learning_rate = 0.1, .decay_steps = 0};
    CHECK_THROWS_AS(nn::SGD{.learning_rate = no_steps}.make<double>(), invalid_argument);
  }
}

TEST_CASE("nn learning-rate schedules by hand, and inside an optimizer") {
  const nn::ExponentialDecay exp_decay{0.1, 10, 0.5};
  CHECK(exp_decay(0) == doctest::Approx(0.1));
  CHECK(exp_decay(5) == doctest::Approx(0.1 * std::sqrt(0.5)));
  CHECK(nn::ExponentialDecay{0.1, 10, 0.5, true}(15) == doctest::Approx(0.05));
  const nn::StepDecay step{1.0, 3, 0.1};
  CHECK(step(2) == doctest::Approx(1.0));
  CHECK(step(3) == doctest::Approx(0.1));
  CHECK(step(7) == doctest::Approx(0.01));
  const nn::CosineDecay cosine{2.0, 100, 0.1};
  CHECK(cosine(0) == doctest::Approx(2.0));
  CHECK(cosine(50) == doctest::Approx(2.0 * (0.9 * 0.5 + 0.1)));
  CHECK(cosine(100) == doctest::Approx(0.2));
  CHECK(cosine(500) == doctest::Approx(0.2));
  const nn::LinearWarmup warm{4, nn::StepDecay{1.0, 2, 0.5}};
  CHECK(warm(0) == doctest::Approx(0.25));
  CHECK(warm(3) == doctest::Approx(1.0));
  CHECK(warm(4) == doctest::Approx(1.0));
  CHECK(warm(6) == doctest::Approx(0.5));
  // SGD lr = step's schedule: the t-th update uses lr(t - 1). Gradient 1 every step.
  auto opt = nn::SGD{.learning_rate = nn::StepDecay{1.0, 2, 0.5}}.make<double>();
  const Gradients ones(4, std::vector<double>{1.0, 1.0, 1.0});
  const Gradients got = run(*opt, ones);
  // Steps use 1, 1, 0.5, 0.5.
  CHECK(got[3][0] == doctest::Approx(1.0 - 3.0));
  CHECK(opt->iterations() == 4);
  CHECK(opt->learning_rate() == doctest::Approx(0.25));
  // A lambda is a schedule too.
  auto custom = nn::SGD{.learning_rate = [](std::int64_t t) {
                  return 1.0 / static_cast<double>(t + 1);
                }}.make<double>();
  CHECK(run(*custom, Gradients(2, std::vector<double>{1.0, 1.0, 1.0}))[1][0] ==
        doctest::Approx(1.0 - 1.0 - 0.5));
}

// ---------------------------------------------------------------------------------------------
// Sequential.

namespace {

nn::Sequential<float> wide_digits_mlp() {
  return nn::Sequential<float>{nn::Input({64}), nn::Dense(128, "relu"), nn::Dropout{0.1},
                               nn::Dense(10)};
}

}  // namespace

TEST_CASE("nn Sequential: an MLP on digits reaches >= 0.97 test accuracy, deterministically") {
  const test::ScaledDigits& d = test::scaled_digits();
  const std::uint64_t seed = 7;
  CAPTURE(seed);
  const nn::FitOptions options{.epochs = 40, .batch_size = 32, .seed = seed};
  auto train = [&](nn::Sequential<float>& model) {
    model.compile(nn::Adam{.learning_rate = 2e-3},
                  nn::SparseCategoricalCrossentropy{.from_logits = true}, {"accuracy"});
    return model.fit(d.X_train, d.y_train, options);
  };
  const auto start = std::chrono::steady_clock::now();
  auto model = wide_digits_mlp();
  const nn::History history = train(model);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto scores = model.evaluate(d.X_test, d.y_test);
  MESSAGE("digits MLP: test accuracy ", scores.at("accuracy"), ", loss ", scores.at("loss"),
          ", fit ", seconds, " s");
  CHECK(scores.at("accuracy") >= 0.97);
  CHECK(history.epoch.size() == 40);
  CHECK(history.at("loss").back() < history.at("loss").front());
  CHECK(history.at("accuracy").back() > 0.97);
  // predict_classes agrees with evaluate's accuracy; predict_proba rows sum to 1.
  const Labels predicted = model.predict_classes(d.X_test);
  CHECK(metrics::accuracy_score(d.y_test, predicted) == doctest::Approx(scores.at("accuracy")));
  const Matrix<float> proba = model.predict_proba(d.X_test);
  CHECK(proba.rows() == d.X_test.rows());
  CHECK(proba.cols() == 10);
  CHECK((proba.rowwise().sum().array() - 1).abs().maxCoeff() < 1e-5);

  // Same seed, same weights, bit for bit; another seed, other weights.
  auto again = wide_digits_mlp();
  const nn::History history2 = train(again);
  CHECK(again.get_weights() == model.get_weights());
  CHECK(history2.at("loss") == history.at("loss"));
  auto other = wide_digits_mlp();
  other.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
  other.fit(d.X_train, d.y_train, {.epochs = 1, .seed = seed + 1});
  auto same_first_epoch = wide_digits_mlp();
  same_first_epoch.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
  same_first_epoch.fit(d.X_train, d.y_train, {.epochs = 1, .seed = seed});
  CHECK(other.get_weights() != same_first_epoch.get_weights());
}

TEST_CASE("nn Sequential: validation split, N-d input through Flatten, binary and regression") {
  const test::ScaledDigits& d = test::scaled_digits();
  SUBCASE("digits as 1x8x8 images, Flatten, softmax output, validation_split") {
    nn::Sequential<float> model{nn::Input({1, 8, 8}), nn::Flatten{}, nn::Dense(64, "tanh"),
                                nn::Dense(10, "softmax")};
    model.compile(nn::RMSprop{}, nn::SparseCategoricalCrossentropy{}, {"accuracy"});
    const auto history =
        model.fit(d.X_train, d.y_train, {.epochs = 10, .seed = 3, .validation_split = 0.2});
    CHECK(history.at("val_loss").size() == 10);
    CHECK(history.at("val_accuracy").back() > 0.9);
    CHECK(model.output_shape() == nn::Shape{10});
    // The model's own probabilities are returned as they are.
    CHECK(model.predict_proba(d.X_test).isApprox(model.predict(d.X_test)));
  }
  SUBCASE("binary cross-entropy from logits on 'digit < 5'") {
    Labels binary = (d.y_train.array() < 5).cast<std::int64_t>();
    nn::Sequential<float> model{nn::Dense(32, "relu"), nn::Dense(1)};
    model.compile(nn::Adam{.learning_rate = 3e-3}, nn::BinaryCrossentropy{.from_logits = true},
                  {"accuracy"});
    model.fit(d.X_train, binary, {.epochs = 15, .seed = 1});
    const Labels test_binary = (d.y_test.array() < 5).cast<std::int64_t>();
    const auto scores = model.evaluate(d.X_test, test_binary);
    CHECK(scores.at("accuracy") > 0.93);
    CHECK(metrics::accuracy_score(test_binary, model.predict_classes(d.X_test)) ==
          doctest::Approx(scores.at("accuracy")));
    CHECK(model.predict_proba(d.X_test).cols() == 2);
  }
  SUBCASE("regression: y = 2 x0 - x1 + 1 learnt with MSE") {
    std::mt19937_64 engine(5);
    std::normal_distribution<double> normal;
    Matrix<double> X(200, 2);
    for (index_t i = 0; i < X.size(); ++i) X.data()[i] = normal(engine);
    const Vector<double> y = 2 * X.col(0) - X.col(1) + Vector<double>::Ones(200);
    nn::Sequential<double> model{nn::Dense(1)};
    model.compile(nn::SGD{.learning_rate = 0.1, .momentum = 0.5}, nn::MeanSquaredError{});
    model.fit(X, y, {.epochs = 60, .batch_size = 20});
    const auto w = model.get_weights();
    CHECK(w[0][0] == doctest::Approx(2).epsilon(1e-6));
    CHECK(w[0][1] == doctest::Approx(-1).epsilon(1e-6));
    CHECK(w[1][0] == doctest::Approx(1).epsilon(1e-6));
  }
}

TEST_CASE("nn EarlyStopping stops after patience epochs and restores the best weights") {
  // Train rows follow y = x; the held-out rows (the last quarter) follow y = -x, so the
  // validation loss is best early and then grows.
  Matrix<double> X(40, 1);
  Vector<double> y(40);
  for (index_t i = 0; i < 40; ++i) {
    X(i, 0) = -1 + 2.0 * static_cast<double>(i % 10) / 9;
    y(i) = i < 30 ? X(i, 0) : -X(i, 0);
  }
  nn::Sequential<double> model{nn::Dense(1, {.kernel_initializer = "zeros"})};
  model.compile(nn::SGD{.learning_rate = 0.05}, nn::MeanSquaredError{});
  nn::EarlyStopping stopper({.monitor = "val_loss", .patience = 3, .restore_best_weights = true});
  std::vector<std::vector<std::vector<double>>> weights_per_epoch;
  std::vector<double> val_losses;
  const auto history =
      model.fit(X, y, {.epochs = 100, .batch_size = 8, .seed = 2, .validation_split = 0.25},
                stopper, [&](auto& m, int, const nn::Logs& logs) {
                  weights_per_epoch.push_back(m.get_weights());
                  val_losses.push_back(logs.at("val_loss"));
                });
  REQUIRE(!val_losses.empty());
  const auto best =
      static_cast<int>(std::min_element(val_losses.begin(), val_losses.end()) - val_losses.begin());
  CAPTURE(best);
  CHECK(history.epoch.size() < 100);
  CHECK(stopper.stopped_epoch() == best + 3);
  CHECK(static_cast<int>(history.epoch.size()) == best + 4);
  CHECK(stopper.best_epoch() == best);
  CHECK(model.get_weights() == weights_per_epoch[static_cast<std::size_t>(best)]);
  CHECK(model.get_weights() != weights_per_epoch.back());
  // A monitor that is not logged is an error, not a silent no-op.
  nn::EarlyStopping wrong({.monitor = "val_accuracy"});
  CHECK_THROWS_AS(model.fit(X, y, {.epochs = 2, .validation_split = 0.25}, wrong),
                  invalid_argument);
  CHECK_THROWS_AS(nn::EarlyStopping({.mode = "up"}), invalid_argument);
}

TEST_CASE("nn callbacks: hooks run in order and a lambda can stop training") {
  struct Recorder {
    std::vector<std::string> events;
    int batches = 0;
    void on_train_begin(nn::Sequential<double>&) { events.push_back("train_begin"); }
    void on_epoch_begin(nn::Sequential<double>&, int e) {
      events.push_back("epoch_begin " + std::to_string(e));
    }
    void on_batch_end(nn::Sequential<double>&, int, const nn::Logs& logs) {
      ++batches;
      CHECK(logs.contains("loss"));
    }
    void on_epoch_end(nn::Sequential<double>&, int e, const nn::Logs&) {
      events.push_back("epoch_end " + std::to_string(e));
    }
    void on_train_end(nn::Sequential<double>&, const nn::Logs&) { events.push_back("train_end"); }
  } recorder;
  Matrix<double> X = Matrix<double>::Ones(10, 2);
  Vector<double> y = Vector<double>::Ones(10);
  nn::Sequential<double> model{nn::Dense(1)};
  model.compile(nn::SGD{}, nn::MeanSquaredError{});
  model.fit(X, y, {.epochs = 5, .batch_size = 4}, recorder,
            [](auto& m, int epoch, const nn::Logs&) {
              if (epoch == 1) m.stop_training();
            });
  CHECK(recorder.events == std::vector<std::string>{"train_begin", "epoch_begin 0", "epoch_end 0",
                                                    "epoch_begin 1", "epoch_end 1", "train_end"});
  CHECK(recorder.batches == 6);  // 2 epochs of 3 batches (4 + 4 + 2 rows)
}

TEST_CASE("nn Sequential summary shows Keras's table and parameter counts") {
  nn::Sequential<float> model{nn::Input({64}), nn::Dense(32, "relu"), nn::Dropout{0.2},
                              nn::Dense(10), nn::Softmax{}};
  const std::string text = model.summary();
  MESSAGE(text);
  // 64 * 32 + 32 = 2080 and 32 * 10 + 10 = 330 parameters.
  CHECK(text.find(" dense (Dense)               (None, 32)                2080\n") !=
        std::string::npos);
  CHECK(text.find(" dropout (Dropout)           (None, 32)                0\n") !=
        std::string::npos);
  CHECK(text.find(" dense_1 (Dense)             (None, 10)                330\n") !=
        std::string::npos);
  CHECK(text.find(" softmax (Softmax)") != std::string::npos);
  CHECK(text.find("Total params: 2,410\n") != std::string::npos);
  CHECK(text.find("Trainable params: 2,410\n") != std::string::npos);
  CHECK(!model.is_built());
  model.build(nn::Shape{64}, 1);
  CHECK(model.count_params() == 2410);
  CHECK(model.summary() == text);
  nn::Sequential<float> big{nn::Dense(1000), nn::Dense(1000)};
  big.build(nn::Shape{1000});
  CHECK(big.summary().find("Total params: 2,002,000\n") != std::string::npos);
  CHECK(big.summary().find(" dense_1 (Dense)") != std::string::npos);
}

TEST_CASE("nn Sequential typed errors") {
  const test::ScaledDigits& d = test::scaled_digits();
  nn::Sequential<float> model = wide_digits_mlp();
  SUBCASE("use before compile / fit / build") {
    CHECK_THROWS_AS(model.predict(d.X_test), not_fitted_error);
    CHECK_THROWS_AS(model.fit(d.X_train, d.y_train), not_fitted_error);
    nn::Sequential<float> no_input{nn::Dense(3)};
    CHECK_THROWS_AS((void)no_input.summary(), not_fitted_error);
    no_input.compile(nn::SGD{}, nn::MeanSquaredError{});
    CHECK_THROWS_AS(no_input.evaluate(d.X_test, d.y_test), not_fitted_error);
  }
  model.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true}, {"accuracy"});
  SUBCASE("wrong input width, at fit and at predict") {
    const Matrix<float> narrow = d.X_train.leftCols(10);
    CHECK_THROWS_AS(model.fit(narrow, d.y_train), shape_error);
    // Width inferred at the first fit, then enforced.
    nn::Sequential<float> inferred{nn::Dense(10)};
    inferred.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
    inferred.fit(d.X_train, d.y_train, {.epochs = 1});
    CHECK(inferred.input_shape() == nn::Shape{64});
    try {
      (void)inferred.predict(narrow);
      CHECK(false);
    } catch (const shape_error& e) {
      CHECK(std::string(e.what()).find("expected X with 64 features") != std::string::npos);
      CHECK(std::string(e.what()).find("found 10") != std::string::npos);
    }
  }
  SUBCASE("labels out of range for the output layer") {
    Labels y = d.y_train;
    y(5) = 10;
    try {
      model.fit(d.X_train, y);
      CHECK(false);
    } catch (const invalid_argument& e) {
      CHECK(std::string(e.what()).find("labels in 0..9") != std::string::npos);
      CHECK(std::string(e.what()).find("found 10 at row 5") != std::string::npos);
    }
    y(5) = -1;
    CHECK_THROWS_AS(model.fit(d.X_train, y), invalid_argument);
  }
  SUBCASE("targets that do not fit the loss or the data") {
    const Vector<float> real = d.y_train.cast<float>();
    CHECK_THROWS_AS(model.fit(d.X_train, real), invalid_argument);  // labels expected
    CHECK_THROWS_AS(model.fit(d.X_train, d.y_test), shape_error);   // another length
    nn::Sequential<float> regression{nn::Dense(2)};
    regression.compile(nn::SGD{}, nn::MeanSquaredError{});
    CHECK_THROWS_AS(regression.fit(d.X_train, real), shape_error);  // 1 column for 2 outputs
    Matrix<float> X = d.X_train;
    X(3, 3) = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_AS(model.fit(X, d.y_train), invalid_argument);
  }
  SUBCASE("a loss that becomes NaN names the epoch and the batch") {
    nn::Sequential<double> diverging{nn::Dense(1)};
    diverging.compile(nn::SGD{.learning_rate = 1e30}, nn::MeanSquaredError{});
    const Matrix<double> X = d.X_train.cast<double>() * 1000;
    const Vector<double> y = d.y_train.cast<double>() * 1000;
    try {
      diverging.fit(X, y, {.epochs = 3, .shuffle = false});
      CHECK(false);
    } catch (const nn::training_error& e) {
      MESSAGE(std::string(e.what()));
      CHECK(std::string(e.what()).find("in epoch 1/3, batch ") != std::string::npos);
      CHECK(std::string(e.what()).find("batch 1/") == std::string::npos);  // batch 1 is finite
    }
  }
  SUBCASE("bad options, metrics and model definitions") {
    CHECK_THROWS_AS(model.fit(d.X_train, d.y_train, {.batch_size = 0}), invalid_argument);
    CHECK_THROWS_AS(model.fit(d.X_train, d.y_train, {.validation_split = 1.0}), invalid_argument);
    CHECK_THROWS_AS(model.compile(nn::SGD{}, nn::MeanSquaredError{}, {"accuracy"}),
                    invalid_argument);
    CHECK_THROWS_AS(model.compile(nn::SGD{}, nn::MeanSquaredError{}, {"auc"}), invalid_argument);
    nn::Sequential<float> late_input{nn::Dense(3)};
    CHECK_THROWS_AS(late_input.add(nn::Input({4})), invalid_argument);
    model.fit(d.X_train, d.y_train, {.epochs = 1});
    CHECK_THROWS_AS(model.add(nn::Dense(3)), invalid_argument);  // after build
    auto weights = model.get_weights();
    weights.pop_back();
    CHECK_THROWS_AS(model.set_weights(weights), shape_error);
  }
}
