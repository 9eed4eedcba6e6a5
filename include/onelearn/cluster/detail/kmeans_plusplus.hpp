#pragma once
// Greedy k-means++ seeding (Arthur & Vassilvitskii 2007, with scikit-learn's greedy variant:
// 2 + floor(log k) candidates per centre, keep the one that lowers the potential most), written
// once for one process and for many.
//
// Distributed, every rank must choose the same centres. The candidates are drawn by *global* row
// number from one random stream that every rank runs in lockstep (same seed, same draws), so
// the sampling is the one a single process would do on the shards concatenated in rank order:
//   - D^2 sampling: each rank knows every rank's share of the potential (gathered with the
//     candidate potentials of the previous step), so all ranks agree which rank holds the row
//     the draw falls on; that rank finds the row by a search in its own cumulative sums;
//   - the candidate rows are copied to every rank with one all-reduce (detail::selected_rows);
//   - each rank sums min(closest, distance to candidate) over its rows, and one all-gather of
//     those partial potentials gives every rank the totals (summed in rank order, so the same
//     bits everywhere) and, for the chosen candidate, each rank's share for the next draw.
// Two collectives per centre. The result equals the one-process seeding on the concatenated
// data except when a draw falls within rounding distance of the boundary between two rows or
// two candidates tie to rounding.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "onelearn/cluster/detail/kmeans_rows.hpp"
#include "onelearn/core/detail/distances.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::detail {

/// Uniform double in [0, 1) from the top 53 bits: the same value on every platform (unlike
/// std::uniform_real_distribution, whose algorithm the standard leaves open).
inline double uniform01(std::mt19937_64& engine) {
  return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

/// Uniform integer in [0, n), n >= 1 (modulo draw, as Dataset::permutation: bias below 2^-40).
inline index_t uniform_index(std::mt19937_64& engine, index_t n) {
  return static_cast<index_t>(engine() % static_cast<std::uint64_t>(n));
}

/// k-means++ centres (k x p) chosen among the rows of the local shard X of the data partitioned
/// by `rows`. `engine` must be in the same state on every rank; it is advanced the same way.
template <class T, exec::ExecutionPolicy Exec>
Matrix<T> kmeans_plusplus(const Exec& exec, const RowPartition& rows, const MatrixRef<T>& X,
                          index_t k, std::mt19937_64& engine) {
  const index_t n = X.rows();
  const int n_ranks = rows.n_ranks();
  const auto n_trials =
      static_cast<index_t>(2 + static_cast<index_t>(std::log(static_cast<double>(k))));
  const Vector<T> x_norms = row_squared_norms<T>(X);
  Matrix<T> centers(k, X.cols());

  // The first centre: a uniform draw over all rows.
  centers.row(0) =
      selected_rows<T>(exec, X, {rows.local_index(uniform_index(engine, rows.n_total()))});
  const Matrix<T> first = centers.topRows(1);
  Vector<double> closest =
      pairwise_squared_distances<T>(X, first, x_norms, row_squared_norms<T>(first))
          .col(0)
          .template cast<double>();
  double mine = 0;
  for (index_t i = 0; i < n; ++i) mine += closest(i);
  std::vector<double> shares = exec.allgatherv(std::span<const double>(&mine, 1));

  Vector<double> cumulative(n);
  std::vector<index_t> picked(static_cast<std::size_t>(n_trials));
  Vector<double> partial(n_trials);
  for (index_t c = 1; c < k; ++c) {
    // Where the draws fall: rank r holds the cumulative potential (prefix[r], prefix[r] +
    // share[r]].
    std::vector<double> prefix(static_cast<std::size_t>(n_ranks) + 1, 0.0);
    for (std::size_t r = 0; r < shares.size(); ++r) prefix[r + 1] = prefix[r] + shares[r];
    const double potential = prefix.back();
    double running = 0;
    for (index_t i = 0; i < n; ++i) cumulative(i) = running += closest(i);
    const double offset = prefix[static_cast<std::size_t>(rows.rank)];

    for (index_t t = 0; t < n_trials; ++t) {
      const double draw = uniform01(engine) * potential;
      // The first rank whose last cumulative value reaches the draw; past the end (rounding),
      // the last row of all, as numpy's searchsorted clipped to n - 1.
      int owner = -1;
      for (int r = 0; r < n_ranks && owner < 0; ++r) {
        const auto ru = static_cast<std::size_t>(r);
        if (rows.rows_of(r) > 0 && prefix[ru] + shares[ru] >= draw) owner = r;
      }
      index_t local = -1;
      if (owner < 0) {
        for (int r = n_ranks - 1; r >= 0 && owner < 0; --r) {
          if (rows.rows_of(r) > 0) owner = r;
        }
        if (owner == rows.rank) local = n - 1;
      } else if (owner == rows.rank) {
        // First local row whose global cumulative potential reaches the draw.
        const double* begin = cumulative.data();
        const double* found = std::partition_point(
            begin, begin + n, [&](double value) { return offset + value < draw; });
        local = std::min<index_t>(found - begin, n - 1);
      }
      picked[static_cast<std::size_t>(t)] = local;
    }
    const Matrix<T> candidates = selected_rows<T>(exec, X, picked);

    // Each candidate's potential: sum over all rows of min(closest, distance to the candidate).
    const Matrix<T> distances =
        pairwise_squared_distances<T>(X, candidates, x_norms, row_squared_norms<T>(candidates));
    partial.setZero();
    for (index_t i = 0; i < n; ++i) {
      for (index_t t = 0; t < n_trials; ++t) {
        partial(t) += std::min(closest(i), static_cast<double>(distances(i, t)));
      }
    }
    const std::vector<double> all = exec.allgatherv(
        std::span<const double>(partial.data(), static_cast<std::size_t>(n_trials)));
    index_t best = 0;
    double best_potential = 0;
    for (index_t t = 0; t < n_trials; ++t) {
      double total = 0;
      for (int r = 0; r < n_ranks; ++r) {
        total += all[static_cast<std::size_t>(r * n_trials + t)];
      }
      if (t == 0 || total < best_potential) {
        best_potential = total;
        best = t;
      }
    }
    for (index_t i = 0; i < n; ++i) {
      closest(i) = std::min(closest(i), static_cast<double>(distances(i, best)));
    }
    for (int r = 0; r < n_ranks; ++r) {
      shares[static_cast<std::size_t>(r)] = all[static_cast<std::size_t>(r * n_trials + best)];
    }
    centers.row(c) = candidates.row(best);
  }
  return centers;
}

}  // namespace onelearn::detail
