#pragma once
// The estimators whose fit is sums over the rows (column moments, class moments, the normal
// equations) in a compute space against the same fit on the host, shared like
// estimator_space_checks.hpp by unit/test_estimators_in_space.cpp (the CPU Thrust systems),
// mpi/test_estimators_in_space.cpp (under exec::mpi, each rank passing its block of rows; once
// more with rank 0 holding no rows) and cuda/test_spaces_cuda.cu (the CUDA system). The
// reference is always the host's one-process fit on all the rows. Each column is compared at
// its own scale (features around 3 and around 1000 side by side).
//
// - preprocessing::StandardScaler: mean, var, scale and n_samples_seen, and the transform of
//   this rank's rows; weighted or not, each combination of with_mean and with_std, on rows far
//   from the origin (where a one-pass variance would cancel) with one constant feature (scale 1).
// - naive_bayes::GaussianNB: classes, class counts and priors, theta, var, epsilon, and the
//   predictions and probabilities; weighted or not.
// - linear_model::Ridge, Lasso, ElasticNet: coef and intercept, with and without intercept,
//   weighted or not; the descent's number of passes too. Ridge to the space checks' tolerances
//   (double 1e-12, float 1e-5); the coordinate descents to 1e-9 in double, since their passes
//   carry the Gram matrix's rounding (sums added in another order) through every update.
// - linear_model::LinearRegression: coef and intercept, the same cases, to the space checks'
//   tolerances: the device form's QR triangles (chunks of rows folded by Givens rotations)
//   give the host's least-squares solution up to rounding; thrust_omp and thrust_tbb run the
//   host's Householder QR per chunk, on means from the space's column sums (added in another
//   order than the host's, so not the host's bits).
// - decomposition::PCA: components, explained variances and their ratios, singular values,
//   mean, noise variance, n_samples and the transform, whitened or not. Its covariance is the
//   same sums (space::gram without y); the eigensolver turns their 1e-12 into about 1e-10 on
//   components whose variances are well apart, so those are held to 1e-9 (float: 1e-4).

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cuda/space_checks.hpp"
#include "onelearn/decomposition/pca.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/linear_model/elastic_net.hpp"
#include "onelearn/linear_model/lasso.hpp"
#include "onelearn/linear_model/linear_regression.hpp"
#include "onelearn/linear_model/ridge.hpp"
#include "onelearn/naive_bayes/gaussian_nb.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"

namespace onelearn::space_test {

/// This rank's block of n rows, [first, first + count): even blocks, or with `rank0_empty` none
/// on rank 0 and even blocks on the others.
template <class Exec>
std::pair<index_t, index_t> block_of_rows(const Exec& exec, index_t n, bool rank0_empty) {
  const index_t ranks = rank0_empty ? exec.size() - 1 : exec.size();
  const index_t me = rank0_empty ? exec.rank() - 1 : exec.rank();
  if (me < 0) return {0, 0};
  const index_t first = n * me / ranks;
  return {first, n * (me + 1) / ranks - first};
}

/// The layouts of the rows over the ranks to check: even blocks, and under more than one rank
/// also rank 0 without rows.
template <class Exec>
std::vector<bool> rank0_empty_cases(const Exec& exec) {
  if (exec.size() > 1) return {false, true};
  return {false};
}

/// check_close column by column, each at its own scale (its largest magnitude, at least
/// `least_scale`: a centred constant feature is rounding noise around 0 on both sides).
template <class A, class B>
void check_close_by_column(const char* what, const Eigen::MatrixBase<A>& a,
                           const Eigen::MatrixBase<B>& b, double tol, double least_scale = 0) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  if (b.size() == 0) return;
  for (index_t j = 0; j < b.cols(); ++j) {
    const auto ad = a.col(j).template cast<double>();
    const auto bd = b.col(j).template cast<double>();
    const double scale = std::max({bd.cwiseAbs().maxCoeff(), least_scale, 1e-300});
    const double error = (ad - bd).cwiseAbs().maxCoeff();
    INFO(what, ", column ", j, ": max error ", error, " at scale ", scale);
    CHECK(error <= tol * scale);
  }
}

/// check_close entry by entry (a vector of per-feature values at different scales).
template <class A, class B>
void check_close_each(const char* what, const Eigen::MatrixBase<A>& a,
                      const Eigen::MatrixBase<B>& b, double tol) {
  REQUIRE(a.size() == b.size());
  for (index_t j = 0; j < b.size(); ++j) {
    INFO("entry ", j);
    check_close(what, static_cast<double>(a(j)), static_cast<double>(b(j)), tol);
  }
}

template <class T, class Exec, class S>
void check_scaler_in_space(const Exec& exec, const S& s) {
  INFO("space ", S::name, ", ", std::string(sizeof(T) == 4 ? "float" : "double"), ", ", exec.size(),
       " rank(s)");
  const double tol = tolerance<T>();
  const index_t n = 1200;
  Data<T> d = make_data<T>(n, 6, 3, 61);
  d.X.col(1).array() += T(1000);   // far from the origin: the two-pass variance matters
  d.X.col(4).setConstant(T(7.5));  // constant: scale 1 on both sides
  for (const bool rank0_empty : rank0_empty_cases(exec)) {
    INFO("rank 0 without rows: ", rank0_empty);
    const auto [first, rows] = block_of_rows(exec, n, rank0_empty);
    const Matrix<T> mine = d.X.middleRows(first, rows);
    const Vector<T> my_w = d.w.segment(first, rows);
    for (const bool weighted : {false, true}) {
      for (const preprocessing::StandardScalerParams params :
           {preprocessing::StandardScalerParams{}, {.with_mean = false}, {.with_std = false}}) {
        INFO((weighted ? "weighted" : "unweighted"), ", with_mean ", params.with_mean,
             ", with_std ", params.with_std);
        preprocessing::StandardScaler<T> on_host(params);
        preprocessing::StandardScaler<T, Exec, S> in_space(params, exec, s);
        if (weighted) {
          on_host.fit(d.X, d.w);
          in_space.fit(mine, my_w);
        } else {
          on_host.fit(d.X);
          in_space.fit(mine);
        }
        check_close_each("mean", in_space.mean(), on_host.mean(), tol);
        check_close_each("scale", in_space.scale(), on_host.scale(), tol);
        REQUIRE(in_space.var().size() == on_host.var().size());
        // The constant feature's variance is rounding noise on both sides: not compared.
        for (index_t j = 0; j < on_host.var().size(); ++j) {
          if (j == 4) continue;
          INFO("var of feature ", j);
          check_close("var", static_cast<double>(in_space.var()(j)),
                      static_cast<double>(on_host.var()(j)), tol);
        }
        CHECK(in_space.scale()(4) == T(1));
        CHECK(in_space.n_samples_seen() == n);
        check_close_by_column("transform", in_space.transform(mine), on_host.transform(mine), tol,
                              1.0);
      }
    }
  }
}

template <class T, class Exec, class S>
void check_gaussian_nb_in_space(const Exec& exec, const S& s) {
  INFO("space ", S::name, ", ", std::string(sizeof(T) == 4 ? "float" : "double"), ", ", exec.size(),
       " rank(s)");
  const double tol = tolerance<T>();
  const index_t n = 900;
  const Data<T> d = make_data<T>(n, 5, 4, 67);
  Labels y(n);
  for (index_t i = 0; i < n; ++i) y(i) = 3 * d.class_of[static_cast<std::size_t>(i)] - 2;
  const auto [first, rows] = block_of_rows(exec, n, false);
  const Matrix<T> mine = d.X.middleRows(first, rows);
  for (const bool weighted : {false, true}) {
    INFO((weighted ? "weighted" : "unweighted"));
    naive_bayes::GaussianNB<T> on_host;
    naive_bayes::GaussianNB<T, Exec, S> in_space({}, exec, s);
    if (weighted) {
      on_host.fit(d.X, y, d.w);
      in_space.fit(mine, y.segment(first, rows), d.w.segment(first, rows));
    } else {
      on_host.fit(d.X, y);
      in_space.fit(mine, y.segment(first, rows));
    }
    CHECK(in_space.classes() == on_host.classes());
    check_close("class_count", in_space.class_count(), on_host.class_count(), tol);
    check_close("class_prior", in_space.class_prior(), on_host.class_prior(), tol);
    check_close_by_column("theta", in_space.theta(), on_host.theta(), tol);
    check_close_by_column("var", in_space.var(), on_host.var(), tol);
    check_close("epsilon", static_cast<double>(in_space.epsilon()),
                static_cast<double>(on_host.epsilon()), tol);
    CHECK(in_space.predict(mine) == on_host.predict(mine));
    check_close("predict_proba", in_space.predict_proba(mine), on_host.predict_proba(mine), tol);
  }
}

/// One linear model fitted in the space and on the host: the same coefficients and intercept.
template <class Host, class InSpace, class T>
void check_linear_fit(Host on_host, InSpace in_space, const Data<T>& d, const Vector<T>& target,
                      bool weighted, index_t first, index_t rows, double tol) {
  const Matrix<T> mine = d.X.middleRows(first, rows);
  if (weighted) {
    on_host.fit(d.X, target, d.w);
    in_space.fit(mine, target.segment(first, rows), d.w.segment(first, rows));
  } else {
    on_host.fit(d.X, target);
    in_space.fit(mine, target.segment(first, rows));
  }
  check_close("coef", in_space.coef(), on_host.coef(), tol);
  check_close("intercept", static_cast<double>(in_space.intercept()),
              static_cast<double>(on_host.intercept()), tol);
  if constexpr (requires { on_host.n_iter(); }) CHECK(in_space.n_iter() == on_host.n_iter());
}

template <class T, class Exec, class S>
void check_linear_models_in_space(const Exec& exec, const S& s) {
  INFO("space ", S::name, ", ", std::string(sizeof(T) == 4 ? "float" : "double"), ", ", exec.size(),
       " rank(s)");
  const index_t n = 800;
  const index_t p = 7;
  const Data<T> d = make_data<T>(n, p, 3, 71);
  // A target with a linear part (three features carry none, for the L1 penalty to zero) and
  // noise; an offset, so that the intercept is not 0.
  Vector<T> target(n);
  for (index_t i = 0; i < n; ++i) {
    double value = 4.0 + 0.5 * static_cast<double>(d.y(i));
    for (index_t j = 0; j < p; j += 2) value += static_cast<double>(j + 1) * d.X(i, j);
    target(i) = static_cast<T>(value);
  }
  const double descent_tol = std::is_same_v<T, float> ? 1e-5 : 1e-9;
  for (const bool rank0_empty : rank0_empty_cases(exec)) {
    INFO("rank 0 without rows: ", rank0_empty);
    const auto [first, rows] = block_of_rows(exec, n, rank0_empty);
    for (const bool weighted : {false, true}) {
      for (const bool intercept : {true, false}) {
        INFO((weighted ? "weighted" : "unweighted"),
             (intercept ? ", intercept" : ", no intercept"));
        {
          INFO("Ridge");
          const linear_model::RidgeParams params{.alpha = 0.5, .fit_intercept = intercept};
          check_linear_fit(linear_model::Ridge<T>(params),
                           linear_model::Ridge<T, Exec, S>(params, exec, s), d, target, weighted,
                           first, rows, tolerance<T>());
        }
        {
          INFO("Lasso");
          const linear_model::LassoParams params{
              .alpha = 0.05, .fit_intercept = intercept, .tol = 1e-8};
          check_linear_fit(linear_model::Lasso<T>(params),
                           linear_model::Lasso<T, Exec, S>(params, exec, s), d, target, weighted,
                           first, rows, descent_tol);
        }
        {
          INFO("LinearRegression");
          const linear_model::LinearRegressionParams params{.fit_intercept = intercept};
          check_linear_fit(linear_model::LinearRegression<T>(params),
                           linear_model::LinearRegression<T, Exec, S>(params, exec, s), d, target,
                           weighted, first, rows, tolerance<T>());
        }
        {
          INFO("ElasticNet");
          const linear_model::ElasticNetParams params{
              .alpha = 0.05, .l1_ratio = 0.4, .fit_intercept = intercept, .tol = 1e-8};
          check_linear_fit(linear_model::ElasticNet<T>(params),
                           linear_model::ElasticNet<T, Exec, S>(params, exec, s), d, target,
                           weighted, first, rows, descent_tol);
        }
      }
    }
  }
}

template <class T, class Exec, class S>
void check_pca_in_space(const Exec& exec, const S& s) {
  INFO("space ", S::name, ", ", std::string(sizeof(T) == 4 ? "float" : "double"), ", ", exec.size(),
       " rank(s)");
  // Correlated features far from the origin, with variances well apart (scales 1 to 6).
  const index_t n = 600;
  const index_t p = 6;
  std::mt19937_64 rng(seed + 97);
  std::normal_distribution<double> normal(0.0, 1.0);
  Matrix<T> X(n, p);
  for (index_t i = 0; i < n; ++i) {
    Vector<double> z(p);
    for (index_t j = 0; j < p; ++j) z(j) = normal(rng) * static_cast<double>(j + 1);
    for (index_t j = 0; j < p; ++j) X(i, j) = static_cast<T>(100.0 + z(j) + 0.3 * z((j + 1) % p));
  }
  const double tol = std::is_same_v<T, float> ? 1e-4 : 1e-9;
  for (const bool rank0_empty : rank0_empty_cases(exec)) {
    INFO("rank 0 without rows: ", rank0_empty);
    const auto [first, rows] = block_of_rows(exec, n, rank0_empty);
    const Matrix<T> mine = X.middleRows(first, rows);
    for (const bool whiten : {false, true}) {
      INFO("whiten: ", whiten);
      const decomposition::PCAParams params{.n_components = 3, .whiten = whiten};
      decomposition::PCA<T> on_host(params);
      on_host.fit(X);
      decomposition::PCA<T, Exec, S> in_space(params, exec, s);
      in_space.fit(mine);
      CHECK(in_space.n_samples() == n);
      check_close_by_column("components", Matrix<T>(in_space.components().transpose()),
                            Matrix<T>(on_host.components().transpose()), tol);
      check_close_each("explained_variance", in_space.explained_variance(),
                       on_host.explained_variance(), tol);
      check_close_each("explained_variance_ratio", in_space.explained_variance_ratio(),
                       on_host.explained_variance_ratio(), tol);
      check_close_each("singular_values", in_space.singular_values(), on_host.singular_values(),
                       tol);
      check_close_each("mean", in_space.mean(), on_host.mean(), tolerance<T>());
      check_close("noise_variance", static_cast<double>(in_space.noise_variance()),
                  static_cast<double>(on_host.noise_variance()), tol);
      check_close_by_column("transform", in_space.transform(mine), on_host.transform(mine), tol,
                            1.0);
    }
  }
}

}  // namespace onelearn::space_test
