// Tuning: the same search two ways. GridSearchCV (scikit-learn's) cross-validates an estimator
// over a grid; tune::run searches over one training function that returns a score.
// Usage: tuning [diabetes.csv]
#include <onelearn/io/io.hpp>
#include <onelearn/linear_model/ridge.hpp>
#include <onelearn/model_selection/grid_search_cv.hpp>
#include <onelearn/tune/run.hpp>

#include <iostream>
#include <string>
#include <variant>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "diabetes.csv";
  namespace ms = onelearn::model_selection;
  namespace tune = onelearn::tune;
  const auto data = onelearn::io::load_csv<double>(path, {.label_column = "progression"});
  const auto [train, validation] = data.split_tail(111);

  // 1. scikit-learn's way: 5-fold cross-validation of every value of the grid.
  ms::GridSearchCV grid(onelearn::linear_model::Ridge<double>(),
                        {{"alpha", {0.01, 0.1, 1.0, 10.0}}}, {.cv = 5});
  grid.fit(train.features(), train.targets());
  const double grid_alpha = std::get<double>(grid.best_params().front().second);

  // 2. One training function, searched by tune::run (random search; TPE and ASHA are options).
  auto fit_ridge = [&](const tune::Trial& trial, tune::Reporter&) {
    onelearn::linear_model::Ridge<double> ridge({.alpha = trial.get<double>("alpha")});
    ridge.fit(train.features(), train.targets());
    return ridge.score(validation.features(), validation.targets());  // larger is better
  };
  tune::Space space{{"alpha", tune::log_uniform{1e-3, 1e2}}};
  const tune::Results results = tune::run(fit_ridge, space, {.n_trials = 12, .seed = 7});
  const double tuned_alpha = std::get<double>(results.best().params[0].second);

  std::cout << "GridSearchCV: alpha " << grid_alpha << " (CV R^2 " << grid.best_score()
            << "); tune::run: alpha " << tuned_alpha << " (validation R^2 "
            << results.best().score << ")\n";
  return results.trials().size() == 12 ? 0 : 1;
}
