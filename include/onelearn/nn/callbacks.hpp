#pragma once
/**
 * \code
 * #include <onelearn/nn/callbacks.hpp>
 *
 * namespace nn = onelearn::nn;
 * nn::EarlyStopping stop({.monitor = "val_loss", .patience = 3, .restore_best_weights = true});
 * auto history = model.fit(X, y, {.epochs = 100, .validation_split = 0.2}, stop,
 *     [](auto& m, int epoch, const nn::Logs& logs) {      // a lambda: an on_epoch_end hook
 *       if (logs.at("loss") < 1e-3) m.stop_training();
 *     });
 * history.at("val_loss");  // one value per epoch run
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
 */

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"

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
struct History {
  std::vector<int> epoch;
  std::map<std::string, std::vector<double>> history;

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
    if (options_.mode == "auto") {
      maximize_ = options_.monitor.find("acc") != std::string::npos;
    } else if (options_.mode == "min" || options_.mode == "max") {
      maximize_ = options_.mode == "max";
    } else {
      throw invalid_argument("EarlyStopping: expected mode auto, min or max, found '" +
                             options_.mode + "'");
    }
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

}  // namespace onelearn::nn
