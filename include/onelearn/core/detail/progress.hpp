#pragma once
// The progress lines of the verbose fits and searches (KMeans, LogisticRegression, the SGD
// estimators, the *SearchCV classes, tune::run), written in one place so that they all read
// alike:
//     "<who>: <what happened>; elapsed 1.23s, remaining ~4.56s"
// ProgressLog is silent unless verbose >= 1 on rank 0 of the policy; the lines go through
// core/log.hpp's sink. Callers test enabled() before building a line, so a quiet fit builds no
// strings.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "onelearn/core/log.hpp"

namespace onelearn::detail {

/// A duration short enough for a progress line: "0.01s", "3.45s", "42.1s", "2m05s", "1h02m";
/// "?" when it is not a finite, non-negative number of seconds.
inline std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  char buffer[32];
  if (seconds < 9.995) {
    std::snprintf(buffer, sizeof buffer, "%.2fs", seconds);
  } else if (seconds < 59.95) {
    std::snprintf(buffer, sizeof buffer, "%.1fs", seconds);
  } else if (seconds < 3600) {
    const auto s = static_cast<long long>(std::lround(seconds));
    std::snprintf(buffer, sizeof buffer, "%lldm%02llds", s / 60, s % 60);
  } else {
    const auto m = static_cast<long long>(std::lround(seconds / 60));
    std::snprintf(buffer, sizeof buffer, "%lldh%02lldm", m / 60, m % 60);
  }
  return buffer;
}

/// A score, a loss or a shift in a progress line: six significant digits ("0.936544",
/// "1.2e-05"), which is what a reader compares by eye; the exact values are in the results.
inline std::string format_quantity(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

/// What the count of work left means for the estimate of the time left.
enum class Remaining {
  estimate,  ///< the work left is known (folds, trials, runs): elapsed / done * left
  at_most,   ///< the work left is a limit (max_iter) that convergence may cut short
};

/// The progress lines of one fit or search. The clock starts at construction.
class ProgressLog {
 public:
  /// Silent unless verbose >= 1 and this process is rank 0 of `exec` (any policy: only its
  /// rank() is used, so core/ needs nothing from exec/).
  template <class Exec>
  ProgressLog(std::string_view who, std::int64_t verbose, const Exec& exec)
      : who_(who), enabled_(verbose >= 1 && exec.rank() == 0) {}

  [[nodiscard]] bool enabled() const noexcept { return enabled_; }

  [[nodiscard]] double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  /// "elapsed 1.23s, remaining ~4.56s" once `done` of `total` units of work are done, the time
  /// left taken as elapsed / done per unit ("remaining <= ..." for a limit, "remaining ?"
  /// before any unit is done).
  [[nodiscard]] std::string timing(double done, double total,
                                   Remaining kind = Remaining::estimate) const {
    const double seconds = elapsed();
    std::string out = "elapsed " + format_duration(seconds) + ", remaining ";
    if (!(done > 0)) return out + "?";
    const double left = total > done ? seconds / done * (total - done) : 0.0;
    return out + (kind == Remaining::at_most ? "<= " : "~") + format_duration(left);
  }

  /// "<who>: <text>" through the log sink, when enabled.
  void note(std::string_view text) const {
    if (!enabled_) return;
    std::string line = who_;
    line.append(": ").append(text);
    log_message(LogLevel::info, line);
  }

  /// "<who>: <text>; <timing(done, total, kind)>" through the log sink, when enabled.
  void step(std::string_view text, double done, double total,
            Remaining kind = Remaining::estimate) const {
    if (!enabled_) return;
    std::string line(text);
    line.append("; ").append(timing(done, total, kind));
    note(line);
  }

 private:
  std::string who_;
  bool enabled_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace onelearn::detail
