#pragma once
// The brute-force k-nearest-neighbour search shared by NearestNeighbors, KNeighborsClassifier
// and KNeighborsRegressor. Not part of the public API.
//
// Local search (one rank's rows). Training rows are taken in blocks of train_block rows,
// queries in blocks of query_block rows, both centred on the rank's training mean (distances do
// not change; the norms, hence the rounding, shrink to the spread of the data). Per pair of
// blocks one GEMM (in T) gives the dot products, and the expansion
// e = ||q||² - 2 q·x + ||x||² approximates each squared distance. e is only used to *select*:
// its rounding error is bounded,
//     |e - s| <= w = 4 (p + 4) eps_T (||q||² + ||x||²)
// (about twice the worst case (p + 2) eps_T (||q||² + ||x||²) of the norms, the dot product
// and the two additions), so with U the k-th smallest upper bound e + w seen so far, every row
// whose lower bound e - w <= U is kept as a candidate, and no row of the true k nearest can be
// missed. The candidates (typically k plus a few) then get their squared distance recomputed
// exactly, by subtracting first, in double, in a fixed scalar order, from the rows as given;
// the k best by (exact distance, global row number) win. So the neighbours are the exact ones
// whatever cancellation the expansion suffers, ties go to the lower row number (as a stable
// sort), and the result does not depend on how the rows are blocked or sharded: the exact
// distance of a pair is the same number on every rank.
//
// Distributed merge: each rank sends its local k best (distance, global row number, label,
// target) for every query with one all-gather per type; every rank then picks the same global
// k best with the same key, which is the one-process answer on the concatenated rows.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/core/detail/distances.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::neighbors::detail {

/// Query rows per block and training rows per block: a query_block x train_block block of
/// products (0.5 MiB in double) stays in L2 between the GEMM that writes it and the scan that
/// reads it. (Measured on bench/README.md's knn workload; 256 x 512 and 512 x 1024 were no better.)
inline constexpr index_t query_block = 128;
inline constexpr index_t train_block = 512;

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

/// ||a - b||², subtracting first, in double, in index order: the same number for the same pair
/// on every rank and in every blocking (a plain loop: no vectorised reduction whose order could
/// depend on alignment).
template <class T>
double exact_squared_distance(const T* a, const T* b, index_t p) {
  double sum = 0;
  for (index_t j = 0; j < p; ++j) {
    const double d = static_cast<double>(a[j]) - static_cast<double>(b[j]);
    sum += d * d;
  }
  return sum;
}

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

/// The min(k, local rows) nearest local rows of each query, with exact squared distances, on
/// the calling thread.
template <class T>
Neighbours local_kbest_serial(const TrainingSet<T>& train, const MatrixRef<T>& Q, index_t k) {
  const index_t n = train.X.rows();
  const index_t p = Q.cols();
  const index_t nq = Q.rows();
  const index_t k_local = std::min(k, n);
  Neighbours out;
  out.resize(nq, k_local);
  if (k_local == 0 || nq == 0) return out;

  // The bound on the expansion's rounding error, with a factor 2 to spare (see the top).
  const T c = T(4) * static_cast<T>(p + 4) * std::numeric_limits<T>::epsilon();
  const T infinity = std::numeric_limits<T>::infinity();
  // Both sides centred on this rank's training mean: distances do not change, and the norms
  // in the expansion (hence its error bound) shrink to the spread of the data. Only the
  // selection sees the centred values; the exact distances use the rows as given.
  const Matrix<T> Qc = Q.rowwise() - train.mean.transpose();
  const Vector<T> q_norms = onelearn::detail::row_squared_norms<T>(Qc);

  Matrix<T> Xc(std::min(train_block, n), p);
  Vector<T> x_norms(Xc.rows());
  Eigen::Array<T, 1, Eigen::Dynamic> a_block(Xc.rows());
  Matrix<T> block(std::min(query_block, nq), Xc.rows());
  // Per query: a max-heap of its k smallest upper bounds, and the candidates (lower bound,
  // local row) whose lower bound was <= the heap's top when seen.
  std::vector<T> heaps(static_cast<std::size_t>(nq * k_local));
  std::vector<index_t> heap_sizes(static_cast<std::size_t>(nq), 0);
  std::vector<std::vector<std::pair<T, index_t>>> candidates(static_cast<std::size_t>(nq));
  std::vector<std::size_t> caps(static_cast<std::size_t>(nq),
                                static_cast<std::size_t>(4 * k_local + 32));

  for (index_t t0 = 0; t0 < n; t0 += train_block) {
    const index_t mt = std::min(train_block, n - t0);
    auto xc = Xc.topRows(mt);
    xc = train.X.middleRows(t0, mt).rowwise() - train.mean.transpose();
    auto x_norm = x_norms.head(mt);
    x_norm = xc.rowwise().squaredNorm();
    // lower_j = (1 - c)(||q||² + ||x_j||²) - 2 q·x_j = e_j - w_j, with the unclamped
    // expansion e_j (its error bound holds before clamping). Split as a_j - 2 q·x_j + b with
    // a_j = (1 - c)||x_j||² per training row and b = (1 - c)||q||² per query, so the test
    // lower_j <= top is a_j - 2 q·x_j <= top - b: one multiply-add per pair.
    auto a = a_block.head(mt);
    a = (T(1) - c) * x_norm.transpose().array();
    for (index_t q0 = 0; q0 < nq; q0 += query_block) {
      const index_t mq = std::min(query_block, nq - q0);
      auto dots = block.topLeftCorner(mq, mt);
      dots.noalias() = Qc.middleRows(q0, mq) * xc.transpose();
      for (index_t i = 0; i < mq; ++i) {
        const index_t q = q0 + i;
        const auto uq = static_cast<std::size_t>(q);
        const T nx = q_norms(q);
        const T b = (T(1) - c) * nx;
        const auto row = dots.row(i).array();
        T* heap = heaps.data() + q * k_local;
        index_t& size = heap_sizes[uq];
        auto& list = candidates[uq];
        T top = size == k_local ? heap[0] : infinity;
        T limit = top - b;
        const auto visit = [&](index_t j) {
          const T v = a(j) - T(2) * row(j);
          if (!(v <= limit)) return;
          const T lower = v + b;
          const T upper = lower + T(2) * c * (nx + x_norm(j));
          list.emplace_back(lower, t0 + j);
          if (size < k_local) {
            heap[size++] = upper;
            std::push_heap(heap, heap + size);
          } else if (upper < heap[0]) {
            std::pop_heap(heap, heap + size);
            heap[size - 1] = upper;
            std::push_heap(heap, heap + size);
          }
          top = size == k_local ? heap[0] : infinity;
          limit = top - b;
          if (list.size() >= caps[uq]) {
            std::erase_if(list, [top](const auto& cand) { return cand.first > top; });
            caps[uq] = std::max(caps[uq], 2 * list.size());
          }
        };
        // Most pairs fail the test: check a chunk's minimum first (vectorised), and visit
        // the pairs one by one only in the chunks that have a candidate.
        constexpr index_t chunk = 16;
        index_t j0 = 0;
        for (; j0 + chunk <= mt; j0 += chunk) {
          const T least =
              (a.template segment<chunk>(j0) - T(2) * row.template segment<chunk>(j0)).minCoeff();
          if (!(least <= limit)) continue;
          for (index_t j = j0; j < j0 + chunk; ++j) visit(j);
        }
        for (index_t j = j0; j < mt; ++j) visit(j);
      }
    }
  }

  // Exact distances of the candidates that can still be among the k nearest.
  std::vector<Entry> entries;
  for (index_t q = 0; q < nq; ++q) {
    const auto uq = static_cast<std::size_t>(q);
    const T top = heaps[static_cast<std::size_t>(q * k_local)];
    const T* query = Q.row(q).data();
    entries.clear();
    for (const auto& [lower, j] : candidates[uq]) {
      if (lower > top) continue;
      const auto uj = static_cast<std::size_t>(j);
      entries.push_back({exact_squared_distance(query, train.X.row(j).data(), p), train.offset + j,
                         train.labels.empty() ? 0 : train.labels[uj],
                         train.targets.empty() ? 0.0 : train.targets[uj]});
    }
    std::partial_sort(entries.begin(), entries.begin() + k_local, entries.end());
    for (index_t m = 0; m < k_local; ++m) {
      const auto at = static_cast<std::size_t>(q * k_local + m);
      const Entry& e = entries[static_cast<std::size_t>(m)];
      out.distances[at] = e.distance;
      out.indices[at] = e.index;
      out.labels[at] = e.label;
      out.targets[at] = e.target;
    }
  }
  return out;
}

/// The min(k, local rows) nearest local rows of each query, with exact squared distances.
/// Chunks of queries run on threads (core/detail/parallel.hpp), each the whole search for its
/// queries; a query's answer does not depend on the other queries, so the result is the same
/// on any number of threads.
template <class T>
Neighbours local_kbest(const TrainingSet<T>& train, const MatrixRef<T>& Q, index_t k) {
  const index_t nq = Q.rows();
  const index_t k_local = std::min(k, train.X.rows());
  Neighbours out;
  out.resize(nq, k_local);
  if (k_local == 0 || nq == 0) return out;
  // A few chunks, a multiple of query_block each: every chunk centres the training blocks
  // again, which costs n x p per chunk against the nq x n x p of the products.
  constexpr index_t max_query_chunks = 8;
  const index_t grain = onelearn::detail::fixed_chunks(nq, query_block, max_query_chunks);
  onelearn::detail::for_each_chunk(nq, grain, [&](index_t, index_t begin, index_t end) {
    const Neighbours part = local_kbest_serial<T>(train, Q.middleRows(begin, end - begin), k);
    const auto at = static_cast<std::ptrdiff_t>(begin * k_local);
    std::copy(part.distances.begin(), part.distances.end(), out.distances.begin() + at);
    std::copy(part.indices.begin(), part.indices.end(), out.indices.begin() + at);
    std::copy(part.labels.begin(), part.labels.end(), out.labels.begin() + at);
    std::copy(part.targets.begin(), part.targets.end(), out.targets.begin() + at);
  });
  return out;
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
