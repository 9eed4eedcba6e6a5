#pragma once
/**
 * \file
 * \ingroup policies
 *
 * exec::ucx's class (the documentation is in the entry header, onelearn/exec/ucx.hpp).
 */

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/exec/collectives.hpp"
#include "onelearn/exec/mpi/communicator.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/exec/ucx/algorithms.hpp"
#include "onelearn/exec/ucx/transport.hpp"

namespace onelearn::exec {

class ucx : public collectives<ucx> {
 public:
  static constexpr bool is_distributed = true;
  /// Non-blocking collectives complete when they are started (see the entry header).
  using request = ready_request;

  /// Collective over `comm` (required: onelearn never assumes MPI_COMM_WORLD). MPI must
  /// already be initialized.
  explicit ucx(MPI_Comm comm, const ucx_options& options = {})
      : transport_(std::make_shared<detail::ucx_transport>(comm, options)),
        comm_(duplicate(comm)),
        rank_(transport_->rank()),
        size_(transport_->size()) {}

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] const ucx_options& options() const noexcept { return transport_->options(); }
  /// Whether all-reduces go through shared memory (every rank on one host, and
  /// options().shared_memory_bytes > 0); the same on every rank.
  [[nodiscard]] bool uses_shared_memory() const noexcept { return transport_->shared_segments() != nullptr; }

  /// Element-wise reduction of `values` over all ranks, in place; every rank gets the same bits.
  template <collective_value T, std::size_t N>
  void allreduce(std::span<T, N> values, reduce_op op) const {
    detail::ucx_allreduce(*transport_, values.data(), values.size(), op);
  }

  /// Copies `values` from `root` to every rank. All ranks pass spans of the same size.
  template <broadcast_value T, std::size_t N>
  void broadcast(std::span<T, N> values, int root = 0) const {
    detail::ucx_broadcast(*transport_, reinterpret_cast<std::byte*>(values.data()), values.size_bytes(), root);
  }

  /// The concatenation of every rank's `values`, in rank order, on every rank.
  template <collective_value T>
  [[nodiscard]] std::vector<T> allgatherv(std::span<const T> values) const {
    auto bytes = detail::ucx_allgatherv(*transport_, reinterpret_cast<const std::byte*>(values.data()),
                                        values.size_bytes(), "allgatherv")
                     .first;
    std::vector<T> gathered(bytes.size() / sizeof(T));
    if (!bytes.empty()) std::memcpy(gathered.data(), bytes.data(), bytes.size());
    return gathered;
  }

  /// Piece r of `values` (counts[r] values, after the pieces for ranks 0..r-1) to rank r;
  /// returns the pieces every rank sent to this one, in rank order. Counts that do not cut a
  /// rank's values into one piece per rank: invalid_argument on every rank.
  template <collective_value T>
  [[nodiscard]] std::vector<T> alltoallv(std::span<const T> values, std::span<const std::int64_t> counts) const {
    // Malformed counts are refused on every rank, after the count exchange (ucx_alltoallv).
    std::string refusal;
    try {
      static_cast<void>(piece(counts, values.size(), "alltoallv"));
    } catch (const invalid_argument& refused) {
      refusal = refused.what();
    }
    std::vector<std::size_t> send_bytes(static_cast<std::size_t>(size_), 0);
    if (refusal.empty()) {
      for (std::size_t q = 0; q < counts.size(); ++q) send_bytes[q] = static_cast<std::size_t>(counts[q]) * sizeof(T);
    }
    const auto bytes = detail::ucx_alltoallv(*transport_, reinterpret_cast<const std::byte*>(values.data()),
                                             send_bytes, refusal, "alltoallv");
    std::vector<T> received(bytes.size() / sizeof(T));
    if (!bytes.empty()) std::memcpy(received.data(), bytes.data(), bytes.size());
    return received;
  }

  void barrier() const { detail::ucx_barrier(*transport_); }

  /// allreduce, complete when it returns.
  template <collective_value T, std::size_t N>
  request iallreduce(std::span<T, N> values, reduce_op op) const {
    allreduce(values, op);
    return {};
  }

  /// An all-reduce of `values` in place (it holds the whole result afterwards), then this
  /// rank's piece copied into `mine`; complete when it returns.
  template <collective_value T>
  request ireduce_scatter(std::span<T> values, std::span<T> mine, std::span<const std::int64_t> counts,
                          reduce_op op) const {
    const auto [offset, count] = piece(counts, values.size(), "ireduce_scatter");
    if (mine.size() < count) {
      throw invalid_argument("exec::ucx::ireduce_scatter: expected room for this rank's " + std::to_string(count) +
                             " values, found " + std::to_string(mine.size()));
    }
    allreduce(values, op);
    std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(offset), count, mine.begin());
    return {};
  }

  /// An allgatherv of this rank's piece of `buffer` into every rank's buffer; complete when it
  /// returns.
  template <collective_value T>
  request iallgatherv_in_place(std::span<T> buffer, std::span<const std::int64_t> counts) const {
    const auto [offset, count] = piece(counts, buffer.size(), "iallgatherv_in_place");
    const std::vector<T> all = allgatherv(std::span<const T>(buffer.subspan(offset, count)));
    if (all.size() != buffer.size()) {
      throw distributed_error("exec::ucx: rank " + std::to_string(rank_) +
                              ": iallgatherv_in_place: expected the pieces to gather to " +
                              std::to_string(buffer.size()) + " values, found " + std::to_string(all.size()));
    }
    std::copy(all.begin(), all.end(), buffer.begin());
    return {};
  }

  /// Nothing to wait for: every request is complete.
  void wait_all(std::span<request> /*requests*/) const noexcept {}

  /// A policy over the ranks that pass the same `color` (>= 0), ordered by `key` then rank:
  /// MPI_Comm_split of this policy's duplicate of its communicator, and a new exec::ucx on the
  /// result (collective over this policy's ranks; a new UCP context and worker), with the same
  /// options. It owns the sub-communicator: every copy must be gone before MPI_Finalize.
  [[nodiscard]] ucx split(int color, int key) const {
    propagate_errors([&] {
      if (color < 0) throw invalid_argument("exec::ucx::split: expected a color >= 0, found " + std::to_string(color));
    });
    MPI_Comm sub = MPI_COMM_NULL;
    detail::check_mpi(MPI_Comm_split(*comm_, color, key, &sub), "MPI_Comm_split");
    return ucx(detail::own_communicator(sub), options());
  }

 private:
  /// A policy on a communicator it owns (split).
  ucx(std::shared_ptr<const MPI_Comm> owner, const ucx_options& options)
      : transport_(std::make_shared<detail::ucx_transport>(*owner, options)),
        comm_(std::move(owner)),
        rank_(transport_->rank()),
        size_(transport_->size()) {}

  static std::shared_ptr<const MPI_Comm> duplicate(MPI_Comm comm) {
    MPI_Comm dup = MPI_COMM_NULL;
    detail::check_mpi(MPI_Comm_dup(comm, &dup), "MPI_Comm_dup");
    return detail::own_communicator(dup);
  }

  /// This rank's piece of a buffer of `total` values cut by `counts`: (offset, count).
  [[nodiscard]] std::pair<std::size_t, std::size_t> piece(std::span<const std::int64_t> counts, std::size_t total,
                                                          const char* operation) const {
    if (counts.size() != static_cast<std::size_t>(size_)) {
      throw invalid_argument(std::string("exec::ucx::") + operation + ": expected one count per rank (" +
                             std::to_string(size_) + "), found " + std::to_string(counts.size()));
    }
    std::size_t sum = 0;
    std::size_t offset = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      if (counts[r] < 0) {
        throw invalid_argument(std::string("exec::ucx::") + operation + ": expected counts >= 0, found " +
                               std::to_string(counts[r]) + " at rank " + std::to_string(r));
      }
      if (r == static_cast<std::size_t>(rank_)) offset = sum;
      sum += static_cast<std::size_t>(counts[r]);
    }
    if (sum != total) {
      throw invalid_argument(std::string("exec::ucx::") + operation + ": expected counts summing to the buffer's " +
                             std::to_string(total) + " values, found " + std::to_string(sum));
    }
    return {offset, static_cast<std::size_t>(counts[static_cast<std::size_t>(rank_)])};
  }

  // transport_ first: its constructor checks MPI and `comm` (with clear messages) before the
  // duplicate is made; the transport does not use the communicator after construction.
  std::shared_ptr<detail::ucx_transport> transport_;
  std::shared_ptr<const MPI_Comm> comm_;  ///< the duplicate (or the split result) split works on
  int rank_ = 0;
  int size_ = 1;
};

static_assert(ExecutionPolicy<ucx>);

}  // namespace onelearn::exec
