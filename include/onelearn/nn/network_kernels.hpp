#pragma once
/**
 * \class onelearn::nn::NetworkKernels
 * \brief Where a layer's arithmetic runs: the seam between Dense and the activation layers and a
 * compute space.
 * \ingroup nn
 *
 * <!-- example-context: nn -->
 * \code
 * #include <onelearn/nn/sequential.hpp>
 * #include <onelearn/nn/space.hpp>   // the Thrust spaces' kernels
 *
 * namespace nn = onelearn::nn;
 * namespace space = onelearn::space;
 * #if defined(ONELEARN_SPACE_HAVE_OMP)
 * // The same network, its products and activations on Thrust's OpenMP system:
 * nn::Sequential<float, onelearn::exec::local, space::thrust_omp> omp_model{
 *     nn::Input({64}), nn::Dense(128, "relu"), nn::Dense(10)};
 * const auto& dense = dynamic_cast<const nn::DenseLayer<float>&>(omp_model.layer(0));
 * std::cout << dense.kernels().space_name() << "\n";   // thrust_omp
 * #endif
 * \endcode
 *
 * nn::NetworkKernels<T>: the bulk arithmetic of a network, its dense layers' products, its
 * activations, its loss and its optimizer's updates, as one compute space runs it.
 * `Sequential<T, Exec, Space>` hands its space's kernels to every layer it holds
 * (Layer::use_kernels), its loss and its optimizer (Loss::use_kernels, Optimizer::use_kernels);
 * Dense and the activation layers call them for their products and element-wise passes, the
 * built-in losses for their terms and gradients, the optimizers for their updates, and a custom
 * layer may too. `host_network_kernels<T>()` is the host's (Eigen's GEMM
 * kernel, vectorised Eigen arrays: what every layer and optimizer ran before the spaces, and what
 * one used alone runs); `nn/space.hpp` has Thrust's.
 *
 * \par Design
 * - An interface of virtual functions, not a template parameter of the layers: the layers are
 *   runtime-polymorphic already (Sequential holds `unique_ptr<Layer<T>>`), and code that looks at
 *   a layer's type (ONNX export's `dynamic_cast<const DenseLayer<T>*>`, weights files,
 *   checkpoints, summaries) keeps one DenseLayer<T> whatever the space. A virtual call per layer
 *   and batch costs nothing next to the batch's products (as BatchContext's type-erased
 *   all-reduce, nn/layer.hpp).
 * - Pointers and sizes, row-major and compact, in the space's memory: what a device's kernels
 *   (cuBLAS, Thrust) take as they are.
 * - What stays with the host's code in every space: the accuracy metric, the global norm of
 *   gradient clipping, a user's own loss, and the other layers (convolutions, pooling, normalisation, dropout). In a
 *   host-accessible space (the CPU systems) they read the same memory; the space runs the
 *   products, activations, loss and updates, the bulk of a dense network's time.
 */

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "onelearn/core/types.hpp"
#include "onelearn/nn/detail/activation_kernels.hpp"
#include "onelearn/nn/detail/gemm.hpp"
#include "onelearn/nn/tensor.hpp"
#include "onelearn/space/config.hpp"

namespace onelearn::nn {

/// The element-wise losses (nn/losses.hpp): squared error, absolute error, Huber.
enum class ElementwiseLoss { squared, absolute, huber };

namespace detail {

/// An element-wise loss's term at prediction p and target y, and its derivative in p: written
/// once for the host and the spaces' functors (no std:: calls, which a device cannot make).
template <class T>
ONELEARN_SPACE_HD T elementwise_term(ElementwiseLoss kind, T delta, T p, T y) {
  const T e = p - y;
  switch (kind) {
    case ElementwiseLoss::squared: return e * e;
    case ElementwiseLoss::absolute: return e < T(0) ? -e : e;
    default: {
      const T a = e < T(0) ? -e : e;
      return a <= delta ? T(0.5) * a * a : delta * (a - T(0.5) * delta);
    }
  }
}
template <class T>
ONELEARN_SPACE_HD T elementwise_derivative(ElementwiseLoss kind, T delta, T p, T y) {
  switch (kind) {
    case ElementwiseLoss::squared: return T(2) * (p - y);
    case ElementwiseLoss::absolute: return p > y ? T(1) : (p < y ? T(-1) : T(0));
    default: {
      const T e = p - y;
      return e < -delta ? -delta : (delta < e ? delta : e);  // std::clamp(e, -delta, delta)
    }
  }
}

/// Keras's backend.epsilon(): where the losses on probabilities clip them.
inline constexpr double probability_epsilon = 1e-7;

}  // namespace detail

/// One optimizer update's settings, as the optimizer computes them for the step (the formulas
/// are nn/optimizers.hpp's): SGD's with momentum b and Nesterov's variant.
template <class T>
struct SgdStep {
  T rate = 0;
  T momentum = 0;      ///< 0: no velocity buffer
  T weight_decay = 0;  ///< g += weight_decay p first (0: none)
  bool nesterov = false;
};

/// Adam's and AdamW's: the bias corrections of step t folded into step_size and
/// inv_sqrt_correction2.
template <class T>
struct AdamStep {
  T beta_1 = 0;
  T beta_2 = 0;
  T epsilon = 0;
  T step_size = 0;             ///< lr / (1 - beta_1^t)
  T inv_sqrt_correction2 = 1;  ///< 1 / sqrt(1 - beta_2^t)
  T l2 = 0;                    ///< Adam's weight decay: g += l2 p first (0: none)
  T shrink = 1;                ///< AdamW's decoupled decay: p *= shrink first (1: none)
};

template <class T>
struct RmspropStep {
  T rate = 0;
  T rho = 0;
  T momentum = 0;  ///< 0: no momentum buffer update
  T epsilon = 0;
  bool centered = false;
};

template <class T>
struct AdagradStep {
  T rate = 0;
  T epsilon = 0;
};

/// The sizes of one dense layer's products: a batch of `rows` rows of width `in`, `units`
/// outputs (x: rows x in, W: in x units, z: rows x units).
struct DenseSizes {
  index_t rows = 0;
  index_t in = 0;
  index_t units = 0;
};

template <class T>
class NetworkKernels {
 public:
  NetworkKernels() = default;
  NetworkKernels(const NetworkKernels&) = delete;
  NetworkKernels& operator=(const NetworkKernels&) = delete;
  NetworkKernels(NetworkKernels&&) = delete;
  NetworkKernels& operator=(NetworkKernels&&) = delete;
  virtual ~NetworkKernels() = default;

  /// The space's name ("host", "thrust_omp", ...), for messages and summaries.
  [[nodiscard]] virtual std::string_view space_name() const = 0;

  /// z = x W + b (b null: no bias).
  virtual void dense_forward(const T* x, const T* W, const T* b, T* z, DenseSizes n) const = 0;

  /// dW = xᵀ dz + two_l2 W (two_l2 = 0: no regularisation term); db = the column sums of dz
  /// (db null: no bias).
  virtual void dense_parameter_gradients(const T* x, const T* dz, const T* W, T two_l2, T* dW,
                                         T* db, DenseSizes n) const = 0;

  /// dx = dz Wᵀ.
  virtual void dense_input_gradient(const T* dz, const T* W, T* dx, DenseSizes n) const = 0;

  /// y = f(x), element-wise or along the last axis (softmax); y does not alias x.
  virtual void activation_forward(detail::Activation kind, T alpha, TensorView<const T> x,
                                  TensorView<T> y) const = 0;

  /// dx = dL/dx from dy = dL/dy, given the forward's input x and output y.
  virtual void activation_backward(detail::Activation kind, T alpha, TensorView<const T> x,
                                   TensorView<const T> y, TensorView<const T> dy,
                                   TensorView<T> dx) const = 0;

  // The losses over a batch: the sum of their terms, in double (the loss divides it by the
  // count it averages over), and, when grad is not null, dLoss/doutput (each term's derivative
  // times grad_scale, the loss's 1 / count).

  /// n predictions against n targets.
  virtual double elementwise_loss(ElementwiseLoss kind, T delta, const T* output, const T* target,
                                  T* grad, T grad_scale, index_t n) const = 0;
  /// rows x classes outputs (logits, or probabilities) against integer labels 0..classes-1.
  virtual double sparse_categorical_loss(bool from_logits, const T* output,
                                         const std::int64_t* labels, T* grad, T grad_scale,
                                         index_t rows, index_t classes) const = 0;
  /// n outputs (logits, or probabilities) against n targets in [0, 1].
  virtual double binary_loss(bool from_logits, const T* output, const T* target, T* grad,
                             T grad_scale, index_t n) const = 0;

  // The optimizers' updates of one parameter buffer p of n values from its gradient g (which
  // the weight decay terms may change in place) and its state buffers.

  /// velocity: null when step.momentum is 0.
  virtual void sgd_update(const SgdStep<T>& step, T* p, T* g, T* velocity, index_t n) const = 0;
  /// m, v: the first and second moments.
  virtual void adam_update(const AdamStep<T>& step, T* p, T* g, T* m, T* v, index_t n) const = 0;
  /// v: the mean square; b: the momentum buffer; a: the mean (read when centered).
  virtual void rmsprop_update(const RmspropStep<T>& step, T* p, T* g, T* v, T* b, T* a,
                              index_t n) const = 0;
  /// s: the accumulated squares.
  virtual void adagrad_update(const AdagradStep<T>& step, T* p, T* g, T* s, index_t n) const = 0;
};

namespace detail {

/// The host's kernels: Eigen's GEMM kernel through nn/detail/gemm.hpp (OpenMP-parallel for large
/// products) and the vectorised activations of nn/detail/activation_kernels.hpp.
template <class T>
class HostNetworkKernels final : public NetworkKernels<T> {
 public:
  [[nodiscard]] std::string_view space_name() const override { return "host"; }

  void dense_forward(const T* x, const T* W, const T* b, T* z, DenseSizes n) const override {
    // z = b (or 0), then z += x W in the GEMM: no separate pass for the bias.
    Eigen::Map<Matrix<T>> Z(z, n.rows, n.units);
    if (b != nullptr) {
      Z.rowwise() = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>(b, n.units);
    } else {
      Z.setZero();
    }
    gemm_accumulate<T>({x, n.rows, n.in}, {W, n.in, n.units}, z, n.units);
  }

  void dense_parameter_gradients(const T* x, const T* dz, const T* W, T two_l2, T* dW, T* db,
                                 DenseSizes n) const override {
    // dW = two_l2 W (or 0), then dW += xᵀ dz.
    Eigen::Map<Matrix<T>> dWm(dW, n.in, n.units);
    if (two_l2 != T(0)) {
      dWm = two_l2 * Eigen::Map<const Matrix<T>>(W, n.in, n.units);
    } else {
      dWm.setZero();
    }
    gemm_accumulate<T>({x, n.rows, n.in, true}, {dz, n.rows, n.units}, dW, n.units);
    if (db != nullptr) {
      Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>> dbm(db, n.units);
      dbm.noalias() = Eigen::Map<const Matrix<T>>(dz, n.rows, n.units).colwise().sum();
    }
  }

  void dense_input_gradient(const T* dz, const T* W, T* dx, DenseSizes n) const override {
    Eigen::Map<Matrix<T>>(dx, n.rows, n.in).setZero();
    gemm_accumulate<T>({dz, n.rows, n.units}, {W, n.in, n.units, true}, dx, n.in);
  }

  void activation_forward(Activation kind, T alpha, TensorView<const T> x,
                          TensorView<T> y) const override {
    detail::activation_forward<T>(kind, alpha, x, y);
  }

  void activation_backward(Activation kind, T alpha, TensorView<const T> x, TensorView<const T> y,
                           TensorView<const T> dy, TensorView<T> dx) const override {
    detail::activation_backward<T>(kind, alpha, x, y, dy, dx);
  }

  // The losses: one pass in order, the terms summed in double.

  double elementwise_loss(ElementwiseLoss kind, T delta, const T* output, const T* target,
                          T* grad, T grad_scale, index_t n) const override {
    double total = 0;
    for (index_t i = 0; i < n; ++i) {
      total += static_cast<double>(elementwise_term(kind, delta, output[i], target[i]));
      if (grad != nullptr) {
        grad[i] = elementwise_derivative(kind, delta, output[i], target[i]) * grad_scale;
      }
    }
    return total;
  }

  double sparse_categorical_loss(bool from_logits, const T* output, const std::int64_t* labels,
                                 T* grad, T grad_scale, index_t rows,
                                 index_t classes) const override {
    const Eigen::Map<const Matrix<T>> Z(output, rows, classes);
    double total = 0;
    for (index_t r = 0; r < rows; ++r) {
      const auto label = static_cast<index_t>(labels[r]);
      if (from_logits) {
        const T top = Z.row(r).maxCoeff();
        const T sum = (Z.row(r).array() - top).exp().sum();
        const T log_norm = top + std::log(sum);
        total += static_cast<double>(log_norm - Z(r, label));
        if (grad != nullptr) {
          Eigen::Map<Eigen::Array<T, 1, Eigen::Dynamic>> g(grad + r * classes, classes);
          g = (Z.row(r).array() - log_norm).exp() * grad_scale;
          g(label) -= grad_scale;
        }
      } else {
        const T lo = T(probability_epsilon);
        const T hi = T(1) - lo;
        const T sum = Z.row(r).array().max(lo).min(hi).sum();
        const T py = std::clamp(Z(r, label), lo, hi);
        total += static_cast<double>(std::log(sum) - std::log(py));
        if (grad != nullptr) {
          T* g = grad + r * classes;
          for (index_t c = 0; c < classes; ++c) {
            g[c] = (Z(r, c) > lo && Z(r, c) < hi) ? grad_scale / sum : T(0);
          }
          if (Z(r, label) > lo && Z(r, label) < hi) g[label] -= grad_scale / py;
        }
      }
    }
    return total;
  }

  double binary_loss(bool from_logits, const T* output, const T* target, T* grad, T grad_scale,
                     index_t n) const override {
    const T lo = T(probability_epsilon);
    const T hi = T(1) - lo;
    double total = 0;
    for (index_t i = 0; i < n; ++i) {
      const T z = output[i];
      const T t = target[i];
      if (from_logits) {
        total +=
            static_cast<double>(std::max(z, T(0)) - z * t + std::log1p(std::exp(-std::abs(z))));
        if (grad != nullptr) grad[i] = (T(1) / (T(1) + std::exp(-z)) - t) * grad_scale;
      } else {
        const T p = std::clamp(z, lo, hi);
        total -= static_cast<double>(t * std::log(p) + (T(1) - t) * std::log(T(1) - p));
        if (grad != nullptr) {
          grad[i] = (z > lo && z < hi) ? (-(t / p) + (T(1) - t) / (T(1) - p)) * grad_scale : T(0);
        }
      }
    }
    return total;
  }

  // The optimizers' updates: whole-buffer Eigen array expressions (vectorised, one thread; the
  // updates are memory-bound).

  void sgd_update(const SgdStep<T>& step, T* p, T* g, T* velocity, index_t n) const override {
    auto P = array(p, n);
    auto G = array(g, n);
    if (step.weight_decay > T(0)) G += step.weight_decay * P;
    if (step.momentum == T(0)) {
      P -= step.rate * G;
      return;
    }
    auto B = array(velocity, n);
    B = step.momentum * B + G;
    if (step.nesterov) {
      P -= step.rate * (G + step.momentum * B);
    } else {
      P -= step.rate * B;
    }
  }

  void adam_update(const AdamStep<T>& step, T* p, T* g, T* m, T* v, index_t n) const override {
    auto P = array(p, n);
    auto G = array(g, n);
    if (step.shrink != T(1)) P *= step.shrink;
    if (step.l2 != T(0)) G += step.l2 * P;
    const T b1 = step.beta_1, b2 = step.beta_2;
    // In blocks that stay in L1, so the three statements cost one pass over memory, not three.
    for (index_t start = 0; start < n; start += adam_block) {
      const index_t len = std::min(adam_block, n - start);
      auto p_ = P.segment(start, len);
      auto g_ = G.segment(start, len);
      auto m_ = array(m + start, len);
      auto v_ = array(v + start, len);
      m_ = b1 * m_ + (T(1) - b1) * g_;
      v_ = b2 * v_ + (T(1) - b2) * g_.square();
      p_ -= step.step_size * m_ / (v_.sqrt() * step.inv_sqrt_correction2 + step.epsilon);
    }
  }

  void rmsprop_update(const RmspropStep<T>& step, T* p, T* g, T* v, T* b, T* a,
                      index_t n) const override {
    auto P = array(p, n);
    auto G = array(g, n);
    auto V = array(v, n);
    V = step.rho * V + (T(1) - step.rho) * G.square();
    auto apply = [&](const auto& denominator) {
      if (step.momentum > T(0)) {
        auto B = array(b, n);
        B = step.momentum * B + G / denominator;
        P -= step.rate * B;
      } else {
        P -= step.rate * G / denominator;
      }
    };
    if (step.centered) {
      auto A = array(a, n);
      A = step.rho * A + (T(1) - step.rho) * G;
      apply((V - A.square()).sqrt() + step.epsilon);
    } else {
      apply(V.sqrt() + step.epsilon);
    }
  }

  void adagrad_update(const AdagradStep<T>& step, T* p, T* g, T* s, index_t n) const override {
    auto P = array(p, n);
    auto G = array(g, n);
    auto S = array(s, n);
    S += G.square();
    P -= step.rate * G / (S.sqrt() + step.epsilon);
  }

  /// Adam's block: a space that cuts a buffer into chunks of multiples of it runs the same
  /// blocks, hence the same bits.
  static constexpr index_t adam_block = 2048;

 private:
  static Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> array(T* data, index_t n) {
    return {data, n};
  }
};

}  // namespace detail

/// The host's kernels, one instance per T for the whole program (they hold no state): what every
/// layer uses until Sequential hands it a space's.
template <class T>
const NetworkKernels<T>& host_network_kernels() {
  static const detail::HostNetworkKernels<T> kernels;
  return kernels;
}

/// The kernels of a compute space (`::type`, a NetworkKernels<T>), specialised by nn/space.hpp for
/// Thrust's systems; Sequential asks for it when its Space is not space::host.
template <class T, class Space>
struct space_network_kernels {
  static_assert(sizeof(Space) == 0,
                "nn::Sequential<T, Exec, Space>: include <onelearn/nn/space.hpp> for a network in "
                "a Thrust compute space (it has the layers' kernels for Thrust's systems)");
};

}  // namespace onelearn::nn
