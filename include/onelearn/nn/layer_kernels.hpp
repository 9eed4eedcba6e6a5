#pragma once
/**
 * \class onelearn::nn::LayerKernels
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
 * nn::LayerKernels<T>: the bulk arithmetic of the networks' dense layers and activations, as one
 * compute space runs it. `Sequential<T, Exec, Space>` hands its space's kernels to every layer
 * (Layer::use_kernels) when the layer is added; Dense and the activation layers call them for
 * their products and element-wise passes, and a custom layer may too. `host_layer_kernels<T>()`
 * is the host's (Eigen's GEMM kernel, vectorised Eigen arrays: what every layer ran before the
 * spaces, and what a layer used alone runs); `nn/space.hpp` has Thrust's.
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
 * - What stays with the host's code in every space: the losses, the optimizers' updates and the
 *   other layers (convolutions, pooling, normalisation, dropout). In a host-accessible space
 *   (the CPU systems) they read the same memory; the space runs the products and activations,
 *   the bulk of a dense network's time.
 */

#include <string_view>

#include "onelearn/core/types.hpp"
#include "onelearn/nn/detail/activation_kernels.hpp"
#include "onelearn/nn/detail/gemm.hpp"
#include "onelearn/nn/tensor.hpp"

namespace onelearn::nn {

/// The sizes of one dense layer's products: a batch of `rows` rows of width `in`, `units`
/// outputs (x: rows x in, W: in x units, z: rows x units).
struct DenseSizes {
  index_t rows = 0;
  index_t in = 0;
  index_t units = 0;
};

template <class T>
class LayerKernels {
 public:
  LayerKernels() = default;
  LayerKernels(const LayerKernels&) = delete;
  LayerKernels& operator=(const LayerKernels&) = delete;
  LayerKernels(LayerKernels&&) = delete;
  LayerKernels& operator=(LayerKernels&&) = delete;
  virtual ~LayerKernels() = default;

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
};

namespace detail {

/// The host's kernels: Eigen's GEMM kernel through nn/detail/gemm.hpp (OpenMP-parallel for large
/// products) and the vectorised activations of nn/detail/activation_kernels.hpp.
template <class T>
class HostLayerKernels final : public LayerKernels<T> {
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
};

}  // namespace detail

/// The host's kernels, one instance per T for the whole program (they hold no state): what every
/// layer uses until Sequential hands it a space's.
template <class T>
const LayerKernels<T>& host_layer_kernels() {
  static const detail::HostLayerKernels<T> kernels;
  return kernels;
}

/// The kernels of a compute space (`::type`, a LayerKernels<T>), specialised by nn/space.hpp for
/// Thrust's systems; Sequential asks for it when its Space is not space::host.
template <class T, class Space>
struct space_layer_kernels {
  static_assert(sizeof(Space) == 0,
                "nn::Sequential<T, Exec, Space>: include <onelearn/nn/space.hpp> for a network in "
                "a Thrust compute space (it has the layers' kernels for Thrust's systems)");
};

}  // namespace onelearn::nn
