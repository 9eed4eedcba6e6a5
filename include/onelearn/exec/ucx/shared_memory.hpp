#pragma once
/**
 * \file
 * \ingroup policies
 *
 * exec::ucx's shared-memory segments: when every rank is on one host, each rank maps a staging
 * segment through UCX (ucp_mem_map with UCP_MEM_MAP_ALLOCATE, which places it in posix/sysv
 * shared memory) and the others map it into their own address space (ucp_rkey_ptr). The
 * all-reduce then moves data with plain loads and stores: no message, no system call, no
 * rendezvous. Why: on one host the tagged ring pays, per chunk, a process_vm_readv into a
 * scratch buffer plus the reduction, both on the rank's own core, and that bounded a 4 MiB
 * all-reduce at 1.7x MPI_Allreduce. Here each rank reduces its part of the data reading the
 * peers' staged copies in place, and the peers copy the result straight out of its segment.
 *
 * One round of the all-reduce moves one block of at most `capacity` bytes (a message larger
 * than that takes several rounds; each round is self-contained). With p ranks, the block cut
 * into p parts, rank r:
 * \code{.unparsed}
 *   1. waits until every peer has released the previous round (so its segment is free), copies
 *      the parts of its data that other ranks reduce into its segment, and posts `arrived`;
 *   2. waits for every peer's `arrived`, reduces its own part in rank order (its own data
 *      read from the caller's buffer, the peers' from their segments), writing the result both
 *      to the caller's buffer and to its segment, and posts `reduced`;
 *   3. waits for each peer's `reduced`, copies that peer's part of the result out of the
 *      peer's segment, and posts `released`.
 * \endcode
 * Per rank that is (p-1)/p of the block copied in, 1/p reduced, (p-1)/p copied out: about two
 * passes over the data, against the ring's two transfers plus their staging copies.
 *
 * Every part is reduced once, on one rank, and only copied afterwards, so all ranks get the
 * same bits. The first round also publishes each rank's element count; ranks that disagree all
 * see it (each compares every peer's count with its own) and all throw.
 *
 * The counters are 64-bit generation numbers, one cache line each, written with release and
 * read with acquire ordering: the data a rank wrote before posting is visible to a peer that
 * has seen the post.
 */

#include <mpi.h>
#include <ucp/api/ucp.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace onelearn::exec::detail {

/// The counters at the start of every segment; each on its own cache line, so that a rank
/// spinning on one does not slow down the owner's writes to another.
struct ucx_segment_header {
  alignas(64) std::atomic<std::uint64_t> arrived{0};
  alignas(64) std::atomic<std::uint64_t> reduced{0};
  alignas(64) std::atomic<std::uint64_t> released{0};
  alignas(64) std::atomic<std::uint64_t> count{0};  ///< element count of the current collective
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "counters shared between processes must be lock-free atomics");

/// This rank's segment and every peer's, mapped into this process.
class ucx_shared_segments {
 public:
  /// Offset of the data area in a segment: the header, rounded to a page's first 4 cache lines.
  static constexpr std::size_t data_offset = 256;
  static_assert(sizeof(ucx_segment_header) <= data_offset);

  /// Collective over `comm`. Maps a segment of `capacity` data bytes and every peer's. Returns
  /// null on every rank unless every rank could map every peer's segment (ranks on several
  /// hosts, or a UCX without shared-memory transports): the caller then uses messages.
  static std::unique_ptr<ucx_shared_segments> map_all(ucp_context_h context, const std::vector<ucp_ep_h>& endpoints,
                                                      int rank, int size, MPI_Comm comm, std::size_t capacity) {
    auto segments = std::unique_ptr<ucx_shared_segments>(new ucx_shared_segments(context, rank, size));
    int mapped_everywhere = segments->map_own(capacity) ? 1 : 0;
    // The exchange happens even after a local failure, so that every rank takes the same path.
    const gathered_keys keys = allgather_keys(segments->packed_key_, comm);
    const std::uint64_t my_base = reinterpret_cast<std::uintptr_t>(segments->own_);
    std::vector<std::uint64_t> bases(static_cast<std::size_t>(size));
    MPI_Allgather(&my_base, 1, MPI_UINT64_T, bases.data(), 1, MPI_UINT64_T, comm);
    MPI_Allreduce(MPI_IN_PLACE, &mapped_everywhere, 1, MPI_INT, MPI_MIN, comm);
    if (mapped_everywhere) mapped_everywhere = segments->attach_peers(endpoints, keys, bases) ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &mapped_everywhere, 1, MPI_INT, MPI_MIN, comm);
    if (!mapped_everywhere) return nullptr;
    segments->capacity_ = capacity;
    return segments;
  }

  ucx_shared_segments(const ucx_shared_segments&) = delete;
  ucx_shared_segments& operator=(const ucx_shared_segments&) = delete;
  ~ucx_shared_segments() {
    // A peer still reading our segment keeps its own attachment: the shared memory outlives
    // this unmap until its last mapping goes.
    for (ucp_rkey_h key : remote_keys_) {
      if (key != nullptr) ucp_rkey_destroy(key);
    }
    if (packed_key_buffer_ != nullptr) ucp_rkey_buffer_release(packed_key_buffer_);
    if (memory_ != nullptr) ucp_mem_unmap(context_, memory_);
  }

  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] ucx_segment_header& header(int rank) const noexcept {
    return *std::launder(reinterpret_cast<ucx_segment_header*>(segments_[static_cast<std::size_t>(rank)]));
  }
  [[nodiscard]] std::byte* data(int rank) const noexcept {
    return segments_[static_cast<std::size_t>(rank)] + data_offset;
  }
  /// The generation of the next round; every rank counts rounds in the same order.
  std::uint64_t next_round() noexcept { return ++round_; }

 private:
  ucx_shared_segments(ucp_context_h context, int rank, int size)
      : context_(context), rank_(rank), segments_(static_cast<std::size_t>(size), nullptr),
        remote_keys_(static_cast<std::size_t>(size), nullptr) {}

  /// Every rank's packed key, and where each starts in the concatenation (size + 1 offsets).
  struct gathered_keys {
    std::vector<char> bytes;
    std::vector<int> offsets;
  };

  static gathered_keys allgather_keys(const std::vector<char>& mine, MPI_Comm comm) {
    int size = 0;
    MPI_Comm_size(comm, &size);
    const int length = static_cast<int>(mine.size());
    std::vector<int> lengths(static_cast<std::size_t>(size));
    MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm);
    gathered_keys keys{{}, std::vector<int>(static_cast<std::size_t>(size) + 1, 0)};
    for (std::size_t r = 0; r < lengths.size(); ++r) keys.offsets[r + 1] = keys.offsets[r] + lengths[r];
    keys.bytes.resize(static_cast<std::size_t>(keys.offsets.back()));
    MPI_Allgatherv(mine.data(), length, MPI_BYTE, keys.bytes.data(), lengths.data(), keys.offsets.data(),
                   MPI_BYTE, comm);
    return keys;
  }

  bool map_own(std::size_t capacity) {
    ucp_mem_map_params_t params{};
    params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    params.address = nullptr;
    params.length = data_offset + capacity;
    params.flags = UCP_MEM_MAP_ALLOCATE;
    if (ucp_mem_map(context_, &params, &memory_) != UCS_OK) {
      memory_ = nullptr;
      return false;
    }
    ucp_mem_attr_t attributes{};
    attributes.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
    if (ucp_mem_query(memory_, &attributes) != UCS_OK) return false;
    own_ = static_cast<std::byte*>(attributes.address);
    new (own_) ucx_segment_header{};  // zero generations before any peer can look
    segments_[static_cast<std::size_t>(rank_)] = own_;
    std::size_t length = 0;
    if (ucp_rkey_pack(context_, memory_, &packed_key_buffer_, &length) != UCS_OK) {
      packed_key_buffer_ = nullptr;
      return false;
    }
    const auto* bytes = static_cast<const char*>(packed_key_buffer_);
    packed_key_.assign(bytes, bytes + length);
    return true;
  }

  bool attach_peers(const std::vector<ucp_ep_h>& endpoints, const gathered_keys& keys,
                    const std::vector<std::uint64_t>& bases) {
    const std::size_t size = segments_.size();
    for (std::size_t r = 0; r < size; ++r) {
      if (static_cast<int>(r) == rank_) continue;
      if (endpoints[r] == nullptr ||
          ucp_ep_rkey_unpack(endpoints[r], keys.bytes.data() + keys.offsets[r], &remote_keys_[r]) != UCS_OK) {
        remote_keys_[r] = nullptr;
        return false;
      }
      void* local = nullptr;
      // UCS_ERR_UNREACHABLE unless the peer's memory can be mapped here (same host, shared memory).
      if (ucp_rkey_ptr(remote_keys_[r], bases[r], &local) != UCS_OK) return false;
      segments_[r] = static_cast<std::byte*>(local);
    }
    return true;
  }

  ucp_context_h context_;
  int rank_;
  ucp_mem_h memory_ = nullptr;
  std::byte* own_ = nullptr;
  void* packed_key_buffer_ = nullptr;
  std::vector<char> packed_key_;
  std::vector<std::byte*> segments_;  ///< every rank's segment, mapped here; ours at rank_
  std::vector<ucp_rkey_h> remote_keys_;
  std::size_t capacity_ = 0;
  std::uint64_t round_ = 0;
};

}  // namespace onelearn::exec::detail
