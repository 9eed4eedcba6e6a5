#pragma once
// exec::local: one process. Every collective is an inline no-op (or a copy), so code written
// for the distributed policies costs nothing here.

#include <span>
#include <string_view>
#include <vector>

#include "onelearn/exec/policy.hpp"

namespace onelearn::exec {

struct local {
  static constexpr bool is_distributed = false;

  [[nodiscard]] constexpr int rank() const noexcept { return 0; }
  [[nodiscard]] constexpr int size() const noexcept { return 1; }

  template <collective_value T, std::size_t N>
  constexpr void allreduce(std::span<T, N> /*values*/, reduce_op /*op*/) const noexcept {}

  template <collective_value T, std::size_t N>
  constexpr void broadcast(std::span<T, N> /*values*/, int /*root*/ = 0) const noexcept {}

  /// The concatenation of every rank's `values` in rank order: here, a copy of them.
  template <collective_value T>
  [[nodiscard]] std::vector<T> allgatherv(std::span<const T> values) const {
    return {values.begin(), values.end()};
  }

  constexpr void barrier() const noexcept {}

  /// Every rank agrees with itself.
  constexpr void check_same_shape(std::string_view /*what*/,
                                  std::span<const std::int64_t> /*shape*/) const noexcept {}

  /// Runs `local_checks` (input validation); with one process an error simply propagates.
  template <class F>
  void propagate_errors(F&& local_checks) const {
    std::forward<F>(local_checks)();
  }
};

static_assert(ExecutionPolicy<local>);

}  // namespace onelearn::exec
