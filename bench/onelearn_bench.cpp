// onelearn-bench: runs the reference workloads of bench/README.md and prints one JSON object
// per line, to be paired with the peers' lines from the same machine in the same run.
//
//   onelearn-bench --data DIR scaler                      classical workloads on DIR/<workload>/*.npy
//   mpirun -np 2 onelearn-bench --policy mpi scaler       the same, data-parallel (each rank a shard)
//   mpirun -np 2 onelearn-bench --policy mpi allreduce    exec::mpi all-reduce, 1 KiB to 64 MiB
//   mpirun -np 2 onelearn-bench --policy ucx allreduce    the same on exec::ucx (any workload runs on it;
//                                                         --ucx-chunk-bytes N, --ucx-small-bytes N,
//                                                         --ucx-shm-bytes N (0: no shared memory) tune it)
//
// Workloads implemented so far: kmeans, logreg, ridge, pca, scaler, knn, gnb, tree, forest, gbdt, allreduce, the
// networks mlp, cnn, tiny_mlp (local), and mlp data-parallel (weak scaling, under --policy mpi
// or ucx: samples/s per rank, efficiency, the share of communication hidden), and cartpole_env
// (local; the vectorised CartPole-v1 alone, bench/rl_workloads.hpp). Others are reported
// as not implemented. Settings follow the anchor (bench/anchors/sklearn_bench.py) exactly.
// --help lists the options, --version prints the version.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <onelearn/core/dataset.hpp>
#include <onelearn/core/version.hpp>
#include <onelearn/io/io.hpp>
#include <onelearn/exec/local.hpp>
#include <onelearn/cluster/k_means.hpp>
#include <onelearn/decomposition/pca.hpp>
#include <onelearn/linear_model/logistic_regression.hpp>
#include <onelearn/linear_model/ridge.hpp>
#include <onelearn/naive_bayes/gaussian_nb.hpp>
#include <onelearn/neighbors/k_neighbors_classifier.hpp>
#include <onelearn/tree/decision_tree_classifier.hpp>
#include <onelearn/ensemble/forest_classifier.hpp>
#include <onelearn/ensemble/hist_gradient_boosting.hpp>
#include <onelearn/nn/layers/conv2d.hpp>
#include <onelearn/nn/layers/max_pool2d.hpp>
#include <onelearn/nn/sequential.hpp>
#include <onelearn/preprocessing/standard_scaler.hpp>

#include "optimisation_notice.hpp"
#include "rl_workloads.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef ONELEARN_BENCH_WITH_MPI
#include <mpi.h>
#include <onelearn/exec/mpi.hpp>
#endif
#ifdef ONELEARN_BENCH_WITH_UCX
#include <onelearn/exec/ucx.hpp>
#endif

namespace {

using Clock = std::chrono::steady_clock;
using onelearn::index_t;

/// Best wall time of `repeats` runs of `work`, each started together on every rank.
template <class Exec>
double best_seconds(const Exec& exec, int repeats, const std::function<void()>& work) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < repeats; ++i) {
    exec.barrier();
    const auto start = Clock::now();
    work();
    exec.barrier();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

template <class M>
M load(const std::string& dir, const char* workload, const char* name) {
  return onelearn::io::load_npy<M>(dir + "/" + workload + "/" + name + ".npy");
}

template <class Exec>
void print_line(const Exec& exec, const char* workload, const char* policy, double seconds, double quality) {
  if (exec.rank() != 0) return;
  std::printf(R"({"workload": "%s", "impl": "onelearn", "policy": "%s", "ranks": %d, "seconds": %.6g, "quality": %.10g})" "\n",
              workload, policy, exec.size(), seconds, quality);
}

/// StandardScaler fit + transform on DIR/scaler/X.npy; quality: max |column mean| afterwards.
template <class Exec>
void bench_scaler(const std::string& dir, const Exec& exec, const char* policy) {
  const onelearn::Dataset<double> all(load<onelearn::Matrix<double>>(dir, "scaler", "X"));
  const auto shard = all.shard(exec);
  onelearn::Matrix<double> transformed;
  onelearn::preprocessing::StandardScaler<double, Exec> scaler({}, exec);
  const double seconds = best_seconds(exec, 3, [&] { transformed = scaler.fit(shard.features()).transform(shard.features()); });

  // Quality over all ranks: the global column means of the transformed data.
  onelearn::Vector<double> sums = transformed.colwise().sum().transpose();
  exec.allreduce(std::span(sums.data(), static_cast<std::size_t>(sums.size())), onelearn::exec::reduce_op::sum);
  const double quality = (sums / static_cast<double>(all.size())).cwiseAbs().maxCoeff();
  print_line(exec, "scaler", policy, seconds, quality);
}

/// KMeans k=16, init = first 16 rows, one init, 30 Lloyd iterations with tol 0; quality: inertia.
template <class Exec>
void bench_kmeans(const std::string& dir, const Exec& exec, const char* policy) {
  const onelearn::Dataset<double> all(load<onelearn::Matrix<double>>(dir, "kmeans", "X"));
  const auto shard = all.shard(exec);
  onelearn::cluster::KMeans<double, Exec> km({.n_clusters = 16, .n_init = 1, .max_iter = 30, .tol = 0.0}, exec);
  km.set_init(all.features().topRows(16));
  const double seconds = best_seconds(exec, 3, [&] { km.fit(shard.features()); });
  print_line(exec, "kmeans", policy, seconds, km.inertia());
}

/// Ridge alpha=1 (normal equations); quality: R^2 on the training data.
template <class Exec>
void bench_ridge(const std::string& dir, const Exec& exec, const char* policy) {
  const onelearn::Dataset<double> all(load<onelearn::Matrix<double>>(dir, "ridge", "X"),
                                      load<onelearn::Vector<double>>(dir, "ridge", "y"));
  const auto shard = all.shard(exec);
  onelearn::linear_model::Ridge<double, Exec> ridge({.alpha = 1.0}, exec);
  const double seconds = best_seconds(exec, 3, [&] { ridge.fit(shard.features(), shard.targets()); });
  print_line(exec, "ridge", policy, seconds, ridge.score(shard.features(), shard.targets()));
}

/// PCA with 16 components; quality: the sum of the explained variance ratios.
template <class Exec>
void bench_pca(const std::string& dir, const Exec& exec, const char* policy) {
  const onelearn::Dataset<double> all(load<onelearn::Matrix<double>>(dir, "pca", "X"));
  const auto shard = all.shard(exec);
  onelearn::decomposition::PCA<double, Exec> pca({.n_components = 16}, exec);
  const double seconds = best_seconds(exec, 3, [&] { pca.fit(shard.features()); });
  print_line(exec, "pca", policy, seconds, pca.explained_variance_ratio().sum());
}

/// GaussianNB fit + predict; quality: training accuracy.
template <class Exec>
void bench_gnb(const std::string& dir, const Exec& exec, const char* policy) {
  const onelearn::ClassificationDataset<double> all(load<onelearn::Matrix<double>>(dir, "gnb", "X"),
                                                    load<onelearn::Labels>(dir, "gnb", "y"));
  const auto shard = all.shard(exec);
  onelearn::naive_bayes::GaussianNB<double, Exec> nb({}, exec);
  double accuracy = 0;
  const double seconds = best_seconds(exec, 3, [&] {
    accuracy = nb.fit(shard.features(), shard.targets()).score(shard.features(), shard.targets());
  });
  print_line(exec, "gnb", policy, seconds, accuracy);
}

/// DecisionTree max_depth 12 (random_state 0, as the anchor), fit + score; quality: held-out
/// accuracy. Under a distributed policy every rank gathers all rows (tree/detail/training_rows.hpp).
template <class Exec>
void bench_tree(const std::string& dir, const Exec& exec, const char* policy) {
  const onelearn::ClassificationDataset<double> all(load<onelearn::Matrix<double>>(dir, "tree", "X"),
                                                    load<onelearn::Labels>(dir, "tree", "y"));
  const onelearn::ClassificationDataset<double> held_out(load<onelearn::Matrix<double>>(dir, "tree", "Xt"),
                                                         load<onelearn::Labels>(dir, "tree", "yt"));
  const auto shard = all.shard(exec);
  const auto test = held_out.shard(exec);
  onelearn::tree::DecisionTreeClassifier<double, Exec> tree({.max_depth = 12, .random_state = 0}, exec);
  double accuracy = 0;
  const double seconds = best_seconds(exec, 3, [&] {
    accuracy = tree.fit(shard.features(), shard.targets()).score(test.features(), test.targets());
  });
  print_line(exec, "tree", policy, seconds, accuracy);
}

/// RandomForest 50 trees, max_depth 10, random_state 0, on the tree workload's data, fit + score
/// (the anchor: n_jobs=2, one run); quality: held-out accuracy.
template <class Exec>
void bench_forest(const std::string& dir, const Exec& exec, const char* policy) {
  const onelearn::ClassificationDataset<double> all(load<onelearn::Matrix<double>>(dir, "tree", "X"),
                                                    load<onelearn::Labels>(dir, "tree", "y"));
  const onelearn::ClassificationDataset<double> held_out(load<onelearn::Matrix<double>>(dir, "tree", "Xt"),
                                                         load<onelearn::Labels>(dir, "tree", "yt"));
  const auto shard = all.shard(exec);
  const auto test = held_out.shard(exec);
  onelearn::ensemble::RandomForestClassifier<double, Exec> forest(
      {.n_estimators = 50, .max_depth = 10, .random_state = 0}, exec);
  double accuracy = 0;
  const double seconds = best_seconds(exec, 1, [&] {
    accuracy = forest.fit(shard.features(), shard.targets()).score(test.features(), test.targets());
  });
  print_line(exec, "forest", policy, seconds, accuracy);
}

/// Histogram gradient boosting: 100 iterations, learning rate 0.1, 31 leaves, 255 bins, no early
/// stopping (the anchor's settings), fit + score; quality: held-out accuracy. Under a distributed
/// policy each rank holds its shard; histograms are all-reduced.
template <class Exec>
void bench_gbdt(const std::string& dir, const Exec& exec, const char* policy) {
  const onelearn::ClassificationDataset<double> all(load<onelearn::Matrix<double>>(dir, "gbdt", "X"),
                                                    load<onelearn::Labels>(dir, "gbdt", "y"));
  const onelearn::ClassificationDataset<double> held_out(load<onelearn::Matrix<double>>(dir, "gbdt", "Xt"),
                                                         load<onelearn::Labels>(dir, "gbdt", "yt"));
  const auto shard = all.shard(exec);
  const auto test = held_out.shard(exec);
  onelearn::ensemble::HistGradientBoostingClassifier<double, Exec> gbdt(
      {.learning_rate = 0.1, .max_iter = 100, .max_leaf_nodes = 31, .max_bins = 255,
       .early_stopping = "false", .random_state = 0},
      exec);
  double accuracy = 0;
  const double seconds = best_seconds(exec, 1, [&] {
    accuracy = gbdt.fit(shard.features(), shard.targets()).score(test.features(), test.targets());
  });
  print_line(exec, "gbdt", policy, seconds, accuracy);
}

/// Multinomial LogisticRegression C=1, L-BFGS, 100 iterations (tol 1e-12, as the anchor, so both
/// run all 100); quality: accuracy on the held-out Xt/yt.
template <class Exec>
void bench_logreg(const std::string& dir, const Exec& exec, const char* policy) {
  const onelearn::ClassificationDataset<double> all(load<onelearn::Matrix<double>>(dir, "logreg", "X"),
                                                    load<onelearn::Labels>(dir, "logreg", "y"));
  const onelearn::ClassificationDataset<double> held_out(load<onelearn::Matrix<double>>(dir, "logreg", "Xt"),
                                                         load<onelearn::Labels>(dir, "logreg", "yt"));
  const auto shard = all.shard(exec);
  const auto test = held_out.shard(exec);
  onelearn::linear_model::LogisticRegression<double, Exec> model({.C = 1.0, .max_iter = 100, .tol = 1e-12}, exec);
  const double seconds = best_seconds(exec, 3, [&] { model.fit(shard.features(), shard.targets()); });
  print_line(exec, "logreg", policy, seconds, model.score(test.features(), test.targets()));
}

/// KNeighborsClassifier k=5, brute force, fit + score on Xt/yt; quality: that accuracy. Under
/// exec::mpi the training rows stay sharded and every rank passes all the queries.
template <class Exec>
void bench_knn(const std::string& dir, const Exec& exec, const char* policy) {
  const onelearn::ClassificationDataset<double> all(load<onelearn::Matrix<double>>(dir, "knn", "X"),
                                                    load<onelearn::Labels>(dir, "knn", "y"));
  const auto Xt = load<onelearn::Matrix<double>>(dir, "knn", "Xt");
  const auto yt = load<onelearn::Labels>(dir, "knn", "yt");
  const auto shard = all.shard(exec);
  onelearn::neighbors::KNeighborsClassifier<double, Exec> knn({.n_neighbors = 5}, exec);
  double accuracy = 0;
  const double seconds = best_seconds(exec, 3, [&] {
    accuracy = knn.fit(shard.features(), shard.targets()).score(Xt, yt);
  });
  print_line(exec, "knn", policy, seconds, accuracy);
}

/// The neural-network workloads of bench/README.md, as bench/anchors/torch_bench.py runs them: float32
/// N(0, 1) features and uniform labels made in-process, Adam lr 1e-3, softmax cross-entropy, no
/// shuffling; samples per second of the better of two epochs, for the better of 1 and 2 threads
/// (as the anchor picks for PyTorch). final_loss is the mean training loss of the last epoch
/// (the anchor prints its last batch's loss: compare them loosely).
template <class MakeModel>
void bench_network(const char* name, MakeModel make_model, index_t n, index_t width, index_t classes,
                   index_t batch) {
  std::mt19937_64 gen(0);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<std::int64_t> label(0, classes - 1);
  onelearn::Matrix<float> X(n, width);
  for (index_t i = 0; i < X.size(); ++i) X.data()[i] = normal(gen);
  onelearn::Labels y(n);
  for (index_t i = 0; i < n; ++i) y(i) = label(gen);

  double best = 0, loss = 0;
#ifdef _OPENMP
  const int before = omp_get_max_threads();
  for (const int threads : {1, 2}) {
    omp_set_num_threads(threads);
#else
  {
#endif
    onelearn::nn::Sequential<float> model = make_model();
    model.compile(onelearn::nn::Adam{.learning_rate = 1e-3},
                  onelearn::nn::SparseCategoricalCrossentropy{.from_logits = true});
    double run_best = 0, run_loss = 0;  // this thread count's better epoch, and its final loss
    for (int epoch = 0; epoch < 2; ++epoch) {
      const auto start = Clock::now();
      const auto history = model.fit(X, y, {.epochs = 1, .batch_size = batch, .shuffle = false});
      run_best = std::max(run_best, static_cast<double>(n) / std::chrono::duration<double>(Clock::now() - start).count());
      run_loss = history.at("loss").back();
    }
    if (run_best > best) {
      best = run_best;
      loss = run_loss;
    }
  }
#ifdef _OPENMP
  omp_set_num_threads(before);
#endif
  std::printf(R"({"workload": "%s", "impl": "onelearn", "policy": "local", "samples_per_second": %.1f, "final_loss": %.4f})" "\n",
              name, best, loss);
}

void bench_mlp() {
  namespace nn = onelearn::nn;
  bench_network("mlp", [] {
    return nn::Sequential<float>{nn::Input({784}), nn::Dense(256, "relu"), nn::Dense(256, "relu"), nn::Dense(10)};
  }, 20'000, 784, 10, 128);
}

void bench_cnn() {
  namespace nn = onelearn::nn;
  bench_network("cnn", [] {
    return nn::Sequential<float>{nn::Input({1, 28, 28}),
                                 nn::Conv2D(16, 3, {.padding = 1, .activation = "relu"}), nn::MaxPool2D(2),
                                 nn::Conv2D(32, 3, {.padding = 1, .activation = "relu"}), nn::MaxPool2D(2),
                                 nn::Flatten{}, nn::Dense(10)};
  }, 5'000, 28 * 28, 10, 64);
}

void bench_tiny_mlp() {
  namespace nn = onelearn::nn;
  bench_network("tiny_mlp", [] {
    return nn::Sequential<float>{nn::Input({16}), nn::Dense(32, "tanh"), nn::Dense(2)};
  }, 20'000, 16, 2, 32);
}

/// The mlp workload's network on policy `exec` (one process's when exec::local).
template <class Exec>
onelearn::nn::Sequential<float, Exec> mlp_model(const Exec& exec) {
  namespace nn = onelearn::nn;
  onelearn::nn::Sequential<float, Exec> model{exec, nn::Input({784}), nn::Dense(256, "relu"),
                                              nn::Dense(256, "relu"), nn::Dense(10)};
  model.compile(nn::Adam{.learning_rate = 1e-3}, nn::SparseCategoricalCrossentropy{.from_logits = true});
  return model;
}

/// Samples per second of the better of two epochs of `model` on (X, y), and the last loss.
template <class Model>
std::pair<double, double> epoch_rate(Model& model, const onelearn::Matrix<float>& X, const onelearn::Labels& y,
                                     index_t batch) {
  double best = 0, loss = 0;
  for (int epoch = 0; epoch < 2; ++epoch) {
    const auto start = Clock::now();
    const auto history = model.fit(X, y, {.epochs = 1, .batch_size = batch, .shuffle = false});
    best = std::max(best, static_cast<double>(X.rows()) / std::chrono::duration<double>(Clock::now() - start).count());
    loss = history.at("loss").back();
  }
  return {best, loss};
}

/// mlp data-parallel, weak scaling (issue 5): every rank holds the anchor's 20,000 samples of its
/// own and trains on batches of 128 of them (a global batch of 128 x ranks), one thread per rank.
/// Three runs in one: rank 0 alone on exec::local while the others wait (the one-process
/// baseline), every rank at once on exec::local (the same work with no communication: what the
/// shared cores and memory allow), and data-parallel on `exec`. Printed:
///   samples_per_second_per_rank / baseline    the weak-scaling efficiency;
///   comm_hidden_share                          1 - (data-parallel epoch - concurrent local epoch)
///                                              / (steps x one blocking all-reduce of every gradient),
///                                              clamped to [0, 1]: the share of the gradient
///                                              all-reduce that the backward pass hides.
template <class Exec>
void bench_mlp_data_parallel(const Exec& exec, const char* policy) {
  constexpr index_t n = 20'000, width = 784, classes = 10, batch = 128;
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  std::mt19937_64 gen(static_cast<std::uint64_t>(exec.rank()));
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<std::int64_t> label(0, classes - 1);
  onelearn::Matrix<float> X(n, width);
  for (index_t i = 0; i < X.size(); ++i) X.data()[i] = normal(gen);
  onelearn::Labels y(n);
  for (index_t i = 0; i < n; ++i) y(i) = label(gen);

  double baseline = 0;
  exec.barrier();
  if (exec.rank() == 0) {
    auto alone = mlp_model(onelearn::exec::local{});
    baseline = epoch_rate(alone, X, y, batch).first;
  }
  exec.barrier();
  auto concurrent_model = mlp_model(onelearn::exec::local{});
  const double concurrent = epoch_rate(concurrent_model, X, y, batch).first;
  exec.barrier();
  auto model = mlp_model(exec);
  const auto [rate, loss] = epoch_rate(model, X, y, batch);

  // One blocking all-reduce of every gradient, as each step would pay it without the overlap.
  index_t parameters = 0;
  for (const auto& w : model.get_weights()) parameters += static_cast<index_t>(w.size());
  std::vector<float> gradients(static_cast<std::size_t>(parameters), 1.0f);
  constexpr int iters = 20;
  exec.barrier();
  const auto start = Clock::now();
  for (int i = 0; i < iters; ++i) exec.allreduce(std::span(gradients), onelearn::exec::reduce_op::sum);
  const double allreduce_seconds = std::chrono::duration<double>(Clock::now() - start).count() / iters;

  // The slowest rank's figures.
  std::array<double, 2> slowest{-rate, -concurrent};
  exec.allreduce(std::span(slowest), onelearn::exec::reduce_op::max);
  const double per_rank = -slowest[0], concurrent_per_rank = -slowest[1];
  const double steps = std::ceil(static_cast<double>(n) / batch);
  const double exposed = static_cast<double>(n) / per_rank - static_cast<double>(n) / concurrent_per_rank;
  const double hidden = std::clamp(1.0 - exposed / (steps * allreduce_seconds), 0.0, 1.0);
  if (exec.rank() == 0) {
    std::printf(R"({"workload": "mlp", "impl": "onelearn", "policy": "%s", "ranks": %d, "samples_per_second": %.1f, )"
                R"("samples_per_second_per_rank": %.1f, "baseline_samples_per_second": %.1f, "weak_scaling_efficiency": %.3f, )"
                R"("concurrent_local_samples_per_second_per_rank": %.1f, "allreduce_seconds_per_step": %.3g, "comm_hidden_share": %.3f, "final_loss": %.4f})" "\n",
                policy, exec.size(), per_rank * exec.size(), per_rank, baseline, per_rank / baseline,
                concurrent_per_rank, allreduce_seconds, hidden, loss);
  }
}

#ifdef ONELEARN_BENCH_WITH_MPI
/// The policy's all-reduce of float sums (exec::mpi or exec::ucx), 1 KiB to 64 MiB; bus bandwidth
/// as nccl-tests define it. Timed as bench/anchors/allreduce.c times MPI_Allreduce, so the lines
/// compare directly: the mean over `iters` back-to-back calls, the slowest rank's, best of 3.
template <class Exec>
void bench_allreduce(const Exec& exec, const char* policy) {
  for (std::size_t bytes = 1024; bytes <= (std::size_t{64} << 20); bytes *= 4) {
    std::vector<float> buffer(bytes / sizeof(float), 1.0f);
    const int iters = bytes < (std::size_t{1} << 20) ? 200 : 20;
    double best = std::numeric_limits<double>::infinity();
    for (int rep = 0; rep < 3; ++rep) {
      exec.barrier();
      const auto start = Clock::now();
      for (int i = 0; i < iters; ++i) exec.allreduce(std::span(buffer), onelearn::exec::reduce_op::sum);
      std::array<double, 1> mean{std::chrono::duration<double>(Clock::now() - start).count() / iters};
      exec.allreduce(std::span(mean), onelearn::exec::reduce_op::max);
      best = std::min(best, mean[0]);
    }
    const double p = exec.size();
    const double busbw = 2 * (p - 1) / p * static_cast<double>(bytes) / best / 1e9;
    if (exec.rank() == 0) {
      std::printf(R"({"workload": "allreduce", "impl": "onelearn", "policy": "%s", "ranks": %d, "bytes": %zu, "seconds": %.6g, "busbw_gbps": %.4g})" "\n",
                  policy, exec.size(), bytes, best, busbw);
    }
  }
}
#endif

template <class Exec>
int run(const std::vector<std::string>& workloads, const std::string& dir, const Exec& exec, const char* policy) {
  for (const auto& workload : workloads) {
    if (workload == "scaler") {
      bench_scaler(dir, exec, policy);
    } else if (workload == "kmeans") {
      bench_kmeans(dir, exec, policy);
    } else if (workload == "logreg") {
      bench_logreg(dir, exec, policy);
    } else if (workload == "ridge") {
      bench_ridge(dir, exec, policy);
    } else if (workload == "pca") {
      bench_pca(dir, exec, policy);
    } else if (workload == "knn") {
      bench_knn(dir, exec, policy);
    } else if (workload == "gnb") {
      bench_gnb(dir, exec, policy);
    } else if (workload == "tree") {
      bench_tree(dir, exec, policy);
    } else if (workload == "forest") {
      bench_forest(dir, exec, policy);
    } else if (workload == "gbdt") {
      bench_gbdt(dir, exec, policy);
    } else if (workload == "mlp") {
      if constexpr (Exec::is_distributed) {
        bench_mlp_data_parallel(exec, policy);
      } else {
        bench_mlp();
      }
    } else if (workload == "cnn" && !Exec::is_distributed) {
      bench_cnn();
    } else if (workload == "tiny_mlp" && !Exec::is_distributed) {
      bench_tiny_mlp();
    } else if (workload == "cartpole_env" && !Exec::is_distributed) {
      onelearn_bench::bench_cartpole_env();
    } else if (workload == "ppo_cartpole") {
      onelearn_bench::bench_ppo_cartpole(exec, policy);
    } else if (workload == "dqn_cartpole" && !Exec::is_distributed) {
      onelearn_bench::bench_dqn_cartpole();
#ifdef ONELEARN_BENCH_WITH_MPI
    } else if (workload == "allreduce" && Exec::is_distributed) {
      if constexpr (Exec::is_distributed) bench_allreduce(exec, policy);
#endif
    } else if (exec.rank() == 0) {
      std::printf(R"({"workload": "%s", "impl": "onelearn", "policy": "%s", "error": "not implemented"})" "\n",
                  workload.c_str(), policy);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = ".";
  std::string policy = "local";
#ifdef ONELEARN_BENCH_WITH_UCX
  onelearn::exec::ucx_options ucx_settings;  // --ucx-chunk-bytes, --ucx-small-bytes, --ucx-shm-bytes: tuning runs
#endif
  std::vector<std::string> workloads;
  CLI::App app{"onelearn-bench: the reference workloads of bench/README.md, one JSON line each", "onelearn-bench"};
  app.set_version_flag("--version", std::string("onelearn-bench ") + std::string(onelearn::version));
  app.add_option("--data", dir, "the folder make_data.py wrote (DIR/<workload>/*.npy)")->capture_default_str();
  app.add_option("--policy", policy, "local, or under mpirun: mpi or ucx")
      ->check(CLI::IsMember({"local", "mpi", "ucx"}))
      ->capture_default_str();
#ifdef ONELEARN_BENCH_WITH_UCX
  app.add_option("--ucx-chunk-bytes", ucx_settings.chunk_bytes, "exec::ucx ring and broadcast chunk");
  app.add_option("--ucx-small-bytes", ucx_settings.small_message_bytes,
                 "exec::ucx: recursive doubling below this size");
  app.add_option("--ucx-shm-bytes", ucx_settings.shared_memory_bytes,
                 "exec::ucx shared-memory round size (0: no shared memory)");
#endif
  app.add_option("WORKLOAD", workloads,
                 "kmeans logreg ridge pca scaler knn gnb tree forest gbdt allreduce mlp cnn tiny_mlp cartpole_env ppo_cartpole dqn_cartpole (others print "
                 "\"not implemented\")")
      ->required();
  CLI11_PARSE(app, argc, argv);
  onelearn::bench::warn_if_unoptimised("onelearn-bench");
  try {
    if (policy == "local") return run(workloads, dir, onelearn::exec::local{}, "local");
#ifdef ONELEARN_BENCH_WITH_MPI
    if (policy == "mpi") {
      MPI_Init(&argc, &argv);
      const int status = run(workloads, dir, onelearn::exec::mpi(MPI_COMM_WORLD), "mpi");
      MPI_Finalize();
      return status;
    }
#endif
#ifdef ONELEARN_BENCH_WITH_UCX
    if (policy == "ucx") {
      MPI_Init(&argc, &argv);
      int status = 0;
      {  // the policy's UCX worker is released before MPI_Finalize
        status = run(workloads, dir, onelearn::exec::ucx(MPI_COMM_WORLD, ucx_settings), "ucx");
      }
      MPI_Finalize();
      return status;
    }
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onelearn-bench: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "onelearn-bench: unknown or unavailable policy '%s'\n", policy.c_str());
  return 2;
}
