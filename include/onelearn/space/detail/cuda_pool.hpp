#pragma once
// The device memory behind space::thrust_cuda's buffers: blocks from a stream-ordered memory
// pool of onelearn's own (cudaMallocFromPoolAsync, cudaFreeAsync on the default stream) instead
// of cudaMalloc and cudaFree. Private: space/thrust.hpp uses it under nvcc.
//
// Why: the kernels allocate their partial sums, residuals and small copies at every call, and an
// iterative fit calls them hundreds of times (LogisticRegression's L-BFGS evaluates its loss
// about 100 times, KMeans runs a Lloyd step per iteration). cudaFree waits for the whole device
// and cudaMalloc goes to the driver at every call; a pool hands back the blocks the previous call
// freed, in stream order, without either. The pool never shrinks on its own (its release
// threshold is the largest size), so it holds on to the largest footprint a fit reached until
// the process ends, as PyTorch's caching allocator does; `space::release_cached_device_memory()`
// gives the unused blocks back. It is onelearn's own pool, not the device's default one, so that
// the threshold does not change how other CUDA code in the process allocates.
//
// A device whose driver has no memory pools (cudaDevAttrMemoryPoolsSupported is 0: some
// virtualised GPUs) gets cudaMalloc and cudaFree.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <thrust/mr/allocator.h>
#include <thrust/mr/memory_resource.h>
#include <thrust/system/cuda/error.h>
#include <thrust/system/cuda/pointer.h>
#include <thrust/system_error.h>

namespace onelearn::space::detail {

/// The pools, one per device, created at first use (nullptr: the device has none). Never
/// destroyed: a pool lives as long as the process's CUDA context.
class device_pools {
 public:
  static cudaMemPool_t current() {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    device_pools& self = instance();
    const std::lock_guard lock(self.mutex_);
    for (const auto& [id, pool] : self.pools_) {
      if (id == device) return pool;
    }
    cudaMemPool_t pool = create(device);
    self.pools_.emplace_back(device, pool);
    return pool;
  }

  /// Unused blocks back to the driver, on every device's pool.
  static void trim() {
    device_pools& self = instance();
    const std::lock_guard lock(self.mutex_);
    for (const auto& [id, pool] : self.pools_) {
      if (pool != nullptr) (void)cudaMemPoolTrimTo(pool, 0);
    }
    (void)cudaGetLastError();
  }

 private:
  static device_pools& instance() {
    static device_pools pools;
    return pools;
  }

  static cudaMemPool_t create(int device) {
    int supported = 0;
    if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) !=
            cudaSuccess ||
        supported == 0) {
      (void)cudaGetLastError();
      return nullptr;
    }
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    std::uint64_t keep_everything = UINT64_MAX;
    (void)cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything);
    (void)cudaGetLastError();
    return pool;
  }

  std::mutex mutex_;
  std::vector<std::pair<int, cudaMemPool_t>> pools_;
};

/// Thrust's memory-resource interface over the pool. Stream 0 is the default stream Thrust's
/// `thrust::cuda::par` runs on (legacy, or per thread under --default-stream per-thread), so a
/// block freed after a kernel is handed out again only after that kernel.
class pooled_device_memory final : public ::thrust::mr::memory_resource<::thrust::cuda::pointer<void>> {
 public:
  pointer do_allocate(std::size_t bytes, std::size_t /*alignment: 256 from either call*/) override {
    if (bytes == 0) return pointer(nullptr);
    void* raw = nullptr;
    cudaMemPool_t pool = device_pools::current();
    const cudaError_t status = pool != nullptr
                                   ? cudaMallocFromPoolAsync(&raw, bytes, pool, cudaStream_t{})
                                   : cudaMalloc(&raw, bytes);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      throw ::thrust::system_error(status, ::thrust::cuda_category(),
                                   pool != nullptr ? "cudaMallocFromPoolAsync" : "cudaMalloc");
    }
    return pointer(raw);
  }

  void do_deallocate(pointer p, std::size_t /*bytes*/, std::size_t /*alignment*/) override {
    void* raw = ::thrust::raw_pointer_cast(p);
    if (raw == nullptr) return;
    // Destructors call this: an error (the context already gone at exit) is dropped, not thrown.
    if (device_pools::current() != nullptr) {
      (void)cudaFreeAsync(raw, cudaStream_t{});
    } else {
      (void)cudaFree(raw);
    }
    (void)cudaGetLastError();
  }
};

/// The allocator of thrust_cuda's buffers.
template <class T>
using pooled_device_allocator = ::thrust::mr::stateless_resource_allocator<T, pooled_device_memory>;

/// n values of device memory from the pool, not initialised: a kernel's own intermediate values
/// (partial sums, residuals, small copies), which it writes before it reads. A thrust vector of n
/// values would first fill them with zeros, one more kernel per allocation.
template <class T>
class device_scratch {
 public:
  device_scratch() = default;
  explicit device_scratch(std::size_t n) : bytes_(n * sizeof(T)) {
    data_ = static_cast<T*>(::thrust::raw_pointer_cast(resource()->allocate(bytes_)));
  }
  ~device_scratch() { release(); }
  device_scratch(device_scratch&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  device_scratch& operator=(device_scratch&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  device_scratch(const device_scratch&) = delete;
  device_scratch& operator=(const device_scratch&) = delete;

  [[nodiscard]] T* get() const noexcept { return data_; }

 private:
  static pooled_device_memory* resource() {
    return ::thrust::mr::get_global_resource<pooled_device_memory>();
  }
  void release() noexcept {
    if (data_ != nullptr) resource()->deallocate(::thrust::cuda::pointer<void>(data_), bytes_);
    data_ = nullptr;
  }

  T* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace onelearn::space::detail
