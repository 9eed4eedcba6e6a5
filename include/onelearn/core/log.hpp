#pragma once
/**
 * \file
 * \brief Where onelearn's messages go: the log sink an application may replace.
 * \ingroup core
 *
 * \code
 * #include <onelearn/core/log.hpp>
 *
 * // Send onelearn's messages (the progress lines of verbose fits and searches) to the
 * // application's own logger instead of std::cerr:
 * onelearn::LogSink previous = onelearn::set_log_sink(
 *     [](onelearn::LogLevel level, std::string_view message) {
 *       my_logger.write(onelearn::to_string(level), message);
 *     });
 * onelearn::cluster::KMeans<double> km({.n_clusters = 8, .verbose = 1});
 * km.fit(X);                              // one line per Lloyd iteration, to my_logger
 * onelearn::set_log_sink(previous);       // or set_log_sink({}): back to std::cerr
 *
 * // For a scope (a test, one phase of a run):
 * {
 *   onelearn::ScopedLogSink capture([&](onelearn::LogLevel, std::string_view m) {
 *     lines.emplace_back(m);
 *   });
 *   search.fit(X, y);
 * }                                       // the previous sink is back
 * \endcode
 *
 * The one place onelearn's messages go: `log_message(level, message)` hands each message, one line
 * without its newline, to the sink set with `set_log_sink`; the default sink writes
 * "onelearn: <message>\n" to std::cerr. Nothing is printed unless asked for: the estimators and
 * searches with a `verbose` parameter (KMeans, LogisticRegression, SGDClassifier,
 * SGDRegressor, GridSearchCV, RandomizedSearchCV, HalvingGridSearchCV, tune::run) log only
 * with verbose >= 1, and then only on rank 0 of their execution policy.
 *
 * Threads: set_log_sink and log_message may be called from any thread. A message goes to the
 * sink that was set when log_message took it; a sink that is replaced while a message is in it
 * finishes that message (it is kept alive until then). The sink is called outside any lock, so it
 * may log itself, and it must be safe to call from several threads at once when the application
 * logs from several threads (the default sink writes each message with one call, under a lock, so
 * lines do not interleave).
 *
 * Errors: none. A sink should not throw: its exception would leave the fit that logged, and
 * under a distributed policy only rank 0 calls the sink, so the other ranks would be left
 * waiting in the fit's next collective.
 *
 * Only the standard library: core/ includes nothing else of onelearn.
 */

#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace onelearn {

/// How much a message matters; sinks may filter on it. Progress lines are `info`.
enum class LogLevel { debug, info, warning, error };

[[nodiscard]] constexpr std::string_view to_string(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::debug:
      return "debug";
    case LogLevel::warning:
      return "warning";
    case LogLevel::error:
      return "error";
    case LogLevel::info:
      break;
  }
  return "info";
}

/// Receives each message: its level and one line of text without a newline.
using LogSink = std::function<void(LogLevel, std::string_view)>;

namespace detail {

/// The current sink, behind a shared pointer so that log_message can call it outside the lock while
/// set_log_sink replaces it. A function-local static: one per program, whatever the number of
/// translation units including this header.
struct LogState {
  std::mutex mutex;
  std::shared_ptr<const LogSink> sink;  ///< null: the default, std::cerr
};

inline LogState& log_state() {
  static LogState state;
  return state;
}

inline void write_to_stderr(LogLevel level, std::string_view message) {
  static std::mutex stderr_mutex;
  std::string line = "onelearn: ";
  if (level != LogLevel::info) line.append(to_string(level)).append(": ");
  line.append(message).push_back('\n');
  const std::lock_guard<std::mutex> lock(stderr_mutex);
  std::cerr << line << std::flush;
}

}  // namespace detail

/// Sets where onelearn's messages go from now on and returns the sink that was set before (an
/// empty LogSink when it was the default). An empty `sink` restores the default, std::cerr.
inline LogSink set_log_sink(LogSink sink) {
  std::shared_ptr<const LogSink> next;
  if (sink) next = std::make_shared<const LogSink>(std::move(sink));
  detail::LogState& state = detail::log_state();
  std::shared_ptr<const LogSink> previous;
  {
    const std::lock_guard<std::mutex> lock(state.mutex);
    previous = std::exchange(state.sink, std::move(next));
  }
  return previous ? *previous : LogSink{};
}

/// Hands `message` to the current sink. (Not called `log`: inside namespace onelearn that name
/// would hide the math function from unqualified calls.)
inline void log_message(LogLevel level, std::string_view message) {
  detail::LogState& state = detail::log_state();
  std::shared_ptr<const LogSink> sink;
  {
    const std::lock_guard<std::mutex> lock(state.mutex);
    sink = state.sink;
  }
  if (sink) {
    (*sink)(level, message);
  } else {
    detail::write_to_stderr(level, message);
  }
}

/// Sets a sink for the lifetime of this object, then puts the previous one back.
class ScopedLogSink {
 public:
  explicit ScopedLogSink(LogSink sink) : previous_(set_log_sink(std::move(sink))) {}
  ~ScopedLogSink() { set_log_sink(std::move(previous_)); }
  ScopedLogSink(const ScopedLogSink&) = delete;
  ScopedLogSink& operator=(const ScopedLogSink&) = delete;

 private:
  LogSink previous_;
};

namespace detail {

/// Whether a Params field only sets what a fit prints, not what it computes (`verbose`). Such a
/// field is left out where parameters must agree across ranks (only rank 0 prints, so
/// `verbose = rank == 0` is fine) and out of the parameters exported as ONNX metadata (they
/// describe the model, not how its fit reported).
[[nodiscard]] constexpr bool is_logging_param(std::string_view name) noexcept {
  return name == "verbose";
}

}  // namespace detail

}  // namespace onelearn
