# The dependencies of onelearn's targets. Included by the build and, after install, by
# onelearnConfig.cmake, so both resolve them the same way.
#
# Required: Eigen 3.4, xtensor, Boost >= 1.81 headers (Boost.PFR; 1.74 has none).
# Optional, each enabling one target: OpenMP (onelearn::openmp, threads in the kernels),
# MPI (onelearn::mpi), UCX (onelearn::ucx, needs MPI), ONNX protobuf (onelearn::onnx), a CBLAS
# such as OpenBLAS (onelearn::blas, the networks' GEMMs).

include(CMakeFindDependencyMacro)

# Only the C API of MPI is used; OpenMPI's deprecated C++ bindings add warnings and link time.
set(MPI_CXX_SKIP_MPICXX ON CACHE BOOL "Skip the deprecated MPI C++ bindings")

macro(onelearn_find_required name)
  if(CMAKE_FIND_PACKAGE_NAME)  # inside onelearnConfig.cmake: fail the find_package politely
    find_dependency(${name} ${ARGN})
  else()
    find_package(${name} ${ARGN} REQUIRED)
  endif()
endmacro()

onelearn_find_required(Eigen3 3.4 NO_MODULE)
onelearn_find_required(xtensor)
onelearn_find_required(Boost 1.81 CONFIG)

find_package(OpenMP QUIET COMPONENTS CXX)
set(ONELEARN_HAVE_OPENMP ${OpenMP_CXX_FOUND})

find_package(MPI QUIET COMPONENTS CXX)
set(ONELEARN_HAVE_MPI ${MPI_CXX_FOUND})

set(ONELEARN_HAVE_UCX OFF)
if(ONELEARN_HAVE_MPI)
  find_package(ucx QUIET)
  set(ONELEARN_HAVE_UCX ${ucx_FOUND})
endif()

# A CBLAS for the networks' matrix products (onelearn::blas; Debian: libopenblas-dev).
set(BLA_VENDOR OpenBLAS)
find_package(BLAS QUIET)
find_path(ONELEARN_CBLAS_INCLUDE_DIR cblas.h)
set(ONELEARN_HAVE_BLAS OFF)
if(BLAS_FOUND AND ONELEARN_CBLAS_INCLUDE_DIR)
  set(ONELEARN_HAVE_BLAS ON)
endif()

# Debian's ONNXConfig.cmake does not look for protobuf itself, yet its onnx_proto target links
# protobuf::libprotobuf: find protobuf first.
set(ONELEARN_HAVE_ONNX OFF)
find_package(Protobuf QUIET)
if(Protobuf_FOUND)
  find_package(ONNX QUIET)
  set(ONELEARN_HAVE_ONNX ${ONNX_FOUND})
endif()
