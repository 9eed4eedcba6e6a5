#pragma once
// Lloyd's iterations in a compute space other than the host (space/space.hpp): the rows live in
// the space (copied there once per fit on a device) and every iteration runs one
// space::lloyd_step there (assignment, per-cluster sums and counts, changed labels), returning
// k x p sums to the host for the one all-reduce. The decisions are those of lloyd() in
// kmeans_lloyd.hpp with the plain assignment (bounded = false): the same all-reduce, the same
// stopping rules, the same empty-cluster relocation, the same final assignment, so the result
// is the host's to rounding (the sums are added in the space's chunk order; a label can differ
// only where two centres are within rounding of each other).
//
// Why not Hamerly's bounds here: they skip rows one by one, which pays on a CPU whose cost is
// the GEMM per row, but on a device every row is one thread of the same kernel, and the bounds
// would add two values per row of traffic to save arithmetic the device has in excess. On the
// threaded CPU systems (thrust_omp, thrust_tbb: those with a space::chunk_loop) they pay as on
// the host, so there the host's bounded iterations (lloyd() in kmeans_lloyd.hpp) run on the
// space's rows, which are the host's, with the system's threads doing the chunks: the host's
// bits. Their own form of the plain step (one pass per iteration over every row) took 1.22-1.44x
// the host's fit on bench/'s kmeans (200k x 32, k = 16, 2 threads, 2026-11-29), since the host
// skips most rows after the first iterations.
//
// The relocation of an empty cluster (rare: a cluster left with no rows) reads the farthest rows
// on the host, from the caller's rows centred there for the occasion, after one copy of the
// labels back.

#include <span>
#include <utility>

#include "onelearn/cluster/detail/kmeans_lloyd.hpp"
#include "onelearn/cluster/detail/kmeans_rows.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/space/concept.hpp"
#include "onelearn/space/data.hpp"
#include "onelearn/space/host.hpp"
#include "onelearn/space/results.hpp"

namespace onelearn::detail {

/// lloyd_in_space by the space's kernels (one space::lloyd_step per iteration).
template <class T, exec::ExecutionPolicy Exec, space::ComputeSpace S, class OnIteration>
LloydResult<T> lloyd_by_space_steps(const Exec& exec, const S& s, const RowPartition& rows,
                                    const MatrixRef<T>& X, const Vector<T>& mean,
                                    space::matrix_view<const T> Xs, Matrix<T> centers,
                                    index_t max_iter, double tol, const OnIteration& on_iteration) {
  const index_t n = Xs.rows;
  const index_t p = Xs.cols;
  const index_t k = centers.rows();
  // Two label buffers in the space, swapped each iteration: the step writes one and counts the
  // changes against the other, so the labels never travel to the host inside the loop.
  space::vector<S, std::int64_t> labels(s, n);
  space::vector<S, std::int64_t> previous(s, n);
  // [sums (k x p, row-major), counts (k), changed]: one all-reduce per iteration, as in lloyd().
  Vector<double> totals(k * p + k + 1);
  Eigen::Map<Matrix<double>> sums(totals.data(), k, p);
  auto counts = totals.segment(k * p, k);
  bool strict_convergence = false;
  bool first = true;
  LloydResult<T> out;

  while (out.n_iter < max_iter) {
    std::swap(labels, previous);
    // The first step has no previous labels: every label counts as changed.
    const space::vector_view<const std::int64_t> before =
        first ? space::vector_view<const std::int64_t>{} : previous.view();
    space::lloyd_sums step = lloyd_step(s, Xs, centers, labels.mutable_view(), before);
    first = false;
    sums = step.sums;
    counts = step.counts;
    totals(k * p + k) = step.changed;
    exec.allreduce(std::span<double>(totals.data(), static_cast<std::size_t>(totals.size())),
                   exec::reduce_op::sum);
    if ((counts.array() == 0).any()) {
      const Labels on_host = labels.to_host();
      const Matrix<T> centred = X.rowwise() - mean.transpose();
      relocate_empty_clusters<T>(exec, rows, centred, centers, on_host, sums, counts);
    }
    for (index_t j = 0; j < k; ++j) {
      if (counts(j) > 0) sums.row(j) /= counts(j);
    }
    const Matrix<T> next = sums.cast<T>();
    const double shift =
        (next.template cast<double>() - centers.template cast<double>()).squaredNorm();
    centers = next;
    ++out.n_iter;
    on_iteration(out.n_iter, totals(k * p + k), shift);
    if (totals(k * p + k) == 0) {
      strict_convergence = true;
      break;
    }
    if (shift <= tol) break;
  }
  if (!strict_convergence) nearest_rows(s, Xs, centers, labels.mutable_view());

  double inertia = paired_squared_distances(s, Xs, centers, labels.view()).sum();
  exec.allreduce(std::span<double>(&inertia, 1), exec::reduce_op::sum);
  out.inertia = inertia;
  out.labels = labels.to_host();
  out.centers = std::move(centers);
  return out;
}

/// Lloyd iterations from `centers` on this rank's rows centred on `mean`: `Xs` in space `s`,
/// and `X`, the caller's rows on the host before centring (read only to relocate an empty
/// cluster). Same contract as lloyd().
template <class T, exec::ExecutionPolicy Exec, space::ComputeSpace S, class OnIteration>
LloydResult<T> lloyd_in_space(const Exec& exec, const S& s, const RowPartition& rows,
                              const MatrixRef<T>& X, const Vector<T>& mean,
                              space::matrix_view<const T> Xs, Matrix<T> centers, index_t max_iter,
                              double tol, const OnIteration& on_iteration) {
  if constexpr (requires { chunk_loop(s); }) {
    return lloyd<T>(exec, rows, MatrixRef<T>(space::detail::eigen(Xs)), std::move(centers),
                    max_iter, tol, true, on_iteration, chunk_loop(s));
  } else {
    return lloyd_by_space_steps<T>(exec, s, rows, X, mean, Xs, std::move(centers), max_iter, tol,
                                   on_iteration);
  }
}

}  // namespace onelearn::detail
