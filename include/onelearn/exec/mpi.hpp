#pragma once
// exec::mpi: data-parallel across the ranks of an MPI communicator the application owns.
//
// onelearn never calls MPI_Init or MPI_Finalize and never assumes MPI_COMM_WORLD: an HPC code
// passes the communicator its ranks already train on. The communicator is used as given, not
// duplicated: duplicating is collective and the duplicate would have to be freed before
// MPI_Finalize, which a library object cannot guarantee. Only collectives are issued, so they
// cannot be confused with the application's point-to-point messages.

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::exec {

namespace detail {

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

}  // namespace detail

class mpi {
 public:
  static constexpr bool is_distributed = true;

  /// Uses `comm` (default MPI_COMM_WORLD) as given. MPI must already be initialized.
  explicit mpi(MPI_Comm comm = MPI_COMM_WORLD) : comm_(comm) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!initialized || finalized) {
      throw distributed_error(
          "exec::mpi: expected an initialized MPI (the application calls MPI_Init before "
          "creating exec::mpi; onelearn never initializes MPI itself), found MPI " +
          std::string(finalized ? "already finalized" : "not initialized"));
    }
    if (comm_ == MPI_COMM_NULL) {
      throw distributed_error("exec::mpi: expected a communicator this process belongs to, found MPI_COMM_NULL");
    }
    detail::check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    detail::check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] MPI_Comm comm() const noexcept { return comm_; }

  /// Element-wise reduction of `values` over all ranks, in place; every rank gets the result.
  template <collective_value T, std::size_t N>
  void allreduce(std::span<T, N> values, reduce_op op) const {
    for (std::size_t begin = 0; begin < values.size(); begin += detail::max_chunk) {
      const auto count = static_cast<int>(std::min(detail::max_chunk, values.size() - begin));
      detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data() + begin, count,
                                      detail::mpi_type<T>(), detail::mpi_op(op), comm_),
                        "MPI_Allreduce");
    }
  }

  /// Copies `values` from `root` to every rank. All ranks pass spans of the same size.
  template <collective_value T, std::size_t N>
  void broadcast(std::span<T, N> values, int root = 0) const {
    broadcast_raw(values, root);
  }

  /// The concatenation of every rank's `values`, in rank order, on every rank.
  template <collective_value T>
  [[nodiscard]] std::vector<T> allgatherv(std::span<const T> values) const {
    return gather_with_counts(values).first;
  }

  void barrier() const { detail::check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }

  /// Throws shape_error on every rank, with every rank's shape in the message, unless all
  /// ranks pass the same `shape`. Never hangs: each rank makes the same two collective calls
  /// whatever it holds.
  void check_same_shape(std::string_view what, std::span<const std::int64_t> shape) const {
    const auto [shapes, counts] = gather_with_counts(shape);
    bool same = true;
    std::size_t offset = 0;
    for (int r = 0; r < size_; ++r) {
      const auto n = static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]);
      same = same && std::equal(shapes.begin() + static_cast<std::ptrdiff_t>(offset),
                                shapes.begin() + static_cast<std::ptrdiff_t>(offset + n),
                                shape.begin(), shape.end());
      offset += n;
    }
    if (same) return;
    std::string message = "ranks disagree on " + std::string(what) + ": expected the same on every rank, found";
    offset = 0;
    for (int r = 0; r < size_; ++r) {
      const auto n = static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]);
      message += (r == 0 ? " rank 0 (" : ", rank " + std::to_string(r) + " (");
      for (std::size_t i = 0; i < n; ++i) {
        message += (i == 0 ? "" : ", ") + std::to_string(shapes[offset + i]);
      }
      message += ")";
      offset += n;
    }
    throw shape_error(message);
  }

  /// Runs `local_checks` (input validation) on every rank. If it throws on any rank, every rank
  /// throws the same error type with the first failing rank's message, instead of the other
  /// ranks waiting forever in the algorithm's next collective.
  template <class F>
  void propagate_errors(F&& local_checks) const {
    error_code code = error_code::runtime;
    std::string message;
    bool failed = false;
    try {
      std::forward<F>(local_checks)();
    } catch (const std::exception& e) {
      failed = true;
      message = e.what();
      if (const auto* ours = dynamic_cast<const error*>(&e)) code = ours->code();
    } catch (...) {  // anything at all: letting it escape on one rank would hang the others
      failed = true;
      message = "an exception not derived from std::exception";
    }
    std::int64_t first_failed = failed ? rank_ : size_;
    allreduce(std::span(&first_failed, 1), reduce_op::min);
    if (first_failed == size_) return;

    const int root = static_cast<int>(first_failed);
    std::int64_t header[2] = {static_cast<std::int64_t>(code),
                              static_cast<std::int64_t>(message.size())};
    broadcast(std::span(header), root);
    message.resize(static_cast<std::size_t>(header[1]));
    broadcast_raw(std::span(message.data(), message.size()), root);
    throw_error(static_cast<error_code>(header[0]), "on rank " + std::to_string(root) + ": " + message);
  }

 private:
  template <class T, std::size_t N>
  void broadcast_raw(std::span<T, N> values, int root) const {
    for (std::size_t begin = 0; begin < values.size(); begin += detail::max_chunk) {
      const auto count = static_cast<int>(std::min(detail::max_chunk, values.size() - begin));
      detail::check_mpi(
          MPI_Bcast(values.data() + begin, count, detail::mpi_type<T>(), root, comm_),
          "MPI_Bcast");
    }
  }

  /// allgatherv that also returns how many values each rank contributed.
  template <class T>
  std::pair<std::vector<T>, std::vector<std::int64_t>> gather_with_counts(
      std::span<const T> values) const {
    const auto ranks = static_cast<std::size_t>(size_);
    std::vector<std::int64_t> counts(ranks);
    const auto mine = static_cast<std::int64_t>(values.size());
    detail::check_mpi(MPI_Allgather(&mine, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm_),
                      "MPI_Allgather");
    std::vector<int> int_counts(ranks);
    std::vector<int> displacements(ranks);
    std::int64_t total = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
      if (total + counts[r] > INT_MAX) {
        throw distributed_error("exec::mpi::allgatherv: expected at most INT_MAX values in all, found more");
      }
      int_counts[r] = static_cast<int>(counts[r]);
      displacements[r] = static_cast<int>(total);
      total += counts[r];
    }
    std::vector<T> gathered(static_cast<std::size_t>(total));
    detail::check_mpi(MPI_Allgatherv(values.data(), static_cast<int>(mine), detail::mpi_type<T>(),
                                     gathered.data(), int_counts.data(), displacements.data(),
                                     detail::mpi_type<T>(), comm_),
                      "MPI_Allgatherv");
    return {std::move(gathered), std::move(counts)};
  }

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

static_assert(ExecutionPolicy<mpi>);

}  // namespace onelearn::exec
