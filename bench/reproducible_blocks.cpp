// The cost of FitOptions::reproducible_blocks: the same replicated nn::Sequential fit with the
// ordinary all-reduce (blocks 0) and with B = 2, 4, 8 fixed blocks a global batch (every rank
// receives every block's gradient and the layers run on batch / B rows at a time). Run it on one
// process and under mpirun with one OpenMP thread per rank; one JSON line per setting, the best
// of three fits:
//   cmake --build build-release --target onelearn-blocks-bench
//   OMP_NUM_THREADS=1 mpirun -np 2 build-release/bench/onelearn-blocks-bench
// Not built by default (EXCLUDE_FROM_ALL): it answers one question about one option.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include <mpi.h>

#include "onelearn/exec/mpi.hpp"
#include "onelearn/nn/sequential.hpp"

namespace nn = onelearn::nn;
using onelearn::index_t;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    const onelearn::exec::mpi exec(MPI_COMM_WORLD);
    // 8192 rows of 64 features, 10 classes, the same on every rank (replicated mode).
    const index_t n = 8192, p = 64;
    onelearn::Matrix<float> X(n, p);
    onelearn::Labels y(n);
    for (index_t i = 0; i < n; ++i) {
      for (index_t j = 0; j < p; ++j) X(i, j) = static_cast<float>(((i * 7 + j * 13) % 17) - 8) / 8.0F;
      y(i) = (i * 5 + (i / 7)) % 10;
    }
    for (const index_t blocks : {0, 2, 4, 8}) {
      double best = 1e300;
      for (int repeat = 0; repeat < 3; ++repeat) {
        nn::Sequential<float, onelearn::exec::mpi> model{exec, nn::Input({64}), nn::Dense(256, "relu"),
                                                         nn::Dense(256, "relu"), nn::Dense(10)};
        model.compile(nn::Adam{.learning_rate = 1e-3},
                      nn::SparseCategoricalCrossentropy{.from_logits = true});
        const nn::FitOptions options{.epochs = 2, .batch_size = 128, .seed = 1, .replicated = true,
                                     .reproducible_blocks = blocks};
        MPI_Barrier(MPI_COMM_WORLD);
        const auto start = std::chrono::steady_clock::now();
        model.fit(X, y, options);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      if (exec.rank() == 0) {
        std::printf("{\"workload\": \"reproducible_blocks\", \"ranks\": %d, \"blocks\": %lld, "
                    "\"network\": \"64-256-256-10\", \"rows\": 8192, \"epochs\": 2, "
                    "\"batch_size\": 128, \"seconds\": %.4f}\n",
                    exec.size(), static_cast<long long>(blocks), best);
      }
    }
  }
  MPI_Finalize();
  return 0;
}
