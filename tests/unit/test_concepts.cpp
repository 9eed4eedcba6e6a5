// The concepts accept onelearn's estimators and datasets and reject what is not one. The
// compile_fail tests check the other half: the static checks' messages.
#include <doctest/doctest.h>

#include "onelearn/core/concepts.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/linear_model/linear_regression.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"

using namespace onelearn;

// Compile-time assertions: this file does not build if any of them fails.
TEST_CASE_TEMPLATE("estimators model the concepts they claim", T, float, double) {
  using Scaler = preprocessing::StandardScaler<T>;
  using Linear = linear_model::LinearRegression<T>;
  static_assert(concepts::Transformer<Scaler> && concepts::Model<Scaler>);
  static_assert(!concepts::Predictor<Scaler>);
  static_assert(concepts::Regressor<Linear> && concepts::Model<Linear>);
  static_assert(!concepts::Classifier<Linear> && !concepts::Transformer<Linear>);
  static_assert(check_transformer<Scaler>() && check_regressor<Linear>());
  static_assert(concepts::Dataset<Dataset<T>> && concepts::Dataset<ClassificationDataset<T>>);
  static_assert(!concepts::Dataset<Matrix<T>>);
  static_assert(!concepts::Estimator<Matrix<T>> && !concepts::Estimator<int>);
  static_assert(exec::ExecutionPolicy<exec::local>);
}
