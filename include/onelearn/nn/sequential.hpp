#pragma once
/**
 * \code
 * #include <onelearn/nn/sequential.hpp>
 *
 * namespace nn = onelearn::nn;
 * nn::Sequential<float> model{nn::Input({64}),
 *                             nn::Dense(128, "relu"),
 *                             nn::Dropout{0.1},
 *                             nn::Dense(10)};
 * model.compile(nn::Adam{.learning_rate = 1e-3},
 *               nn::SparseCategoricalCrossentropy{.from_logits = true}, {"accuracy"});
 * std::cout << model.summary();
 * nn::History history = model.fit(X_train, y_train,             // y_train: labels 0..9
 *                                 {.epochs = 30, .batch_size = 32, .seed = 7,
 *                                  .validation_split = 0.1},
 *                                 nn::EarlyStopping({.patience = 5, .restore_best_weights =
 * true})); auto scores = model.evaluate(X_test, y_test);                 // {"loss": ...,
 * "accuracy": ...} onelearn::Labels predicted = model.predict_classes(X_test);
 * onelearn::Matrix<float> logits = model.predict(X_test);
 * \endcode
 *
 * nn::Sequential: a stack of layers trained by mini-batch gradient descent, as Keras's
 * Sequential (build, compile, fit, evaluate, predict, summary). See nn/layer.hpp for the design
 * of the layer interface, the tensors between layers, and where data-parallel training hooks in.
 *
 * Method: fit draws each epoch's order from the seed (a permutation keyed by (seed, epoch), so
 * epoch e's batches can be recomputed from the seed alone), gathers each batch's rows into one
 * buffer, runs the layers forward, the loss (value and gradient in one pass), the layers backward
 * (calling the gradient-ready hook after each) and one optimizer step. Buffers live in the layers
 * and the model and only grow, so steady-state training allocates nothing. Without shuffling,
 * batches are views of X itself. The last batch may be smaller. The epoch's loss and accuracy are
 * the means over its batches of the values computed in each batch's forward pass (Keras's
 * running means); the loss includes the layers' regularisation terms, as Keras's.
 *
 * \par FitOptions
 * - `epochs` (default 1), `batch_size` (default 32), `shuffle` (default true).
 * - `seed` (default 0): everything random in fit derives from it: the initial weights (drawn at
 *   the first fit, unless the model was built already or a layer has its own seed), dropout
 *   masks and the epochs' orders. Two fits of equal models with equal seeds give identical
 *   weights (bit for bit, for a given build and number of Eigen threads: a multi-threaded GEMM
 *   splits its sums differently).
 * - `validation_split` (default 0): the last fraction of the rows (before shuffling, as Keras)
 *   is held out; the epoch logs then also hold val_loss (and val_accuracy).
 * - `validation_data` (default none): `{X_val, y_val}` evaluated after every epoch instead of a
 *   split (val_loss, val_accuracy). Giving both it and validation_split is an error (Keras
 *   silently ignores the split).
 * - `verbose` (default 0): 1 adds a ProgressBar on std::cout (nn/progress_bar.hpp: redrawn in
 *   place on a terminal, one line per epoch otherwise); 2 one line per epoch always (Keras's
 *   verbose=2).
 * - `resume_from` (default none): a checkpoint (nn/checkpoint.hpp) to continue from: fit loads
 *   it, checks that seed, batch_size, shuffle, the validation settings and the number of
 *   training rows are the ones it was written with, runs epochs checkpoint-epoch .. epochs-1
 *   and returns the whole History. The result is bit-identical to an uninterrupted fit.
 *
 * - `replicated` (default false), `shard_optimizer_state` (default false), `bucket_bytes`
 *   (default 0): see Data-parallel training.
 *
 * \par Data-parallel training (Exec = exec::mpi)
 * \code
 * nn::Sequential<float, exec::mpi> model{exec::mpi(comm), nn::Input({64}), nn::Dense(128, "relu"),
 *                                        nn::Dense(10)};
 * model.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
 * model.fit(X_mine, y_mine, {.epochs = 10, .batch_size = 32});   // each rank: its own rows
 * model.fit(X_all, y_all, {.batch_size = 128, .replicated = true});  // every rank: all rows
 * \endcode
 * fit broadcasts rank 0's weights (and layer state) first, so the ranks start equal however
 * they were built. Every step each rank runs forward and backward on its part of the global
 * batch; as each layer's backward finishes (the gradient-ready hook), its gradient block is
 * scaled by the rank's rows / the global batch's rows and, when it completes a bucket, the
 * bucket's MPI_Iallreduce starts (nn/detail/gradient_sync.hpp), overlapping the backward pass
 * of the layers below; the optimizer steps once all have completed. Since the losses average
 * over the batch, every rank then takes the step one process takes on the union of the ranks'
 * batches, and all ranks hold the same weights. The logged loss and accuracy (and val_loss,
 * val_accuracy, and evaluate's scores) are over all ranks' rows.
 * - Per-rank mode (default): each rank passes its own rows (any number, 0 included). Global
 *   batch b is the concatenation in rank order of every rank's batch b (its rows
 *   [b * batch_size, (b + 1) * batch_size) when not shuffled). Every rank takes as many steps
 *   as the rank with the most batches; a rank whose rows have run out joins with an empty batch.
 *   shuffle permutes each rank's own rows, with a stream derived from (seed, epoch, rank).
 *   validation_split holds out the last fraction of each rank's rows; validation_data is each
 *   rank's own part.
 * - Replicated mode (`.replicated = true`): every rank passes the same full data (and the same
 *   validation_data); each epoch's order is drawn from the seed as one process draws it, and
 *   each global batch of batch_size rows is split by rank into consecutive parts (the first
 *   rows % ranks ranks take one row more, so nothing is dropped; a rank may get none). The
 *   result equals one process's fit at the same batch_size and seed (up to rounding). The
 *   held-out rows are split by rank the same way. Only the row counts are checked to agree.
 * - Buckets (`bucket_bytes`, default 0): consecutive layers' gradient blocks, in backward
 *   order, are grouped until a bucket holds at least bucket_bytes bytes (0: one bucket per
 *   layer with parameters, so the first reduction starts as early as possible; PyTorch DDP's
 *   default is 25 MiB, which suits models of many small layers). A bucket's reduction starts
 *   when its last (lowest) layer's backward is done; a bucket of several blocks is packed into
 *   a staging buffer and reduced as one message. Every bucket size gives the same weights (up to
 *   the rounding of another reduction order). Distributed policies other than exec::mpi
 *   (exec::ucx) reduce every block with the policy's blocking all-reduce after the backward
 *   pass: bucket_bytes has no effect there.
 * - Optimizer-state sharding (`shard_optimizer_state = true`, ZeRO stage 1): the parameters,
 *   seen as one flat vector in layer order, are split into one contiguous shard per rank
 *   (balanced in values). Each bucket is reduce-scattered (MPI_Ireduce_scatter), so a rank
 *   receives only its shard of the summed gradient; it updates its shard of the parameters with
 *   its shard of the optimizer state (Optimizer::shard: every optimizer is element-wise, and
 *   global_clipnorm sums the shards' squared norms with one all-reduce); then the parameters
 *   are all-gathered in place (MPI_Iallgatherv per parameter buffer). The weights equal
 *   unsharded training's (tested for SGD, Adam, AdamW, RMSprop, Adagrad and global_clipnorm) and
 *   each rank holds 1/ranks of the optimizer state: optimizer_state_bytes() (Adam, float,
 *   784-512-512-10: 5,357,648 bytes on one process; 2,678,824 per rank on 2; 1,785,888 on 3).
 *   The state stays sharded after fit (optimizer().state() is the rank's slice); a later fit
 *   without the option gathers it back (collective), so fits continue across modes. A
 *   checkpoint holds the whole state: save_checkpoint gathers it (so every rank must call it),
 *   fit gathers it around the epoch-end callbacks when one of them is a ModelCheckpoint (which
 *   writes on rank 0), and load_checkpoint (and resume_from) drops the shard and loads the whole
 *   state, which the next sharded fit shards again: a checkpoint resumes with or without
 *   sharding. Other distributed policies (exec::ucx) shard with the policy's blocking
 *   collectives: an all-reduce of the gradients, then allgatherv of the parameters (the same
 *   memory saving, more communication than unsharded). Ignored by local policies.
 * - Layers learn each step's layout through Layer::begin_batch (nn::BatchContext: this rank's
 *   row offset in the global batch, its rows, the global rows, and a sum over the ranks); a
 *   rank without rows in a step calls shadow_forward/shadow_backward instead of the passes.
 *   Dropout keys each row's mask by (seed, step, position in the global batch): the ranks draw
 *   different masks (per-rank streams derived from the seed; fit broadcasts rank 0's seed and
 *   step with the weights), together one process's masks, so a model with Dropout also equals
 *   one process's fit, in both modes. BatchNormalization's statistics are each rank's own by
 *   default (its result then differs from one process's, as PyTorch's BatchNorm under DDP,
 *   and each rank's moving statistics are its own); with `{.synchronized = true}` (Keras 3's
 *   synchronized=True, PyTorch's SyncBatchNorm) they are the global batch's, reduced over the
 *   ranks in the forward and backward passes, and the fit equals one process's.
 * - Files and output: ModelCheckpoint writes on rank 0 only; save_checkpoint, save_weights
 *   and resume_from act on the calling rank's own file (with sharding, save_checkpoint is
 *   collective, see above). predict is per rank (each rank's rows). The progress bar (verbose)
 *   prints on rank 0 only.
 *
 * \par Targets
 * y may be integer labels (any integer Eigen vector; SparseCategoricalCrossentropy takes labels
 * 0..k-1 for k outputs; other losses see them as numbers) or real values: a vector for one
 * output, or a matrix with one column per output value.
 *
 * \par Attributes
 * - `summary()`: a Keras-like table (layer name and type, output shape, parameter count, and
 *   the totals) as a string; needs the input shape (Input or a first fit). Layer state
 *   (Layer::state(), e.g. moving statistics) counts as non-trainable parameters, as in Keras.
 * - `get_weights()` / `set_weights(w)`: one vector per parameter buffer, in layer order
 *   (a Dense layer's kernel, row-major input x units, then its bias), as Keras's.
 * - `save_weights(path)` / `load_weights(path)`: a versioned binary file with the architecture
 *   and a checksum (nn/weights_io.hpp); `save_checkpoint(path)` / `load_checkpoint(path)`:
 *   the whole training state (nn/checkpoint.hpp).
 * - `history()`: the History of the current (or last) fit, including a resumed checkpoint's
 *   epochs; `fit_params()`: the running fit's settings (for callbacks).
 * - `layer(i)`, `size()`, `input_shape()`, `output_shape()`, `is_built()`, `is_compiled()`,
 *   `optimizer()`, `build_seed()`, `optimizer_state_bytes()` (the optimizer memory of this
 *   process: its shard's under shard_optimizer_state).
 *
 * \par Differences from Keras
 * - fit continues from the current weights (as Keras); the first fit builds the model with its
 *   seed. compile again resets the optimizer state, keeping the weights.
 * - predict returns the network's raw outputs (logits when the last layer has no activation);
 *   predict_classes is the argmax (or a threshold for a single binary output), and predict_proba
 *   applies the softmax/sigmoid the loss implies (n x k; n x 2 for one binary output).
 * - Only the "accuracy" metric (sparse categorical or binary, according to the loss); no
 *   sample weights or class weights. verbose defaults to 0.
 * - predict returns raw outputs; for the scikit-learn Classifier concept (labels from predict,
 *   arbitrary label values) wrap a model-building function in nn::KerasClassifier
 *   (nn/classifier.hpp).
 * - predict and evaluate use the model's buffers: a model is not safe to use from two threads
 *   at once.
 * - Data-parallel training through the policy type (Exec = exec::mpi), below.
 *
 * Errors: `not_fitted_error` for fit/evaluate before compile and predict/summary before the
 * model is built; `shape_error` for X whose width differs from the model's input, y of another
 * length than X, real targets of the wrong width, and set_weights of the wrong sizes;
 * `invalid_argument` for labels outside 0..k-1 of a k-output model, NaN/Inf in X or y, bad
 * FitOptions (validation_split and validation_data both given, verbose outside 0..2), a
 * resume_from checkpoint written with other fit settings, an unknown metric, Input after a
 * layer, and layers added after the model was built; `nn::training_error` when the loss
 * becomes NaN or infinite (naming epoch and batch). save_weights/load_weights and checkpoints
 * add the file errors of nn/weights_io.hpp and nn/checkpoint.hpp (io_error, shape_error).
 * Under exec::mpi every rank raises the same error when any rank's input is bad (checks run in
 * exec.propagate_errors), ranks whose X differ in width raise shape_error, replicated data of
 * different row counts raises shape_error, a loss that is not finite on any rank raises
 * training_error on all (before that step's update), and no training row on any rank raises
 * invalid_argument.
 */

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/nn/callbacks.hpp"
#include "onelearn/nn/checkpoint.hpp"
#include "onelearn/nn/detail/gradient_sync.hpp"
#include "onelearn/nn/detail/random.hpp"
#include "onelearn/nn/errors.hpp"
#include "onelearn/nn/layer.hpp"
#include "onelearn/nn/layers/activation.hpp"
#include "onelearn/nn/layers/dense.hpp"
#include "onelearn/nn/layers/dropout.hpp"
#include "onelearn/nn/layers/flatten.hpp"
#include "onelearn/nn/layers/input.hpp"
#include "onelearn/nn/losses.hpp"
#include "onelearn/nn/optimizers.hpp"
#include "onelearn/nn/progress_bar.hpp"
#include "onelearn/nn/tensor.hpp"
#include "onelearn/nn/weights_io.hpp"

namespace onelearn::nn {

/// Held-out rows fit evaluates after every epoch (Keras's validation_data=(X_val, y_val)):
/// `.validation_data = {X_val, y_val}`. Copied once (float or double features; integer labels
/// or real targets), so the options stay a plain value.
struct ValidationData {
  ValidationData() = default;
  template <class DX, class DY>
  ValidationData(const Eigen::MatrixBase<DX>& X_val,  // NOLINT(google-explicit-constructor)
                 const Eigen::MatrixBase<DY>& y_val) {
    using XS = typename DX::Scalar;
    using YS = typename DY::Scalar;
    static_assert(std::is_same_v<XS, float> || std::is_same_v<XS, double>,
                  "nn::ValidationData: X must hold float or double values");
    X = Matrix<XS>(X_val);
    if constexpr (std::is_integral_v<YS>) {
      y = Matrix<std::int64_t>(y_val.template cast<std::int64_t>());
    } else {
      static_assert(std::is_floating_point_v<YS>,
                    "nn::ValidationData: y must hold integers or reals");
      y = Matrix<double>(y_val.template cast<double>());
    }
  }
  [[nodiscard]] bool empty() const noexcept { return X.index() == 0; }

  std::variant<std::monostate, Matrix<float>, Matrix<double>> X;
  std::variant<std::monostate, Matrix<std::int64_t>, Matrix<double>> y;
};

struct FitOptions {
  int epochs = 1;
  index_t batch_size = 32;
  bool shuffle = true;
  std::uint64_t seed = 0;
  double validation_split = 0;
  ValidationData validation_data{};
  int verbose = 0;
  std::filesystem::path resume_from{};
  /// Distributed policies: every rank passes the same full data (and validation data) and fit
  /// shards it: each global batch of batch_size rows, drawn as one process draws it, is split
  /// by rank. Ignored by local policies.
  bool replicated = false;
  /// Distributed policies: each rank keeps the optimizer state of its shard of the parameters
  /// only (ZeRO stage 1; see Data-parallel training). Ignored by local policies.
  bool shard_optimizer_state = false;
  /// Distributed policies: gradients are all-reduced in buckets of consecutive layers holding
  /// at least this many bytes (0: one bucket per layer; see Data-parallel training).
  std::size_t bucket_bytes = 0;
};

namespace detail {

/// "LeakyReLU" -> "leaky_relu", "Dense" -> "dense": an underscore where a lower-case letter is
/// followed by an upper-case one that starts a lower-case run.
inline std::string snake_case(std::string_view name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool upper = c >= 'A' && c <= 'Z';
    if (upper && i > 0 && name[i - 1] >= 'a' && name[i - 1] <= 'z' && i + 1 < name.size() &&
        name[i + 1] >= 'a' && name[i + 1] <= 'z') {
      out += '_';
    }
    out += upper ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

/// "1,234,567".
inline std::string thousands(index_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

inline std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// Hook detection for the callback concept (see nn/callbacks.hpp).
template <class C, class M>
concept has_on_train_begin = requires(C& c, M& m) {
  c.on_train_begin(m);
};
template <class C, class M>
concept has_on_epoch_begin = requires(C& c, M& m) {
  c.on_epoch_begin(m, 0);
};
template <class C, class M>
concept has_on_batch_end = requires(C& c, M& m, const Logs& l) {
  c.on_batch_end(m, 0, l);
};
template <class C, class M>
concept has_on_epoch_end = requires(C& c, M& m, const Logs& l) {
  c.on_epoch_end(m, 0, l);
};
template <class C, class M>
concept has_on_train_end = requires(C& c, M& m, const Logs& l) {
  c.on_train_end(m, l);
};
template <class C, class M>
concept epoch_end_callable = std::invocable<C&, M&, int, const Logs&>;

template <class C, class M>
concept Callback = has_on_train_begin<C, M> || has_on_epoch_begin<C, M> || has_on_batch_end<C, M> ||
    has_on_epoch_end<C, M> || has_on_train_end<C, M> || epoch_end_callable<C, M>;

}  // namespace detail

template <class T, exec::ExecutionPolicy Exec = exec::local>
class Sequential {
  static_assert(std::is_floating_point_v<T>, "nn::Sequential<T>: T must be float or double");

 public:
  using value_type = T;

  Sequential() = default;

  /// Sequential{nn::Input({64}), nn::Dense(10), ...}: layer specs, nn::Input first if at all,
  /// layer objects derived from Layer<T>, or std::unique_ptr<Layer<T>>.
  template <class... L>
  requires(sizeof...(L) > 0 && (!std::same_as<std::remove_cvref_t<L>, Sequential> && ...) &&
           (!std::same_as<std::remove_cvref_t<L>, Exec> &&
            ...)) explicit Sequential(L&&... layers) {
    (add(std::forward<L>(layers)), ...);
  }

  /// The same with an execution policy first.
  template <class... L>
  explicit Sequential(Exec exec, L&&... layers) : exec_(std::move(exec)) {
    (add(std::forward<L>(layers)), ...);
  }

  Sequential(const Sequential&) = delete;
  Sequential& operator=(const Sequential&) = delete;
  Sequential(Sequential&&) noexcept = default;
  Sequential& operator=(Sequential&&) noexcept = default;
  ~Sequential() = default;

  Sequential& add(const Input& input) {
    if (!layers_.empty() || input_shape_.rank() > 0) {
      throw invalid_argument("Sequential.add: expected Input first and only once, found it after " +
                             std::to_string(layers_.size()) + " layer(s)" +
                             (input_shape_.rank() > 0 ? " and another Input" : ""));
    }
    if (input.shape.rank() == 0 || input.shape.size() < 1) {
      throw invalid_argument(
          "Sequential.add: expected an Input shape with at least one "
          "dimension, all positive, found " +
          input.shape.to_string());
    }
    input_shape_ = input.shape;
    return *this;
  }

  template <class S>
  requires LayerSpec<S, T> Sequential& add(const S& spec) { return add(spec.template make<T>()); }

  template <class L>
  requires std::derived_from<std::remove_cvref_t<L>, Layer<T>> &&
      (!std::is_lvalue_reference_v<L>)Sequential& add(L&& layer) {
    return add(std::unique_ptr<Layer<T>>(
        std::make_unique<std::remove_cvref_t<L>>(std::forward<L>(layer))));
  }

  Sequential& add(std::unique_ptr<Layer<T>> layer) {
    if (built_) {
      throw invalid_argument(
          "Sequential.add: expected to add layers before the model is built "
          "(by the first fit or build), found a built model");
    }
    if (!layer) throw invalid_argument("Sequential.add: expected a layer, found a null pointer");
    const std::string base = detail::snake_case(layer->class_name());
    int& count = name_counts_[base];
    layer->set_name(count == 0 ? base : base + "_" + std::to_string(count));
    ++count;
    layers_.push_back(std::move(layer));
    return *this;
  }

  /// Builds the layers for this per-sample input shape and draws the initial weights from
  /// `seed` (what the first fit does with its FitOptions::seed).
  Sequential& build(const Shape& input_shape, std::uint64_t seed = 0) {
    if (layers_.empty()) {
      throw invalid_argument("Sequential.build: expected at least one layer, found none");
    }
    if (input_shape_.rank() > 0 && !(input_shape == input_shape_)) {
      throw shape_error("Sequential.build: expected the Input shape " + input_shape_.to_string() +
                        ", found " + input_shape.to_string());
    }
    const std::vector<Shape> shapes = layer_shapes(input_shape);
    params_.clear();
    grads_.clear();
    needs_input_grad_.assign(layers_.size(), false);
    bool trainable_below = false;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      layers_[i]->build(i == 0 ? input_shape : shapes[i - 1], detail::derive_seed(seed, i));
      needs_input_grad_[i] = trainable_below;
      for (auto p : layers_[i]->parameters()) params_.push_back(p);
      for (auto g : layers_[i]->gradients()) grads_.push_back(g);
      if (!layers_[i]->parameters().empty()) trainable_below = true;
    }
    input_shape_ = input_shape;
    output_shape_ = shapes.back();
    built_ = true;
    build_seed_ = seed;
    if (optimizer_) optimizer_->build(params_);
    return *this;
  }

  template <class O, class L>
  requires OptimizerSpec<O, T> && LossSpec<L, T> Sequential& compile(
      const O& optimizer, const L& loss, std::vector<std::string> metrics = {}) {
    return compile(optimizer.template make<T>(), loss.template make<T>(), std::move(metrics));
  }

  /// compile with an optimizer and a loss of one's own.
  Sequential& compile(std::unique_ptr<Optimizer<T>> optimizer, std::unique_ptr<Loss<T>> loss,
                      std::vector<std::string> metrics = {}) {
    if (!optimizer || !loss) {
      throw invalid_argument("Sequential.compile: expected an optimizer and a loss, found null");
    }
    bool accuracy = false;
    for (const auto& m : metrics) {
      if (m != "accuracy" && m != "acc") {
        throw invalid_argument(
            "Sequential.compile: expected metrics among {\"accuracy\"}, "
            "found '" +
            m + "'");
      }
      if (loss->accuracy_kind() == AccuracyKind::none) {
        throw invalid_argument(
            "Sequential.compile: expected a classification loss "
            "(SparseCategoricalCrossentropy or BinaryCrossentropy) for the "
            "accuracy metric, found " +
            std::string(loss->name()));
      }
      accuracy = true;
    }
    optimizer_ = std::move(optimizer);
    loss_ = std::move(loss);
    accuracy_ = accuracy;
    if (built_) optimizer_->build(params_);
    return *this;
  }

  template <class Derived>
  History fit(const MatrixRef<T>& X, const Eigen::MatrixBase<Derived>& y) {
    return fit(X, y, FitOptions{});
  }

  template <class Derived, class... Callbacks>
  History fit(const MatrixRef<T>& X, const Eigen::MatrixBase<Derived>& y, const FitOptions& options,
              Callbacks&&... callbacks) {
    static_assert(
        (detail::Callback<std::remove_reference_t<Callbacks>, Sequential> && ...),
        "nn::Sequential::fit: every callback needs at least one of on_train_begin(model), "
        "on_epoch_begin(model, epoch), on_batch_end(model, batch, logs), "
        "on_epoch_end(model, epoch, logs), on_train_end(model, logs), or to be "
        "callable as f(model, epoch, logs)");
    constexpr std::string_view where = "Sequential.fit";
    exec_.propagate_errors([&] {
      check_compiled(where);
      check_options(where, options);
    });
    std::optional<CheckpointData> resumed;
    if (!options.resume_from.empty()) resumed = load_checkpoint(options.resume_from);
    if constexpr (Exec::is_distributed) {
      // Ranks that built their models for different widths would broadcast buffers of
      // different sizes: check first, on every rank.
      const std::int64_t width = X.cols();
      exec_.check_same_shape("the number of features of X (Sequential.fit)",
                             std::span<const std::int64_t>(&width, 1));
    }
    exec_.propagate_errors([&] {
      validation::check_same_length(where, "y", X.rows(), y.rows());
      // Under a distributed policy a rank may hold no rows (checked over all ranks below).
      if (X.rows() == 0 && !Exec::is_distributed) {
        throw invalid_argument(std::string(where) + ": expected at least one sample, found 0");
      }
      validation::check_finite(where, "X", X);
      if (!built_) {
        const Shape in = input_shape_.rank() > 0 ? input_shape_ : Shape{X.cols()};
        check_width(where, in, X.cols());
        build(in, options.seed);
      }
      check_width(where, input_shape_, X.cols());
    });
    if constexpr (Exec::is_distributed) broadcast_weights();
    const TargetData targets = make_targets(where, y);

    const index_t n = X.rows();
    const auto n_train =
        static_cast<index_t>(static_cast<double>(n) * (1.0 - options.validation_split));
    // Every rank's (training rows, held-out rows): the global batch sizes and step count.
    std::vector<std::int64_t> rank_rows{n_train, n - n_train};
    if constexpr (Exec::is_distributed) {
      rank_rows = exec_.allgatherv(std::span<const std::int64_t>(rank_rows));
    }
    const bool replicated = Exec::is_distributed && options.replicated;
    if (replicated) {
      // Decided from the gathered counts, so every rank throws or none does.
      for (std::size_t r = 2; r < rank_rows.size(); r += 2) {
        if (rank_rows[r] != rank_rows[0] || rank_rows[r + 1] != rank_rows[1]) {
          throw shape_error(std::string(where) +
                            " (replicated): expected the same rows on every rank, found " +
                            std::to_string(rank_rows[0] + rank_rows[1]) + " on rank 0 and " +
                            std::to_string(rank_rows[r] + rank_rows[r + 1]) + " on rank " +
                            std::to_string(r / 2));
        }
      }
      rank_rows.resize(2);  // one copy of the data: the batches of one process
    }
    std::int64_t n_train_all = 0;
    std::int64_t n_held_all = 0;
    for (std::size_t r = 0; r < rank_rows.size(); r += 2) {
      n_train_all += rank_rows[r];
      n_held_all += rank_rows[r + 1];
    }
    // Decided from the gathered counts, so every rank throws or none does.
    if (n_train_all < 1 || (options.validation_split > 0 && n_held_all == 0)) {
      throw invalid_argument(std::string(where) +
                             ": expected validation_split to leave at least "
                             "one training and one validation row, found " +
                             std::to_string(n_train_all) + " training rows of " +
                             std::to_string(n_train_all + n_held_all) +
                             (Exec::is_distributed ? " (over all ranks)" : ""));
    }
    const bool has_split = n_held_all > 0;
    // validation_data: converted to T once.
    Matrix<T> X_val;
    TargetData val_targets;
    const bool has_validation_data = !options.validation_data.empty();
    if (has_validation_data) {
      exec_.propagate_errors([&] {
        std::visit(
            [&](const auto& v) {
              if constexpr (!std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
                X_val = v.template cast<T>();
              }
            },
            options.validation_data.X);
        check_width("Sequential.fit (validation_data)", input_shape_, X_val.cols());
        validation::check_finite("Sequential.fit (validation_data)", "X", X_val);
      });
      std::visit(
          [&](const auto& v) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
              exec_.propagate_errors([&] {
                validation::check_same_length("Sequential.fit (validation_data)", "y", X_val.rows(),
                                              v.rows());
                if (X_val.rows() == 0) {
                  throw invalid_argument(
                      "Sequential.fit: expected validation_data with at least one row, found 0");
                }
              });
              val_targets = make_targets("Sequential.fit (validation_data)", v);
            }
          },
          options.validation_data.y);
    }

    const index_t batch_size = options.batch_size;
    // Under a distributed policy every rank takes the steps of the rank with the most batches;
    // a rank whose rows have run out contributes an empty batch (zero gradient, zero weight).
    index_t n_batches = 0;
    for (std::size_t r = 0; r < rank_rows.size(); r += 2) {
      n_batches = std::max(n_batches, (rank_rows[r] + batch_size - 1) / batch_size);
    }
    // The global batch b's rows: the sum of every rank's share of it.
    auto global_rows = [&](index_t b) {
      index_t rows = 0;
      for (std::size_t r = 0; r < rank_rows.size(); r += 2) {
        rows += std::clamp<index_t>(rank_rows[r] - b * batch_size, 0, batch_size);
      }
      return rows;
    };
    if constexpr (Exec::is_distributed) {
      std::vector<std::vector<std::span<T>>> layer_grads;
      for (auto& layer : layers_) layer_grads.push_back(layer->gradients());
      sync_.prepare(&exec_, std::move(layer_grads), params_,
                    {.bucket_bytes = options.bucket_bytes,
                     .shard_optimizer_state = options.shard_optimizer_state});
      sync_.adopt(*optimizer_, exec_);  // shards (or gathers) the optimizer state
    }
    fit_params_ = FitParams{.epochs = options.epochs,
                            .initial_epoch = 0,
                            .steps = n_batches,
                            .samples = n_train,
                            .batch_size = batch_size,
                            .shuffle = options.shuffle,
                            .seed = options.seed,
                            .validation_split = options.validation_split,
                            .validation_data = has_validation_data,
                            .verbose = options.verbose};
    history_ = History{};
    if (resumed) {
      check_resume(*resumed, fit_params_);
      fit_params_.initial_epoch = resumed->epoch;
      history_ = resumed->history;
    }
    epochs_done_ = fit_params_.initial_epoch;

    Logs epoch_logs, batch_logs;
    stop_training_ = false;
    std::vector<index_t> order(static_cast<std::size_t>(n_train));
    for (index_t i = 0; i < n_train; ++i) order[static_cast<std::size_t>(i)] = i;
    // verbose 1: Keras's progress bar (first, as Keras's ProgbarLogger); 2: one line an epoch.
    std::optional<ProgressBar> bar;
    const bool prints = !Exec::is_distributed || exec_.rank() == 0;  // one bar, not one a rank
    if (options.verbose == 1 && prints) bar.emplace(std::cout);
    if (options.verbose == 2 && prints) {
      bar.emplace(std::cout, ProgressBarOptions{.interactive = false});
    }
    constexpr bool any_batch_hook =
        (detail::has_on_batch_end<std::remove_reference_t<Callbacks>, Sequential> || ...);

    if (bar) bar->on_train_begin(*this);
    (call_train_begin(callbacks), ...);
    for (int epoch = fit_params_.initial_epoch; epoch < options.epochs && !stop_training_;
         ++epoch) {
      if (bar) bar->on_epoch_begin(*this, epoch);
      (call_epoch_begin(callbacks, epoch), ...);
      if (options.shuffle) {
        std::uint64_t epoch_seed =
            detail::derive_seed(options.seed ^ 0x5EEDULL, static_cast<std::uint64_t>(epoch));
        // Each rank shuffles its own rows, with a stream of its own; replicated data is
        // shuffled as one process shuffles it.
        if constexpr (Exec::is_distributed) {
          if (!replicated) {
            epoch_seed =
                detail::derive_seed(epoch_seed, static_cast<std::uint64_t>(exec_.rank()));
          }
        }
        detail::permutation(epoch_seed, std::span<index_t>(order));
      }
      double loss_sum = 0;
      double correct = 0;
      index_t seen = 0;
      for (index_t b = 0; b < n_batches; ++b) {
        const index_t start = b * batch_size;
        if constexpr (Exec::is_distributed) {
          const index_t global_m = global_rows(b);
          // Replicated: this rank's consecutive share of the global batch; per-rank: its own
          // batch b (possibly empty).
          const auto [my_start, my_m] =
              replicated ? rank_share(start, global_m)
                         : std::pair<index_t, index_t>{start, std::min(batch_size, n_train - start)};
          // Where this rank's rows sit in the global batch (Dropout keys its masks by it):
          // replicated, its share's offset; per-rank, the rows of the ranks before it.
          index_t my_offset = my_start - start;
          if (!replicated) {
            my_offset = 0;
            for (std::size_t r = 0; r < 2 * static_cast<std::size_t>(exec_.rank()); r += 2) {
              my_offset += std::clamp<index_t>(rank_rows[r] - start, 0, batch_size);
            }
          }
          begin_batch(my_offset, std::max<index_t>(my_m, 0), global_m);
          // Names the step in a collective's timeout message (exec::mpi's hang detection).
          if constexpr (requires { exec_.set_step("", 0, "", 0); }) {
            exec_.set_step("Sequential.fit epoch", epoch + 1, "batch", b + 1);
          }
          const auto [loss, batch_correct] =
              distributed_step(X, targets, order, my_start, my_m, global_m, options.shuffle);
          if (!std::isfinite(loss)) {
            throw training_error(std::string(where) + ": expected a finite loss, found " +
                                 std::to_string(loss) + " in epoch " + std::to_string(epoch + 1) +
                                 "/" + std::to_string(options.epochs) + ", batch " +
                                 std::to_string(b + 1) + "/" + std::to_string(n_batches) +
                                 " (over all ranks; the optimisation diverged: lower the "
                                 "learning rate, clip the gradients or scale the inputs)");
          }
          correct += batch_correct;
          loss_sum += loss * static_cast<double>(global_m);
          seen += global_m;
          if (any_batch_hook || bar) {
            batch_logs.set("loss", loss_sum / static_cast<double>(seen));
            if (accuracy_) batch_logs.set("accuracy", correct / static_cast<double>(seen));
            if (bar) bar->on_batch_end(*this, static_cast<int>(b), batch_logs);
            (call_batch_end(callbacks, static_cast<int>(b), batch_logs), ...);
          }
          continue;
        }
        const index_t m = std::min(batch_size, n_train - start);
        const TensorView<const T> xb =
            gather(X, targets,
                   std::span<const index_t>(order).subspan(static_cast<std::size_t>(start),
                                                           static_cast<std::size_t>(m)),
                   !options.shuffle);
        begin_batch(0, m, m);
        const TensorView<const T> out = forward(xb, true);
        loss_grad_.reshape(out.shape);
        double loss = loss_->compute(out, batch_targets(targets, m), loss_grad_.view());
        loss += regularization_loss();
        if (!std::isfinite(loss)) {
          throw training_error(std::string(where) + ": expected a finite loss, found " +
                               std::to_string(loss) + " in epoch " + std::to_string(epoch + 1) +
                               "/" + std::to_string(options.epochs) + ", batch " +
                               std::to_string(b + 1) + "/" + std::to_string(n_batches) +
                               " (the optimisation diverged: lower the learning rate, clip the "
                               "gradients or scale the inputs)");
        }
        if (accuracy_) correct += count_correct(out, batch_targets(targets, m));
        backward();
        wait_for_gradients();
        optimizer_->step(params_, grads_);
        loss_sum += loss * static_cast<double>(m);
        seen += m;
        if (any_batch_hook || bar) {
          batch_logs.set("loss", loss_sum / static_cast<double>(seen));
          if (accuracy_) {
            batch_logs.set("accuracy", correct / static_cast<double>(seen));
          }
          if (bar) bar->on_batch_end(*this, static_cast<int>(b), batch_logs);
          (call_batch_end(callbacks, static_cast<int>(b), batch_logs), ...);
        }
      }
      epoch_logs.set("loss", loss_sum / static_cast<double>(seen));
      if (accuracy_) {
        epoch_logs.set("accuracy", correct / static_cast<double>(seen));
      }
      if (has_split || has_validation_data) {
        // Replicated held-out rows: each rank evaluates its share of them.
        auto rows = [&](index_t begin, index_t count) {
          const auto [b0, m0] = replicated ? rank_share(begin, count)
                                           : std::pair<index_t, index_t>{begin, count};
          return std::pair<index_t, index_t>{b0, b0 + m0};
        };
        const auto [val_begin, val_end] =
            has_validation_data ? rows(0, X_val.rows()) : rows(n_train, n - n_train);
        const auto [val_loss, val_correct, n_val] =
            has_validation_data ? evaluate_global(X_val, val_targets, val_begin, val_end)
                                : evaluate_global(X, targets, val_begin, val_end);
        epoch_logs.set("val_loss", val_loss);
        if (accuracy_) {
          epoch_logs.set("val_accuracy", val_correct / static_cast<double>(n_val));
        }
      }
      history_.epoch.push_back(epoch);
      for (const auto& [key, value] : epoch_logs) history_.history[key].push_back(value);
      epochs_done_ = epoch + 1;  // what a checkpoint written by an epoch-end hook records
      if (bar) bar->on_epoch_end(*this, epoch, epoch_logs);
      // ModelCheckpoint writes on rank 0 only, and a checkpoint holds the whole optimizer
      // state: sharded state is gathered on every rank around the epoch-end callbacks.
      if constexpr (Exec::is_distributed &&
                    (std::is_same_v<std::remove_cvref_t<Callbacks>, ModelCheckpoint> || ...)) {
        detail::with_whole_optimizer_state(optimizer_.get(), exec_, [&] {
          (call_epoch_end(callbacks, epoch, epoch_logs), ...);
        });
      } else {
        (call_epoch_end(callbacks, epoch, epoch_logs), ...);
      }
    }
    (call_train_end(callbacks, epoch_logs), ...);
    if constexpr (requires { exec_.clear_step(); }) exec_.clear_step();
    return history_;
  }

  /// The loss (and accuracy, when compiled with it) over X and y, in inference mode.
  template <class Derived>
  std::map<std::string, double> evaluate(const MatrixRef<T>& X,
                                         const Eigen::MatrixBase<Derived>& y) {
    constexpr std::string_view where = "Sequential.evaluate";
    exec_.propagate_errors([&] {
      check_compiled(where);
      check_predict_input(where, X);
      validation::check_same_length(where, "y", X.rows(), y.rows());
      if (X.rows() == 0 && !Exec::is_distributed) {
        throw invalid_argument(std::string(where) + ": expected at least one sample, found 0");
      }
    });
    const TargetData targets = make_targets(where, y);
    const auto [loss, correct, rows] = evaluate_global(X, targets, 0, X.rows());
    if (rows == 0) {  // only reachable under a distributed policy: no rank held a row
      throw invalid_argument(std::string(where) +
                             ": expected at least one sample, found 0 on every rank");
    }
    std::map<std::string, double> out{{"loss", loss}};
    if (accuracy_) out["accuracy"] = correct / static_cast<double>(rows);
    return out;
  }

  /// The network's outputs for X (n x output size), in inference mode (dropout off).
  [[nodiscard]] Matrix<T> predict(const MatrixRef<T>& X, index_t batch_size = 256) const {
    constexpr std::string_view where = "Sequential.predict";
    check_predict_input(where, X);
    if (batch_size < 1) {
      throw invalid_argument(std::string(where) + ": expected batch_size >= 1, found " +
                             std::to_string(batch_size));
    }
    Matrix<T> out(X.rows(), output_shape_.size());
    auto& self = const_cast<Sequential&>(*this);  // buffers only; see "not safe from two threads"
    for (index_t start = 0; start < X.rows(); start += batch_size) {
      const index_t m = std::min(batch_size, X.rows() - start);
      const TensorView<const T> xb = self.input_view(X, start, m);
      const TensorView<const T> y = self.forward(xb, false);
      out.middleRows(start, m) = y.matrix();
    }
    return out;
  }

  /// The most probable class of each row: the argmax of the outputs, or for a single output
  /// with BinaryCrossentropy, 1 where the probability exceeds 0.5 (the logit exceeds 0).
  [[nodiscard]] Labels predict_classes(const MatrixRef<T>& X) const {
    const Matrix<T> out = predict(X);
    Labels labels(out.rows());
    const bool binary = out.cols() == 1;
    const T threshold =
        loss_ && loss_->accuracy_kind() == AccuracyKind::binary_logit ? T(0) : T(0.5);
    for (index_t i = 0; i < out.rows(); ++i) {
      if (binary) {
        labels(i) = out(i, 0) > threshold ? 1 : 0;
      } else {
        index_t best = 0;
        out.row(i).maxCoeff(&best);
        labels(i) = best;
      }
    }
    return labels;
  }

  /// Class probabilities, n x k: the softmax of the outputs for SparseCategoricalCrossentropy
  /// from logits, the outputs themselves from probabilities; for one binary output, the
  /// columns (1 - p, p).
  [[nodiscard]] Matrix<T> predict_proba(const MatrixRef<T>& X) const {
    constexpr std::string_view where = "Sequential.predict_proba";
    if (!loss_ || loss_->accuracy_kind() == AccuracyKind::none) {
      throw invalid_argument(std::string(where) +
                             ": expected a model compiled with a "
                             "classification loss, found " +
                             (loss_ ? std::string(loss_->name()) : std::string("none")));
    }
    Matrix<T> out = predict(X);
    switch (loss_->accuracy_kind()) {
      case AccuracyKind::binary_logit:
        out = (T(1) + (-out.array()).exp()).inverse().matrix();
        break;
      case AccuracyKind::sparse_categorical:
        if (loss_->from_logits()) {
          for (index_t i = 0; i < out.rows(); ++i) {
            auto row = out.row(i).array();
            row = (row - row.maxCoeff()).exp();
            row /= row.sum();
          }
        }
        break;
      default:
        break;
    }
    if (out.cols() == 1) {
      Matrix<T> two(out.rows(), 2);
      two.col(0) = T(1) - out.col(0).array();
      two.col(1) = out.col(0);
      return two;
    }
    return out;
  }

  [[nodiscard]] std::string summary() const {
    if (!built_ && input_shape_.rank() == 0) {
      throw not_fitted_error(
          "Sequential.summary: expected a model whose input shape is known "
          "(give an Input layer, or fit or build it first), found neither");
    }
    const std::vector<Shape> shapes = layer_shapes(input_shape_);
    constexpr std::size_t w1 = 29, w2 = 26, w3 = 10;  // Keras's 65 columns
    const std::string rule(w1 + w2 + w3, '_');
    const std::string thick(w1 + w2 + w3, '=');
    std::ostringstream os;
    os << "Model: \"sequential\"\n"
       << rule << '\n'
       << detail::pad(" Layer (type)", w1) << detail::pad("Output Shape", w2) << "Param #\n"
       << thick << '\n';
    index_t total = 0;
    index_t non_trainable = 0;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      const Shape in = i == 0 ? input_shape_ : shapes[i - 1];
      // Built: the layer's actual buffers (exact for custom layers too); else from the shape.
      index_t count = built_ ? layers_[i]->count_params() : layers_[i]->parameter_count(in);
      if (built_) {
        // Layer state (moving statistics) counts as non-trainable parameters, as in Keras.
        index_t state = 0;
        for (const auto& b : layers_[i]->state()) state += static_cast<index_t>(b.size());
        count += state;
        non_trainable += state;
      }
      total += count;
      os << detail::pad(
                " " + layers_[i]->name() + " (" + std::string(layers_[i]->class_name()) + ")", w1)
         << detail::pad(shapes[i].to_string(true), w2) << count << '\n';
    }
    os << thick << '\n'
       << "Total params: " << detail::thousands(total) << '\n'
       << "Trainable params: " << detail::thousands(total - non_trainable) << '\n'
       << "Non-trainable params: " << detail::thousands(non_trainable) << '\n'
       << rule << '\n';
    return os.str();
  }

  /// A copy of every parameter buffer, in layer order.
  [[nodiscard]] std::vector<std::vector<T>> get_weights() const {
    std::vector<std::vector<T>> out;
    for (const auto& p : params_) out.emplace_back(p.begin(), p.end());
    return out;
  }

  void set_weights(const std::vector<std::vector<T>>& weights) {
    if (weights.size() != params_.size()) {
      throw shape_error("Sequential.set_weights: expected " + std::to_string(params_.size()) +
                        " buffers (as get_weights), found " + std::to_string(weights.size()));
    }
    for (std::size_t i = 0; i < weights.size(); ++i) {
      if (weights[i].size() != params_[i].size()) {
        throw shape_error("Sequential.set_weights: expected buffer " + std::to_string(i) +
                          " to have " + std::to_string(params_[i].size()) + " values, found " +
                          std::to_string(weights[i].size()));
      }
    }
    for (std::size_t i = 0; i < weights.size(); ++i) {
      std::copy(weights[i].begin(), weights[i].end(), params_[i].begin());
    }
  }

  /// Writes the parameters and layer state to `path` (nn/weights_io.hpp: versioned, with the
  /// architecture and a checksum; written to a temporary file, then renamed).
  void save_weights(const std::filesystem::path& path) { detail::save_weights(*this, path); }

  /// Reads a save_weights file. An unbuilt model is built for the file's input shape first;
  /// a file from another architecture is a shape_error naming the first difference.
  void load_weights(const std::filesystem::path& path) { detail::load_weights(*this, path); }

  /// Writes the whole training state (nn/checkpoint.hpp): weights, layer and optimizer state,
  /// epochs done, seeds, Dropout positions and the History so far. Sharded optimizer state
  /// (FitOptions::shard_optimizer_state) is gathered first: then every rank must call it.
  void save_checkpoint(const std::filesystem::path& path) {
    detail::with_whole_optimizer_state(optimizer_.get(), exec_, [&] {
      detail::write_checkpoint(*this, path, epochs_done_);
    });
  }

  /// Restores a checkpoint into this model (compiled as the saved one; built first if it is not
  /// built) and returns what it holds besides the weights. fit's resume_from calls this.
  /// Sharded optimizer state is dropped first (the checkpoint's whole state replaces it; a
  /// failed load leaves fresh state), without communication.
  CheckpointData load_checkpoint(const std::filesystem::path& path) {
    if (optimizer_) optimizer_->reset_shard();
    CheckpointData data = detail::read_checkpoint(*this, path);
    history_ = data.history;
    fit_params_ = data.fit;
    epochs_done_ = data.epoch;
    return data;
  }

  /// The History of the current or last fit (a resumed fit's includes the checkpoint's epochs).
  [[nodiscard]] const History& history() const noexcept { return history_; }
  /// The settings of the current or last fit (Keras's callback.params), for callbacks.
  [[nodiscard]] const FitParams& fit_params() const noexcept { return fit_params_; }
  /// The seed the weights were drawn with (build's or the first fit's).
  [[nodiscard]] std::uint64_t build_seed() const noexcept { return build_seed_; }

  /// Asks fit to stop after the current epoch (what a callback calls).
  void stop_training() noexcept { stop_training_ = true; }

  [[nodiscard]] std::size_t size() const noexcept { return layers_.size(); }
  [[nodiscard]] Layer<T>& layer(std::size_t i) { return *layers_.at(i); }
  [[nodiscard]] const Layer<T>& layer(std::size_t i) const { return *layers_.at(i); }
  [[nodiscard]] const Shape& input_shape() const noexcept { return input_shape_; }
  [[nodiscard]] const Shape& output_shape() const noexcept { return output_shape_; }
  [[nodiscard]] bool is_built() const noexcept { return built_; }
  [[nodiscard]] bool is_compiled() const noexcept { return optimizer_ != nullptr; }
  [[nodiscard]] Optimizer<T>& optimizer() {
    check_compiled("Sequential.optimizer");
    return *optimizer_;
  }
  /// Bytes of optimizer state this process holds (its shard's when sharded; 0 before compile).
  [[nodiscard]] std::size_t optimizer_state_bytes() const noexcept {
    return optimizer_ ? optimizer_->state_bytes() : 0;
  }
  [[nodiscard]] index_t count_params() const {
    index_t n = 0;
    for (const auto& p : params_) n += static_cast<index_t>(p.size());
    return n;
  }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  /// fit's targets, converted once: labels, or real values (rows x per-sample output size).
  struct TargetData {
    Labels labels;
    Matrix<T> values;
    bool is_labels = false;
  };

  template <class Derived>
  TargetData make_targets(std::string_view where, const Eigen::MatrixBase<Derived>& y) const {
    using Y = typename Derived::Scalar;
    TargetData out;
    const index_t k = output_shape_.size();
    exec_.propagate_errors([&] {
      if constexpr (std::is_integral_v<Y>) {
        if (y.cols() != 1) {
          throw shape_error(std::string(where) +
                            ": expected integer labels as one column, "
                            "found " +
                            std::to_string(y.cols()) + " columns");
        }
        out.labels = y.col(0).template cast<std::int64_t>();
        if (loss_->takes_labels()) {
          out.is_labels = true;
          for (index_t i = 0; i < out.labels.size(); ++i) {
            if (out.labels(i) < 0 || out.labels(i) >= k) {
              throw invalid_argument(
                  std::string(where) + ": expected labels in 0.." + std::to_string(k - 1) +
                  " for the " + std::to_string(k) + " outputs of the last layer, found " +
                  std::to_string(out.labels(i)) + " at row " + std::to_string(i));
            }
          }
          return;
        }
        out.values = out.labels.template cast<T>();
      } else {
        static_assert(std::is_floating_point_v<Y>, "nn::Sequential: y must hold integers or reals");
        if (loss_->takes_labels()) {
          throw invalid_argument(std::string(where) + ": expected integer labels for " +
                                 std::string(loss_->name()) + ", found real targets");
        }
        out.values = y.template cast<T>();
        validation::check_finite(where, "y", out.values);
      }
      if (out.values.cols() != k) {
        throw shape_error(std::string(where) + ": expected y with " + std::to_string(k) +
                          " value(s) per row, the model's output shape " +
                          output_shape_.to_string() + ", found " +
                          std::to_string(out.values.cols()));
      }
    });
    return out;
  }

  /// Targets of the current batch (gathered by `gather`).
  Targets<T> batch_targets(const TargetData& data, index_t /*m*/) const {
    if (data.is_labels) return {batch_labels_.data(), nullptr, 0};
    return {nullptr, batch_values_.data(), data.values.cols()};
  }

  /// The batch of rows `rows` as the network's input, with its targets in the batch buffers.
  /// When `contiguous` (no shuffle) the rows are consecutive and X is read in place.
  TensorView<const T> gather(const MatrixRef<T>& X, const TargetData& targets,
                             std::span<const index_t> rows, bool contiguous) {
    const auto m = static_cast<index_t>(rows.size());
    if (targets.is_labels) {
      batch_labels_.resize(rows.size());
      for (std::size_t r = 0; r < rows.size(); ++r) batch_labels_[r] = targets.labels(rows[r]);
    } else {
      batch_values_.reshape(Shape{m, targets.values.cols()});
      auto V = batch_values_.matrix();
      for (index_t r = 0; r < m; ++r)
        V.row(r) = targets.values.row(rows[static_cast<std::size_t>(r)]);
    }
    if (contiguous) return input_view(X, rows.front(), m);
    batch_x_.reshape(input_shape_.with_batch(m));
    auto B = batch_x_.matrix();
    for (index_t r = 0; r < m; ++r) B.row(r) = X.row(rows[static_cast<std::size_t>(r)]);
    return batch_x_.view();
  }

  /// Rows [start, start + m) of X as the network's input: in place when X's rows are packed.
  TensorView<const T> input_view(const MatrixRef<T>& X, index_t start, index_t m) {
    if (X.outerStride() == X.cols()) {
      return {X.data() + start * X.cols(), input_shape_.with_batch(m)};
    }
    batch_x_.reshape(input_shape_.with_batch(m));
    batch_x_.matrix() = X.middleRows(start, m);
    return batch_x_.view();
  }

  TensorView<const T> forward(TensorView<const T> x, bool training) {
    for (auto& layer : layers_) x = layer->forward(x, training);
    return x;
  }

  /// The backward pass from the loss gradient, calling the gradient-ready hook per layer.
  void backward(T weight = T(1)) {
    TensorView<const T> g = loss_grad_.view();
    for (std::size_t i = layers_.size(); i-- > 0;) {
      g = layers_[i]->backward(g, needs_input_grad_[i]);
      gradient_ready(i, weight);
    }
  }

  /// Tells every layer where this process's `rows` rows of the training step sit in its global
  /// batch of `global_rows` rows (Layer::begin_batch, nn::BatchContext), with the policy's sum
  /// over the ranks behind a function pointer (layers are not templated on the policy).
  void begin_batch(index_t offset, index_t rows, index_t global_rows) {
    BatchContext context{.offset = offset, .rows = rows, .global_rows = global_rows};
    if constexpr (Exec::is_distributed) {
      context.reducer = static_cast<void*>(&exec_);
      context.reduce = [](void* policy, std::span<double> values) {
        static_cast<const Exec*>(policy)->allreduce(values, exec::reduce_op::sum);
      };
    }
    for (auto& layer : layers_) layer->begin_batch(context);
  }

  /// Layer i's gradients are final. Data-parallel training scales them by this rank's share
  /// of the global batch and starts the non-blocking all-reduce of the bucket holding them
  /// (nn/detail/gradient_sync.hpp), so communication overlaps the backward pass of the layers
  /// below; exec::local has nothing to do.
  void gradient_ready(std::size_t layer, T weight) {
    if constexpr (Exec::is_distributed) sync_.ready(layer, weight);
  }

  /// Waits for every bucket's all-reduce before the optimizer steps (nothing to wait for here).
  void wait_for_gradients() {
    if constexpr (Exec::is_distributed) sync_.wait();
  }

  /// One data-parallel step: this rank's m rows (order[start, start + m), m may be 0) of the
  /// global batch of global_m rows. Returns the global batch's loss (with regularisation) and
  /// number correct, the same on every rank; the optimizer steps only when the loss is finite
  /// everywhere, so the caller's error is raised on every rank.
  std::pair<double, double> distributed_step(const MatrixRef<T>& X, const TargetData& targets,
                                             std::span<const index_t> order, index_t start,
                                             index_t m, index_t global_m, bool shuffled) {
    m = std::max<index_t>(m, 0);
    // Sums over this rank's rows: loss without regularisation, correct predictions.
    step_stats_ = {0, 0};
    const T weight = static_cast<T>(static_cast<double>(m) / static_cast<double>(global_m));
    if (m > 0) {
      const TensorView<const T> xb = gather(
          X, targets,
          order.subspan(static_cast<std::size_t>(start), static_cast<std::size_t>(m)), !shuffled);
      const TensorView<const T> out = forward(xb, true);
      loss_grad_.reshape(out.shape);
      const double loss = loss_->compute(out, batch_targets(targets, m), loss_grad_.view());
      step_stats_[0] = loss * static_cast<double>(m);
      if (accuracy_) step_stats_[1] = count_correct(out, batch_targets(targets, m));
      sync_.start_stats(std::span<double>(step_stats_));
      backward(weight);
    } else {
      // No rows left on this rank: it adds nothing to the sums, but joins every reduction,
      // the layers' own (shadow_forward/shadow_backward: synchronized BatchNormalization's) in
      // the order the ranks with rows make them.
      for (auto& layer : layers_) layer->shadow_forward();
      sync_.start_stats(std::span<double>(step_stats_));
      for (std::size_t i = layers_.size(); i-- > 0;) {
        layers_[i]->shadow_backward(needs_input_grad_[i]);
        for (const auto& g : layers_[i]->gradients()) std::fill(g.begin(), g.end(), T(0));
        gradient_ready(i, T(1));
      }
    }
    wait_for_gradients();
    const double loss = step_stats_[0] / static_cast<double>(global_m) + regularization_loss();
    // Whole, or this rank's shard of the optimizer state then the parameters all-gathered.
    if (std::isfinite(loss)) sync_.step(*optimizer_, params_, grads_);
    return {loss, step_stats_[1]};
  }

  /// Rank r's part of `count` rows from `begin` split by rank in order: (first row, rows), the
  /// first count % ranks ranks taking one row more, so no row is dropped.
  std::pair<index_t, index_t> rank_share(index_t begin, index_t count) const {
    index_t rank = 0;
    index_t ranks = 1;
    if constexpr (Exec::is_distributed) {
      rank = exec_.rank();
      ranks = exec_.size();
    }
    const index_t base = count / ranks;
    const index_t extra = count % ranks;
    return {begin + rank * base + std::min(rank, extra), base + (rank < extra ? 1 : 0)};
  }

  /// Copies rank 0's parameters and layer state to every rank: the ranks start from the same
  /// weights even if they were built from different seeds or loaded differently.
  void broadcast_weights() {
    for (auto& layer : layers_) {
      for (const auto& p : layer->parameters()) exec_.broadcast(p, 0);
      for (const auto& s : layer->state()) exec_.broadcast(s, 0);
      // Dropout's seed and step: every rank keys its masks as rank 0 does.
      if (const auto r = layer->rng_state(); !r.empty()) exec_.broadcast(r, 0);
    }
  }

  /// evaluate_rows over every rank's rows [begin, end): (mean loss with regularisation,
  /// number correct, rows), the same on every rank. Local policies: this process's rows.
  std::tuple<double, double, index_t> evaluate_global(const MatrixRef<T>& X,
                                                      const TargetData& targets, index_t begin,
                                                      index_t end) {
    if constexpr (!Exec::is_distributed) {
      const auto [loss, correct] = evaluate_rows(X, targets, begin, end);
      return {loss, correct, end - begin};
    }
    const double reg = regularization_loss();
    std::array<double, 3> sums{0, 0, static_cast<double>(end - begin)};
    if (end > begin) {
      const auto [loss, correct] = evaluate_rows(X, targets, begin, end);
      sums[0] = (loss - reg) * sums[2];
      sums[1] = correct;
    }
    exec_.allreduce(std::span<double>(sums), exec::reduce_op::sum);
    const auto rows = static_cast<index_t>(sums[2]);
    return {rows > 0 ? sums[0] / sums[2] + reg : 0.0, sums[1], rows};
  }

  [[nodiscard]] double regularization_loss() const {
    double total = 0;
    for (const auto& layer : layers_) total += layer->regularization_loss();
    return total;
  }

  /// The number of correct predictions in the batch (a row of several binary outputs counts
  /// the share of them that are right, as Keras's binary_accuracy).
  double count_correct(TensorView<const T> out, const Targets<T>& y) const {
    const auto O = out.matrix();
    double correct = 0;
    switch (loss_->accuracy_kind()) {
      case AccuracyKind::sparse_categorical:
        for (index_t r = 0; r < O.rows(); ++r) {
          index_t best = 0;
          O.row(r).maxCoeff(&best);
          correct += best == y.labels[r] ? 1 : 0;
        }
        break;
      case AccuracyKind::binary_probability:
      case AccuracyKind::binary_logit: {
        // Keras's binary_accuracy: every entry thresholded; a row's share of correct entries.
        const T threshold = loss_->accuracy_kind() == AccuracyKind::binary_logit ? T(0) : T(0.5);
        index_t hits = 0;
        for (index_t i = 0; i < out.size(); ++i) {
          hits += ((out.data[i] > threshold) == (y.values[i] > T(0.5))) ? 1 : 0;
        }
        return static_cast<double>(hits) / static_cast<double>(O.cols());
      }
      case AccuracyKind::none:
        break;
    }
    return correct;
  }

  /// Mean loss (with regularisation) and the number correct over rows [begin, end), inference.
  std::pair<double, double> evaluate_rows(const MatrixRef<T>& X, const TargetData& targets,
                                          index_t begin, index_t end) {
    constexpr index_t batch = 256;
    double loss_sum = 0;
    double correct = 0;
    eval_rows_.resize(static_cast<std::size_t>(batch));
    for (index_t start = begin; start < end; start += batch) {
      const index_t m = std::min(batch, end - start);
      for (index_t r = 0; r < m; ++r) eval_rows_[static_cast<std::size_t>(r)] = start + r;
      const TensorView<const T> xb =
          gather(X, targets,
                 std::span<const index_t>(eval_rows_).first(static_cast<std::size_t>(m)), true);
      const TensorView<const T> out = forward(xb, false);
      loss_sum += loss_->compute(out, batch_targets(targets, m), {}) * static_cast<double>(m);
      if (accuracy_) correct += count_correct(out, batch_targets(targets, m));
    }
    return {loss_sum / static_cast<double>(end - begin) + regularization_loss(), correct};
  }

  /// Per-sample output shape of each layer for this input shape (shape_error if one refuses).
  std::vector<Shape> layer_shapes(const Shape& input) const {
    std::vector<Shape> shapes;
    Shape current = input;
    for (const auto& layer : layers_) {
      current = layer->output_shape(current);
      shapes.push_back(current);
    }
    return shapes;
  }

  void check_compiled(std::string_view where) const {
    if (optimizer_ && loss_) return;
    throw not_fitted_error(std::string(where) +
                           ": expected a compiled model, found one that is "
                           "not compiled; call compile(optimizer, loss) first");
  }

  static void check_width(std::string_view where, const Shape& input, index_t cols) {
    if (input.size() == cols) return;
    throw shape_error(std::string(where) + ": expected X with " + std::to_string(input.size()) +
                      " features (the model's input shape " + input.to_string() + "), found " +
                      std::to_string(cols));
  }

  void check_predict_input(std::string_view where, const MatrixRef<T>& X) const {
    if (!built_) {
      throw not_fitted_error(std::string(where) +
                             ": expected a built model, found one that is "
                             "not built yet; call fit (or build) first");
    }
    check_width(where, input_shape_, X.cols());
    validation::check_finite(where, "X", X);
  }

  static void check_options(std::string_view where, const FitOptions& o) {
    auto fail = [&](const std::string& what) {
      throw invalid_argument(std::string(where) + ": expected " + what);
    };
    if (o.epochs < 0) fail("epochs >= 0, found " + std::to_string(o.epochs));
    if (o.batch_size < 1) fail("batch_size >= 1, found " + std::to_string(o.batch_size));
    if (!(o.validation_split >= 0 && o.validation_split < 1)) {
      fail("validation_split in [0, 1), found " + std::to_string(o.validation_split));
    }
    if (o.validation_split > 0 && !o.validation_data.empty()) {
      fail("validation_split or validation_data, found both");
    }
    if (o.verbose < 0 || o.verbose > 2)
      fail("verbose 0, 1 or 2, found " + std::to_string(o.verbose));
  }

  /// A resumed fit must cut the same batches as the fit that wrote the checkpoint.
  static void check_resume(const CheckpointData& saved, const FitParams& now) {
    const FitParams& was = saved.fit;
    auto fail = [](const std::string& what, const std::string& expected, const std::string& found) {
      throw invalid_argument("Sequential.fit (resume_from): expected " + what + " " + expected +
                             " (as in the fit that wrote the checkpoint), found " + found +
                             "; other settings would not continue the same run");
    };
    if (was.seed != now.seed) fail("seed", std::to_string(was.seed), std::to_string(now.seed));
    if (was.batch_size != now.batch_size) {
      fail("batch_size", std::to_string(was.batch_size), std::to_string(now.batch_size));
    }
    if (was.shuffle != now.shuffle) {
      fail("shuffle", was.shuffle ? "true" : "false", now.shuffle ? "true" : "false");
    }
    if (!(was.validation_split == now.validation_split) ||
        was.validation_data != now.validation_data) {
      fail("validation_split " + std::to_string(was.validation_split) + " and validation_data",
           was.validation_data ? "given" : "not given",
           std::to_string(now.validation_split) + " and " +
               (now.validation_data ? "given" : "not given"));
    }
    if (was.samples != now.samples) {
      fail("training rows", std::to_string(was.samples), std::to_string(now.samples));
    }
  }

  // Callback dispatch (hooks are optional; see nn/callbacks.hpp).
  template <class C>
  void call_train_begin(C& c) {
    if constexpr (detail::has_on_train_begin<C, Sequential>) c.on_train_begin(*this);
  }
  template <class C>
  void call_epoch_begin(C& c, int epoch) {
    if constexpr (detail::has_on_epoch_begin<C, Sequential>) c.on_epoch_begin(*this, epoch);
  }
  template <class C>
  void call_batch_end(C& c, int batch, const Logs& logs) {
    if constexpr (detail::has_on_batch_end<C, Sequential>) c.on_batch_end(*this, batch, logs);
  }
  template <class C>
  void call_epoch_end(C& c, int epoch, const Logs& logs) {
    if constexpr (detail::has_on_epoch_end<C, Sequential>) {
      c.on_epoch_end(*this, epoch, logs);
    } else if constexpr (detail::epoch_end_callable<C, Sequential>) {
      c(*this, epoch, logs);
    }
  }
  template <class C>
  void call_train_end(C& c, const Logs& logs) {
    if constexpr (detail::has_on_train_end<C, Sequential>) c.on_train_end(*this, logs);
  }

  Exec exec_{};
  std::vector<std::unique_ptr<Layer<T>>> layers_;
  std::map<std::string, int> name_counts_;
  Shape input_shape_, output_shape_;
  bool built_ = false;
  std::vector<std::span<T>> params_, grads_;
  std::vector<bool> needs_input_grad_;
  std::unique_ptr<Optimizer<T>> optimizer_;
  std::unique_ptr<Loss<T>> loss_;
  bool accuracy_ = false;
  bool stop_training_ = false;
  std::uint64_t build_seed_ = 0;
  History history_;
  FitParams fit_params_;
  int epochs_done_ = 0;
  // Batch buffers: they only grow, so steady-state training allocates nothing.
  Tensor<T> batch_x_, batch_values_, loss_grad_;
  std::vector<std::int64_t> batch_labels_;
  std::vector<index_t> eval_rows_;
  // Data-parallel training: the gradient buckets' reductions and one step's batch sums.
  detail::GradientSync<T, Exec> sync_;
  std::array<double, 2> step_stats_{};
};

}  // namespace onelearn::nn
