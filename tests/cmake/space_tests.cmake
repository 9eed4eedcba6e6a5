# The compute spaces' tests (include/onelearn/space/).
#
#   unit/test_spaces.cpp   in onelearn_tests (the unit/*.cpp glob): the CPU Thrust systems found
#                          here (thrust_cpp, thrust_omp, thrust_tbb) against space::host
#   cuda/test_spaces_cuda.cu  (ONELEARN_CUDA=ON) onelearn_cuda_tests, built by nvcc: thrust_cuda
#                          against space::host on the device (ctest label: cuda); without a
#                          device it checks the no-device error only. scripts/test-gpu.sh
#                          configures, builds and runs it.
foreach(system IN ITEMS thrust_cpp thrust_omp thrust_tbb)
  if(TARGET onelearn::${system})
    target_link_libraries(onelearn_tests PRIVATE onelearn::${system})
  endif()
endforeach()

if(ONELEARN_CUDA)
  if(NOT TARGET onelearn::thrust_cuda)
    message(FATAL_ERROR "ONELEARN_CUDA=ON: expected the CUDA toolkit with Thrust (include/cccl) "
                        "and cuBLAS, found none (set CUDAToolkit_ROOT or CMAKE_CUDA_COMPILER)")
  endif()
  add_executable(onelearn_cuda_tests "${CMAKE_CURRENT_SOURCE_DIR}/cuda/test_spaces_cuda.cu")
  target_link_libraries(onelearn_cuda_tests PRIVATE onelearn::thrust_cuda doctest::doctest)
  target_include_directories(onelearn_cuda_tests PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
  # CMake 3.25 knows no CUDA20 dialect for nvcc (CUDA_STANDARD 20 fails to generate): the flag
  # by hand. nvcc 13 with g++ 12 as the host compiler takes C++20.
  target_compile_options(onelearn_cuda_tests PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-std=c++20>)
  if(ONELEARN_HAVE_OPENMP)
    # The host kernels it compares with run on OpenMP threads, as in onelearn_tests.
    target_link_libraries(onelearn_cuda_tests PRIVATE OpenMP::OpenMP_CXX)
    target_compile_options(onelearn_cuda_tests PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fopenmp>)
  endif()
  # Host warnings as in onelearn_warnings; nvcc's own notes on Eigen's __host__ __device__
  # defaulted members (20012), constexpr calls (20015) and its triangular solver calling host
  # code (20014, from Ridge's Cholesky) are Eigen's, not onelearn's.
  target_compile_options(onelearn_cuda_tests PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra -diag-suppress=20012,20014,20015>)
  add_test(NAME cuda COMMAND onelearn_cuda_tests)
  set_tests_properties(cuda PROPERTIES LABELS cuda TIMEOUT 600)
endif()
