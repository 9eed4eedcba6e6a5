// Distributed training: a Keras-style network trained data-parallel, each rank on its own rows;
// the gradients are all-reduced, so every rank ends with the same weights. Usage:
// mpirun -np 2 distributed_training [diabetes.csv]
#include <mpi.h>

#include <onelearn/exec/mpi.hpp>
#include <onelearn/io/io.hpp>
#include <onelearn/nn/sequential.hpp>
#include <onelearn/preprocessing/standard_scaler.hpp>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string path = argc > 1 ? argv[1] : "diabetes.csv";
  namespace nn = onelearn::nn;
  using onelearn::exec::mpi;
  const mpi exec{MPI_COMM_WORLD};

  // Every rank reads the file and keeps its shard; in an HPC code the rows are already there.
  const auto data = onelearn::io::load_csv<float>(path, {.label_column = "progression"});
  const auto mine = data.shard(exec);
  onelearn::preprocessing::StandardScaler<float, mpi> scaler({}, exec);  // global moments
  const onelearn::Matrix<float> X = scaler.fit_transform(mine.features());
  const onelearn::Matrix<float> y = mine.targets() / 100.0f;  // one column: the target

  nn::Sequential<float, mpi> model{exec, nn::Input({X.cols()}), nn::Dense(32, "relu"),
                                   nn::Dense(1)};
  model.compile(nn::Adam{.learning_rate = 1e-2}, nn::MeanSquaredError{});
  const nn::History history = model.fit(X, y, {.epochs = 20, .batch_size = 16, .seed = 7});

  const double first = history.at("loss").front(), last = history.at("loss").back();
  if (exec.rank() == 0) {
    std::cout << exec.size() << " ranks, loss " << first << " -> " << last << '\n';
  }
  MPI_Finalize();
  return last < first ? 0 : 1;
}
