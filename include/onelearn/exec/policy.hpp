#pragma once
// What an execution policy is: the collectives onelearn's algorithms are written against.
//
// An algorithm is written once against this interface. exec::local makes every collective a
// no-op that compiles away; exec::mpi runs them on an MPI communicator the application owns.
// Thrust's execution_policy<Derived> and oneDAL's SPMD mode have the same shape.

#include <concepts>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace onelearn::exec {

enum class reduce_op { sum, min, max };

/// The element types every policy reduces and moves.
template <class T>
concept collective_value =
    std::same_as<T, float> || std::same_as<T, double> || std::same_as<T, std::int64_t>;

template <class E>
concept ExecutionPolicy = requires(const E& e, std::span<double> d, std::span<float> f,
                                   std::span<std::int64_t> i, std::span<const double> cd,
                                   std::span<const std::int64_t> shape, std::string_view what) {
  { E::is_distributed } -> std::convertible_to<bool>;
  { e.rank() } -> std::same_as<int>;
  { e.size() } -> std::same_as<int>;
  e.allreduce(d, reduce_op::sum);
  e.allreduce(f, reduce_op::sum);
  e.allreduce(i, reduce_op::max);
  e.broadcast(d, 0);
  { e.allgatherv(cd) } -> std::same_as<std::vector<double>>;
  e.barrier();
  e.check_same_shape(what, shape);
  e.propagate_errors([] {});
};

}  // namespace onelearn::exec
