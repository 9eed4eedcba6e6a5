#pragma once
// Histogram gradient boosting in a compute space against the same fit on the host, shared by
// unit/test_estimators_in_space.cpp (the CPU Thrust systems), mpi/test_estimators_in_space.cpp
// (under exec::mpi) and cuda/test_spaces_cuda.cu (the CUDA system).
//
// HistGradientBoostingClassifier (binary and three classes) and HistGradientBoostingRegressor
// (sample weights, early stopping on a validation fraction) on data of our own with missing
// values in one feature: the same trees (node by node: leaf or not, feature, bin, where missing
// values go), leaf values and predictions to 1e-9 (the space's histograms add a bin's gradients
// in chunks, so in another order than the host's), the same iterations and predicted classes.
// The threaded CPU systems (thrust_omp, thrust_tbb) grow the trees with the host's own code on
// their threads (space::chunk_loop): in one process, the host's bits.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cuda/space_checks.hpp"
#include "onelearn/ensemble/hist_gradient_boosting.hpp"

namespace onelearn::space_test {

/// Rows of 6 features (normal, the second with a missing value in every 13th row) and three
/// targets: a class of 2 and of 3 from noisy linear scores, and a smooth regression target.
template <class T>
struct boosting_data {
  Matrix<T> X;
  Labels binary, three;
  Vector<T> target, weights;
};

template <class T>
boosting_data<T> make_boosting_data(index_t n) {
  std::mt19937_64 rng(seed + 31);
  std::normal_distribution<double> normal(0.0, 1.0);
  const index_t p = 6;
  boosting_data<T> out{Matrix<T>(n, p), Labels(n), Labels(n), Vector<T>(n), Vector<T>(n)};
  for (index_t i = 0; i < n; ++i) {
    std::vector<double> x(static_cast<std::size_t>(p));
    for (double& v : x) v = normal(rng);
    const double score = x[0] - 0.8 * x[2] + 0.5 * x[3] * x[4] + 0.3 * normal(rng);
    out.binary(i) = score > 0 ? 1 : 0;
    out.three(i) = score < -0.5 ? 0 : (score < 0.7 ? 1 : 2);
    out.target(i) = static_cast<T>(3 * std::sin(x[0]) + x[1] * x[1] - x[5] + 0.1 * normal(rng));
    out.weights(i) = static_cast<T>(0.5 * static_cast<double>(1 + i % 4));
    if (i % 13 == 4) x[1] = std::numeric_limits<double>::quiet_NaN();
    for (index_t j = 0; j < p; ++j) out.X(i, j) = static_cast<T>(x[static_cast<std::size_t>(j)]);
  }
  return out;
}

/// Node by node: the same structure, values to `tol` (absolute, on values of order 1), or the
/// same bits when `exact`.
inline void check_same_trees(const std::vector<std::vector<ensemble::detail::HistTree>>& in_space,
                             const std::vector<std::vector<ensemble::detail::HistTree>>& on_host,
                             double tol, bool exact) {
  REQUIRE(in_space.size() == on_host.size());
  for (std::size_t it = 0; it < on_host.size(); ++it) {
    REQUIRE(in_space[it].size() == on_host[it].size());
    for (std::size_t c = 0; c < on_host[it].size(); ++c) {
      const auto& a = in_space[it][c].nodes;
      const auto& b = on_host[it][c].nodes;
      INFO("iteration ", it, ", tree ", c);
      REQUIRE(a.size() == b.size());
      for (std::size_t k = 0; k < b.size(); ++k) {
        INFO("node ", k);
        CHECK(a[k].is_leaf == b[k].is_leaf);
        CHECK(a[k].count == b[k].count);
        if (!b[k].is_leaf) {
          CHECK(a[k].feature == b[k].feature);
          CHECK(a[k].bin_threshold == b[k].bin_threshold);
          CHECK(a[k].missing_go_to_left == b[k].missing_go_to_left);
        }
        if (exact) {
          CHECK(a[k].value == b[k].value);
        } else {
          CHECK(std::abs(a[k].value - b[k].value) <= tol);
        }
      }
    }
  }
}

/// Both estimators in space `s` (policy `exec`, this rank's block of rows) against the host's
/// one-process fits on every row.
template <class T, class Exec, class S>
void check_boosting_in_space(const Exec& exec, const S& s) {
  INFO("space ", S::name, ", ", std::string(sizeof(T) == 4 ? "float" : "double"), ", ", exec.size(),
       " rank(s)");
  const index_t n = 2400;
  const boosting_data<T> d = make_boosting_data<T>(n);
  const index_t first = n * exec.rank() / exec.size();
  const index_t last = n * (exec.rank() + 1) / exec.size();
  const index_t rows = last - first;
  const Matrix<T> mine = d.X.middleRows(first, rows);
  // The CPU systems' host code in one process: the same bits. Otherwise the histograms' sums
  // are added in another order (the space's chunks, or the ranks'), so the values round apart.
  const bool exact = exec.size() == 1 && requires { chunk_loop(s); };
  const double tol = 1e-9;

  for (const Labels* y : {&d.binary, &d.three}) {
    const bool binary = y == &d.binary;
    INFO((binary ? "binary" : "three classes"));
    const ensemble::HistGradientBoostingClassifierParams params{
        .max_iter = 12, .max_leaf_nodes = 15, .early_stopping = "false"};
    ensemble::HistGradientBoostingClassifier<T> on_host(params);
    ensemble::HistGradientBoostingClassifier<T, Exec, S> in_space(params, exec, s);
    on_host.fit(d.X, *y);
    in_space.fit(mine, Labels(y->segment(first, rows)));
    CHECK(in_space.n_iter() == on_host.n_iter());
    check_same_trees(in_space.trees(), on_host.trees(), tol, exact);
    check_close("decision_function", in_space.decision_function(d.X),
                on_host.decision_function(d.X), std::max(tol, tolerance<T>()));
    CHECK(in_space.predict(d.X) == on_host.predict(d.X));
  }
  {
    INFO("regressor, weighted, early stopping on a validation fraction");
    const ensemble::HistGradientBoostingRegressorParams params{
        .max_iter = 30, .min_samples_leaf = 10, .early_stopping = "true",
        .validation_fraction = 0.2, .n_iter_no_change = 3, .random_state = 4};
    ensemble::HistGradientBoostingRegressor<T> on_host(params);
    ensemble::HistGradientBoostingRegressor<T, Exec, S> in_space(params, exec, s);
    on_host.fit(d.X, d.target, d.weights);
    in_space.fit(mine, Vector<T>(d.target.segment(first, rows)),
                 Vector<T>(d.weights.segment(first, rows)));
    CHECK(in_space.n_iter() == on_host.n_iter());
    check_same_trees(in_space.trees(), on_host.trees(), tol, exact);
    check_close("predict", in_space.predict(d.X), on_host.predict(d.X),
                std::max(tol, tolerance<T>()));
  }
}

}  // namespace onelearn::space_test
