#pragma once
/**
 * \file
 * \ingroup core
 *
 * An estimator's work in its compute space under its execution policy, written once:
 * \code{.unparsed}
 *   run_in_space(exec, space, work)  runs work() and returns what it returns; on a device, inside
 *                                    exec.propagate_errors, so that an allocation that fails on
 *                                    one rank (a missing or full device) is raised on every rank
 *                                    instead of leaving the others in the next collective.
 * \endcode
 * On host memory (space::host and the CPU Thrust systems) bringing rows into the space borrows
 * them and the kernels allocate with new, as every other line of the estimator does, so no
 * collective is added there: a distributed fit on the host costs what it did before spaces.
 */

#include <optional>
#include <type_traits>
#include <utility>

#include "onelearn/exec/policy.hpp"
#include "onelearn/space/concept.hpp"

namespace onelearn::detail {

template <space::ComputeSpace Space, exec::ExecutionPolicy Exec, class Work>
std::invoke_result_t<Work&> run_in_space(const Exec& exec, const Space& /*where*/, Work&& work) {
  using Result = std::invoke_result_t<Work&>;
  if constexpr (Space::host_accessible) {
    return work();
  } else if constexpr (std::is_void_v<Result>) {
    exec.propagate_errors([&] { work(); });
  } else {
    std::optional<Result> out;
    exec.propagate_errors([&] { out.emplace(work()); });
    return std::move(*out);
  }
}

}  // namespace onelearn::detail
