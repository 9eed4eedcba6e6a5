#pragma once
/**
 * \file
 * \brief silhouette_score: the mean silhouette coefficient of a clustering.
 * \ingroup metrics
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/metrics/silhouette_score.hpp>
 *
 * // X: n x p samples; labels: the cluster of each sample (e.g. KMeans::predict(X)).
 * double s = onelearn::metrics::silhouette_score<double>(X, labels);
 * \endcode
 *
 * metrics::silhouette_score: the mean silhouette coefficient of all samples with the euclidean
 * metric, as scikit-learn's silhouette_score (1.2.1, metric="euclidean", sample_size=None). For
 * sample i of cluster A, with a(i) its mean distance to the other members of A and b(i) the
 * smallest mean distance to the members of another cluster,
 *
 *     s(i) = (b(i) - a(i)) / max(a(i), b(i)),   and s(i) = 0 when A = {i}.
 *
 * Method: the distances are formed a block of 512 rows at a time (a 512 x n block of doubles,
 * never the n x n matrix), by the expansion ||x||² - 2 x·y + ||y||² in double whatever T is,
 * clamped at 0, with the block's own diagonal set to 0, as scikit-learn's
 * pairwise_distances_chunked does; each block's per-cluster sums give a(i) and b(i) for its
 * rows. O(n² p + n k) time, O(512 (n + k)) memory.
 *
 * \par Parameters
 * - `X` (Matrix<T>, n x p), finite.
 * - `labels` (Labels, n): any values; between 2 and n - 1 distinct ones.
 *
 * \par Returns
 * The mean silhouette in [-1, 1], as T.
 *
 * \par Differences from scikit-learn
 * - Euclidean metric only; no `sample_size` (random subsample).
 * - Local only: no distributed form (every sample needs its distance to every other). Gather
 *   the rows first, or score a sample of them.
 *
 * Errors: shape_error when labels and the rows of X differ in number; invalid_argument for
 * NaN/Inf in X and a number of distinct labels outside [2, n - 1] (including no samples).
 */

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/detail/distances.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/metrics/detail/labels.hpp"

namespace onelearn::metrics {

template <class T>
T silhouette_score(const MatrixRef<T>& X, const LabelsRef& labels) {
  constexpr std::string_view where = "silhouette_score";
  validation::check_same_length(where, "labels", X.rows(), labels.size());
  validation::check_finite(where, "X", X);
  const index_t n = X.rows();
  const Labels classes = detail::global_classes(exec::local{}, labels);
  const index_t k = classes.size();
  if (k < 2 || k > n - 1) {
    throw invalid_argument(std::string(where) + ": expected between 2 and n_samples - 1 = " +
                           std::to_string(n - 1) + " distinct labels, found " + std::to_string(k));
  }
  std::vector<index_t> cluster(static_cast<std::size_t>(n));
  Vector<double> sizes = Vector<double>::Zero(k);
  for (index_t i = 0; i < n; ++i) {
    const index_t c = detail::class_index(classes, labels(i));
    cluster[static_cast<std::size_t>(i)] = c;
    sizes(c) += 1;
  }

  const Matrix<double> Xd = X.template cast<double>();
  const Vector<double> norms = onelearn::detail::row_squared_norms<double>(Xd);
  Matrix<double> sums;  // block rows x k: sum of the distances to each cluster
  double total = 0;
  for (index_t begin = 0; begin < n; begin += onelearn::detail::block_rows) {
    const index_t m = std::min(onelearn::detail::block_rows, n - begin);
    Matrix<double> distances = onelearn::detail::pairwise_squared_distances<double>(
        Xd.middleRows(begin, m), Xd, norms.segment(begin, m), norms);
    for (index_t r = 0; r < m; ++r) distances(r, begin + r) = 0;
    distances = distances.array().sqrt();
    // A grouped sum, not a product with an n x k membership matrix: k may be close to n.
    sums.setZero(m, k);
    for (index_t r = 0; r < m; ++r) {
      for (index_t j = 0; j < n; ++j) {
        sums(r, cluster[static_cast<std::size_t>(j)]) += distances(r, j);
      }
    }
    for (index_t r = 0; r < m; ++r) {
      const index_t own = cluster[static_cast<std::size_t>(begin + r)];
      if (sizes(own) < 2) continue;  // a singleton's silhouette is 0
      const double a = sums(r, own) / (sizes(own) - 1);
      double b = std::numeric_limits<double>::infinity();
      for (index_t c = 0; c < k; ++c) {
        if (c != own) b = std::min(b, sums(r, c) / sizes(c));
      }
      // a = b = 0 (duplicate points in two clusters) is 0/0 in scikit-learn, set to 0 there too.
      const double denominator = std::max(a, b);
      if (denominator > 0) total += (b - a) / denominator;
    }
  }
  return static_cast<T>(total / static_cast<double>(n));
}

}  // namespace onelearn::metrics
