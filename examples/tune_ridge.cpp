// onelearn tune_ridge: ONE training function, used three ways.
//
//   1. a single run              tune::run_once(train, {{"alpha", 1.0}, ...})
//   2. a parallel search         tune::run(train, space, options, world): trials spread over the
//                                MPI ranks (one trial per rank at a time), every rank ending
//                                with the same table; in one process without mpirun
//   3. a distributed training    tune::run_once(train, best.params, world): the best
//      run of the best config    configuration trained once, data-parallel over all ranks
//                                (Ridge<double, exec::mpi>, each rank fitting on its shard)
//
//   ./tune_ridge                      one process (exec::local)
//   mpirun -np 3 ./tune_ridge         three ranks (exec::mpi)
//
// The function never asks how it is run: it takes the policy the trial hands it
// (trial.exec<Exec>()), trains a Ridge with that policy on its shard of the training rows and
// returns the validation R^2. In a search under MPI the trial's policy is MPI_COMM_SELF (the
// rank trains the trial alone, on all the rows); in step 3 it is MPI_COMM_WORLD (each rank
// holds 1/p of the rows, and the Gram matrices are all-reduced).
//
// Data: examples/data/diabetes.csv (442 patients, 10 standardised features, the disease
// progression target), rows in the order of scikit-learn's 75/25 split used by the tests: the
// first 331 rows are the training split, of which the last 66 serve here as validation rows.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <variant>
#include <vector>

#include <onelearn/core/dataset.hpp>
#include <onelearn/exec/local.hpp>
#include <onelearn/io/io.hpp>
#include <onelearn/linear_model/ridge.hpp>
#include <onelearn/tune/run.hpp>

#ifdef ONELEARN_TUNE_RIDGE_WITH_MPI
#include <mpi.h>
#include <onelearn/exec/mpi.hpp>
#include <onelearn/tune/mpi.hpp>
#endif

namespace {

namespace tune = onelearn::tune;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string describe(const tune::ParamList& params) {
  std::string out;
  for (const auto& [name, value] : params) {
    char text[64];
    if (const auto* d = std::get_if<double>(&value)) {
      std::snprintf(text, sizeof text, "%s=%.4g", name.c_str(), *d);
    } else if (const auto* b = std::get_if<bool>(&value)) {
      std::snprintf(text, sizeof text, "%s=%s", name.c_str(), *b ? "true" : "false");
    } else {
      std::snprintf(text, sizeof text, "%s=?", name.c_str());
    }
    out += (out.empty() ? "" : ", ") + std::string(text);
  }
  return out;
}

/// The whole program for one policy type: exec::local, or exec::mpi under mpirun.
/// `self` is the policy of a single run on this process alone.
template <class Exec>
int run(const std::string& csv_path, const Exec& world, const Exec& self,
        const char* policy_name) {
  const bool report = world.rank() == 0;  // every rank computes; rank 0 prints

  const auto data = onelearn::io::load_csv<double>(csv_path, {.label_column = "progression"});
  const auto train_all = data.split_tail(111).first;  // the tail: scikit-learn's test rows
  const auto parts = train_all.split_tail(66);
  const auto& fit_rows = parts.first;
  const auto& validation = parts.second;

  // THE training function: hyper-parameters in, validation R^2 out; it runs unchanged alone,
  // in a search and as one distributed training run.
  auto train = [&](const tune::Trial& trial, tune::Reporter&) -> double {
    const auto policy = trial.exec<Exec>();           // whatever the caller decided
    const auto shard = fit_rows.shard(policy);        // this rank's rows (all, alone)
    const auto val = validation.shard(policy);
    onelearn::linear_model::Ridge<double, Exec> model(
        {.alpha = trial.get<double>("alpha"), .fit_intercept = trial.get<bool>("fit_intercept")},
        policy);
    model.fit(shard.features(), shard.targets());
    return model.score(val.features(), val.targets());  // R^2 over all the policy's rows
  };

  // 1. A single run, on this process alone.
  const tune::ParamList first{{"alpha", 1.0}, {"fit_intercept", true}};
  auto start = Clock::now();
  const double single = tune::run_once(train, first, self);
  const double single_s = seconds_since(start);

  // 2. A random search; under MPI its trials are spread over the ranks.
  const tune::Space space{{"alpha", tune::log_uniform{1e-3, 1e2}},
                          {"fit_intercept", tune::choice{{true, false}}}};
  const tune::RunOptions options{.searcher = tune::Search::random, .n_trials = 24, .seed = 7};
  start = Clock::now();
  const tune::Results results = tune::run(train, space, options, world);
  const double search_s = seconds_since(start);
  const tune::TrialResult& best = results.best();

  // 3. The best configuration, trained once over all the ranks (data-parallel).
  start = Clock::now();
  const double distributed = tune::run_once(train, best.params, world);
  const double distributed_s = seconds_since(start);

  if (report) {
    std::printf("onelearn tune_ridge: %s, policy %s, %d rank%s\n", csv_path.c_str(), policy_name,
                world.size(), world.size() == 1 ? "" : "s");
    std::printf("  data            %lld rows to fit, %lld validation rows, %lld features\n",
                static_cast<long long>(fit_rows.size()), static_cast<long long>(validation.size()),
                static_cast<long long>(data.n_features()));
    std::printf("\n1. single run    Ridge(%s): validation R^2 %.6f  (%.2f ms)\n",
                describe(first).c_str(), single, 1e3 * single_s);
    std::printf("\n2. search        %zu random trials over %d rank%s in %.2f ms\n",
                results.size(), world.size(), world.size() == 1 ? "" : "s", 1e3 * search_s);
    std::size_t shown = 0;
    std::vector<const tune::TrialResult*> order;
    for (const auto& t : results.trials()) order.push_back(&t);
    std::stable_sort(order.begin(), order.end(),
                     [](const auto* a, const auto* b) { return a->score > b->score; });
    for (const auto* t : order) {
      if (shown++ == 5) break;
      std::printf("   trial %2zu  R^2 %.6f  %s\n", t->trial_id, t->score,
                  describe(t->params).c_str());
    }
    std::printf("   ... (%zu more)\n", results.size() - 5);
    std::printf("   best        trial %zu: %s, R^2 %.6f\n", best.trial_id,
                describe(best.params).c_str(), best.score);
    std::printf("\n3. distributed   best configuration over %d rank%s (each fits on ~%lld rows):\n",
                world.size(), world.size() == 1 ? "" : "s",
                static_cast<long long>(fit_rows.size() / world.size()));
    std::printf("                  validation R^2 %.6f  (%.2f ms); in the search: %.6f, "
                "difference %.1e\n",
                distributed, 1e3 * distributed_s, best.score, distributed - best.score);
  }
  return 0;
}

std::string default_csv() {
  if (const char* dir = std::getenv("ONELEARN_DATA_DIR")) return std::string(dir) + "/diabetes.csv";
  return ONELEARN_EXAMPLE_DATA_DIR "/diabetes.csv";
}

/// True when started by an MPI launcher (OpenMPI, MPICH/Hydra, Slurm's PMI/PMIx).
bool launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(variable) != nullptr) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string csv = argc > 1 ? argv[1] : default_csv();
  if (!launched_by_mpi()) {
    try {
      return run(csv, onelearn::exec::local{}, onelearn::exec::local{}, "local");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tune_ridge: %s\n", e.what());
      return 1;
    }
  }
#ifdef ONELEARN_TUNE_RIDGE_WITH_MPI
  // The application owns MPI; onelearn only uses the communicators it is handed.
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = run(csv, onelearn::exec::mpi(MPI_COMM_WORLD), onelearn::exec::mpi(MPI_COMM_SELF),
                 "mpi");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tune_ridge: %s\n", e.what());  // raised on every rank alike
    status = 1;
  }
  MPI_Finalize();
  return status;
#else
  std::fprintf(stderr, "tune_ridge: started by mpirun, but built without MPI\n");
  return 1;
#endif
}
