#pragma once
// The CPU threading seam: the kernels split their rows into chunks and run the chunks through
// for_each_chunk, on OpenMP threads when the program is compiled with OpenMP (link
// onelearn::openmp, or add -fopenmp) and one after the other otherwise. Algorithms never
// mention threads; a Thrust backend replaces these loops, not the algorithms.
//
// Reproducibility: a chunk, never a thread, is the unit of any partial result. A reduction
// keeps one partial per chunk and adds the partials in chunk order, and the chunk boundaries
// depend only on the number of rows, so a fit gives the same bits on 1 thread or 16 (and with
// or without OpenMP). fixed_chunks() bounds the number of chunks, and so the memory that
// per-chunk partials take, independently of the thread count.
//
// Under MPI each rank runs its own threads: with several ranks per node, set OMP_NUM_THREADS
// so that ranks x threads does not exceed the cores (the test suite runs its MPI tests with
// one thread per rank).

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "onelearn/core/types.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace onelearn::detail {

/// The threads a for_each_chunk may use: for kernels that cut work whose result does not
/// depend on the cut (no partials) into one piece per thread.
[[nodiscard]] inline index_t parallel_width() noexcept {
#ifdef _OPENMP
  return static_cast<index_t>(omp_get_max_threads());
#else
  return 1;
#endif
}

/// Number of chunks of `grain` rows that cover n rows.
[[nodiscard]] constexpr index_t chunk_count(index_t n, index_t grain) noexcept {
  return n <= 0 ? 0 : (n + grain - 1) / grain;
}

/// A grain, a multiple of `block`, such that n rows make at most `max_chunks` chunks: for
/// reductions whose per-chunk partials are large (k-means keeps a k x p sum per chunk).
[[nodiscard]] constexpr index_t fixed_chunks(index_t n, index_t block,
                                             index_t max_chunks) noexcept {
  const index_t blocks = chunk_count(n, block);
  return std::max<index_t>(1, chunk_count(blocks, max_chunks)) * block;
}

/// Calls body(chunk, begin, end) for every chunk [chunk * grain, min(n, (chunk + 1) * grain))
/// of the rows [0, n), in parallel when OpenMP is on. `body` must not throw: an exception cannot
/// leave an OpenMP region (the kernels run here validate nothing; their callers already have).
template <class Body>
void for_each_chunk(index_t n, index_t grain, Body&& body) {
  const index_t chunks = chunk_count(n, grain);
  // One chunk runs here, without entering OpenMP at all: a parallel region with a false `if`
  // still sets up a team of one (about a microsecond), which a network's dozen small kernels a
  // step paid (tiny_mlp: 1.2M samples/s against 5.6-7.7M before its kernels went by chunks).
  if (chunks <= 1) {
    if (n > 0) body(index_t{0}, index_t{0}, n);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (chunks > 1)
#endif
  for (index_t chunk = 0; chunk < chunks; ++chunk) {
    const index_t begin = chunk * grain;
    body(chunk, begin, std::min(n, begin + grain));
  }
}

/// for_each_chunk as a value: the chunk loop a host algorithm takes as a parameter, so that a
/// CPU compute space can run the same algorithm with its own threads doing the chunks (KMeans's
/// bounded Lloyd iterations under space::thrust_omp and thrust_tbb: space/detail/
/// thrust_kernels.hpp's system_chunks). The chunks are the same, so are the bits.
struct host_chunks {
  template <class Body>
  void operator()(index_t n, index_t grain, Body&& body) const {
    for_each_chunk(n, grain, std::forward<Body>(body));
  }
  /// The threads that run the chunks (a kernel that cuts its work into one piece per thread).
  [[nodiscard]] static index_t width() noexcept { return parallel_width(); }
};

/// At most this many partial results per reduction: enough chunks to balance any thread count
/// a node has, few enough that k x p (or p x p) partials stay small.
inline constexpr index_t max_partials = 64;

/// The sum over the rows [0, n) of per-row contributions, computed in parallel: the rows are cut
/// into at most max_partials chunks (a multiple of `block` rows each), body(begin, end, partial)
/// adds the contribution of rows [begin, end) into `partial` (a copy of `zero`), and the partials
/// are added in chunk order. Partial needs copy and +=.
template <class Partial, class Body>
Partial sum_over_chunks(index_t n, index_t block, const Partial& zero, Body&& body) {
  const index_t grain = fixed_chunks(n, block, max_partials);
  std::vector<Partial> partials(static_cast<std::size_t>(chunk_count(n, grain)), zero);
  for_each_chunk(n, grain, [&](index_t chunk, index_t begin, index_t end) {
    body(begin, end, partials[static_cast<std::size_t>(chunk)]);
  });
  Partial total = zero;
  for (const Partial& partial : partials) total += partial;
  return total;
}

}  // namespace onelearn::detail
