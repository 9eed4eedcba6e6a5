#pragma once
/**
 * \class onelearn::space::host
 * \brief The default compute space: the caller's memory and onelearn's Eigen + OpenMP kernels.
 * \ingroup spaces
 *
 * \code
 * #include <onelearn/space/host.hpp>
 * namespace space = onelearn::space;
 * space::host h;
 * auto Xh = space::to_space(h, X);                        // borrows X: no copy
 * onelearn::Vector<double> sums = space::column_sums(h, Xh.view(), {});   // no weights
 * onelearn::Matrix<double> centers = X.topRows(3);        // small: passed from the host
 * space::vector<space::host, std::int64_t> labels(h, X.rows());
 * space::lloyd_sums step = space::lloyd_step(h, Xh.view(), centers, labels.mutable_view(), {});
 * onelearn::Labels nearest = labels.to_host();            // the nearest centre of each row
 * std::cout << sums.sum() << ' ' << step.changed << ' ' << nearest.size() << '\n';
 * \endcode
 *
 * space::host: today's path. The samples stay where the caller has them (Eigen, row-major) and
 * the kernels are onelearn's Eigen + OpenMP ones (`core/detail/`), unchanged: every function
 * here forwards to one of them. This file is also the list of the kernels every space
 * implements (`space/detail/thrust_kernels.hpp` has the same functions for thrust_space); see
 * space/space.hpp for the picture.
 */

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "onelearn/core/detail/distances.hpp"
#include "onelearn/core/detail/grouped_moments.hpp"
#include "onelearn/core/detail/lloyd_sums.hpp"
#include "onelearn/core/detail/logistic_terms.hpp"
#include "onelearn/core/detail/moments.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/space/data.hpp"
#include "onelearn/space/host_space.hpp"
#include "onelearn/space/results.hpp"

namespace onelearn::space {


namespace detail {

template <class T>
using host_map = Eigen::Map<const Matrix<T>, 0, Eigen::OuterStride<>>;

/// A view as the Eigen matrix the host kernels take (no copy).
template <class T>
host_map<T> eigen(matrix_view<const T> X) {
  return host_map<T>(X.data, X.rows, X.cols, Eigen::OuterStride<>(std::max(X.stride, X.cols)));
}

template <class T>
std::optional<VectorRef<T>> optional_values(vector_view<const T> w) {
  if (w.empty()) return std::nullopt;
  return VectorRef<T>(Eigen::Map<const Vector<T>>(w.data, w.size));
}

template <class T>
std::span<const T> span(vector_view<const T> v) {
  return {v.data, static_cast<std::size_t>(v.size)};
}

}  // namespace detail

// --- Column and class moments (StandardScaler, GaussianNB, the linear models' means) ---------

/// sum_i w_i x_i per column, in double (w_i = 1 when `weights` is empty).
template <class T>
Vector<double> column_sums(const host&, matrix_view<const T> X, vector_view<const T> weights) {
  return onelearn::detail::column_sums<T>(detail::eigen(X), detail::optional_values(weights));
}

/// sum_i w_i (x_i - center)^2 per column, in double.
template <class T>
Vector<double> centered_square_sums(const host&, matrix_view<const T> X,
                                    const Vector<double>& center, vector_view<const T> weights) {
  return onelearn::detail::centered_square_sums<T>(detail::eigen(X), center,
                                                   detail::optional_values(weights));
}

/// Per class c < k: the weight sum and the weighted feature sums of the rows with
/// class_of[i] = c.
template <class T>
class_moments class_sums(const host&, matrix_view<const T> X, vector_view<const index_t> class_of,
                         vector_view<const T> weights, index_t k) {
  class_moments out{Vector<double>::Zero(k), Matrix<double>::Zero(k, X.cols)};
  onelearn::detail::grouped_sums<T>(detail::eigen(X), detail::span(class_of),
                                    detail::optional_values(weights), out.counts, out.sums);
  return out;
}

/// Per class: sum_i w_i (x_i - theta_c)^2 over its rows (k x p), in double.
template <class T>
Matrix<double> class_square_deviations(const host&, matrix_view<const T> X,
                                       vector_view<const index_t> class_of,
                                       vector_view<const T> weights, const Matrix<double>& theta) {
  Matrix<double> out = Matrix<double>::Zero(theta.rows(), X.cols);
  onelearn::detail::grouped_square_deviations<T>(detail::eigen(X), detail::span(class_of),
                                                 detail::optional_values(weights), theta, out);
  return out;
}

/// X(i, j) -= values[j] for every row, in T (centring rows in place, in the space: KMeans on a
/// device centres its copy of the rows there).
template <class T>
void subtract_from_rows(const host&, matrix_view<T> X, const Vector<T>& values) {
  for (index_t i = 0; i < X.rows; ++i) {
    T* row = X.row(i);
    for (index_t j = 0; j < X.cols; ++j) row[j] -= values(j);
  }
}

// --- Distances (KMeans, kNN) -------------------------------------------------------------------

/// D(i, j) = ||x_i - y_j||^2 by the expansion, in T, clamped at 0 (rows(X) x rows(Y), in the
/// space).
template <class T>
matrix<host, T> pairwise_squared_distances(const host& s, matrix_view<const T> X,
                                           matrix_view<const T> Y) {
  matrix<host, T> out(s, X.rows, Y.rows);
  if (X.rows == 0 || Y.rows == 0) return out;
  Eigen::Map<Matrix<T>>(out.mutable_view().data, X.rows, Y.rows) =
      onelearn::detail::pairwise_squared_distances<T>(detail::eigen(X), detail::eigen(Y));
  return out;
}

/// labels[i] = the row of `centers` nearest to x_i (the first on ties), by ||c||^2 - 2 x.c in T.
template <class T>
void nearest_rows(const host&, matrix_view<const T> X, const host_rows<T>& centers,
                  vector_view<std::int64_t> labels) {
  if (X.rows == 0) return;
  const Vector<T> norms = onelearn::detail::row_squared_norms<T>(centers);
  onelearn::detail::nearest_rows<T>(detail::eigen(X), centers, norms,
                                    Eigen::Map<Labels>(labels.data, labels.size));
}

/// One Lloyd step: labels[i] = nearest centre (as nearest_rows), and per cluster the sum and
/// number of its rows; `changed` counts the labels that differ from `previous` (every label
/// when `previous` is empty: the first step).
template <class T>
lloyd_sums lloyd_step(const host&, matrix_view<const T> X, const host_rows<T>& centers,
                      vector_view<std::int64_t> labels, vector_view<const std::int64_t> previous) {
  const index_t k = centers.rows();
  lloyd_sums out{Matrix<double>::Zero(k, X.cols), Vector<double>::Zero(k), 0.0};
  const Labels none = previous.empty() ? Labels::Constant(X.rows, -1) : Labels();
  const Eigen::Map<const Labels> before(previous.empty() ? none.data() : previous.data, X.rows);
  out.changed = onelearn::detail::lloyd_assign_and_sum<T>(
      detail::eigen(X), centers, Eigen::Map<Labels>(labels.data, labels.size), before, out.sums,
      out.counts);
  return out;
}

/// d_i = ||x_i - y_{index[i]}||^2, subtracting first, in double (inertia, farthest points).
template <class T>
Vector<double> paired_squared_distances(const host&, matrix_view<const T> X, const host_rows<T>& Y,
                                        vector_view<const std::int64_t> index) {
  return onelearn::detail::paired_squared_distances<T>(
      detail::eigen(X), Y, Eigen::Map<const Labels>(index.data, index.size));
}

/// The min(k, rows of X) nearest rows of X to each query, exact squared distances (in double,
/// subtracting first), ties to the lower row.
template <class T>
neighbours nearest_k(const host&, matrix_view<const T> X, matrix_view<const T> queries, index_t k) {
  const auto train = detail::eigen(X);
  const Vector<T> mean =
      X.rows > 0 ? Vector<T>(train.colwise().mean().transpose()) : Vector<T>::Zero(X.cols);
  return onelearn::detail::exact_kbest<T>(train, mean, detail::eigen(queries), k);
}

// --- Gram and covariance (Ridge, Lasso, ElasticNet; without y a covariance) ----------------

/// sum_i w_i x~_i x~_i^T (lower triangle), and with y: sum_i w_i x~_i y~_i and sum_i w_i y~_i^2,
/// x~ = x - x_mean, y~ = y - y_mean, in double. An empty `y` gives the covariance sums only.
template <class T>
gram_sums gram(const host&, matrix_view<const T> X, vector_view<const T> y,
               vector_view<const T> weights, double weight_scale, const Vector<double>& x_mean,
               double y_mean) {
  return onelearn::detail::local_gram_sums<T>(detail::eigen(X), detail::optional_values(y),
                                              detail::optional_values(weights), weight_scale,
                                              x_mean, y_mean);
}

// --- Logistic regression ------------------------------------------------------------------

/// The logistic data term and its gradient (core/detail/logistic_terms.hpp), in double:
/// `params` and `grad` are k x (p + fit_intercept). Float rows are converted to double first.
template <class T>
double logistic_loss_gradient(const host&, matrix_view<const T> X,
                              vector_view<const index_t> class_of, vector_view<const T> weights,
                              bool binary, bool fit_intercept, const MatrixRef<double>& params,
                              Eigen::Ref<Matrix<double>> grad) {
  const Vector<double> w =
      weights.empty()
          ? Vector<double>()
          : Vector<double>(
                Eigen::Map<const Vector<T>>(weights.data, weights.size).template cast<double>());
  if constexpr (std::is_same_v<T, double>) {
    return onelearn::detail::logistic_terms(detail::eigen(X), detail::span(class_of), w, binary,
                                            fit_intercept, params, grad);
  } else {
    const Matrix<double> Xd = detail::eigen(X).template cast<double>();
    return onelearn::detail::logistic_terms(Xd, detail::span(class_of), w, binary, fit_intercept,
                                            params, grad);
  }
}

}  // namespace onelearn::space
