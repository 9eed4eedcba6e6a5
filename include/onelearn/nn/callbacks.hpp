#pragma once
/**
 * \class onelearn::nn::EarlyStopping
 * \brief Stops training when a monitored value stops improving, as Keras's EarlyStopping; the
 * callback concept.
 * \ingroup callbacks
 *
 * <!-- example-context: nn -->
 * \code
 * #include <onelearn/nn/callbacks.hpp>
 *
 * namespace nn = onelearn::nn;
 * nn::EarlyStopping stop({.monitor = "val_loss", .patience = 3, .restore_best_weights = true});
 * auto history = model.fit(X, y, {.epochs = 100, .validation_split = 0.2}, stop,
 *     [](auto& m, int epoch, const nn::Logs& logs) {      // a lambda: an on_epoch_end hook
 *       if (logs.at("loss") < 1e-3) m.stop_training();
 *     });
 * const std::vector<double>& val_loss = history.at("val_loss");  // one value per epoch run
 * \endcode
 *
 * Callbacks are a concept, not a base class: fit takes any objects that have some of these
 * member functions (each optional; Model is the Sequential being trained, epochs and batches
 * count from 0 as in Keras):
 *   on_train_begin(Model&)
 *   on_epoch_begin(Model&, int epoch)
 *   on_batch_end(Model&, int batch, const Logs&)    // running means over the epoch so far
 *   on_epoch_end(Model&, int epoch, const Logs&)    // loss, metrics, val_loss, val_metrics
 *   on_train_end(Model&, const Logs&)               // the last epoch's logs
 * or that are callable as f(Model&, int epoch, const Logs&) (a lambda: an on_epoch_end hook).
 * A hook stops training by calling model.stop_training() (Keras's model.stop_training = True):
 * the current epoch finishes, then on_train_end runs. Hooks are resolved at compile time, so a
 * callback without on_batch_end costs nothing per batch; fit static_asserts that each callback
 * has at least one hook, so a misspelt hook name is a compile error, not a silent no-op.
 *
 * nn::EarlyStopping, as Keras 3's: after each epoch, `monitor` improves when it is below the
 * best so far by more than min_delta (above, in mode "max"; mode "auto" is "max" for monitors
 * containing "acc" and "min" otherwise). Training stops once `patience` epochs in a row have not
 * improved (never after the first epoch). With restore_best_weights, the weights of the best
 * epoch are restored at the end of training, whether or not it stopped early (Keras 3; Keras 2
 * restored only when it stopped early). Weights are kept as double, which is exact for float.
 * Attributes: stopped_epoch() (0 if it did not stop training), best_epoch(), best().
 *
 * Errors: `invalid_argument` when the monitored value is not in the logs (Keras only warns),
 * for an unknown mode, and for patience < 0.
 *
 * Also here: nn::CSVLogger (one row per epoch), nn::LearningRateScheduler (the rate per epoch
 * from fn(epoch, lr)), and nn::FitParams, what model.fit_params() tells callbacks about the
 * running fit (epochs, steps per epoch, the first epoch of a resumed fit, ...). Elsewhere:
 * nn::ProgressBar (nn/progress_bar.hpp) and nn::ModelCheckpoint (nn/checkpoint.hpp).
 */

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::nn {

/// Named values of an epoch or batch: loss, metrics, val_*. Updating a value in place does not
/// allocate, so the per-batch logs cost nothing after the first batch.
class Logs {
 public:
  void set(std::string_view name, double value) {
    for (auto& [key, v] : entries_) {
      if (key == name) {
        v = value;
        return;
      }
    }
    entries_.emplace_back(std::string(name), value);
  }

  [[nodiscard]] const double* find(std::string_view name) const noexcept {
    for (const auto& [key, v] : entries_) {
      if (key == name) return &v;
    }
    return nullptr;
  }
  [[nodiscard]] bool contains(std::string_view name) const noexcept {
    return find(name) != nullptr;
  }

  [[nodiscard]] double at(std::string_view name) const {
    if (const double* v = find(name)) return *v;
    throw invalid_argument("Logs.at: expected one of " + keys() + ", found '" + std::string(name) +
                           "'");
  }

  [[nodiscard]] std::string keys() const {
    std::string out;
    for (const auto& [key, v] : entries_) out += (out.empty() ? "" : ", ") + key;
    return out.empty() ? "(no values)" : out;
  }

  [[nodiscard]] auto begin() const noexcept { return entries_.begin(); }
  [[nodiscard]] auto end() const noexcept { return entries_.end(); }
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  void clear() noexcept { entries_.clear(); }

 private:
  std::vector<std::pair<std::string, double>> entries_;
};

/// What fit returns, as Keras's History: the epochs run and each logged value per epoch.
/// A fit resumed from a checkpoint returns the whole history, the checkpoint's epochs first.
struct History {
  std::vector<int> epoch;
  std::map<std::string, std::vector<double>> history;

  friend bool operator==(const History&, const History&) = default;

  /// The per-epoch values of `name` ("loss", "accuracy", "val_loss", ...).
  [[nodiscard]] const std::vector<double>& at(const std::string& name) const {
    const auto it = history.find(name);
    if (it == history.end()) {
      std::string known;
      for (const auto& [key, v] : history) known += (known.empty() ? "" : ", ") + key;
      throw invalid_argument("History.at: expected one of " + known + ", found '" + name + "'");
    }
    return it->second;
  }
};

/// What a callback may read about the fit in progress (Keras's callback.params), from
/// model.fit_params(): valid from on_train_begin to on_train_end.
struct FitParams {
  int epochs = 0;         ///< FitOptions::epochs: the epoch count the fit runs up to
  int initial_epoch = 0;  ///< the first epoch run (> 0 when resumed from a checkpoint)
  index_t steps = 0;      ///< batches per epoch
  index_t samples = 0;    ///< training rows
  index_t batch_size = 0;
  bool shuffle = true;
  std::uint64_t seed = 0;  ///< FitOptions::seed: the epochs' orders derive from it
  double validation_split = 0;
  bool validation_data = false;
  int verbose = 0;
  /// A hash of the training rows (X and y, over all ranks in rank order; a replicated fit's
  /// one copy): a resumed fit must train on the rows the checkpoint was written from. 0 in
  /// checkpoints written before it was recorded (then not checked).
  std::uint64_t data_fingerprint = 0;
  /// FitOptions::reproducible_blocks (0: off, and in checkpoints written before it).
  index_t reproducible_blocks = 0;
  /// How data_fingerprint hashes the rows (nn/detail/data_fingerprint.hpp): 2 in new fits, 1 in
  /// checkpoints written before 2026-11-29 (and in a fit resumed from one).
  int fingerprint_scheme = 1;
};

namespace detail {
/// "auto" mode of EarlyStopping and ModelCheckpoint: maximise monitors that are accuracies.
inline bool maximize_monitor(const char* where, const std::string& mode,
                             const std::string& monitor) {
  if (mode == "auto") return monitor.find("acc") != std::string::npos;
  if (mode == "min" || mode == "max") return mode == "max";
  throw invalid_argument(std::string(where) + ": expected mode auto, min or max, found '" + mode +
                         "'");
}

/// Python's repr of a float for the values CSVLogger writes: the shortest decimal string that
/// reads back as the same double.
inline std::string shortest(double v) {
  std::array<char, 32> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return std::string(buf.data(), res.ptr);
}
}  // namespace detail

class EarlyStopping {
 public:
  struct Options {
    std::string monitor = "val_loss";
    double min_delta = 0;
    int patience = 0;
    std::string mode = "auto";  ///< "auto", "min" or "max"
    bool restore_best_weights = false;
    int start_from_epoch = 0;  ///< epochs before this one are not monitored
  };

  EarlyStopping() : EarlyStopping(Options{}) {}
  EarlyStopping(Options options)  // NOLINT(google-explicit-constructor): nn::EarlyStopping{{...}}
      : options_(std::move(options)) {
    maximize_ = detail::maximize_monitor("EarlyStopping", options_.mode, options_.monitor);
    if (options_.patience < 0) {
      throw invalid_argument("EarlyStopping: expected patience >= 0, found " +
                             std::to_string(options_.patience));
    }
  }

  template <class Model>
  void on_train_begin(Model& /*model*/) {
    wait_ = 0;
    stopped_epoch_ = 0;
    best_epoch_ = 0;
    best_ = maximize_ ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity();
    best_weights_.clear();
  }

  template <class Model, class Logs_>
  void on_epoch_end(Model& model, int epoch, const Logs_& logs) {
    const double* value = logs.find(options_.monitor);
    if (value == nullptr) {
      throw invalid_argument("EarlyStopping: expected the monitored value '" + options_.monitor +
                             "' in the epoch's logs, found only " + logs.keys() +
                             " (val_* values need validation_split > 0)");
    }
    if (epoch < options_.start_from_epoch) return;
    if (options_.restore_best_weights && best_weights_.empty()) {
      save(model);
      best_epoch_ = epoch;
    }
    ++wait_;
    const double current = *value;
    const bool improved = maximize_ ? current - std::abs(options_.min_delta) > best_
                                    : current + std::abs(options_.min_delta) < best_;
    if (improved) {
      best_ = current;
      best_epoch_ = epoch;
      if (options_.restore_best_weights) save(model);
      wait_ = 0;
      return;
    }
    if (wait_ >= options_.patience && epoch > 0) {
      stopped_epoch_ = epoch;
      model.stop_training();
    }
  }

  template <class Model, class Logs_>
  void on_train_end(Model& model, const Logs_& /*logs*/) {
    if (!options_.restore_best_weights || best_weights_.empty()) return;
    using T = typename Model::value_type;
    std::vector<std::vector<T>> weights;
    weights.reserve(best_weights_.size());
    for (const auto& w : best_weights_) {
      weights.emplace_back(w.size());
      std::transform(w.begin(), w.end(), weights.back().begin(),
                     [](double v) { return static_cast<T>(v); });
    }
    model.set_weights(weights);
  }

  [[nodiscard]] int stopped_epoch() const noexcept { return stopped_epoch_; }
  [[nodiscard]] int best_epoch() const noexcept { return best_epoch_; }
  [[nodiscard]] double best() const noexcept { return best_; }
  [[nodiscard]] const Options& options() const noexcept { return options_; }

 private:
  template <class Model>
  void save(Model& model) {
    const auto weights = model.get_weights();
    best_weights_.resize(weights.size());
    for (std::size_t i = 0; i < weights.size(); ++i) {
      best_weights_[i].assign(weights[i].begin(), weights[i].end());
    }
  }

  Options options_;
  bool maximize_ = false;
  int wait_ = 0;
  int stopped_epoch_ = 0;
  int best_epoch_ = 0;
  double best_ = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best_weights_;
};

/// Keras's CSVLogger: one row per epoch, `epoch` (from 0) then the logged values in the order
/// of their names (Keras sorts them), the first row a header. Values are written as the
/// shortest decimal that reads back as the same double (Python's repr). With append, rows are
/// added to an existing file and the header is written only when the file is empty or new.
/// The file is flushed after every row, so a crash keeps the epochs finished. Only rank 0 of
/// a distributed policy writes.
/// Errors: `io_error` when the file cannot be opened or written.
class CSVLogger {
 public:
  explicit CSVLogger(std::filesystem::path path, bool append = false, char separator = ',')
      : path_(std::move(path)), append_(append), separator_(separator) {}

  template <class Model>
  void on_train_begin(Model& model) {
    active_ = model.execution_policy().rank() == 0;
    if (!active_) return;
    std::error_code ec;
    const bool has_content = append_ && std::filesystem::exists(path_, ec) &&
                             std::filesystem::file_size(path_, ec) > 0 && !ec;
    write_header_ = !has_content;
    keys_.clear();
    out_.open(path_, append_ ? std::ios::app : std::ios::trunc);
    if (!out_) {
      throw io_error("CSVLogger: expected to open '" + path_.string() +
                     "' for writing, found that it cannot be opened");
    }
  }

  template <class Model, class Logs_>
  void on_epoch_end(Model& /*model*/, int epoch, const Logs_& logs) {
    if (!active_) return;
    if (keys_.empty()) {
      for (const auto& [key, value] : logs) keys_.push_back(key);
      std::sort(keys_.begin(), keys_.end());
      if (write_header_) {
        out_ << "epoch";
        for (const auto& key : keys_) out_ << separator_ << key;
        out_ << '\n';
      }
    }
    out_ << epoch;
    for (const auto& key : keys_) {
      const double* v = logs.find(key);
      out_ << separator_ << (v != nullptr ? detail::shortest(*v) : std::string("NA"));
    }
    out_ << '\n' << std::flush;
    if (!out_) {
      throw io_error("CSVLogger: expected to write to '" + path_.string() +
                     "', found a write error");
    }
  }

  template <class Model, class Logs_>
  void on_train_end(Model& /*model*/, const Logs_& /*logs*/) {
    if (out_.is_open()) out_.close();
  }

 private:
  std::filesystem::path path_;
  bool append_;
  char separator_;
  bool active_ = false;
  bool write_header_ = true;
  std::vector<std::string> keys_;
  std::ofstream out_;
};

/// Keras's LearningRateScheduler: at the start of each epoch, the optimizer's learning rate
/// becomes schedule(epoch, lr), lr being the rate the next update would use (epochs from 0).
/// A schedule may also take the epoch alone. The new rate is a constant: it replaces an
/// optimizer's own schedule (Keras refuses to set a schedule-driven rate). The rate survives
/// in checkpoints, so a resumed fit continues the same sequence.
/// Errors: `invalid_argument` when the schedule returns a negative or non-finite rate.
class LearningRateScheduler {
 public:
  using Schedule = std::function<double(int, double)>;

  template <class F>
  requires std::invocable<const F&, int, double> || std::invocable<const F&, int>
  explicit LearningRateScheduler(F schedule) {
    if constexpr (std::invocable<const F&, int, double>) {
      schedule_ = std::move(schedule);
    } else {
      schedule_ = [f = std::move(schedule)](int epoch, double) { return f(epoch); };
    }
  }

  template <class Model>
  void on_epoch_begin(Model& model, int epoch) {
    auto& optimizer = model.optimizer();
    const double lr = schedule_(epoch, optimizer.learning_rate());
    if (!(std::isfinite(lr) && lr >= 0)) {
      throw invalid_argument(
          "LearningRateScheduler: expected a finite learning rate >= 0 for "
          "epoch " +
          std::to_string(epoch) + ", found " + std::to_string(lr));
    }
    optimizer.set_learning_rate(lr);
  }

 private:
  Schedule schedule_;
};

}  // namespace onelearn::nn
