#pragma once
// What every linear regressor does once it has coefficients: predict X coef + intercept, score
// R^2 (collectively under a distributed policy), and expose coef/intercept. Written once here;
// LinearRegression, Ridge, Lasso and ElasticNet differ only in how fit finds the coefficients.
//
// Derived (CRTP) provides
//   static constexpr std::string_view name;   // "Ridge", for error messages
//   Derived& fit_impl(X, y, std::optional<VectorRef<T>> weights);  // sets coef_, intercept_
// and befriends this base so it can call fit_impl.

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "onelearn/base/fit_input.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/metrics/r2_score.hpp"

namespace onelearn::linear_model::detail {

template <class Derived, class P, class T, exec::ExecutionPolicy Exec>
class LinearRegressor : public WithParams<Derived, P> {
 public:
  using value_type = T;
  using Params = P;

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

 protected:
  LinearRegressor(const P& params, Exec exec)
      : WithParams<Derived, P>(params), exec_(std::move(exec)) {}

  /// What fit centres X and y with: the global means, or zeros when fit_intercept is false.
  struct Centring {
    onelearn::detail::GlobalMeans means;  ///< over all ranks, whatever fit_intercept says
    Vector<double> x_mean;
    double y_mean = 0;
  };

  /// The prologue of every linear model's fit: validates X, y and the weights (an error on any
  /// rank is raised on all), then all-reduces the means in one collective.
  Centring centring(std::string_view where, const MatrixRef<T>& X, const VectorRef<T>& y,
                    const std::optional<VectorRef<T>>& weights) const {
    onelearn::detail::check_fit_input<T>(where, exec_, X, y, weights);
    Centring out{onelearn::detail::global_means<T>(where, exec_, X, y, weights),
                 Vector<double>::Zero(X.cols()), 0.0};
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
  Vector<T> coef_;
  T intercept_{};
  bool fitted_ = false;

 private:
  Derived& derived() { return static_cast<Derived&>(*this); }
};

}  // namespace onelearn::linear_model::detail
