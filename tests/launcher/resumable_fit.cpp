// A training program as a user writes it for onelearn-run: it checkpoints every epoch into
// ONELEARN_CHECKPOINT_DIR and resumes from the newest complete checkpoint there. The test
// (tests/cmake/run_resume_test.cmake) runs it once uninterrupted under mpirun and once under
// onelearn-run with a rank killed by SIGKILL mid-epoch, and compares the two weight files byte
// for byte.
//
//   resumable_fit OUT.olw MODE [KILL_RANK KILL_BATCH]
//     MODE        per-rank (each rank its own rows) or replicated (every rank all rows)
//     KILL_RANK   on the first attempt, this rank kills itself (SIGKILL) after global batch
//     KILL_BATCH  (counted over the epochs, from 0); omitted: never
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
  int kill_rank = -1;
  int kill_batch = -1;
  int seen = 0;
  template <class Model>
  void on_batch_end(Model&, int, const nn::Logs&) {
    if (onelearn::run::attempt() == 0 && rank == kill_rank && seen == kill_batch) {
      log_event("killed");
      std::raise(SIGKILL);
    }
    if (onelearn::run::attempt() > 0 && rank == 0 && seen == 0) log_event("first_batch");
    ++seen;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (onelearn::run::attempt() > 0) log_event("started");
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    if (argc != 3 && argc != 5) throw std::invalid_argument("usage: resumable_fit OUT.olw MODE [KILL_RANK KILL_BATCH]");
    const std::string out = argv[1];
    const bool replicated = std::string(argv[2]) == "replicated";
    const int kill_rank = argc == 5 ? std::atoi(argv[3]) : -1;
    const int kill_batch = argc == 5 ? std::atoi(argv[4]) : -1;
    const onelearn::exec::mpi exec(MPI_COMM_WORLD);

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

    nn::Sequential<float, onelearn::exec::mpi> model{exec, nn::Input({12}), nn::Dense(16, "relu"),
                                                     nn::Dropout{0.25}, nn::Dense(4)};
    model.compile(nn::Adam{.learning_rate = 1e-2},
                  nn::SparseCategoricalCrossentropy{.from_logits = true});

    const auto dir = onelearn::run::checkpoint_dir();
    nn::FitOptions options{.epochs = 6, .batch_size = 16, .seed = 42, .replicated = replicated};
    options.resume_from = nn::latest_checkpoint(model, dir);
    if (exec.rank() == 0 && !options.resume_from.empty()) {
      std::cerr << "resumable_fit: attempt " << onelearn::run::attempt() << " resumes from "
                << options.resume_from << "\n";
    }
    KillAtBatch kill_at_batch{exec.rank(), kill_rank, kill_batch};
    if (dir.empty()) {
      model.fit(X, y, options, kill_at_batch);
    } else {
      nn::ModelCheckpoint every_epoch(dir / "epoch{epoch}.olc", {.keep_last = 2});
      model.fit(X, y, options, kill_at_batch, every_epoch);
    }
    if (exec.rank() == 0) model.save_weights(out);
  } catch (const std::exception& e) {
    std::cerr << "resumable_fit: " << e.what() << "\n";
    status = 1;
  }
  MPI_Finalize();
  return status;
}
