#pragma once
/**
 * \file
 * \ingroup policies
 *
 * What exec::mpi and exec::ucx share about MPI: the datatypes and operations of onelearn's
 * element types, the error check of MPI calls, and a communicator owned by the policies that
 * share it (exec::mpi::split, exec::ucx's duplicate of the communicator it was built on).
 */

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "onelearn/core/errors.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::exec::detail {

template <class T>
MPI_Datatype mpi_type() {
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  if constexpr (std::is_same_v<T, std::int64_t>) return MPI_INT64_T;
  if constexpr (std::is_same_v<T, char>) return MPI_CHAR;
}

inline MPI_Op mpi_op(reduce_op op) {
  switch (op) {
    case reduce_op::min: return MPI_MIN;
    case reduce_op::max: return MPI_MAX;
    case reduce_op::sum: break;
  }
  return MPI_SUM;
}

/// Communicators set to MPI_ERRORS_RETURN report failures here; with the default
/// MPI_ERRORS_ARE_FATAL the MPI library aborts before we see a code.
inline void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw distributed_error(std::string("exec::mpi: ") + call + " failed: " +
                          std::string(text, static_cast<std::size_t>(length)));
}

/// MPI counts are `int`; larger buffers go in chunks.
constexpr std::size_t max_chunk = static_cast<std::size_t>(INT_MAX);

/// Takes ownership of `comm`: MPI_Comm_free when the last copy of the pointer goes, unless MPI
/// is already finalized (then nothing can be freed; that is why the policies holding one must
/// all be gone before MPI_Finalize).
inline std::shared_ptr<const MPI_Comm> own_communicator(MPI_Comm comm) {
  return std::shared_ptr<const MPI_Comm>(new MPI_Comm(comm), [](const MPI_Comm* owned) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    MPI_Comm handle = *owned;
    if (!finalized && handle != MPI_COMM_NULL) MPI_Comm_free(&handle);
    delete owned;
  });
}

}  // namespace onelearn::exec::detail
