# The compute spaces on Thrust (include/onelearn/space/): one optional target per Thrust system,
# written as lines of onelearnComponents.cmake (which includes this file), so that each is made,
# installed and answered by find_package(onelearn COMPONENTS thrust_omp ...) like onelearn::openmp.
# A target exists only when its headers (and libraries) are found.
#
#   onelearn::thrust_cpp   space::thrust_cpp: Thrust's headers only (Debian: libthrust-dev)
#   onelearn::thrust_omp   space::thrust_omp: Thrust + OpenMP (builds on onelearn::openmp)
#   onelearn::thrust_tbb   space::thrust_tbb: Thrust + oneTBB (TBB::tbb; defines ONELEARN_THRUST_TBB,
#                          which space/config.hpp requires: the headers alone would link-fail)
#   onelearn::thrust_cuda  space::thrust_cuda: the CUDA toolkit's Thrust (CCCL) and cuBLAS. The
#                          files that use the space must be CUDA sources (nvcc): enable the CUDA
#                          language in the consuming project; CMake then links the CUDA runtime.
#
# Debian's Thrust lives in /usr/include (CMake drops implicit include directories from the
# targets); CUDA's Thrust comes with nvcc, which puts its own include/cccl first.
onelearn_component(thrust_cpp
  FIND [[find_path(ONELEARN_THRUST_INCLUDE_DIR thrust/version.h)
         set(ONELEARN_THRUST_FOUND OFF)
         if(ONELEARN_THRUST_INCLUDE_DIR)
           set(ONELEARN_THRUST_FOUND ON)
         endif()]] FOUND ONELEARN_THRUST_FOUND
  INCLUDES ONELEARN_THRUST_INCLUDE_DIR)
onelearn_component(thrust_omp NEEDS openmp thrust_cpp
  FIND [[set(ONELEARN_THRUST_OMP_FOUND ON)]] FOUND ONELEARN_THRUST_OMP_FOUND)
onelearn_component(thrust_tbb NEEDS thrust_cpp
  FIND [[find_package(TBB QUIET CONFIG)]] FOUND TBB_FOUND
  LINKS TBB::tbb DEFINITIONS ONELEARN_THRUST_TBB)
# The FIND code below must not contain variable references: onelearn_component is a macro, and
# its arguments are expanded once more when it forwards them. The lookup that needs variables
# is this function (it runs inside onelearn_find_dependencies' function, like the others).
function(onelearn_find_cuda_thrust)
  set(ONELEARN_THRUST_CUDA_FOUND OFF PARENT_SCOPE)
  find_package(CUDAToolkit QUIET)
  if(NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cublas)
    return()
  endif()
  find_path(ONELEARN_CUDA_THRUST_DIR thrust/version.h
            PATHS ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES cccl NO_DEFAULT_PATH)
  if(ONELEARN_CUDA_THRUST_DIR)
    set(ONELEARN_THRUST_CUDA_FOUND ON PARENT_SCOPE)
  endif()
endfunction()
onelearn_component(thrust_cuda
  FIND [[onelearn_find_cuda_thrust()]] FOUND ONELEARN_THRUST_CUDA_FOUND
  LINKS CUDA::cublas)
