#pragma once
// Large outputs on transparent huge pages, as numpy allocates its arrays.
//
// A freshly allocated matrix of hundreds of megabytes costs more in page faults than in the
// arithmetic that fills it: with 4 KiB pages, every 4 KiB written first traps into the kernel,
// which zeroes a page and maps it (StandardScaler.transform of 1M x 32 doubles spent most of its
// time there). Linux can back such a region with 2 MiB pages instead, 512 times fewer faults, if
// asked with madvise(MADV_HUGEPAGE) before the first write, which is what the default THP
// setting ("madvise") waits for. numpy has done this for every array of 4 MiB or more since
// 1.16, so scikit-learn's outputs get it; onelearn's large outputs ask the same way.

#include <cstddef>
#include <cstdint>

#include "onelearn/core/types.hpp"

// madvise is declared here rather than through <sys/mman.h>: that header's macros (MAP_TYPE,
// PROT_READ, ...) leak into every file that includes onelearn, and MAP_TYPE breaks ONNX's
// onnx/defs/parser.h, which has an enumerator of that name. The declaration is glibc's.
#if defined(__linux__)
extern "C" int madvise(void* addr, std::size_t length, int advice) noexcept;
#endif

namespace onelearn::detail {

/// MADV_HUGEPAGE, the same value on every Linux architecture (asm-generic/mman-common.h).
inline constexpr int madvise_huge_page = 14;

/// numpy's threshold: below it the faults are few and the system call is not worth it.
inline constexpr std::size_t huge_page_threshold_bytes = std::size_t{1} << 22;

/// Advises the kernel to back [data, data + bytes) with huge pages. Call it before the first
/// write; a hint only (no effect where THP is "never", or off Linux), so errors are ignored.
inline void advise_huge_pages(void* data, std::size_t bytes) noexcept {
#if defined(__linux__)
  if (data == nullptr || bytes < huge_page_threshold_bytes) return;
  constexpr std::uintptr_t page = 4096;  // madvise wants a page-aligned start
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) & ~(page - 1);
  const auto end = reinterpret_cast<std::uintptr_t>(data) + bytes;
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, madvise_huge_page);
#else
  (void)data;
  (void)bytes;
#endif
}

/// An uninitialised rows x cols matrix, on huge pages when it is large: for outputs that the
/// caller fills completely.
template <class T>
[[nodiscard]] Matrix<T> uninitialized_matrix(index_t rows, index_t cols) {
  Matrix<T> m(rows, cols);
  advise_huge_pages(m.data(), static_cast<std::size_t>(m.size()) * sizeof(T));
  return m;
}

}  // namespace onelearn::detail
