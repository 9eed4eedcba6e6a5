#pragma once
// The Gram sums on CUDA with cuBLAS: blocks of rows are centred, weighted and converted to
// double on the device (one Thrust pass each), then G += A^T A (cublasDsyrk, lower triangle),
// x~^T y~ += A^T r (cublasDgemv) and y~^T y~ += r.r (cublasDdot). Private: space/space.hpp
// includes it under nvcc unless ONELEARN_NO_CUBLAS is defined (then gram() is the Thrust
// reduction, gram_by_reduction, which also stays callable as the reference).
//
// Row-major A (rows x p) is, to column-major cuBLAS, M = A^T (p x rows, leading dimension p),
// so G += M M^T is syrk with CUBLAS_OP_N; G is column-major, as Eigen::MatrixXd, so it comes
// back with one copy and its lower triangle is the host kernel's lower triangle.

#include <algorithm>
#include <string>

#include <cublas_v2.h>

#include "onelearn/space/detail/cublas_handle.hpp"
#include "onelearn/space/detail/thrust_kernels.hpp"

namespace onelearn::space::detail {

/// a[(i - begin) * p + j] = (x_ij - mean_j) * root_i and r[i - begin] = (y_i - y_mean) * root_i,
/// root_i = sqrt(w_i * scale) (1 without weights), in double.
template <class T>
struct gram_block_kernel {
  matrix_view<const T> X;
  vector_view<const T> y;
  vector_view<const T> w;
  double weight_scale;
  const double* x_mean;
  double y_mean;
  index_t begin;
  double* a;
  double* r;
  __host__ __device__ void operator()(index_t e) const {
    const index_t p = X.cols;
    const index_t local = e / (p + 1);
    const index_t j = e % (p + 1);
    const index_t i = begin + local;
    const double root = w.empty() ? 1.0 : ::sqrt(static_cast<double>(w[i]) * weight_scale);
    if (j < p) {
      a[local * p + j] = (static_cast<double>(X(i, j)) - x_mean[j]) * root;
    } else {
      r[local] = y.empty() ? 0.0 : (static_cast<double>(y[i]) - y_mean) * root;
    }
  }
};

template <class T>
gram_sums gram_by_cublas(const thrust_space<system::cuda>& s, matrix_view<const T> X,
                         vector_view<const T> y, vector_view<const T> weights, double weight_scale,
                         const Vector<double>& x_mean, double y_mean) {
  using S = thrust_space<system::cuda>;
  S::prepare();
  const index_t n = X.rows;
  const index_t p = X.cols;
  gram_sums out{Eigen::MatrixXd::Zero(p, p), Eigen::VectorXd::Zero(p), 0.0};
  if (n == 0 || p == 0) return out;
  // Blocks of about 64 MiB in double.
  const index_t block = std::min(n, std::max<index_t>((index_t{1} << 23) / p, 64));
  auto a = s.allocate<double>(static_cast<std::size_t>(block * p));
  auto r = s.allocate<double>(static_cast<std::size_t>(block));
  auto g = s.allocate<double>(static_cast<std::size_t>(p * p));
  auto xty = s.allocate<double>(static_cast<std::size_t>(p));
  const auto mean = small_copy(s, x_mean.data(), p);
  cublasHandle_t handle = cublas_for_this_thread();
  const double one = 1.0;
  for (index_t begin = 0; begin < n; begin += block) {
    const index_t rows = std::min(block, n - begin);
    for_each_index(s, rows * (p + 1),
                   gram_block_kernel<T>{X, y, weights, weight_scale, S::data(mean), y_mean, begin,
                                        S::data(a), S::data(r)});
    check_cublas(cublasDsyrk(handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, static_cast<int>(p),
                             static_cast<int>(rows), &one, S::data(a), static_cast<int>(p), &one,
                             S::data(g), static_cast<int>(p)),
                 "cublasDsyrk");
    if (!y.empty()) {
      check_cublas(
          cublasDgemv(handle, CUBLAS_OP_N, static_cast<int>(p), static_cast<int>(rows), &one,
                      S::data(a), static_cast<int>(p), S::data(r), 1, &one, S::data(xty), 1),
          "cublasDgemv");
      double rr = 0;
      check_cublas(
          cublasDdot(handle, static_cast<int>(rows), S::data(r), 1, S::data(r), 1, &rr),
          "cublasDdot");
      out.yty += rr;
    }
  }
  s.copy_to_host(S::data(g), static_cast<std::size_t>(p * p), out.gram.data());
  out.gram.triangularView<Eigen::StrictlyUpper>().setZero();
  s.copy_to_host(S::data(xty), static_cast<std::size_t>(p), out.xty.data());
  return out;
}

}  // namespace onelearn::space::detail
