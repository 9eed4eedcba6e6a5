#pragma once
// What every linear regressor does once it has coefficients: predict X coef + intercept, score
// R^2 (collectively under a distributed policy), and expose coef/intercept. Written once here;
// LinearRegression, Ridge, Lasso and ElasticNet differ only in how fit finds the coefficients.
//
// The fit's passes over the rows (the means here, the normal equations in gram.hpp) run in the
// compute space `Space` (space::host by default; Ridge, Lasso and ElasticNet take a Thrust space
// too); the solve and predict run on the host.
//
// Derived (CRTP) provides
//   static constexpr std::string_view name;   // "Ridge", for error messages
//   Derived& fit_impl(X, y, std::optional<VectorRef<T>> weights);  // sets coef_, intercept_
// and befriends this base so it can call fit_impl.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "onelearn/base/fit_input.hpp"
#include "onelearn/base/in_space.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/metrics/r2_score.hpp"
#include "onelearn/space/data.hpp"
#include "onelearn/space/host.hpp"

namespace onelearn::linear_model::detail {

template <class Derived, class P, class T, exec::ExecutionPolicy Exec,
          space::ComputeSpace Space = space::host>
class LinearRegressor : public WithParams<Derived, P> {
 public:
  using value_type = T;
  using Params = P;
  using space_type = Space;

  Derived& fit(const MatrixRef<T>& X, const VectorRef<T>& y) {
    return derived().fit_impl(X, y, std::nullopt);
  }

  Derived& fit(const MatrixRef<T>& X, const VectorRef<T>& y, const VectorRef<T>& sample_weight) {
    return derived().fit_impl(X, y, sample_weight);
  }

  /// Fits on a Dataset's features and targets, with its sample weights when it has them.
  Derived& fit(const Dataset<T>& data) {
    if (data.has_sample_weights()) {
      return fit(data.features(), data.targets(), data.sample_weights());
    }
    return fit(data.features(), data.targets());
  }

  [[nodiscard]] Vector<T> predict(const MatrixRef<T>& X) const {
    const std::string where = qualified("predict");
    validation::check_fitted(where, fitted_);
    validation::check_n_features(where, coef_.size(), X.cols());
    validation::check_finite(where, "X", X);
    return (X * coef_).array() + intercept_;
  }

  /// R^2 of the predictions for X against y. With a distributed policy it is collective: each
  /// rank passes its own rows and every rank gets the score over all of them.
  [[nodiscard]] T score(const MatrixRef<T>& X, const VectorRef<T>& y) const {
    Vector<T> predicted;
    exec_.propagate_errors([&] {
      validation::check_same_length(qualified("score"), "y", X.rows(), y.size());
      predicted = predict(X);
    });
    return metrics::r2_score<T>(y, predicted, exec_);
  }

  [[nodiscard]] const Vector<T>& coef() const { return require_fitted("coef", coef_); }
  [[nodiscard]] T intercept() const { return require_fitted("intercept", intercept_); }
  [[nodiscard]] index_t n_features_in() const {
    return require_fitted("n_features_in", coef_.size());
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }
  /// Where fit's passes over the rows run (space::host by default).
  [[nodiscard]] const Space& compute_space() const noexcept { return space_; }

 protected:
  LinearRegressor(const P& params, Exec exec, Space space = {})
      : WithParams<Derived, P>(params), exec_(std::move(exec)), space_(std::move(space)) {}

  /// This rank's rows, targets and weights in the compute space (borrowed on the host and the
  /// CPU Thrust systems, copied once to a device); `weights` is empty when none were given.
  struct DataInSpace {
    space::matrix<Space, T> X;
    space::vector<Space, T> y;
    space::vector<Space, T> weights;
  };

  /// What fit centres X and y with: the global means, or zeros when fit_intercept is false; and
  /// the data in the space, for the passes that follow.
  struct Centring {
    onelearn::detail::GlobalMeans means;  ///< over all ranks, whatever fit_intercept says
    Vector<double> x_mean;
    double y_mean = 0;
    DataInSpace data;
  };

  /// The prologue of every linear model's fit: validates X, y and the weights (an error on any
  /// rank is raised on all), brings them into the space, then all-reduces the means in one
  /// collective.
  Centring centring(std::string_view where, const MatrixRef<T>& X, const VectorRef<T>& y,
                    const std::optional<VectorRef<T>>& weights) const {
    onelearn::detail::check_fit_input<T>(where, exec_, X, y, weights);
    DataInSpace data;
    // run_in_space: on a device, a rank whose allocation fails raises on every rank instead of
    // leaving the others in the next all-reduce.
    using onelearn::detail::run_in_space;
    const auto values = [](const VectorRef<T>& v) {
      return std::span<const T>(v.data(), static_cast<std::size_t>(v.size()));
    };
    // column_sums: the space's kernel, found by argument-dependent lookup (space/host.hpp).
    const Vector<double> x_sums = run_in_space(exec_, space_, [&] {
      data.X = space::to_space(space_, X);
      data.y = space::to_space(space_, values(y));
      if (weights) data.weights = space::to_space(space_, values(*weights));
      return column_sums(space_, data.X.view(), data.weights.view());
    });
    Centring out{onelearn::detail::global_means_from_sums<T>(where, exec_, X.rows(), x_sums, y,
                                                             weights),
                 Vector<double>::Zero(X.cols()), 0.0, std::move(data)};
    if (this->params_.fit_intercept) {
      out.x_mean = out.means.x;
      out.y_mean = out.means.y;
    }
    return out;
  }

  /// "Ridge.fit", for error messages.
  static std::string qualified(std::string_view method) {
    return std::string(Derived::name) + "." + std::string(method);
  }

  template <class V>
  const V& require_fitted(std::string_view attribute, const V& value) const {
    if (!fitted_) validation::check_fitted(qualified(attribute), false);
    return value;
  }

  // Set by Derived::fit_impl.
  Exec exec_;
  Space space_;
  Vector<T> coef_;
  T intercept_{};
  bool fitted_ = false;

 private:
  Derived& derived() { return static_cast<Derived&>(*this); }
};

}  // namespace onelearn::linear_model::detail
