// onelearn insitu_surrogate: an MPI simulation that trains a neural-network surrogate of its own
// time step in-situ, on the data each rank already holds, without giving up control of MPI.
//
//   mpirun -np 2 ./insitu_surrogate        (any number of ranks, 1 included: ./insitu_surrogate)
//
// Built by CMake when MPI is found (target insitu_surrogate), or by hand:
//   mpicxx -std=c++20 -O2 -I include -isystem /usr/include/eigen3 examples/insitu_surrogate.cpp
//
// The simulation: the 2-D heat equation with a temperature-dependent conductivity,
//   du/dt = div(k(u) grad u),  k(u) = 1 + 2 u^2,
// on a 64 x 64 grid (explicit finite volumes, the top edge held at u = 1, the others at 0, and
// a few hot spots to start). The grid rows are split over the ranks of the simulation's own
// communicator (sim_comm, from MPI_Comm_split); every step each rank exchanges one halo row
// with each neighbour (MPI_Sendrecv) and, every 100 steps, the total heat is all-reduced.
//
// The surrogate: an MLP that predicts a cell's next value from its 5-point stencil (the cell and
// its four neighbours), i.e. a learned replacement for the time step. Every 5 steps each rank
// samples 128 cells of its own subdomain (no data moves between ranks); every 100 steps the
// model is trained 8 epochs on the last 100 steps' samples, data-parallel over sim_comm:
//   nn::Sequential<float, exec::mpi> model{exec::mpi(sim_comm, {...}), ...};
//   model.fit(my_X, my_y, ...);          // per-rank mode: each rank its own rows
// then the simulation goes on. Steps 400..599 are held out: there the surrogate's one-step
// prediction of every cell is compared with the simulation's, and the RMSE (all-reduced by the
// application's own MPI_Allreduce) is printed on rank 0 next to that of "nothing changes".
//
// What it shows: the application calls MPI_Init/MPI_Finalize, creates and frees its
// communicators and keeps doing its own point-to-point and collective MPI on sim_comm between
// (and after) the trainings. onelearn only issues collectives on the communicator it is given,
// in the same order on every rank, so they cannot be confused with the simulation's messages.
// The policy's step label (set_step) names the simulation step in the error a hung collective
// would report before ending the job (after the policy's timeout, here 2 minutes).
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include <onelearn/exec/mpi.hpp>
#include <onelearn/nn/sequential.hpp>
#include <onelearn/preprocessing/standard_scaler.hpp>

namespace nn = onelearn::nn;
namespace exec = onelearn::exec;
using onelearn::index_t;
using onelearn::Matrix;
using onelearn::Vector;

namespace {

constexpr int global_rows = 64;
constexpr int cols = 64;
constexpr double dt = 0.07;  // x k0 / h^2; stable: 4 x dt x max k = 4 x 0.07 x 3 < 1
constexpr int steps = 600;
constexpr int sample_every = 5;
constexpr int train_every = 100;
constexpr int held_out_from = 400;  // steps before: training samples; from here: test only
constexpr int samples_per_snapshot = 128;  // cells each rank samples at a sampling step
constexpr int n_features = 5;
constexpr int epochs = 8;  // per training

double conductivity(double u) { return 1.0 + 2.0 * u * u; }

/// One rank's rows of the grid, with a halo row above and below and a boundary column on each
/// side (u(r, c) for r in 0..rows+1, c in 0..cols+1; the owned cells are 1..rows x 1..cols).
struct Subdomain {
  MPI_Comm comm;
  int rank = 0, size = 1;
  int first_row = 0;  // global index of owned row 1
  int rows = 0;
  std::vector<double> u, next;

  explicit Subdomain(MPI_Comm communicator) : comm(communicator) {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    first_row = global_rows * rank / size;
    rows = global_rows * (rank + 1) / size - first_row;
    u.assign(static_cast<std::size_t>((rows + 2) * (cols + 2)), 0.0);
    next = u;
    for (int r = 1; r <= rows; ++r) {
      for (int c = 1; c <= cols; ++c) {  // three Gaussian hot spots
        const double y = first_row + r - 1, x = c - 1;
        double v = 0;
        for (const auto& [cy, cx] : {std::pair{16.0, 20.0}, {40.0, 44.0}, {52.0, 12.0}}) {
          v += 0.9 * std::exp(-((y - cy) * (y - cy) + (x - cx) * (x - cx)) / 30.0);
        }
        at(r, c) = std::min(v, 1.0);
      }
    }
    exchange_halos();
  }

  double& at(int r, int c) { return u[static_cast<std::size_t>(r * (cols + 2) + c)]; }
  [[nodiscard]] double at(int r, int c) const { return u[static_cast<std::size_t>(r * (cols + 2) + c)]; }

  /// The simulation's own point-to-point traffic: halo rows from and to the neighbours. The
  /// global top edge is held at 1, the bottom at 0.
  void exchange_halos() {
    const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    const int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    MPI_Sendrecv(&at(1, 0), cols + 2, MPI_DOUBLE, up, 0, &at(rows + 1, 0), cols + 2, MPI_DOUBLE,
                 down, 0, comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&at(rows, 0), cols + 2, MPI_DOUBLE, down, 1, &at(0, 0), cols + 2, MPI_DOUBLE,
                 up, 1, comm, MPI_STATUS_IGNORE);
    if (up == MPI_PROC_NULL) std::fill(&at(0, 0), &at(0, 0) + cols + 2, 1.0);
    if (down == MPI_PROC_NULL) std::fill(&at(rows + 1, 0), &at(rows + 1, 0) + cols + 2, 0.0);
  }

  /// The surrogate's input for cell (r, c): the cell's value and its neighbours' differences to
  /// it (the same information as the 5 values, better conditioned for the network).
  void features(int r, int c, float* out) const {
    const double centre = at(r, c);
    out[0] = static_cast<float>(centre);
    out[1] = static_cast<float>(at(r - 1, c) - centre);
    out[2] = static_cast<float>(at(r + 1, c) - centre);
    out[3] = static_cast<float>(at(r, c - 1) - centre);
    out[4] = static_cast<float>(at(r, c + 1) - centre);
  }

  /// One explicit step: the flux through each face uses the mean conductivity of its two cells.
  void step() {
    for (int r = 1; r <= rows; ++r) {
      for (int c = 1; c <= cols; ++c) {
        const double centre = at(r, c), k = conductivity(centre);
        double flux = 0;
        for (const double neighbour : {at(r - 1, c), at(r + 1, c), at(r, c - 1), at(r, c + 1)}) {
          flux += 0.5 * (k + conductivity(neighbour)) * (neighbour - centre);
        }
        next[static_cast<std::size_t>(r * (cols + 2) + c)] = centre + dt * flux;
      }
    }
    std::swap(u, next);
    exchange_halos();
  }

  /// Total heat over all ranks: the simulation's own collective on its communicator.
  [[nodiscard]] double total_heat() const {
    double local = 0;
    for (int r = 1; r <= rows; ++r) {
      for (int c = 1; c <= cols; ++c) local += at(r, c);
    }
    double total = 0;
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
    return total;
  }
};

/// The network predicts the change of a cell over one step, scaled by 1 / dt to order 1.
float target(double before, double after) { return static_cast<float>((after - before) / dt); }

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  // The simulation's communicator. A real code might split off I/O or analysis ranks here
  // (another colour); here every rank simulates. onelearn is handed this communicator and
  // never touches MPI_COMM_WORLD.
  MPI_Comm sim_comm = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, /*colour=*/0, /*key=*/world_rank, &sim_comm);
  try {
    Subdomain grid(sim_comm);
    const bool root = grid.rank == 0;
    const exec::mpi policy(sim_comm, {.timeout = std::chrono::minutes(2)});
    nn::Sequential<float, exec::mpi> model{policy, nn::Input({n_features}), nn::Dense(32, "tanh"),
                                           nn::Dense(32, "tanh"), nn::Dense(1)};
    model.compile(nn::Adam{.learning_rate = 3e-3}, nn::MeanSquaredError{});
    // Inputs standardised and the target divided by its RMS, refit at every training on that
    // window's samples of all ranks: as the field smooths out, its differences and changes
    // shrink, and rescaling keeps what the network sees of order 1 (with fixed scales its error
    // would stay the size of the early changes, larger than the late ones; measured: 2x better
    // than "no change" instead of 6x).
    onelearn::preprocessing::StandardScaler<float, exec::mpi> scaler({}, policy);
    float target_scale = 1;
    if (root) {
      std::printf("heat equation %d x %d on %d rank(s) of sim_comm, %d steps; surrogate: MLP 5-32-32-1\n",
                  global_rows, cols, grid.size, steps);
    }

    std::mt19937_64 rng(1234 + static_cast<std::uint64_t>(grid.rank));  // which cells to sample
    std::uniform_int_distribution<int> pick_row(1, std::max(grid.rows, 1)), pick_col(1, cols);
    std::vector<float> X_samples, y_samples;     // this rank's training samples, row-major
    std::vector<std::pair<int, int>> picked;
    double sum_sq = 0, sum_sq_persistence = 0;   // held-out one-step errors, this rank
    std::int64_t n_test = 0;
    double seconds_simulating = 0, seconds_training = 0;
    using clock = std::chrono::steady_clock;

    for (int t = 0; t < steps; ++t) {
      const bool sample = t < held_out_from && t % sample_every == 0 && grid.rows > 0;
      const bool test = t >= held_out_from;
      Matrix<float> X_test;
      std::vector<double> before;
      if (sample) {  // features now, targets after the step
        picked.clear();
        for (int i = 0; i < samples_per_snapshot; ++i) picked.emplace_back(pick_row(rng), pick_col(rng));
        for (const auto& [r, c] : picked) {
          X_samples.resize(X_samples.size() + n_features);
          grid.features(r, c, X_samples.data() + X_samples.size() - n_features);
          before.push_back(grid.at(r, c));
        }
      }
      if (test) {  // every owned cell
        X_test.resize(static_cast<index_t>(grid.rows) * cols, n_features);
        for (int r = 1; r <= grid.rows; ++r) {
          for (int c = 1; c <= cols; ++c) {
            grid.features(r, c, X_test.row(static_cast<index_t>(r - 1) * cols + (c - 1)).data());
            before.push_back(grid.at(r, c));
          }
        }
      }

      auto start = clock::now();
      grid.step();
      seconds_simulating += std::chrono::duration<double>(clock::now() - start).count();

      if (sample) {
        for (std::size_t i = 0; i < picked.size(); ++i) {
          y_samples.push_back(target(before[i], grid.at(picked[i].first, picked[i].second)));
        }
      }
      if (test && grid.rows > 0) {
        const Matrix<float> predicted = model.predict(scaler.transform(X_test)) * target_scale;
        for (int r = 1; r <= grid.rows; ++r) {
          for (int c = 1; c <= cols; ++c) {
            const auto i = static_cast<std::size_t>((r - 1) * cols + (c - 1));
            const double surrogate = before[i] + dt * predicted(static_cast<index_t>(i), 0);
            sum_sq += (surrogate - grid.at(r, c)) * (surrogate - grid.at(r, c));
            sum_sq_persistence += (before[i] - grid.at(r, c)) * (before[i] - grid.at(r, c));
            ++n_test;
          }
        }
      }

      if ((t + 1) % train_every == 0) {
        const double heat = grid.total_heat();  // the simulation's collective, between trainings
        if ((t + 1) <= held_out_from) {
          // In-situ training on what this rank holds (any number of rows, 0 included).
          // The model holds a copy of `policy`; copies share the label.
          policy.set_step("simulation step", t + 1);
          const auto n = static_cast<index_t>(y_samples.size());
          const Eigen::Map<const Matrix<float>> X(X_samples.data(), n, n_features);
          const Eigen::Map<const Vector<float>> y(y_samples.data(), n);
          start = clock::now();
          scaler.fit(X);  // this window's scales, over all ranks' samples
          std::array<double, 2> y_moments{y.squaredNorm(), static_cast<double>(n)};
          policy.allreduce(std::span(y_moments), exec::reduce_op::sum);
          target_scale = static_cast<float>(std::sqrt(y_moments[0] / y_moments[1]));
          const nn::History history = model.fit(scaler.transform(X), y / target_scale,
                                                {.epochs = epochs, .batch_size = 64,
                                                 .seed = static_cast<std::uint64_t>(t)});
          seconds_training += std::chrono::duration<double>(clock::now() - start).count();
          // Only the last window is kept: an in-situ code cannot hold the whole history.
          X_samples.clear();
          y_samples.clear();
          std::int64_t rows_all = n;
          MPI_Allreduce(MPI_IN_PLACE, &rows_all, 1, MPI_INT64_T, MPI_SUM, sim_comm);
          if (root) {
            std::printf("step %3d: total heat %8.2f | trained %d epochs on %lld samples (all ranks), loss %.3e\n",
                        t + 1, heat, epochs, static_cast<long long>(rows_all), history.at("loss").back());
          }
        } else if (root) {
          std::printf("step %3d: total heat %8.2f | held-out steps: surrogate evaluated, not trained\n", t + 1, heat);
        }
      }
    }

    double sums[3] = {sum_sq, sum_sq_persistence, static_cast<double>(n_test)};
    MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, sim_comm);
    double seconds[2] = {seconds_simulating, seconds_training};
    MPI_Allreduce(MPI_IN_PLACE, seconds, 2, MPI_DOUBLE, MPI_MAX, sim_comm);
    if (root) {
      const double rmse = std::sqrt(sums[0] / sums[2]);
      const double persistence = std::sqrt(sums[1] / sums[2]);
      std::printf("surrogate one-step RMSE on held-out steps %d..%d (%.0f cells): %.3e "
                  "(assuming no change: %.3e, %.1fx larger)\n",
                  held_out_from, steps - 1, sums[2], rmse, persistence, persistence / rmse);
      std::printf("time (slowest rank): simulation steps with halo exchange %.3f s, training %.3f s\n", seconds[0], seconds[1]);
    }
  } catch (const std::exception& e) {
    // onelearn raises its errors on every rank, but a simulation error might not be: end the
    // job rather than leave other ranks waiting in MPI_Comm_free.
    std::fprintf(stderr, "insitu_surrogate: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  // The application frees its communicator and finalizes MPI; the policy and the model are gone.
  MPI_Comm_free(&sim_comm);
  MPI_Finalize();
  return 0;
}
