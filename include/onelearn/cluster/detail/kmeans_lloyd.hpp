#pragma once
// Lloyd's k-means iterations, as scikit-learn 1.2's _kmeans_single_lloyd, for one process or
// many. Per iteration:
//   1. assign each local row to its nearest centre (detail::nearest_rows: one GEMM per block),
//      and in the same pass over the rows (lloyd_assign_and_sum in core/detail/lloyd_sums.hpp,
//      on threads). By default Hamerly's bounds skip the rows whose label provably stays
//      (assign_and_sum_bounded): the same labels bit for bit, with only the other rows going
//      through a GEMM;
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
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include "onelearn/cluster/detail/kmeans_rows.hpp"
#include "onelearn/core/detail/distances.hpp"
#include "onelearn/core/detail/lloyd_sums.hpp"
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

/// scikit-learn's _relocate_empty_clusters_dense over all ranks: the clusters with no rows take,
/// in order, the rows farthest from the centre they were assigned to (ties: the lower global
/// row number first; scikit-learn's argpartition leaves that order unspecified). The moved row is
/// taken out of its old cluster's sum and count and becomes the new cluster's sum; labels are
/// left as they are, as in scikit-learn.
template <class T, exec::ExecutionPolicy Exec>
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

/// Hamerly's bounds (G. Hamerly, "Making k-means even faster", SDM 2010): per local row, an
/// upper bound on its distance to the centre it is assigned to and a lower bound on its distance
/// to every other centre; two doubles per row. The bounds are on exact distances; the margins
/// below make them hold against every rounding, so a skipped row provably keeps the label the
/// plain assignment (nearest_rows) would give it.
struct HamerlyBounds {
  Vector<double> upper;
  Vector<double> lower;
  /// ||x_i||^2 in double, computed once per fit (the rows do not change between iterations).
  Vector<double> squared_norms;
};

/// ||x_i||^2 in double for each row of X, for HamerlyBounds::squared_norms (on threads).
template <class T, class Chunks = host_chunks>
Vector<double> row_squared_norms_double(const MatrixRef<T>& X, const Chunks& chunks = {}) {
  Vector<double> out(X.rows());
  chunks(X.rows(), block_rows, [&](index_t, index_t begin, index_t end) {
    for (index_t i = begin; i < end; ++i) out(i) = X.row(i).template cast<double>().squaredNorm();
  });
  return out;
}

/// Asks the cache for row i of X ahead of its use: the bounds pass reads only the rows its loose
/// bound cannot prove, a pattern the hardware prefetcher follows badly, and the sums pass after
/// it reads every row of the window anyway, so fetching them all early costs no extra traffic.
template <class T>
inline void prefetch_row(const MatrixRef<T>& X, index_t i) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  const char* first = reinterpret_cast<const char*>(X.row(i).data());
  const auto bytes = static_cast<std::ptrdiff_t>(X.cols()) * static_cast<std::ptrdiff_t>(sizeof(T));
  for (std::ptrdiff_t at = 0; at < bytes; at += 64) __builtin_prefetch(first + at);
#else
  (void)X;
  (void)i;
#endif
}

/// delta(x, c) = expansion_margin<T>(p) * (||x||^2 + max_j ||c_j||^2) bounds |computed - exact|
/// of v_j = ||c_j||^2 - 2 x.c_j as the kernels compute it in T: the dot product and the norm of
/// c_j each err by at most gamma_p = p u / (1 - p u) times sum |x_k c_k| <= ||x|| ||c_j|| (any
/// summation order, FMA or not; u = eps / 2), the subtraction by u |v_j|, and
/// 2 ||x|| ||c_j|| <= ||x||^2 + ||c_j||^2; (p + 2) eps would do, twice that leaves room for the
/// double rounding of the bounds themselves.
template <class T>
constexpr double expansion_margin(index_t p) noexcept {
  return (2.0 * static_cast<double>(p) + 8.0) *
         static_cast<double>(std::numeric_limits<T>::epsilon());
}

/// Relative slack for the bound arithmetic done in double (sums, square roots, distances by
/// subtraction over p <= ~10^5 features): far above its rounding, far below any useful gap.
inline constexpr double bound_slack = 1e-10;

/// For each row of B (rows of X, m <= block_rows): the nearest centre (first on ties) and the
/// smallest and second smallest v_j = ||c_j||^2 - 2 x.c_j, computed exactly as nearest_rows
/// computes them, so on the same block of X the labels are nearest_rows's bit for bit.
template <class T, class Block>
void nearest_two(const Block& B, const MatrixRef<T>& C, const Vector<T>& c_norms, index_t* best_out,
                 T* best_values, T* second_values) {
  const index_t k = C.rows();
  const Matrix<T> products = B * C.transpose();
  for (index_t i = 0; i < B.rows(); ++i) {
    index_t best = 0;
    T best_value = c_norms(0) - T(2) * products(i, 0);
    T second = std::numeric_limits<T>::infinity();
    for (index_t j = 1; j < k; ++j) {
      const T value = c_norms(j) - T(2) * products(i, j);
      if (value < best_value) {
        second = best_value;
        best_value = value;
        best = j;
      } else if (value < second) {
        second = value;
      }
    }
    best_out[i] = best;
    best_values[i] = best_value;
    second_values[i] = second;
  }
}

/// The per-iteration quantities the bounded assignment needs, from the centres.
struct HamerlyCentres {
  Vector<double> half_gap;  ///< s(c): half the distance to the nearest other centre, rounded down
  Vector<double> norms;     ///< ||c_j||, in double
  double max_squared_norm = 0;  ///< max_j ||c_j||^2
};

template <class T>
HamerlyCentres hamerly_centres(const Matrix<T>& centers) {
  const index_t k = centers.rows();
  HamerlyCentres out;
  out.half_gap = Vector<double>::Constant(k, std::numeric_limits<double>::infinity());
  out.norms.resize(k);
  for (index_t a = 0; a < k; ++a) {
    const double squared = centers.row(a).template cast<double>().squaredNorm();
    out.norms(a) = std::sqrt(squared);
    out.max_squared_norm = std::max(out.max_squared_norm, squared);
    for (index_t b = 0; b < k; ++b) {
      if (b == a) continue;
      const double d = (centers.row(a).template cast<double>() -
                        centers.row(b).template cast<double>()).norm();
      out.half_gap(a) = std::min(out.half_gap(a), 0.5 * d * (1 - bound_slack));
    }
  }
  return out;
}

/// The bounded assignment step fused with the sums, with the same results as
/// lloyd_assign_and_sum:
/// labels equal nearest_rows's, and the sums are added per chunk in row order, as there.
/// `moves(j)` is how far centre j moved since the bounds were set (rounded up); with `full`, every
/// row is assigned (first iteration, or after an empty-cluster relocation) and the bounds are
/// set afresh. A row whose bounds cannot prove its label is recomputed in a gathered block of
/// such rows (one GEMM per block); if its two smallest values there are too close for that
/// GEMM's rounding to be sure to agree with the plain kernel's, its original block is
/// recomputed exactly as nearest_rows does it. `bounds.squared_norms` must hold
/// row_squared_norms_double(X). `chunks` runs the chunks (host_chunks: for_each_chunk).
template <class T, class Chunks = host_chunks>
double assign_and_sum_bounded(const MatrixRef<T>& X, const Matrix<T>& centers,
                              Eigen::Ref<Labels> labels, HamerlyBounds& bounds,
                              const Vector<double>& moves, bool full, bool with_sums,
                              Eigen::Ref<Matrix<double>> sums, Eigen::Ref<Vector<double>> counts,
                              const Chunks& chunks = {}) {
  const index_t n = X.rows();
  const index_t p = X.cols();
  const index_t k = centers.rows();
  const Vector<T> center_norms = row_squared_norms<T>(centers);
  const MatrixRef<T> C(centers);
  const HamerlyCentres geometry = hamerly_centres<T>(centers);
  const double margin = expansion_margin<T>(p);
  // Per label a: the largest move of any other centre (the lower bound's decrease).
  Vector<double> other_move = Vector<double>::Zero(k);
  if (!full) {
    for (index_t a = 0; a < k; ++a) {
      for (index_t j = 0; j < k; ++j) {
        if (j != a) other_move(a) = std::max(other_move(a), moves(j));
      }
    }
  }
  const index_t grain = fixed_chunks(n, block_rows, max_partials);
  Matrix<double> partials = Matrix<double>::Zero(chunk_count(n, grain), k * p + k + 1);
  constexpr index_t window_rows = 4 * block_rows;
  // How far ahead the bounds pass prefetches rows (enough to cover a memory latency).
  constexpr index_t prefetch_rows = 16;
  chunks(n, grain, [&](index_t chunk, index_t begin, index_t end) {
    double* partial = partials.row(chunk).data();
    std::vector<index_t> best(static_cast<std::size_t>(block_rows));
    std::vector<T> best_values(static_cast<std::size_t>(block_rows));
    std::vector<T> second_values(static_cast<std::size_t>(block_rows));
    // Sets row i's label and bounds from its two smallest values.
    const auto settle = [&](index_t i, index_t label, T best_value, T second_value) {
      const double xx = bounds.squared_norms(i);
      const double delta = margin * (xx + geometry.max_squared_norm);
      if (label != labels(i)) partial[k * p + k] += 1;
      labels(i) = label;
      bounds.upper(i) = std::sqrt(std::max(0.0, xx + static_cast<double>(best_value) + delta)) *
                        (1 + bound_slack);
      bounds.lower(i) =
          std::sqrt(std::max(0.0, xx + static_cast<double>(second_value) - delta)) *
          (1 - bound_slack);
    };
    // Exactly nearest_rows's computation on the original block [b, b + m).
    const auto plain_block = [&](index_t b) {
      const index_t m = std::min(block_rows, end - b);
      nearest_two<T>(X.middleRows(b, m), C, center_norms, best.data(), best_values.data(),
                     second_values.data());
      return m;
    };

    // The chunk goes by windows of a few blocks, so the rows read for the bounds are still in
    // cache when their sums are added.
    std::vector<index_t> examined;
    std::vector<index_t> ambiguous;
    Matrix<T> gathered(block_rows, p);
    Eigen::Map<Matrix<double>> chunk_sums(partial, k, p);
    for (index_t window = begin; window < end; window += window_rows) {
      const index_t window_end = std::min(end, window + window_rows);
      if (full) {
        for (index_t b = window; b < window_end; b += block_rows) {
          const index_t m = plain_block(b);
          for (index_t r = 0; r < m; ++r) {
            const auto s = static_cast<std::size_t>(r);
            settle(b + r, best[s], best_values[s], second_values[s]);
          }
        }
      } else {
        examined.clear();
        ambiguous.clear();
        for (index_t i = window; i < window_end; ++i) {
          if (with_sums && i + prefetch_rows < window_end) prefetch_row<T>(X, i + prefetch_rows);
          const index_t a = labels(i);
          double u = (bounds.upper(i) + moves(a)) * (1 + bound_slack);
          const double l = (bounds.lower(i) - other_move(a)) * (1 - bound_slack);
          bounds.lower(i) = l;
          // The label is proved if sqrt(u^2 + 2 delta) < max(l, s(a)): then every other
          // centre's exact v_j exceeds v_a by more than 2 delta, so the computed ones are
          // ordered too. ||x|| <= ||c_a|| + u bounds the ||x||^2 in delta.
          const double bar = std::max(l, geometry.half_gap(a));
          const double bar_squared = bar * bar * (1 - bound_slack);
          const auto proved = [&](double upper) {
            const double reach = geometry.norms(a) + upper;
            const double delta = margin * (reach * reach + geometry.max_squared_norm);
            return bar > 0 && upper * upper + 2 * delta < bar_squared;
          };
          if (!proved(u)) {
            u = (X.row(i).template cast<double>() - C.row(a).template cast<double>()).norm() *
                (1 + bound_slack);
            if (!proved(u)) examined.push_back(i);
          }
          bounds.upper(i) = u;
        }
        // The rows not proved, in gathered blocks; near-ties go back to their original block.
        for (std::size_t g = 0; g < examined.size(); g += static_cast<std::size_t>(block_rows)) {
          const index_t m =
              std::min<index_t>(block_rows, static_cast<index_t>(examined.size() - g));
          for (index_t r = 0; r < m; ++r) {
            gathered.row(r) = X.row(examined[g + static_cast<std::size_t>(r)]);
          }
          nearest_two<T>(gathered.topRows(m), C, center_norms, best.data(), best_values.data(),
                         second_values.data());
          for (index_t r = 0; r < m; ++r) {
            const auto s = static_cast<std::size_t>(r);
            const index_t i = examined[g + s];
            const double xx = bounds.squared_norms(i);
            const double delta = margin * (xx + geometry.max_squared_norm);
            // Each computation is within delta of the exact values, so a gap above 4 delta
            // here is a strict gap in the plain kernel's values too.
            if (static_cast<double>(second_values[s]) - static_cast<double>(best_values[s]) >
                4 * delta * (1 + bound_slack)) {
              settle(i, best[s], best_values[s], second_values[s]);
            } else {
              ambiguous.push_back(i);
            }
          }
        }
        for (std::size_t q = 0; q < ambiguous.size();) {
          const index_t b = begin + (ambiguous[q] - begin) / block_rows * block_rows;
          plain_block(b);
          for (; q < ambiguous.size() && ambiguous[q] < b + block_rows; ++q) {
            const auto s = static_cast<std::size_t>(ambiguous[q] - b);
            settle(ambiguous[q], best[s], best_values[s], second_values[s]);
          }
        }
      }
      if (!with_sums) continue;
      // Element by element, so the same bits as adding whole rows, without Eigen's per-row
      // setup for a dynamic-size row.
      for (index_t i = window; i < window_end; ++i) {
        const index_t label = labels(i);
        double* sum = chunk_sums.row(label).data();
        const T* x = X.row(i).data();
        for (index_t f = 0; f < p; ++f) sum[f] += static_cast<double>(x[f]);
        partial[k * p + label] += 1;
      }
    }
  });
  const Vector<double> total = partials.colwise().sum().transpose();
  sums = Eigen::Map<const Matrix<double>>(total.data(), k, p);
  counts = total.segment(k * p, k);
  return total(k * p + k);
}

/// What lloyd reports after each iteration when nobody listens: nothing.
struct no_iteration_report {
  void operator()(index_t /*iteration*/, double /*changed*/, double /*shift*/) const noexcept {}
};

/// Lloyd iterations from `centers` on the local rows X (centred by the caller, as scikit-learn
/// centres before clustering). `tol` is absolute: scikit-learn's tol * mean feature variance.
/// With `bounded` (the default) the assignment skips the rows Hamerly's bounds prove (see
/// assign_and_sum_bounded): the same labels, sums, centres and n_iter as the plain assignment,
/// which `bounded = false` runs (kept to test that equality). After each iteration
/// `on_iteration(n_iter, labels changed over all ranks, squared centre shift)` is called with
/// numbers every rank shares (KMeans's verbose lines). The bounded path's chunks of rows run
/// through `chunks` (host_chunks: OpenMP's threads; a CPU compute space passes its own).
template <class T, exec::ExecutionPolicy Exec, class OnIteration = no_iteration_report,
          class Chunks = host_chunks>
LloydResult<T> lloyd(const Exec& exec, const RowPartition& rows, const MatrixRef<T>& X,
                     Matrix<T> centers, index_t max_iter, double tol, bool bounded = true,
                     const OnIteration& on_iteration = {}, const Chunks& chunks = {}) {
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
  HamerlyBounds bounds;
  if (bounded) {
    bounds.upper.resize(n);
    bounds.lower.resize(n);
    bounds.squared_norms = row_squared_norms_double<T>(X, chunks);
  }
  Vector<double> moves = Vector<double>::Zero(k);
  bool full = true;

  while (out.n_iter < max_iter) {
    if (bounded) {
      totals(k * p + k) = assign_and_sum_bounded<T>(X, centers, out.labels, bounds, moves, full,
                                                    true, sums, counts, chunks);
      full = false;
    } else {
      totals(k * p + k) = lloyd_assign_and_sum<T>(X, centers, out.labels, previous, sums, counts);
    }
    exec.allreduce(std::span<double>(totals.data(), static_cast<std::size_t>(totals.size())),
                   exec::reduce_op::sum);
    if ((counts.array() == 0).any()) {
      relocate_empty_clusters<T>(exec, rows, X, centers, out.labels, sums, counts);
      // A relocated centre jumps far: set every bound afresh in the next pass.
      full = true;
    }
    for (index_t j = 0; j < k; ++j) {
      // A cluster emptied by a relocation keeps its (now ~zero) sum, as scikit-learn does.
      if (counts(j) > 0) sums.row(j) /= counts(j);
    }
    const Matrix<T> next = sums.cast<T>();
    const Matrix<double> moved = next.template cast<double>() - centers.template cast<double>();
    const double shift = moved.squaredNorm();
    moves = moved.rowwise().norm() * (1 + bound_slack);
    centers = next;
    ++out.n_iter;
    on_iteration(out.n_iter, totals(k * p + k), shift);
    if (totals(k * p + k) == 0) {
      strict_convergence = true;
      break;
    }
    if (shift <= tol) break;
    if (!bounded) previous = out.labels;
  }
  if (!strict_convergence) {
    if (bounded) {
      // The final assignment through the bounds too; the sums are not needed.
      assign_and_sum_bounded<T>(X, centers, out.labels, bounds, moves, full, false, sums, counts,
                                chunks);
    } else {
      nearest_rows<T>(X, centers, row_squared_norms<T>(centers), out.labels);
    }
  }

  double inertia = paired_squared_distances<T>(X, centers, out.labels, chunks).sum();
  exec.allreduce(std::span<double>(&inertia, 1), exec::reduce_op::sum);
  out.inertia = inertia;
  out.centers = std::move(centers);
  return out;
}

}  // namespace onelearn::detail
