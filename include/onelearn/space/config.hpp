#pragma once
/**
 * \file
 * \brief What this translation unit can run, and the annotation of a kernel functor for CUDA.
 * \ingroup spaces
 *
 * What this translation unit can run, decided by the compiler and the headers it finds, and the
 * annotations a kernel functor needs to run on a CUDA device too. Private to space/.
 * - `ONELEARN_SPACE_HAVE_THRUST`: Thrust's headers are on the include path (Debian's
 *   libthrust-dev 1.17 with g++, or CUDA's CCCL with nvcc).
 * - `ONELEARN_SPACE_HAVE_OMP`: and the compiler runs OpenMP (`-fopenmp`,
 *   onelearn::thrust_omp).
 * - `ONELEARN_SPACE_HAVE_TBB`: and `ONELEARN_THRUST_TBB` is defined (onelearn::thrust_tbb
 *   defines it and links TBB::tbb: the headers alone would compile and then fail to link).
 * - `ONELEARN_SPACE_HAVE_CUDA`: and the file is compiled as CUDA (nvcc, `__CUDACC__`).
 *
 * Thrust picks a "device system" for `thrust::device_vector` when its first header is read,
 * and its default (CUDA) makes every header include cuda_runtime_api.h. onelearn names its
 * systems explicitly (`thrust::omp::par`, ...), so outside CUDA it sets the default to the
 * sequential C++ system unless the program chose one
 * (`-DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP` is kept). Include onelearn/space headers
 * before Thrust's, or set `THRUST_DEVICE_SYSTEM` yourself.
 */

#if defined(__has_include)
#if __has_include(<thrust/version.h>)
#define ONELEARN_SPACE_HAVE_THRUST 1
#endif
#endif

#if defined(ONELEARN_SPACE_HAVE_THRUST) && !defined(__CUDACC__) && !defined(THRUST_DEVICE_SYSTEM)
#define THRUST_DEVICE_SYSTEM THRUST_DEVICE_SYSTEM_CPP
#endif

#if defined(ONELEARN_SPACE_HAVE_THRUST) && defined(_OPENMP)
#define ONELEARN_SPACE_HAVE_OMP 1
#endif
#if defined(ONELEARN_SPACE_HAVE_THRUST) && defined(ONELEARN_THRUST_TBB)
#define ONELEARN_SPACE_HAVE_TBB 1
#endif
#if defined(ONELEARN_SPACE_HAVE_THRUST) && defined(__CUDACC__)
#define ONELEARN_SPACE_HAVE_CUDA 1
#endif

/// A function a kernel calls: compiled for the host, and for the device under nvcc.
#if defined(__CUDACC__)
#define ONELEARN_SPACE_HD __host__ __device__
#else
#define ONELEARN_SPACE_HD
#endif

/// Before an ONELEARN_SPACE_HD member of a template whose argument may be a host-only body (the
/// CPU Thrust systems' bodies run Eigen, and those instantiations only ever run on the host):
/// nvcc would otherwise warn (#20011) that a __host__ __device__ function calls a __host__ one.
#if defined(__CUDACC__)
#define ONELEARN_SPACE_HD_ANY_BODY _Pragma("nv_exec_check_disable")
#else
#define ONELEARN_SPACE_HD_ANY_BODY
#endif
