#pragma once
/**
 * \file
 * \brief The type `space::host`, the default compute space, without its kernels.
 * \ingroup spaces
 *
 * \code
 * #include <onelearn/space/host_space.hpp>
 * static_assert(onelearn::space::ComputeSpace<onelearn::space::host>);
 * static_assert(onelearn::space::host::host_accessible);
 * \endcode
 *
 * What an estimator needs to name the default space (its `Space = space::host` argument) when
 * it runs no host kernel through the space interface: histogram boosting runs its own host code
 * and only says where. space/host.hpp has the kernels (distances, moments, Gram, logistic
 * terms: 4 s of front end per translation unit that includes them for nothing).
 */

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

#include "onelearn/space/concept.hpp"

namespace onelearn::space {

// The host: the caller's memory, onelearn's Eigen + OpenMP kernels. The default space.
struct host {
  static constexpr std::string_view name = "host";
  static constexpr bool host_accessible = true;

  template <class T>
  using buffer = std::vector<T>;

  template <class T>
  [[nodiscard]] buffer<T> allocate(std::size_t n) const {
    return buffer<T>(n);
  }
  template <class T>
  static T* data(buffer<T>& b) noexcept {
    return b.data();
  }
  template <class T>
  static const T* data(const buffer<T>& b) noexcept {
    return b.data();
  }
  template <class T>
  void copy_to_space(const T* from, std::size_t n, T* to) const {
    std::copy_n(from, n, to);
  }
  template <class T>
  void copy_to_host(const T* from, std::size_t n, T* to) const {
    std::copy_n(from, n, to);
  }
};

static_assert(ComputeSpace<host>);

}  // namespace onelearn::space
