#pragma once
/**
 * \file
 * \ingroup core
 *
 * The data types every onelearn API speaks. Samples are rows (C order), so a `.npy` file or a
 * NumPy array maps onto a Matrix without a copy; see the README's Conventions.
 */

#include <cstdint>

#include <Eigen/Core>

namespace onelearn {

/// Index type for rows, columns and sizes (Eigen's, so no casts at the Eigen boundary).
using index_t = Eigen::Index;

/// Samples x features, row-major.
template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// A column of values: regression targets, coefficients, per-feature statistics.
template <class T>
using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;

/// Class labels. They need not be 0..k-1: classifiers keep `classes()`.
using Labels = Vector<std::int64_t>;

/// What estimators accept: any dense expression that can be viewed as a row-major matrix
/// without a copy (a Matrix, a block of rows, an Eigen::Map over a .npy buffer). Other
/// expressions (column-major, products) are evaluated into a temporary by Eigen::Ref.
template <class T>
using MatrixRef = Eigen::Ref<const Matrix<T>>;

template <class T>
using VectorRef = Eigen::Ref<const Vector<T>>;

using LabelsRef = Eigen::Ref<const Labels>;

}  // namespace onelearn
