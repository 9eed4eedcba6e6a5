#pragma once
/**
 * \file
 * \ingroup policies
 *
 * exec::local's class: one process. Every collective is an inline no-op (or a copy), so code
 * written for the distributed policies costs nothing here. Entry header: onelearn/exec/local.hpp.
 */

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::exec {

struct local {
  static constexpr bool is_distributed = false;
  /// Every non-blocking collective is complete when it returns.
  using request = ready_request;

  [[nodiscard]] constexpr int rank() const noexcept { return 0; }
  [[nodiscard]] constexpr int size() const noexcept { return 1; }

  template <collective_value T, std::size_t N>
  constexpr void allreduce(std::span<T, N> /*values*/, reduce_op /*op*/) const noexcept {}

  template <broadcast_value T, std::size_t N>
  constexpr void broadcast(std::span<T, N> /*values*/, int /*root*/ = 0) const noexcept {}

  /// The concatenation of every rank's `values` in rank order: here, a copy of them.
  template <collective_value T>
  [[nodiscard]] std::vector<T> allgatherv(std::span<const T> values) const {
    return {values.begin(), values.end()};
  }

  /// The pieces every rank sends to this one: here the one piece, all of `values`. counts must
  /// hold one count, values.size() (a caller's slip, so it throws as the distributed policies do).
  template <collective_value T>
  [[nodiscard]] std::vector<T> alltoallv(std::span<const T> values,
                                         std::span<const std::int64_t> counts) const {
    if (counts.size() != 1 || counts[0] != static_cast<std::int64_t>(values.size())) {
      throw invalid_argument("exec::local::alltoallv: expected one count equal to the " +
                             std::to_string(values.size()) + " values, found " +
                             std::to_string(counts.size()) + " counts" +
                             (counts.size() == 1 ? " (" + std::to_string(counts[0]) + ")" : ""));
    }
    return {values.begin(), values.end()};
  }

  constexpr void barrier() const noexcept {}

  template <collective_value T, std::size_t N>
  constexpr request iallreduce(std::span<T, N> /*values*/, reduce_op /*op*/) const noexcept {
    return {};
  }

  /// This rank's piece (all of `values` but what counts[0] leaves out) copied into `mine`.
  template <collective_value T>
  request ireduce_scatter(std::span<T> values, std::span<T> mine, std::span<const std::int64_t> counts,
                          reduce_op /*op*/) const {
    const auto n = counts.empty() ? std::size_t{0} : static_cast<std::size_t>(counts[0]);
    if (mine.data() != values.data()) std::copy_n(values.begin(), std::min({n, values.size(), mine.size()}), mine.begin());
    return {};
  }

  template <collective_value T>
  constexpr request iallgatherv_in_place(std::span<T> /*buffer*/, std::span<const std::int64_t> /*counts*/) const noexcept {
    return {};
  }

  constexpr void wait_all(std::span<request> /*requests*/) const noexcept {}

  /// One process is its own sub-group.
  [[nodiscard]] constexpr local split(int /*color*/, int /*key*/) const noexcept { return {}; }

  /// Every rank agrees with itself.
  constexpr void check_same_shape(std::string_view /*what*/,
                                  std::span<const std::int64_t> /*shape*/) const noexcept {}

  /// One process holds one set of settings.
  constexpr void check_same_values(std::string_view /*where*/,
                                   std::span<const NamedValue> /*values*/) const noexcept {}

  /// Runs `local_checks` (input validation); with one process an error simply propagates.
  template <class F>
  void propagate_errors(F&& local_checks) const {
    std::forward<F>(local_checks)();
  }
};

static_assert(ExecutionPolicy<local>);

}  // namespace onelearn::exec
