#pragma once
// cluster::KMeans in a compute space against the same fit on the host, shared by
// unit/test_kmeans_space.cpp (the CPU Thrust systems; under exec::mpi by mpi/test_kmeans_space.cpp)
// and cuda/test_spaces_cuda.cu (the CUDA system): the same number of iterations, the same
// labels, centres and inertia to the space checks' tolerances (double 1e-12, float 1e-5,
// relative), the same predictions. The blobs are far apart next to their spread, so no row is
// near a tie between two centres, where the two assignments may round differently.
//
// Cases: k-means++ with several runs; given centres, one of them so far away that its cluster
// is empty after the first step (the relocation, read on the host); a tolerance that stops on
// the centre shift before strict convergence (the final assignment in the space).

#include <doctest/doctest.h>

#include <cstdint>
#include <random>

#include "cuda/space_checks.hpp"
#include "onelearn/cluster/k_means.hpp"
#include "onelearn/exec/local.hpp"

namespace onelearn::space_test {

/// n rows around `blobs` centres 10 apart in each of p features (spread 1), offset by 50.
template <class T>
Matrix<T> make_blobs(index_t n, index_t p, index_t blobs, std::uint64_t salt) {
  std::mt19937_64 rng(seed + salt);
  std::normal_distribution<double> normal(0.0, 1.0);
  Matrix<double> centres(blobs, p);
  for (index_t c = 0; c < blobs; ++c) {
    for (index_t j = 0; j < p; ++j) centres(c, j) = 50.0 + 10.0 * normal(rng);
  }
  Matrix<T> X(n, p);
  for (index_t i = 0; i < n; ++i) {
    const index_t c = i % blobs;
    for (index_t j = 0; j < p; ++j) X(i, j) = static_cast<T>(centres(c, j) + normal(rng));
  }
  return X;
}

/// The fit in space `s` (policy `exec`, each rank passing its own rows) against the host's
/// one-process fit on all of X, whose rows [first, first + mine.rows()) the caller passed.
template <class T, class Exec, class S>
void check_kmeans_fit(const Exec& exec, const S& s, const cluster::KMeansParams& params,
                      const Matrix<T>& init, const Matrix<T>& X, index_t first,
                      const Matrix<T>& mine) {
  const double tol = tolerance<T>();
  cluster::KMeans<T> on_host(params);
  cluster::KMeans<T, Exec, S> in_space(params, exec, s);
  if (init.size() > 0) {
    on_host.set_init(init);
    in_space.set_init(init);
  }
  on_host.fit(X);
  in_space.fit(mine);
  CHECK(in_space.n_iter() == on_host.n_iter());
  CHECK(in_space.labels() == on_host.labels().segment(first, mine.rows()));
  check_close("cluster_centers", in_space.cluster_centers(), on_host.cluster_centers(), tol);
  check_close("inertia", static_cast<double>(in_space.inertia()),
              static_cast<double>(on_host.inertia()), tol);
  CHECK(in_space.predict(mine) == on_host.predict(mine));
}

/// The three cases on blobs, for this rank's block of rows (all of them under exec::local).
template <class T, class Exec, class S>
void check_kmeans_in_space(const Exec& exec, const S& s) {
  INFO("space ", S::name, ", ", (sizeof(T) == 4 ? "float" : "double"), ", ", exec.size(),
       " rank(s)");
  const index_t n = 3000;
  const index_t p = 5;
  const Matrix<T> X = make_blobs<T>(n, p, 6, 11);
  const index_t first = n * exec.rank() / exec.size();
  const index_t last = n * (exec.rank() + 1) / exec.size();
  const Matrix<T> mine = X.middleRows(first, last - first);
  {
    INFO("k-means++, 3 runs");
    check_kmeans_fit<T>(exec, s, {.n_clusters = 6, .n_init = 3, .random_state = 5}, Matrix<T>(),
                        X, first, mine);
  }
  {
    INFO("given centres, one far away: an empty cluster relocated");
    Matrix<T> init = X.topRows(6);
    init.row(5).setConstant(T(1000));
    check_kmeans_fit<T>(exec, s, {.n_clusters = 6, .max_iter = 50}, init, X, first, mine);
  }
  {
    INFO("stopped by the centre shift: the final assignment");
    check_kmeans_fit<T>(exec, s,
                        {.n_clusters = 9, .n_init = 1, .max_iter = 100, .tol = 1e-2,
                         .random_state = 2},
                        Matrix<T>(), X, first, mine);
  }
}

}  // namespace onelearn::space_test
