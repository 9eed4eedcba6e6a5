#pragma once
/**
 * \class onelearn::nn::ProgressBar
 * \brief Keras's progress bar (verbose=1) as a callback.
 * \ingroup callbacks
 *
 * <!-- example-context: nn -->
 * \code
 * #include <onelearn/nn/progress_bar.hpp>
 *
 * model.fit(X, y, {.epochs = 10, .validation_split = 0.1}, onelearn::nn::ProgressBar{});
 * model.fit(X, y, {.epochs = 10, .verbose = 1});         // the same: verbose 1 is a ProgressBar
 * std::ostringstream log;
 * model.fit(X, y, {.epochs = 10}, onelearn::nn::ProgressBar{log});   // to any stream
 * \endcode
 *
 * nn::ProgressBar: Keras's progress bar (verbose=1). Each epoch starts with `Epoch 3/10`; then,
 * on a terminal, one line is redrawn in place (with a carriage return) after the batches:
 *
 *     120/235 [==============>...............] - ETA: 2s - loss: 0.3120 - accuracy: 0.9051
 *
 * and finished at the epoch's end with its duration, the time per step and the epoch's logs
 * (validation values included):
 *
 *     235/235 [==============================] - 3s 12ms/step - loss: 0.3120 - val_loss: 0.2800
 *
 * When the stream is not a terminal (a log file, a pipe, a std::ostringstream) nothing is
 * redrawn: each epoch prints its `Epoch e/E` line and one plain line at its end,
 *
 *     235/235 - 3s 12ms/step - loss: 0.3120 - accuracy: 0.9051
 *
 * (Keras's verbose=2 line). Values are printed as Keras does: `%.4f`, or `%.4e` when
 * |v| <= 1e-3. The ETA is the mean time per batch so far times the batches left, as Keras's,
 * shown as `2s`, `1:05` or `1:02:03`; the time per step in s, ms or us.
 *
 * \par Options
 * - `interactive` (optional bool): redraw in place or not; by default, whether the stream is
 *   std::cout / std::cerr / std::clog attached to a terminal (isatty), false for other streams.
 * - `width` (default 30): characters inside the brackets.
 * - `interval` (default 0.05 s): the least time between two redraws (the last batch always
 *   draws), so a fast epoch does not spend its time printing.
 *
 * Only rank 0 of the model's execution policy prints; the others are silent.
 */

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <ostream>
#include <string>

#if defined(_WIN32)
#include <io.h>
#else
#include <unistd.h>
#endif

#include "onelearn/core/types.hpp"
#include "onelearn/nn/callbacks.hpp"

namespace onelearn::nn {

namespace detail {

/// Whether `os` is the standard output or error stream attached to a terminal.
inline bool is_terminal(const std::ostream& os) {
#if defined(_WIN32)
  if (&os == &std::cout) return _isatty(_fileno(stdout)) != 0;
  if (&os == &std::cerr || &os == &std::clog) return _isatty(_fileno(stderr)) != 0;
#else
  if (&os == &std::cout) return ::isatty(STDOUT_FILENO) != 0;
  if (&os == &std::cerr || &os == &std::clog) return ::isatty(STDERR_FILENO) != 0;
#endif
  return false;
}

/// Keras's value format: %.4f, or %.4e for magnitudes up to 1e-3.
inline std::string format_log_value(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, std::abs(v) > 1e-3 ? "%.4f" : "%.4e", v);
  return buf;
}

/// Keras's ETA: "2s", "1:05", "1:02:03".
inline std::string format_eta(double seconds) {
  const auto s = static_cast<long long>(seconds);
  char buf[64];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, (s % 3600) / 60, s % 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%llds", s);
  }
  return buf;
}

/// Keras's time per step: "1s/step", "12ms/step", "350us/step".
inline std::string format_per_step(double seconds) {
  char buf[64];
  if (seconds >= 1) {
    std::snprintf(buf, sizeof buf, "%.0fs/step", seconds);
  } else if (seconds >= 1e-3) {
    std::snprintf(buf, sizeof buf, "%.0fms/step", seconds * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0fus/step", seconds * 1e6);
  }
  return buf;
}

}  // namespace detail

struct ProgressBarOptions {
  std::optional<bool> interactive = std::nullopt;  ///< default: whether the stream is a terminal
  int width = 30;                                  ///< characters inside the brackets
  double interval = 0.05;                          ///< least seconds between two redraws
};

class ProgressBar {
 public:
  using Options = ProgressBarOptions;

  ProgressBar() : ProgressBar(std::cout) {}
  explicit ProgressBar(std::ostream& os, Options options = {})
      : os_(&os),
        options_(options),
        interactive_(options.interactive.value_or(detail::is_terminal(os))) {}

  template <class Model>
  void on_train_begin(Model& model) {
    active_ = model.execution_policy().rank() == 0;
    const FitParams& p = model.fit_params();
    epochs_ = p.epochs;
    steps_ = p.steps;
  }

  template <class Model>
  void on_epoch_begin(Model& /*model*/, int epoch) {
    if (!active_) return;
    *os_ << "Epoch " << epoch + 1 << '/' << epochs_ << '\n' << std::flush;
    start_ = Clock::now();
    last_draw_ = start_;
    drawn_width_ = 0;
  }

  template <class Model, class Logs_>
  void on_batch_end(Model& /*model*/, int batch, const Logs_& logs) {
    if (!active_ || !interactive_) return;
    const auto now = Clock::now();
    const index_t done = batch + 1;
    if (done < steps_ && seconds(last_draw_, now) < options_.interval) return;
    last_draw_ = now;
    if (done >= steps_) return;  // the epoch's end draws the finished bar (with val_* values)
    const double per_step = seconds(start_, now) / static_cast<double>(done);
    std::string line =
        bar(done) + " - ETA: " + detail::format_eta(per_step * static_cast<double>(steps_ - done)) +
        values(logs);
    draw(line);
  }

  template <class Model, class Logs_>
  void on_epoch_end(Model& /*model*/, int /*epoch*/, const Logs_& logs) {
    if (!active_) return;
    const double elapsed = seconds(start_, Clock::now());
    const std::string timing =
        detail::format_eta(elapsed) + " " +
        detail::format_per_step(elapsed / static_cast<double>(std::max<index_t>(steps_, 1)));
    if (interactive_) {
      draw(bar(steps_) + " - " + timing + values(logs));
      *os_ << '\n' << std::flush;
    } else {
      *os_ << steps_ << '/' << steps_ << " - " << timing << values(logs) << '\n' << std::flush;
    }
  }

  [[nodiscard]] bool interactive() const noexcept { return interactive_; }

 private:
  using Clock = std::chrono::steady_clock;

  static double seconds(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  }

  /// "120/235 [=============>................]", the count right-aligned as Keras's.
  [[nodiscard]] std::string bar(index_t done) const {
    const std::string total = std::to_string(steps_);
    std::string count = std::to_string(done);
    if (count.size() < total.size()) count.insert(0, total.size() - count.size(), ' ');
    const int width = options_.width;
    const auto filled = static_cast<int>(static_cast<double>(width) * static_cast<double>(done) /
                                         static_cast<double>(std::max<index_t>(steps_, 1)));
    std::string out = count + "/" + total + " [";
    if (filled > 0) {
      out.append(static_cast<std::size_t>(filled - 1), '=');
      out += done < steps_ ? '>' : '=';
    }
    out.append(static_cast<std::size_t>(std::max(width - filled, 0)), '.');
    return out + "]";
  }

  template <class Logs_>
  static std::string values(const Logs_& logs) {
    std::string out;
    for (const auto& [key, value] : logs) {
      out += " - " + key + ": " + detail::format_log_value(value);
    }
    return out;
  }

  /// Redraws the line in place, blanking what is left of a longer previous line.
  void draw(const std::string& line) {
    std::string padded = line;
    if (padded.size() < drawn_width_) padded.append(drawn_width_ - padded.size(), ' ');
    drawn_width_ = line.size();
    *os_ << '\r' << padded << std::flush;
  }

  std::ostream* os_;
  Options options_;
  bool interactive_;
  bool active_ = true;
  int epochs_ = 0;
  index_t steps_ = 0;
  Clock::time_point start_{}, last_draw_{};
  std::size_t drawn_width_ = 0;
};

}  // namespace onelearn::nn
