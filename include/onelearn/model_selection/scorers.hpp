#pragma once
/**
 * \file
 * \brief scikit-learn's named scorers, as the searches and cross_validate take them.
 * \ingroup model_selection
 *
 * \code
 * #include <onelearn/model_selection/scorers.hpp>
 * namespace ms = onelearn::model_selection;
 *
 * ms::check_scoring<decltype(clf), onelearn::Labels>("my_search", "f1_macro");  // before fitting
 * double f1 = ms::score_with("f1_macro", clf, X_test, labels_test);   // clf: a fitted classifier
 * double nll = ms::score_with("neg_log_loss", clf, X_test, labels_test);
 * double r2 = ms::score_with("r2", ridge, X_test, y_test);      // y_test: Vector<T>
 * double own = ms::score_with("", ridge, X_test, y_test);       // "": the estimator's score()
 * \endcode
 *
 * model_selection scorers: scikit-learn's named scorers (1.2.1), greater is better, as
 * cross_validate and GridSearchCV take them by name.
 *
 * | name                          | needs                       | value                           |
 * |-------------------------------|-----------------------------|---------------------------------|
 * | "" (default)                  | score(X, y)                 | the estimator's own score       |
 * | "accuracy"                    | predict -> Labels           | accuracy_score(y, predict(X))   |
 * | "f1_macro"                    | predict -> Labels           | f1_score(..., average "macro")  |
 * | "neg_log_loss"                | predict_proba, classes      | -log_loss(y, predict_proba(X))  |
 * | "r2"                          | predict -> Vector<T>        | r2_score(y, predict(X))         |
 * | "neg_mean_squared_error"      | predict -> Vector<T>        | -mean_squared_error             |
 * | "neg_root_mean_squared_error" | predict -> Vector<T>        | -sqrt(mean_squared_error)       |
 * | "neg_mean_absolute_error"     | predict -> Vector<T>        | -mean_absolute_error            |
 *
 * Every value is returned as a double (computed by the metric in the estimator's T).
 *
 * \par Differences from scikit-learn
 * - neg_log_loss passes the estimator's classes() as the log loss's labels, so a test fold
 *   that lacks a class still scores (scikit-learn infers the labels from the fold and fails);
 *   when the fold has every class the value is the same.
 * - Only these names; no make_scorer (pass a name, or call the metric yourself).
 *
 * Errors (invalid_argument): an unknown name (the message lists the known ones), or a name
 * that does not fit the estimator or the targets (a regression scorer with class labels, a
 * classification scorer with real targets, "neg_log_loss" without predict_proba, "" without
 * score()). check_scoring raises them before anything is fitted.
 */

#include <array>
#include <cmath>
#include <string>
#include <string_view>
#include <type_traits>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/metrics/accuracy_score.hpp"
#include "onelearn/metrics/log_loss.hpp"
#include "onelearn/metrics/mean_absolute_error.hpp"
#include "onelearn/metrics/mean_squared_error.hpp"
#include "onelearn/metrics/precision_recall_f1.hpp"
#include "onelearn/metrics/r2_score.hpp"

namespace onelearn::model_selection {

/// The scorer names score_with knows ("" , the estimator's own score, aside).
inline constexpr std::array<std::string_view, 7> scorer_names{"accuracy",
                                                              "f1_macro",
                                                              "neg_log_loss",
                                                              "r2",
                                                              "neg_mean_squared_error",
                                                              "neg_root_mean_squared_error",
                                                              "neg_mean_absolute_error"};

namespace detail {

template <class E>
concept has_own_score = requires(const E& e, const Matrix<typename E::value_type>& X) {
  e.score(X, std::declval<const Labels&>());
}
|| requires(const E& e, const Matrix<typename E::value_type>& X) {
  e.score(X, std::declval<const Vector<typename E::value_type>&>());
};

template <class E>
concept has_predict_proba = requires(const E& e, const Matrix<typename E::value_type>& X) {
  e.predict_proba(X);
  e.classes();
};

inline bool is_classification_scorer(std::string_view s) {
  return s == "accuracy" || s == "f1_macro" || s == "neg_log_loss";
}

inline bool is_regression_scorer(std::string_view s) {
  return s == "r2" || s == "neg_mean_squared_error" || s == "neg_root_mean_squared_error" ||
         s == "neg_mean_absolute_error";
}

inline std::string known_scorers() {
  std::string out = "\"\" (the estimator's score)";
  for (const std::string_view n : scorer_names) out += ", " + std::string(n);
  return out;
}

}  // namespace detail

/// Raises, before any fitting, the error score_with would raise for this estimator type,
/// target type Y (Labels or Vector<T>) and scorer name.
template <class Estimator, class Y>
void check_scoring(std::string_view where, std::string_view scoring) {
  constexpr bool labels = std::is_same_v<Y, Labels>;
  const auto fail = [&](const std::string& why) {
    throw invalid_argument(std::string(where) + ": scoring \"" + std::string(scoring) +
                           "\": " + why);
  };
  if (scoring.empty()) {
    if (!detail::has_own_score<Estimator>) {
      fail("expected an estimator with score(X, y), found one without; pass a scorer name");
    }
    return;
  }
  if (detail::is_classification_scorer(scoring)) {
    if (!labels) fail("expected class labels (Labels) as y, found real-valued targets");
    if (scoring == "neg_log_loss" && !detail::has_predict_proba<Estimator>) {
      fail("expected an estimator with predict_proba(X) and classes(), found one without");
    }
    return;
  }
  if (detail::is_regression_scorer(scoring)) {
    if (labels) fail("expected real-valued targets (Vector<T>) as y, found class labels");
    return;
  }
  fail("expected one of " + detail::known_scorers() + ", found an unknown name");
}

/// The score of a fitted estimator on (X, y) under the scorer `scoring` (greater is better).
template <class Estimator, class Y>
double score_with(std::string_view scoring, const Estimator& estimator,
                  const MatrixRef<typename Estimator::value_type>& X, const Y& y) {
  using T = typename Estimator::value_type;
  check_scoring<Estimator, Y>("score_with", scoring);
  if (scoring.empty()) {
    if constexpr (detail::has_own_score<Estimator>) {
      return static_cast<double>(estimator.score(X, y));
    }
  } else if constexpr (std::is_same_v<Y, Labels>) {
    if (scoring == "neg_log_loss") {
      if constexpr (detail::has_predict_proba<Estimator>) {
        const Labels classes = estimator.classes();
        metrics::LogLossOptions options;
        options.labels.assign(classes.begin(), classes.end());
        const Matrix<T> proba = estimator.predict_proba(X);
        return -static_cast<double>(metrics::log_loss<T>(y, proba, options));
      }
    } else {
      const Labels predicted = estimator.predict(X);
      if (scoring == "accuracy") return metrics::accuracy_score(y, predicted);
      return metrics::f1_score(y, predicted, {.average = "macro"});
    }
  } else {
    const Vector<T> predicted = estimator.predict(X);
    if (scoring == "r2") return static_cast<double>(metrics::r2_score<T>(y, predicted));
    if (scoring == "neg_mean_absolute_error") {
      return -static_cast<double>(metrics::mean_absolute_error<T>(y, predicted));
    }
    const double mse = static_cast<double>(metrics::mean_squared_error<T>(y, predicted));
    return scoring == "neg_mean_squared_error" ? -mse : -std::sqrt(mse);
  }
  return 0;  // not reached: check_scoring has rejected every other case
}

}  // namespace onelearn::model_selection
