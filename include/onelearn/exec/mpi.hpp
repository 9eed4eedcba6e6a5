#pragma once
/**
 * \code
 * #include <onelearn/exec/mpi.hpp>   // link with MPI
 *
 * MPI_Init(&argc, &argv);            // the application owns MPI
 * onelearn::exec::mpi policy{comm};  // the application's communicator (MPI_COMM_WORLD by default)
 * // or: onelearn::exec::mpi policy{comm, {.timeout = std::chrono::seconds(30)}};
 * onelearn::linear_model::Ridge<double, onelearn::exec::mpi> ridge({.alpha = 1.0}, policy);
 * ridge.fit(my_X, my_y);             // each rank its own rows; all ranks end with the same model
 *
 * policy.set_step("epoch", 3, "batch", 17);    // named in the message if a collective hangs
 * std::vector<float> gradient = ...;
 * policy.allreduce(std::span(gradient), onelearn::exec::reduce_op::sum);
 * \endcode
 *
 * exec::mpi: data-parallel across the ranks of an MPI communicator the application owns.
 *
 * onelearn never calls MPI_Init or MPI_Finalize and never assumes MPI_COMM_WORLD: an HPC code
 * passes the communicator its ranks already train on. The communicator is used as given, not
 * duplicated: duplicating is collective and the duplicate would have to be freed before
 * MPI_Finalize, which a library object cannot guarantee. Only collectives are issued, so they
 * cannot be confused with the application's point-to-point messages.
 *
 * Method: no collective may hang silently: a rank that never joins (a skipped or reordered
 * collective, a crashed or stuck peer) becomes an error naming the rank, the operation and the
 * step. By default (on_timeout = abort) the collectives are the MPI library's blocking ones,
 * watched by a thread (exec/detail/mpi_watchdog.hpp) that prints that message and ends the
 * process when one overruns the timeout; the launcher then ends the job. PyTorch does the same
 * with NCCL collectives. With on_timeout = throw_error every collective is issued non-blocking
 * (MPI_Iallreduce, MPI_Ibcast, MPI_Iallgather, MPI_Iallgatherv, MPI_Ibarrier) and completed by
 * a loop of MPI_Test with a deadline, which can throw instead. The loop spins for 200 us (the
 * common case: the peers are there), then also yields the core every 64 tests until 10 ms,
 * then sleeps between tests, 50 us doubling to 1 ms, so a long wait does not burn a core.
 * `wait_all` applies the same loop and timeout (or the watchdog) to requests an algorithm
 * started itself (e.g. gradient buckets reduced while the backward pass runs). Copies of a
 * policy share their state (step label, call counter, failure) through a shared_ptr.
 *
 * Why abort is the default: Open MPI 4.1's non-blocking collectives are slower than its blocking
 * ones, about 2x for all-reduces from 4 KiB up (2 ranks of one host, float sums, MPI_Allreduce
 * against MPI_Iallreduce + MPI_Test: 1 KiB 0.5 us / 1.0, 4 KiB 1.0 / 6.8, 64 KiB 14 / 22, 1 MiB
 * 121 / 247, 4 MiB 512 / 1347, 64 MiB 31 / 60 ms), and after a timeout the communicator is
 * unusable either way (an MPI collective cannot be cancelled).
 *
 * Ranks that disagree on the number of steps should find out before the steps:
 * `check_same_shape("the number of steps", {n})` throws shape_error on every rank. Left to the
 * steps, the rank with more steps times out in its extra collective, unless the others' next
 * collective matches it wrongly (Open MPI then aborts, e.g. MPI_ERR_TRUNCATE).
 *
 * \par Options (mpi_options)
 * - `timeout` (default 10 minutes, > 0): a collective still incomplete after this long fails.
 *   It bounds every wait in a collective, including a wait for a rank that is busy on purpose
 *   (a longer trial of tune::run before its results are gathered, one rank writing a file):
 *   such codes need a timeout above their longest imbalance. The watchdog checks every 20 ms,
 *   so with abort the process ends up to 20 ms after the deadline.
 *   `mpi_options::no_timeout` (milliseconds::max()): the blocking MPI calls and no detection.
 * - `on_timeout` (default timeout_action::abort): print the message to stderr and end the
 *   process (exit status 1; blocking collectives, full speed), or timeout_action::throw_error:
 *   throw distributed_error on the ranks that waited (as exec::ucx does; non-blocking
 *   collectives, see above for their cost), for codes that can do something useful after a
 *   failed collective, such as writing a checkpoint.
 * All ranks pass the same options: in particular the same on_timeout and all or none
 * no_timeout, since MPI never matches a blocking collective with a non-blocking one.
 *
 * \par Step label
 * `set_step(what, n)` or `set_step(what, n, sub, m)` (noexcept, a few bytes copied, no
 * allocation) records where the algorithm is, e.g. "epoch 3, batch 17"; the timeout message
 * names it. Shared by the copies of the policy; a policy and its copies are used from one
 * thread at a time (as its collectives).
 *
 * Errors: `distributed_error` when an MPI call fails (on communicators set to MPI_ERRORS_RETURN;
 * with MPI's default handler MPI aborts first), or when a collective times out with
 * on_timeout = throw_error (with abort, the same text goes to stderr before the process ends):
 * "exec::mpi: rank 1: MPI_Allreduce #42 (step: epoch 3, batch 17): timed out after 600000 ms
 * (...)". An MPI collective cannot be cancelled or freed: the timed-out request stays pending
 * (kept by the policy), and MPI may still write into the buffer it was given if the missing
 * ranks join it later. So after a timeout the policy, its copies and the communicator are
 * unusable: every later collective of the policy throws at once; end the process (or keep that
 * buffer alive). `shape_error` on every rank from check_same_shape; the errors of
 * propagate_errors on every rank; `invalid_argument` for bad options and a broadcast root
 * outside 0..size-1.
 */

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/exec/detail/mpi_watchdog.hpp"
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

class mpi {
 public:
  static constexpr bool is_distributed = true;

  /// Uses `comm` (default MPI_COMM_WORLD) as given. MPI must already be initialized.
  explicit mpi(MPI_Comm comm = MPI_COMM_WORLD, const mpi_options& options = {})
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
    // ones, watched by detail::mpi_watchdog (see mpi_watchdog.hpp for why).
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
  template <collective_value T, std::size_t N>
  void broadcast(std::span<T, N> values, int root = 0) const {
    broadcast_raw(values, root, "MPI_Bcast");
  }

  /// The concatenation of every rank's `values`, in rank order, on every rank.
  template <collective_value T>
  [[nodiscard]] std::vector<T> allgatherv(std::span<const T> values) const {
    return gather_with_counts(values, "MPI_Allgather", "MPI_Allgatherv").first;
  }

  void barrier() const {
    begin("MPI_Barrier");
    if (blocking_) {
      watched("MPI_Barrier", [&] { detail::check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); });
      return;
    }
    MPI_Request request = MPI_REQUEST_NULL;
    detail::check_mpi(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier");
    complete(std::span(&request, 1), "MPI_Barrier", true);
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

  /// Throws shape_error on every rank, with every rank's shape in the message, unless all
  /// ranks pass the same `shape`. Never hangs: each rank makes the same two collective calls
  /// whatever it holds.
  void check_same_shape(std::string_view what, std::span<const std::int64_t> shape) const {
    const auto [shapes, counts] =
        gather_with_counts(shape, "MPI_Allgather (check_same_shape)", "MPI_Allgatherv (check_same_shape)");
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
    allreduce_named(&first_failed, 1, reduce_op::min, "MPI_Allreduce (propagate_errors)");
    if (first_failed == size_) return;

    const int root = static_cast<int>(first_failed);
    std::int64_t header[2] = {static_cast<std::int64_t>(code),
                              static_cast<std::int64_t>(message.size())};
    broadcast_raw(std::span(header), root, "MPI_Bcast (propagate_errors)");
    message.resize(static_cast<std::size_t>(header[1]));
    broadcast_raw(std::span(message.data(), message.size()), root, "MPI_Bcast (propagate_errors)");
    throw_error(static_cast<error_code>(header[0]), "on rank " + std::to_string(root) + ": " + message);
  }

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
    for (auto& request : requests) {
      if (request != MPI_REQUEST_NULL) state_->abandoned.push_back(request);
      if (!owned) request = MPI_REQUEST_NULL;
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
      MPI_Request request = MPI_REQUEST_NULL;
      detail::check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data + begin_at, count, detail::mpi_type<T>(),
                                       detail::mpi_op(op), comm_, &request),
                        "MPI_Iallreduce");
      complete(std::span(&request, 1), operation, true);
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
      MPI_Request request = MPI_REQUEST_NULL;
      detail::check_mpi(
          MPI_Ibcast(values.data() + begin_at, count, detail::mpi_type<T>(), root, comm_, &request),
          "MPI_Ibcast");
      complete(std::span(&request, 1), operation, true);
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
      MPI_Request request = MPI_REQUEST_NULL;
      detail::check_mpi(
          MPI_Iallgather(&mine, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm_, &request),
          "MPI_Iallgather");
      complete(std::span(&request, 1), counts_operation, true);
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
      MPI_Request request = MPI_REQUEST_NULL;
      detail::check_mpi(MPI_Iallgatherv(values.data(), static_cast<int>(mine), detail::mpi_type<T>(),
                                        gathered.data(), int_counts.data(), displacements.data(),
                                        detail::mpi_type<T>(), comm_, &request),
                        "MPI_Iallgatherv");
      complete(std::span(&request, 1), values_operation, true);
    }
    return {std::move(gathered), std::move(counts)};
  }

  MPI_Comm comm_;
  std::shared_ptr<detail::mpi_state> state_;
  int rank_ = 0;
  int size_ = 1;
  bool blocking_ = false;
};

static_assert(ExecutionPolicy<mpi>);

}  // namespace onelearn::exec
