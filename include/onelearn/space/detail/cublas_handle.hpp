#pragma once
// cuBLAS for space::thrust_cuda's kernels: the typed errors of a failed call, and one handle per
// host thread, made at the thread's first cuBLAS kernel and kept until the thread ends. Private:
// the cublas_*.hpp kernels include it.
//
// Why one per thread and kept: cublasCreate sets up the library's state and workspace on the
// device, far dearer than the GEMMs of one loss evaluation, which an L-BFGS fit asks for about
// 100 times; and a handle must not be used by two threads at once, which one per thread rules
// out. The handle runs on the default stream, as Thrust's kernels and the pool's blocks
// (detail/cuda_pool.hpp), so its work is ordered with theirs.

#include <string>

#include <cublas_v2.h>

#include "onelearn/space/errors.hpp"

namespace onelearn::space::detail {

inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const std::string text = std::string("onelearn::space::thrust_cuda: ") + what +
                           " failed: cuBLAS status " + std::to_string(static_cast<int>(status));
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw device_memory_error(text, 0);
  throw device_error(text);
}

/// This thread's handle, in host pointer mode (scalars read from and written to host memory).
inline cublasHandle_t cublas_for_this_thread() {
  struct owner {
    cublasHandle_t handle = nullptr;
    owner() {
      check_cublas(cublasCreate(&handle), "cublasCreate");
      check_cublas(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
    }
    ~owner() { (void)cublasDestroy(handle); }  // at exit the context may be gone: ignored
    owner(const owner&) = delete;
    owner& operator=(const owner&) = delete;
  };
  thread_local const owner mine;
  return mine.handle;
}

}  // namespace onelearn::space::detail
