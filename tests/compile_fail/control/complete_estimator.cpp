// The control for the compile_fail tests: a type with every member passes every check, and so
// do onelearn's own estimators. Compiled with the same flags as the failing cases.
#include <onelearn/core/concepts.hpp>
#include <onelearn/core/dataset.hpp>
#include <onelearn/core/params.hpp>
#include <onelearn/linear_model/linear_regression.hpp>
#include <onelearn/preprocessing/standard_scaler.hpp>

struct CompleteParams {
  double C = 1;
  static constexpr std::array<std::string_view, 1> names{"C"};
};
struct Complete : onelearn::WithParams<Complete, CompleteParams> {
  using value_type = double;
  Complete& fit(const onelearn::Matrix<double>&, const onelearn::Labels&);
  onelearn::Labels predict(const onelearn::Matrix<double>&) const;
  onelearn::Matrix<double> predict_proba(const onelearn::Matrix<double>&) const;
  onelearn::Labels classes() const;
};
static_assert(onelearn::params::check_params<CompleteParams>());
static_assert(onelearn::check_classifier<Complete>());
static_assert(onelearn::check_model<Complete>());
static_assert(onelearn::check_regressor<onelearn::linear_model::LinearRegression<float>>());
static_assert(onelearn::check_transformer<onelearn::preprocessing::StandardScaler<double>>());
static_assert(onelearn::concepts::Dataset<onelearn::Dataset<double>>);
