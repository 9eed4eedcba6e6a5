#pragma once
/**
 * \file
 * \brief What a compute space is: the `ComputeSpace` concept.
 * \ingroup spaces
 *
 * \code
 * #include <onelearn/space/concept.hpp>
 * #include <onelearn/space/space.hpp>
 * namespace space = onelearn::space;
 * static_assert(space::ComputeSpace<space::host>);
 * // The column means of X in any space: the same code for every space.
 * auto column_means = []<space::ComputeSpace S>(const S& s, const onelearn::Matrix<double>& X) {
 *   auto Xs = space::to_space(s, X);                      // borrowed or copied once
 *   onelearn::Vector<double> sums = space::column_sums(s, Xs.view(), {});
 *   return onelearn::Vector<double>(sums / static_cast<double>(X.rows()));
 * };
 * onelearn::Vector<double> means = column_means(space::host{}, X);
 * \endcode
 *
 * What a compute space is (see space/space.hpp for the picture). Every space is a small
 * copyable value: `space::host`, and `space::thrust_space<System>` for Thrust's systems.
 */

#include <concepts>
#include <cstddef>
#include <string_view>

namespace onelearn::space {

/// A compute space: where the samples live and what runs the kernels over them.
/// - `name`: "host", "thrust_omp", ... (for messages and benchmarks);
/// - `host_accessible`: true when the space's memory is the host's, so data the caller holds is
///   read where it is (to_space borrows it); false for a device (to_space copies it, once);
/// - `buffer<T>`: the container the space owns memory in (std::vector for host,
///   thrust::omp::vector for thrust_omp, thrust::cuda::vector for thrust_cuda, ...);
/// - `allocate<T>(n)`: a buffer of n value-initialised elements, or device_memory_error naming
///   the size asked for; `data(buffer)`: its first element (a device address on a device);
/// - `copy_to_space(host_ptr, n, space_ptr)` and `copy_to_host(space_ptr, n, host_ptr)`.
template <class S>
concept ComputeSpace = std::copy_constructible<S> &&
    requires(const S& s, std::size_t n, const double* from, double* to,
             typename S::template buffer<double>& b,
             const typename S::template buffer<double>& cb) {
  { S::name } -> std::convertible_to<std::string_view>;
  { S::host_accessible } -> std::convertible_to<bool>;
  { s.template allocate<double>(n) } -> std::same_as<typename S::template buffer<double>>;
  { S::data(b) } -> std::same_as<double*>;
  { S::data(cb) } -> std::same_as<const double*>;
  s.copy_to_space(from, n, to);
  s.copy_to_host(from, n, to);
};

}  // namespace onelearn::space
