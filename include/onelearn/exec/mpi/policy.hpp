#pragma once
/**
 * \file
 * \ingroup policies
 *
 * exec::mpi's class and its request (the documentation is in the entry header,
 * onelearn/exec/mpi.hpp).
 */

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/exec/collectives.hpp"
#include "onelearn/exec/mpi/communicator.hpp"
#include "onelearn/exec/mpi/watchdog.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::exec {

/// What a collective that times out does (mpi_options::on_timeout).
enum class timeout_action {
  throw_error,  ///< throw distributed_error on the ranks that waited (non-blocking MPI calls)
  abort,        ///< print the message to stderr and end the process (blocking MPI calls)
};

/// Failure handling of exec::mpi. All ranks pass the same options.
struct mpi_options {
  /// No deadline: the blocking MPI collectives, with their lower latency and no hang detection.
  static constexpr std::chrono::milliseconds no_timeout = std::chrono::milliseconds::max();
  /// A collective that has not completed after this long fails (see on_timeout). Same name and
  /// default as ucx_options::timeout.
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  timeout_action on_timeout = timeout_action::abort;
};

namespace detail {

/// The wait loop tests (MPI_Test back to back) for mpi_spin_time: peers that arrive together
/// never leave it. Then, until mpi_yield_time, it also yields the core every 64 tests (free if no
/// other thread wants the core; on an oversubscribed host the peer we wait for may be the one
/// that does). Then it sleeps between tests, mpi_first_sleep doubling up to mpi_max_sleep, so
/// a long wait costs little CPU and a late peer is noticed within about half the time waited.
/// Measured (2 ranks on a loaded 2-core host, 8-byte all-reduce): sleeping right after a
/// 200 us spin made the loop 3-7x slower (a peer descheduled for a time slice sends both ranks
/// into sleeps that overshoot); with the yield phase it stays within noise of the plain test
/// loop.
constexpr std::chrono::microseconds mpi_spin_time{200};
constexpr std::chrono::microseconds mpi_yield_time{10000};
constexpr std::chrono::microseconds mpi_first_sleep{50};
constexpr std::chrono::microseconds mpi_max_sleep{1000};

/// What the copies of one exec::mpi share.
struct mpi_state {
  static constexpr std::size_t label_size = 32;

  mpi_options options;
  std::uint64_t sequence = 0;  ///< collectives issued so far (numbers them in messages)
  std::string broken;          ///< the message of the timeout that made the policy unusable
  /// Requests of timed-out collectives. MPI forbids cancelling or freeing an active collective
  /// request, so they are kept, tested once more at the end, and otherwise left to MPI.
  std::vector<MPI_Request> abandoned;
  // The step label, stored without allocating so that set_step is noexcept and cheap.
  char step_name[2][label_size] = {};
  std::int64_t step_value[2] = {0, 0};
  int step_levels = 0;

  mpi_state() = default;
  mpi_state(const mpi_state&) = delete;
  mpi_state& operator=(const mpi_state&) = delete;
  ~mpi_state() {
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (abandoned.empty() || finalized) return;
    int done = 0;
    MPI_Testall(static_cast<int>(abandoned.size()), abandoned.data(), &done, MPI_STATUSES_IGNORE);
  }

  void set_label(int level, std::string_view what, std::int64_t value) noexcept {
    const std::size_t n = std::min(what.size(), label_size - 1);
    std::memcpy(step_name[level], what.data(), n);
    step_name[level][n] = '\0';
    step_value[level] = value;
  }

  [[nodiscard]] std::string step() const {
    std::string text;
    for (int level = 0; level < step_levels; ++level) {
      if (level > 0) text += ", ";
      text += step_name[level];
      if (step_name[level][0] != '\0') text += ' ';
      text += std::to_string(step_value[level]);
    }
    return text;
  }
};

}  // namespace detail

class mpi_request;

class mpi : public collectives<mpi> {
 public:
  static constexpr bool is_distributed = true;
  /// A non-blocking collective of this policy (iallreduce, ireduce_scatter,
  /// iallgatherv_in_place): MPI requests completed by wait()/wait_all under the timeout.
  using request = mpi_request;

  /// Uses `comm` as given (required: onelearn never assumes MPI_COMM_WORLD). MPI must already
  /// be initialized.
  explicit mpi(MPI_Comm comm, const mpi_options& options = {})
      : comm_(comm), state_(std::make_shared<detail::mpi_state>()) {
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
    if (options.timeout.count() <= 0) {
      throw invalid_argument("exec::mpi: expected a positive timeout, found " +
                             std::to_string(options.timeout.count()) + " ms");
    }
    if (options.on_timeout != timeout_action::throw_error && options.on_timeout != timeout_action::abort) {
      throw invalid_argument("exec::mpi: expected on_timeout to be throw_error or abort, found " +
                             std::to_string(static_cast<int>(options.on_timeout)));
    }
    state_->options = options;
    // Only throw_error needs the non-blocking calls and the wait loop; abort keeps the blocking
    // ones, watched by detail::mpi_watchdog (see exec/mpi/watchdog.hpp for why).
    blocking_ = options.timeout == mpi_options::no_timeout || options.on_timeout == timeout_action::abort;
    detail::check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    detail::check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] MPI_Comm comm() const noexcept { return comm_; }
  [[nodiscard]] const mpi_options& options() const noexcept { return state_->options; }

  /// Labels where the algorithm is ("epoch 3"), for the timeout message. `what` is copied (at
  /// most 31 characters). Shared by every copy of this policy.
  void set_step(std::string_view what, std::int64_t step) const noexcept {
    state_->set_label(0, what, step);
    state_->step_levels = 1;
  }
  /// Two levels: set_step("epoch", 3, "batch", 17) labels "epoch 3, batch 17".
  void set_step(std::string_view what, std::int64_t step, std::string_view sub,
                std::int64_t sub_step) const noexcept {
    state_->set_label(0, what, step);
    state_->set_label(1, sub, sub_step);
    state_->step_levels = 2;
  }
  void clear_step() const noexcept { state_->step_levels = 0; }
  /// The current label ("epoch 3, batch 17"), empty if none is set.
  [[nodiscard]] std::string step() const { return state_->step(); }

  /// Element-wise reduction of `values` over all ranks, in place; every rank gets the result.
  template <collective_value T, std::size_t N>
  void allreduce(std::span<T, N> values, reduce_op op) const {
    allreduce_named(values.data(), values.size(), op, "MPI_Allreduce");
  }

  /// Copies `values` from `root` to every rank. All ranks pass spans of the same size.
  template <broadcast_value T, std::size_t N>
  void broadcast(std::span<T, N> values, int root = 0) const {
    broadcast_raw(values, root, "MPI_Bcast");
  }

  /// The concatenation of every rank's `values`, in rank order, on every rank.
  template <collective_value T>
  [[nodiscard]] std::vector<T> allgatherv(std::span<const T> values) const {
    return gather_with_counts(values, "MPI_Allgather", "MPI_Allgatherv").first;
  }

  /// Piece r of `values` (counts[r] values, after the pieces for ranks 0..r-1) to rank r;
  /// returns the pieces every rank sent to this one, in rank order. MPI_Alltoall of the counts,
  /// then MPI_Alltoallv. Refused on every rank, not only where it went wrong: counts that do not
  /// cut a rank's values into one piece per rank (invalid_argument: that rank sends -1 in the
  /// count exchange) and a rank that would receive more than INT_MAX values, MPI's int counts
  /// (distributed_error: an all-reduce of the receive totals).
  template <collective_value T>
  [[nodiscard]] std::vector<T> alltoallv(std::span<const T> values, std::span<const std::int64_t> counts) const;

  void barrier() const {
    begin("MPI_Barrier");
    if (blocking_) {
      watched("MPI_Barrier", [&] { detail::check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); });
      return;
    }
    MPI_Request pending = MPI_REQUEST_NULL;
    detail::check_mpi(MPI_Ibarrier(comm_, &pending), "MPI_Ibarrier");
    complete(std::span(&pending, 1), "MPI_Barrier", true);
  }

  /// Completes `requests` (started by the caller on comm(), e.g. MPI_Iallreduce of gradient
  /// buckets) under this policy's timeout, as its own collectives are. On timeout the requests
  /// still active are taken over by the policy (MPI cannot cancel them) and set to
  /// MPI_REQUEST_NULL in `requests`, so that a later MPI_Waitall on them returns at once; then
  /// it throws or aborts like a collective. `operation` names them in the message.
  void wait_all(std::span<MPI_Request> requests, const char* operation) const {
    begin(operation);
    if (blocking_) {
      watched(operation, [&] {
        detail::check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
                          operation);
      });
      return;
    }
    complete(requests, operation, false);
  }

  /// Completes `requests` (started by this policy's non-blocking collectives) under the
  /// policy's timeout, as one operation named after the first of them. Every request is
  /// complete (or, after a timeout, taken over by the policy) when it returns or throws.
  void wait_all(std::span<mpi_request> requests) const;

  /// Starts the element-wise reduction of `values` over all ranks, in place (MPI_Iallreduce);
  /// `values` belongs to MPI until the request completes.
  template <collective_value T, std::size_t N>
  [[nodiscard]] mpi_request iallreduce(std::span<T, N> values, reduce_op op) const;

  /// Starts the reduction of every rank's `values` (MPI_Ireduce_scatter) whose piece r (the
  /// counts[r] values after the first counts[0] + ... + counts[r-1]) lands in rank r's `mine`.
  /// `values` is only read (other backends may overwrite it).
  template <collective_value T>
  [[nodiscard]] mpi_request ireduce_scatter(std::span<T> values, std::span<T> mine,
                                            std::span<const std::int64_t> counts, reduce_op op) const;

  /// Starts the in-place all-gather (MPI_Iallgatherv with MPI_IN_PLACE) of `buffer`, cut into
  /// consecutive pieces of counts[r] values: rank r's piece of its buffer goes to every rank.
  template <collective_value T>
  [[nodiscard]] mpi_request iallgatherv_in_place(std::span<T> buffer, std::span<const std::int64_t> counts) const;

  /// A policy over the ranks that pass the same `color` (>= 0), ordered by `key` then rank
  /// (MPI_Comm_split; collective over this policy's ranks), with the same options. It owns the
  /// new communicator: MPI_Comm_free when its last copy goes, so every copy must be gone
  /// before MPI_Finalize (as with exec::ucx).
  [[nodiscard]] mpi split(int color, int key) const;

 private:
  using clock = std::chrono::steady_clock;

  /// Numbers the call; refuses it if an earlier collective timed out (the communicator may
  /// still have that collective pending, so a new one could match the wrong peers' calls).
  void begin(const char* operation) const {
    const std::uint64_t sequence = state_->sequence++;
    if (!state_->broken.empty()) {
      throw distributed_error(prefix(operation, sequence) + "this exec::mpi is unusable after an earlier failure (" +
                              state_->broken + ")");
    }
  }

  [[nodiscard]] std::string prefix(const char* operation, std::uint64_t sequence) const {
    const std::string step = state_->step();
    return "exec::mpi: rank " + std::to_string(rank_) + ": " + operation + " #" + std::to_string(sequence) +
           " (step: " + (step.empty() ? std::string("not set") : step) + "): ";
  }

  /// The wait loop: MPI_Testall until `requests` complete or the deadline passes. `owned`: the
  /// requests are the policy's own (else the caller's, see wait_all).
  void complete(std::span<MPI_Request> requests, const char* operation, bool owned) const {
    const int n = static_cast<int>(requests.size());
    int done = 0;
    detail::check_mpi(MPI_Testall(n, requests.data(), &done, MPI_STATUSES_IGNORE), operation);
    if (done) return;  // the fast path: no clock read
    const auto start = clock::now();
    const auto deadline = deadline_from(start);
    auto sleep = detail::mpi_first_sleep;
    for (std::uint32_t spins = 1;; ++spins) {
      detail::check_mpi(MPI_Testall(n, requests.data(), &done, MPI_STATUSES_IGNORE), operation);
      if (done) return;
      if (spins % 64 != 0) continue;  // the clock is read every 64 tests while spinning
      const auto now = clock::now();
      if (now >= deadline) break;
      if (now - start >= detail::mpi_yield_time) {
        std::this_thread::sleep_for(sleep);
        sleep = std::min(sleep * 2, detail::mpi_max_sleep);
        spins = 63;  // from now on the clock is read after every test
      } else if (now - start >= detail::mpi_spin_time) {
        std::this_thread::yield();
      }
    }
    timed_out(requests, operation, owned);
  }

  /// start + the timeout, saturated (start + a huge timeout would overflow).
  [[nodiscard]] clock::time_point deadline_from(clock::time_point start) const {
    const auto timeout = state_->options.timeout;
    return timeout >= std::chrono::duration_cast<std::chrono::milliseconds>(clock::time_point::max() - start)
               ? clock::time_point::max()
               : start + timeout;
  }

  [[nodiscard]] std::string timeout_message(const char* operation, std::uint64_t sequence) const {
    return prefix(operation, sequence) + "timed out after " + std::to_string(state_->options.timeout.count()) +
           " ms (a rank skipped or reordered a collective, stopped, or is stuck)";
  }

  /// Runs `call`, a blocking MPI call, under the watchdog (on_timeout = abort), or plainly
  /// (no_timeout). The operation was numbered by begin() just before.
  template <class Call>
  void watched(const char* operation, Call&& call) const {
    struct described {
      const mpi* policy;
      const char* operation;
      std::uint64_t sequence;
    } context{this, operation, state_->sequence - 1};
    const bool active = state_->options.timeout != mpi_options::no_timeout;
    const detail::mpi_watched_call record{
        active ? deadline_from(clock::now()) : clock::time_point::max(), &context, [](const void* c) {
          const auto& d = *static_cast<const described*>(c);
          return d.policy->timeout_message(d.operation, d.sequence);
        }};
    const detail::mpi_watch_guard guard(active, record);
    std::forward<Call>(call)();
  }

  [[noreturn]] void timed_out(std::span<MPI_Request> requests, const char* operation, bool owned) const {
    std::string message = timeout_message(operation, state_->sequence - 1) +
                          "; an MPI collective cannot be cancelled, so this exec::mpi (and its copies) "
                          "and the communicator are unusable now";
    for (auto& handle : requests) {
      if (handle != MPI_REQUEST_NULL) state_->abandoned.push_back(handle);
      if (!owned) handle = MPI_REQUEST_NULL;
    }
    state_->broken = message;
    throw distributed_error(message);
  }

  template <class T>
  void allreduce_named(T* data, std::size_t size, reduce_op op, const char* operation) const {
    for (std::size_t begin_at = 0; begin_at < size; begin_at += detail::max_chunk) {
      const auto count = static_cast<int>(std::min(detail::max_chunk, size - begin_at));
      begin(operation);
      if (blocking_) {
        watched(operation, [&] {
          detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, data + begin_at, count, detail::mpi_type<T>(),
                                          detail::mpi_op(op), comm_),
                            "MPI_Allreduce");
        });
        continue;
      }
      MPI_Request pending = MPI_REQUEST_NULL;
      detail::check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data + begin_at, count, detail::mpi_type<T>(),
                                       detail::mpi_op(op), comm_, &pending),
                        "MPI_Iallreduce");
      complete(std::span(&pending, 1), operation, true);
    }
  }

  template <class T, std::size_t N>
  void broadcast_raw(std::span<T, N> values, int root, const char* operation) const {
    if (root < 0 || root >= size_) {
      throw invalid_argument("exec::mpi::broadcast: expected 0 <= root < " + std::to_string(size_) +
                             ", found " + std::to_string(root));
    }
    for (std::size_t begin_at = 0; begin_at < values.size(); begin_at += detail::max_chunk) {
      const auto count = static_cast<int>(std::min(detail::max_chunk, values.size() - begin_at));
      begin(operation);
      if (blocking_) {
        watched(operation, [&] {
          detail::check_mpi(MPI_Bcast(values.data() + begin_at, count, detail::mpi_type<T>(), root, comm_),
                            "MPI_Bcast");
        });
        continue;
      }
      MPI_Request pending = MPI_REQUEST_NULL;
      detail::check_mpi(
          MPI_Ibcast(values.data() + begin_at, count, detail::mpi_type<T>(), root, comm_, &pending),
          "MPI_Ibcast");
      complete(std::span(&pending, 1), operation, true);
    }
  }

  /// allgatherv that also returns how many values each rank contributed.
  template <class T>
  std::pair<std::vector<T>, std::vector<std::int64_t>> gather_with_counts(
      std::span<const T> values, const char* counts_operation, const char* values_operation) const {
    const auto ranks = static_cast<std::size_t>(size_);
    std::vector<std::int64_t> counts(ranks);
    const auto mine = static_cast<std::int64_t>(values.size());
    begin(counts_operation);
    if (blocking_) {
      watched(counts_operation, [&] {
        detail::check_mpi(MPI_Allgather(&mine, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm_),
                          "MPI_Allgather");
      });
    } else {
      MPI_Request pending = MPI_REQUEST_NULL;
      detail::check_mpi(
          MPI_Iallgather(&mine, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm_, &pending),
          "MPI_Iallgather");
      complete(std::span(&pending, 1), counts_operation, true);
    }
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
    begin(values_operation);
    if (blocking_) {
      watched(values_operation, [&] {
        detail::check_mpi(MPI_Allgatherv(values.data(), static_cast<int>(mine), detail::mpi_type<T>(),
                                         gathered.data(), int_counts.data(), displacements.data(),
                                         detail::mpi_type<T>(), comm_),
                          "MPI_Allgatherv");
      });
    } else {
      MPI_Request pending = MPI_REQUEST_NULL;
      detail::check_mpi(MPI_Iallgatherv(values.data(), static_cast<int>(mine), detail::mpi_type<T>(),
                                        gathered.data(), int_counts.data(), displacements.data(),
                                        detail::mpi_type<T>(), comm_, &pending),
                        "MPI_Iallgatherv");
      complete(std::span(&pending, 1), values_operation, true);
    }
    return {std::move(gathered), std::move(counts)};
  }

  /// A policy that owns its communicator (split).
  mpi(std::shared_ptr<const MPI_Comm> owner, const mpi_options& options) : mpi(*owner, options) {
    owner_ = std::move(owner);
  }

  /// Checks the counts of a ireduce_scatter or iallgatherv_in_place against the buffer and
  /// returns them as MPI's ints, with their displacements.
  [[nodiscard]] std::pair<std::vector<int>, std::vector<int>> int_counts(std::span<const std::int64_t> counts,
                                                                         std::size_t total,
                                                                         const char* operation) const;

  friend class mpi_request;

  MPI_Comm comm_;
  std::shared_ptr<const MPI_Comm> owner_;  ///< the communicator when this policy owns it (split)
  std::shared_ptr<detail::mpi_state> state_;
  int rank_ = 0;
  int size_ = 1;
  bool blocking_ = false;
};

/// The request of one of exec::mpi's non-blocking collectives. Move-only. Destroyed before it
/// completed, it waits for its MPI requests (MPI_Waitall, no timeout): the buffers they write
/// belong to the caller and the other ranks are in the same collectives.
class mpi_request {
 public:
  mpi_request(mpi_request&& other) noexcept
      : policy_(other.policy_), handles_(std::move(other.handles_)), counts_(std::move(other.counts_)),
        displacements_(std::move(other.displacements_)), operation_(other.operation_) {
    other.handles_.clear();
  }
  mpi_request& operator=(mpi_request&& other) noexcept {
    if (this != &other) {
      finish();
      policy_ = other.policy_;
      handles_ = std::move(other.handles_);
      other.handles_.clear();
      counts_ = std::move(other.counts_);
      displacements_ = std::move(other.displacements_);
      operation_ = other.operation_;
    }
    return *this;
  }
  mpi_request(const mpi_request&) = delete;
  mpi_request& operator=(const mpi_request&) = delete;
  ~mpi_request() { finish(); }

  /// Whether the collective has completed; lets it progress (Open MPI, and MPICH without an
  /// asynchronous progress thread, move a non-blocking collective forward only inside MPI calls).
  [[nodiscard]] bool test() {
    if (handles_.empty()) return true;
    int done = 0;
    detail::check_mpi(MPI_Testall(static_cast<int>(handles_.size()), handles_.data(), &done, MPI_STATUSES_IGNORE),
                      "MPI_Testall");
    if (done) handles_.clear();
    return done != 0;
  }

  /// Completes the collective under the policy's timeout (see mpi::wait_all).
  void wait() { policy_.wait_all(std::span<mpi_request>(this, 1)); }

 private:
  friend class mpi;

  mpi_request(const mpi& policy, const char* operation) : policy_(policy), operation_(operation) {}

  void finish() noexcept {
    if (handles_.empty()) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Waitall(static_cast<int>(handles_.size()), handles_.data(), MPI_STATUSES_IGNORE);
    handles_.clear();
  }

  mpi policy_;
  std::vector<MPI_Request> handles_;  ///< empty once complete
  std::vector<int> counts_, displacements_;  ///< MPI reads them until the collective completes
  const char* operation_;
};

inline void mpi::wait_all(std::span<mpi_request> requests) const {
  std::vector<MPI_Request> handles;
  const char* operation = nullptr;
  for (mpi_request& r : requests) {
    for (MPI_Request h : r.handles_) {
      if (h != MPI_REQUEST_NULL) handles.push_back(h);
    }
    if (operation == nullptr && !r.handles_.empty()) operation = r.operation_;
    // From here the policy completes them (or takes them over on a timeout).
    r.handles_.clear();
  }
  if (handles.empty()) return;
  wait_all(std::span<MPI_Request>(handles), operation);
}

template <collective_value T, std::size_t N>
mpi_request mpi::iallreduce(std::span<T, N> values, reduce_op op) const {
  mpi_request started(*this, "MPI_Iallreduce");
  begin("MPI_Iallreduce");
  for (std::size_t begin_at = 0; begin_at < values.size(); begin_at += detail::max_chunk) {
    const auto count = static_cast<int>(std::min(detail::max_chunk, values.size() - begin_at));
    MPI_Request handle = MPI_REQUEST_NULL;
    detail::check_mpi(MPI_Iallreduce(MPI_IN_PLACE, values.data() + begin_at, count, detail::mpi_type<T>(),
                                     detail::mpi_op(op), comm_, &handle),
                      "MPI_Iallreduce");
    started.handles_.push_back(handle);
  }
  return started;
}

inline std::pair<std::vector<int>, std::vector<int>> mpi::int_counts(std::span<const std::int64_t> counts,
                                                                     std::size_t total,
                                                                     const char* operation) const {
  if (counts.size() != static_cast<std::size_t>(size_)) {
    throw invalid_argument(std::string("exec::mpi::") + operation + ": expected one count per rank (" +
                           std::to_string(size_) + "), found " + std::to_string(counts.size()));
  }
  std::vector<int> ints(counts.size());
  std::vector<int> displacements(counts.size());
  std::int64_t sum = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] < 0 || sum + counts[r] > INT_MAX) {
      throw invalid_argument(std::string("exec::mpi::") + operation +
                             ": expected counts >= 0 of at most INT_MAX values in all, found " +
                             std::to_string(counts[r]) + " at rank " + std::to_string(r));
    }
    ints[r] = static_cast<int>(counts[r]);
    displacements[r] = static_cast<int>(sum);
    sum += counts[r];
  }
  if (static_cast<std::size_t>(sum) != total) {
    throw invalid_argument(std::string("exec::mpi::") + operation + ": expected counts summing to the buffer's " +
                           std::to_string(total) + " values, found " + std::to_string(sum));
  }
  return {std::move(ints), std::move(displacements)};
}

template <collective_value T>
std::vector<T> mpi::alltoallv(std::span<const T> values, std::span<const std::int64_t> counts) const {
  // Counts that do not cut `values` into one piece per rank are this rank's error, but the
  // other ranks are about to wait in the count exchange: it still takes part, sending -1 to
  // every rank, so that every rank refuses the call after it instead of waiting for a timeout.
  std::pair<std::vector<int>, std::vector<int>> send;
  std::string problem;
  try {
    send = int_counts(counts, values.size(), "alltoallv");
  } catch (const invalid_argument& refused) {
    problem = refused.what();
  }
  // Not references into a structured binding: the lambdas below capture them, which clang
  // before 16 refuses.
  const std::vector<int>& send_counts = send.first;
  const std::vector<int>& send_displacements = send.second;
  std::vector<std::int64_t> outgoing_counts(static_cast<std::size_t>(size_), -1);
  if (problem.empty()) std::copy(counts.begin(), counts.end(), outgoing_counts.begin());
  std::vector<std::int64_t> incoming(static_cast<std::size_t>(size_));
  begin("MPI_Alltoall");
  if (blocking_) {
    watched("MPI_Alltoall", [&] {
      detail::check_mpi(
          MPI_Alltoall(outgoing_counts.data(), 1, MPI_INT64_T, incoming.data(), 1, MPI_INT64_T, comm_),
          "MPI_Alltoall");
    });
  } else {
    MPI_Request pending = MPI_REQUEST_NULL;
    detail::check_mpi(
        MPI_Ialltoall(outgoing_counts.data(), 1, MPI_INT64_T, incoming.data(), 1, MPI_INT64_T, comm_, &pending),
        "MPI_Ialltoall");
    complete(std::span(&pending, 1), "MPI_Alltoall", true);
  }
  if (!problem.empty()) throw invalid_argument(problem);
  for (std::size_t q = 0; q < incoming.size(); ++q) {
    if (incoming[q] < 0) {
      throw invalid_argument("exec::mpi::alltoallv: rank " + std::to_string(q) +
                             "'s counts were refused (expected one per rank, >= 0, summing to its "
                             "values, at most INT_MAX in all; that rank's error says which)");
    }
  }
  // Every rank gets here; the receive totals are agreed, so that every rank throws if one would
  // receive more than MPI's int counts can hold.
  std::int64_t largest_total = 0;
  for (const std::int64_t count : incoming) largest_total += count;
  allreduce(std::span<std::int64_t>(&largest_total, 1), reduce_op::max);
  if (largest_total > INT_MAX) {
    throw distributed_error("exec::mpi::alltoallv: expected every rank to receive at most INT_MAX values, found " +
                            std::to_string(largest_total) + " for one of them");
  }
  std::vector<int> receive_counts(incoming.size());
  std::vector<int> receive_displacements(incoming.size());
  int total = 0;
  for (std::size_t q = 0; q < incoming.size(); ++q) {
    receive_counts[q] = static_cast<int>(incoming[q]);
    receive_displacements[q] = total;
    total += receive_counts[q];
  }
  std::vector<T> received(static_cast<std::size_t>(total));
  // Valid addresses for empty buffers (MPI may reject a null one).
  T nothing_to_send{};
  T nothing_to_receive{};
  const T* outgoing = values.empty() ? &nothing_to_send : values.data();
  T* receive = received.empty() ? &nothing_to_receive : received.data();
  begin("MPI_Alltoallv");
  if (blocking_) {
    watched("MPI_Alltoallv", [&] {
      detail::check_mpi(MPI_Alltoallv(outgoing, send_counts.data(), send_displacements.data(), detail::mpi_type<T>(),
                                      receive, receive_counts.data(), receive_displacements.data(),
                                      detail::mpi_type<T>(), comm_),
                        "MPI_Alltoallv");
    });
  } else {
    MPI_Request pending = MPI_REQUEST_NULL;
    detail::check_mpi(MPI_Ialltoallv(outgoing, send_counts.data(), send_displacements.data(), detail::mpi_type<T>(),
                                     receive, receive_counts.data(), receive_displacements.data(),
                                     detail::mpi_type<T>(), comm_, &pending),
                      "MPI_Ialltoallv");
    complete(std::span(&pending, 1), "MPI_Alltoallv", true);
  }
  return received;
}

template <collective_value T>
mpi_request mpi::ireduce_scatter(std::span<T> values, std::span<T> mine, std::span<const std::int64_t> counts,
                                 reduce_op op) const {
  mpi_request started(*this, "MPI_Ireduce_scatter");
  auto [ints, displacements] = int_counts(counts, values.size(), "ireduce_scatter");
  if (mine.size() < static_cast<std::size_t>(ints[static_cast<std::size_t>(rank_)])) {
    throw invalid_argument("exec::mpi::ireduce_scatter: expected room for this rank's " +
                           std::to_string(ints[static_cast<std::size_t>(rank_)]) + " values, found " +
                           std::to_string(mine.size()));
  }
  begin("MPI_Ireduce_scatter");
  started.counts_ = std::move(ints);
  // A valid address for a piece of no values (MPI may reject a null buffer).
  static T nothing{};
  MPI_Request handle = MPI_REQUEST_NULL;
  detail::check_mpi(MPI_Ireduce_scatter(values.data(), mine.empty() ? &nothing : mine.data(), started.counts_.data(),
                                        detail::mpi_type<T>(), detail::mpi_op(op), comm_, &handle),
                    "MPI_Ireduce_scatter");
  started.handles_.push_back(handle);
  return started;
}

template <collective_value T>
mpi_request mpi::iallgatherv_in_place(std::span<T> buffer, std::span<const std::int64_t> counts) const {
  mpi_request started(*this, "MPI_Iallgatherv");
  auto [ints, displacements] = int_counts(counts, buffer.size(), "iallgatherv_in_place");
  if (buffer.empty()) return started;  // every rank's buffer is empty: nothing to move
  begin("MPI_Iallgatherv");
  started.counts_ = std::move(ints);
  started.displacements_ = std::move(displacements);
  MPI_Request handle = MPI_REQUEST_NULL;
  detail::check_mpi(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer.data(), started.counts_.data(),
                                    started.displacements_.data(), detail::mpi_type<T>(), comm_, &handle),
                    "MPI_Iallgatherv");
  started.handles_.push_back(handle);
  return started;
}

inline mpi mpi::split(int color, int key) const {
  propagate_errors([&] {
    if (color < 0) throw invalid_argument("exec::mpi::split: expected a color >= 0, found " + std::to_string(color));
  });
  MPI_Comm sub = MPI_COMM_NULL;
  detail::check_mpi(MPI_Comm_split(comm_, color, key, &sub), "MPI_Comm_split");
  return mpi(detail::own_communicator(sub), state_->options);
}

static_assert(ExecutionPolicy<mpi>);

}  // namespace onelearn::exec
