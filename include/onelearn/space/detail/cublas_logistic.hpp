#pragma once
// The logistic loss and gradient on CUDA with cuBLAS, for double rows: the scores of every row
// by one GEMM, Z = X C^T (cublasDgemm), the loss terms and residuals row by row on the device
// (logistic_residuals, as every other form), then the gradient by a second GEMM, G = R^T X, the
// intercepts' by a GEMV (R^T 1) and the loss by a dot product with ones. Private: space/space.hpp
// includes it under nvcc unless ONELEARN_NO_CUBLAS is defined (then the Thrust form of
// logistic_loss_gradient_as runs, which also stays callable as the reference).
//
// Why: the Thrust form reads each row once per class in a work item per row, then sums by lanes
// into partials; the GEMMs read X once each at the device's bandwidth, and an L-BFGS fit asks
// for about 100 evaluations. Float rows keep the Thrust form: it converts each value to double
// before multiplying, as the host does, where SGEMM would multiply in float.
//
// Layouts: row-major X (n x p, row stride s) is, to column-major cuBLAS, X^T (p x n, leading
// dimension s); the row-major k x q coefficients are C^T (q x k, leading dimension q); the
// row-major n x k scores are Z^T (k x n, leading dimension k), the layout logistic_residuals
// reads a row from; and the row-major k x q gradient is G^T (q x k, leading dimension q).

#include <climits>

#include <cublas_v2.h>

#include "onelearn/space/detail/cublas_handle.hpp"
#include "onelearn/space/detail/thrust_kernels.hpp"

namespace onelearn::space::detail {

/// Row i's scores Z[i * k + c] (from the GEMM) plus the intercepts, then its loss term into
/// loss[i] and its residuals over its scores.
struct logistic_scores_kernel {
  vector_view<const index_t> class_of;
  vector_view<const double> w;
  const double* params;  // k x q, the intercepts in column p
  index_t k;
  index_t p;
  bool binary;
  bool fit_intercept;
  double* loss;
  double* Z;
  __host__ __device__ void operator()(index_t i) const {
    double* z = Z + i * k;
    if (fit_intercept) {
      const index_t q = p + 1;
      for (index_t c = 0; c < k; ++c) z[c] += params[c * q + p];
    }
    loss[i] = logistic_residuals(z, k, class_of[i], weight_of(w, i), binary);
  }
};

struct fill_kernel {
  double* values;
  double value;
  __host__ __device__ void operator()(index_t i) const { values[i] = value; }
};

/// Whether the cuBLAS form takes these sizes (its dimensions are ints).
inline bool fits_cublas(index_t n, index_t p, index_t k, index_t stride) {
  const index_t most = INT_MAX;
  return n <= most && p <= most && stride <= most && k <= most && n <= most / (k > 0 ? k : 1);
}

inline double logistic_by_cublas(const thrust_space<system::cuda>& s, matrix_view<const double> X,
                                  vector_view<const index_t> class_of,
                                  vector_view<const double> weights, bool binary,
                                  bool fit_intercept, const MatrixRef<double>& params,
                                  Eigen::Ref<Matrix<double>> grad) {
  using S = thrust_space<system::cuda>;
  S::prepare();
  const index_t n = X.rows;
  const index_t p = X.cols;
  const index_t k = params.rows();
  const index_t q = params.cols();
  grad.setZero();
  if (n == 0 || k == 0) return 0.0;
  const auto coef = small_matrix<system::cuda, double>(s, params);
  // Written whole before they are read: the scores by the first GEMM (zeros without features),
  // the loss terms by the row kernel, the gradient by the second GEMM and the GEMV.
  auto scores = s.allocate_scratch<double>(static_cast<std::size_t>(n * k));
  auto loss = s.allocate_scratch<double>(static_cast<std::size_t>(n));
  auto ones = s.allocate_scratch<double>(static_cast<std::size_t>(n));
  auto gradient = s.allocate_scratch<double>(static_cast<std::size_t>(k * q));
  for_each_index(s, n, fill_kernel{S::data(ones), 1.0});
  if (p == 0) for_each_index(s, n * k, fill_kernel{S::data(scores), 0.0});
  cublasHandle_t handle = cublas_for_this_thread();
  const double one = 1.0;
  const double zero = 0.0;
  const int ldx = static_cast<int>(X.stride > 1 ? X.stride : 1);
  if (p > 0) {
    // Z^T (k x n) = (C^T)^T (k x p) X^T (p x n): the intercept column of C is not read.
    check_cublas(cublasDgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(k),
                             static_cast<int>(n), static_cast<int>(p), &one, S::data(coef),
                             static_cast<int>(q), X.data, ldx, &zero, S::data(scores),
                             static_cast<int>(k)),
                 "cublasDgemm (the scores)");
  }
  for_each_index(s, n,
                 logistic_scores_kernel{class_of, weights, S::data(coef), k, p, binary,
                                        fit_intercept, S::data(loss), S::data(scores)});
  if (p > 0) {
    // G^T's first p rows (p x k) = X^T (p x n) (Z^T)^T (n x k).
    check_cublas(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, static_cast<int>(p),
                             static_cast<int>(k), static_cast<int>(n), &one, X.data, ldx,
                             S::data(scores), static_cast<int>(k), &zero, S::data(gradient),
                             static_cast<int>(q)),
                 "cublasDgemm (the gradient)");
  }
  if (fit_intercept) {
    // Row p of G^T (stride q): Z^T (k x n) times ones.
    check_cublas(cublasDgemv(handle, CUBLAS_OP_N, static_cast<int>(k), static_cast<int>(n), &one,
                             S::data(scores), static_cast<int>(k), S::data(ones), 1, &zero,
                             S::data(gradient) + p, static_cast<int>(q)),
                 "cublasDgemv (the intercepts)");
  }
  double total_loss = 0;
  check_cublas(cublasDdot(handle, static_cast<int>(n), S::data(loss), 1, S::data(ones), 1,
                          &total_loss),
               "cublasDdot (the loss)");
  Matrix<double> on_host(k, q);
  s.copy_to_host(S::data(gradient), static_cast<std::size_t>(k * q), on_host.data());
  grad = on_host;
  return total_loss;
}

}  // namespace onelearn::space::detail
