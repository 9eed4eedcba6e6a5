#pragma once
// Lloyd's k-means iterations, as scikit-learn 1.2's _kmeans_single_lloyd, for one process or
// many. Per iteration:
//   1. assign each local row to its nearest centre (detail::nearest_rows: one GEMM per block),
//      and in the same pass over the rows (assign_and_sum, on threads)
//   2. sum the rows of each cluster and count them, in double, and count the rows whose label
//      changed; ONE all-reduce of [sums (k x p), counts (k), changed] gives every rank the totals;
//   3. a cluster left empty takes the point farthest from its centre (scikit-learn's
//      relocation; an all-gather and an all-reduce more, only in an iteration that has one);
//   4. the new centres are the means; stop when no label changed ("strict convergence"), or when
//      the squared centre shift summed over clusters is <= tol, or after max_iter iterations.
// Unless no label changed, the rows are assigned once more to the final centres, so labels,
// centres and inertia agree; the inertia is summed exactly (subtracting first, in double).
//
// Every rank takes the same decisions because they depend only on all-reduced values, which
// MPI_Allreduce returns identically on every rank.

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include "onelearn/core/detail/distances.hpp"
#include "onelearn/core/detail/kmeans_rows.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::detail {

template <class T>
struct LloydResult {
  Matrix<T> centers;   ///< k x p
  Labels labels;       ///< of the local rows
  double inertia = 0;  ///< over all ranks
  index_t n_iter = 0;
};

/// The assignment step fused with the sums the update step needs (scikit-learn's Lloyd loop
/// fuses them too): labels(i) becomes the nearest centre of row i; `sums` (k x p) and `counts`
/// (k) receive, in double, the sum and number of the rows of each cluster. Returns how many
/// labels differ from `previous`.
///
/// Chunks of rows run on threads, each with its own partial sums; there are at most
/// max_partials (core/detail/parallel.hpp) chunks whatever n is (bounding the k x p partials' memory), and the partials are
/// added in chunk order, so the result is the same on any number of threads.
template <class T>
double assign_and_sum(const MatrixRef<T>& X, const Matrix<T>& centers, Eigen::Ref<Labels> labels,
                      const Eigen::Ref<const Labels>& previous, Eigen::Ref<Matrix<double>> sums,
                      Eigen::Ref<Vector<double>> counts) {
  const index_t n = X.rows();
  const index_t p = X.cols();
  const index_t k = centers.rows();
  const Vector<T> center_norms = row_squared_norms<T>(centers);
  const index_t grain = fixed_chunks(n, block_rows, max_partials);
  // Per chunk, one row: [sums (k x p, row-major), counts (k), changed].
  Matrix<double> partials = Matrix<double>::Zero(chunk_count(n, grain), k * p + k + 1);
  for_each_chunk(n, grain, [&](index_t chunk, index_t begin, index_t end) {
    nearest_rows<T>(X.middleRows(begin, end - begin), centers, center_norms,
                    labels.segment(begin, end - begin));
    double* partial = partials.row(chunk).data();
    Eigen::Map<Matrix<double>> chunk_sums(partial, k, p);
    for (index_t i = begin; i < end; ++i) {
      const index_t label = labels(i);
      chunk_sums.row(label) += X.row(i).template cast<double>();
      partial[k * p + label] += 1;
      if (label != previous(i)) partial[k * p + k] += 1;
    }
  });
  const Vector<double> total = partials.colwise().sum().transpose();
  sums = Eigen::Map<const Matrix<double>>(total.data(), k, p);
  counts = total.segment(k * p, k);
  return total(k * p + k);
}

/// scikit-learn's _relocate_empty_clusters_dense over all ranks: the clusters with no rows take,
/// in order, the rows farthest from the centre they were assigned to (ties: the lower global
/// row number first; scikit-learn's argpartition leaves that order unspecified). The moved row is
/// taken out of its old cluster's sum and count and becomes the new cluster's sum; labels are
/// left as they are, as in scikit-learn.
template <class T, class Exec>
void relocate_empty_clusters(const Exec& exec, const RowPartition& rows, const MatrixRef<T>& X,
                             const Matrix<T>& old_centers, const Labels& labels,
                             Eigen::Ref<Matrix<double>> sums, Eigen::Ref<Vector<double>> counts) {
  std::vector<index_t> empty;
  for (index_t j = 0; j < counts.size(); ++j) {
    if (counts(j) == 0) empty.push_back(j);
  }
  const auto n_empty = static_cast<index_t>(empty.size());
  const index_t n = X.rows();
  const index_t p = X.cols();

  // This rank's n_empty farthest rows, as (distance, global row) pairs.
  const Vector<double> distances = paired_squared_distances<T>(X, old_centers, labels);
  const auto farther = [&](index_t a, index_t b) {
    return distances(a) > distances(b) || (distances(a) == distances(b) && a < b);
  };
  std::vector<index_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), index_t{0});
  const auto keep = static_cast<std::ptrdiff_t>(std::min(n_empty, n));
  std::partial_sort(order.begin(), order.begin() + keep, order.end(), farther);
  std::vector<double> mine;
  for (std::ptrdiff_t s = 0; s < keep; ++s) {
    const index_t i = order[static_cast<std::size_t>(s)];
    mine.push_back(distances(i));
    mine.push_back(static_cast<double>(rows.first() + i));
  }

  // The n_empty farthest over all ranks, the same on every rank.
  const std::vector<double> all = exec.allgatherv(std::span<const double>(mine));
  std::vector<std::size_t> pairs(all.size() / 2);
  std::iota(pairs.begin(), pairs.end(), std::size_t{0});
  std::sort(pairs.begin(), pairs.end(), [&](std::size_t a, std::size_t b) {
    const double da = all[2 * a];
    const double db = all[2 * b];
    return da > db || (da == db && all[2 * a + 1] < all[2 * b + 1]);
  });

  // The chosen rows and their labels, from the ranks that hold them: [x (p values), label].
  Matrix<double> moved = Matrix<double>::Zero(n_empty, p + 1);
  for (index_t s = 0; s < n_empty; ++s) {
    const auto global = static_cast<index_t>(all[2 * pairs[static_cast<std::size_t>(s)] + 1]);
    const index_t local = rows.local_index(global);
    if (local < 0) continue;
    moved.row(s).head(p) = X.row(local).template cast<double>();
    moved(s, p) = static_cast<double>(labels(local));
  }
  exec.allreduce(std::span<double>(moved.data(), static_cast<std::size_t>(moved.size())),
                 exec::reduce_op::sum);

  for (index_t s = 0; s < n_empty; ++s) {
    const index_t to = empty[static_cast<std::size_t>(s)];
    const auto from = static_cast<index_t>(moved(s, p));
    sums.row(from) -= moved.row(s).head(p);
    sums.row(to) = moved.row(s).head(p);
    counts(to) = 1;
    counts(from) -= 1;
  }
}

/// Lloyd iterations from `centers` on the local rows X (centred by the caller, as scikit-learn
/// centres before clustering). `tol` is absolute: scikit-learn's tol * mean feature variance.
template <class T, class Exec>
LloydResult<T> lloyd(const Exec& exec, const RowPartition& rows, const MatrixRef<T>& X,
                     Matrix<T> centers, index_t max_iter, double tol) {
  const index_t n = X.rows();
  const index_t p = X.cols();
  const index_t k = centers.rows();
  LloydResult<T> out;
  out.labels = Labels::Constant(n, -1);
  Labels previous = out.labels;
  // [sums (k x p, row-major), counts (k), changed]: one all-reduce per iteration.
  Vector<double> totals(k * p + k + 1);
  Eigen::Map<Matrix<double>> sums(totals.data(), k, p);
  auto counts = totals.segment(k * p, k);
  bool strict_convergence = false;

  while (out.n_iter < max_iter) {
    totals(k * p + k) = assign_and_sum<T>(X, centers, out.labels, previous, sums, counts);
    exec.allreduce(std::span<double>(totals.data(), static_cast<std::size_t>(totals.size())),
                   exec::reduce_op::sum);
    if ((counts.array() == 0).any()) {
      relocate_empty_clusters<T>(exec, rows, X, centers, out.labels, sums, counts);
    }
    for (index_t j = 0; j < k; ++j) {
      // A cluster emptied by a relocation keeps its (now ~zero) sum, as scikit-learn does.
      if (counts(j) > 0) sums.row(j) /= counts(j);
    }
    const Matrix<T> next = sums.cast<T>();
    const double shift =
        (next.template cast<double>() - centers.template cast<double>()).squaredNorm();
    centers = next;
    ++out.n_iter;
    if (totals(k * p + k) == 0) {
      strict_convergence = true;
      break;
    }
    if (shift <= tol) break;
    previous = out.labels;
  }
  if (!strict_convergence) nearest_rows<T>(X, centers, row_squared_norms<T>(centers), out.labels);

  double inertia = paired_squared_distances<T>(X, centers, out.labels).sum();
  exec.allreduce(std::span<double>(&inertia, 1), exec::reduce_op::sum);
  out.inertia = inertia;
  out.centers = std::move(centers);
  return out;
}

}  // namespace onelearn::detail
