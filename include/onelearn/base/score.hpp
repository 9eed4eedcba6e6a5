#pragma once
/**
 * \file
 * \ingroup core
 *
 * Estimator glue every classifier shares (the estimator-support floor, base/; private):
 * \code{.unparsed}
 *   fit_dataset          fit(features, targets[, sample_weights]) from a Dataset
 *   collective_accuracy  the fraction of equal labels over every rank's rows
 *   collective_score     accuracy of predict(X), over every rank's rows under a distributed policy
 * \endcode
 * collective_accuracy is here, not in metrics/, so that this floor depends on core/ and exec/
 * only; metrics::accuracy_score is written on top of it.
 */

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::detail {

/// estimator.fit on a Dataset's features and targets, with its sample weights when it has them.
template <class Estimator, class Data>
Estimator& fit_dataset(Estimator& estimator, const Data& data) {
  if (data.has_sample_weights())
    return estimator.fit(data.features(), data.targets(), data.sample_weights());
  return estimator.fit(data.features(), data.targets());
}

/// The fraction of rows with y_true == y_pred, over every rank's rows (collective under a
/// distributed policy: a length mismatch on one rank is raised on every rank).
template <exec::ExecutionPolicy Exec>
double collective_accuracy(const LabelsRef& y_true, const LabelsRef& y_pred, const Exec& exec) {
  exec.propagate_errors([&] {
    validation::check_same_length("accuracy_score", "y_pred", y_true.size(), y_pred.size());
  });
  std::array<std::int64_t, 2> counts{
      static_cast<std::int64_t>(y_true.size()),
      static_cast<std::int64_t>((y_true.array() == y_pred.array()).count())};
  exec.allreduce(std::span(counts), exec::reduce_op::sum);
  if (counts[0] == 0) {
    throw invalid_argument("accuracy_score: expected at least 1 sample, found 0");
  }
  return static_cast<double>(counts[1]) / static_cast<double>(counts[0]);
}

/// Accuracy of estimator.predict(X) against y. With a distributed policy it is collective: each
/// rank passes its own rows and every rank gets the accuracy over all of them; a length mismatch
/// or a failed predict on one rank is raised on every rank.
template <class Estimator>
typename Estimator::value_type collective_score(std::string_view where, const Estimator& estimator,
                                                const MatrixRef<typename Estimator::value_type>& X,
                                                const LabelsRef& y) {
  const auto& exec = estimator.execution_policy();
  Labels predicted;
  exec.propagate_errors([&] {
    validation::check_same_length(where, "y", X.rows(), y.size());
    predicted = estimator.predict(X);
  });
  return static_cast<typename Estimator::value_type>(collective_accuracy(y, predicted, exec));
}

}  // namespace onelearn::detail
