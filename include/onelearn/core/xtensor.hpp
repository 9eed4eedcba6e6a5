#pragma once
/**
 * \file
 * \ingroup core
 *
 * xtensor interop: N-d data lives in xt::xtensor (row-major, like Matrix), and the matrix
 * kernels see it through an Eigen::Map over the same buffer, without a copy.
 */

#include <cstddef>

#include <xtensor/xtensor.hpp>

#include "onelearn/core/dataset.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn {

/// A row-major 2-d xtensor as a Matrix, sharing its buffer (valid while the tensor lives).
/// Pass it straight to fit/predict/transform: they take MatrixRef, which binds without a copy.
template <class T>
Eigen::Map<const Matrix<T>> as_matrix(const xt::xtensor<T, 2, xt::layout_type::row_major>& X) {
  return {X.data(), static_cast<index_t>(X.shape()[0]), static_cast<index_t>(X.shape()[1])};
}

template <class T>
Eigen::Map<const Vector<T>> as_vector(const xt::xtensor<T, 1>& y) {
  return {y.data(), static_cast<index_t>(y.shape()[0])};
}

/// A Dataset holding a copy of `X` (of any layout: column-major tensors are reordered).
template <class T, xt::layout_type L>
Dataset<T> from_xtensor(const xt::xtensor<T, 2, L>& X) {
  const auto rows = static_cast<index_t>(X.shape()[0]);
  const auto cols = static_cast<index_t>(X.shape()[1]);
  if constexpr (L == xt::layout_type::column_major) {
    return Dataset<T>(Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>>(X.data(), rows, cols));
  } else {
    return Dataset<T>(Eigen::Map<const Matrix<T>>(X.data(), rows, cols));
  }
}

/// A Dataset of features `X` and targets `y` (Y = std::int64_t for class labels).
template <class T, xt::layout_type L, class Y>
Dataset<T, Y> from_xtensor(const xt::xtensor<T, 2, L>& X, const xt::xtensor<Y, 1>& y) {
  return Dataset<T, Y>(from_xtensor(X).features(), as_vector(y));
}

}  // namespace onelearn
