#pragma once
/**
 * \file
 * \ingroup policies
 *
 * exec::ucx's transport: one UCP context, worker and endpoint set per policy object, tagged
 * point-to-point messages, and the waiting loop that turns timeouts, UCX error statuses and
 * failed peers into distributed_error instead of hangs.
 *
 * Tags: bits 63..40 the collective's sequence number (mod 2^24), 39..20 the sender's rank,
 * 19..0 the message's index within the collective (mod 2^20). Every rank numbers its
 * collectives in the same order, so back-to-back collectives never match each other's messages;
 * the wrap-arounds are harmless because UCP matches messages from one sender in send order and
 * a rank never has 2^20 messages, or 2^24 collectives, outstanding at once.
 */

#include <mpi.h>
#include <sched.h>
#include <ucp/api/ucp.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/exec/ucx/shared_memory.hpp"

namespace onelearn::exec {

/// Tuning and failure handling of exec::ucx. All ranks pass the same options.
struct ucx_options {
  /// A collective that has not completed after this long throws distributed_error.
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  /// All-reduces of fewer bytes use recursive doubling (latency-bound); larger ones the ring.
  std::size_t small_message_bytes = 256 * 1024;
  /// Messages of the ring and of broadcast are cut into chunks of this many bytes, so that
  /// reducing (or forwarding) one chunk overlaps with the transfer of the next.
  std::size_t chunk_bytes = 512 * 1024;
  /// true: endpoints use UCP_ERR_HANDLING_MODE_PEER, so a peer that dies fails the requests
  /// to it at once. UCX 1.13's shared-memory transports cannot do this, so ranks on one host
  /// then talk over TCP loopback, several times slower. false (default): a vanished peer
  /// surfaces as a distributed_error when `timeout` passes, and shared memory is used.
  bool detect_peer_failure = false;
  /// Bytes of the shared-memory segment each rank maps for the all-reduce when all ranks are on
  /// one host (see exec/ucx/shared_memory.hpp); larger all-reduces go through it in rounds of this
  /// size. 0 turns the shared-memory path off (then messages, as between hosts). Not used with
  /// detect_peer_failure: a rank that dies cannot fail a load or a store, only the timeout.
  std::size_t shared_memory_bytes = 512 * 1024;
};

namespace detail {

/// Polls of an idle worker before each further poll also yields the core (see operation::wait).
/// Measured on 2 busy ranks of a loaded 2-core host: yielding after 64 idle polls made 256 KiB -
/// 1 MiB all-reduces ~10x slower (the yield gives the core away for a whole time slice in the
/// middle of a rendezvous); after 16384 (about a millisecond) they match MPI_Allreduce at best,
/// and a peer that has really lost its core still gets ours.
constexpr std::uint32_t ucx_spins_before_yield = 16384;

/// Tells the core that this is a spin-wait loop (lets a hyper-thread sibling run, saves power).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// One endpoint's failure, written by UCX's error callback during ucp_worker_progress.
struct ucx_peer_slot {
  int rank = 0;
  ucs_status_t status = UCS_OK;
};

inline void ucx_on_peer_error(void* arg, ucp_ep_h /*ep*/, ucs_status_t status) {
  static_cast<ucx_peer_slot*>(arg)->status = status;
}

class ucx_transport {
 public:
  using clock = std::chrono::steady_clock;

  ucx_transport(MPI_Comm comm, const ucx_options& options) : options_(options) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!initialized || finalized) {
      throw distributed_error(
          "exec::ucx: expected an initialized MPI to exchange UCX worker addresses (the "
          "application calls MPI_Init before creating exec::ucx), found MPI " +
          std::string(finalized ? "already finalized" : "not initialized"));
    }
    if (comm == MPI_COMM_NULL) {
      throw distributed_error("exec::ucx: expected a communicator this process belongs to, found MPI_COMM_NULL");
    }
    if (options_.chunk_bytes < 64) {
      throw invalid_argument("exec::ucx: expected chunk_bytes >= 64, found " + std::to_string(options_.chunk_bytes));
    }
    if (options_.shared_memory_bytes != 0 && options_.shared_memory_bytes < 64) {
      throw invalid_argument("exec::ucx: expected shared_memory_bytes 0 (off) or >= 64, found " +
                             std::to_string(options_.shared_memory_bytes));
    }
    if (options_.timeout.count() <= 0) {
      throw invalid_argument("exec::ucx: expected a positive timeout, found " +
                             std::to_string(options_.timeout.count()) + " ms");
    }
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
    if (size_ > (1 << 20)) {
      throw distributed_error("exec::ucx: expected at most 2^20 ranks, found " + std::to_string(size_));
    }

    // A failure on one rank must not leave the others in the address exchange below, so every
    // rank reaches the MPI collectives whatever happened, and all fail together.
    std::string failure;
    try {
      create_worker();
    } catch (const std::exception& e) {
      failure = e.what();
    }
    int failed_anywhere = failure.empty() ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &failed_anywhere, 1, MPI_INT, MPI_MAX, comm);
    if (failed_anywhere) {
      release();
      throw distributed_error(failure.empty() ? "exec::ucx: UCX initialisation failed on another rank" : failure);
    }

    const int mine = static_cast<int>(address_.size());
    std::vector<int> lengths(static_cast<std::size_t>(size_));
    MPI_Allgather(&mine, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm);
    std::vector<int> offsets(static_cast<std::size_t>(size_));
    int total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      offsets[r] = total;
      total += lengths[r];
    }
    std::vector<char> addresses(static_cast<std::size_t>(total));
    MPI_Allgatherv(address_.data(), mine, MPI_BYTE, addresses.data(), lengths.data(),
                   offsets.data(), MPI_BYTE, comm);

    slots_ = std::make_unique<ucx_peer_slot[]>(static_cast<std::size_t>(size_));
    endpoints_.assign(static_cast<std::size_t>(size_), nullptr);
    for (int r = 0; r < size_ && failure.empty(); ++r) {
      slots_[static_cast<std::size_t>(r)].rank = r;
      ucp_ep_params_t params{};
      params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                          UCP_EP_PARAM_FIELD_ERR_HANDLER;
      params.address = reinterpret_cast<const ucp_address_t*>(addresses.data() + offsets[static_cast<std::size_t>(r)]);
      // PEER mode: a peer that dies fails our requests to it (and calls the handler) instead
      // of leaving them pending until the timeout.
      params.err_mode = options_.detect_peer_failure ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
      params.err_handler.cb = ucx_on_peer_error;
      params.err_handler.arg = &slots_[static_cast<std::size_t>(r)];
      const ucs_status_t status = ucp_ep_create(worker_, &params, &endpoints_[static_cast<std::size_t>(r)]);
      if (status != UCS_OK) {
        endpoints_[static_cast<std::size_t>(r)] = nullptr;
        failure = "exec::ucx: rank " + std::to_string(rank_) + ": ucp_ep_create to rank " +
                  std::to_string(r) + " failed: " + ucs_status_string(status);
      }
    }
    failed_anywhere = failure.empty() ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &failed_anywhere, 1, MPI_INT, MPI_MAX, comm);
    if (failed_anywhere) {
      release();
      throw distributed_error(failure.empty() ? "exec::ucx: ucp_ep_create failed on another rank" : failure);
    }
    // Agreed collectively, so that a rank with other options fails instead of leaving the
    // others in map_all's exchange.
    const unsigned long long wanted =
        options_.detect_peer_failure ? 0ULL : static_cast<unsigned long long>(options_.shared_memory_bytes);
    unsigned long long range[2] = {wanted, ~wanted};  // min, and ~max
    MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm);
    if (range[0] != ~range[1]) {
      release();
      throw invalid_argument("exec::ucx: expected the same shared_memory_bytes and detect_peer_failure on every "
                             "rank, found shared-memory segments of " + std::to_string(range[0]) + " to " +
                             std::to_string(~range[1]) + " bytes (0: off)");
    }
    if (wanted > 0 && size_ > 1) {
      shared_ = ucx_shared_segments::map_all(context_, endpoints_, rank_, size_, comm, options_.shared_memory_bytes);
    }
  }

  ucx_transport(const ucx_transport&) = delete;
  ucx_transport& operator=(const ucx_transport&) = delete;
  ~ucx_transport() { release(); }

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] const ucx_options& options() const noexcept { return options_; }
  /// Every rank's shared-memory segment, or null when some rank cannot map some other's (several
  /// hosts), or the options turn them off. The same on every rank.
  [[nodiscard]] ucx_shared_segments* shared_segments() const noexcept { return shared_.get(); }

  /// Scratch memory that survives between collectives, so large all-reduces do not pay for
  /// fresh pages on every call. `which` selects one of two independent buffers.
  std::byte* scratch(int which, std::size_t bytes) {
    auto& buffer = scratch_[which];
    if (buffer.size() < bytes) {
      buffer = std::vector<std::byte>();
      buffer.resize(bytes);
    }
    return buffer.data();
  }

  /// One collective call: its name and sequence number for messages, its deadline, and the
  /// requests it has in flight. If it ends by an exception, the destructor cancels what is still
  /// in flight so that UCX never writes into (or reads from) the caller's buffers afterwards.
  class operation {
   public:
    operation(ucx_transport& transport, const char* name)
        : t_(transport), name_(name), sequence_(transport.sequence_++),
          deadline_(clock::now() + transport.options_.timeout) {
      if (!t_.broken_.empty()) {
        throw distributed_error(prefix() + "this exec::ucx is unusable after an earlier failure (" +
                                t_.broken_ + ")");
      }
    }
    operation(const operation&) = delete;
    operation& operator=(const operation&) = delete;
    ~operation() {
      if (!pending_.empty()) t_.abandon(pending_);
    }

    /// A send of `bytes` bytes at `data` to `peer`; `index` numbers it within the collective.
    /// Returns a handle for wait (an index into the pending table, valid until wait_all).
    std::size_t send(int peer, const void* data, std::size_t bytes, std::uint32_t index) {
      ucp_request_param_t param{};
      void* request = ucp_tag_send_nbx(t_.endpoints_[static_cast<std::size_t>(peer)], data, bytes,
                                       tag(t_.rank_, index), &param);
      return track(request, peer, bytes, true);
    }

    /// A receive of exactly `bytes` bytes from `peer` into `data`.
    std::size_t receive(int peer, void* data, std::size_t bytes, std::uint32_t index) {
      ucp_request_param_t param{};
      void* request = ucp_tag_recv_nbx(t_.worker_, data, bytes, tag(peer, index), ~ucp_tag_t{0}, &param);
      return track(request, peer, bytes, false);
    }

    /// Progresses the worker until the request `handle` (from send or receive) has completed.
    void wait(std::size_t handle) {
      auto& slot = pending_[handle];
      for (std::uint32_t spins = 0; slot.request != nullptr; ++spins) {
        ucp_tag_recv_info_t info{};
        const ucs_status_t status = slot.is_send ? ucp_request_check_status(slot.request)
                                                 : ucp_tag_recv_request_test(slot.request, &info);
        if (status != UCS_INPROGRESS) {
          ucp_request_free(slot.request);
          slot.request = nullptr;
          --live_;
          if (status != UCS_OK) {
            fail("a message " + std::string(slot.is_send ? "to" : "from") + " rank " +
                 std::to_string(slot.peer) + " failed: " + ucs_status_string(status) +
                 (status == UCS_ERR_MESSAGE_TRUNCATED ? " (ranks passed different sizes)" : ""));
          }
          if (!slot.is_send && info.length != slot.bytes) {
            fail("expected " + std::to_string(slot.bytes) + " bytes from rank " +
                 std::to_string(slot.peer) + ", found " + std::to_string(info.length) +
                 " (ranks passed different sizes)");
          }
          break;
        }
        // On a host with fewer cores than busy ranks the peer we wait for may be waiting for
        // our core: after a short spin without progress, give it up.
        if (ucp_worker_progress(t_.worker_) == 0 && spins > ucx_spins_before_yield) sched_yield();
        if (spins % 256 == 255) check(slot.peer);
      }
    }

    void wait_all() {
      for (std::size_t h = 0; h < pending_.size(); ++h) wait(h);
      pending_.clear();
    }

    /// One turn of a wait for `peer` that is not a UCX request (a counter in shared memory):
    /// spin, then yield the core as `wait` does; every 256 turns also progress the worker (it
    /// reports failed connections) and check the deadline.
    void idle(int peer, std::uint32_t spins) {
      if (spins > ucx_spins_before_yield) {
        sched_yield();
      } else {
        cpu_relax();
      }
      if (spins % 256 == 255) {
        ucp_worker_progress(t_.worker_);
        check(peer);
      }
    }

    [[noreturn]] void fail(const std::string& what) {
      const std::string message = prefix() + what;
      if (t_.broken_.empty()) t_.broken_ = message;
      throw distributed_error(message);
    }

    [[nodiscard]] std::string prefix() const {
      return "exec::ucx: rank " + std::to_string(t_.rank_) + ": " + name_ + " #" +
             std::to_string(sequence_) + ": ";
    }

   private:
    struct pending {
      void* request;
      int peer;
      std::size_t bytes;
      bool is_send;
    };

    [[nodiscard]] ucp_tag_t tag(int sender, std::uint32_t index) const noexcept {
      return ((sequence_ & 0xFFFFFFu) << 40) |
             ((static_cast<std::uint64_t>(sender) & 0xFFFFFu) << 20) | (index & 0xFFFFFu);
    }

    std::size_t track(void* request, int peer, std::size_t bytes, bool is_send) {
      if (UCS_PTR_IS_ERR(request)) {
        fail(std::string(is_send ? "ucp_tag_send_nbx to" : "ucp_tag_recv_nbx from") + " rank " +
             std::to_string(peer) + " failed: " + ucs_status_string(UCS_PTR_STATUS(request)));
      }
      pending_.push_back({request, peer, bytes, is_send});
      if (request != nullptr) ++live_;
      return pending_.size() - 1;
    }

    void check(int peer) {
      const ucs_status_t peer_status = t_.slots_[static_cast<std::size_t>(peer)].status;
      if (peer_status != UCS_OK) {
        fail("the connection to rank " + std::to_string(peer) + " failed: " + ucs_status_string(peer_status));
      }
      if (clock::now() > deadline_) {
        fail("timed out after " + std::to_string(t_.options_.timeout.count()) +
             " ms waiting for rank " + std::to_string(peer) +
             " (a rank that skipped or reordered a collective, or a peer that stopped)");
      }
    }

    ucx_transport& t_;
    const char* name_;
    std::uint64_t sequence_;
    clock::time_point deadline_;
    std::vector<pending> pending_;
    std::size_t live_ = 0;
  };

 private:
  void create_worker() {
    ucp_config_t* config = nullptr;
    ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
    if (status != UCS_OK) throw distributed_error(std::string("exec::ucx: ucp_config_read failed: ") + ucs_status_string(status));
    // UCX 1.13's newer protocol selection (off by default there) picks single-copy rendezvous
    // (cma) on one host where the default one is several times slower for 64 KiB - 4 MiB
    // messages (measured on 2 ranks, see bench/allreduce_ucx.hpp). The environment still wins.
    if (std::getenv("UCX_PROTO_ENABLE") == nullptr) ucp_config_modify(config, "PROTO_ENABLE", "y");
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA;  // RMA: the shared-memory segments' keys
    status = ucp_init(&params, config, &context_);
    ucp_config_release(config);
    if (status != UCS_OK) {
      context_ = nullptr;
      throw distributed_error(std::string("exec::ucx: ucp_init failed: ") + ucs_status_string(status));
    }
    ucp_worker_params_t worker_params{};
    worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;  // a policy object is used by one thread
    status = ucp_worker_create(context_, &worker_params, &worker_);
    if (status != UCS_OK) {
      worker_ = nullptr;
      throw distributed_error(std::string("exec::ucx: ucp_worker_create failed: ") + ucs_status_string(status));
    }
    ucp_address_t* address = nullptr;
    std::size_t length = 0;
    status = ucp_worker_get_address(worker_, &address, &length);
    if (status != UCS_OK) {
      throw distributed_error(std::string("exec::ucx: ucp_worker_get_address failed: ") + ucs_status_string(status));
    }
    const auto* bytes = reinterpret_cast<const char*>(address);
    address_.assign(bytes, bytes + length);
    ucp_worker_release_address(worker_, address);
  }

  /// Progresses `requests` until they complete or `limit` passes; returns whether all did.
  bool drain(std::vector<void*>& requests, clock::duration limit) noexcept {
    const auto until = clock::now() + limit;
    for (;;) {
      bool all_done = true;
      for (auto& request : requests) {
        if (request == nullptr) continue;
        if (ucp_request_check_status(request) != UCS_INPROGRESS) {
          ucp_request_free(request);
          request = nullptr;
        } else {
          all_done = false;
        }
      }
      if (all_done) return true;
      if (clock::now() > until) return false;
      if (ucp_worker_progress(worker_) == 0) sched_yield();
    }
  }

  /// After a failed collective: cancel its requests; sends that cannot be cancelled are ended
  /// by force-closing their endpoints (which completes them with an error). The policy is
  /// already marked broken, so the closed endpoints are never used again.
  template <class Pending>
  void abandon(std::vector<Pending>& pending) noexcept {
    std::vector<void*> requests;
    for (const auto& p : pending) {
      if (p.request == nullptr) continue;
      ucp_request_cancel(worker_, p.request);
      requests.push_back(p.request);
    }
    // A forced close is only defined when both sides use PEER mode; otherwise sends that could
    // not be cancelled are left to UCX (it only reads from their buffers).
    if (!drain(requests, std::chrono::seconds(1)) && options_.detect_peer_failure) {
      std::vector<void*> closing;
      for (const auto& p : pending) {
        auto& endpoint = endpoints_[static_cast<std::size_t>(p.peer)];
        if (p.request == nullptr || endpoint == nullptr) continue;
        closing.push_back(close_endpoint(endpoint, true));
      }
      drain(closing, std::chrono::seconds(1));
      drain(requests, std::chrono::seconds(5));  // what is still pending now is leaked
    }
    pending.clear();
  }

  /// Starts closing `endpoint`; returns the close request (nullptr when already done).
  void* close_endpoint(ucp_ep_h& endpoint, bool force) noexcept {
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    void* request = ucp_ep_close_nbx(endpoint, &param);
    endpoint = nullptr;
    return request == nullptr || UCS_PTR_IS_ERR(request) ? nullptr : request;
  }

  void release() noexcept {
    shared_.reset();  // its remote keys belong to the endpoints closed below
    std::vector<void*> closing;
    if (options_.detect_peer_failure && worker_ != nullptr) {
      // A flush close in PEER mode waits for a handshake with each peer, which may be busy
      // elsewhere (or dead): flush our own operations instead, then close without asking.
      if (broken_.empty()) {
        ucp_request_param_t param{};
        void* flush = ucp_worker_flush_nbx(worker_, &param);
        if (flush != nullptr && !UCS_PTR_IS_ERR(flush)) {
          std::vector<void*> requests{flush};
          drain(requests, std::chrono::seconds(5));
        }
      }
      for (auto& endpoint : endpoints_) {
        if (endpoint != nullptr) closing.push_back(close_endpoint(endpoint, true));
      }
    } else {
      for (auto& endpoint : endpoints_) {
        if (endpoint != nullptr) closing.push_back(close_endpoint(endpoint, false));
      }
    }
    endpoints_.clear();
    // Bounded, so that a peer that never answers cannot hang the destructor. UCX cannot
    // destroy a worker whose endpoints are still closing; then the worker and the context are
    // left allocated (a leak, rather than a hang or a crash).
    if (!drain(closing, std::chrono::seconds(5))) return;
    if (worker_ != nullptr) ucp_worker_destroy(worker_);
    worker_ = nullptr;
    if (context_ != nullptr) ucp_cleanup(context_);
    context_ = nullptr;
  }

  ucx_options options_;
  int rank_ = 0;
  int size_ = 1;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::vector<char> address_;
  std::unique_ptr<ucx_peer_slot[]> slots_;
  std::vector<ucp_ep_h> endpoints_;
  std::uint64_t sequence_ = 0;
  std::string broken_;  ///< the first failure's message; non-empty makes every collective throw
  std::vector<std::byte> scratch_[2];
  std::unique_ptr<ucx_shared_segments> shared_;
};

}  // namespace detail
}  // namespace onelearn::exec
