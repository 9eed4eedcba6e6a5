// onelearn-onnx-bench: the onnx_infer workloads. Inference of bench/README.md's mlp and cnn
// networks exported to ONNX and run by onelearn's executor (onnx::Graph), at batch 1 and 64.
// It writes the models it times to --out, so that onnxruntime times the same files in the same
// run (bench/anchors/onnxruntime_bench.js; bench/onnx_infer.sh runs both and prints the ratios).
//
//   onelearn-onnx-bench --out DIR [--repeats R] [mlp] [cnn]
//
// One JSON line per (model, batch): {"workload": "onnx_infer", "impl": "onelearn", "model",
// "batch", "threads", "seconds" (median time of one run over R repeats), "best_seconds",
// "samples_per_second" (batch / seconds), "max_abs_diff_vs_nn"} — the last is the largest
// difference between the executor's outputs and nn::Sequential::predict's on the same batch,
// so a fast but wrong executor shows. Threads: OMP_NUM_THREADS (the executor's Conv, pools and
// large GEMMs use OpenMP).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <onelearn/core/version.hpp>
#include <onelearn/nn/layers/conv2d.hpp>
#include <onelearn/nn/layers/dense.hpp>
#include <onelearn/nn/layers/flatten.hpp>
#include <onelearn/nn/layers/max_pool2d.hpp>
#include <onelearn/nn/sequential.hpp>
#include <onelearn/onnx/export.hpp>
#include <onelearn/onnx/graph.hpp>

#include "optimisation_notice.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

namespace nn = onelearn::nn;
namespace ox = onelearn::onnx;
using Clock = std::chrono::steady_clock;
using onelearn::index_t;

struct Network {
  const char* name;
  nn::Sequential<float> (*make)();
  std::vector<std::int64_t> sample_shape;  ///< per sample, as the ONNX input (after N)
};

nn::Sequential<float> make_mlp() {
  return nn::Sequential<float>{nn::Input({784}), nn::Dense(256, "relu"), nn::Dense(256, "relu"),
                               nn::Dense(10)};
}

nn::Sequential<float> make_cnn() {
  return nn::Sequential<float>{nn::Input({1, 28, 28}),
                               nn::Conv2D(16, 3, {.padding = 1, .activation = "relu"}), nn::MaxPool2D(2),
                               nn::Conv2D(32, 3, {.padding = 1, .activation = "relu"}), nn::MaxPool2D(2),
                               nn::Flatten{}, nn::Dense(10)};
}

/// Median and best seconds of one graph.run, over `repeats` timings of enough runs to take
/// about 0.1 s each (the count fixed once, after a warm-up). The input vector is built once,
/// as a program that runs a model repeatedly would (run takes its inputs by reference).
std::pair<double, double> time_runs(const ox::Graph& graph, const std::vector<ox::Tensor>& x,
                                    int repeats) {
  for (int i = 0; i < 5; ++i) (void)graph.run(x);
  auto start = Clock::now();
  (void)graph.run(x);
  const double once = std::chrono::duration<double>(Clock::now() - start).count();
  const int runs = std::max(1, static_cast<int>(0.1 / std::max(once, 1e-7)));
  std::vector<double> per_run;
  for (int r = 0; r < repeats; ++r) {
    start = Clock::now();
    for (int i = 0; i < runs; ++i) (void)graph.run(x);
    per_run.push_back(std::chrono::duration<double>(Clock::now() - start).count() / runs);
  }
  std::sort(per_run.begin(), per_run.end());
  return {per_run[per_run.size() / 2], per_run.front()};
}

void bench(const Network& net, const std::filesystem::path& out, int repeats) {
  nn::Sequential<float> model = net.make();
  nn::Shape sample;
  for (const std::int64_t d : net.sample_shape) sample.push_back(d);
  model.build(sample, 0);
  const std::filesystem::path path = out / (std::string(net.name) + ".onnx");
  ox::save(model, path);
  const ox::Graph graph = ox::load(path);
  index_t width = 1;
  for (const std::int64_t d : net.sample_shape) width *= d;
  for (const std::int64_t batch : {1, 64}) {
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    onelearn::Matrix<float> X(batch, width);
    for (index_t i = 0; i < X.size(); ++i) X.data()[i] = normal(rng);
    ox::Shape shape{batch};
    shape.insert(shape.end(), net.sample_shape.begin(), net.sample_shape.end());
    const std::vector<ox::Tensor> x{ox::Tensor(shape, std::vector<float>(X.data(), X.data() + X.size()))};
    const std::vector<ox::Tensor> outputs = graph.run(x);
    const auto y = outputs[0].data<float>();
    const onelearn::Matrix<float> expected = model.predict(X);
    double diff = 0;
    for (index_t i = 0; i < expected.size(); ++i) {
      diff = std::max(diff, static_cast<double>(std::abs(y[static_cast<std::size_t>(i)] - expected.data()[i])));
    }
    const auto [median, best] = time_runs(graph, x, repeats);
#ifdef _OPENMP
    const int threads = omp_get_max_threads();
#else
    const int threads = 1;
#endif
    std::printf(R"({"workload": "onnx_infer", "impl": "onelearn", "model": "%s", "batch": %ld, "threads": %d, )"
                R"("seconds": %.6g, "best_seconds": %.6g, "samples_per_second": %.1f, "max_abs_diff_vs_nn": %.3g})" "\n",
                net.name, static_cast<long>(batch), threads, median, best,
                static_cast<double>(batch) / median, diff);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string out;
  int repeats = 5;
  std::vector<std::string> models{"mlp", "cnn"};
  CLI::App app{"onelearn-onnx-bench: ONNX inference of the mlp and cnn networks by onelearn's executor",
               "onelearn-onnx-bench"};
  app.set_version_flag("--version", std::string("onelearn-onnx-bench ") + std::string(onelearn::version));
  app.add_option("--out", out, "folder the timed models are written to (mlp.onnx, cnn.onnx)")->required();
  app.add_option("--repeats", repeats, "timings per (model, batch); the median is reported")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("MODEL", models, "mlp, cnn (default both)")->check(CLI::IsMember({"mlp", "cnn"}));
  CLI11_PARSE(app, argc, argv);
  onelearn::bench::warn_if_unoptimised("onelearn-onnx-bench");
  try {
    std::filesystem::create_directories(out);
    for (const std::string& name : models) {
      if (name == "mlp") bench({"mlp", make_mlp, {784}}, out, repeats);
      if (name == "cnn") bench({"cnn", make_cnn, {1, 28, 28}}, out, repeats);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onelearn-onnx-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
