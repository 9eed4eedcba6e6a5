# onelearn's optional components, written once: each line below is one target onelearn::<name>.
# The build (CMakeLists.txt) makes the targets from it, the install rules export them, and the
# installed package (onelearnConfig.cmake) looks their dependencies up again and answers
# find_package(onelearn COMPONENTS ...) from it.
#
#   onelearn_component(<name> FIND <CMake code that looks the dependency up>
#                             FOUND <the variable that code sets true when it is there>
#                             LINKS <what onelearn::<name> links>
#                             [NEEDS <components it builds on>] [DEFINITIONS <compile definitions>]
#                             [INCLUDES <variables naming extra include directories>])
#
# A new execution backend (say exec::nccl) is a folder include/onelearn/exec/nccl/ plus one line
# here. The FIND code runs inside a function (onelearnDependencies.cmake), so the variables it
# sets never reach the project that calls find_package(onelearn).

set(ONELEARN_ALL_COMPONENTS "")
macro(onelearn_component name)
  cmake_parse_arguments(_onelearn_c "" "FIND;FOUND" "LINKS;NEEDS;DEFINITIONS;INCLUDES" ${ARGN})
  list(APPEND ONELEARN_ALL_COMPONENTS ${name})
  set(ONELEARN_COMPONENT_${name}_FIND "${_onelearn_c_FIND}")
  set(ONELEARN_COMPONENT_${name}_FOUND "${_onelearn_c_FOUND}")
  set(ONELEARN_COMPONENT_${name}_LINKS "${_onelearn_c_LINKS}")
  set(ONELEARN_COMPONENT_${name}_NEEDS "${_onelearn_c_NEEDS}")
  set(ONELEARN_COMPONENT_${name}_DEFINITIONS "${_onelearn_c_DEFINITIONS}")
  set(ONELEARN_COMPONENT_${name}_INCLUDES "${_onelearn_c_INCLUDES}")
endmacro()

# The kernels run their row chunks on threads (core/detail/parallel.hpp); Eigen's products too.
onelearn_component(openmp
  FIND [[find_package(OpenMP QUIET COMPONENTS CXX)]] FOUND OpenMP_CXX_FOUND
  LINKS OpenMP::OpenMP_CXX)
# exec::mpi. Only MPI's C API is used: the definitions keep OpenMPI's and MPICH's deprecated C++
# bindings out (they add warnings and link time), set on this target, not in the caller's
# variables.
onelearn_component(mpi
  FIND [[find_package(MPI QUIET COMPONENTS CXX)]] FOUND MPI_CXX_FOUND
  LINKS MPI::MPI_CXX DEFINITIONS OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX)
# exec::ucx. UCX workers exchange their addresses through MPI, so it builds on mpi.
onelearn_component(ucx NEEDS mpi
  FIND [[find_package(ucx QUIET)]] FOUND ucx_FOUND
  LINKS ucx::ucp ucx::ucs)
# onelearn/onnx/. Debian's ONNXConfig.cmake does not look for protobuf itself, yet its onnx_proto
# target links protobuf::libprotobuf: protobuf first.
onelearn_component(onnx
  FIND [[find_package(Protobuf QUIET)
         if(Protobuf_FOUND)
           find_package(ONNX QUIET)
         endif()]] FOUND ONNX_FOUND
  LINKS onnx onnx_proto)
# Opt-in: the networks' GEMMs (nn/detail/gemm.hpp) call cblas_sgemm/dgemm instead of Eigen's
# kernel. The caller's BLA_VENDOR is respected; without one, OpenBLAS (whose threads
# OPENBLAS_NUM_THREADS sets).
onelearn_component(blas
  FIND [[if(NOT DEFINED BLA_VENDOR)
           set(BLA_VENDOR OpenBLAS)
         endif()
         find_package(BLAS QUIET)
         find_path(ONELEARN_CBLAS_INCLUDE_DIR cblas.h)
         set(ONELEARN_CBLAS_FOUND OFF)
         if(BLAS_FOUND AND ONELEARN_CBLAS_INCLUDE_DIR)
           set(ONELEARN_CBLAS_FOUND ON)
         endif()]] FOUND ONELEARN_CBLAS_FOUND
  LINKS BLAS::BLAS DEFINITIONS ONELEARN_USE_BLAS INCLUDES ONELEARN_CBLAS_INCLUDE_DIR)
# The compute spaces on Thrust: thrust_cpp, thrust_omp, thrust_tbb, thrust_cuda.
include("${CMAKE_CURRENT_LIST_DIR}/onelearnThrust.cmake")
