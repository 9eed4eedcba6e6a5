#pragma once
// Squared Euclidean distance kernels: the seam that k-means, nearest neighbours and any other
// distance-based estimator compute through (heavy kernels sit behind
// a small seam a Thrust backend can replace). Algorithms call these, not raw loops over Eigen.
//
// Distances between sets of rows use the expansion ||x - y||^2 = ||x||^2 - 2 x.y + ||y||^2, so the
// work is one matrix product (GEMM) per block of rows. The expansion loses accuracy for points
// much closer to each other than to the origin (centre the data first, as k-means does), and can
// round below zero, so it is clamped at 0. Where an exact distance between one row and one
// other row is wanted (inertia, the farthest point), paired_squared_distances subtracts first.
//
// Rows are processed in blocks of block_rows, so a kernel's scratch memory is
// block_rows x (rows of Y) whatever the number of rows of X, and the blocks run on threads
// (core/detail/parallel.hpp), each writing only its own rows of the result.

#include <algorithm>
#include <cstdint>

#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::detail {

/// Rows per block in the blocked kernels: large enough for an efficient GEMM, small enough that
/// the block of distances stays in cache for the usual number of centres or neighbours.
inline constexpr index_t block_rows = 512;

/// ||x_i||^2 for each row x_i of X, in T.
template <class T>
Vector<T> row_squared_norms(const MatrixRef<T>& X) {
  return X.rowwise().squaredNorm();
}

/// D(i, j) = ||x_i - y_j||^2 for the rows of X and Y, by the expansion (one GEMM), clamped at 0.
/// `x_norms` and `y_norms` are the rows' squared norms (row_squared_norms), passed in so callers
/// that reuse them do not recompute them. Computed in T: cast to double first for float64
/// accuracy on float data.
template <class T>
Matrix<T> pairwise_squared_distances(const MatrixRef<T>& X, const MatrixRef<T>& Y,
                                     const Vector<T>& x_norms, const Vector<T>& y_norms) {
  Matrix<T> D(X.rows(), Y.rows());
  D.noalias() = T(-2) * (X * Y.transpose());
  D.colwise() += x_norms;
  D.rowwise() += y_norms.transpose();
  return D.cwiseMax(T(0));
}

template <class T>
Matrix<T> pairwise_squared_distances(const MatrixRef<T>& X, const MatrixRef<T>& Y) {
  return pairwise_squared_distances<T>(X, Y, row_squared_norms<T>(X), row_squared_norms<T>(Y));
}

/// For each row x_i of X, the index of the nearest row of Y (the first one on ties), written to
/// nearest(i). Only ||y_j||^2 - 2 x_i.y_j is formed: ||x_i||^2 does not change which y_j is
/// nearest (scikit-learn's k-means assignment does the same). `y_norms` = row_squared_norms(Y).
template <class T>
void nearest_rows(const MatrixRef<T>& X, const MatrixRef<T>& Y, const Vector<T>& y_norms,
                  Eigen::Ref<Labels> nearest) {
  const index_t k = Y.rows();
  for_each_chunk(X.rows(), block_rows, [&](index_t, index_t begin, index_t end) {
    const Matrix<T> products = X.middleRows(begin, end - begin) * Y.transpose();
    for (index_t i = 0; i < end - begin; ++i) {
      index_t best = 0;
      T best_value = y_norms(0) - T(2) * products(i, 0);
      for (index_t j = 1; j < k; ++j) {
        const T value = y_norms(j) - T(2) * products(i, j);
        if (value < best_value) {
          best_value = value;
          best = j;
        }
      }
      nearest(begin + i) = static_cast<std::int64_t>(best);
    }
  });
}

/// d_i = ||x_i - y_{index(i)}||^2, computed by subtracting first (no cancellation) and in double
/// whatever T is: for inertia and for finding the points farthest from their centre. `chunks`
/// runs the row chunks (host_chunks: for_each_chunk).
template <class T, class Chunks = host_chunks>
Vector<double> paired_squared_distances(const MatrixRef<T>& X, const MatrixRef<T>& Y,
                                        const Eigen::Ref<const Labels>& index,
                                        const Chunks& chunks = {}) {
  Vector<double> d(X.rows());
  chunks(X.rows(), block_rows, [&](index_t, index_t begin, index_t end) {
    for (index_t i = begin; i < end; ++i) {
      d(i) = (X.row(i).template cast<double>() - Y.row(index(i)).template cast<double>())
                 .squaredNorm();
    }
  });
  return d;
}

}  // namespace onelearn::detail
