#pragma once
// Large copies from host memory to a CUDA device through two pinned blocks of this thread's:
// host threads copy the next part of the source into one block while the device's copy engine
// reads the other. Private: space/thrust.hpp's copy_to_space uses it for copies of at least
// staged_copy_min_bytes.
//
// Why: a cudaMemcpy from pageable memory (what a caller's Eigen matrix is) is staged by the
// driver through pinned buffers with one host thread's memcpy, about 7-8 GB/s on the H100
// machine measured (51 MB of KMeans' rows in 6.7-7.4 ms), a fifth of the bus. Filling the
// blocks on all the host's OpenMP threads lets the bus set the pace instead. Pinning the
// caller's memory in place (cudaHostRegister) would cost a page-table walk per fit.
//
// The blocks (2 x 8 MiB per host thread that copies, kept until the thread ends) are ordered by
// events on the default stream: a block is refilled only after the device has read it, and the
// source is fully read when the function returns, so the caller may free it at once; the device
// copy itself runs on in stream order, as a kernel would. Where the blocks cannot be had
// (pinned memory refused), the plain cudaMemcpy runs.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include <cuda_runtime_api.h>

namespace onelearn::space::detail {

/// Copies below this go straight to cudaMemcpy: the staging pays from a few blocks on.
inline constexpr std::size_t staged_copy_min_bytes = std::size_t{16} << 20;

class pinned_staging {
 public:
  static constexpr std::size_t block_bytes = std::size_t{8} << 20;

  pinned_staging() {
    for (int b = 0; b < 2; ++b) {
      if (cudaMallocHost(&block_[b], block_bytes) != cudaSuccess ||
          cudaEventCreateWithFlags(&emptied_[b], cudaEventDisableTiming) != cudaSuccess) {
        (void)cudaGetLastError();
        ok_ = false;
      }
    }
  }
  ~pinned_staging() {  // at thread exit; errors (the context gone) are dropped
    (void)cudaStreamSynchronize(cudaStream_t{});
    for (int b = 0; b < 2; ++b) {
      if (block_[b] != nullptr) (void)cudaFreeHost(block_[b]);
      if (emptied_[b] != nullptr) (void)cudaEventDestroy(emptied_[b]);
    }
    (void)cudaGetLastError();
  }
  pinned_staging(const pinned_staging&) = delete;
  pinned_staging& operator=(const pinned_staging&) = delete;

  [[nodiscard]] bool ok() const noexcept { return ok_; }

  /// Copies `bytes` from host `from` to device `to`; the first failed CUDA call's status, or
  /// cudaSuccess.
  cudaError_t copy(const void* from, std::size_t bytes, void* to) {
    const auto* source = static_cast<const unsigned char*>(from);
    auto* target = static_cast<unsigned char*>(to);
    int b = 0;
    for (std::size_t done = 0; done < bytes; done += block_bytes, b ^= 1) {
      const std::size_t length = std::min(block_bytes, bytes - done);
      if (cudaError_t status = cudaEventSynchronize(emptied_[b]); status != cudaSuccess) {
        return status;
      }
      parallel_copy(static_cast<unsigned char*>(block_[b]), source + done, length);
      if (cudaError_t status = cudaMemcpyAsync(target + done, block_[b], length,
                                               cudaMemcpyHostToDevice, cudaStream_t{});
          status != cudaSuccess) {
        return status;
      }
      if (cudaError_t status = cudaEventRecord(emptied_[b], cudaStream_t{});
          status != cudaSuccess) {
        return status;
      }
    }
    return cudaSuccess;
  }

 private:
  /// memcpy in 1 MiB pieces on the host's OpenMP threads (one thread without OpenMP).
  static void parallel_copy(unsigned char* to, const unsigned char* from, std::size_t bytes) {
    constexpr std::size_t piece = std::size_t{1} << 20;
    const auto pieces = static_cast<long long>((bytes + piece - 1) / piece);
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
    for (long long i = 0; i < pieces; ++i) {
      const std::size_t at = static_cast<std::size_t>(i) * piece;
      std::memcpy(to + at, from + at, std::min(piece, bytes - at));
    }
  }

  void* block_[2] = {nullptr, nullptr};
  cudaEvent_t emptied_[2] = {nullptr, nullptr};
  bool ok_ = true;
};

/// cudaMemcpy from host to device, staged through this thread's pinned blocks when it is large.
inline cudaError_t copy_host_to_device(const void* from, std::size_t bytes, void* to) {
  if (bytes >= staged_copy_min_bytes) {
    thread_local pinned_staging staging;
    if (staging.ok()) return staging.copy(from, bytes, to);
  }
  return cudaMemcpy(to, from, bytes, cudaMemcpyHostToDevice);
}

}  // namespace onelearn::space::detail
