#pragma once
/**
 * \class onelearn::nn::ModelCheckpoint
 * \brief Saves the whole training state during fit, for an exact resume, as Keras's
 * ModelCheckpoint.
 * \ingroup callbacks
 *
 * <!-- example-context: nn -->
 * \code
 * #include <onelearn/nn/sequential.hpp>   // includes this header
 *
 * namespace nn = onelearn::nn;
 * // Save the whole training state after every epoch (or only the best one, or every N).
 * model.fit(X, y, {.epochs = 10, .seed = 7}, nn::ModelCheckpoint("run.olc"));
 * model.fit(X, y, {.epochs = 50, .validation_split = 0.1},
 *           nn::ModelCheckpoint("best.olc", {.monitor = "val_accuracy", .save_best_only = true}));
 *
 * // After a crash: a fresh model, compiled the same way, continues where the file left off,
 * // bit for bit as if training had never stopped.
 * auto fresh = make_model();
 * fresh.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true});  // as before
 * fresh.fit(X, y, {.epochs = 10, .seed = 7, .resume_from = "run.olc"});
 * \endcode
 *
 * nn::ModelCheckpoint: Keras's ModelCheckpoint callback, writing checkpoints that hold
 * everything a fit needs to continue exactly: the weights and layer state, the optimizer's
 * state (every slot buffer and the step count, and its learning rate when a callback made it a
 * constant), the number of epochs done, the seeds behind the epochs' shuffles (the build seed
 * and the fit seed: orders are keyed by (seed, epoch), so these are the whole shuffle RNG
 * state), each Dropout layer's mask-stream position, the fit's settings, and the History so
 * far. The file format is nn/weights_io.hpp's with the magic "OLNNCKP"; it is written whole or
 * not at all (temporary file, then rename).
 *
 * \par Options (ModelCheckpointOptions)
 * - `monitor` (default "val_loss"), `mode` ("auto", "min", "max"; auto maximises monitors
 *   containing "acc"), as Keras's.
 * - `save_best_only` (default false): save only when `monitor` improves on the best value so
 *   far (a resumed fit starts from the best value in the restored History).
 * - `save_freq_epochs` (default 1): otherwise, save after every N-th epoch (epochs counted
 *   from 1: with 5, after epochs 5, 10, ...).
 * - `save_weights_only` (default false): write a weights file (save_weights) instead.
 * - `path` may contain "{epoch}", replaced by the epoch number (from 1), to keep one file per
 *   epoch.
 * - `keep_last` (default 0 = all): with "{epoch}", only the newest N files of the pattern are
 *   kept after each save (a restarted run's earlier files count too).
 *
 * \par Restarts (onelearn-run)
 * `nn::latest_checkpoint(model, dir)` is the newest complete checkpoint in `dir` (a corrupt one
 * is skipped for the one before it), or an empty path; with `resume_from` set to it, a program
 * that onelearn-run restarts continues where the last checkpoint left off, bit for bit, and
 * starts fresh the first time.
 * Attributes: best(), best_epoch() (from 0; -1 before any save), saves().
 *
 * \par Resuming: `FitOptions::resume_from` rather than Keras's `initial_epoch`
 * fit(X, y, {..., .resume_from = path}) loads the checkpoint (building the model first if
 * needed), checks that the fit's seed, batch size, shuffle, validation settings, number of
 * training rows and the rows themselves (a fingerprint: a hash of X and y) are the ones the
 * checkpoint was written with (any difference would silently change the batches), and that
 * `epochs` is above the checkpoint's epoch (else there is nothing to train: an error, not the
 * old History), starts at the checkpoint's epoch, and returns the whole History. With
 * Keras's `initial_epoch` the user restates the epoch and must remember to load the optimizer
 * and RNG state by hand; a mistake gives a different run without any error. Sequential also has
 * save_checkpoint(path) and load_checkpoint(path) (which restores the state and returns the
 * CheckpointData) for use outside fit.
 *
 * \par Limits
 * - A checkpoint restores into a model declared and compiled as the saved one: the optimizer
 *   class and a learning-rate schedule are code, not data (the schedule is recomputed from the
 *   restored step; its value there must equal the saved one).
 * - A built model keeps its Dropout seeds, so resuming into a model already built with another
 *   build seed is refused; resume into a fresh (unbuilt) model.
 * - Dropout's mask stream is keyed by a call count that DropoutLayer does not let one set; it
 *   is restored by advancing the stream (one cheap 1-element mask per call), so a model whose
 *   Dropout is already past the checkpoint's position cannot be rewound (an error).
 *
 * Errors: those of nn/weights_io.hpp (io_error for unreadable, foreign, truncated or corrupt
 * files and another scalar type; shape_error for another architecture); `not_fitted_error`
 * when loading optimizer state into a model that is not compiled; `invalid_argument` for
 * another optimizer class, a learning-rate schedule that does not reproduce the saved rate, a
 * model built with another seed, Dropout past the checkpoint, and (in ModelCheckpoint) a
 * monitor missing from the logs, an unknown mode or save_freq_epochs < 1; `io_error` from
 * ModelCheckpoint when its directory does not exist or cannot be written, raised as training
 * begins (on the rank that writes; fit raises it on every rank), not after the first epoch.
 */

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/callbacks.hpp"
#include "onelearn/nn/layers/dropout.hpp"
#include "onelearn/nn/optimizers.hpp"
#include "onelearn/nn/weights_io.hpp"

namespace onelearn::nn {

/// What a checkpoint holds beyond the weights and the optimizer state.
struct CheckpointData {
  int epoch = 0;                 ///< epochs done: a resumed fit runs from this epoch on
  std::uint64_t build_seed = 0;  ///< the seed the model was built (its weights drawn) with
  FitParams fit;                 ///< the settings of the fit that wrote it
  History history;               ///< the History up to `epoch`
};

namespace detail {

template <class Model>
void write_checkpoint(Model& model, const std::filesystem::path& path, int epoch) {
  using T = typename Model::value_type;
  const std::string where = "Sequential.save_checkpoint";
  if (!model.is_built()) {
    throw not_fitted_error(where +
                           ": expected a built model, found one that is not built yet; "
                           "call fit (or build) first");
  }
  ByteWriter w = begin_file<T>(checkpoint_magic);
  w.u64(model.build_seed());
  write_architecture(w, architecture_of(model));
  write_values(w, model);

  w.i64(epoch);
  const FitParams& p = model.fit_params();
  w.i64(p.epochs);
  w.i64(p.initial_epoch);
  w.i64(p.steps);
  w.i64(p.samples);
  w.i64(p.batch_size);
  w.u8(p.shuffle ? 1 : 0);
  w.u64(p.seed);
  w.f64(p.validation_split);
  w.u8(p.validation_data ? 1 : 0);

  w.u8(model.is_compiled() ? 1 : 0);
  if (model.is_compiled()) {
    auto& opt = model.optimizer();
    w.str(opt.name());
    w.i64(opt.iterations());
    w.u8(opt.has_constant_learning_rate() ? 1 : 0);
    w.f64(opt.learning_rate());
    const auto state = opt.state();
    w.u32(static_cast<std::uint32_t>(state.size()));
    for (const auto& s : state) w.u64(s.size());
    for (const auto& s : state) w.values(std::span<const T>(s));
  }

  w.u32(static_cast<std::uint32_t>(model.size()));
  for (std::size_t i = 0; i < model.size(); ++i) {
    const auto* dropout = dynamic_cast<const DropoutLayer<T>*>(&model.layer(i));
    w.u64(dropout != nullptr ? dropout->calls() : 0);
  }

  const History& h = model.history();
  w.u32(static_cast<std::uint32_t>(h.epoch.size()));
  for (int e : h.epoch) w.i64(e);
  w.u32(static_cast<std::uint32_t>(h.history.size()));
  for (const auto& [key, values] : h.history) {
    w.str(key);
    w.u32(static_cast<std::uint32_t>(values.size()));
    for (double v : values) w.f64(v);
  }
  // Last, so that checkpoints written before it (which end after the History) still load.
  w.u64(p.data_fingerprint);
  w.i64(p.reproducible_blocks);  // after the fingerprint, for the same reason
  w.u32(static_cast<std::uint32_t>(p.fingerprint_scheme));  // likewise
  finish_file(where, path, w);
}

/// Reads a checkpoint and restores it into `model` (building it first when it is not built).
/// Everything is read and checked before the model is changed, so a failed load leaves it as
/// it was (except that an unbuilt model may have been built).
template <class Model>
CheckpointData read_checkpoint(Model& model, const std::filesystem::path& path) {
  using T = typename Model::value_type;
  const std::string where = "Sequential.load_checkpoint";
  const std::string bytes = read_file<T>(where, path, checkpoint_magic);
  ByteReader r(std::string_view(bytes).substr(header_size), where);
  CheckpointData data;
  data.build_seed = r.u64();
  const Architecture file = read_architecture(r);

  if (model.is_built() && model.build_seed() != data.build_seed) {
    throw invalid_argument(where + ": expected a model built with seed " +
                           std::to_string(data.build_seed) +
                           " (the checkpoint's) or not built, "
                           "found one built with seed " +
                           std::to_string(model.build_seed()) +
                           " (its Dropout masks would differ); resume into a fresh model");
  }
  build_for_file(model, file, data.build_seed);
  check_built_for(where, path, model, file);
  check_architecture(where, path.string(), file, architecture_of(model));

  // Parameters and layer state, into temporaries first.
  std::vector<std::vector<T>> values;
  for (std::size_t i = 0; i < model.size(); ++i) {
    for (const auto& p : model.layer(i).parameters()) {
      values.emplace_back(p.size());
      r.values(std::span<T>(values.back()));
    }
    for (const auto& s : model.layer(i).state()) {
      values.emplace_back(s.size());
      r.values(std::span<T>(values.back()));
    }
  }

  data.epoch = static_cast<int>(r.i64());
  FitParams& p = data.fit;
  p.epochs = static_cast<int>(r.i64());
  p.initial_epoch = static_cast<int>(r.i64());
  p.steps = r.i64();
  p.samples = r.i64();
  p.batch_size = r.i64();
  p.shuffle = r.u8() != 0;
  p.seed = r.u64();
  p.validation_split = r.f64();
  p.validation_data = r.u8() != 0;

  const bool has_optimizer = r.u8() != 0;
  std::string opt_name;
  std::int64_t iterations = 0;
  bool constant_lr = true;
  double lr = 0;
  std::vector<std::vector<T>> slots;
  if (has_optimizer) {
    opt_name = r.str();
    iterations = r.i64();
    constant_lr = r.u8() != 0;
    lr = r.f64();
    const std::uint32_t n = r.u32();
    std::vector<std::uint64_t> sizes;
    for (std::uint32_t i = 0; i < n; ++i) sizes.push_back(r.u64());
    for (const auto size : sizes) {
      r.expect(size, sizeof(T));
      slots.emplace_back(static_cast<std::size_t>(size));
      r.values(std::span<T>(slots.back()));
    }
    if (!model.is_compiled()) {
      throw not_fitted_error(where + ": expected a compiled model to restore the " + opt_name +
                             " optimizer state into, found one that is not compiled; compile it "
                             "as the saved model was");
    }
    auto& opt = model.optimizer();
    if (opt.name() != opt_name) {
      throw invalid_argument(where + ": expected the model to be compiled with " + opt_name +
                             " (the checkpoint's optimizer), found " + std::string(opt.name()));
    }
    const auto state = opt.state();
    if (state.size() != slots.size()) {
      throw shape_error(where + ": expected " + std::to_string(slots.size()) + " " + opt_name +
                        " state buffers (the checkpoint's), found " + std::to_string(state.size()) +
                        " in the model's optimizer (another "
                        "configuration, e.g. momentum on or off)");
    }
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (state[i].size() != slots[i].size()) {
        throw shape_error(where + ": expected optimizer state buffer " + std::to_string(i) +
                          " of " + std::to_string(slots[i].size()) + " values, found " +
                          std::to_string(state[i].size()));
      }
    }
    if (!constant_lr) {
      const double here = [&] {
        if (opt.has_constant_learning_rate()) return std::numeric_limits<double>::quiet_NaN();
        const std::int64_t saved = opt.iterations();
        opt.set_iterations(iterations);
        const double v = opt.learning_rate();
        opt.set_iterations(saved);
        return v;
      }();
      if (!(here == lr)) {
        throw invalid_argument(
            where + ": expected the model's learning-rate schedule to give " + std::to_string(lr) +
            " at step " + std::to_string(iterations) + " (the checkpoint's), found " +
            (opt.has_constant_learning_rate() ? std::string("a constant learning rate")
                                              : std::to_string(here)) +
            "; compile the model with the saved schedule");
      }
    }
  }

  const std::uint32_t n_layers = r.u32();
  std::vector<std::uint64_t> calls;
  for (std::uint32_t i = 0; i < n_layers; ++i) calls.push_back(r.u64());
  if (calls.size() != model.size())
    r.fail("a dropout table of " + std::to_string(n_layers) + " layers");
  for (std::size_t i = 0; i < model.size(); ++i) {
    const auto* dropout = dynamic_cast<const DropoutLayer<T>*>(&model.layer(i));
    if (dropout != nullptr && dropout->calls() > calls[i]) {
      throw invalid_argument(where + ": expected Dropout layer " + std::to_string(i) +
                             " to be at most at mask " + std::to_string(calls[i]) +
                             " (the checkpoint's), found it at " +
                             std::to_string(dropout->calls()) +
                             " (it cannot be rewound); resume into a fresh model, or use "
                             "load_weights for the weights alone");
    }
  }

  const std::uint32_t n_epochs = r.u32();
  for (std::uint32_t i = 0; i < n_epochs; ++i)
    data.history.epoch.push_back(static_cast<int>(r.i64()));
  const std::uint32_t n_keys = r.u32();
  for (std::uint32_t k = 0; k < n_keys; ++k) {
    std::string key = r.str();
    const std::uint32_t n = r.u32();
    r.expect(n, sizeof(double));
    std::vector<double> v(n);
    for (auto& x : v) x = r.f64();
    data.history.history.emplace(std::move(key), std::move(v));
  }
  if (r.remaining() >= sizeof(std::uint64_t)) p.data_fingerprint = r.u64();
  if (r.remaining() >= sizeof(std::int64_t)) p.reproducible_blocks = r.i64();
  if (r.remaining() >= sizeof(std::uint32_t)) {
    const std::uint32_t scheme = r.u32();
    if (scheme != 1 && scheme != 2) {
      throw io_error(where + ": expected fingerprint scheme 1 or 2 in checkpoint " +
                     path.string() + ", found " + std::to_string(scheme));
    }
    p.fingerprint_scheme = static_cast<int>(scheme);
  }

  // Everything checked: apply.
  std::size_t next = 0;
  for (std::size_t i = 0; i < model.size(); ++i) {
    for (const auto& s : model.layer(i).parameters()) {
      std::copy(values[next].begin(), values[next].end(), s.begin());
      ++next;
    }
    for (const auto& s : model.layer(i).state()) {
      std::copy(values[next].begin(), values[next].end(), s.begin());
      ++next;
    }
  }
  if (has_optimizer) {
    auto& opt = model.optimizer();
    const auto state = opt.state();
    for (std::size_t i = 0; i < slots.size(); ++i) {
      std::copy(slots[i].begin(), slots[i].end(), state[i].begin());
    }
    opt.set_iterations(iterations);
    if (constant_lr) opt.set_learning_rate(lr);
  }
  for (std::size_t i = 0; i < model.size(); ++i) {
    auto* dropout = dynamic_cast<DropoutLayer<T>*>(&model.layer(i));
    if (dropout == nullptr) continue;
    // Advance the mask stream to the saved position: one training call per mask.
    const T zero = T(0);
    const Shape one{1, 1};
    while (dropout->calls() < calls[i]) {
      const std::uint64_t before = dropout->calls();
      (void)dropout->forward(TensorView<const T>{&zero, one}, true);
      if (dropout->calls() == before) break;  // rate 0: no stream to advance
    }
  }
  return data;
}

/// io_error unless `dir` is a directory this process can create files in (`where` names the
/// caller): checked before training rather than found when the first checkpoint is written.
inline void check_writable_directory(const std::string& where, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw io_error(where + ": expected a checkpoint directory at '" + dir.string() +
                   "', found none");
  }
  const fs::path probe = dir / (".onelearn-write-test." + std::to_string(::getpid()));
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (f == nullptr) {
    throw io_error(where + ": expected a writable checkpoint directory at '" + dir.string() +
                   "', found one that cannot be written");
  }
  std::fclose(f);
  fs::remove(probe, ec);
}

}  // namespace detail

struct ModelCheckpointOptions {
  std::string monitor = "val_loss";
  std::string mode = "auto";  ///< "auto", "min" or "max"
  bool save_best_only = false;
  int save_freq_epochs = 1;
  bool save_weights_only = false;
  /// With "{epoch}" in the path: after each save, only the newest keep_last files of that
  /// pattern (by epoch number, whoever wrote them: a restarted run's earlier attempt too) are
  /// kept. 0 keeps every file.
  int keep_last = 0;
};

class ModelCheckpoint {
 public:
  using Options = ModelCheckpointOptions;

  explicit ModelCheckpoint(std::filesystem::path path, Options options = {})
      : path_(std::move(path)), options_(std::move(options)) {
    maximize_ = detail::maximize_monitor("ModelCheckpoint", options_.mode, options_.monitor);
    if (options_.save_freq_epochs < 1) {
      throw invalid_argument("ModelCheckpoint: expected save_freq_epochs >= 1, found " +
                             std::to_string(options_.save_freq_epochs));
    }
    if (options_.keep_last < 0) {
      throw invalid_argument("ModelCheckpoint: expected keep_last >= 0, found " +
                             std::to_string(options_.keep_last));
    }
  }

  template <class Model>
  void on_train_begin(Model& model) {
    if (model.execution_policy().rank() == 0) {
      detail::check_writable_directory("ModelCheckpoint",
                                       path_.has_parent_path() ? path_.parent_path() : ".");
    }
    best_ = maximize_ ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity();
    best_epoch_ = -1;
    // A resumed fit: the best so far is in the restored History.
    const auto& h = model.history();
    const auto it = h.history.find(options_.monitor);
    if (it == h.history.end()) return;
    for (std::size_t i = 0; i < it->second.size() && i < h.epoch.size(); ++i) {
      if (improves(it->second[i])) {
        best_ = it->second[i];
        best_epoch_ = h.epoch[i];
      }
    }
  }

  template <class Model, class Logs_>
  void on_epoch_end(Model& model, int epoch, const Logs_& logs) {
    if (options_.save_best_only) {
      const double* value = logs.find(options_.monitor);
      if (value == nullptr) {
        throw invalid_argument("ModelCheckpoint: expected the monitored value '" +
                               options_.monitor + "' in the epoch's logs, found only " +
                               logs.keys() + " (val_* values need validation data)");
      }
      if (!improves(*value)) return;
      best_ = *value;
      best_epoch_ = epoch;
    } else if ((epoch + 1) % options_.save_freq_epochs != 0) {
      return;
    }
    if (model.execution_policy().rank() != 0) return;
    const std::filesystem::path file = path_for(epoch);
    if (options_.save_weights_only) {
      model.save_weights(file);
    } else {
      model.save_checkpoint(file);
    }
    ++saves_;
    if (options_.keep_last > 0) remove_all_but_newest();
  }

  [[nodiscard]] double best() const noexcept { return best_; }
  [[nodiscard]] int best_epoch() const noexcept { return best_epoch_; }
  [[nodiscard]] int saves() const noexcept { return saves_; }
  [[nodiscard]] const Options& options() const noexcept { return options_; }

 private:
  [[nodiscard]] bool improves(double v) const noexcept { return maximize_ ? v > best_ : v < best_; }

  [[nodiscard]] std::filesystem::path path_for(int epoch) const {
    std::string p = path_.string();
    const auto at = p.find("{epoch}");
    if (at != std::string::npos) p.replace(at, 7, std::to_string(epoch + 1));
    return p;
  }

  /// The files of the "{epoch}" pattern, newest (highest epoch) first.
  [[nodiscard]] std::vector<std::pair<long long, std::filesystem::path>> pattern_files() const {
    namespace fs = std::filesystem;
    std::vector<std::pair<long long, fs::path>> files;
    const std::string pattern = path_.filename().string();
    const auto at = pattern.find("{epoch}");
    if (at == std::string::npos) return files;
    const std::string prefix = pattern.substr(0, at);
    const std::string suffix = pattern.substr(at + 7);
    const fs::path dir = path_.has_parent_path() ? path_.parent_path() : fs::path(".");
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) ||
          !name.ends_with(suffix)) {
        continue;
      }
      const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
      if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
      files.emplace_back(std::stoll(digits), it->path());
    }
    std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    return files;
  }

  void remove_all_but_newest() const {
    const auto files = pattern_files();
    for (std::size_t i = static_cast<std::size_t>(options_.keep_last); i < files.size(); ++i) {
      std::error_code ignored;  // a file another process removed first is fine
      std::filesystem::remove(files[i].second, ignored);
    }
  }

  std::filesystem::path path_;
  Options options_;
  bool maximize_ = false;
  double best_ = std::numeric_limits<double>::infinity();
  int best_epoch_ = -1;
  int saves_ = 0;
};

/// The checkpoint a restarted run continues from: the most recently written complete checkpoint
/// in `dir` (every regular file there whose magic, version, length and checksum are a
/// checkpoint's for this model's value type; a corrupt or half-written one is skipped with a
/// message on std::cerr and the one before it taken), or an empty path (start fresh) when
/// there is none or `dir` is empty. Collective: rank 0 decides and every rank receives its
/// choice (the directory must be one all ranks see, as ModelCheckpoint's is); a `dir` that does
/// not exist or cannot be written is an io_error on every rank, before any training.
/// Use: `.resume_from = nn::latest_checkpoint(model, onelearn::run::checkpoint_dir())`.
template <class Model>
std::filesystem::path latest_checkpoint(const Model& model, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  using T = typename Model::value_type;
  const auto& exec = model.execution_policy();
  if (dir.empty()) return {};
  std::string chosen;
  exec.propagate_errors([&] {
    if (exec.rank() != 0) return;
    const std::string where = "latest_checkpoint";
    detail::check_writable_directory(where, dir);
    std::error_code ec;
    std::vector<std::pair<fs::file_time_type, fs::path>> files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec) && it->path().filename().string().find(".onelearn-tmp.") == std::string::npos) {
        files.emplace_back(it->last_write_time(ec), it->path());
      }
    }
    std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second > b.second;
    });
    for (const auto& [time, path] : files) {
      try {
        (void)detail::read_file<T>(where, path, detail::checkpoint_magic);
        chosen = path.string();
        return;
      } catch (const io_error& e) {
        std::cerr << "onelearn: " << e.what() << "; trying an older checkpoint\n";
      }
    }
  });
  if constexpr (std::remove_cvref_t<decltype(exec)>::is_distributed) {
    std::int64_t length = static_cast<std::int64_t>(chosen.size());
    exec.broadcast(std::span<std::int64_t>(&length, 1), 0);
    chosen.resize(static_cast<std::size_t>(length));
    exec.broadcast(std::span<char>(chosen.data(), chosen.size()), 0);
  }
  return chosen;
}

}  // namespace onelearn::nn
