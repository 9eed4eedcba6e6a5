#pragma once
/**
 * \file
 * \brief The ExecutionPolicy concept: the collective primitives onelearn's algorithms are written
 * against.
 * \ingroup policies
 *
 * What an execution policy is: the collective primitives onelearn's algorithms are written
 * against, and the operations derived from them.
 *
 * An algorithm is written once against this interface. exec::local makes every collective a
 * no-op (or a copy) that compiles away; exec::mpi runs them on an MPI communicator the
 * application owns; exec::ucx moves the data with UCX. Thrust's execution_policy<Derived> and
 * oneDAL's SPMD mode have the same shape.
 *
 * The primitives (CollectivePrimitives), for T in float, double and std::int64_t:
 * - `is_distributed` (static constexpr bool), `rank()`, `size()`;
 * - `allreduce(std::span<T>, reduce_op)`: element-wise, in place, the result on every rank;
 * - `broadcast(std::span<T>, root)`, also for char (error messages travel as bytes);
 * - `allgatherv(std::span<const T>) -> std::vector<T>`: every rank's values in rank order;
 * - `alltoallv(std::span<const T> values, counts) -> std::vector<T>`: `values` cut into
 *   consecutive pieces of counts[r] values, piece r sent to rank r; returns the pieces every
 *   rank sent to this one, in rank order (a personalised exchange: each value travels to one
 *   rank, where allgatherv sends every value to all of them);
 * - `barrier()`;
 * - `iallreduce(std::span<T>, reduce_op) -> request`: a non-blocking all-reduce. The request
 *   (`E::request`, movable) has `wait()` and `test() -> bool` (true once complete; it also
 *   lets the collective progress), and `wait_all(std::span<request>)` completes several under
 *   the policy's timeout. The buffer belongs to the collective until its request completes; a
 *   request destroyed before it completed waits for it.
 * - ZeRO sharding (nn/detail/gradient_sync.hpp), non-blocking too; `counts[r]` is rank r's
 *   share of a buffer cut into consecutive pieces in rank order:
 *   `ireduce_scatter(std::span<T> values, std::span<T> mine, counts, reduce_op) -> request`
 *   reduces every rank's `values` and leaves this rank's piece of the result in `mine`
 *   (`values` may be overwritten: a backend may reduce it in place), and
 *   `iallgatherv_in_place(std::span<T> buffer, counts) -> request` gives every rank's `buffer`
 *   each rank's own piece of its buffer.
 * - `split(color, key) -> E`: a policy of the same type over the ranks that passed the same
 *   color (>= 0), ordered by key (then by rank); collective over every rank of the policy.
 *
 * The derived operations (ExecutionPolicy adds them), written once on top of the primitives in
 * exec::collectives<Derived> (exec/collectives.hpp), which a distributed backend inherits:
 * - `check_same_shape(what, shape)`: shape_error on every rank unless all pass the same shape;
 * - `propagate_errors(local_checks)`: an error thrown on any rank is raised on every rank;
 * - `check_same_values(where, values)`: invalid_argument on every rank, naming the first
 *   setting that differs and each rank's value of it, unless all ranks pass the same
 *   NamedValues (an estimator's Params, fit's options, a search's grid).
 * exec::local has its own zero-cost versions.
 *
 * \par Adding a backend
 * 1. One folder, `include/onelearn/exec/<name>/`, with the policy class (`policy.hpp`) and its
 *    internals, and a public entry header `include/onelearn/exec/<name>.hpp` that carries the
 *    doc block (a usage example first, then method, options, errors) and includes the folder.
 * 2. The primitives above, for float, double and std::int64_t (broadcast also for char), with
 *    a `request` type (exec::ready_request if the backend completes its non-blocking calls
 *    when they start, as exec::ucx does) and `wait_all`; `split` returns the backend's type.
 * 3. `class <name> : public collectives<<name>>` for check_same_shape, propagate_errors and
 *    check_same_values (their messages are then those of every other backend).
 * 4. `static_assert(ExecutionPolicy<<name>>);` after the class.
 * 5. One line in cmake/onelearnComponents.cmake: `onelearn_component(<name> FIND <its lookup>
 *    FOUND <variable> LINKS <libraries>)`, which makes the target `onelearn::<name>`, installs
 *    it and answers `find_package(onelearn COMPONENTS <name>)`.
 * 6. Tests: copy tests/mpi/test_exec_ucx.cpp (every collective against exec::mpi's result,
 *    the agreement checks, split, the non-blocking requests, tune::run on sub-groups, estimator
 *    and nn::Sequential fits against their exec::mpi fits) into tests/mpi/.
 */

#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace onelearn::exec {

/// One setting every rank must hold alike, as check_same_values compares it: its name
/// ("alpha", "FitOptions.epochs") and its value as exact text ("0.1", "true").
struct NamedValue {
  std::string name;
  std::string text;
};

enum class reduce_op { sum, min, max };

/// The element types every policy reduces and moves.
template <class T>
concept collective_value =
    std::same_as<T, float> || std::same_as<T, double> || std::same_as<T, std::int64_t>;

/// What broadcast also moves: the collective values and bytes (error messages).
template <class T>
concept broadcast_value = collective_value<T> || std::same_as<T, char>;

/// A non-blocking collective in flight: wait() completes it (or throws, e.g. on timeout),
/// test() says whether it has completed (and lets it progress).
template <class R>
concept CollectiveRequest = std::movable<R> && requires(R& r) {
  r.wait();
  { r.test() } -> std::same_as<bool>;
};

/// The request of a backend whose non-blocking collectives are complete when they return
/// (exec::local; exec::ucx, whose collectives progress only while they are called).
struct ready_request {
  constexpr void wait() const noexcept {}
  [[nodiscard]] constexpr bool test() const noexcept { return true; }
};

namespace detail {

/// The primitives for one element type T.
template <class E, class T>
concept primitives_for = requires(const E& e, std::span<T> values, std::span<const T> input,
                                  std::span<const std::int64_t> counts) {
  e.allreduce(values, reduce_op::sum);
  e.broadcast(values, 0);
  { e.allgatherv(input) } -> std::same_as<std::vector<T>>;
  { e.alltoallv(input, counts) } -> std::same_as<std::vector<T>>;
  { e.iallreduce(values, reduce_op::sum) } -> std::same_as<typename E::request>;
  { e.ireduce_scatter(values, values, counts, reduce_op::sum) } -> std::same_as<typename E::request>;
  { e.iallgatherv_in_place(values, counts) } -> std::same_as<typename E::request>;
};

/// A callable with nothing to check, for the concept below: named, not a lambda, because nvcc's
/// front end (CUDA 13) evaluates a requires-expression holding a lambda as false, which made
/// every policy fail ExecutionPolicy in .cu files.
struct no_local_checks {
  constexpr void operator()() const noexcept {}
};

}  // namespace detail

/// What a backend implements: the primitives, for every element type the code uses.
template <class E>
concept CollectivePrimitives =
    std::copy_constructible<E> && CollectiveRequest<typename E::request> &&
    detail::primitives_for<E, float> && detail::primitives_for<E, double> &&
    detail::primitives_for<E, std::int64_t> &&
    requires(const E& e, std::span<char> bytes, std::span<typename E::request> requests) {
      { E::is_distributed } -> std::convertible_to<bool>;
      { e.rank() } -> std::same_as<int>;
      { e.size() } -> std::same_as<int>;
      e.broadcast(bytes, 0);
      e.barrier();
      e.wait_all(requests);
      { e.split(0, 0) } -> std::same_as<E>;
    };

/// What the algorithms use: the primitives and the operations derived from them (given by
/// exec::collectives<E>, or by exec::local's own no-ops).
template <class E>
concept ExecutionPolicy =
    CollectivePrimitives<E> && requires(const E& e, std::span<const std::int64_t> shape,
                                         std::span<const NamedValue> values, std::string_view what) {
      e.check_same_shape(what, shape);
      e.propagate_errors(detail::no_local_checks{});
      e.check_same_values(what, values);
    };

}  // namespace onelearn::exec
