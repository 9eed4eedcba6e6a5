#pragma once
// AlignedAllocator: std::vector's allocator for buffers aligned to 64 bytes (a cache line, and
// the widest SIMD register). The networks' tensors use it so that Eigen's vectorised
// reductions round alike whatever address malloc returns (nn/tensor.hpp); histogram boosting's
// histograms so that no bin's statistics straddle two cache lines
// (core/detail/histogram_layout.hpp).

#include <cstddef>
#include <new>
#include <vector>

namespace onelearn::detail {

template <class T>
struct AlignedAllocator {
  using value_type = T;
  static constexpr std::align_val_t alignment{64};

  AlignedAllocator() = default;
  template <class U>
  constexpr AlignedAllocator(const AlignedAllocator<U>& /*other*/) noexcept {}  // NOLINT

  [[nodiscard]] T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), alignment));
  }
  void deallocate(T* p, std::size_t /*n*/) noexcept { ::operator delete(p, alignment); }

  template <class U>
  friend constexpr bool operator==(const AlignedAllocator&, const AlignedAllocator<U>&) noexcept {
    return true;
  }
};

template <class T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

}  // namespace onelearn::detail
