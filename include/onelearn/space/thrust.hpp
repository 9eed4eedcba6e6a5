#pragma once
/**
 * \class onelearn::space::thrust_space
 * \brief The compute space of one of Thrust's systems: sequential C++, OpenMP, TBB or CUDA.
 * \ingroup spaces
 *
 * \code
 * #include <onelearn/space/space.hpp>    // the kernels
 * #include <onelearn/space/thrust.hpp>
 * namespace space = onelearn::space;
 * #if defined(ONELEARN_SPACE_HAVE_THRUST)                  // Thrust's headers were found
 * space::thrust_cpp cpp;                                  // thrust_space<space::system::cpp>
 * auto Xc = space::to_space(cpp, X);                      // host memory: borrows X
 * onelearn::Vector<double> sums = space::column_sums(cpp, Xc.view(), {});
 * std::cout << space::thrust_cpp::name << ": " << sums.transpose() << '\n';   // "thrust_cpp"
 * #endif
 * #if defined(ONELEARN_SPACE_HAVE_OMP)                     // and -fopenmp
 * space::thrust_omp omp;                                  // thrust_space<space::system::omp>
 * space::vector<space::thrust_omp, double> w(omp, X.rows());   // in a thrust::omp::vector
 * #endif
 * \endcode
 *
 * `space::thrust_space<System>`: the kernels on one of Thrust's systems. See space/space.hpp
 * for the picture; the kernels are in `space/detail/thrust_kernels.hpp`.
 * - `thrust_cpp`: Thrust's sequential C++ system (one thread; needs only Thrust's headers);
 * - `thrust_omp`: Thrust's OpenMP system (compile with -fopenmp: link onelearn::thrust_omp);
 * - `thrust_tbb`: Thrust's TBB system (link onelearn::thrust_tbb: defines
 *   `ONELEARN_THRUST_TBB`, links TBB::tbb);
 * - `thrust_cuda`: Thrust's CUDA system (compile the file with nvcc: link
 *   onelearn::thrust_cuda); its memory is the device's, so host data is copied in once.
 *
 * The system is one of onelearn's names (`space::system::omp`, ...), each standing for
 * Thrust's tag (`thrust::system::omp::tag`, ...): the names exist in every build, so choosing a
 * space whose package was not compiled in stops at a static_assert naming the package, not at
 * an unknown name deep in Thrust.
 *
 * Errors: that static_assert at compile time; at run time (space/errors.hpp)
 * `space::no_device_error` for a CUDA space where no device is usable, at its first allocation
 * or kernel; `space::device_memory_error` for an allocation that fails, naming the bytes asked
 * for; `space::device_error` for another failed CUDA call.
 */

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "onelearn/core/types.hpp"
#include "onelearn/space/concept.hpp"
#include "onelearn/space/config.hpp"
#include "onelearn/space/errors.hpp"

#if defined(ONELEARN_SPACE_HAVE_THRUST)
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/system/cpp/execution_policy.h>
#include <thrust/system/cpp/vector.h>
#include <thrust/system_error.h>
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
#include <thrust/system/omp/execution_policy.h>
#include <thrust/system/omp/vector.h>
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
#include <thrust/system/tbb/execution_policy.h>
#include <thrust/system/tbb/vector.h>
#endif
#if defined(ONELEARN_SPACE_HAVE_CUDA)
#include <cuda_runtime_api.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system/cuda/vector.h>

#include "onelearn/space/detail/cuda_pool.hpp"
#include "onelearn/space/detail/cuda_staging.hpp"
#endif

namespace onelearn::space {

/// onelearn's names for Thrust's systems (the template argument of thrust_space).
namespace system {
struct cpp {};
struct omp {};
struct tbb {};
struct cuda {};
}  // namespace system

namespace detail {

#if defined(ONELEARN_SPACE_HAVE_THRUST)
inline constexpr bool have_thrust = true;
#else
inline constexpr bool have_thrust = false;
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
inline constexpr bool have_omp = true;
#else
inline constexpr bool have_omp = false;
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
inline constexpr bool have_tbb = true;
#else
inline constexpr bool have_tbb = false;
#endif
#if defined(ONELEARN_SPACE_HAVE_CUDA)
inline constexpr bool have_cuda = true;
#else
inline constexpr bool have_cuda = false;
#endif

/// The flags, as templates so that a static_assert on them waits for a space to be chosen.
template <class System>
inline constexpr bool thrust_found = have_thrust;

template <class System>
inline constexpr bool compiled_in = have_thrust &&
                                    ((std::is_same_v<System, system::cpp>) ||
                                     (std::is_same_v<System, system::omp> && have_omp) ||
                                     (std::is_same_v<System, system::tbb> && have_tbb) ||
                                     (std::is_same_v<System, system::cuda> && have_cuda));

template <class System>
inline constexpr std::string_view system_name = "thrust_?";
template <>
inline constexpr std::string_view system_name<system::cpp> = "thrust_cpp";
template <>
inline constexpr std::string_view system_name<system::omp> = "thrust_omp";
template <>
inline constexpr std::string_view system_name<system::tbb> = "thrust_tbb";
template <>
inline constexpr std::string_view system_name<system::cuda> = "thrust_cuda";

template <class T>
constexpr const char* type_name() {
  if constexpr (std::is_same_v<T, double>)
    return "double";
  else if constexpr (std::is_same_v<T, float>)
    return "float";
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return "int64";
  else
    return "element";
}

#if defined(ONELEARN_SPACE_HAVE_THRUST)
/// Per system: Thrust's tag, execution policy and vector, and whether its memory is a device's.
template <class System>
struct thrust_system;

template <>
struct thrust_system<system::cpp> {
  using tag = ::thrust::system::cpp::tag;
  template <class T>
  using vector = ::thrust::system::cpp::vector<T>;
  template <class T>
  using scratch = vector<T>;
  static auto policy() { return ::thrust::system::cpp::par; }
  static constexpr bool device = false;
};
#if defined(ONELEARN_SPACE_HAVE_OMP)
template <>
struct thrust_system<system::omp> {
  using tag = ::thrust::system::omp::tag;
  template <class T>
  using vector = ::thrust::system::omp::vector<T>;
  template <class T>
  using scratch = vector<T>;
  static auto policy() { return ::thrust::system::omp::par; }
  static constexpr bool device = false;
};
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
template <>
struct thrust_system<system::tbb> {
  using tag = ::thrust::system::tbb::tag;
  template <class T>
  using vector = ::thrust::system::tbb::vector<T>;
  template <class T>
  using scratch = vector<T>;
  static auto policy() { return ::thrust::system::tbb::par; }
  static constexpr bool device = false;
};
#endif
#if defined(ONELEARN_SPACE_HAVE_CUDA)
template <>
struct thrust_system<system::cuda> {
  using tag = ::thrust::system::cuda::tag;
  // Blocks from onelearn's stream-ordered pool (detail/cuda_pool.hpp), not cudaMalloc per call.
  template <class T>
  using vector = ::thrust::system::cuda::vector<T, pooled_device_allocator<T>>;
  // Intermediate values without the zero fill (detail/cuda_pool.hpp).
  template <class T>
  using scratch = device_scratch<T>;
  // par_nosync: Thrust's par waits for the device after every kernel to report its errors; the
  // kernels of one call are queued on the default stream instead, and an error in one surfaces
  // at the call's copy of its result to the host (a device_error naming that copy), which waits.
  static auto policy() { return ::thrust::cuda::par_nosync; }
  static constexpr bool device = true;
};

/// Throws no_device_error unless the program can use a CUDA device; asked once per process.
inline void require_cuda_device() {
  static const std::string problem = [] {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky: clear it
      return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    }
    if (count == 0) return std::string("cudaGetDeviceCount found 0 devices");
    return std::string();
  }();
  if (!problem.empty()) {
    throw no_device_error(
        "onelearn::space::thrust_cuda: expected a CUDA device, found none usable (" + problem +
        "); run on a machine with an NVIDIA GPU and its driver, or choose space::host or a CPU "
        "Thrust space (thrust_omp)");
  }
}

inline void check_cuda(cudaError_t status, std::string_view what) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();
  const std::string text = std::string("onelearn::space::thrust_cuda: ") + std::string(what) +
                           " failed: " + cudaGetErrorName(status) + ": " +
                           cudaGetErrorString(status);
  if (status == cudaErrorMemoryAllocation) throw device_memory_error(text, 0);
  throw device_error(text);
}
#endif

/// The memory and policy of an available system.
template <class System, bool Available = compiled_in<System>>
struct thrust_backend {};

template <class System>
struct thrust_backend<System, true> {
  using traits = thrust_system<System>;
  using tag = typename traits::tag;
  static constexpr bool is_device = traits::device;

  template <class T>
  using buffer = typename traits::template vector<T>;

  /// Thrust's execution policy for this system (thrust::omp::par, ...).
  [[nodiscard]] static auto policy() { return traits::policy(); }

  /// Before a space's first allocation or kernel: a CUDA space with no device throws
  /// no_device_error here.
  static void prepare() {
#if defined(ONELEARN_SPACE_HAVE_CUDA)
    if constexpr (is_device) require_cuda_device();
#endif
  }

  /// n values in the space's memory, zeros.
  template <class T>
  [[nodiscard]] buffer<T> allocate(std::size_t n) const {
    return allocated<T>(n, [n] { return buffer<T>(n); });
  }
  /// n values in the space's memory for a kernel's own intermediate values, which it writes
  /// before reading: on a device not initialised (no fill kernel); on the CPU systems a vector.
  template <class T>
  using scratch = typename traits::template scratch<T>;
  template <class T>
  [[nodiscard]] scratch<T> allocate_scratch(std::size_t n) const {
    return allocated<T>(n, [n] { return scratch<T>(n); });
  }
  template <class T>
  static T* data(buffer<T>& b) noexcept {
    return ::thrust::raw_pointer_cast(b.data());
  }
  template <class T>
  static const T* data(const buffer<T>& b) noexcept {
    return ::thrust::raw_pointer_cast(b.data());
  }
#if defined(ONELEARN_SPACE_HAVE_CUDA)
  template <class T>
  static T* data(const device_scratch<T>& b) noexcept {
    return b.get();
  }
#endif
  template <class T>
  void copy_to_space(const T* from, std::size_t n, T* to) const {
    if (n == 0) return;
    if constexpr (is_device) {
#if defined(ONELEARN_SPACE_HAVE_CUDA)
      // Large copies through pinned blocks filled on the host's threads (detail/cuda_staging.hpp).
      check_cuda(copy_host_to_device(from, n * sizeof(T), to),
                 "copying " + std::to_string(n * sizeof(T)) + " bytes to the device");
#endif
    } else {
      std::copy_n(from, n, to);
    }
  }
  template <class T>
  void copy_to_host(const T* from, std::size_t n, T* to) const {
    if (n == 0) return;
    if constexpr (is_device) {
#if defined(ONELEARN_SPACE_HAVE_CUDA)
      check_cuda(cudaMemcpy(to, from, n * sizeof(T), cudaMemcpyDeviceToHost),
                 "copying " + std::to_string(n * sizeof(T)) + " bytes from the device");
#endif
    } else {
      std::copy_n(from, n, to);
    }
  }

 private:
  /// make() under the typed errors: device_memory_error naming the bytes asked for.
  template <class T, class Make>
  static auto allocated(std::size_t n, const Make& make) {
    prepare();
    const auto fail = [n](const char* why) {
      const std::size_t bytes = n * sizeof(T);
      return device_memory_error("onelearn::space::" + std::string(system_name<System>) +
                                     ": could not allocate " + std::to_string(bytes) + " bytes (" +
                                     std::to_string(n) + " x " + type_name<T>() +
                                     ") in the space's memory: " + why,
                                 bytes);
    };
    if (n > static_cast<std::size_t>(PTRDIFF_MAX) / sizeof(T)) throw fail("larger than any memory");
    try {
      return make();
    } catch (const std::bad_alloc& e) {
      throw fail(e.what());
    } catch (const std::length_error& e) {
      throw fail(e.what());
    } catch (const ::thrust::system_error& e) {
      throw fail(e.what());
    }
  }
};
#else
template <class System, bool Available = false>
struct thrust_backend {};
#endif

}  // namespace detail

// The kernels on Thrust's system `System` (space::system::cpp, omp, tbb or cuda).
template <class System>
class thrust_space : public detail::thrust_backend<System> {
  static_assert(std::is_same_v<System, system::cpp> || std::is_same_v<System, system::omp> ||
                    std::is_same_v<System, system::tbb> || std::is_same_v<System, system::cuda>,
                "onelearn::space::thrust_space<System>: System must be space::system::cpp, omp, "
                "tbb or cuda");
  static_assert(detail::thrust_found<System>,
                "onelearn::space::thrust_*: this space needs Thrust, whose headers were not found "
                "(<thrust/version.h>): install Thrust (Debian: libthrust-dev; CUDA ships its own) "
                "and link onelearn::thrust_<system>");
  static_assert(!std::is_same_v<System, system::omp> || !detail::thrust_found<System> ||
                    detail::compiled_in<System>,
                "onelearn::space::thrust_omp needs OpenMP, which this file was compiled without: "
                "compile with -fopenmp (link onelearn::thrust_omp)");
  static_assert(!std::is_same_v<System, system::tbb> || !detail::thrust_found<System> ||
                    detail::compiled_in<System>,
                "onelearn::space::thrust_tbb needs oneTBB: link onelearn::thrust_tbb, which "
                "defines ONELEARN_THRUST_TBB and links TBB::tbb (Debian: libtbb-dev)");
  static_assert(!std::is_same_v<System, system::cuda> || !detail::thrust_found<System> ||
                    detail::compiled_in<System>,
                "onelearn::space::thrust_cuda needs CUDA: compile this file with nvcc (a .cu "
                "file; CMake: enable_language(CUDA), ONELEARN_CUDA=ON) and link "
                "onelearn::thrust_cuda");

 public:
  using system_type = System;
  static constexpr std::string_view name = detail::system_name<System>;
  /// The CPU systems compute on host memory: the caller's rows are read where they are.
  static constexpr bool host_accessible = !std::is_same_v<System, system::cuda>;
};

/// Gives the device memory that thrust_cuda's pool keeps for reuse, and no buffer holds, back to
/// the driver (the pool keeps what a fit freed, to hand it to the next call without cudaMalloc;
/// see detail/cuda_pool.hpp). Nothing to do without CUDA.
inline void release_cached_device_memory() {
#if defined(ONELEARN_SPACE_HAVE_CUDA)
  detail::device_pools::trim();
#endif
}

using thrust_cpp = thrust_space<system::cpp>;
using thrust_omp = thrust_space<system::omp>;
using thrust_tbb = thrust_space<system::tbb>;
using thrust_cuda = thrust_space<system::cuda>;

}  // namespace onelearn::space
