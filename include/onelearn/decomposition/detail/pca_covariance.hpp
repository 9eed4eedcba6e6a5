#pragma once
// The kernels of PCA by the covariance matrix (tall data: many more rows than features):
//   centered_gram        (X - mean)^T (X - mean), p x p, accumulated in double over row blocks
//                        (chunks of blocks on threads, core/detail/parallel.hpp);
//   symmetric_eigen_descending   eigenpairs of a symmetric matrix, largest first;
//   max_abs_scores       per component, the entry of largest magnitude of (X - mean) v_j and
//                        its sign: what scikit-learn's svd_flip looks at (in U = Xc V / s).
// The eigensolver runs in double whatever T is, so it is compiled once (an Eigen decomposition
// costs seconds of compile time per scalar type) and float data loses nothing to it.

#include <algorithm>
#include <cmath>

#include <Eigen/Eigenvalues>

#include "onelearn/core/detail/distances.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::detail {

/// (X - mean)^T (X - mean) over the local rows, in double, lower and upper triangles filled.
template <class T>
Eigen::MatrixXd centered_gram(const MatrixRef<T>& X, const Vector<double>& mean) {
  const index_t p = X.cols();
  const Eigen::MatrixXd gram = sum_over_chunks(
      X.rows(), block_rows, Eigen::MatrixXd::Zero(p, p).eval(),
      [&](index_t begin, index_t end, Eigen::MatrixXd& partial) {
        Matrix<double> block;
        for (index_t first = begin; first < end; first += block_rows) {
          const index_t m = std::min(block_rows, end - first);
          block = X.middleRows(first, m).template cast<double>().rowwise() - mean.transpose();
          partial.selfadjointView<Eigen::Lower>().rankUpdate(block.transpose());
        }
      });
  Eigen::MatrixXd full = gram.selfadjointView<Eigen::Lower>();
  return full;
}

struct SymmetricEigen {
  Vector<double> values;    ///< descending
  Eigen::MatrixXd vectors;  ///< column j belongs to values(j)
};

/// Eigenvalues (largest first) and eigenvectors of the symmetric matrix `A`. A template only so
/// that Eigen's solver is compiled where PCA is fitted, not in every file that includes pca.hpp
/// (4 s of its header check's front end, clang -ftime-trace, 2026-12-08); `Deferred` is never
/// given.
template <class Deferred = void>
SymmetricEigen symmetric_eigen_descending(const Eigen::MatrixXd& A) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(A);  // ascending
  return {solver.eigenvalues().reverse(), solver.eigenvectors().rowwise().reverse()};
}

/// For each column v_j of V: the largest |t_i| over the local rows of t = (X - mean) v_j (the
/// first row on ties) in row (0, j) of the result, and t_i itself (with its sign) in row (1, j).
/// With no local rows, row 0 is -1 (below any magnitude).
template <class T>
Matrix<double> max_abs_scores(const MatrixRef<T>& X, const Vector<double>& mean,
                              const Eigen::MatrixXd& V) {
  const index_t k = V.cols();
  Matrix<double> out(2, k);
  out.row(0).setConstant(-1);
  out.row(1).setZero();
  Matrix<double> scores;
  for (index_t begin = 0; begin < X.rows(); begin += block_rows) {
    const index_t m = std::min(block_rows, X.rows() - begin);
    scores.noalias() =
        (X.middleRows(begin, m).template cast<double>().rowwise() - mean.transpose()) * V;
    for (index_t i = 0; i < m; ++i) {
      for (index_t j = 0; j < k; ++j) {
        if (std::abs(scores(i, j)) > out(0, j)) {
          out(0, j) = std::abs(scores(i, j));
          out(1, j) = scores(i, j);
        }
      }
    }
  }
  return out;
}

}  // namespace onelearn::detail
