// Getting started: load a CSV file, scale the features, fit a ridge regression, score it on
// held-out rows. Usage: getting_started [diabetes.csv] (examples/data/diabetes.csv).
#include <onelearn/io/io.hpp>
#include <onelearn/linear_model/ridge.hpp>
#include <onelearn/pipeline.hpp>
#include <onelearn/preprocessing/standard_scaler.hpp>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "diabetes.csv";

  // Samples are rows; the column "progression" is the target, the others the features.
  const auto data = onelearn::io::load_csv<double>(path, {.label_column = "progression"});
  const auto [train, test] = data.split_tail(111);  // the last 111 rows are held out

  // Hyper-parameters are designated initializers of each estimator's Params struct.
  auto model = onelearn::pipeline::make_pipeline(
      onelearn::preprocessing::StandardScaler<double>(),
      onelearn::linear_model::Ridge<double>({.alpha = 1.0}));
  model.fit(train.features(), train.targets());

  const double r2 = model.score(test.features(), test.targets());
  std::cout << "Ridge on " << train.size() << " rows: test R^2 = " << r2 << '\n';
  return r2 > 0.3 ? 0 : 1;
}
