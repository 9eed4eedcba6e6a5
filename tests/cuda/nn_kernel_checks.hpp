#pragma once
// A compute space's network kernels (nn::NetworkKernels, nn/space.hpp) against the host's on the same
// inputs, shared by unit/test_nn_in_space.cpp (through cuda/nn_space_checks.hpp: the CPU Thrust
// systems) and cuda/test_spaces_cuda.cu (thrust_cuda: the products by cuBLAS). The inputs go
// into the space's memory and the results come back, so the same check runs on a device.
//
// check_network_kernels: Dense's three products with and without bias and L2 term, on sizes that
// cut into uneven chunks (70 rows and a kernel of 45 rows: 32, 32 and 6 on the CPU systems); each
// activation forward, and backward from the host's forward output.
// check_optimizer_updates: each optimizer's update (SGD plain, with momentum and weight decay,
// Nesterov; Adam plain, with L2, AdamW's decoupled decay; RMSprop plain, with momentum,
// centred; Adagrad) of 40,000 values, every buffer compared afterwards.
// check_losses: the element-wise losses, the binary and sparse categorical cross-entropies on
// logits and on probabilities (some at 0 and 1, where they are clipped), totals and gradients.
// Tolerances: the space checks' (double 1e-12, float 1e-5, relative to the largest entry).

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cuda/space_checks.hpp"
#include "onelearn/nn/network_kernels.hpp"
#include "onelearn/nn/space.hpp"

namespace onelearn::space_test {

template <class T>
Matrix<T> uniform_matrix(index_t rows, index_t cols, double scale, std::uint64_t salt) {
  std::mt19937_64 rng(seed + salt);
  std::uniform_real_distribution<double> uniform(-scale, scale);
  Matrix<T> m(rows, cols);
  for (index_t i = 0; i < m.size(); ++i) m.data()[i] = static_cast<T>(uniform(rng));
  return m;
}

template <class T>
nn::TensorView<const T> view_of(const Matrix<T>& m) {
  return {m.data(), nn::Shape{m.rows(), m.cols()}};
}
template <class T>
nn::TensorView<T> view_of(Matrix<T>& m) {
  return {m.data(), nn::Shape{m.rows(), m.cols()}};
}

/// A matrix's copy in space S (the caller's values, or rows x cols zeros), and back.
template <class S, class T>
class space_copy {
 public:
  space_copy(const S& s, const Matrix<T>& m)
      : s_(s), rows_(m.rows()), cols_(m.cols()),
        buffer_(s.template allocate<T>(static_cast<std::size_t>(m.size()))) {
    s.copy_to_space(m.data(), static_cast<std::size_t>(m.size()), data());
  }
  space_copy(const S& s, index_t rows, index_t cols)
      : space_copy(s, Matrix<T>(Matrix<T>::Zero(rows, cols))) {}

  [[nodiscard]] T* data() { return S::data(buffer_); }
  [[nodiscard]] nn::TensorView<T> view() { return {data(), nn::Shape{rows_, cols_}}; }
  [[nodiscard]] Matrix<T> to_host() const {
    Matrix<T> out(rows_, cols_);
    s_.copy_to_host(S::data(buffer_), static_cast<std::size_t>(out.size()), out.data());
    return out;
  }

 private:
  S s_;
  index_t rows_, cols_;
  typename S::template buffer<T> buffer_;
};

/// One optimizer update, `apply(kernels, {p, g, slot 0, slot 1, slot 2}, n)`, on the host and in
/// the space from the same values: every buffer compared afterwards.
template <class T, class S, class Apply>
void check_update(const char* what, const S& s, const typename nn::space_network_kernels<T, S>::type& kernels,
                  const Apply& apply) {
  INFO(what);
  const index_t n = 40'000;  // the CPU form's chunks: 16,384, 16,384 and 7,232 values
  std::vector<Matrix<T>> host{uniform_matrix<T>(n, 1, 1.0, 11), uniform_matrix<T>(n, 1, 1.0, 12),
                              uniform_matrix<T>(n, 1, 0.1, 13), uniform_matrix<T>(n, 1, 1.0, 14),
                              uniform_matrix<T>(n, 1, 0.1, 15)};
  // Slots 0 and 1 are read as squares (RMSprop's and Adagrad's accumulators in slot 0, Adam's v
  // in slot 1): positive, and above RMSprop's centred a^2 (slot 2, |a| <= 0.1).
  host[2] = (host[2].cwiseAbs().array() + T(0.05)).matrix();
  host[3] = (host[3].cwiseAbs().array() + T(0.05)).matrix();
  std::vector<space_copy<S, T>> copies;
  for (const auto& m : host) copies.emplace_back(s, m);
  apply(nn::host_network_kernels<T>(),
        std::array<T*, 5>{host[0].data(), host[1].data(), host[2].data(), host[3].data(),
                          host[4].data()},
        n);
  apply(kernels,
        std::array<T*, 5>{copies[0].data(), copies[1].data(), copies[2].data(), copies[3].data(),
                          copies[4].data()},
        n);
  const char* names[] = {"p", "g", "slot 0", "slot 1", "slot 2"};
  for (std::size_t i = 0; i < host.size(); ++i) {
    check_close(names[i], copies[i].to_host(), host[i], tolerance<T>());
  }
}

template <class T, class S>
void check_optimizer_updates(const S& s) {
  INFO("space ", S::name);
  const typename nn::space_network_kernels<T, S>::type kernels{};
  using P = std::array<T*, 5>;
  for (const T momentum : {T(0), T(0.9)}) {
    for (const bool nesterov : {false, true}) {
      const nn::SgdStep<T> step{.rate = T(0.1), .momentum = momentum,
                                .weight_decay = momentum > 0 ? T(0.01) : T(0),
                                .nesterov = nesterov};
      check_update<T>("sgd", s, kernels, [&](const nn::NetworkKernels<T>& k, P b, index_t n) {
        k.sgd_update(step, b[0], b[1], momentum > 0 ? b[4] : nullptr, n);
      });
    }
  }
  const T t = 3;
  for (const int decay : {0, 1, 2}) {  // none, Adam's L2, AdamW's decoupled
    const nn::AdamStep<T> step{
        .beta_1 = T(0.9), .beta_2 = T(0.999), .epsilon = T(1e-7),
        .step_size = static_cast<T>(0.01 / (1 - std::pow(0.9, t))),
        .inv_sqrt_correction2 = static_cast<T>(1 / std::sqrt(1 - std::pow(0.999, t))),
        .l2 = decay == 1 ? T(0.01) : T(0), .shrink = decay == 2 ? T(0.999) : T(1)};
    check_update<T>("adam", s, kernels, [&](const nn::NetworkKernels<T>& k, P b, index_t n) {
      k.adam_update(step, b[0], b[1], b[4], b[3], n);
    });
  }
  for (const T momentum : {T(0), T(0.9)}) {
    for (const bool centered : {false, true}) {
      const nn::RmspropStep<T> step{.rate = T(0.01), .rho = T(0.9), .momentum = momentum,
                                    .epsilon = T(1e-7), .centered = centered};
      check_update<T>("rmsprop", s, kernels, [&](const nn::NetworkKernels<T>& k, P b, index_t n) {
        k.rmsprop_update(step, b[0], b[1], b[2], b[3], b[4], n);
      });
    }
  }
  const nn::AdagradStep<T> step{.rate = T(0.01), .epsilon = T(1e-7)};
  check_update<T>("adagrad", s, kernels, [&](const nn::NetworkKernels<T>& k, P b, index_t n) {
    k.adagrad_update(step, b[0], b[1], b[2], n);
  });
}

/// Each built-in loss's total and gradient, in the space and on the host, from the same outputs.
template <class T, class S>
void check_losses(const S& s) {
  INFO("space ", S::name);
  const nn::NetworkKernels<T>& host = nn::host_network_kernels<T>();
  const typename nn::space_network_kernels<T, S>::type kernels{};
  const double tol = tolerance<T>();
  using C = space_copy<S, T>;
  // Element-wise and binary: 40,000 entries (the CPU form's chunks: 16,384, 16,384, 7,232).
  const index_t n = 40'000;
  const Matrix<T> out = uniform_matrix<T>(n, 1, 2.0, 21);
  const Matrix<T> target = uniform_matrix<T>(n, 1, 2.0, 22);
  Matrix<T> probability = ((uniform_matrix<T>(n, 1, 0.6, 23).array() + T(0.5))).matrix();
  probability(0) = T(0);  // clipped: no gradient there
  probability(1) = T(1);
  Matrix<T> target01 = ((uniform_matrix<T>(n, 1, 0.5, 24).array() + T(0.5))).matrix();
  C outs(s, out), targets(s, target), probabilities(s, probability), targets01(s, target01);
  const T scale = T(1) / static_cast<T>(n);
  for (const auto kind : {nn::ElementwiseLoss::squared, nn::ElementwiseLoss::absolute,
                          nn::ElementwiseLoss::huber}) {
    INFO("elementwise loss ", static_cast<int>(kind));
    Matrix<T> g_host(n, 1);
    C gs(s, n, 1);
    const double a = host.elementwise_loss(kind, T(0.7), out.data(), target.data(), g_host.data(), scale, n);
    const double b = kernels.elementwise_loss(kind, T(0.7), outs.data(), targets.data(), gs.data(), scale, n);
    check_close("total", b, a, tol);
    check_close("gradient", gs.to_host(), g_host, tol);
  }
  for (const bool logits : {true, false}) {
    INFO("binary, from logits ", logits);
    Matrix<T> g_host(n, 1);
    C gs(s, n, 1);
    const Matrix<T>& o = logits ? out : probability;
    C& os = logits ? outs : probabilities;
    const double a = host.binary_loss(logits, o.data(), target01.data(), g_host.data(), scale, n);
    const double b = kernels.binary_loss(logits, os.data(), targets01.data(), gs.data(), scale, n);
    check_close("total", b, a, tol);
    check_close("gradient", gs.to_host(), g_host, tol);
  }
  // Sparse categorical: 5,000 rows of 7 classes (CPU chunks of 1,250 rows).
  const index_t rows = 5'000, classes = 7;
  const Matrix<T> z = uniform_matrix<T>(rows, classes, 3.0, 25);
  Matrix<T> pz = ((uniform_matrix<T>(rows, classes, 0.5, 26).array() + T(0.5))).matrix();
  pz(0, 0) = T(0);
  pz(1, 1) = T(1);
  std::mt19937_64 rng(seed + 27);
  Labels labels(rows);
  for (index_t r = 0; r < rows; ++r) labels(r) = static_cast<std::int64_t>(rng() % classes);
  labels(1) = 1;  // a label on a clipped probability
  C zs(s, z), pzs(s, pz);
  auto label_buffer = s.template allocate<std::int64_t>(static_cast<std::size_t>(rows));
  s.copy_to_space(labels.data(), static_cast<std::size_t>(rows), S::data(label_buffer));
  for (const bool logits : {true, false}) {
    INFO("sparse categorical, from logits ", logits);
    Matrix<T> g_host(rows, classes);
    C gs(s, rows, classes);
    const Matrix<T>& o = logits ? z : pz;
    C& os = logits ? zs : pzs;
    const T row_scale = T(1) / static_cast<T>(rows);
    const double a = host.sparse_categorical_loss(logits, o.data(), labels.data(), g_host.data(),
                                                  row_scale, rows, classes);
    const double b = kernels.sparse_categorical_loss(logits, os.data(), S::data(label_buffer),
                                                     gs.data(), row_scale, rows, classes);
    check_close("total", b, a, tol);
    check_close("gradient", gs.to_host(), g_host, tol);
  }
}

template <class T, class S>
void check_network_kernels(const S& s) {
  INFO("space ", S::name);
  const nn::NetworkKernels<T>& host = nn::host_network_kernels<T>();
  const typename nn::space_network_kernels<T, S>::type kernels{};
  CHECK(kernels.space_name() == S::name);
  const double tol = tolerance<T>();
  using C = space_copy<S, T>;

  const nn::DenseSizes n{70, 45, 37};
  const Matrix<T> x = uniform_matrix<T>(n.rows, n.in, 1.0, 1);
  const Matrix<T> W = uniform_matrix<T>(n.in, n.units, 0.5, 2);
  const Matrix<T> b = uniform_matrix<T>(1, n.units, 0.5, 3);
  const Matrix<T> dz = uniform_matrix<T>(n.rows, n.units, 1.0, 4);
  C xs(s, x), Ws(s, W), bs(s, b), dzs(s, dz);
  for (const bool bias : {true, false}) {
    INFO("bias ", bias);
    Matrix<T> z_host(n.rows, n.units);
    C zs(s, n.rows, n.units);
    host.dense_forward(x.data(), W.data(), bias ? b.data() : nullptr, z_host.data(), n);
    kernels.dense_forward(xs.data(), Ws.data(), bias ? bs.data() : nullptr, zs.data(), n);
    check_close("dense_forward", zs.to_host(), z_host, tol);
    for (const double l2 : {0.0, 0.02}) {
      INFO("two_l2 ", l2);
      Matrix<T> dW_host(n.in, n.units);
      Matrix<T> db_host = Matrix<T>::Zero(1, n.units);
      C dWs(s, n.in, n.units), dbs(s, 1, n.units);
      host.dense_parameter_gradients(x.data(), dz.data(), W.data(), static_cast<T>(l2),
                                     dW_host.data(), bias ? db_host.data() : nullptr, n);
      kernels.dense_parameter_gradients(xs.data(), dzs.data(), Ws.data(), static_cast<T>(l2),
                                        dWs.data(), bias ? dbs.data() : nullptr, n);
      check_close("dense_parameter_gradients: dW", dWs.to_host(), dW_host, tol);
      check_close("dense_parameter_gradients: db", dbs.to_host(), db_host, tol);
    }
  }
  Matrix<T> dx_host(n.rows, n.in);
  C dxs(s, n.rows, n.in);
  host.dense_input_gradient(dz.data(), W.data(), dx_host.data(), n);
  kernels.dense_input_gradient(dzs.data(), Ws.data(), dxs.data(), n);
  check_close("dense_input_gradient", dxs.to_host(), dx_host, tol);

  using nn::detail::Activation;
  const Matrix<T> a = uniform_matrix<T>(70, 13, 3.0, 5);
  const Matrix<T> dy = uniform_matrix<T>(70, 13, 1.0, 6);
  C as(s, a), dys(s, dy);
  for (const Activation kind :
       {Activation::linear, Activation::relu, Activation::leaky_relu, Activation::elu,
        Activation::gelu, Activation::sigmoid, Activation::tanh, Activation::softmax,
        Activation::log_softmax}) {
    INFO("activation ", static_cast<int>(kind));
    const T alpha = kind == Activation::leaky_relu ? T(0.2) : T(1);
    Matrix<T> y_host(70, 13), g_host(70, 13);
    C ys(s, 70, 13), gs(s, 70, 13);
    host.activation_forward(kind, alpha, view_of(a), view_of(y_host));
    kernels.activation_forward(kind, alpha, as.view(), ys.view());
    check_close("activation_forward", ys.to_host(), y_host, tol);
    C y_from_host(s, y_host);  // backward from the same forward output on both sides
    host.activation_backward(kind, alpha, view_of(a), view_of(y_host), view_of(dy),
                             view_of(g_host));
    kernels.activation_backward(kind, alpha, as.view(), y_from_host.view(), dys.view(),
                                gs.view());
    check_close("activation_backward", gs.to_host(), g_host, tol);
  }
}

}  // namespace onelearn::space_test
