// onelearn-space-bench: the compute spaces (include/onelearn/space/) on the shapes of the
// reference workloads of bench/README.md, one JSON line each, as onelearn-bench prints them with
// "space" added:
//   onelearn-space-bench [--space host|cpp|omp|tbb|cuda] [--repeats N] [WORKLOAD...]
//   onelearn-space-bench --help | --version
// The spaces are those this binary was compiled with: host always; cpp with Thrust's headers;
// omp with OpenMP; tbb with onelearn::thrust_tbb; cuda in the nvcc build, onelearn-space-bench-cuda
// (space_bench_cuda.cu, built with ONELEARN_CUDA=ON; scripts/test-gpu.sh runs it).
//
// Workloads (the data is made here, seeded, the same in every space and on every machine):
// the estimators, on the shapes of bench/README.md's workloads, each fit's wall time with
// everything in it (checks, the copy to the space):
//   kmeans  cluster::KMeans<double, exec::local, Space>: 200k x 32, 16 blobs, k = 16, init the
//           first 16 rows, one run, 30 Lloyd iterations, tol 0; quality: the inertia.
//   knn     neighbors::KNeighborsClassifier: 20k x 32 rows of 5 blobs, k = 5, fit and predict of
//           5k queries; quality: their accuracy.
//   logreg  linear_model::LogisticRegression: 50k x 64, 10 blobs, C = 1, 100 L-BFGS iterations at
//           most; quality: the training accuracy.
//   ridge_fit   linear_model::Ridge: ridge's 500k x 64 and y, alpha = 1; quality: the training R^2.
//   scaler_fit  preprocessing::StandardScaler: scaler's 1M x 32; quality: the sum of the scales.
//   gnb_fit     naive_bayes::GaussianNB: 500k x 32 of 4 blobs (spread 6), their blobs as
//               classes; quality: the training accuracy.
//   pca_fit     decomposition::PCA: pca's 100k x 128, 10 components; quality: the sum of their
//               explained variance ratios.
//   linreg_fit  linear_model::LinearRegression: ridge's 500k x 64 and y (its tall-skinny QR);
//               quality: the training R^2.
//   gbdt_fit    ensemble::HistGradientBoostingClassifier: 200k x 28 (gbdt's 28 features, 2
//               classes of noisy scores made here; 2/5 of gbdt's rows, to keep 5 repeats short),
//               gbdt's settings (100 iterations, 31 leaves, 255 bins, no early stopping);
//               quality: the training accuracy.
//   mlp_fit     nn::Sequential<float, exec::local, Space>: the mlp workload's network (784-256-
//               256-10, ReLU, logits, Adam 1e-3) on its 20,000 rows of N(0, 1) and random
//               labels, one epoch of batches of 128 without shuffling, the model trained on from
//               one timed epoch to the next; quality: the last epoch's mean loss.
// and the kernels under them, with the rows already in the space:
//   lloyd        30 space::lloyd_step on kmeans' rows.
//   knn_search   space::nearest_k: knn's rows and queries, k = 5.
//   logreg_eval  100 space::logistic_loss_gradient on 50k x 64, 10 classes.
//   ridge        space::gram with y on 500k x 64 (the normal equations' sums).
//   pca          space::gram without y on 100k x 128 (the covariance).
//   scaler       space::column_sums and centered_square_sums on 1M x 32 (StandardScaler's fit).
//   gnb          space::class_sums and class_square_deviations on 500k x 32, 4 classes.
// For the kernels "seconds" is the best of --repeats runs (default 3) after one run that is not
// timed (a device's first kernels load their code), and "copy_seconds" the one copy of the rows
// into the space (0 where the space borrows them); for them "quality" is a checksum, for
// comparing spaces, not a model score.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/cluster/k_means.hpp"
#include "onelearn/core/version.hpp"
#include "onelearn/decomposition/pca.hpp"
#include "onelearn/ensemble/hist_gradient_boosting.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/linear_model/linear_regression.hpp"
#include "onelearn/linear_model/logistic_regression.hpp"
#include "onelearn/linear_model/ridge.hpp"
#include "onelearn/naive_bayes/gaussian_nb.hpp"
#include "onelearn/nn/sequential.hpp"
#include "onelearn/nn/space.hpp"
#include "onelearn/neighbors/k_neighbors_classifier.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "onelearn/space/space.hpp"
#include "optimisation_notice.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using onelearn::index_t;
using onelearn::Matrix;
using onelearn::Vector;
namespace space = onelearn::space;

double seconds_of(const std::function<void()>& work) {
  const auto start = Clock::now();
  work();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The best of `repeats` timed runs, after one untimed run.
double best_seconds(int repeats, const std::function<void()>& work) {
  work();
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < repeats; ++i) best = std::min(best, seconds_of(work));
  return best;
}

/// n x p rows around `count` centres (N(0, spread^2) noise around N(0, 5^2) centres), seeded;
/// `blob`, when given, receives each row's centre.
Matrix<double> blobs(index_t n, index_t p, index_t count, std::uint64_t seed,
                     onelearn::Labels* blob = nullptr, double spread = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Matrix<double> centres(count, p);
  for (index_t c = 0; c < count; ++c) {
    for (index_t j = 0; j < p; ++j) centres(c, j) = 5.0 * normal(rng);
  }
  Matrix<double> X(n, p);
  if (blob != nullptr) blob->resize(n);
  for (index_t i = 0; i < n; ++i) {
    const auto c = static_cast<index_t>(rng() % static_cast<std::uint64_t>(count));
    if (blob != nullptr) (*blob)(i) = c;
    for (index_t j = 0; j < p; ++j) X(i, j) = centres(c, j) + spread * normal(rng);
  }
  return X;
}

double accuracy(const onelearn::Labels& predicted, const onelearn::Labels& truth) {
  return static_cast<double>((predicted.array() == truth.array()).count()) /
         static_cast<double>(truth.size());
}

std::vector<index_t> classes(index_t n, index_t k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<index_t> out(static_cast<std::size_t>(n));
  for (auto& c : out) c = static_cast<index_t>(rng() % static_cast<std::uint64_t>(k));
  return out;
}

template <class S>
void print_line(const char* workload, double seconds, double copy_seconds, double quality) {
  std::printf(R"({"workload": "%s", "impl": "onelearn", "policy": "local", "space": "%s", )"
              R"("ranks": 1, "seconds": %.6g, "copy_seconds": %.6g, "quality": %.10g})"
              "\n",
              workload, std::string(S::name).c_str(), seconds, copy_seconds, quality);
  std::fflush(stdout);
}

/// The rows in the space, and how long bringing them there took: until the last value has
/// arrived (reading it back waits for the copies a device still has queued).
template <class S>
auto timed_to_space(const S& s, const Matrix<double>& X, double& copy_seconds) {
  const auto start = Clock::now();
  auto out = space::to_space(s, X);
  if (X.size() > 0) {
    double last = 0;
    s.copy_to_host(out.view().data + (X.size() - 1), 1, &last);
  }
  copy_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

template <class S>
void bench_kmeans(const S& s, int repeats) {
  const Matrix<double> X = blobs(200'000, 32, 16, 1);
  onelearn::cluster::KMeans<double, onelearn::exec::local, S> km(
      {.n_clusters = 16, .n_init = 1, .max_iter = 30, .tol = 0.0}, {}, s);
  km.set_init(X.topRows(16));
  const double seconds = best_seconds(repeats, [&] { km.fit(X); });
  print_line<S>("kmeans", seconds, 0.0, km.inertia());
}

template <class S>
void bench_knn(const S& s, int repeats) {
  // One draw split in two, so that the queries come from the same blobs; wide blobs (spread
  // 8), so that the accuracy is not 1.
  onelearn::Labels all_y;
  const Matrix<double> all = blobs(25'000, 32, 5, 2, &all_y, 8.0);
  const Matrix<double> X = all.topRows(20'000);
  const onelearn::Labels y = all_y.head(20'000);
  const Matrix<double> Q = all.bottomRows(5'000);
  const onelearn::Labels truth = all_y.tail(5'000);
  onelearn::neighbors::KNeighborsClassifier<double, onelearn::exec::local, S> knn(
      {.n_neighbors = 5}, {}, s);
  onelearn::Labels predicted;
  const double seconds = best_seconds(repeats, [&] { predicted = knn.fit(X, y).predict(Q); });
  print_line<S>("knn", seconds, 0.0, accuracy(predicted, truth));
}

template <class S>
void bench_logreg(const S& s, int repeats) {
  onelearn::Labels y;
  const Matrix<double> X = blobs(50'000, 64, 10, 4, &y, 12.0);
  onelearn::linear_model::LogisticRegression<double, onelearn::exec::local, S> clf(
      {.C = 1.0, .max_iter = 100}, {}, s);
  const double seconds = best_seconds(repeats, [&] { clf.fit(X, y); });
  print_line<S>("logreg", seconds, 0.0, accuracy(clf.predict(X), y));
}

template <class S>
void bench_lloyd(const S& s, int repeats) {
  const Matrix<double> X = blobs(200'000, 32, 16, 1);
  double copy = 0;
  const auto Xs = timed_to_space(s, X, copy);
  space::vector<S, std::int64_t> labels(s, X.rows());
  space::vector<S, std::int64_t> previous(s, X.rows());
  double inertia_like = 0;
  const double seconds = best_seconds(repeats, [&] {
    Matrix<double> centers = X.topRows(16);
    bool first = true;
    for (int iteration = 0; iteration < 30; ++iteration) {
      std::swap(labels, previous);
      const space::vector_view<const std::int64_t> before =
          first ? space::vector_view<const std::int64_t>{} : previous.view();
      const space::lloyd_sums step =
          space::lloyd_step(s, Xs.view(), centers, labels.mutable_view(), before);
      first = false;
      for (index_t j = 0; j < centers.rows(); ++j) {
        if (step.counts(j) > 0) centers.row(j) = step.sums.row(j) / step.counts(j);
      }
    }
    inertia_like = centers.sum();
  });
  print_line<S>("lloyd", seconds, copy, inertia_like);
}

template <class S>
void bench_knn_search(const S& s, int repeats) {
  const Matrix<double> X = blobs(20'000, 32, 5, 2);
  const Matrix<double> Q = blobs(5'000, 32, 5, 3);
  double copy = 0;
  const auto Xs = timed_to_space(s, X, copy);
  double copy_queries = 0;
  const auto Qs = timed_to_space(s, Q, copy_queries);
  double checksum = 0;
  const double seconds = best_seconds(repeats, [&] {
    const space::neighbours found = space::nearest_k(s, Xs.view(), Qs.view(), 5);
    checksum = std::accumulate(found.distances.begin(), found.distances.end(), 0.0);
  });
  print_line<S>("knn_search", seconds, copy + copy_queries, checksum);
}

template <class S>
void bench_logreg_eval(const S& s, int repeats) {
  const index_t n = 50'000;
  const index_t p = 64;
  const index_t k = 10;
  const Matrix<double> X = blobs(n, p, k, 4);
  const std::vector<index_t> y = classes(n, k, 5);
  double copy = 0;
  const auto Xs = timed_to_space(s, X, copy);
  const auto ys = space::to_space(s, std::span<const index_t>(y));
  Matrix<double> params;
  Matrix<double> grad(k, p + 1);
  double loss = 0;
  const double seconds = best_seconds(repeats, [&] {
    params = Matrix<double>::Constant(k, p + 1, 0.001);
    for (int evaluation = 0; evaluation < 100; ++evaluation) {
      params(evaluation % k, evaluation % p) += 1e-4;  // a new point each time, as L-BFGS's
      loss = space::logistic_loss_gradient(s, Xs.view(), ys.view(), {}, false, true, params, grad);
    }
  });
  print_line<S>("logreg_eval", seconds, copy, loss + grad.sum());
}

/// The rows of ridge (and pca: the same generator) and the target of ridge.
Matrix<double> ridge_rows(index_t n, index_t p) { return blobs(n, p, 8, 6); }
Vector<double> ridge_target(const Matrix<double>& X) { return X.col(0) * 0.5 + X.col(1); }

template <class S>
void bench_gram(const S& s, int repeats, const char* workload, index_t n, index_t p, bool with_y) {
  const Matrix<double> X = ridge_rows(n, p);
  Vector<double> y = ridge_target(X);
  double copy = 0;
  const auto Xs = timed_to_space(s, X, copy);
  const auto ys =
      space::to_space(s, std::span<const double>(y.data(), static_cast<std::size_t>(n)));
  const Vector<double> mean = X.colwise().mean().transpose();
  const double y_mean = y.mean();
  double checksum = 0;
  const double seconds = best_seconds(repeats, [&] {
    const space::gram_sums g =
        space::gram(s, Xs.view(), with_y ? ys.view() : space::vector_view<const double>{}, {}, 1.0,
                    mean, with_y ? y_mean : 0.0);
    checksum = g.gram.template triangularView<Eigen::Lower>().toDenseMatrix().sum() +
               (with_y ? g.xty.sum() + g.yty : 0.0);
  });
  print_line<S>(workload, seconds, copy, checksum);
}

template <class S>
void bench_scaler(const S& s, int repeats) {
  const Matrix<double> X = blobs(1'000'000, 32, 4, 7);
  double copy = 0;
  const auto Xs = timed_to_space(s, X, copy);
  double checksum = 0;
  const double seconds = best_seconds(repeats, [&] {
    const Vector<double> mean =
        space::column_sums(s, Xs.view(), {}) / static_cast<double>(X.rows());
    checksum = space::centered_square_sums(s, Xs.view(), mean, {}).sum();
  });
  print_line<S>("scaler", seconds, copy, checksum);
}

template <class S>
void bench_gnb(const S& s, int repeats) {
  const index_t n = 500'000;
  const index_t k = 4;
  const Matrix<double> X = blobs(n, 32, k, 8);
  const std::vector<index_t> y = classes(n, k, 9);
  double copy = 0;
  const auto Xs = timed_to_space(s, X, copy);
  const auto ys = space::to_space(s, std::span<const index_t>(y));
  double checksum = 0;
  const double seconds = best_seconds(repeats, [&] {
    const space::class_moments m = space::class_sums(s, Xs.view(), ys.view(), {}, k);
    const Matrix<double> theta = m.sums.array().colwise() / m.counts.array();
    checksum = space::class_square_deviations(s, Xs.view(), ys.view(), {}, theta).sum();
  });
  print_line<S>("gnb", seconds, copy, checksum);
}

template <class S>
void bench_ridge_fit(const S& s, int repeats) {
  const Matrix<double> X = ridge_rows(500'000, 64);
  const Vector<double> y = ridge_target(X);
  onelearn::linear_model::Ridge<double, onelearn::exec::local, S> ridge({.alpha = 1.0}, {}, s);
  const double seconds = best_seconds(repeats, [&] { ridge.fit(X, y); });
  print_line<S>("ridge_fit", seconds, 0.0, ridge.score(X, y));
}

template <class S>
void bench_linreg_fit(const S& s, int repeats) {
  const Matrix<double> X = ridge_rows(500'000, 64);
  const Vector<double> y = ridge_target(X);
  onelearn::linear_model::LinearRegression<double, onelearn::exec::local, S> ols({}, {}, s);
  const double seconds = best_seconds(repeats, [&] { ols.fit(X, y); });
  print_line<S>("linreg_fit", seconds, 0.0, ols.score(X, y));
}

template <class S>
void bench_scaler_fit(const S& s, int repeats) {
  const Matrix<double> X = blobs(1'000'000, 32, 4, 7);
  onelearn::preprocessing::StandardScaler<double, onelearn::exec::local, S> scaler({}, {}, s);
  const double seconds = best_seconds(repeats, [&] { scaler.fit(X); });
  print_line<S>("scaler_fit", seconds, 0.0, scaler.scale().sum());
}

template <class S>
void bench_gnb_fit(const S& s, int repeats) {
  const index_t n = 500'000;
  const index_t k = 4;
  onelearn::Labels y;
  const Matrix<double> X = blobs(n, 32, k, 8, &y, 6.0);
  onelearn::naive_bayes::GaussianNB<double, onelearn::exec::local, S> nb({}, {}, s);
  const double seconds = best_seconds(repeats, [&] { nb.fit(X, y); });
  print_line<S>("gnb_fit", seconds, 0.0, accuracy(nb.predict(X), y));
}

template <class S>
void bench_pca_fit(const S& s, int repeats) {
  const Matrix<double> X = ridge_rows(100'000, 128);
  onelearn::decomposition::PCA<double, onelearn::exec::local, S> pca({.n_components = 10}, {}, s);
  const double seconds = best_seconds(repeats, [&] { pca.fit(X); });
  print_line<S>("pca_fit", seconds, 0.0, pca.explained_variance_ratio().sum());
}

template <class S>
void bench_mlp_fit(const S& /*space*/, int repeats) {
  namespace nn = onelearn::nn;
  if constexpr (!S::host_accessible) {
    std::fprintf(stderr,
                 "onelearn-space-bench: mlp_fit skipped: nn::Sequential runs in host-accessible "
                 "spaces only (not %s)\n",
                 std::string(S::name).c_str());
  } else {
    const index_t n = 20'000, width = 784, classes = 10;
    std::mt19937_64 gen(0);
    std::normal_distribution<float> normal;
    std::uniform_int_distribution<std::int64_t> label(0, classes - 1);
    onelearn::Matrix<float> X(n, width);
    for (index_t i = 0; i < X.size(); ++i) X.data()[i] = normal(gen);
    onelearn::Labels y(n);
    for (index_t i = 0; i < n; ++i) y(i) = label(gen);
    nn::Sequential<float, onelearn::exec::local, S> model{
        nn::Input({width}), nn::Dense(256, "relu"), nn::Dense(256, "relu"), nn::Dense(classes)};
    model.compile(nn::Adam{.learning_rate = 1e-3},
                  nn::SparseCategoricalCrossentropy{.from_logits = true});
    double loss = 0;
    const double seconds = best_seconds(repeats, [&] {
      loss = model.fit(X, y, {.epochs = 1, .batch_size = 128, .shuffle = false}).at("loss").back();
    });
    print_line<S>("mlp_fit", seconds, 0.0, loss);
  }
}

template <class S>
void bench_gbdt_fit(const S& s, int repeats) {
  const index_t n = 200'000;
  const index_t p = 28;
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  Matrix<double> X(n, p);
  onelearn::Labels y(n);
  for (index_t i = 0; i < n; ++i) {
    for (index_t j = 0; j < p; ++j) X(i, j) = normal(rng);
    const double score = X(i, 0) - 0.7 * X(i, 3) + 0.5 * X(i, 5) * X(i, 7) +
                         0.3 * std::sin(3 * X(i, 11)) + 0.5 * normal(rng);
    y(i) = score > 0 ? 1 : 0;
  }
  onelearn::ensemble::HistGradientBoostingClassifier<double, onelearn::exec::local, S> gbdt(
      {.learning_rate = 0.1, .max_iter = 100, .max_leaf_nodes = 31, .max_bins = 255,
       .early_stopping = "false"},
      {}, s);
  const double seconds = best_seconds(repeats, [&] { gbdt.fit(X, y); });
  print_line<S>("gbdt_fit", seconds, 0.0, accuracy(gbdt.predict(X), y));
}

template <class S>
int run(const S& s, int repeats, const std::vector<std::string>& workloads) {
  for (const std::string& w : workloads) {
    if (w == "kmeans")
      bench_kmeans(s, repeats);
    else if (w == "knn")
      bench_knn(s, repeats);
    else if (w == "logreg")
      bench_logreg(s, repeats);
    else if (w == "lloyd")
      bench_lloyd(s, repeats);
    else if (w == "knn_search")
      bench_knn_search(s, repeats);
    else if (w == "logreg_eval")
      bench_logreg_eval(s, repeats);
    else if (w == "ridge")
      bench_gram(s, repeats, "ridge", 500'000, 64, true);
    else if (w == "pca")
      bench_gram(s, repeats, "pca", 100'000, 128, false);
    else if (w == "scaler")
      bench_scaler(s, repeats);
    else if (w == "gnb")
      bench_gnb(s, repeats);
    else if (w == "ridge_fit")
      bench_ridge_fit(s, repeats);
    else if (w == "scaler_fit")
      bench_scaler_fit(s, repeats);
    else if (w == "gnb_fit")
      bench_gnb_fit(s, repeats);
    else if (w == "pca_fit")
      bench_pca_fit(s, repeats);
    else if (w == "gbdt_fit")
      bench_gbdt_fit(s, repeats);
    else if (w == "mlp_fit")
      bench_mlp_fit(s, repeats);
    else if (w == "linreg_fit")
      bench_linreg_fit(s, repeats);
    else {
      std::fprintf(
          stderr,
          "onelearn-space-bench: expected a workload among kmeans knn logreg lloyd "
          "knn_search logreg_eval ridge pca scaler gnb ridge_fit scaler_fit gnb_fit pca_fit "
          "gbdt_fit linreg_fit mlp_fit, found '%s'\n",
          w.c_str());
      return 2;
    }
  }
  return 0;
}

/// The spaces this binary was compiled with.
std::string compiled_spaces() {
  std::string out = "host";
#if defined(ONELEARN_SPACE_HAVE_THRUST)
  out += " cpp";
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
  out += " omp";
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
  out += " tbb";
#endif
#if defined(ONELEARN_SPACE_HAVE_CUDA)
  out += " cuda";
#endif
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string chosen = "host";
  int repeats = 3;
  std::vector<std::string> workloads;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if ((arg == "--space" || arg == "--repeats") && i + 1 < argc) {
      const std::string value = argv[++i];
      if (arg == "--space")
        chosen = value;
      else
        repeats = std::max(1, std::atoi(value.c_str()));
    } else if (arg == "--version") {
      std::printf("onelearn-space-bench %s\n", ONELEARN_VERSION_STRING);
      return 0;
    } else if (arg == "--help" || arg == "-h") {
      std::printf(
          "onelearn-space-bench [--space SPACE] [--repeats N] [WORKLOAD...]\n"
          "spaces in this build: %s\n"
          "workloads: kmeans knn logreg ridge_fit linreg_fit scaler_fit gnb_fit pca_fit gbdt_fit "
          "mlp_fit lloyd knn_search logreg_eval ridge pca scaler gnb (default: all)\n",
          compiled_spaces().c_str());
      return 0;
    } else if (arg.starts_with("--")) {
      std::fprintf(stderr, "onelearn-space-bench: unknown option '%s' (see --help)\n", argv[i]);
      return 2;
    } else {
      workloads.emplace_back(arg);
    }
  }
  if (workloads.empty()) {
    workloads = {"kmeans",  "knn",      "logreg", "ridge_fit",  "linreg_fit",  "scaler_fit",
                 "gnb_fit", "pca_fit",  "gbdt_fit", "mlp_fit", "lloyd",   "knn_search", "logreg_eval",
                 "ridge",   "pca",      "scaler", "gnb"};
  }
  onelearn::bench::warn_if_unoptimised("onelearn-space-bench");
  try {
    if (chosen == "host") return run(space::host{}, repeats, workloads);
#if defined(ONELEARN_SPACE_HAVE_THRUST)
    if (chosen == "cpp") return run(space::thrust_cpp{}, repeats, workloads);
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
    if (chosen == "omp") return run(space::thrust_omp{}, repeats, workloads);
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
    if (chosen == "tbb") return run(space::thrust_tbb{}, repeats, workloads);
#endif
#if defined(ONELEARN_SPACE_HAVE_CUDA)
    if (chosen == "cuda") return run(space::thrust_cuda{}, repeats, workloads);
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onelearn-space-bench: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "onelearn-space-bench: expected a space this build has (%s), found '%s'\n",
               compiled_spaces().c_str(), chosen.c_str());
  return 2;
}
