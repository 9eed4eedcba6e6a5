#pragma once
/**
 * \file
 * \brief adjusted_rand_score: the Rand index adjusted for chance.
 * \ingroup metrics
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/metrics/adjusted_rand_score.hpp>
 *
 * onelearn::Labels truth(6), clusters(6);
 * truth << 0, 0, 1, 1, 2, 2;
 * clusters << 1, 1, 0, 0, 3, 3;  // the same partition, other names
 * double ari = onelearn::metrics::adjusted_rand_score(truth, clusters);  // 1.0
 *
 * // Collective: each rank passes its own samples, every rank gets the global score.
 * double global = onelearn::metrics::adjusted_rand_score(my_truth, my_clusters,
 *                                                        onelearn::exec::mpi{comm});
 * \endcode
 *
 * metrics::adjusted_rand_score: the Rand index adjusted for chance, as scikit-learn's
 * adjusted_rand_score (1.2.1). With the pair confusion matrix [[tn, fp], [fn, tp]] (pairs of
 * samples put together or apart by each labelling; from the contingency table n_ij, its row sums
 * a_i and column sums b_j: tp = Σ n_ij² - n, fp = Σ n_ij b_j - Σ n_ij², fn = Σ n_ij a_i - Σ n_ij²,
 * tn = n² - fp - fn - Σ n_ij²),
 *
 *     ARI = 2 (tp tn - fn fp) / ((tp + fn)(fn + tn) + (tp + fp)(fp + tn)),  1 when fn = fp = 0.
 *
 * Label values are only names: permuting them does not change the score; the result is
 * symmetric in its two arguments; 1 is a perfect match, about 0 a random one, and it can be
 * negative.
 *
 * Method: the contingency table is kept sparse (the distinct (true, pred) pairs with their
 * counts, found by sorting); under a distributed policy each rank's pairs are all-gathered and
 * merged, so the message is O(distinct pairs), never O(samples). The numerator and denominator
 * are formed exactly in 128-bit integers (where the compiler has them; long double otherwise)
 * and rounded once to double, as scikit-learn does with Python integers.
 *
 * \par Parameters
 * - `labels_true`, `labels_pred` (Labels, same length): any values.
 * - `exec` (default exec::local{}): with a distributed policy the table is gathered over every
 *   rank (all ranks must call it).
 *
 * \par Returns
 * The score in [-0.5, 1], as a double.
 *
 * \par Differences from scikit-learn
 * - No samples at all is an error (scikit-learn returns 1.0).
 *
 * Errors: shape_error when the lengths differ; invalid_argument when there are no samples (over
 * every rank). Under exec::mpi every error is raised on every rank.
 */

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/metrics/detail/labels.hpp"

namespace onelearn::metrics {

namespace detail {

#if defined(__SIZEOF_INT128__)
// Pair counts reach n², their products n⁴: past int64 from n ≈ 55,000 samples.
__extension__ using wide_int = __int128;
#else
using wide_int = long double;
#endif

/// The distinct (a, b) pairs of two label vectors with their counts, as a flat
/// [a, b, count, a, b, count, ...] sorted by (a, b).
inline std::vector<std::int64_t> pair_counts(const LabelsRef& a, const LabelsRef& b) {
  std::vector<std::array<std::int64_t, 2>> pairs(static_cast<std::size_t>(a.size()));
  for (index_t i = 0; i < a.size(); ++i) pairs[static_cast<std::size_t>(i)] = {a(i), b(i)};
  std::sort(pairs.begin(), pairs.end());
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < pairs.size();) {
    std::size_t j = i;
    while (j < pairs.size() && pairs[j] == pairs[i]) ++j;
    out.insert(out.end(), {pairs[i][0], pairs[i][1], static_cast<std::int64_t>(j - i)});
    i = j;
  }
  return out;
}

/// Sums the counts of equal (a, b) triples of a flat [a, b, count, ...] list, in place, sorted.
inline void merge_pair_counts(std::vector<std::int64_t>& triples) {
  std::vector<std::array<std::int64_t, 3>> rows(triples.size() / 3);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i] = {triples[3 * i], triples[3 * i + 1], triples[3 * i + 2]};
  }
  std::sort(rows.begin(), rows.end());
  triples.clear();
  for (const auto& row : rows) {
    const std::size_t size = triples.size();
    if (size >= 3 && triples[size - 3] == row[0] && triples[size - 2] == row[1]) {
      triples[size - 1] += row[2];
    } else {
      triples.insert(triples.end(), row.begin(), row.end());
    }
  }
}

/// Σ_ij n_ij s_i, where s_i is the sum of the counts of all pairs sharing the key (entry
/// `key` of the triple: 0 for rows, 1 for columns).
inline wide_int sum_count_times_margin(std::vector<std::array<std::int64_t, 3>> rows, int key) {
  std::sort(rows.begin(), rows.end(), [key](const auto& x, const auto& y) {
    return x[static_cast<std::size_t>(key)] < y[static_cast<std::size_t>(key)];
  });
  wide_int total = 0;
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    wide_int margin = 0;
    const auto k = static_cast<std::size_t>(key);
    while (j < rows.size() && rows[j][k] == rows[i][k]) margin += rows[j++][2];
    for (std::size_t r = i; r < j; ++r) total += margin * rows[r][2];
    i = j;
  }
  return total;
}

}  // namespace detail

template <exec::ExecutionPolicy Exec = exec::local>
double adjusted_rand_score(const LabelsRef& labels_true, const LabelsRef& labels_pred,
                           const Exec& exec = {}) {
  constexpr std::string_view where = "adjusted_rand_score";
  exec.propagate_errors([&] {
    validation::check_same_length(where, "labels_pred", labels_true.size(), labels_pred.size());
  });
  std::vector<std::int64_t> mine = detail::pair_counts(labels_true, labels_pred);
  std::vector<std::int64_t> table = exec.allgatherv(std::span<const std::int64_t>(mine));
  if constexpr (Exec::is_distributed) detail::merge_pair_counts(table);

  std::vector<std::array<std::int64_t, 3>> rows(table.size() / 3);
  detail::wide_int n = 0, sum_squares = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i] = {table[3 * i], table[3 * i + 1], table[3 * i + 2]};
    n += rows[i][2];
    sum_squares += static_cast<detail::wide_int>(rows[i][2]) * rows[i][2];
  }
  detail::check_n_samples(where, static_cast<double>(n));
  // scikit-learn's pair_confusion_matrix.
  const detail::wide_int tp = sum_squares - n;
  const detail::wide_int fp = detail::sum_count_times_margin(rows, 1) - sum_squares;
  const detail::wide_int fn = detail::sum_count_times_margin(rows, 0) - sum_squares;
  const detail::wide_int tn = n * n - fp - fn - sum_squares;
  if (fn == 0 && fp == 0) return 1.0;
  const detail::wide_int numerator = tp * tn - fn * fp;
  const detail::wide_int denominator = (tp + fn) * (fn + tn) + (tp + fp) * (fp + tn);
  return 2.0 * static_cast<double>(numerator) / static_cast<double>(denominator);
}

}  // namespace onelearn::metrics
