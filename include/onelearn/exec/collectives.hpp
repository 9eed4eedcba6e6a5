#pragma once
/**
 * \class onelearn::exec::collectives
 * \brief The operations every distributed policy derives from its primitives: shape and value
 * agreement, error propagation.
 * \ingroup policies
 *
 * \code
 * // A backend derives from collectives and writes only the primitives of exec/policy.hpp:
 * //   class my_backend : public onelearn::exec::collectives<my_backend> { ... };
 * // exec::mpi and exec::ucx are written so:
 * onelearn::exec::mpi policy{comm};
 * policy.check_same_shape("the number of features of X", std::array<std::int64_t, 1>{n});
 * policy.propagate_errors([&] { validate(X); });  // throws on every rank if it throws on one
 * policy.check_same_values("Ridge.fit", std::array{exec::NamedValue{"alpha", "0.5"}});
 * \endcode
 *
 * exec::collectives<Derived>: the operations every distributed policy derives from its
 * primitives (exec/policy.hpp), written once; a backend inherits it (CRTP) and gets
 * check_same_shape, propagate_errors and check_same_values with the same messages as every
 * other backend.
 * exec::local does not inherit it: its own versions cost nothing.
 *
 * Method: each operation makes the same collective calls on every rank whatever the rank
 * holds, so a rank that disagrees or fails never leaves the others waiting.
 * - check_same_shape: one allgatherv of [length, shape...] from every rank (the length prefix
 *   delimits the ranks' shapes, which may differ in length); every rank compares them all, so
 *   every rank throws the same shape_error, or none does.
 * - propagate_errors: runs the local checks, then a min-reduction finds the first rank that
 *   failed (size() when none did); that rank broadcasts its error code and message length,
 *   then the message, and every rank throws the same error type with "on rank r: " before the
 *   message.
 * - check_same_values: one all-reduce (min) of [digest, -digest, count, -count]: equal on
 *   every rank when min == -max. Only when they differ, an allgatherv of every rank's values
 *   (exec/detail/named_values.hpp), from which every rank writes the same message naming the
 *   first differing setting, and throws invalid_argument.
 */

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/exec/detail/named_values.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::exec {

template <class Derived>
class collectives {
 public:
  /// Throws shape_error on every rank, with every rank's shape in the message, unless all
  /// ranks pass the same `shape`.
  void check_same_shape(std::string_view what, std::span<const std::int64_t> shape) const {
    const Derived& self = static_cast<const Derived&>(*this);
    std::vector<std::int64_t> mine{static_cast<std::int64_t>(shape.size())};
    mine.insert(mine.end(), shape.begin(), shape.end());
    const std::vector<std::int64_t> all = self.allgatherv(std::span<const std::int64_t>(mine));
    // Rank r's shape: the all[at[r]] values after all[at[r]].
    std::vector<std::size_t> at;
    bool same = true;
    for (std::size_t pos = 0; pos < all.size();) {
      const auto n = static_cast<std::size_t>(all[pos]);
      if (all[pos] < 0 || n > all.size() - pos - 1) {
        throw distributed_error("check_same_shape: expected a well-formed shape from every rank, found one of bad length");
      }
      at.push_back(pos);
      same = same && std::equal(all.begin() + static_cast<std::ptrdiff_t>(pos + 1),
                                all.begin() + static_cast<std::ptrdiff_t>(pos + 1 + n), shape.begin(), shape.end());
      pos += n + 1;
    }
    if (same) return;
    std::string message = "ranks disagree on " + std::string(what) + ": expected the same on every rank, found";
    for (std::size_t r = 0; r < at.size(); ++r) {
      const auto n = static_cast<std::size_t>(all[at[r]]);
      message += (r == 0 ? " rank 0 (" : ", rank " + std::to_string(r) + " (");
      for (std::size_t i = 0; i < n; ++i) {
        message += (i == 0 ? "" : ", ") + std::to_string(all[at[r] + 1 + i]);
      }
      message += ")";
    }
    throw shape_error(message);
  }

  /// Throws invalid_argument on every rank, naming the first setting that differs and each
  /// rank's value of it, unless every rank passes the same `values` (names and texts).
  void check_same_values(std::string_view where, std::span<const NamedValue> values) const {
    const Derived& self = static_cast<const Derived&>(*this);
    const std::int64_t digest = detail::digest(values);
    const auto count = static_cast<std::int64_t>(values.size());
    std::int64_t extremes[4] = {digest, -digest, count, -count};
    self.allreduce(std::span<std::int64_t>(extremes), reduce_op::min);
    if (extremes[0] == -extremes[1] && extremes[2] == -extremes[3]) return;
    const std::vector<std::int64_t> mine = detail::pack(values);
    const std::vector<std::int64_t> all = self.allgatherv(std::span<const std::int64_t>(mine));
    throw invalid_argument(detail::disagreement_message(where, detail::unpack(all)));
  }

  /// Runs `local_checks` (input validation) on every rank. If it throws on any rank, every rank
  /// throws the same error type with the first failing rank's message, instead of the other
  /// ranks waiting forever in the algorithm's next collective.
  template <class F>
  void propagate_errors(F&& local_checks) const {
    const Derived& self = static_cast<const Derived&>(*this);
    error_code code = error_code::runtime;
    std::string message;
    bool failed = false;
    try {
      std::forward<F>(local_checks)();
    } catch (const std::exception& e) {
      failed = true;
      message = e.what();
      if (const auto* ours = dynamic_cast<const error*>(&e)) code = ours->code();
    } catch (...) {  // anything at all: letting it escape on one rank would hang the others
      failed = true;
      message = "an exception not derived from std::exception";
    }
    std::int64_t first_failed = failed ? self.rank() : self.size();
    self.allreduce(std::span<std::int64_t>(&first_failed, 1), reduce_op::min);
    if (first_failed == self.size()) return;

    const int root = static_cast<int>(first_failed);
    std::int64_t header[2] = {static_cast<std::int64_t>(code), static_cast<std::int64_t>(message.size())};
    self.broadcast(std::span<std::int64_t>(header), root);
    message.resize(static_cast<std::size_t>(header[1]));
    self.broadcast(std::span<char>(message.data(), message.size()), root);
    throw_error(static_cast<error_code>(header[0]), "on rank " + std::to_string(root) + ": " + message);
  }

 protected:
  // Only a backend constructs, copies or destroys its base.
  collectives() = default;
  collectives(const collectives&) = default;
  collectives& operator=(const collectives&) = default;
  ~collectives() = default;
};

}  // namespace onelearn::exec
