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
#include <utility>
#include <vector>

#include "onelearn/core/detail/parallel.hpp"
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

/// The optimizers' updates of a buffer (or of a chunk of one) on the calling thread: whole-range
/// Eigen array expressions, vectorised. The host's kernels and the CPU spaces run them on chunks.
template <class T>
struct SerialUpdates {
  /// Adam's block: chunks of multiples of it run the same blocks, hence the same bits.
  static constexpr index_t adam_block = 2048;


  static void sgd(const SgdStep<T>& step, T* p, T* g, T* velocity, index_t n) {
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

  static void adam(const AdamStep<T>& step, T* p, T* g, T* m, T* v, index_t n) {
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

  static void rmsprop(const RmspropStep<T>& step, T* p, T* g, T* v, T* b, T* a, index_t n) {
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

  static void adagrad(const AdagradStep<T>& step, T* p, T* g, T* s, index_t n) {
    auto P = array(p, n);
    auto G = array(g, n);
    auto S = array(s, n);
    S += G.square();
    P -= step.rate * G / (S.sqrt() + step.epsilon);
  }

  static Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> array(T* data, index_t n) {
    return {data, n};
  }
};

/// Values per chunk of an optimizer's update: a multiple of Adam's block (so the same blocks,
/// hence the same bits as one pass), at least 8 of them, at most 4 chunks.
inline index_t update_grain(index_t n) {
  constexpr index_t block = SerialUpdates<double>::adam_block;
  const index_t quarter = onelearn::detail::chunk_count(n, 4);
  return std::max<index_t>(8 * block, onelearn::detail::chunk_count(quarter, block) * block);
}

/// The losses over a batch (or a chunk of its rows) on the calling thread: one pass in order, the
/// terms summed in double.
template <class T>
struct SerialLosses {
  static double elementwise(ElementwiseLoss kind, T delta, const T* output, const T* target,
                            T* grad, T grad_scale, index_t n) {
    double total = 0;
    for (index_t i = 0; i < n; ++i) {
      total += static_cast<double>(elementwise_term(kind, delta, output[i], target[i]));
      if (grad != nullptr) {
        grad[i] = elementwise_derivative(kind, delta, output[i], target[i]) * grad_scale;
      }
    }
    return total;
  }

  static double sparse_categorical(bool from_logits, const T* output, const std::int64_t* labels,
                                   T* grad, T grad_scale, index_t rows, index_t classes) {
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

  static double binary(bool from_logits, const T* output, const T* target, T* grad, T grad_scale,
                       index_t n) {
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
};

/// Rows of a batch (or of a layer's kernel) per chunk of a dense product: at most 4 chunks, of at
/// least 32 rows, a multiple of 16 (so an activation's chunks start where a whole-tensor pass's
/// vectors do: the same bits); fixed by the size alone, never by the thread count.
inline index_t row_grain(index_t n) {
  const index_t grain = std::max<index_t>(32, onelearn::detail::chunk_count(n, 4));
  return onelearn::detail::chunk_count(grain, 16) * 16;
}

/// Values (or rows) per chunk of a loss: at most 4 chunks, of at least `least`.
inline index_t loss_grain(index_t n, index_t least) {
  return std::max<index_t>(least, onelearn::detail::chunk_count(n, 4));
}

/// A tensor's rows [begin, end) along its last axis, as a tensor of its own.
template <class U>
TensorView<U> row_block(TensorView<U> x, index_t begin, index_t end) {
  const index_t width = x.shape.rank() > 0 ? x.shape.back() : 1;
  return {x.data + begin * width, Shape{end - begin, width}};
}

/// The rows along the last axis of a tensor.
template <class T>
index_t last_axis_rows(TensorView<const T> x) {
  const index_t width = x.shape.rank() > 0 ? x.shape.back() : 1;
  return width == 0 ? 0 : x.size() / width;
}

/// The kernels of the CPU: each cuts its work into chunks and `Chunks` runs them (host_chunks:
/// OpenMP's threads; the CPU Thrust systems their own, nn/space.hpp), each chunk the serial code
/// on its thread:
/// - Dense's forward product and input gradient by rows of the batch, its kernel's gradient xᵀ dz
///   by rows of the kernel (columns of x): every entry is one chunk's dot product, no partial
///   sums to add, Eigen's GEMM kernel on one thread (nn/detail/gemm.hpp's serial entry, with its
///   persistent packing buffers), where the host ran Eigen's own OpenMP-parallel GEMM before:
///   on this project's two cores an epoch of the mlp workload on two threads took 0.262-0.268 s
///   against 0.278-0.297 s (onelearn-space-bench mlp_fit; onelearn-bench's mlp, the better of one
///   and two threads, did not move beyond its noise);
/// - the activations and losses on chunks of rows (a loss's chunk totals added in chunk order),
///   the optimizers' updates on chunks of a buffer (whole blocks of Adam's).
/// The chunks depend on the sizes only, so the bits do not depend on the thread count or on which
/// threads run the chunks: the host, thrust_omp and thrust_tbb train the same network.
template <class T, class Chunks>
class ChunkedKernels {
 public:
  explicit ChunkedKernels(Chunks chunks = {}) : chunks_(std::move(chunks)) {}

  void dense_forward(const T* x, const T* W, const T* b, T* z, DenseSizes n) const {
    chunks_(n.rows, product_grain(n.rows), [&](index_t, index_t begin, index_t end) {
      const index_t m = end - begin;
      // z = b (or 0), then z += x W in the GEMM: no separate pass for the bias.
      Eigen::Map<Matrix<T>> Z(z + begin * n.units, m, n.units);
      if (b != nullptr) {
        Z.rowwise() = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>(b, n.units);
      } else {
        Z.setZero();
      }
      product({x + begin * n.in, m, n.in}, {W, n.in, n.units}, Z.data(),
                                n.units);
    });
  }

  void dense_parameter_gradients(const T* x, const T* dz, const T* W, T two_l2, T* dW, T* db,
                                 DenseSizes n) const {
    // Rows [begin, end) of dW = two_l2 W (or 0), then += columns [begin, end) of x, transposed,
    // times dz.
    chunks_(n.in, product_grain(n.in), [&](index_t, index_t begin, index_t end) {
      const index_t m = end - begin;
      Eigen::Map<Matrix<T>> block(dW + begin * n.units, m, n.units);
      if (two_l2 != T(0)) {
        block = two_l2 * Eigen::Map<const Matrix<T>>(W + begin * n.units, m, n.units);
      } else {
        block.setZero();
      }
      product({x + begin, n.rows, m, true, n.in}, {dz, n.rows, n.units},
                                block.data(), n.units);
    });
    if (db != nullptr) {  // a rows x units column sum: the calling thread
      Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>(db, n.units).noalias() =
          Eigen::Map<const Matrix<T>>(dz, n.rows, n.units).colwise().sum();
    }
  }

  void dense_input_gradient(const T* dz, const T* W, T* dx, DenseSizes n) const {
    chunks_(n.rows, product_grain(n.rows), [&](index_t, index_t begin, index_t end) {
      const index_t m = end - begin;
      T* dxc = dx + begin * n.in;
      std::fill_n(dxc, m * n.in, T(0));
      product({dz + begin * n.units, m, n.units}, {W, n.in, n.units, true},
                                dxc, n.in);
    });
  }

  void activation_forward(Activation kind, T alpha, TensorView<const T> x, TensorView<T> y) const {
    const index_t rows = last_axis_rows(x);
    chunks_(rows, row_grain(rows), [&](index_t, index_t begin, index_t end) {
      detail::activation_forward<T>(kind, alpha, row_block(x, begin, end), row_block(y, begin, end));
    });
  }

  void activation_backward(Activation kind, T alpha, TensorView<const T> x, TensorView<const T> y,
                           TensorView<const T> dy, TensorView<T> dx) const {
    const index_t rows = last_axis_rows(dy);
    chunks_(rows, row_grain(rows), [&](index_t, index_t begin, index_t end) {
      detail::activation_backward<T>(kind, alpha, row_block(x, begin, end),
                                     row_block(y, begin, end), row_block(dy, begin, end),
                                     row_block(dx, begin, end));
    });
  }

  double elementwise_loss(ElementwiseLoss kind, T delta, const T* output, const T* target,
                          T* grad, T grad_scale, index_t n) const {
    return chunked_total(n, loss_grain(n, 16384), [&](index_t begin, index_t end) {
      return SerialLosses<T>::elementwise(kind, delta, output + begin, target + begin,
                                          at(grad, begin), grad_scale, end - begin);
    });
  }

  double sparse_categorical_loss(bool from_logits, const T* output, const std::int64_t* labels,
                                 T* grad, T grad_scale, index_t rows, index_t classes) const {
    return chunked_total(rows, loss_grain(rows, 1024), [&](index_t begin, index_t end) {
      return SerialLosses<T>::sparse_categorical(from_logits, output + begin * classes,
                                                 labels + begin, at(grad, begin * classes),
                                                 grad_scale, end - begin, classes);
    });
  }

  double binary_loss(bool from_logits, const T* output, const T* target, T* grad, T grad_scale,
                     index_t n) const {
    return chunked_total(n, loss_grain(n, 16384), [&](index_t begin, index_t end) {
      return SerialLosses<T>::binary(from_logits, output + begin, target + begin, at(grad, begin),
                                     grad_scale, end - begin);
    });
  }

  void sgd_update(const SgdStep<T>& step, T* p, T* g, T* velocity, index_t n) const {
    chunks_(n, update_grain(n), [&](index_t, index_t b, index_t e) {
      SerialUpdates<T>::sgd(step, p + b, g + b, at(velocity, b), e - b);
    });
  }
  void adam_update(const AdamStep<T>& step, T* p, T* g, T* m, T* v, index_t n) const {
    chunks_(n, update_grain(n), [&](index_t, index_t b, index_t e) {
      SerialUpdates<T>::adam(step, p + b, g + b, m + b, v + b, e - b);
    });
  }
  void rmsprop_update(const RmspropStep<T>& step, T* p, T* g, T* v, T* b, T* a, index_t n) const {
    chunks_(n, update_grain(n), [&](index_t, index_t lo, index_t hi) {
      SerialUpdates<T>::rmsprop(step, p + lo, g + lo, v + lo, at(b, lo), at(a, lo), hi - lo);
    });
  }
  void adagrad_update(const AdagradStep<T>& step, T* p, T* g, T* s, index_t n) const {
    chunks_(n, update_grain(n), [&](index_t, index_t b, index_t e) {
      SerialUpdates<T>::adagrad(step, p + b, g + b, s + b, e - b);
    });
  }

 private:
  // With ONELEARN_USE_BLAS (onelearn::blas) a product goes to CBLAS whole, as gemm_accumulate
  // sends it: the library threads it itself. Otherwise chunks of Eigen's one-thread GEMM.
#if defined(ONELEARN_USE_BLAS)
  static index_t product_grain(index_t n) { return std::max<index_t>(n, 1); }
  static void product(const GemmOperand<T>& a, const GemmOperand<T>& b, T* c, index_t stride) {
    gemm_accumulate<T>(a, b, c, stride);
  }
#else
  static index_t product_grain(index_t n) { return row_grain(n); }
  static void product(const GemmOperand<T>& a, const GemmOperand<T>& b, T* c, index_t stride) {
    gemm_accumulate_serial<T>(a, b, c, stride);
  }
#endif

  /// The sum of chunk(begin, end)'s totals over the chunks of [0, n), in chunk order.
  template <class Chunk>
  [[nodiscard]] double chunked_total(index_t n, index_t grain, const Chunk& chunk) const {
    const index_t count = onelearn::detail::chunk_count(n, grain);
    if (count <= 1) return n > 0 ? chunk(index_t{0}, n) : 0.0;
    std::vector<double> totals(static_cast<std::size_t>(count));
    chunks_(n, grain, [&](index_t c, index_t begin, index_t end) {
      totals[static_cast<std::size_t>(c)] = chunk(begin, end);
    });
    double total = 0;
    for (const double t : totals) total += t;
    return total;
  }
  /// p + offset, or null for a buffer the caller does not have.
  template <class U>
  static U* at(U* p, index_t offset) {
    return p != nullptr ? p + offset : nullptr;
  }

  Chunks chunks_;
};

/// The host's kernels: the CPU's chunked kernels with OpenMP's threads running the chunks.
template <class T>
class HostNetworkKernels final : public NetworkKernels<T> {
 public:
  [[nodiscard]] std::string_view space_name() const override { return "host"; }

  void dense_forward(const T* x, const T* W, const T* b, T* z, DenseSizes n) const override {
    cpu_.dense_forward(x, W, b, z, n);
  }
  void dense_parameter_gradients(const T* x, const T* dz, const T* W, T two_l2, T* dW, T* db,
                                 DenseSizes n) const override {
    cpu_.dense_parameter_gradients(x, dz, W, two_l2, dW, db, n);
  }
  void dense_input_gradient(const T* dz, const T* W, T* dx, DenseSizes n) const override {
    cpu_.dense_input_gradient(dz, W, dx, n);
  }
  void activation_forward(Activation kind, T alpha, TensorView<const T> x,
                          TensorView<T> y) const override {
    cpu_.activation_forward(kind, alpha, x, y);
  }
  void activation_backward(Activation kind, T alpha, TensorView<const T> x, TensorView<const T> y,
                           TensorView<const T> dy, TensorView<T> dx) const override {
    cpu_.activation_backward(kind, alpha, x, y, dy, dx);
  }
  double elementwise_loss(ElementwiseLoss kind, T delta, const T* output, const T* target,
                          T* grad, T grad_scale, index_t n) const override {
    return cpu_.elementwise_loss(kind, delta, output, target, grad, grad_scale, n);
  }
  double sparse_categorical_loss(bool from_logits, const T* output, const std::int64_t* labels,
                                 T* grad, T grad_scale, index_t rows,
                                 index_t classes) const override {
    return cpu_.sparse_categorical_loss(from_logits, output, labels, grad, grad_scale, rows,
                                        classes);
  }
  double binary_loss(bool from_logits, const T* output, const T* target, T* grad, T grad_scale,
                     index_t n) const override {
    return cpu_.binary_loss(from_logits, output, target, grad, grad_scale, n);
  }
  void sgd_update(const SgdStep<T>& step, T* p, T* g, T* velocity, index_t n) const override {
    cpu_.sgd_update(step, p, g, velocity, n);
  }
  void adam_update(const AdamStep<T>& step, T* p, T* g, T* m, T* v, index_t n) const override {
    cpu_.adam_update(step, p, g, m, v, n);
  }
  void rmsprop_update(const RmspropStep<T>& step, T* p, T* g, T* v, T* b, T* a,
                      index_t n) const override {
    cpu_.rmsprop_update(step, p, g, v, b, a, n);
  }
  void adagrad_update(const AdagradStep<T>& step, T* p, T* g, T* s, index_t n) const override {
    cpu_.adagrad_update(step, p, g, s, n);
  }

 private:
  ChunkedKernels<T, onelearn::detail::host_chunks> cpu_;
};

}  // namespace detail

/// The host's kernels, one instance per T for the whole program (they hold no state): what every
/// layer uses until Sequential hands it a space's.
template <class T>
const NetworkKernels<T>& host_network_kernels() {
  static const detail::HostNetworkKernels<T> kernels;
  return kernels;
}

/// The kernels of a compute space (its member type `type`, a NetworkKernels<T>), specialised by
/// nn/space.hpp for Thrust's systems; Sequential asks for it when its Space is not space::host.
template <class T, class Space>
struct space_network_kernels {
  static_assert(sizeof(Space) == 0,
                "nn::Sequential<T, Exec, Space>: include <onelearn/nn/space.hpp> for a network in "
                "a Thrust compute space (it has the layers' kernels for Thrust's systems)");
};

}  // namespace onelearn::nn
