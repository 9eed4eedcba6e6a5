// Execution policies: one function template, run on one process (exec::local) and across the
// ranks of MPI_COMM_WORLD (exec::mpi); both give the same model. Usage, under mpirun or not:
// policies [diabetes.csv]
#include <mpi.h>

#include <onelearn/exec/mpi.hpp>
#include <onelearn/io/io.hpp>
#include <onelearn/linear_model/ridge.hpp>
#include <onelearn/preprocessing/standard_scaler.hpp>

#include <cmath>
#include <iostream>
#include <string>

template <class Exec>
double fit_and_score(const std::string& path, const Exec& exec) {
  const auto data = onelearn::io::load_csv<double>(path, {.label_column = "progression"});
  const auto [train, test] = data.split_tail(111);
  const auto mine = train.shard(exec);  // exec::local: every row; exec::mpi: this rank's rows

  onelearn::preprocessing::StandardScaler<double, Exec> scaler({}, exec);
  onelearn::linear_model::Ridge<double, Exec> ridge({.alpha = 1.0}, exec);
  ridge.fit(scaler.fit_transform(mine.features()), mine.targets());
  const auto part = test.shard(exec);
  return ridge.score(scaler.transform(part.features()), part.targets());  // over all ranks
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);  // the application owns MPI; onelearn only uses the communicator
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string path = argc > 1 ? argv[1] : "diabetes.csv";

  const double one = fit_and_score(path, onelearn::exec::local{});
  const double all = fit_and_score(path, onelearn::exec::mpi{MPI_COMM_WORLD});
  if (rank == 0) std::cout << "R^2 on one process " << one << ", over the ranks " << all << '\n';
  const bool same = std::abs(one - all) < 1e-10;

  MPI_Finalize();
  return same ? 0 : 1;
}
