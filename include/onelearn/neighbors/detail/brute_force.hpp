#pragma once
// The brute-force k-nearest-neighbour search shared by NearestNeighbors, KNeighborsClassifier
// and KNeighborsRegressor. Not part of the public API.
//
// Local search (one rank's rows): exact_kbest (core/detail/exact_neighbours.hpp, whose top
// comment says how a GEMM picks candidates whose distances are then computed exactly), with
// the local row numbers turned into global ones and each neighbour's label or target attached.
// The exact distance of a pair is the same number on every rank, so the result does not depend
// on how the rows are sharded.
//
// Distributed merge: each rank sends its local k best (distance, global row number, label,
// target) for every query with one all-gather per type; every rank then picks the same global
// k best with the same key, which is the one-process answer on the concatenated rows.

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "onelearn/core/detail/exact_neighbours.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::neighbors::detail {

/// The k nearest neighbours of n_queries queries, query-major (entry m of query i at i * k + m),
/// each list sorted by (distance, index).
struct Neighbours {
  index_t n_queries = 0;
  index_t k = 0;
  std::vector<double> distances;      ///< squared until finish() takes the root
  std::vector<std::int64_t> indices;  ///< global row numbers
  std::vector<std::int64_t> labels;   ///< class index of the neighbour (classifiers), else 0
  std::vector<double> targets;        ///< target of the neighbour (regressors), else 0

  void resize(index_t queries, index_t neighbours) {
    n_queries = queries;
    k = neighbours;
    const auto size = static_cast<std::size_t>(queries * neighbours);
    distances.assign(size, 0.0);
    indices.assign(size, 0);
    labels.assign(size, 0);
    targets.assign(size, 0.0);
  }
};

/// One rank's training rows and where they sit in the concatenation of every rank's rows.
template <class T>
struct TrainingSet {
  Matrix<T> X;                       ///< this rank's rows
  Vector<T> mean;                    ///< mean of this rank's rows (0 without rows)
  std::vector<std::int64_t> labels;  ///< class index of each row (classifiers), else empty
  std::vector<double> targets;       ///< target of each row (regressors), else empty
  std::vector<std::int64_t> rows_per_rank;
  std::int64_t offset = 0;     ///< global row number of this rank's first row
  std::int64_t n_samples = 0;  ///< rows over all ranks
};

/// Orders candidates by (distance, global index): lower index wins ties, as a stable sort.
struct Entry {
  double distance;
  std::int64_t index;
  std::int64_t label;
  double target;

  friend bool operator<(const Entry& a, const Entry& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.index < b.index);
  }
};

/// This rank's k nearest as global rows, with their labels or targets, from the search's local
/// row numbers (`found`: the host's exact_kbest, or a compute space's nearest_k, which gives
/// the same rows and distances).
template <class T>
Neighbours with_training_rows(const TrainingSet<T>& train,
                              const onelearn::detail::ExactNeighbours& found) {
  Neighbours out;
  out.resize(found.n_queries, found.k);
  out.distances = found.distances;
  for (std::size_t e = 0; e < found.indices.size(); ++e) {
    const std::int64_t local = found.indices[e];
    const auto row = static_cast<std::size_t>(local);
    out.indices[e] = train.offset + local;
    if (!train.labels.empty()) out.labels[e] = train.labels[row];
    if (!train.targets.empty()) out.targets[e] = train.targets[row];
  }
  return out;
}

/// The min(k, local rows) nearest local rows of each query, with exact squared distances,
/// global row numbers and the neighbours' labels or targets. Runs on threads; the result is the
/// same on any number of them.
template <class T>
Neighbours local_kbest(const TrainingSet<T>& train, const MatrixRef<T>& Q, index_t k) {
  return with_training_rows(train, onelearn::detail::exact_kbest<T>(train.X, train.mean, Q, k));
}

/// The global k best of every query from each rank's local k best: two all-gathers (doubles:
/// distance and target; int64: index and label), then the same selection on every rank.
template <exec::ExecutionPolicy Exec>
Neighbours merge(const Exec& exec, const Neighbours& local, index_t k,
                 const std::vector<std::int64_t>& rows_per_rank) {
  const index_t nq = local.n_queries;
  const std::size_t entries = local.distances.size();
  std::vector<double> doubles(2 * entries);
  std::vector<std::int64_t> ints(2 * entries);
  for (std::size_t e = 0; e < entries; ++e) {
    doubles[2 * e] = local.distances[e];
    doubles[2 * e + 1] = local.targets[e];
    ints[2 * e] = local.indices[e];
    ints[2 * e + 1] = local.labels[e];
  }
  const std::vector<double> all_doubles = exec.allgatherv(std::span<const double>(doubles));
  const std::vector<std::int64_t> all_ints = exec.allgatherv(std::span<const std::int64_t>(ints));

  // Rank r sent min(k, rows of r) entries per query, query-major, after the ranks before it.
  std::vector<std::size_t> starts, per_query;
  std::size_t start = 0;
  for (const std::int64_t rows : rows_per_rank) {
    const auto kr = static_cast<std::size_t>(std::min<std::int64_t>(k, rows));
    starts.push_back(start);
    per_query.push_back(kr);
    start += kr * static_cast<std::size_t>(nq);
  }
  if (2 * start != all_doubles.size() || 2 * start != all_ints.size()) {
    throw distributed_error("neighbors: expected " + std::to_string(start) +
                            " neighbour candidates from all ranks, found " +
                            std::to_string(all_doubles.size() / 2));
  }

  Neighbours out;
  out.resize(nq, k);
  std::vector<Entry> pool;
  for (index_t i = 0; i < nq; ++i) {
    pool.clear();
    for (std::size_t r = 0; r < starts.size(); ++r) {
      for (std::size_t m = 0; m < per_query[r]; ++m) {
        const std::size_t e = starts[r] + static_cast<std::size_t>(i) * per_query[r] + m;
        pool.push_back(
            {all_doubles[2 * e], all_ints[2 * e], all_ints[2 * e + 1], all_doubles[2 * e + 1]});
      }
    }
    std::partial_sort(pool.begin(), pool.begin() + k, pool.end());
    for (index_t m = 0; m < k; ++m) {
      const auto at = static_cast<std::size_t>(i * k + m);
      const Entry& e = pool[static_cast<std::size_t>(m)];
      out.distances[at] = e.distance;
      out.indices[at] = e.index;
      out.labels[at] = e.label;
      out.targets[at] = e.target;
    }
  }
  return out;
}

/// A 64-bit hash of the bits of `values` (FNV-1a over whole words, then a final mix): equal
/// for equal inputs on every rank, different for different ones but for ~2^-64 odds.
template <class Derived>
std::uint64_t hash_values(const Eigen::DenseBase<Derived>& values, std::uint64_t h) {
  using Scalar = typename Derived::Scalar;
  using Word = std::conditional_t<sizeof(Scalar) == 8, std::uint64_t, std::uint32_t>;
  for (index_t r = 0; r < values.rows(); ++r) {
    for (index_t c = 0; c < values.cols(); ++c) {
      h ^= static_cast<std::uint64_t>(std::bit_cast<Word>(values.derived().coeff(r, c)));
      h *= 0x100000001b3ULL;
    }
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

/// Under a distributed policy, checks that every rank passed the same queries (shape, the bits
/// of every value, and `extra`: k, or a hash of y for score). Collective: one all-reduce of six
/// int64. Every rank sees the same reduced values, so all throw together or none does.
template <exec::ExecutionPolicy Exec, class T>
void check_same_queries(std::string_view where, const Exec& exec, const MatrixRef<T>& X,
                        std::int64_t extra) {
  if constexpr (Exec::is_distributed) {
    const auto h = std::bit_cast<std::int64_t>(hash_values(X, 0xcbf29ce484222325ULL));
    // max of v and of ~v (= -v - 1, order-reversing without overflow) give max and min at once.
    std::array<std::int64_t, 8> v{X.rows(), ~X.rows(), X.cols(), ~X.cols(), extra, ~extra, h, ~h};
    exec.allreduce(std::span(v), exec::reduce_op::max);
    if (v[0] != ~v[1] || v[2] != ~v[3]) {
      throw shape_error(std::string(where) + ": expected the same queries on every rank, found " +
                        "query matrices of different shapes (rows from " + std::to_string(~v[1]) +
                        " to " + std::to_string(v[0]) + ", columns from " + std::to_string(~v[3]) +
                        " to " + std::to_string(v[2]) + ")");
    }
    if (v[4] != ~v[5] || v[6] != ~v[7]) {
      throw distributed_error(std::string(where) + ": expected the same queries (and the same " +
                              "n_neighbors and y) on every rank, found different values on " +
                              "different ranks; every rank must pass all the queries");
    }
  } else {
    (void)where, (void)exec, (void)X, (void)extra;
  }
}

}  // namespace onelearn::neighbors::detail
