#pragma once
// Checks shared by the preprocessing transformers (private: not included by users).
//
//   check_choice         a string parameter is one of a fixed set ("l2", "mean", ...)
//   check_no_infinity    NaN allowed (it marks a missing value), +-inf not: what SimpleImputer
//                        needs where validation::check_finite would reject the NaN too
//   check_fit_input      parameter and value checks on every rank, raised on every rank, then
//                        the ranks' numbers of features compared
//   check_has_samples    the all-ranks row count is positive (every rank sees the same count,
//                        so every rank throws alike)

#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::preprocessing::detail {

/// `value` is one of `choices`; otherwise an invalid_argument that lists them.
inline void check_choice(std::string_view where, std::string_view name, std::string_view value,
                         std::initializer_list<std::string_view> choices) {
  std::string listed;
  for (std::string_view choice : choices) {
    if (choice == value) return;
    listed += (listed.empty() ? "\"" : ", \"") + std::string(choice) + "\"";
  }
  throw invalid_argument(std::string(where) + ": expected " + std::string(name) + " to be one of " +
                         listed + ", found \"" + std::string(value) + "\"");
}

/// No entry of X is +-inf (NaN is allowed: it marks a missing value).
template <class T>
void check_no_infinity(std::string_view where, const MatrixRef<T>& X) {
  if (!X.array().isInf().any()) return;  // one vectorised pass; the scan below only says where
  for (index_t r = 0; r < X.rows(); ++r) {
    for (index_t c = 0; c < X.cols(); ++c) {
      if (std::isinf(X(r, c))) {
        throw invalid_argument(std::string(where) +
                               ": expected finite values or NaN (missing) in X, found " +
                               std::to_string(X(r, c)) + " at row " + std::to_string(r) +
                               ", column " + std::to_string(c));
      }
    }
  }
}

/// Runs `param_checks` and checks the values of X (finite, or finite-or-NaN with `allow_nan`)
/// inside exec.propagate_errors, so an error on one rank is raised on every rank; then checks
/// that every rank has the same number of features. Both steps are collective under exec::mpi.
template <class T, exec::ExecutionPolicy Exec, class ParamChecks>
void check_fit_input(std::string_view where, const Exec& exec, const MatrixRef<T>& X,
                     ParamChecks&& param_checks, bool allow_nan = false) {
  exec.propagate_errors([&] {
    param_checks();
    if (allow_nan) {
      check_no_infinity<T>(where, X);
    } else {
      validation::check_finite(where, "X", X);
    }
  });
  const std::array<std::int64_t, 1> n_features{X.cols()};
  exec.check_same_shape("the number of features of X", n_features);
}

/// Throws (the same on every rank, as n_samples is all-reduced) when there is nothing to fit.
inline void check_has_samples(std::string_view where, std::int64_t n_samples, index_t n_features) {
  if (n_samples > 0 && n_features > 0) return;
  throw invalid_argument(std::string(where) + ": expected at least one sample and one feature, " +
                         "found " + std::to_string(n_samples) + " x " + std::to_string(n_features));
}

/// The number of rows over all ranks: one all-reduce of one integer.
template <exec::ExecutionPolicy Exec>
std::int64_t total_rows(const Exec& exec, index_t local_rows) {
  std::array<std::int64_t, 1> n{static_cast<std::int64_t>(local_rows)};
  exec.allreduce(std::span(n), exec::reduce_op::sum);
  return n[0];
}

/// Transform-time checks: fitted, the features of fit, values finite (or NaN with allow_nan).
template <class T>
void check_transform_input(std::string_view where, bool fitted, index_t n_features,
                           const MatrixRef<T>& X, bool allow_nan = false) {
  validation::check_fitted(where, fitted);
  validation::check_n_features(where, n_features, X.cols());
  if (allow_nan) {
    check_no_infinity<T>(where, X);
  } else {
    validation::check_finite(where, "X", X);
  }
}

}  // namespace onelearn::preprocessing::detail
