#pragma once
// Helpers shared by the metrics (private: not included by users).
//   global_classes   the sorted distinct labels of one or two label vectors over every rank
//                    (with sort_unique, the classifiers' helpers in core/detail/classifier.hpp)
//   class_index      a label's position in such a sorted list
//   check_inputs     the per-rank validation every metric starts with (lengths, weights)
//   check_n_samples  the "no samples at all" error, raised alike on every rank

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/base/labels.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::metrics::detail {

using onelearn::detail::sort_unique;

/// The sorted distinct labels of `a` (and `b`, when given) on every rank: each rank's distinct
/// labels are all-gathered, so the message is O(distinct labels), not O(samples).
template <exec::ExecutionPolicy Exec>
Labels global_classes(const Exec& exec, const LabelsRef& a,
                      const std::optional<LabelsRef>& b = std::nullopt) {
  return onelearn::detail::gather_classes(exec, a, b);
}

/// Position of `label` in the sorted `classes`, or -1 when it is not one of them.
inline index_t class_index(const Labels& classes, std::int64_t label) {
  const auto* it = std::lower_bound(classes.data(), classes.data() + classes.size(), label);
  if (it == classes.data() + classes.size() || *it != label) return -1;
  return it - classes.data();
}

/// `y_pred` (of whatever kind, `n_pred` entries) and the sample weights agree in length with
/// y_true, and the weights are finite and non-negative. Run inside exec.propagate_errors.
template <class T>
void check_inputs(std::string_view where, index_t n_true, index_t n_pred,
                  const std::optional<VectorRef<T>>& sample_weight) {
  validation::check_same_length(where, "y_pred", n_true, n_pred);
  if (sample_weight) {
    validation::check_same_length(where, "sample_weight", n_true, sample_weight->size());
    validation::check_sample_weights<T>(where, *sample_weight);
  }
}

/// The "nothing to score" error. `n_total` is the number of samples over every rank, so every
/// rank throws alike.
inline void check_n_samples(std::string_view where, double n_total) {
  if (n_total > 0) return;
  throw invalid_argument(std::string(where) + ": expected at least 1 sample, found 0");
}

/// The weight of sample i: 1 without weights, as a double.
template <class T>
double weight_of(const std::optional<VectorRef<T>>& sample_weight, index_t i) {
  return sample_weight ? static_cast<double>((*sample_weight)(i)) : 1.0;
}

}  // namespace onelearn::metrics::detail
