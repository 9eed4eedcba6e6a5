#pragma once
/**
 * \file
 * \brief Networks in a compute space: the layers' kernels on Thrust's systems.
 * \ingroup nn
 *
 * <!-- example-context: nn -->
 * \code
 * #include <onelearn/nn/space.hpp>
 * #include <onelearn/nn/sequential.hpp>
 *
 * namespace nn = onelearn::nn;
 * namespace space = onelearn::space;
 * #if defined(ONELEARN_SPACE_HAVE_OMP)   // Thrust's headers and -fopenmp (onelearn::thrust_omp)
 * nn::Sequential<float, onelearn::exec::local, space::thrust_omp> model{
 *     nn::Input({64}), nn::Dense(128, "relu"), nn::Dense(10)};
 * model.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
 * model.fit(X_train, y_train, {.epochs = 5, .batch_size = 32});   // the same API, the same model
 * #endif
 * \endcode
 *
 * `nn::Sequential<T, Exec, Space>` with a Thrust space runs Dense's three products (forward,
 * the parameter gradients, the input gradient), every activation (Dense's fused one and the
 * activation layers), the built-in losses and the optimizer's updates on the space's system,
 * through nn::NetworkKernels (nn/network_kernels.hpp). Everything else, the accuracy metric, the
 * global norm of gradient clipping, the other layers, the data-parallel all-reduce, runs the
 * host's code on the same buffers, which is why only the host-accessible spaces are available (thrust_cpp,
 * thrust_omp, thrust_tbb); a network in thrust_cuda is a compile-time error until those run on a
 * device too.
 *
 * Two forms, as the space's other kernels (space/detail/thrust_kernels.hpp):
 * - thrust_omp and thrust_tbb (the CPU form) run the host's own kernels, nn/network_kernels.hpp's
 *   ChunkedKernels (Dense's products cut by rows into chunks of Eigen's one-thread GEMM, the
 *   activations, losses and updates by chunks of rows or values), with the system's threads
 *   running the chunks instead of OpenMP's. The chunks depend on the sizes only: the host's bits.
 * - thrust_cpp (the device's form, one work item per output entry, per row or per parameter,
 *   plain loops in ONELEARN_SPACE_HD functors; a loss's terms come back to the host, which adds
 *   them in order); every test run checks it. thrust_cuda runs the same functors,
 *   but the three products go to cuBLAS (sgemm, dgemm on the transposes, the bias broadcast
 *   into z first). A Sequential cannot use thrust_cuda yet (its other parts read the layers'
 *   buffers on the host), so there these kernels are what the CUDA tests call on device buffers.
 * The device's form gives the host's results to rounding (the products sum in another order; its
 * scalar exp and tanh differ from the host's vectorised ones in the last bits): 1e-12 relative in
 * double and 1e-5 in float per kernel, and trained weights agree as closely as training
 * amplifies that.
 */

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string_view>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/nn/detail/activation_kernels.hpp"
#include "onelearn/nn/network_kernels.hpp"
#include "onelearn/nn/tensor.hpp"
#include "onelearn/space/space.hpp"

#if defined(ONELEARN_SPACE_HAVE_THRUST)

#if defined(ONELEARN_SPACE_HAVE_CUDA)
#include <cublas_v2.h>

#include "onelearn/space/detail/cublas_handle.hpp"
#endif

namespace onelearn::nn {

namespace detail {

// --- The device's form: one work item per output entry (or per row for softmax) ---------------

template <class T>
struct dense_forward_entry {
  const T* x;
  const T* W;
  const T* b;
  T* z;
  DenseSizes n;

  ONELEARN_SPACE_HD void operator()(index_t item) const {
    const index_t i = item / n.units;
    const index_t u = item - i * n.units;
    T sum = b != nullptr ? b[u] : T(0);
    for (index_t k = 0; k < n.in; ++k) sum += x[i * n.in + k] * W[k * n.units + u];
    z[item] = sum;
  }
};

/// z[i, u] = b[u] (0 without bias): what a cuBLAS product then adds onto.
template <class T>
struct broadcast_bias_entry {
  const T* b;
  T* z;
  index_t units;

  ONELEARN_SPACE_HD void operator()(index_t item) const {
    z[item] = b != nullptr ? b[item % units] : T(0);
  }
};

template <class T>
struct copy_entry {
  const T* from;
  T* to;

  ONELEARN_SPACE_HD void operator()(index_t i) const { to[i] = from[i]; }
};

template <class T>
struct kernel_gradient_entry {
  const T* x;
  const T* dz;
  const T* W;
  T two_l2;
  T* dW;
  DenseSizes n;

  ONELEARN_SPACE_HD void operator()(index_t item) const {
    const index_t k = item / n.units;
    const index_t u = item - k * n.units;
    T sum = two_l2 != T(0) ? two_l2 * W[item] : T(0);
    for (index_t i = 0; i < n.rows; ++i) sum += x[i * n.in + k] * dz[i * n.units + u];
    dW[item] = sum;
  }
};

template <class T>
struct bias_gradient_entry {
  const T* dz;
  T* db;
  DenseSizes n;

  ONELEARN_SPACE_HD void operator()(index_t u) const {
    T sum = T(0);
    for (index_t i = 0; i < n.rows; ++i) sum += dz[i * n.units + u];
    db[u] = sum;
  }
};

template <class T>
struct input_gradient_entry {
  const T* dz;
  const T* W;
  T* dx;
  DenseSizes n;

  ONELEARN_SPACE_HD void operator()(index_t item) const {
    const index_t i = item / n.in;
    const index_t k = item - i * n.in;
    T sum = T(0);
    for (index_t u = 0; u < n.units; ++u) sum += dz[i * n.units + u] * W[k * n.units + u];
    dx[item] = sum;
  }
};

/// y = f(x) entry by entry (the element-wise activations).
template <class T>
struct activation_entry {
  Activation kind;
  T alpha;
  const T* x;
  T* y;

  ONELEARN_SPACE_HD void operator()(index_t i) const {
    using std::erf;
    using std::exp;
    using std::tanh;
    const T v = x[i];
    switch (kind) {
      case Activation::relu: y[i] = v > T(0) ? v : T(0); return;
      case Activation::leaky_relu: y[i] = v > T(0) ? v : alpha * v; return;
      case Activation::elu: y[i] = v > T(0) ? v : alpha * (exp(v) - T(1)); return;
      case Activation::gelu:
        y[i] = T(0.5) * v * (T(1) + erf(v * (T(1) / std::numbers::sqrt2_v<T>)));
        return;
      case Activation::sigmoid: y[i] = T(1) / (T(1) + exp(-v)); return;
      case Activation::tanh: y[i] = tanh(v); return;
      default: y[i] = v; return;  // linear (softmax and log_softmax go by rows)
    }
  }
};

/// dx = f'(x) dy entry by entry, from the forward's input x and output y.
template <class T>
struct activation_gradient_entry {
  Activation kind;
  T alpha;
  const T* x;
  const T* y;
  const T* dy;
  T* dx;

  ONELEARN_SPACE_HD void operator()(index_t i) const {
    using std::erf;
    using std::exp;
    const T v = x[i];
    switch (kind) {
      case Activation::relu: dx[i] = v > T(0) ? dy[i] : T(0); return;
      case Activation::leaky_relu: dx[i] = v > T(0) ? dy[i] : alpha * dy[i]; return;
      case Activation::elu: dx[i] = v > T(0) ? dy[i] : dy[i] * (y[i] + alpha); return;
      case Activation::gelu: {
        const T inv_sqrt2 = T(1) / std::numbers::sqrt2_v<T>;
        const T cdf = T(0.5) * (T(1) + erf(v * inv_sqrt2));
        const T pdf = std::numbers::inv_sqrtpi_v<T> * inv_sqrt2 * exp(T(-0.5) * v * v);
        dx[i] = dy[i] * (cdf + v * pdf);
        return;
      }
      case Activation::sigmoid: dx[i] = dy[i] * y[i] * (T(1) - y[i]); return;
      case Activation::tanh: dx[i] = dy[i] * (T(1) - y[i] * y[i]); return;
      default: dx[i] = dy[i]; return;
    }
  }
};

/// Softmax or log-softmax of one row (from its largest entry), forward.
template <class T>
struct softmax_row {
  bool log_form;  ///< log-softmax
  const T* x;
  T* y;
  index_t width;

  ONELEARN_SPACE_HD void operator()(index_t r) const {
    using std::exp;
    using std::log;
    const T* in = x + r * width;
    T* out = y + r * width;
    T top = in[0];
    for (index_t j = 1; j < width; ++j) top = in[j] > top ? in[j] : top;
    T sum = T(0);
    for (index_t j = 0; j < width; ++j) sum += exp(in[j] - top);
    for (index_t j = 0; j < width; ++j) {
      out[j] = log_form ? in[j] - top - log(sum) : exp(in[j] - top) / sum;
    }
  }
};

/// The same, backward: softmax dx = y (dy - <dy, y>); log-softmax dx = dy - exp(y) sum(dy).
template <class T>
struct softmax_row_gradient {
  bool log_form;
  const T* y;
  const T* dy;
  T* dx;
  index_t width;

  ONELEARN_SPACE_HD void operator()(index_t r) const {
    using std::exp;
    const index_t o = r * width;
    T total = T(0);
    for (index_t j = 0; j < width; ++j) total += log_form ? dy[o + j] : dy[o + j] * y[o + j];
    for (index_t j = 0; j < width; ++j) {
      dx[o + j] = log_form ? dy[o + j] - exp(y[o + j]) * total : y[o + j] * (dy[o + j] - total);
    }
  }
};

// --- The losses, term by term: each work item writes its term (in double) and its gradient ---

template <class T>
struct elementwise_loss_entry {
  ElementwiseLoss kind;
  T delta;
  const T* output;
  const T* target;
  T* grad;
  T grad_scale;
  double* terms;

  ONELEARN_SPACE_HD void operator()(index_t i) const {
    terms[i] = static_cast<double>(elementwise_term(kind, delta, output[i], target[i]));
    if (grad != nullptr) grad[i] = elementwise_derivative(kind, delta, output[i], target[i]) * grad_scale;
  }
};

/// One row of the sparse categorical cross-entropy (the host's formulas, scalar).
template <class T>
struct sparse_categorical_row {
  bool from_logits;
  const T* output;
  const std::int64_t* labels;
  T* grad;
  T grad_scale;
  index_t classes;
  double* terms;

  ONELEARN_SPACE_HD void operator()(index_t r) const {
    using std::exp;
    using std::log;
    const T* z = output + r * classes;
    T* g = grad != nullptr ? grad + r * classes : nullptr;
    const auto label = static_cast<index_t>(labels[r]);
    if (from_logits) {
      T top = z[0];
      for (index_t c = 1; c < classes; ++c) top = z[c] > top ? z[c] : top;
      T sum = T(0);
      for (index_t c = 0; c < classes; ++c) sum += exp(z[c] - top);
      const T log_norm = top + log(sum);
      terms[r] = static_cast<double>(log_norm - z[label]);
      if (g != nullptr) {
        for (index_t c = 0; c < classes; ++c) g[c] = exp(z[c] - log_norm) * grad_scale;
        g[label] -= grad_scale;
      }
    } else {
      const T lo = T(probability_epsilon);
      const T hi = T(1) - lo;
      const auto clip = [lo, hi](T v) { return v < lo ? lo : (hi < v ? hi : v); };
      T sum = T(0);
      for (index_t c = 0; c < classes; ++c) sum += clip(z[c]);
      const T py = clip(z[label]);
      terms[r] = static_cast<double>(log(sum) - log(py));
      if (g != nullptr) {
        for (index_t c = 0; c < classes; ++c) {
          g[c] = (z[c] > lo && z[c] < hi) ? grad_scale / sum : T(0);
        }
        if (z[label] > lo && z[label] < hi) g[label] -= grad_scale / py;
      }
    }
  }
};

template <class T>
struct binary_loss_entry {
  bool from_logits;
  const T* output;
  const T* target;
  T* grad;
  T grad_scale;
  double* terms;

  ONELEARN_SPACE_HD void operator()(index_t i) const {
    using std::exp;
    using std::log;
    using std::log1p;
    const T z = output[i];
    const T t = target[i];
    if (from_logits) {
      const T magnitude = z < T(0) ? -z : z;
      terms[i] = static_cast<double>((z > T(0) ? z : T(0)) - z * t + log1p(exp(-magnitude)));
      if (grad != nullptr) grad[i] = (T(1) / (T(1) + exp(-z)) - t) * grad_scale;
    } else {
      const T lo = T(probability_epsilon);
      const T hi = T(1) - lo;
      const T p = z < lo ? lo : (hi < z ? hi : z);
      terms[i] = -static_cast<double>(t * log(p) + (T(1) - t) * log(T(1) - p));
      if (grad != nullptr) {
        grad[i] = (z > lo && z < hi) ? (-(t / p) + (T(1) - t) / (T(1) - p)) * grad_scale : T(0);
      }
    }
  }
};

// --- The optimizers' updates, entry by entry (the host's formulas, nn/network_kernels.hpp) ----

template <class T>
struct sgd_entry {
  SgdStep<T> step;
  T* p;
  T* g;
  T* b;

  ONELEARN_SPACE_HD void operator()(index_t i) const {
    if (step.weight_decay > T(0)) g[i] += step.weight_decay * p[i];
    if (step.momentum == T(0)) {
      p[i] -= step.rate * g[i];
      return;
    }
    b[i] = step.momentum * b[i] + g[i];
    p[i] -= step.nesterov ? step.rate * (g[i] + step.momentum * b[i]) : step.rate * b[i];
  }
};

template <class T>
struct adam_entry {
  AdamStep<T> step;
  T* p;
  T* g;
  T* m;
  T* v;

  ONELEARN_SPACE_HD void operator()(index_t i) const {
    using std::sqrt;
    if (step.shrink != T(1)) p[i] *= step.shrink;
    if (step.l2 != T(0)) g[i] += step.l2 * p[i];
    m[i] = step.beta_1 * m[i] + (T(1) - step.beta_1) * g[i];
    v[i] = step.beta_2 * v[i] + (T(1) - step.beta_2) * (g[i] * g[i]);
    p[i] -= step.step_size * m[i] / (sqrt(v[i]) * step.inv_sqrt_correction2 + step.epsilon);
  }
};

template <class T>
struct rmsprop_entry {
  RmspropStep<T> step;
  T* p;
  T* g;
  T* v;
  T* b;
  T* a;

  ONELEARN_SPACE_HD void operator()(index_t i) const {
    using std::sqrt;
    v[i] = step.rho * v[i] + (T(1) - step.rho) * (g[i] * g[i]);
    T denominator;
    if (step.centered) {
      a[i] = step.rho * a[i] + (T(1) - step.rho) * g[i];
      denominator = sqrt(v[i] - a[i] * a[i]) + step.epsilon;
    } else {
      denominator = sqrt(v[i]) + step.epsilon;
    }
    if (step.momentum > T(0)) {
      b[i] = step.momentum * b[i] + g[i] / denominator;
      p[i] -= step.rate * b[i];
    } else {
      p[i] -= step.rate * g[i] / denominator;
    }
  }
};

template <class T>
struct adagrad_entry {
  AdagradStep<T> step;
  T* p;
  T* g;
  T* s;

  ONELEARN_SPACE_HD void operator()(index_t i) const {
    using std::sqrt;
    s[i] += g[i] * g[i];
    p[i] -= step.rate * g[i] / (sqrt(s[i]) + step.epsilon);
  }
};

#if defined(ONELEARN_SPACE_HAVE_CUDA)
/// C = alpha op(A) op(B) + beta C, column-major, on this thread's cuBLAS handle. A row-major
/// (r x c) matrix is, to cuBLAS, its column-major (c x r) transpose: the products below are
/// written for the transposes.
template <class T>
void cublas_gemm(cublasOperation_t op_a, cublasOperation_t op_b, index_t m, index_t n, index_t k,
                 T alpha, const T* a, index_t lda, const T* b, index_t ldb, T beta, T* c,
                 index_t ldc) {
  if (m == 0 || n == 0) return;
  const auto i = [](index_t v) { return static_cast<int>(v); };
  cublasHandle_t handle = space::detail::cublas_for_this_thread();
  if constexpr (std::is_same_v<T, float>) {
    space::detail::check_cublas(cublasSgemm(handle, op_a, op_b, i(m), i(n), i(k), &alpha, a,
                                            i(lda), b, i(ldb), &beta, c, i(ldc)),
                                "cublasSgemm");
  } else {
    space::detail::check_cublas(cublasDgemm(handle, op_a, op_b, i(m), i(n), i(k), &alpha, a,
                                            i(lda), b, i(ldb), &beta, c, i(ldc)),
                                "cublasDgemm");
  }
}
#endif

template <class T, class System>
class ThrustNetworkKernels final : public NetworkKernels<T> {
  using space_type = space::thrust_space<System>;
  static constexpr bool cpu_form = space::detail::threaded_cpu<System>;
#if defined(ONELEARN_SPACE_HAVE_CUDA)
  static constexpr bool cublas = std::is_same_v<System, space::system::cuda>;
#else
  static constexpr bool cublas = false;
#endif

 public:
  [[nodiscard]] std::string_view space_name() const override { return space_type::name; }

  void dense_forward(const T* x, const T* W, const T* b, T* z, DenseSizes n) const override {
    if constexpr (cpu_form) {
      cpu().dense_forward(x, W, b, z, n);
    } else if constexpr (cublas) {
#if defined(ONELEARN_SPACE_HAVE_CUDA)
      // zᵀ (units x rows) = Wᵀ xᵀ + zᵀ, z holding the broadcast bias first.
      for_each(n.rows * n.units, broadcast_bias_entry<T>{b, z, n.units});
      cublas_gemm<T>(CUBLAS_OP_N, CUBLAS_OP_N, n.units, n.rows, n.in, T(1), W, n.units, x, n.in,
                     T(1), z, n.units);
#endif
    } else {
      for_each(n.rows * n.units, dense_forward_entry<T>{x, W, b, z, n});
    }
  }

  void dense_parameter_gradients(const T* x, const T* dz, const T* W, T two_l2, T* dW, T* db,
                                 DenseSizes n) const override {
    if constexpr (cpu_form) {
      cpu().dense_parameter_gradients(x, dz, W, two_l2, dW, db, n);
      return;
    } else if constexpr (cublas) {
#if defined(ONELEARN_SPACE_HAVE_CUDA)
      // dWᵀ (units x in) = dzᵀ x + two_l2 Wᵀ: dW holds W first when there is an L2 term.
      if (two_l2 != T(0)) for_each(n.in * n.units, copy_entry<T>{W, dW});
      cublas_gemm<T>(CUBLAS_OP_N, CUBLAS_OP_T, n.units, n.in, n.rows, T(1), dz, n.units, x, n.in,
                     two_l2, dW, n.units);
#endif
    } else {
      for_each(n.in * n.units, kernel_gradient_entry<T>{x, dz, W, two_l2, dW, n});
    }
    if (db != nullptr) for_each(n.units, bias_gradient_entry<T>{dz, db, n});
  }

  void dense_input_gradient(const T* dz, const T* W, T* dx, DenseSizes n) const override {
    if constexpr (cpu_form) {
      cpu().dense_input_gradient(dz, W, dx, n);
    } else if constexpr (cublas) {
#if defined(ONELEARN_SPACE_HAVE_CUDA)
      // dxᵀ (in x rows) = W dzᵀ, W being (units x in) to cuBLAS, hence transposed.
      cublas_gemm<T>(CUBLAS_OP_T, CUBLAS_OP_N, n.in, n.rows, n.units, T(1), W, n.units, dz,
                     n.units, T(0), dx, n.in);
#endif
    } else {
      for_each(n.rows * n.in, input_gradient_entry<T>{dz, W, dx, n});
    }
  }

  void activation_forward(Activation kind, T alpha, TensorView<const T> x,
                          TensorView<T> y) const override {
    if constexpr (cpu_form) {
      cpu().activation_forward(kind, alpha, x, y);
    } else if (kind == Activation::softmax || kind == Activation::log_softmax) {
      for_each(last_axis_rows(x),
               softmax_row<T>{kind == Activation::log_softmax, x.data, y.data, x.shape.back()});
    } else {
      for_each(x.size(), activation_entry<T>{kind, alpha, x.data, y.data});
    }
  }

  void activation_backward(Activation kind, T alpha, TensorView<const T> x, TensorView<const T> y,
                           TensorView<const T> dy, TensorView<T> dx) const override {
    if constexpr (cpu_form) {
      cpu().activation_backward(kind, alpha, x, y, dy, dx);
    } else if (kind == Activation::softmax || kind == Activation::log_softmax) {
      for_each(last_axis_rows(dy), softmax_row_gradient<T>{kind == Activation::log_softmax, y.data,
                                                           dy.data, dx.data, dy.shape.back()});
    } else {
      for_each(dy.size(),
               activation_gradient_entry<T>{kind, alpha, x.data, y.data, dy.data, dx.data});
    }
  }

  double elementwise_loss(ElementwiseLoss kind, T delta, const T* output, const T* target,
                          T* grad, T grad_scale, index_t n) const override {
    if constexpr (cpu_form) {
      return cpu().elementwise_loss(kind, delta, output, target, grad, grad_scale, n);
    } else {
      return summed_terms(n, [&](double* terms) {
        for_each(n, elementwise_loss_entry<T>{kind, delta, output, target, grad, grad_scale, terms});
      });
    }
  }

  double sparse_categorical_loss(bool from_logits, const T* output, const std::int64_t* labels,
                                 T* grad, T grad_scale, index_t rows,
                                 index_t classes) const override {
    if constexpr (cpu_form) {
      return cpu().sparse_categorical_loss(from_logits, output, labels, grad, grad_scale, rows,
                                           classes);
    } else {
      return summed_terms(rows, [&](double* terms) {
        for_each(rows, sparse_categorical_row<T>{from_logits, output, labels, grad, grad_scale,
                                                 classes, terms});
      });
    }
  }

  double binary_loss(bool from_logits, const T* output, const T* target, T* grad, T grad_scale,
                     index_t n) const override {
    if constexpr (cpu_form) {
      return cpu().binary_loss(from_logits, output, target, grad, grad_scale, n);
    } else {
      return summed_terms(n, [&](double* terms) {
        for_each(n, binary_loss_entry<T>{from_logits, output, target, grad, grad_scale, terms});
      });
    }
  }

  void sgd_update(const SgdStep<T>& step, T* p, T* g, T* velocity, index_t n) const override {
    if constexpr (cpu_form) {
      cpu().sgd_update(step, p, g, velocity, n);
    } else {
      for_each(n, sgd_entry<T>{step, p, g, velocity});
    }
  }

  void adam_update(const AdamStep<T>& step, T* p, T* g, T* m, T* v, index_t n) const override {
    if constexpr (cpu_form) {
      cpu().adam_update(step, p, g, m, v, n);
    } else {
      for_each(n, adam_entry<T>{step, p, g, m, v});
    }
  }

  void rmsprop_update(const RmspropStep<T>& step, T* p, T* g, T* v, T* b, T* a,
                      index_t n) const override {
    if constexpr (cpu_form) {
      cpu().rmsprop_update(step, p, g, v, b, a, n);
    } else {
      for_each(n, rmsprop_entry<T>{step, p, g, v, b, a});
    }
  }

  void adagrad_update(const AdagradStep<T>& step, T* p, T* g, T* s, index_t n) const override {
    if constexpr (cpu_form) {
      cpu().adagrad_update(step, p, g, s, n);
    } else {
      for_each(n, adagrad_entry<T>{step, p, g, s});
    }
  }

 private:
  template <class F>
  static void for_each(index_t n, const F& f) {
    space::detail::for_each_index(space_, n, f);
  }

  /// The CPU form: the host's chunked kernels (nn/network_kernels.hpp) with the system's threads
  /// running the chunks.
  [[nodiscard]] static auto cpu() {
    if constexpr (cpu_form) {
      return ChunkedKernels<T, space::detail::system_chunks<System>>(
          space::detail::system_chunks<System>{&space_});
    }
  }

  /// The device's form of a loss: `write(terms)` puts each term in a buffer in the space; they
  /// come back to the host and are added in order there (a batch's few values: one small copy,
  /// and the host's order of summation).
  template <class Write>
  [[nodiscard]] static double summed_terms(index_t n, const Write& write) {
    if (n <= 0) return 0.0;
    auto terms = space_.template allocate_scratch<double>(static_cast<std::size_t>(n));
    write(space_type::data(terms));
    std::vector<double> host_terms(static_cast<std::size_t>(n));
    space_.copy_to_host(space_type::data(terms), host_terms.size(), host_terms.data());
    double total = 0;
    for (const double t : host_terms) total += t;
    return total;
  }

  // Thrust's spaces hold no state: one for every kernel object.
  static inline const space_type space_{};
};

}  // namespace detail

template <class T, class System>
struct space_network_kernels<T, space::thrust_space<System>> {
  using type = detail::ThrustNetworkKernels<T, System>;
};

}  // namespace onelearn::nn

#endif  // ONELEARN_SPACE_HAVE_THRUST
