#pragma once
/**
 * \file
 * \ingroup policies
 *
 * The thread that ends the process when a blocking MPI call overruns its deadline: exec::mpi's
 * timeout with on_timeout = abort (the default).
 *
 * Why a thread: a blocking MPI collective cannot be interrupted, and its non-blocking form is
 * slower. Open MPI 4.1's MPI_Iallreduce (libnbc) + MPI_Test takes about twice as long as
 * MPI_Allreduce from 4 KiB up (2 ranks of one host: 4 KiB 6.8 us against 1.0, 1 MiB 247 against
 * 121, 4 MiB 1.35 ms against 0.51). So the collectives stay blocking, and this thread watches
 * their deadlines, as PyTorch's NCCL watchdog does: when one passes, it prints the caller's
 * message to stderr and ends the process with exit status 1, which makes the MPI launcher end
 * the job (a process that exits without MPI_Finalize). It never calls MPI itself: the
 * application's MPI may be initialized for one thread only.
 *
 * Cost per watched call: two uncontended mutex lock/unlock pairs (tens of nanoseconds). The
 * thread wakes every `mpi_watchdog_period` to compare deadlines; it is started at the first
 * watched call and never stopped (it must outlive every policy, static ones included), so the
 * watchdog object is never destroyed either.
 */

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace onelearn::exec::detail {

/// How often the watchdog compares deadlines: the timeout fires up to this much late.
constexpr std::chrono::milliseconds mpi_watchdog_period{20};

/// One blocking call being watched. `describe(context)` gives the message printed if its
/// deadline passes; it runs on the watchdog thread while the caller is still blocked inside
/// the call (the caller cannot leave the call's guard without the watchdog's mutex).
struct mpi_watched_call {
  std::chrono::steady_clock::time_point deadline;
  const void* context;
  std::string (*describe)(const void* context);
};

class mpi_watchdog {
 public:
  static mpi_watchdog& instance() {
    static mpi_watchdog* const watchdog = new mpi_watchdog();  // never destroyed, see above
    return *watchdog;
  }

  void arm(const mpi_watched_call* call) {
    const std::lock_guard lock(mutex_);
    calls_.push_back(call);
  }

  void disarm(const mpi_watched_call* call) {
    const std::lock_guard lock(mutex_);
    calls_.erase(std::find(calls_.begin(), calls_.end(), call));
  }

 private:
  mpi_watchdog() { std::thread([this] { watch(); }).detach(); }

  [[noreturn]] void watch() {
    for (;;) {
      std::this_thread::sleep_for(mpi_watchdog_period);
      const std::lock_guard lock(mutex_);
      const auto now = std::chrono::steady_clock::now();
      for (const mpi_watched_call* call : calls_) {
        if (now < call->deadline) continue;
        const std::string message = call->describe(call->context);
        std::fprintf(stderr, "%s; ending the process (exec::mpi on_timeout = abort)\n", message.c_str());
        std::fflush(stderr);
        std::_Exit(EXIT_FAILURE);
      }
    }
  }

  std::mutex mutex_;
  std::vector<const mpi_watched_call*> calls_;
};

/// Watches one blocking call for as long as it lives (does nothing when `active` is false).
class mpi_watch_guard {
 public:
  mpi_watch_guard(bool active, const mpi_watched_call& call) : call_(active ? &call : nullptr) {
    if (call_ != nullptr) mpi_watchdog::instance().arm(call_);
  }
  mpi_watch_guard(const mpi_watch_guard&) = delete;
  mpi_watch_guard& operator=(const mpi_watch_guard&) = delete;
  ~mpi_watch_guard() {
    if (call_ != nullptr) mpi_watchdog::instance().disarm(call_);
  }

 private:
  const mpi_watched_call* call_;
};

}  // namespace onelearn::exec::detail
