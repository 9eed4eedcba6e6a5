#pragma once
// Estimators in a compute space against the same fit on the host, shared by
// unit/test_estimators_in_space.cpp (the CPU Thrust systems), mpi/test_estimators_in_space.cpp
// (the same under exec::mpi) and cuda/test_spaces_cuda.cu (the CUDA system).
//
// cluster::KMeans: the same number of iterations, the same labels, centres and inertia to the
// space checks' tolerances (double 1e-12, float 1e-5, relative), the same predictions. The blobs
// are far apart next to their spread, so no row is near a tie between two centres, where the two
// assignments may round differently. Cases: k-means++ with several runs; given centres, one of
// them so far away that its cluster is empty after the first step (the relocation, read on the
// host); a tolerance that stops on the centre shift before strict convergence (the final
// assignment in the space).
//
// The k-nearest-neighbour models: the same neighbours (rows and distances, bit for bit, ties
// included: the data has duplicated rows) and the same predictions and probabilities.
//
// linear_model::LogisticRegression: the same iterations and predictions, coefficients and
// intercepts to 1e-9 relative in double (L-BFGS carries the evaluations' 1e-16 rounding
// differences through its steps and line searches), 1e-5 in float; binary and multinomial,
// weighted or not, with and without intercept.

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>

#include "cuda/space_checks.hpp"
#include "onelearn/cluster/k_means.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/linear_model/logistic_regression.hpp"
#include "onelearn/neighbors/k_neighbors_classifier.hpp"
#include "onelearn/neighbors/k_neighbors_regressor.hpp"
#include "onelearn/neighbors/nearest_neighbors.hpp"

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
  // The threaded CPU systems run the host's own iterations with their threads doing the same
  // chunks (space::chunk_loop): in one process, the host's bits.
  if constexpr (requires { chunk_loop(s); }) {
    if (exec.size() == 1) {
      CHECK(in_space.cluster_centers() == on_host.cluster_centers());
      CHECK(in_space.inertia() == on_host.inertia());
    }
  }
}

/// The three cases on blobs, for this rank's block of rows (all of them under exec::local).
template <class T, class Exec, class S>
void check_kmeans_in_space(const Exec& exec, const S& s) {
  INFO("space ", S::name, ", ", std::string(sizeof(T) == 4 ? "float" : "double"), ", ", exec.size(),
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

/// LogisticRegression in space `s` (policy `exec`, this rank's rows [first, first + rows))
/// against the host's one-process fit on all rows.
template <class T, class Exec, class S>
void check_logistic_fit(const Exec& exec, const S& s,
                        const linear_model::LogisticRegressionParams& params, const Matrix<T>& X,
                        const Labels& y, const Vector<T>& w, index_t first, index_t rows) {
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-9;
  linear_model::LogisticRegression<T> on_host(params);
  linear_model::LogisticRegression<T, Exec, S> in_space(params, exec, s);
  const Matrix<T> mine = X.middleRows(first, rows);
  if (w.size() > 0) {
    on_host.fit(X, y, w);
    in_space.fit(mine, y.segment(first, rows), w.segment(first, rows));
  } else {
    on_host.fit(X, y);
    in_space.fit(mine, y.segment(first, rows));
  }
  CHECK(on_host.converged());
  CHECK(in_space.converged());
  CHECK(in_space.n_iter() == on_host.n_iter());
  CHECK(in_space.classes() == on_host.classes());
  check_close("coef", in_space.coef(), on_host.coef(), tol);
  check_close("intercept", in_space.intercept(), on_host.intercept(), tol);
  CHECK(in_space.predict(mine) == on_host.predict(mine));
}

/// Binary and multinomial fits on blobs, weighted or not, with and without intercept.
template <class T, class Exec, class S>
void check_logistic_in_space(const Exec& exec, const S& s) {
  INFO("space ", S::name, ", ", std::string(sizeof(T) == 4 ? "float" : "double"), ", ", exec.size(),
       " rank(s)");
  const index_t n = 900;
  // Standardised (the blobs sit around 50, 10 apart): L-BFGS converges in a few dozen
  // iterations, where on raw blobs it runs out of iterations far from the optimum and its
  // iterates amplify any rounding difference.
  const Matrix<T> X = ((make_blobs<double>(n, 4, 6, 31).array() - 50.0) / 10.0).matrix().template cast<T>();
  // Classes from the blobs, two blobs each, and a few labels flipped so that no class is
  // separable (a finite optimum even with a small penalty).
  Labels multi(n);
  Labels binary(n);
  std::mt19937_64 rng(seed + 5);
  Vector<T> w(n);
  for (index_t i = 0; i < n; ++i) {
    multi(i) = (i % 6) / 2;
    if (rng() % 7 == 0) multi(i) = static_cast<std::int64_t>(rng() % 3);
    binary(i) = multi(i) == 1 ? 5 : -1;
    w(i) = static_cast<T>(0.5 + static_cast<double>(rng() % 100) / 50.0);
  }
  const index_t first = n * exec.rank() / exec.size();
  const index_t rows = n * (exec.rank() + 1) / exec.size() - first;
  for (const bool weighted : {false, true}) {
    for (const bool intercept : {true, false}) {
      INFO((weighted ? "weighted" : "unweighted"), (intercept ? ", intercept" : ", no intercept"));
      const linear_model::LogisticRegressionParams params{.C = 0.5, .fit_intercept = intercept,
                                                          .max_iter = 200};
      {
        INFO("multinomial");
        check_logistic_fit<T>(exec, s, params, X, multi, weighted ? w : Vector<T>(), first, rows);
      }
      {
        INFO("binary");
        check_logistic_fit<T>(exec, s, params, X, binary, weighted ? w : Vector<T>(), first, rows);
      }
    }
  }
}

/// NearestNeighbors, KNeighborsClassifier and KNeighborsRegressor in space `s` (this rank's block
/// of rows) against the host's one-process models on all rows.
template <class T, class Exec, class S>
void check_neighbours_in_space(const Exec& exec, const S& s) {
  INFO("space ", S::name, ", ", std::string(sizeof(T) == 4 ? "float" : "double"), ", ", exec.size(),
       " rank(s)");
  const Data<T> d = make_data<T>(700, 5, 3, 41);
  const index_t n = d.X.rows();
  const Data<T> q = make_data<T>(60, 5, 3, 43);
  Matrix<T> queries(q.X.rows() + 3, 5);
  queries << q.X, d.X.topRows(3);  // three queries at distance 0 from training rows
  Labels y(n);
  Vector<T> target(n);
  for (index_t i = 0; i < n; ++i) {
    y(i) = 10 * d.class_of[static_cast<std::size_t>(i)] - 4;
    target(i) = d.y(i);
  }
  const index_t first = n * exec.rank() / exec.size();
  const index_t rows = n * (exec.rank() + 1) / exec.size() - first;
  const Matrix<T> mine = d.X.middleRows(first, rows);

  neighbors::NearestNeighbors<T> nn_host({.n_neighbors = 7});
  neighbors::NearestNeighbors<T, Exec, S> nn_space({.n_neighbors = 7}, exec, s);
  nn_host.fit(d.X);
  nn_space.fit(mine);
  const auto found_host = nn_host.kneighbors(queries);
  const auto found_space = nn_space.kneighbors(queries);
  CHECK(found_space.indices == found_host.indices);
  CHECK(found_space.distances == found_host.distances);
  CHECK(nn_space.n_samples_fit() == n);

  for (const std::string weights : {"uniform", "distance"}) {
    INFO("weights ", weights);
    neighbors::KNeighborsClassifier<T> clf_host({.n_neighbors = 5, .weights = weights});
    neighbors::KNeighborsClassifier<T, Exec, S> clf_space({.n_neighbors = 5, .weights = weights},
                                                          exec, s);
    clf_host.fit(d.X, y);
    clf_space.fit(mine, y.segment(first, rows));
    CHECK(clf_space.predict(queries) == clf_host.predict(queries));
    CHECK(clf_space.predict_proba(queries) == clf_host.predict_proba(queries));
    neighbors::KNeighborsRegressor<T> reg_host({.n_neighbors = 4, .weights = weights});
    neighbors::KNeighborsRegressor<T, Exec, S> reg_space({.n_neighbors = 4, .weights = weights},
                                                         exec, s);
    reg_host.fit(d.X, target);
    reg_space.fit(mine, target.segment(first, rows));
    CHECK(reg_space.predict(queries) == reg_host.predict(queries));
  }
}

}  // namespace onelearn::space_test
