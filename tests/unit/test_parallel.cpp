// The threading seam (core/detail/parallel.hpp): chunks cover every row once, and a fit gives
// the same bits whatever the number of OpenMP threads, as the seam promises. The rest of the
// unit tests run with OMP_NUM_THREADS=1 (CTest sets it, so that ctest -j2 does not
// oversubscribe the cores); this file sets the thread count itself.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "onelearn/cluster/k_means.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/decomposition/pca.hpp"
#include "onelearn/ensemble/hist_gradient_boosting.hpp"
#include "onelearn/linear_model/logistic_regression.hpp"
#include "onelearn/linear_model/ridge.hpp"
#include "onelearn/neighbors/k_neighbors_classifier.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "support.hpp"

using namespace onelearn;

TEST_CASE("chunks cover every row exactly once, and fixed_chunks bounds their number") {
  for (const index_t n : {index_t{0}, index_t{1}, index_t{511}, index_t{512}, index_t{513},
                          index_t{100'000}}) {
    std::vector<int> seen(static_cast<std::size_t>(n), 0);
    index_t chunks_seen = 0;
    detail::for_each_chunk(n, 512, [&](index_t chunk, index_t begin, index_t end) {
      CHECK(begin == chunk * 512);
      CHECK(end - begin <= 512);
      for (index_t i = begin; i < end; ++i) seen[static_cast<std::size_t>(i)] += 1;
#ifdef _OPENMP
#pragma omp atomic
#endif
      chunks_seen += 1;
    });
    CHECK(chunks_seen == detail::chunk_count(n, 512));
    CHECK(std::count(seen.begin(), seen.end(), 1) == n);

    const index_t grain = detail::fixed_chunks(n, 512, 64);
    CHECK(grain % 512 == 0);
    CHECK(detail::chunk_count(n, grain) <= 64);
  }
  // sum_over_chunks adds every row's contribution once.
  const double total = detail::sum_over_chunks(
      index_t{100'000}, 512, 0.0, [](index_t begin, index_t end, double& partial) {
        for (index_t i = begin; i < end; ++i) partial += static_cast<double>(i);
      });
  CHECK(total == 99'999.0 * 100'000.0 / 2);
}

#ifdef _OPENMP
namespace {

/// Runs `fit` on 1 thread and on 2 and 3, and checks that every result is bit-identical.
template <class Fit>
void check_same_bits_on_any_thread_count(Fit&& fit) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto reference = fit();
  for (const int threads : {2, 3}) {
    CAPTURE(threads);
    omp_set_num_threads(threads);
    const auto result = fit();
    REQUIRE(result.size() == reference.size());
    for (std::size_t i = 0; i < result.size(); ++i) CHECK(result[i] == reference[i]);
  }
  omp_set_num_threads(before);
}

template <class M>
std::vector<double> flat(const M& m) {
  std::vector<double> out(static_cast<std::size_t>(m.size()));
  for (index_t i = 0; i < m.size(); ++i) {
    out[static_cast<std::size_t>(i)] = static_cast<double>(m.data()[i]);
  }
  return out;
}

Matrix<double> random_matrix(index_t rows, index_t cols, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  Matrix<double> X(rows, cols);
  for (index_t i = 0; i < X.size(); ++i) X.data()[i] = normal(gen);
  return X;
}

}  // namespace

TEST_CASE("fits give the same bits on 1, 2 and 3 threads") {
  const auto digits = test::load_split<double, std::int64_t>("digits");
  const Matrix<double>& X = digits.X_train;

  SUBCASE("KMeans (fused assignment and sums)") {
    check_same_bits_on_any_thread_count([&] {
      cluster::KMeans<double> km({.n_clusters = 10, .n_init = 1});
      km.set_init(X.topRows(10)).fit(X);
      std::vector<double> out = flat(km.cluster_centers());
      out.push_back(km.inertia());
      return out;
    });
  }
  SUBCASE("StandardScaler (column moments, transform)") {
    check_same_bits_on_any_thread_count([&] {
      preprocessing::StandardScaler<double> scaler;
      return flat(scaler.fit_transform(X));
    });
  }
  SUBCASE("PCA (covariance)") {
    check_same_bits_on_any_thread_count([&] {
      decomposition::PCA<double> pca({.n_components = 5});
      return flat(pca.fit(X).components());
    });
  }
  SUBCASE("LogisticRegression (loss and gradient)") {
    check_same_bits_on_any_thread_count([&] {
      linear_model::LogisticRegression<double> model({.max_iter = 30});
      std::vector<double> out = flat(model.fit(X / 16.0, digits.y_train).coef());
      out.push_back(static_cast<double>(model.n_iter()));
      return out;
    });
  }
  SUBCASE("KNeighborsClassifier (chunks of queries)") {
    check_same_bits_on_any_thread_count([&] {
      neighbors::KNeighborsClassifier<double> knn({.n_neighbors = 5, .weights = "distance"});
      knn.fit(X, digits.y_train);
      std::vector<double> out = flat(knn.predict_proba(digits.X_test));
      const std::vector<double> labels = flat(knn.predict(digits.X_test));
      out.insert(out.end(), labels.begin(), labels.end());
      return out;
    });
  }
  SUBCASE("Ridge (normal equations, several blocks of rows)") {
    // 8 features make blocks of 32768 rows: 100k rows are four blocks.
    const Matrix<double> A = random_matrix(100'000, 8, 7);
    const Vector<double> y = A * Vector<double>::LinSpaced(8, -1, 1) + A.col(0).cwiseAbs();
    check_same_bits_on_any_thread_count([&] {
      linear_model::Ridge<double> ridge({.alpha = 0.5});
      ridge.fit(A, y);
      std::vector<double> out = flat(ridge.coef());
      out.push_back(ridge.intercept());
      return out;
    });
  }
  SUBCASE("HistGradientBoostingClassifier (blocked partition, histograms of feature blocks)") {
    // 70k rows: the root's partition is three blocks of rows, and the histograms of large nodes
    // are cut into feature blocks. A missing value in every 37th row of feature 5.
    Matrix<double> A = random_matrix(70'000, 6, 11);
    Labels y(A.rows());
    for (index_t i = 0; i < A.rows(); ++i) {
      y(i) = A(i, 0) + A(i, 1) * A(i, 2) + 0.3 * A(i, 5) > 0 ? 1 : 0;
      if (i % 37 == 0) A(i, 5) = std::numeric_limits<double>::quiet_NaN();
    }
    const ensemble::HistGradientBoostingClassifierParams params{
        .max_iter = 8, .early_stopping = "true", .validation_fraction = 0, .n_iter_no_change = 100};
    check_same_bits_on_any_thread_count([&] {
      ensemble::HistGradientBoostingClassifier<double> model(params);
      model.fit(A, y);
      std::vector<double> out = flat(model.decision_function(A));
      const std::vector<double> scores = flat(model.train_score());
      out.insert(out.end(), scores.begin(), scores.end());
      return out;
    });
    // The training loss is computed from the raw predictions that the partitions gave each
    // row during the fit; predict walks the trees instead. They agree only if every row went
    // to its leaf.
    omp_set_num_threads(2);
    ensemble::HistGradientBoostingClassifier<double> model(params);
    model.fit(A, y);
    const Vector<double> raw = model.decision_function(A);
    double loss = 0;
    for (index_t i = 0; i < A.rows(); ++i) {
      loss += std::log1p(std::exp(raw(i))) - static_cast<double>(y(i)) * raw(i);
    }
    loss /= static_cast<double>(A.rows());
    REQUIRE(model.train_score().size() == 9);
    CHECK(std::abs(-model.train_score()(8) - loss) < 1e-12);
    CHECK(-model.train_score()(8) < 0.8 * -model.train_score()(0));  // it learned
    omp_set_num_threads(1);
  }
}
#endif
