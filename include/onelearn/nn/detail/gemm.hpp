#pragma once
// The matrix product of the networks' layers: C = A B + C for row-major (or transposed
// row-major) operands, through Eigen's GEMM kernel (gebp) with packing buffers that persist.
//
// Why not `C.noalias() = A * B`: for each product Eigen allocates its packing buffers (hundreds
// of KiB for the mlp benchmark's layers) and frees them afterwards; glibc returns such blocks to
// the system and page-faults them back in at the next product. On the benchmark machine that
// was a third of the training time. Here the same kernel runs with a thread-local workspace that
// only grows, so steady-state training allocates nothing, and the bias (or the L2 term) is
// written into C first so the GEMM adds onto it instead of a separate pass.
//
// This uses Eigen 3.4's internal GEMM entry point (general_matrix_matrix_product::run with a
// level3_blocking). With ONELEARN_USE_BLAS defined (link the CMake target onelearn::blas) the
// product goes to the CBLAS sgemm/dgemm instead (OpenBLAS on Debian), which picks the machine's
// widest kernels at run time; bench/ measures which is faster where (ONELEARN_BENCH_BLAS). When Eigen runs multi-threaded (OpenMP, Eigen::nbThreads() > 1) a large
// product goes through Eigen's own parallel path instead; a small one (a convolution's
// per-sample product, a narrow layer) stays on one thread, where waking a thread team would
// cost more than the product (measured: bench/README.md's cnn workload ran 50x slower on two
// threads on a busy two-core machine).

#include <Eigen/Core>

#include <climits>
#include <type_traits>

#if defined(ONELEARN_USE_BLAS)
#include <cblas.h>
#endif

#include "onelearn/core/types.hpp"
#include "onelearn/nn/tensor.hpp"

namespace onelearn::nn::detail {

/// A row-major matrix view, possibly to be used transposed.
template <class T>
struct GemmOperand {
  const T* data;
  index_t rows, cols;  ///< of the stored (row-major) matrix, before any transposition
  bool transposed = false;
  /// Elements from one stored row to the next; 0 means cols (compact). A block of columns of a
  /// wider matrix has its parent's stride (the compute spaces' kernels split a product by it).
  index_t stride = 0;

  [[nodiscard]] index_t op_rows() const noexcept { return transposed ? cols : rows; }
  [[nodiscard]] index_t op_cols() const noexcept { return transposed ? rows : cols; }
  [[nodiscard]] index_t row_stride() const noexcept { return stride > 0 ? stride : cols; }
};

template <class T>
GemmOperand<T> plain(const Eigen::Map<const Matrix<T>>& m) {
  return {m.data(), m.rows(), m.cols(), false};
}
template <class T>
GemmOperand<T> transposed(const Eigen::Map<const Matrix<T>>& m) {
  return {m.data(), m.rows(), m.cols(), true};
}

template <class T>
class GemmWorkspace : public Eigen::internal::level3_blocking<T, T> {
 public:
  /// Blocking sizes for a row-major (rows x cols) result of depth `depth`, with buffers.
  void prepare(index_t rows, index_t cols, index_t depth) {
    // Eigen computes a row-major product as the column-major product of the transposes, so
    // its "m" is our cols and its "n" our rows (as gemm_blocking_space<RowMajor> does).
    index_t kc = depth, mc = cols, nc = rows;
    Eigen::internal::computeProductBlockingSizes<T, T, 1>(kc, mc, nc, index_t{1});
    this->m_kc = kc;
    this->m_mc = mc;
    this->m_nc = nc;
    const auto size_a = static_cast<std::size_t>(kc * mc);
    const auto size_b = static_cast<std::size_t>(kc * nc);
    if (a_.size() < size_a) a_.resize(size_a);
    if (b_.size() < size_b) b_.resize(size_b);
    this->m_blockA = a_.data();
    this->m_blockB = b_.data();
  }

 private:
  AlignedVector<T> a_, b_;
};

template <class T>
void gemm_accumulate_serial(const GemmOperand<T>& a, const GemmOperand<T>& b, T* c,
                            index_t c_stride);

/// C += op(A) op(B), C row-major (rows x cols) with row stride c_stride.
template <class T>
void gemm_accumulate(const GemmOperand<T>& a, const GemmOperand<T>& b, T* c, index_t c_stride) {
  const index_t rows = a.op_rows(), cols = b.op_cols(), depth = a.op_cols();
  if (rows == 0 || cols == 0 || depth == 0) return;
#if defined(ONELEARN_USE_BLAS)
  // CBLAS takes int sizes; a layer's product is far below INT_MAX in every dimension. A stored
  // row-major matrix has leading dimension cols whether or not it is used transposed.
  if (rows <= INT_MAX && cols <= INT_MAX && depth <= INT_MAX && c_stride <= INT_MAX &&
      a.row_stride() <= INT_MAX && b.row_stride() <= INT_MAX) {
    const auto op_a = a.transposed ? CblasTrans : CblasNoTrans;
    const auto op_b = b.transposed ? CblasTrans : CblasNoTrans;
    const auto m = static_cast<int>(rows), n = static_cast<int>(cols), k = static_cast<int>(depth);
    if constexpr (std::is_same_v<T, float>) {
      cblas_sgemm(CblasRowMajor, op_a, op_b, m, n, k, 1.0f, a.data, static_cast<int>(a.row_stride()),
                  b.data, static_cast<int>(b.row_stride()), 1.0f, c, static_cast<int>(c_stride));
      return;
    } else if constexpr (std::is_same_v<T, double>) {
      cblas_dgemm(CblasRowMajor, op_a, op_b, m, n, k, 1.0, a.data, static_cast<int>(a.row_stride()),
                  b.data, static_cast<int>(b.row_stride()), 1.0, c, static_cast<int>(c_stride));
      return;
    }
  }
#endif
  // Multiply-adds below which a product is not worth splitting over threads.
  constexpr double parallel_threshold = 1 << 22;
  if (Eigen::nbThreads() > 1 &&
      static_cast<double>(rows) * static_cast<double>(cols) * static_cast<double>(depth) >=
          parallel_threshold) {
    // Eigen's parallel GEMM (OpenMP) with its own buffers.
    Eigen::Map<Matrix<T>, 0, Eigen::OuterStride<>> C(c, rows, cols, Eigen::OuterStride<>(c_stride));
    using Strided = Eigen::Map<const Matrix<T>, 0, Eigen::OuterStride<>>;
    const Strided A(a.data, a.rows, a.cols, Eigen::OuterStride<>(a.row_stride()));
    const Strided B(b.data, b.rows, b.cols, Eigen::OuterStride<>(b.row_stride()));
    if (!a.transposed && !b.transposed) C.noalias() += A * B;
    if (a.transposed && !b.transposed) C.noalias() += A.transpose() * B;
    if (!a.transposed && b.transposed) C.noalias() += A * B.transpose();
    if (a.transposed && b.transposed) C.noalias() += A.transpose() * B.transpose();
    return;
  }
  gemm_accumulate_serial(a, b, c, c_stride);
}

/// C += op(A) op(B) on the calling thread, whatever the product's size: for work items that run
/// on threads of their own (the compute spaces' kernels, nn/space.hpp).
template <class T>
void gemm_accumulate_serial(const GemmOperand<T>& a, const GemmOperand<T>& b, T* c,
                            index_t c_stride) {
  const index_t rows = a.op_rows(), cols = b.op_cols(), depth = a.op_cols();
  if (rows == 0 || cols == 0 || depth == 0) return;
  thread_local GemmWorkspace<T> workspace;
  workspace.prepare(rows, cols, depth);
  using Eigen::ColMajor;
  using Eigen::RowMajor;
  // A transposed row-major matrix is a column-major one with the same pointer and stride.
  const index_t a_stride = a.row_stride(), b_stride = b.row_stride();
  if (!a.transposed && !b.transposed) {
    Eigen::internal::general_matrix_matrix_product<index_t, T, RowMajor, false, T, RowMajor, false,
                                                   RowMajor, 1>::run(rows, cols, depth, a.data,
                                                                     a_stride, b.data, b_stride, c,
                                                                     1, c_stride, T(1), workspace);
  } else if (a.transposed && !b.transposed) {
    Eigen::internal::general_matrix_matrix_product<index_t, T, ColMajor, false, T, RowMajor, false,
                                                   RowMajor, 1>::run(rows, cols, depth, a.data,
                                                                     a_stride, b.data, b_stride, c,
                                                                     1, c_stride, T(1), workspace);
  } else if (!a.transposed && b.transposed) {
    Eigen::internal::general_matrix_matrix_product<index_t, T, RowMajor, false, T, ColMajor, false,
                                                   RowMajor, 1>::run(rows, cols, depth, a.data,
                                                                     a_stride, b.data, b_stride, c,
                                                                     1, c_stride, T(1), workspace);
  } else {
    Eigen::internal::general_matrix_matrix_product<index_t, T, ColMajor, false, T, ColMajor, false,
                                                   RowMajor, 1>::run(rows, cols, depth, a.data,
                                                                     a_stride, b.data, b_stride, c,
                                                                     1, c_stride, T(1), workspace);
  }
}

}  // namespace onelearn::nn::detail
