// The image layers of nn (Conv2D, MaxPool2D, AveragePool2D, GlobalAveragePool2D,
// BatchNormalization), Embedding and Reshape: gradients against central finite differences in
// double, forward values against hand-computed cases and a naive convolution written here,
// output shapes, moving statistics by hand, typed errors, and a small CNN on digits.

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "onelearn/nn/layers/average_pool2d.hpp"
#include "onelearn/nn/layers/batch_normalization.hpp"
#include "onelearn/nn/layers/conv2d.hpp"
#include "onelearn/nn/layers/embedding.hpp"
#include "onelearn/nn/layers/global_average_pool2d.hpp"
#include "onelearn/nn/layers/max_pool2d.hpp"
#include "onelearn/nn/layers/reshape.hpp"
#include "onelearn/nn/sequential.hpp"
#include "nn_support.hpp"
#include "support.hpp"

using namespace onelearn;

namespace {

// ---------------------------------------------------------------------------------------------
// Finite-difference machinery (double precision, central differences), as in test_nn.cpp.

using test::fd_step;
using test::fd_tolerance;
using test::relative_error;

std::vector<double> random_values(std::mt19937_64& engine, index_t n) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = normal(engine);
  return v;
}

/// Checks a built layer's input gradient (unless `check_input` is false) and parameter
/// gradients against central differences of L = Σ r ⊙ layer(x) + regularization_loss(), for
/// the given x and a random r, with forward in the given mode.
void check_gradients(nn::Layer<double>& layer, const nn::Shape& shape, std::vector<double> x,
                     std::mt19937_64& engine, bool training = true, bool check_input = true) {
  CAPTURE(std::string(layer.class_name()));
  CAPTURE(shape.to_string());
  const nn::Shape out_shape = layer.output_shape(shape.without_batch()).with_batch(shape[0]);
  const std::vector<double> r = random_values(engine, out_shape.size());
  auto objective = [&]() {
    const auto y = layer.forward({x.data(), shape}, training);
    REQUIRE(y.shape == out_shape);
    double total = layer.regularization_loss();
    for (index_t i = 0; i < y.size(); ++i) total += r[static_cast<std::size_t>(i)] * y.data[i];
    return total;
  };
  (void)objective();
  const auto dx_view = layer.backward({r.data(), out_shape}, true);
  REQUIRE(dx_view.shape == shape);
  const std::vector<double> dx(dx_view.data, dx_view.data + dx_view.size());
  std::vector<std::vector<double>> dparams;
  for (const auto& g : layer.gradients()) dparams.emplace_back(g.begin(), g.end());

  if (check_input) {
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
  }
  auto params = layer.parameters();
  REQUIRE(params.size() == dparams.size());
  for (std::size_t b = 0; b < params.size(); ++b) {
    CAPTURE(b);
    std::vector<double> numeric(params[b].size());
    for (std::size_t i = 0; i < params[b].size(); ++i) {
      const double saved = params[b][i];
      params[b][i] = saved + fd_step;
      const double plus = objective();
      params[b][i] = saved - fd_step;
      const double minus = objective();
      params[b][i] = saved;
      numeric[i] = (plus - minus) / (2 * fd_step);
    }
    CHECK(relative_error(dparams[b], numeric) < fd_tolerance);
  }
}

/// Builds the layer for (C, H, W) samples and checks its gradients on a random batch.
void check_image_layer(nn::Layer<double>& layer, const nn::Shape& sample, index_t batch,
                       std::mt19937_64& engine, bool training = true) {
  layer.build(sample, engine());
  const nn::Shape shape = sample.with_batch(batch);
  // Random params too (bias, gamma, beta start at constants), so every term is exercised.
  std::normal_distribution<double> normal(0.0, 0.5);
  for (auto p : layer.parameters()) {
    for (double& v : p) v += normal(engine);
  }
  check_gradients(layer, shape, random_values(engine, shape.size()), engine, training);
}

index_t uniform(std::mt19937_64& engine, index_t lo, index_t hi) {
  return std::uniform_int_distribution<index_t>(lo, hi)(engine);
}

// ---------------------------------------------------------------------------------------------
// A direct convolution (the definition, loop by loop), independent of im2col and the GEMM.

struct ConvCase {
  index_t filters, kh, kw, sh, sw, dh, dw, groups;
  nn::Padding2D padding;
};

/// "same" padding by TensorFlow's rule, computed here independently of the library.
std::array<index_t, 4> resolve_padding(const ConvCase& c, index_t H, index_t W) {
  if (c.padding.mode == nn::Padding2D::Mode::explicit_sizes) return c.padding.sizes;
  if (c.padding.mode == nn::Padding2D::Mode::valid) return {0, 0, 0, 0};
  auto total = [](index_t in, index_t k, index_t s, index_t d) {
    const index_t out = (in + s - 1) / s;
    return std::max<index_t>((out - 1) * s + (k - 1) * d + 1 - in, 0);
  };
  const index_t th = total(H, c.kh, c.sh, c.dh), tw = total(W, c.kw, c.sw, c.dw);
  return {th / 2, th - th / 2, tw / 2, tw - tw / 2};
}

std::vector<double> naive_conv(const ConvCase& c, const std::vector<double>& x, index_t N,
                               index_t C, index_t H, index_t W, const std::vector<double>& kernel,
                               const std::vector<double>& bias, index_t& OH, index_t& OW) {
  const auto pad = resolve_padding(c, H, W);
  OH = (H + pad[0] + pad[1] - (c.kh - 1) * c.dh - 1) / c.sh + 1;
  OW = (W + pad[2] + pad[3] - (c.kw - 1) * c.dw - 1) / c.sw + 1;
  const index_t cg = C / c.groups, fg = c.filters / c.groups;
  std::vector<double> out(static_cast<std::size_t>(N * c.filters * OH * OW));
  for (index_t n = 0; n < N; ++n)
    for (index_t f = 0; f < c.filters; ++f)
      for (index_t oh = 0; oh < OH; ++oh)
        for (index_t ow = 0; ow < OW; ++ow) {
          double sum = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(f)];
          const index_t g = f / fg;
          for (index_t ci = 0; ci < cg; ++ci)
            for (index_t i = 0; i < c.kh; ++i)
              for (index_t j = 0; j < c.kw; ++j) {
                const index_t ih = oh * c.sh - pad[0] + i * c.dh;
                const index_t iw = ow * c.sw - pad[2] + j * c.dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                const index_t ch = g * cg + ci;
                sum += kernel[static_cast<std::size_t>(((f * cg + ci) * c.kh + i) * c.kw + j)] *
                       x[static_cast<std::size_t>(((n * C + ch) * H + ih) * W + iw)];
              }
          out[static_cast<std::size_t>(((n * c.filters + f) * OH + oh) * OW + ow)] = sum;
        }
  return out;
}

std::vector<ConvCase> conv_cases() {
  using P = nn::Padding2D;
  return {
      {3, 3, 3, 1, 1, 1, 1, 1, P("valid")},   {2, 3, 3, 1, 1, 1, 1, 1, P("same")},
      {4, 3, 2, 2, 2, 1, 1, 1, P("same")},    {2, 2, 3, 2, 1, 1, 1, 1, P(1, 2)},
      {3, 3, 3, 1, 2, 1, 1, 1, P(2, 0, 1, 3)}, {2, 3, 3, 1, 1, 2, 2, 1, P("valid")},
      {2, 2, 2, 2, 1, 2, 1, 1, P("same")},    {4, 3, 3, 1, 1, 1, 1, 2, P(1)},
      {6, 1, 2, 1, 2, 1, 1, 3, P("same")},    {3, 1, 1, 1, 1, 1, 1, 1, P("valid")},
      {4, 1, 1, 1, 1, 1, 1, 2, P("valid")},   {2, 1, 1, 2, 2, 1, 1, 1, P(1, 0)},
      // Stride 1, no groups, output the input's size: the direct-convolution path, including
      // an even kernel ("same" pads unevenly), dilation, and explicit padding.
      {9, 2, 2, 1, 1, 1, 1, 1, P("same")},    {5, 3, 3, 1, 1, 2, 2, 1, P("same")},
      {10, 5, 3, 1, 1, 1, 1, 1, P(2, 1)},
  };
}

nn::Conv2D conv_spec(const ConvCase& c, bool use_bias, double l2 = 0, const char* act = "") {
  return nn::Conv2D(c.filters, {c.kh, c.kw},
                    {.strides = {c.sh, c.sw},
                     .padding = c.padding,
                     .dilation_rate = {c.dh, c.dw},
                     .groups = c.groups,
                     .activation = act,
                     .use_bias = use_bias,
                     .kernel_l2 = l2});
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Conv2D.

TEST_CASE("nn Conv2D: forward equals a direct convolution on random shapes, float and double") {
  std::mt19937_64 engine(20261122);
  int case_index = 0;
  for (const ConvCase& c : conv_cases()) {
    CAPTURE(case_index++);
    for (int rep = 0; rep < 2; ++rep) {
      const index_t N = uniform(engine, 1, 3), C = c.groups * uniform(engine, 1, 3);
      const index_t H = uniform(engine, 5, 9), W = uniform(engine, 5, 9);
      CAPTURE(N);
      CAPTURE(C);
      CAPTURE(H);
      CAPTURE(W);
      const bool use_bias = rep == 0;
      nn::Conv2DLayer<double> layer(conv_spec(c, use_bias));
      layer.build(nn::Shape{C, H, W}, engine());
      const std::vector<double> x = random_values(engine, N * C * H * W);
      std::vector<double> kernel(layer.parameters()[0].begin(), layer.parameters()[0].end());
      std::vector<double> bias;
      if (use_bias) {
        auto b = layer.parameters()[1];
        for (double& v : b) v = std::normal_distribution<double>()(engine);
        bias.assign(b.begin(), b.end());
      }
      index_t OH = 0, OW = 0;
      const std::vector<double> expected = naive_conv(c, x, N, C, H, W, kernel, bias, OH, OW);
      const auto y = layer.forward({x.data(), nn::Shape{N, C, H, W}}, false);
      REQUIRE(y.shape == nn::Shape{N, c.filters, OH, OW});
      CHECK(layer.output_shape(nn::Shape{C, H, W}) == nn::Shape{c.filters, OH, OW});
      double max_err = 0;
      for (std::size_t i = 0; i < expected.size(); ++i) {
        max_err = std::max(max_err, std::abs(y.data[i] - expected[i]));
      }
      CHECK(max_err < 1e-12);

      // The float layer with the same weights agrees to float precision.
      nn::Conv2DLayer<float> layer_f(conv_spec(c, use_bias));
      layer_f.build(nn::Shape{C, H, W}, 0);
      auto pf = layer_f.parameters();
      auto pd = layer.parameters();
      for (std::size_t b = 0; b < pf.size(); ++b) {
        for (std::size_t i = 0; i < pf[b].size(); ++i) pf[b][i] = static_cast<float>(pd[b][i]);
      }
      std::vector<float> xf(x.begin(), x.end());
      const auto yf = layer_f.forward({xf.data(), nn::Shape{N, C, H, W}}, false);
      double max_err_f = 0;
      for (std::size_t i = 0; i < expected.size(); ++i) {
        max_err_f = std::max(max_err_f, std::abs(static_cast<double>(yf.data[i]) - expected[i]));
      }
      CHECK(max_err_f < 1e-4);
    }
  }
}

TEST_CASE("nn Conv2D: gradients match central differences (strides, padding, dilation, groups)") {
  std::mt19937_64 engine(7);
  int case_index = 0;
  for (const ConvCase& c : conv_cases()) {
    CAPTURE(case_index++);
    const index_t C = c.groups * uniform(engine, 1, 2);
    const nn::Shape sample{C, uniform(engine, 5, 7), uniform(engine, 5, 7)};
    // With bias and L2; without bias and with a fused activation.
    nn::Conv2DLayer<double> plain(conv_spec(c, true, 0.05));
    check_image_layer(plain, sample, uniform(engine, 1, 3), engine);
    nn::Conv2DLayer<double> fused(conv_spec(c, false, 0.0, "tanh"));
    check_image_layer(fused, sample, uniform(engine, 1, 3), engine);
    // ReLU is fused differently on the direct path (its mask comes from the output).
    nn::Conv2DLayer<double> relu(conv_spec(c, true, 0.0, "relu"));
    check_image_layer(relu, sample, uniform(engine, 1, 3), engine);
  }
}

TEST_CASE("nn Conv2D: hand-computed values on a 3x3 image") {
  // x = [[1, 2, 3], [4, 5, 6], [7, 8, 9]].
  std::vector<double> x{1, 2, 3, 4, 5, 6, 7, 8, 9};
  SUBCASE("2x2 kernel [[1, 2], [3, 4]], bias 1, valid") {
    // (0,0): 1·1 + 2·2 + 3·4 + 4·5 + 1 = 38; (0,1): 2 + 6 + 15 + 24 + 1 = 48;
    // (1,0): 4 + 10 + 21 + 32 + 1 = 68; (1,1): 5 + 12 + 24 + 36 + 1 = 78.
    nn::Conv2DLayer<double> conv(nn::Conv2D(1, 2));
    conv.build(nn::Shape{1, 3, 3}, 0);
    auto p = conv.parameters();
    std::vector<double> k{1, 2, 3, 4};
    std::copy(k.begin(), k.end(), p[0].begin());
    p[1][0] = 1;
    const auto y = conv.forward({x.data(), nn::Shape{1, 1, 3, 3}}, false);
    CHECK(y.shape == nn::Shape{1, 1, 2, 2});
    CHECK(std::vector<double>(y.data, y.data + 4) == std::vector<double>{38, 48, 68, 78});
    // dL/dx for dL/dy = 1 everywhere: each x gets the sum of the kernel taps that read it:
    // corner (0,0) only tap 1, centre all four taps = 10.
    std::vector<double> ones(4, 1.0);
    const auto dx = conv.backward({ones.data(), y.shape}, true);
    CHECK(std::vector<double>(dx.data, dx.data + 9) ==
          std::vector<double>{1, 3, 2, 4, 10, 6, 3, 7, 4});
    // dW[i][j] = Σ over the 4 outputs of the x it read: 1+2+4+5 = 12, 16, 24, 28; db = 4.
    CHECK(std::vector<double>(conv.gradients()[0].begin(), conv.gradients()[0].end()) ==
          std::vector<double>{12, 16, 24, 28});
    CHECK(conv.gradients()[1][0] == 4);
  }
  SUBCASE("3x3 all-ones kernel, 'same': the sums of the 3x3 neighbourhoods") {
    nn::Conv2DLayer<double> conv(nn::Conv2D(1, 3, {.padding = "same", .use_bias = false}));
    conv.build(nn::Shape{1, 3, 3}, 0);
    const auto kernel = conv.parameters()[0];
    std::fill(kernel.begin(), kernel.end(), 1.0);
    const auto y = conv.forward({x.data(), nn::Shape{1, 1, 3, 3}}, false);
    CHECK(std::vector<double>(y.data, y.data + 9) ==
          std::vector<double>{12, 21, 16, 27, 45, 33, 24, 39, 28});
  }
  SUBCASE("stride 2 with explicit padding 1: the corners' neighbourhoods") {
    nn::Conv2DLayer<float> conv(nn::Conv2D(1, 3, {.strides = 2, .padding = 1, .use_bias = false}));
    conv.build(nn::Shape{1, 3, 3}, 0);
    const auto kernel = conv.parameters()[0];
    std::fill(kernel.begin(), kernel.end(), 1.0f);
    std::vector<float> xf(x.begin(), x.end());
    const auto y = conv.forward({xf.data(), nn::Shape{1, 1, 3, 3}}, false);
    CHECK(y.shape == nn::Shape{1, 1, 2, 2});
    CHECK(std::vector<float>(y.data, y.data + 4) == std::vector<float>{12, 16, 24, 28});
  }
  SUBCASE("two groups: each filter sees only its own channel") {
    // Channel 0 = x, channel 1 = 10 x; 1x1 kernel, filter 0 weight 2 (reads channel 0),
    // filter 1 weight 3 (reads channel 1).
    std::vector<double> x2(x);
    for (double v : x) x2.push_back(10 * v);
    nn::Conv2DLayer<double> conv(nn::Conv2D(2, 1, {.groups = 2, .use_bias = false}));
    conv.build(nn::Shape{2, 3, 3}, 0);
    conv.parameters()[0][0] = 2;
    conv.parameters()[0][1] = 3;
    const auto y = conv.forward({x2.data(), nn::Shape{1, 2, 3, 3}}, false);
    CHECK(y.data[4] == 10);    // 2 · 5
    CHECK(y.data[9 + 4] == 150);  // 3 · 50
  }
}

TEST_CASE("nn Conv2D and pools: output shapes and resolved padding") {
  auto conv_shape = [](const nn::Conv2D& spec, nn::Shape in) {
    return spec.make<float>()->output_shape(in);
  };
  // valid: (in - k) / s + 1; same: ceil(in / s); dilated kernel extent d (k - 1) + 1.
  CHECK(conv_shape(nn::Conv2D(8, 3), {1, 28, 28}) == nn::Shape{8, 26, 26});
  CHECK(conv_shape(nn::Conv2D(8, 3, {.padding = "same"}), {1, 28, 28}) == nn::Shape{8, 28, 28});
  CHECK(conv_shape(nn::Conv2D(8, 3, {.strides = 2}), {3, 7, 8}) == nn::Shape{8, 3, 3});
  CHECK(conv_shape(nn::Conv2D(8, 3, {.strides = 2, .padding = "same"}), {3, 7, 8}) ==
        nn::Shape{8, 4, 4});
  CHECK(conv_shape(nn::Conv2D(8, 3, {.dilation_rate = 2}), {1, 7, 9}) == nn::Shape{8, 3, 5});
  CHECK(conv_shape(nn::Conv2D(8, {3, 1}, {.strides = {1, 2}, .padding = {1, 2, 0, 3}}),
                   {1, 5, 5}) == nn::Shape{8, 6, 4});
  CHECK(conv_shape(nn::Conv2D(8, 3, {.padding = {1, 1}}), {1, 28, 28}) == nn::Shape{8, 28, 28});
  // "same" with an even total: TensorFlow puts the odd pixel at the bottom / right.
  nn::Conv2DLayer<float> conv(nn::Conv2D(1, 3, {.strides = 2, .padding = "same"}));
  conv.build(nn::Shape{1, 4, 5}, 0);  // out 2 x 3; total padding 1 (height) and 2 (width)
  CHECK(conv.geometry().pad_top == 0);
  CHECK(conv.geometry().pad_bottom == 1);
  CHECK(conv.geometry().pad_left == 1);
  CHECK(conv.geometry().pad_right == 1);

  auto pool_shape = [](const auto& spec, nn::Shape in) {
    return spec.template make<double>()->output_shape(in);
  };
  CHECK(pool_shape(nn::MaxPool2D(2), {16, 28, 28}) == nn::Shape{16, 14, 14});
  CHECK(pool_shape(nn::MaxPool2D(2), {16, 7, 7}) == nn::Shape{16, 3, 3});
  CHECK(pool_shape(nn::MaxPool2D(2, {.padding = "same"}), {16, 7, 7}) == nn::Shape{16, 4, 4});
  CHECK(pool_shape(nn::MaxPool2D(3, {.strides = 1}), {2, 5, 6}) == nn::Shape{2, 3, 4});
  CHECK(pool_shape(nn::AveragePool2D(3, {.strides = 2, .padding = 1}), {2, 5, 6}) ==
        nn::Shape{2, 3, 3});
  CHECK(pool_shape(nn::GlobalAveragePool2D{}, {5, 3, 4}) == nn::Shape{5});
}

// ---------------------------------------------------------------------------------------------
// Pools.

TEST_CASE("nn pools: gradients match central differences (strides, padding modes)") {
  std::mt19937_64 engine(11);
  struct PoolCase {
    nn::Size2 pool;
    nn::PoolOptions options;
  };
  const std::vector<PoolCase> configs{
      {2, {}},
      {3, {.strides = 1}},
      {{2, 3}, {.strides = {1, 2}}},
      {3, {.strides = 2, .padding = "same"}},
      {2, {.padding = "same"}},
      {3, {.strides = 2, .padding = 1}},
      {3, {.strides = 1, .padding = {1, 2, 0, 1}}},
  };
  int index = 0;
  for (const auto& [pool, options] : configs) {
    CAPTURE(index++);
    const nn::Shape sample{uniform(engine, 1, 3), uniform(engine, 4, 7), uniform(engine, 4, 7)};
    nn::MaxPool2DLayer<double> max_pool(pool, options);
    check_image_layer(max_pool, sample, uniform(engine, 1, 3), engine);
    for (bool include : {false, true}) {
      nn::PoolOptions o = options;
      o.count_include_pad = include;
      nn::AveragePool2DLayer<double> avg_pool(pool, o);
      check_image_layer(avg_pool, sample, uniform(engine, 1, 3), engine);
    }
  }
  nn::GlobalAveragePool2DLayer<double> gap;
  check_image_layer(gap, nn::Shape{3, 4, 5}, 2, engine);
}

TEST_CASE("nn pools: hand-computed values, ties and padding divisors") {
  // x = [[1, 2, 3], [4, 5, 6], [7, 8, 9]].
  const std::vector<double> x{1, 2, 3, 4, 5, 6, 7, 8, 9};
  const nn::Shape shape{1, 1, 3, 3};
  SUBCASE("MaxPool2D(2, stride 1): maxima of the 2x2 windows; gradient to each window's max") {
    nn::MaxPool2DLayer<double> pool(2, {.strides = 1});
    const auto y = pool.forward({x.data(), shape}, true);
    CHECK(std::vector<double>(y.data, y.data + 4) == std::vector<double>{5, 6, 8, 9});
    const std::vector<double> dy{1, 2, 3, 4};
    const auto dx = pool.backward({dy.data(), y.shape}, true);
    CHECK(std::vector<double>(dx.data, dx.data + 9) ==
          std::vector<double>{0, 0, 0, 0, 1, 2, 0, 3, 4});
  }
  SUBCASE("MaxPool2D 'same' stride 2: the padding is never the max (negative inputs)") {
    std::vector<double> neg(x);
    for (double& v : neg) v = -v;
    nn::MaxPool2DLayer<double> pool(2, {.padding = "same"});  // 2 x 2 out, pad bottom/right
    const auto y = pool.forward({neg.data(), shape}, true);
    CHECK(std::vector<double>(y.data, y.data + 4) == std::vector<double>{-1, -3, -7, -9});
  }
  SUBCASE("ties: the gradient goes to the first maximum in row-major order (PyTorch)") {
    const std::vector<double> tied{7, 7, 7, 7};  // one 2x2 window of equal values
    nn::MaxPool2DLayer<double> pool(2, {});
    (void)pool.forward({tied.data(), nn::Shape{1, 1, 2, 2}}, true);
    const std::vector<double> dy{1};
    const auto dx = pool.backward({dy.data(), nn::Shape{1, 1, 1, 1}}, true);
    CHECK(std::vector<double>(dx.data, dx.data + 4) == std::vector<double>{1, 0, 0, 0});
    // The same through the generic (padded) path: 3x3 window with padding 1 over the 2x2.
    nn::MaxPool2DLayer<double> padded(3, {.strides = 2, .padding = 1});
    (void)padded.forward({tied.data(), nn::Shape{1, 1, 2, 2}}, true);
    const auto dx2 = padded.backward({dy.data(), nn::Shape{1, 1, 1, 1}}, true);
    CHECK(std::vector<double>(dx2.data, dx2.data + 4) == std::vector<double>{1, 0, 0, 0});
  }
  SUBCASE("AveragePool2D 3x3 'same' stride 1: Keras excludes the padding, PyTorch counts it") {
    nn::AveragePool2DLayer<double> keras(3, {.strides = 1, .padding = "same"});
    const auto y = keras.forward({x.data(), shape}, false);
    // Corner (0,0): (1 + 2 + 4 + 5) / 4 = 3; edge (0,1): 27 / 6 = 4.5... top row (1+2+3+4+5+6)/6
    // = 3.5; centre 45 / 9 = 5.
    CHECK(y.data[0] == doctest::Approx(3.0));
    CHECK(y.data[1] == doctest::Approx(3.5));
    CHECK(y.data[4] == doctest::Approx(5.0));
    nn::AveragePool2DLayer<double> torch(3, {.strides = 1, .padding = 1, .count_include_pad = true});
    const auto yt = torch.forward({x.data(), shape}, false);
    CHECK(yt.data[0] == doctest::Approx(12.0 / 9));
    CHECK(yt.data[1] == doctest::Approx(21.0 / 9));
    CHECK(yt.data[4] == doctest::Approx(5.0));
  }
  SUBCASE("GlobalAveragePool2D: channel means") {
    std::vector<double> two(x);
    for (double v : x) two.push_back(2 * v);
    nn::GlobalAveragePool2DLayer<double> gap;
    const auto y = gap.forward({two.data(), nn::Shape{1, 2, 3, 3}}, false);
    CHECK(y.shape == nn::Shape{1, 2});
    CHECK(y.data[0] == doctest::Approx(5.0));
    CHECK(y.data[1] == doctest::Approx(10.0));
  }
}

// ---------------------------------------------------------------------------------------------
// BatchNormalization.

TEST_CASE("nn BatchNormalization: gradients in training (through the batch statistics) and "
          "inference mode") {
  std::mt19937_64 engine(3);
  for (bool training : {true, false}) {
    CAPTURE(training);
    // Images (N, C, H, W): per channel; flat (N, F): per feature; (N, C, L).
    for (const nn::Shape& sample : {nn::Shape{3, 4, 5}, nn::Shape{6}, nn::Shape{2, 7}}) {
      nn::BatchNormalizationLayer<double> bn({.momentum = 0.9});
      bn.build(sample, 0);
      // Non-trivial moving statistics for inference mode.
      const auto state = bn.state();
      for (double& v : state[0]) v = std::normal_distribution<double>()(engine);
      for (double& v : state[1]) v = 0.5 + std::abs(std::normal_distribution<double>()(engine));
      const nn::Shape shape = sample.with_batch(4);
      for (auto p : bn.parameters()) {
        for (double& v : p) v += std::normal_distribution<double>(0, 0.5)(engine);
      }
      check_gradients(bn, shape, random_values(engine, shape.size()), engine, training);
    }
  }
}

TEST_CASE("nn BatchNormalization: outputs and moving statistics after two steps, by hand") {
  nn::BatchNormalizationLayer<double> bn({.momentum = 0.9, .epsilon = 1e-3});
  bn.build(nn::Shape{2}, 0);
  CHECK(bn.parameters().size() == 2);
  CHECK(bn.state().size() == 2);
  CHECK(bn.state()[0][0] == 0);  // moving mean starts at 0, variance at 1 (Keras)
  CHECK(bn.state()[1][1] == 1);
  // Batch 1 (4 x 2): feature 0 = 1, 2, 3, 4 (mean 2.5, biased variance 1.25);
  // feature 1 = 0, 0, 0, 4 (mean 1, biased variance (1 + 1 + 1 + 9) / 4 = 3).
  const std::vector<double> b1{1, 0, 2, 0, 3, 0, 4, 4};
  const auto y1 = bn.forward({b1.data(), nn::Shape{4, 2}}, true);
  CHECK(y1.data[0] == doctest::Approx((1 - 2.5) / std::sqrt(1.25 + 1e-3)).epsilon(1e-12));
  CHECK(y1.data[7] == doctest::Approx((4 - 1) / std::sqrt(3 + 1e-3)).epsilon(1e-12));
  // moving = 0.9 moving + 0.1 batch: mean (0.25, 0.1), variance (1.025, 1.2).
  CHECK(bn.state()[0][0] == doctest::Approx(0.25).epsilon(1e-14));
  CHECK(bn.state()[0][1] == doctest::Approx(0.1).epsilon(1e-14));
  CHECK(bn.state()[1][0] == doctest::Approx(1.025).epsilon(1e-14));
  CHECK(bn.state()[1][1] == doctest::Approx(1.2).epsilon(1e-14));
  // Batch 2: feature 0 = 2, 2, 2, 2 (mean 2, variance 0); feature 1 = -1, 1, -1, 1 (0, 1).
  const std::vector<double> b2{2, -1, 2, 1, 2, -1, 2, 1};
  (void)bn.forward({b2.data(), nn::Shape{4, 2}}, true);
  // mean (0.9 · 0.25 + 0.2, 0.9 · 0.1) = (0.425, 0.09);
  // variance (0.9 · 1.025, 0.9 · 1.2 + 0.1) = (0.9225, 1.18).
  CHECK(bn.state()[0][0] == doctest::Approx(0.425).epsilon(1e-14));
  CHECK(bn.state()[0][1] == doctest::Approx(0.09).epsilon(1e-14));
  CHECK(bn.state()[1][0] == doctest::Approx(0.9225).epsilon(1e-14));
  CHECK(bn.state()[1][1] == doctest::Approx(1.18).epsilon(1e-14));
  // Inference uses the moving statistics and does not change them; gamma 2, beta 1.
  bn.parameters()[0][0] = 2;
  bn.parameters()[1][0] = 1;
  const std::vector<double> x{3, 5};
  const auto y = bn.forward({x.data(), nn::Shape{1, 2}}, false);
  CHECK(y.data[0] == doctest::Approx(2 * (3 - 0.425) / std::sqrt(0.9225 + 1e-3) + 1).epsilon(1e-12));
  CHECK(y.data[1] == doctest::Approx((5 - 0.09) / std::sqrt(1.18 + 1e-3)).epsilon(1e-12));
  CHECK(bn.state()[0][0] == doctest::Approx(0.425).epsilon(1e-14));
  // Keras's defaults.
  nn::BatchNormalizationLayer<float> defaults({});
  CHECK(defaults.momentum() == 0.99);
  CHECK(defaults.epsilon() == 1e-3);
}

namespace {

/// synchronized BatchNormalization on "this rank's" rows x, with a simulated peer rank holding
/// fixed rows z: the type-erased all-reduce adds what the peer would contribute (its channel
/// sums, then its squared deviations about the global mean, then in backward its share of
/// Σdy and Σdy·x̂, zero since the objective reads only this rank's outputs). Wrapped as a layer
/// so that check_gradients differentiates through the global statistics.
class PeeredSyncBatchNorm final : public nn::Layer<double> {
 public:
  PeeredSyncBatchNorm(const nn::Shape& sample, std::vector<double> z, index_t z_rows)
      : bn_({.momentum = 0.9, .synchronized = true}), z_(std::move(z)), z_rows_(z_rows) {
    bn_.build(sample, 0);
    channels_ = sample[0];
    spatial_ = sample.size() / channels_;
  }
  std::string_view class_name() const override { return "PeeredSyncBatchNorm"; }
  nn::Shape output_shape(const nn::Shape& in) const override { return in; }
  nn::TensorView<const double> forward(nn::TensorView<const double> x, bool training) override {
    calls_ = 0;
    rows_ = x.batch();
    bn_.begin_batch({.offset = 0,
                     .rows = rows_,
                     .global_rows = rows_ + z_rows_,
                     .reducer = this,
                     .reduce = [](void* self, std::span<double> v) {
                       static_cast<PeeredSyncBatchNorm*>(self)->peer_adds(v);
                     }});
    return bn_.forward(x, training);
  }
  nn::TensorView<const double> backward(nn::TensorView<const double> dy, bool need) override {
    return bn_.backward(dy, need);
  }
  std::vector<std::span<double>> parameters() override { return bn_.parameters(); }
  std::vector<std::span<double>> gradients() override { return bn_.gradients(); }
  nn::BatchNormalizationLayer<double>& bn() { return bn_; }
  int calls() const { return calls_; }

 private:
  void peer_adds(std::span<double> v) {
    const auto C = static_cast<std::size_t>(channels_);
    const double count = static_cast<double>((rows_ + z_rows_) * spatial_);
    if (calls_ == 0 || calls_ == 1) {
      REQUIRE(v.size() == C);
      mean_.resize(C);
      for (std::size_t c = 0; c < C; ++c) {
        double add = 0;
        for (index_t n = 0; n < z_rows_; ++n) {
          for (index_t s = 0; s < spatial_; ++s) {
            const double value =
                z_[static_cast<std::size_t>((n * channels_ + static_cast<index_t>(c)) * spatial_ + s)];
            add += calls_ == 0 ? value : (value - mean_[c]) * (value - mean_[c]);
          }
        }
        v[c] += add;
        if (calls_ == 0) mean_[c] = v[c] / count;  // the global mean, for the second pass
      }
    } else {
      REQUIRE(v.size() == 2 * C);  // backward: the peer's dy are 0
    }
    ++calls_;
  }

  nn::BatchNormalizationLayer<double> bn_;
  std::vector<double> z_;
  index_t z_rows_, rows_ = 0, channels_ = 0, spatial_ = 1;
  std::vector<double> mean_;
  int calls_ = 0;
};

}  // namespace

TEST_CASE("nn BatchNormalization(synchronized): global statistics and their gradients, with a "
          "simulated peer rank") {
  std::mt19937_64 engine(5);
  for (const nn::Shape& sample : {nn::Shape{6}, nn::Shape{2, 3, 2}}) {
    CAPTURE(sample.to_string());
    const index_t n = 4, z_rows = 3;
    const std::vector<double> x = random_values(engine, sample.size() * n);
    std::vector<double> z = random_values(engine, sample.size() * z_rows);
    for (double& v : z) v = 2 * v + 1;  // the peer's rows have another mean and spread
    PeeredSyncBatchNorm layer(sample, z, z_rows);
    CHECK(layer.bn().synchronized());
    // Forward: this rank's rows of one process's BatchNormalization on [x; z], and the same
    // moving statistics.
    const auto y = layer.forward({x.data(), sample.with_batch(n)}, true);
    const std::vector<double> y_sync(y.data, y.data + y.size());
    CHECK(layer.calls() == 2);  // two passes: sums, then squared deviations
    nn::BatchNormalizationLayer<double> one({.momentum = 0.9});
    one.build(sample, 0);
    std::vector<double> xz = x;
    xz.insert(xz.end(), z.begin(), z.end());
    const auto y_one = one.forward({xz.data(), sample.with_batch(n + z_rows)}, true);
    double worst = 0;
    for (std::size_t i = 0; i < y_sync.size(); ++i) {
      worst = std::max(worst, std::abs(y_sync[i] - y_one.data[i]));
    }
    CHECK(worst < 1e-13);
    for (std::size_t b = 0; b < 2; ++b) {
      for (std::size_t c = 0; c < static_cast<std::size_t>(sample[0]); ++c) {
        CHECK(layer.bn().state()[b][c] == doctest::Approx(one.state()[b][c]).epsilon(1e-13));
      }
    }
    // And not this rank's own statistics (the peer's rows moved them).
    nn::BatchNormalizationLayer<double> local({.momentum = 0.9});
    local.build(sample, 0);
    const auto y_local = local.forward({x.data(), sample.with_batch(n)}, true);
    CHECK(std::abs(y_local.data[0] - y_sync[0]) > 1e-3);
    // Backward through the global statistics (one more reduction), against finite differences.
    for (auto p : layer.parameters()) {
      for (double& v : p) v += std::normal_distribution<double>(0, 0.5)(engine);
    }
    check_gradients(layer, sample.with_batch(n), x, engine, true);
  }
}

TEST_CASE("nn BatchNormalization on images: statistics per channel over N, H, W") {
  // 2 samples, 2 channels, 1 x 2 pixels: channel 0 = {1, 3} and {5, 7} (mean 4, variance 5),
  // channel 1 = {0, 0} and {2, 2} (mean 1, variance 1).
  const std::vector<float> x{1, 3, 0, 0, 5, 7, 2, 2};
  nn::BatchNormalizationLayer<float> bn({.momentum = 0.5});
  bn.build(nn::Shape{2, 1, 2}, 0);
  const auto y = bn.forward({x.data(), nn::Shape{2, 2, 1, 2}}, true);
  CHECK(y.data[0] == doctest::Approx(-3 / std::sqrt(5.001)).epsilon(1e-6));
  CHECK(y.data[6] == doctest::Approx(1 / std::sqrt(1.001)).epsilon(1e-6));
  CHECK(bn.state()[0][0] == doctest::Approx(2.0));  // 0.5 · 0 + 0.5 · 4
  CHECK(bn.state()[1][0] == doctest::Approx(3.0));  // 0.5 · 1 + 0.5 · 5
  CHECK(bn.state()[0][1] == doctest::Approx(0.5));
  CHECK(bn.state()[1][1] == doctest::Approx(1.0));
}

// ---------------------------------------------------------------------------------------------
// Embedding and Reshape.

TEST_CASE("nn Embedding: lookup, scatter-add gradient, finite differences, bad indices") {
  std::mt19937_64 engine(5);
  nn::EmbeddingLayer<double> emb(nn::Embedding(5, 3));
  emb.build(nn::Shape{4}, 9);
  const auto W = emb.parameters()[0];
  CHECK(W.size() == 15);
  for (double v : W) CHECK(std::abs(v) <= 0.05);  // Keras's uniform(-0.05, 0.05)
  // Two samples of 4 indices, with repeats.
  const std::vector<double> idx{1, 1, 0, 4, 3, 1, 4, 4};
  const auto y = emb.forward({idx.data(), nn::Shape{2, 4}}, true);
  CHECK(y.shape == nn::Shape{2, 4, 3});
  CHECK(y.data[3 * 3 + 2] == W[4 * 3 + 2]);  // sample 0, position 3 -> row 4
  CHECK(y.data[5 * 3 + 0] == W[1 * 3 + 0]);  // sample 1, position 1 -> row 1
  // dL/dy = 1: row i's gradient is the number of times i occurs (row 1: 3, row 2: 0, row 4: 3).
  const std::vector<double> ones(24, 1.0);
  const auto dx = emb.backward({ones.data(), y.shape}, true);
  CHECK(dx.shape == nn::Shape{2, 4});
  CHECK(dx.data[0] == 0);  // indices are not differentiable
  const auto G = emb.gradients()[0];
  CHECK(G[1 * 3] == 3);
  CHECK(G[2 * 3 + 1] == 0);
  CHECK(G[4 * 3 + 2] == 3);
  CHECK(G[0] == 1);
  // Parameter gradient against central differences (random dL/dy).
  check_gradients(emb, nn::Shape{2, 4}, idx, engine, true, false);
  // Out-of-range and non-integer indices: invalid_argument naming the value and position.
  for (double bad : {5.0, -1.0, 2.5}) {
    CAPTURE(bad);
    std::vector<double> wrong = idx;
    wrong[6] = bad;
    try {
      (void)emb.forward({wrong.data(), nn::Shape{2, 4}}, true);
      CHECK(false);
    } catch (const invalid_argument& e) {
      const std::string what = e.what();
      CHECK(what.find("Embedding.forward: expected integer indices in 0..4") != std::string::npos);
      CHECK(what.find("at sample 1, position 2") != std::string::npos);
      std::ostringstream value;
      value << "found " << bad;
      CHECK(what.find(value.str()) != std::string::npos);
    }
  }
}

TEST_CASE("nn Embedding in a Sequential: learns label = first token") {
  std::mt19937_64 engine(1);
  Matrix<float> X(300, 4);
  Labels y(300);
  for (index_t i = 0; i < 300; ++i) {
    for (index_t j = 0; j < 4; ++j) X(i, j) = static_cast<float>(engine() % 10);
    y(i) = static_cast<std::int64_t>(X(i, 0)) % 3;
  }
  nn::Sequential<float> model{nn::Input({4}), nn::Embedding(10, 4), nn::Flatten{}, nn::Dense(3)};
  model.compile(nn::Adam{.learning_rate = 0.05},
                nn::SparseCategoricalCrossentropy{.from_logits = true}, {"accuracy"});
  model.fit(X, y, {.epochs = 30, .batch_size = 32, .seed = 2});
  CHECK(model.evaluate(X, y).at("accuracy") == 1.0);
}

TEST_CASE("nn Reshape: a view with the target shape, -1 inferred") {
  auto reshape = nn::Reshape({1, -1, 8}).make<double>();
  CHECK(reshape->output_shape(nn::Shape{64}) == nn::Shape{1, 8, 8});
  reshape->build(nn::Shape{64}, 0);
  const std::vector<double> x(128, 1.0);
  const auto y = reshape->forward({x.data(), nn::Shape{2, 64}}, false);
  CHECK(y.shape == nn::Shape{2, 1, 8, 8});
  CHECK(y.data == x.data());  // no copy
  const auto dx = reshape->backward(y, true);
  CHECK(dx.shape == nn::Shape{2, 64});
  CHECK_THROWS_AS((void)reshape->output_shape(nn::Shape{60}), shape_error);
  CHECK_THROWS_AS(nn::Reshape({-1, -1}).make<float>(), invalid_argument);
  CHECK_THROWS_AS(nn::Reshape({0, 4}).make<float>(), invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Errors.

TEST_CASE("nn image layers: typed errors") {
  SUBCASE("bad construction arguments") {
    CHECK_THROWS_AS(nn::Conv2D(0, 3).make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::Conv2D(4, 0).make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::Conv2D(4, {3, -1}).make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::Conv2D(4, 3, {.strides = 0}).make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::Conv2D(4, 3, {.dilation_rate = 0}).make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::Conv2D(4, 3, {.groups = 3}).make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::Conv2D(4, 3, {.padding = "full"}).make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::Conv2D(4, 3, {.padding = {-1, 0}}).make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::Conv2D(4, 3, {.activation = "swish"}).make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::Conv2D(4, 3, {.kernel_initializer = "ones"}).make<float>(),
                    invalid_argument);
    CHECK_THROWS_AS(nn::MaxPool2D(0).make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::MaxPool2D(2, {.padding = 2}).make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::AveragePool2D(2, {.strides = {0, 2}}).make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::BatchNormalization{{.momentum = 1.5}}.make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::BatchNormalization{{.epsilon = 0}}.make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::Embedding(0, 3).make<float>(), invalid_argument);
    CHECK_THROWS_AS(nn::Embedding(3, 2, {.embeddings_initializer = "x"}).make<float>(),
                    invalid_argument);
  }
  SUBCASE("input shapes a layer cannot take") {
    auto conv = nn::Conv2D(4, 5).make<float>();
    try {
      (void)conv->output_shape(nn::Shape{1, 3, 8});  // 3 rows for a 5-row kernel
      CHECK(false);
    } catch (const shape_error& e) {
      CHECK(std::string(e.what()).find("Conv2D: expected an input of at least 5 x 5") !=
            std::string::npos);
    }
    CHECK_THROWS_AS((void)nn::Conv2D(4, 3, {.dilation_rate = 3}).make<float>()->output_shape(
                        nn::Shape{1, 6, 6}),
                    shape_error);  // dilated extent 7
    CHECK_THROWS_AS((void)conv->output_shape(nn::Shape{64}), shape_error);  // wrong rank
    CHECK_THROWS_AS((void)conv->output_shape(nn::Shape{1, 8, 8, 1}), shape_error);
    try {
      (void)nn::Conv2D(4, 3, {.groups = 2}).make<float>()->output_shape(nn::Shape{3, 8, 8});
      CHECK(false);
    } catch (const shape_error& e) {
      CHECK(std::string(e.what()).find("channels divisible by groups = 2, found 3") !=
            std::string::npos);
    }
    CHECK_THROWS_AS((void)nn::MaxPool2D(3).make<float>()->output_shape(nn::Shape{1, 2, 8}),
                    shape_error);
    CHECK_THROWS_AS((void)nn::AveragePool2D(2).make<float>()->output_shape(nn::Shape{8, 8}),
                    shape_error);
    CHECK_THROWS_AS((void)nn::GlobalAveragePool2D{}.make<float>()->output_shape(nn::Shape{8}),
                    shape_error);
    CHECK_THROWS_AS((void)nn::Embedding(3, 2).make<float>()->output_shape(nn::Shape{}),
                    shape_error);
    // A batch of another shape than the built one.
    nn::Conv2DLayer<float> built(nn::Conv2D(2, 3));
    built.build(nn::Shape{1, 5, 5}, 0);
    const std::vector<float> x(2 * 36, 0.0f);
    CHECK_THROWS_AS((void)built.forward({x.data(), nn::Shape{2, 1, 6, 6}}, false), shape_error);
    CHECK_THROWS_AS((void)built.forward({x.data(), nn::Shape{2, 36}}, false), shape_error);
    nn::BatchNormalizationLayer<float> bn({});
    bn.build(nn::Shape{3}, 0);
    CHECK_THROWS_AS((void)bn.forward({x.data(), nn::Shape{2, 4}}, true), shape_error);
  }
  SUBCASE("a Sequential CNN fed rows of the wrong width") {
    nn::Sequential<float> model{nn::Input({1, 8, 8}), nn::Conv2D(2, 3), nn::Flatten{},
                                nn::Dense(2)};
    model.compile(nn::SGD{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
    const Matrix<float> X = Matrix<float>::Zero(4, 63);
    const Labels y = Labels::Zero(4);
    CHECK_THROWS_AS(model.fit(X, y), shape_error);
    nn::Sequential<float> too_small{nn::Input({1, 2, 2}), nn::Conv2D(2, 3)};
    CHECK_THROWS_AS(too_small.build(nn::Shape{1, 2, 2}), shape_error);
  }
}

// ---------------------------------------------------------------------------------------------
// The criterion: a small CNN on digits.

namespace {

/// Rows of 64 pixels -> 1x8x8 -> conv 16 (same) + BN + ReLU -> pool -> conv 32 (same) + ReLU
/// -> pool -> 32 x 2 x 2 -> Dense(10).
nn::Sequential<float> digits_cnn() {
  return nn::Sequential<float>{nn::Reshape({1, 8, 8}),
                               nn::Conv2D(16, 3, {.padding = "same", .use_bias = false}),
                               nn::BatchNormalization{},
                               nn::ReLU{},
                               nn::MaxPool2D(2),
                               nn::Conv2D(32, 3, {.padding = "same", .activation = "relu"}),
                               nn::MaxPool2D(2),
                               nn::Flatten{},
                               nn::Dense(10)};
}

}  // namespace

TEST_CASE("nn Sequential: a small CNN on digits (1x8x8) reaches >= 0.97, deterministically") {
  const test::ScaledDigits& d = test::scaled_digits();
  const std::uint64_t seed = 4;
  CAPTURE(seed);
  const nn::FitOptions options{.epochs = 15, .batch_size = 32, .seed = seed};
  auto train = [&](nn::Sequential<float>& model) {
    model.compile(nn::Adam{.learning_rate = 3e-3},
                  nn::SparseCategoricalCrossentropy{.from_logits = true}, {"accuracy"});
    return model.fit(d.X_train, d.y_train, options);
  };
  const auto start = std::chrono::steady_clock::now();
  auto model = digits_cnn();
  const nn::History history = train(model);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto scores = model.evaluate(d.X_test, d.y_test);
  MESSAGE("digits CNN: test accuracy ", scores.at("accuracy"), ", loss ", scores.at("loss"),
          ", fit ", seconds, " s");
  CHECK(scores.at("accuracy") >= 0.97);
  CHECK(model.output_shape() == nn::Shape{10});
  CHECK(history.at("loss").back() < history.at("loss").front());
  // 16·9 (no bias) + 2·16 (gamma, beta) + 32·16·9 + 32 + 128·10 + 10.
  CHECK(model.count_params() == 144 + 32 + 4608 + 32 + 1290);
  // The BatchNormalization's moving statistics moved away from (0, 1).
  auto& bn = dynamic_cast<nn::BatchNormalizationLayer<float>&>(model.layer(2));
  CHECK(std::abs(bn.state()[0][0]) > 1e-3);

  // Same seed, same weights and moving statistics, bit for bit.
  auto again = digits_cnn();
  const nn::History history2 = train(again);
  CHECK(again.get_weights() == model.get_weights());
  CHECK(history2.at("loss") == history.at("loss"));
  auto& bn2 = dynamic_cast<nn::BatchNormalizationLayer<float>&>(again.layer(2));
  CHECK(std::vector<float>(bn2.state()[1].begin(), bn2.state()[1].end()) ==
        std::vector<float>(bn.state()[1].begin(), bn.state()[1].end()));

  // With Input({1, 8, 8}) instead of Reshape, flat rows are taken as images directly.
  nn::Sequential<float> with_input{nn::Input({1, 8, 8}), nn::Conv2D(8, 3, {.activation = "relu"}),
                                   nn::GlobalAveragePool2D{}, nn::Dense(10)};
  with_input.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
  with_input.fit(d.X_train, d.y_train, {.epochs = 1, .seed = seed});
  CHECK(with_input.predict(d.X_test).rows() == d.X_test.rows());
  CHECK(with_input.summary().find("(None, 8, 6, 6)") != std::string::npos);
}

TEST_CASE("pad_planes: image cells copied, every other cell zero, rows narrower and wider than a packet") {
  // pad_planes copies rows in whole packets and zeroes again the padding they ran over; an
  // independent placement of every cell is the reference. Twice into the same buffer, as
  // Conv2D does from one batch to the next.
  using onelearn::index_t;
  using DC = onelearn::nn::detail::DirectConv<float>;
  std::mt19937 rng(3);
  int cells = 0;
  for (const index_t H : {1, 2, 7, 14}) {
    for (const index_t W : {1, 3, 14, 17, 28, 33}) {
      for (const index_t k : {1, 3, 5}) {
        for (const index_t planes : {1, 3}) {
          CAPTURE(H);
          CAPTURE(W);
          CAPTURE(k);
          const index_t top = k / 2, left = k / 2;
          const index_t Wp = DC::plane_width(W, k, 1), S = DC::plane_size(H, W, k, k, 1, 1);
          std::vector<float> x(static_cast<std::size_t>(planes * H * W));
          for (float& v : x) v = 1.f + static_cast<float>(rng() % 100);
          std::vector<float> out(static_cast<std::size_t>(planes * S), 0.f);
          for (int batch = 0; batch < 2; ++batch) {
            onelearn::nn::detail::pad_planes(x.data(), planes, H, W, top, left, Wp, S, out.data());
          }
          int wrong = 0;
          for (index_t p = 0; p < planes; ++p) {
            for (index_t i = 0; i < S; ++i) {
              const index_t r = i / Wp - top, c = i % Wp - left;
              const bool image = i < (H + k - 1) * Wp && r >= 0 && r < H && c >= 0 && c < W;
              const float want = image ? x[static_cast<std::size_t>(p * H * W + r * W + c)] : 0.f;
              wrong += out[static_cast<std::size_t>(p * S + i)] != want ? 1 : 0;
              ++cells;
            }
          }
          CHECK(wrong == 0);
        }
      }
    }
  }
  CHECK(cells > 10000);
}
