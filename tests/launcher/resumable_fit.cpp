// A training program as a user writes it for onelearn-run: it checkpoints every epoch into
// ONELEARN_CHECKPOINT_DIR and resumes from the newest complete checkpoint there. The test
// (tests/cmake/run_resume_test.cmake) runs it once uninterrupted under mpirun and once under
// onelearn-run with a rank killed by SIGKILL mid-epoch, and compares the two weight files byte
// for byte; in the `blocks` mode the killed job also loses a slot and resumes on fewer ranks.
//
//   resumable_fit OUT.olw MODE [KILL_RANK KILL_BATCH [HOSTFILE]]
//     MODE        per-rank (each rank its own rows), replicated (every rank all rows), or
//                 blocks (replicated, with reproducible_blocks = 6: the weights do not depend
//                 on the number of ranks); with "+ucx" (e.g. blocks+ucx), under exec::ucx
//                 instead of exec::mpi (a build with UCX)
//     KILL_RANK   on the first attempt, this rank kills itself (SIGKILL) after global batch
//     KILL_BATCH  (counted over the epochs, from 0); omitted: never
//     HOSTFILE    before it dies, the killed rank rewrites this hostfile (onelearn-run's
//                 --hostfile) with one slot fewer, as an operator takes a failed node out
// Rank 0 writes the final weights to OUT.olw.
//
// With ONELEARN_RESTART_LOG=FILE set (bench/restart_latency.sh), it appends wall-clock times in
// seconds to FILE: "killed T" as the rank kills itself, "started T" when an attempt after the
// first enters main, "first_batch T" when rank 0 ends that attempt's first batch.

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include <mpi.h>

#include "onelearn/core/run_environment.hpp"
#include "onelearn/exec/mpi.hpp"
#include "onelearn/nn/sequential.hpp"
#ifdef ONELEARN_TEST_UCX
#include "onelearn/exec/ucx.hpp"
#endif

namespace nn = onelearn::nn;
using onelearn::index_t;

namespace {

/// Appends "event seconds-since-the-epoch" to $ONELEARN_RESTART_LOG, when it is set.
void log_event(const char* event) {
  const char* path = std::getenv("ONELEARN_RESTART_LOG");
  if (path == nullptr || *path == '\0') return;
  const double now = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
  std::ofstream(path, std::ios::app) << event << ' ' << std::fixed << now << '\n';
}

/// On the first attempt, rank kill_rank dies (SIGKILL) after its global batch kill_batch
/// (counted over the epochs, from 0).
struct KillAtBatch {
  int rank = 0;
  int ranks = 1;
  int kill_rank = -1;
  int kill_batch = -1;
  std::string shrink_hostfile;
  int seen = 0;
  template <class Model>
  void on_batch_end(Model&, int, const nn::Logs&) {
    if (onelearn::run::attempt() == 0 && rank == kill_rank && seen == kill_batch) {
      if (!shrink_hostfile.empty()) {
        std::ofstream(shrink_hostfile) << "localhost slots=" << ranks - 1 << "\n";
      }
      log_event("killed");
      std::raise(SIGKILL);
    }
    if (onelearn::run::attempt() > 0 && rank == 0 && seen == 0) log_event("first_batch");
    ++seen;
  }
};

/// The run: 6 epochs of a small network, checkpointed every epoch into ONELEARN_CHECKPOINT_DIR
/// and resumed from there; rank 0 writes the final weights to `out`.
template <class Exec>
void train(const Exec& exec, const std::string& out, const std::string& mode, int kill_rank,
           int kill_batch, const std::string& shrink_hostfile) {
  const bool blocks = mode == "blocks";
  const bool replicated = mode == "replicated" || blocks;
  if (!replicated && mode != "per-rank") {
    throw std::invalid_argument("expected MODE per-rank, replicated or blocks (+ucx), found " + mode);
  }

  // 240 rows of 12 features, 4 classes; per-rank: rank r holds rows r, r + size, ...
  const index_t n = 240;
  onelearn::Matrix<float> X_all(n, 12);
  onelearn::Labels y_all(n);
  for (index_t i = 0; i < n; ++i) {
    for (index_t j = 0; j < 12; ++j) X_all(i, j) = static_cast<float>(((i * 7 + j * 13) % 17) - 8) / 8.0F;
    y_all(i) = (i * 5 + (i / 7)) % 4;
  }
  onelearn::Matrix<float> X = X_all;
  onelearn::Labels y = y_all;
  if (!replicated) {
    const index_t mine = (n - exec.rank() + exec.size() - 1) / exec.size();
    X.resize(mine, 12);
    y.resize(mine);
    for (index_t k = 0; k < mine; ++k) {
      X.row(k) = X_all.row(exec.rank() + k * exec.size());
      y(k) = y_all(exec.rank() + k * exec.size());
    }
  }

  nn::Sequential<float, Exec> model{exec, nn::Input({12}), nn::Dense(16, "relu"), nn::Dropout{0.25},
                                    nn::Dense(4)};
  model.compile(nn::Adam{.learning_rate = 1e-2},
                nn::SparseCategoricalCrossentropy{.from_logits = true});

  const auto dir = onelearn::run::checkpoint_dir();
  nn::FitOptions options{.epochs = 6, .batch_size = 16, .seed = 42, .replicated = replicated};
  if (blocks) options.reproducible_blocks = 6;
  options.resume_from = nn::latest_checkpoint(model, dir);
  if (exec.rank() == 0 && !options.resume_from.empty()) {
    std::cerr << "resumable_fit: attempt " << onelearn::run::attempt() << " resumes from "
              << options.resume_from << " on " << exec.size() << " ranks\n";
  }
  KillAtBatch kill_at_batch{exec.rank(), exec.size(), kill_rank, kill_batch, shrink_hostfile};
  if (dir.empty()) {
    model.fit(X, y, options, kill_at_batch);
  } else {
    nn::ModelCheckpoint every_epoch(dir / "epoch{epoch}.olc", {.keep_last = 2});
    model.fit(X, y, options, kill_at_batch, every_epoch);
  }
  if (exec.rank() == 0) model.save_weights(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (onelearn::run::attempt() > 0) log_event("started");
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    if (argc < 3 || argc == 4 || argc > 6) {
      throw std::invalid_argument("usage: resumable_fit OUT.olw MODE [KILL_RANK KILL_BATCH [HOSTFILE]]");
    }
    std::string mode = argv[2];
    const bool ucx = mode.ends_with("+ucx");
    if (ucx) mode.resize(mode.size() - 4);
    const int kill_rank = argc >= 5 ? std::atoi(argv[3]) : -1;
    const int kill_batch = argc >= 5 ? std::atoi(argv[4]) : -1;
    const std::string hostfile = argc == 6 ? argv[5] : "";
    if (!ucx) {
      train(onelearn::exec::mpi(MPI_COMM_WORLD), argv[1], mode, kill_rank, kill_batch, hostfile);
    } else {
#ifdef ONELEARN_TEST_UCX
      train(onelearn::exec::ucx(MPI_COMM_WORLD), argv[1], mode, kill_rank, kill_batch, hostfile);
#else
      throw std::invalid_argument("MODE " + std::string(argv[2]) + " needs a build with UCX");
#endif
    }
  } catch (const std::exception& e) {
    std::cerr << "resumable_fit: " << e.what() << "\n";
    status = 1;
  }
  MPI_Finalize();
  return status;
}
