#pragma once
/**
 * \file
 * \ingroup core
 *
 * Settings every rank must share, checked where a distributed fit starts:
 * \code{.unparsed}
 *   NamedValues        a list of (name, exact text) that a fit, a search or fit's options
 *                      build up with add(name, value) or add_params(prefix, params);
 *   check_same_params  an estimator's Params compared across the ranks in one small all-reduce
 *                      (exec's check_same_values): a rank given another alpha raises, on every
 *                      rank, "Ridge.fit: ranks disagree on alpha: 1 on rank 0, 100 on rank 1;
 *                      expected the same on every rank", instead of two silently different models
 *                      or a hang in a collective whose size depends on the parameter.
 * \endcode
 * Texts are exact (doubles in shortest round-trip form), so values that print alike are equal.
 * Fields that only set what a fit prints (`verbose`, core/log.hpp's is_logging_param) are not
 * compared: only rank 0 prints.
 */

#include <charconv>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "onelearn/core/log.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::detail {

/// The exact text of a number: integers as they are, floating point in the shortest form that
/// reads back to the same bits ("0.1", "1e-300", "nan").
template <class N>
  requires std::is_arithmetic_v<N>
std::string exact_text(N value) {
  if constexpr (std::is_same_v<N, bool>) {
    return value ? "true" : "false";
  } else {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
  }
}

inline std::string exact_text(const ParamValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
          return '"' + v + '"';
        } else {
          return exact_text(v);
        }
      },
      value);
}

/// "{alpha=0.1, fit_intercept=true}": a search candidate's or an ablation row's parameters as one
/// exact text.
inline std::string exact_text(const std::vector<std::pair<std::string, ParamValue>>& list) {
  std::string text;
  for (const auto& [name, value] : list) {
    text += (text.empty() ? "" : ", ") + name + "=" + exact_text(value);
  }
  return "{" + text + "}";
}

class NamedValues {
 public:
  void add(std::string name, std::string text) {
    values_.push_back({std::move(name), std::move(text)});
  }
  template <class N>
    requires std::is_arithmetic_v<N>
  void add(std::string name, N value) {
    add(std::move(name), exact_text(value));
  }
  /// Every field of `params`, named "<prefix><field>", but those that only set what a fit
  /// prints (`verbose`): only rank 0 prints, so `verbose = rank == 0` must not be an error.
  template <class P>
  void add_params(std::string_view prefix, const P& params) {
    for (auto& [name, value] : params::to_list(params)) {
      if (is_logging_param(name)) continue;
      add(std::string(prefix) + name, exact_text(value));
    }
  }
  [[nodiscard]] const std::vector<exec::NamedValue>& values() const noexcept { return values_; }

 private:
  std::vector<exec::NamedValue> values_;
};

/// Raises invalid_argument on every rank, naming the first parameter that differs, unless every
/// rank holds the same `params`. Free (compiled away) under a local policy.
template <class P, exec::ExecutionPolicy Exec>
void check_same_params(std::string_view where, const Exec& exec, const P& params) {
  if constexpr (Exec::is_distributed) {
    NamedValues values;
    values.add_params("", params);
    exec.check_same_values(where, values.values());
  }
}

}  // namespace onelearn::detail
