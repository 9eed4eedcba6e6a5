#pragma once
// The exact k nearest rows of each query on the host, returning local row numbers: the search
// behind the k-nearest-neighbour estimators (neighbors/detail/brute_force.hpp adds global row
// numbers, labels and targets, and merges ranks) and the host half of space::nearest_k
// (space/host.hpp).
//
// Training rows are taken in blocks of knn_train_block rows, queries in blocks of
// knn_query_block rows, both centred on the training mean (distances do not change; the norms,
// hence the rounding, shrink to the spread of the data). Per pair of blocks one GEMM (in T)
// gives the dot products, and the expansion e = ||q||^2 - 2 q.x + ||x||^2 approximates each
// squared distance. e is only used to *select*: its rounding error is bounded,
//     |e - s| <= w = 4 (p + 4) eps_T (||q||^2 + ||x||^2)
// (about twice the worst case (p + 2) eps_T (||q||^2 + ||x||^2) of the norms, the dot product
// and the two additions), so with U the k-th smallest upper bound e + w seen so far, every row
// whose lower bound e - w <= U is kept as a candidate, and no row of the true k nearest can be
// missed. The candidates (typically k plus a few) then get their squared distance recomputed
// exactly, by subtracting first, in double, in a fixed scalar order, from the rows as given;
// the k best by (exact distance, row) win. So the neighbours are the exact ones whatever
// cancellation the expansion suffers, ties go to the lower row (as a stable sort), and the
// result does not depend on how the rows are blocked: the exact distance of a pair is the same
// number in every blocking.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "onelearn/core/detail/distances.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::detail {

/// Query rows per block and training rows per block: a query block x training block of
/// products (0.5 MiB in double) stays in L2 between the GEMM that writes it and the scan that
/// reads it. (Measured on bench/README.md's knn workload; 256 x 512 and 512 x 1024 were no
/// better.)
inline constexpr index_t knn_query_block = 128;
inline constexpr index_t knn_train_block = 512;

/// exact_kbest cuts the queries into at most this many chunks, a multiple of knn_query_block
/// each: every chunk centres the training blocks again, which costs n x p per chunk against the
/// nq x n x p of the products.
inline constexpr index_t knn_max_query_chunks = 8;

/// The k nearest rows of n_queries queries, query-major (entry m of query i at i * k + m), each
/// list sorted by (squared distance, row).
struct ExactNeighbours {
  index_t n_queries = 0;
  index_t k = 0;
  std::vector<double> distances;      ///< squared, exact
  std::vector<std::int64_t> indices;  ///< rows of the training matrix

  void resize(index_t queries, index_t neighbours) {
    n_queries = queries;
    k = neighbours;
    const auto size = static_cast<std::size_t>(queries * neighbours);
    distances.assign(size, 0.0);
    indices.assign(size, 0);
  }
};

/// ||a - b||^2, subtracting first, in double, in index order (a plain loop: the same number for
/// the same pair in every blocking, and in every space: space/detail/thrust_kernels.hpp computes
/// it with the same operations).
template <class T>
double exact_squared_distance(const T* a, const T* b, index_t p) {
  double sum = 0;
  for (index_t j = 0; j < p; ++j) {
    const double d = static_cast<double>(a[j]) - static_cast<double>(b[j]);
    sum += d * d;
  }
  return sum;
}

/// Orders candidates by (distance, row): the lower row wins ties, as a stable sort.
struct NeighbourEntry {
  double distance;
  std::int64_t index;

  friend bool operator<(const NeighbourEntry& a, const NeighbourEntry& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.index < b.index);
  }
};

/// The min(k, rows of X) nearest rows of X to each query, on the calling thread. `mean` is the
/// mean of the rows of X (both sides are centred on it for the selection only).
template <class T>
ExactNeighbours exact_kbest_serial(const MatrixRef<T>& X, const Vector<T>& mean,
                                   const MatrixRef<T>& Q, index_t k) {
  const index_t n = X.rows();
  const index_t p = Q.cols();
  const index_t nq = Q.rows();
  const index_t k_local = std::min(k, n);
  ExactNeighbours out;
  out.resize(nq, k_local);
  if (k_local == 0 || nq == 0) return out;

  // The bound on the expansion's rounding error, with a factor 2 to spare (see the top).
  const T c = T(4) * static_cast<T>(p + 4) * std::numeric_limits<T>::epsilon();
  const T infinity = std::numeric_limits<T>::infinity();
  // Both sides centred on the training mean: distances do not change, and the norms
  // in the expansion (hence its error bound) shrink to the spread of the data. Only the
  // selection sees the centred values; the exact distances use the rows as given.
  const Matrix<T> Qc = Q.rowwise() - mean.transpose();
  const Vector<T> q_norms = row_squared_norms<T>(Qc);

  Matrix<T> Xc(std::min(knn_train_block, n), p);
  Vector<T> x_norms(Xc.rows());
  Eigen::Array<T, 1, Eigen::Dynamic> a_block(Xc.rows());
  Matrix<T> block(std::min(knn_query_block, nq), Xc.rows());
  // Per query: a max-heap of its k smallest upper bounds, and the candidates (lower bound,
  // local row) whose lower bound was <= the heap's top when seen.
  std::vector<T> heaps(static_cast<std::size_t>(nq * k_local));
  std::vector<index_t> heap_sizes(static_cast<std::size_t>(nq), 0);
  std::vector<std::vector<std::pair<T, index_t>>> candidates(static_cast<std::size_t>(nq));
  std::vector<std::size_t> caps(static_cast<std::size_t>(nq),
                                static_cast<std::size_t>(4 * k_local + 32));

  for (index_t t0 = 0; t0 < n; t0 += knn_train_block) {
    const index_t mt = std::min(knn_train_block, n - t0);
    auto xc = Xc.topRows(mt);
    xc = X.middleRows(t0, mt).rowwise() - mean.transpose();
    auto x_norm = x_norms.head(mt);
    x_norm = xc.rowwise().squaredNorm();
    // lower_j = (1 - c)(||q||² + ||x_j||²) - 2 q·x_j = e_j - w_j, with the unclamped
    // expansion e_j (its error bound holds before clamping). Split as a_j - 2 q·x_j + b with
    // a_j = (1 - c)||x_j||² per training row and b = (1 - c)||q||² per query, so the test
    // lower_j <= top is a_j - 2 q·x_j <= top - b: one multiply-add per pair.
    auto a = a_block.head(mt);
    a = (T(1) - c) * x_norm.transpose().array();
    for (index_t q0 = 0; q0 < nq; q0 += knn_query_block) {
      const index_t mq = std::min(knn_query_block, nq - q0);
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
  std::vector<NeighbourEntry> entries;
  for (index_t q = 0; q < nq; ++q) {
    const auto uq = static_cast<std::size_t>(q);
    const T top = heaps[static_cast<std::size_t>(q * k_local)];
    const T* query = Q.row(q).data();
    entries.clear();
    for (const auto& [lower, j] : candidates[uq]) {
      if (lower > top) continue;
      entries.push_back({exact_squared_distance(query, X.row(j).data(), p), j});
    }
    std::partial_sort(entries.begin(), entries.begin() + k_local, entries.end());
    for (index_t m = 0; m < k_local; ++m) {
      const auto at = static_cast<std::size_t>(q * k_local + m);
      const NeighbourEntry& e = entries[static_cast<std::size_t>(m)];
      out.distances[at] = e.distance;
      out.indices[at] = e.index;
    }
  }
  return out;
}

/// The min(k, local rows) nearest local rows of each query, with exact squared distances.
/// Chunks of queries run on threads (core/detail/parallel.hpp), each the whole search for its
/// queries; a query's answer does not depend on the other queries, so the result is the same
/// on any number of threads.
template <class T>
ExactNeighbours exact_kbest(const MatrixRef<T>& X, const Vector<T>& mean, const MatrixRef<T>& Q,
                            index_t k) {
  const index_t nq = Q.rows();
  const index_t k_local = std::min(k, X.rows());
  ExactNeighbours out;
  out.resize(nq, k_local);
  if (k_local == 0 || nq == 0) return out;
  const index_t grain = fixed_chunks(nq, knn_query_block, knn_max_query_chunks);
  for_each_chunk(nq, grain, [&](index_t, index_t begin, index_t end) {
    const ExactNeighbours part =
        exact_kbest_serial<T>(X, mean, Q.middleRows(begin, end - begin), k);
    const auto at = static_cast<std::ptrdiff_t>(begin * k_local);
    std::copy(part.distances.begin(), part.distances.end(), out.distances.begin() + at);
    std::copy(part.indices.begin(), part.indices.end(), out.indices.begin() + at);
  });
  return out;
}

}  // namespace onelearn::detail
