#pragma once
/**
 * \class onelearn::nn::Sequential
 * \brief A stack of layers trained by mini-batch gradient descent, as Keras's Sequential.
 * \ingroup nn
 *
 * <!-- example-context: nn -->
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
 *                                 nn::EarlyStopping({.patience = 5,
 *                                                    .restore_best_weights = true}));
 * auto scores = model.evaluate(X_test, y_test);  // {"loss": ..., "accuracy": ...}
 * onelearn::Labels predicted = model.predict_classes(X_test);
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
 * epochs, batch_size, shuffle, seed, validation_split, validation_data, verbose, resume_from,
 * and the data-parallel settings replicated, shard_optimizer_state, bucket_bytes and
 * reproducible_blocks: see nn/fit_options.hpp.
 *
 * \par Data-parallel training (Exec = exec::mpi)
 * <!-- example-context: nn -->
 * \code
 * nn::Sequential<float, exec::mpi> model{exec::mpi(comm), nn::Input({64}), nn::Dense(10)};
 * model.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
 * model.fit(X_mine, y_mine, {.epochs = 10, .batch_size = 32});   // each rank: its own rows
 * \endcode
 * fit broadcasts rank 0's weights first; every step each rank runs forward and backward on
 * its part of the global batch, the gradients are summed over the ranks as the backward pass
 * goes (nn/detail/gradient_sync.hpp), and every rank takes the step one process takes on the
 * whole global batch. nn/fit_options.hpp describes the modes (per-rank or replicated rows),
 * gradient buckets, optimizer-state sharding, how layers see the global batch, and files and
 * output. exec::local runs the same loop as the one rank of one.
 *
 * \par Compute space (Space, the third template argument)
 * `nn::Sequential<T, Exec, Space>` runs Dense's products, the activations, the loss and the
 * optimizer's updates in a compute space (include `<onelearn/nn/space.hpp>` for Thrust's): `add`
 * and `compile` hand every layer, the loss and the optimizer the space's nn::NetworkKernels
 * (nn/network_kernels.hpp). Everything else runs the host's code on the same buffers, so only
 * host-accessible spaces are allowed (space::host, the default, and thrust_cpp,
 * thrust_omp, thrust_tbb); thrust_cuda is a compile-time error. `compute_space()` names it.
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
 * - Data-parallel training through the policy type (Exec = exec::mpi), above.
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
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <span>
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
#include "onelearn/nn/detail/batch_data.hpp"
#include "onelearn/nn/detail/batch_plan.hpp"
#include "onelearn/nn/detail/block_sum.hpp"
#include "onelearn/nn/detail/callback_dispatch.hpp"
#include "onelearn/nn/detail/fit_agreement.hpp"
#include "onelearn/nn/detail/gradient_sync.hpp"
#include "onelearn/nn/detail/random.hpp"
#include "onelearn/nn/detail/summary.hpp"
#include "onelearn/nn/errors.hpp"
#include "onelearn/nn/fit_options.hpp"
#include "onelearn/nn/layer.hpp"
#include "onelearn/nn/network_kernels.hpp"
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
#include "onelearn/space/concept.hpp"
#include "onelearn/space/host_space.hpp"

namespace onelearn::nn {

template <class T, exec::ExecutionPolicy Exec = exec::local,
          space::ComputeSpace Space = space::host>
class Sequential {
  static_assert(std::is_floating_point_v<T>, "nn::Sequential<T>: T must be float or double");
  static_assert(Space::host_accessible,
                "nn::Sequential<T, Exec, Space>: a network in a device space (thrust_cuda) is not "
                "available: its losses, optimizer updates and gradient all-reduce run the host's "
                "code on the layers' buffers, which must therefore be in host memory; use "
                "space::host or a CPU Thrust space (thrust_cpp, thrust_omp, thrust_tbb)");

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
    if constexpr (!std::is_same_v<Space, space::host>) layer->use_kernels(*kernels_);
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
    if constexpr (!std::is_same_v<Space, space::host>) optimizer_->use_kernels(*kernels_);
    loss_ = std::move(loss);
    if constexpr (!std::is_same_v<Space, space::host>) loss_->use_kernels(*kernels_);
    accuracy_ = accuracy;
    if (built_) optimizer_->build(params_);
    return *this;
  }

  template <class Derived>
  History fit(const MatrixRef<T>& X, const Eigen::MatrixBase<Derived>& y) {
    return fit(X, y, FitOptions{});
  }

  /// exec::local runs the data-parallel loop as the one rank of one: its collectives are no-ops
  /// and everything that only the ranks need sits behind Exec::is_distributed.
  template <class Derived, class... Callbacks>
  History fit(const MatrixRef<T>& X, const Eigen::MatrixBase<Derived>& y, const FitOptions& options,
              Callbacks&&... callbacks) {
    static_assert(
        (detail::Callback<std::remove_reference_t<Callbacks>, Sequential> && ...),
        "nn::Sequential::fit: every callback needs at least one of on_train_begin(model), "
        "on_epoch_begin(model, epoch), on_batch_end(model, batch, logs), "
        "on_epoch_end(model, epoch, logs), on_train_end(model, logs), or to be "
        "callable as f(model, epoch, logs)");
    using CallbackList = detail::CallbackList<Sequential, std::remove_reference_t<Callbacks>...>;
    CallbackList hooks(callbacks...);
    exec_.propagate_errors([&] {
      check_compiled(fit_where);
      detail::check_fit_options(fit_where, options);
    });
    if constexpr (Exec::is_distributed) {
      detail::agree_on_fit_settings(fit_where, exec_, options, *optimizer_, *loss_);
    }
    // Each rank reads its own checkpoint file; one that fails fails every rank at once.
    std::optional<CheckpointData> resumed;
    if (!options.resume_from.empty()) {
      exec_.propagate_errors([&] { resumed = load_checkpoint(options.resume_from); });
    }
    if constexpr (Exec::is_distributed) {
      // Every rank fingerprints its rows in its checkpoint's scheme, and the fingerprints are
      // combined or compared across ranks: checkpoints of two schemes (files written by two
      // versions of onelearn) are named as such, not as ranks holding different rows. Every
      // rank has `resumed` or none does: agree_on_fit_settings compared whether resume_from is
      // given, and a failed load threw on every rank.
      if (resumed) {
        onelearn::detail::NamedValues checkpoint;
        checkpoint.add("fingerprint scheme of the resume_from checkpoint",
                       resumed->fit.fingerprint_scheme);
        exec_.check_same_values(fit_where, checkpoint.values());
      }
    }
    FitPlan plan = plan_fit(X, y, options);
    prepare_data_parallel(options);
    prepare_blocks(options);
    // A checkpoint's fingerprint is compared in its own scheme (an older file's is scheme 1).
    const int scheme =
        resumed ? resumed->fit.fingerprint_scheme : detail::current_fingerprint_scheme;
    start_history(plan, options, resumed,
                  detail::fingerprint_training_rows(fit_where, exec_, X, y, plan.n_train,
                                                    options.replicated, scheme),
                  scheme);

    // verbose 1: Keras's progress bar (first, as Keras's ProgbarLogger); 2: one line an epoch.
    std::optional<ProgressBar> bar;
    const bool prints = !Exec::is_distributed || exec_.rank() == 0;  // one bar, not one a rank
    if (options.verbose == 1 && prints) bar.emplace(std::cout);
    if (options.verbose == 2 && prints) {
      bar.emplace(std::cout, ProgressBarOptions{.interactive = false});
    }
    const bool log_batches = CallbackList::has_batch_hook || bar.has_value();
    // Every hook runs inside propagate_errors: one that throws on one rank (ModelCheckpoint
    // writes on rank 0 only; a user's callback may fail anywhere) raises the same error on
    // every rank at once, where the others would wait in the next all-reduce until the
    // timeout. One small all-reduce per hook call; none for hooks no callback has.
    auto on_every_rank = [&](auto&& hook) {
      if constexpr (sizeof...(Callbacks) > 0) exec_.propagate_errors(hook);
    };
    auto batch_end = [&](int batch, const Logs& logs) {
      if (bar) bar->on_batch_end(*this, batch, logs);
      if constexpr (CallbackList::has_batch_hook) {
        on_every_rank([&] { hooks.batch_end(*this, batch, logs); });
      }
    };

    Logs epoch_logs;
    stop_training_ = false;
    if (bar) bar->on_train_begin(*this);
    on_every_rank([&] { hooks.train_begin(*this); });
    for (int epoch = fit_params_.initial_epoch; epoch < options.epochs && !stop_training_;
         ++epoch) {
      if (bar) bar->on_epoch_begin(*this, epoch);
      on_every_rank([&] { hooks.epoch_begin(*this, epoch); });
      run_epoch(X, plan, epoch, epoch_logs, log_batches, batch_end);
      if (plan.validates) validate(X, plan, epoch_logs);
      history_.epoch.push_back(epoch);
      for (const auto& [key, value] : epoch_logs) history_.history[key].push_back(value);
      epochs_done_ = epoch + 1;  // what a checkpoint written by an epoch-end hook records
      if (bar) bar->on_epoch_end(*this, epoch, epoch_logs);
      // ModelCheckpoint writes on rank 0 only, and a checkpoint holds the whole optimizer
      // state: sharded state is gathered on every rank around the epoch-end callbacks.
      if constexpr (Exec::is_distributed && CallbackList::template holds<ModelCheckpoint>) {
        detail::with_whole_optimizer_state(optimizer_.get(), exec_, [&] {
          on_every_rank([&] { hooks.epoch_end(*this, epoch, epoch_logs); });
        });
      } else {
        on_every_rank([&] { hooks.epoch_end(*this, epoch, epoch_logs); });
      }
      // A callback that stops training on one rank stops every rank, so that none is left
      // waiting in the next epoch's all-reduce.
      if constexpr (Exec::is_distributed && sizeof...(Callbacks) > 0) {
        std::int64_t stop = stop_training_ ? 1 : 0;
        exec_.allreduce(std::span<std::int64_t>(&stop, 1), exec::reduce_op::max);
        stop_training_ = stop != 0;
      }
    }
    on_every_rank([&] { hooks.train_end(*this, epoch_logs); });
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
      const TensorView<const T> xb = self.buffers_.input_view(X, start, m, input_shape_);
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
    return detail::summary_table(layers_, input_shape_, layer_shapes(input_shape_), built_);
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
    detail::with_whole_optimizer_state(
        optimizer_.get(), exec_, [&] { detail::write_checkpoint(*this, path, epochs_done_); });
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
  /// The compute space whose kernels run the layers' products and activations.
  [[nodiscard]] Space compute_space() const noexcept { return {}; }

 private:
  using TargetData = detail::TargetData<T>;
  static constexpr std::string_view fit_where = "Sequential.fit";

  static std::shared_ptr<const NetworkKernels<T>> make_kernels() {
    if constexpr (std::is_same_v<Space, space::host>) {
      return nullptr;
    } else {
      return std::make_shared<const typename space_network_kernels<T, Space>::type>();
    }
  }

  /// What fit settles before its first epoch: the targets, how the global batches are cut from
  /// every rank's rows, the held-out rows, and the epoch's order of this rank's rows.
  struct FitPlan {
    TargetData targets;
    index_t n_train = 0;  ///< this rank's training rows (all of them when replicated)
    detail::BatchPlan batches;
    index_t batch_size = 0;
    bool shuffle = true;
    std::uint64_t seed = 0;
    bool validates = false;  ///< a split or validation_data to evaluate after every epoch
    bool has_validation_data = false;
    Matrix<T> X_val;  ///< validation_data, converted to T once
    TargetData val_targets;
    std::vector<index_t> order;
    Logs batch_logs;
  };

  /// fit's checks of X, y and validation_data (on every rank, errors raised on all), the first
  /// fit's build, the weights broadcast from rank 0, and the plan of the batches.
  template <class Derived>
  FitPlan plan_fit(const MatrixRef<T>& X, const Eigen::MatrixBase<Derived>& y,
                   const FitOptions& options) {
    if constexpr (Exec::is_distributed) {
      // Ranks that built their models for different widths would broadcast buffers of
      // different sizes: check first, on every rank.
      const std::int64_t width = X.cols();
      exec_.check_same_shape("the number of features of X (Sequential.fit)",
                             std::span<const std::int64_t>(&width, 1));
    }
    exec_.propagate_errors([&] {
      validation::check_same_length(fit_where, "y", X.rows(), y.rows());
      // Under a distributed policy a rank may hold no rows (checked over all ranks below).
      if (X.rows() == 0 && !Exec::is_distributed) {
        throw invalid_argument(std::string(fit_where) + ": expected at least one sample, found 0");
      }
      validation::check_finite(fit_where, "X", X);
      if (!built_) {
        const Shape in = input_shape_.rank() > 0 ? input_shape_ : Shape{X.cols()};
        check_width(fit_where, in, X.cols());
        build(in, options.seed);
      }
      check_width(fit_where, input_shape_, X.cols());
    });
    if constexpr (Exec::is_distributed) broadcast_weights();
    FitPlan plan;
    plan.targets = make_targets(fit_where, y);
    plan.n_train =
        static_cast<index_t>(static_cast<double>(X.rows()) * (1.0 - options.validation_split));
    std::vector<std::int64_t> rank_rows{plan.n_train, X.rows() - plan.n_train};
    if constexpr (Exec::is_distributed) {
      rank_rows = exec_.allgatherv(std::span<const std::int64_t>(rank_rows));
    }
    plan.batches = detail::BatchPlan(fit_where, std::move(rank_rows),
                                     Exec::is_distributed && options.replicated, options.batch_size,
                                     exec_.rank(), exec_.size());
    const std::int64_t n_train_all = plan.batches.train_rows();
    const std::int64_t n_held_all = plan.batches.held_rows();
    // Decided from the gathered counts, so every rank throws or none does.
    if (n_train_all < 1 || (options.validation_split > 0 && n_held_all == 0)) {
      throw invalid_argument(std::string(fit_where) +
                             ": expected validation_split to leave at least "
                             "one training and one validation row, found " +
                             std::to_string(n_train_all) + " training rows of " +
                             std::to_string(n_train_all + n_held_all) +
                             (Exec::is_distributed ? " (over all ranks)" : ""));
    }
    plan.has_validation_data = !options.validation_data.empty();
    plan.validates = n_held_all > 0 || plan.has_validation_data;
    if (plan.has_validation_data) load_validation_data(options.validation_data, plan);
    plan.batch_size = options.batch_size;
    plan.shuffle = options.shuffle;
    plan.seed = options.seed;
    plan.order.resize(static_cast<std::size_t>(plan.n_train));
    for (index_t i = 0; i < plan.n_train; ++i) plan.order[static_cast<std::size_t>(i)] = i;
    return plan;
  }

  /// validation_data's rows and targets into the plan, converted to T and checked.
  void load_validation_data(const ValidationData& data, FitPlan& plan) {
    constexpr std::string_view where = "Sequential.fit (validation_data)";
    exec_.propagate_errors([&] {
      std::visit(
          [&](const auto& v) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
              plan.X_val = v.template cast<T>();
            }
          },
          data.X);
      check_width(where, input_shape_, plan.X_val.cols());
      validation::check_finite(where, "X", plan.X_val);
    });
    std::visit(
        [&](const auto& v) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
            exec_.propagate_errors([&] {
              validation::check_same_length(where, "y", plan.X_val.rows(), v.rows());
              if (plan.X_val.rows() == 0) {
                throw invalid_argument(
                    "Sequential.fit: expected validation_data with at least one row, found 0");
              }
            });
            plan.val_targets = make_targets(where, v);
          }
        },
        data.y);
  }

  /// FitOptions::reproducible_blocks: checked against the policy's mode and the layers, and
  /// this rank's blocks planned.
  void prepare_blocks(const FitOptions& options) {
    blocked_ = options.reproducible_blocks > 0;
    if (!blocked_) return;
    exec_.propagate_errors([&] {
      const std::string what = std::string(fit_where) + ": reproducible_blocks = " +
                               std::to_string(options.reproducible_blocks) + " expected ";
      if (Exec::is_distributed && !options.replicated) {
        throw invalid_argument(what + "replicated = true (every rank holding all the rows), found "
                               "the per-rank mode, whose rows move with the ranks");
      }
      for (std::size_t i = 0; i < layers_.size(); ++i) {
        if (!layers_[i]->state().empty()) {
          throw invalid_argument(what + "layers without batch statistics, found " +
                                 std::string(layers_[i]->class_name()) + " (layer " +
                                 std::to_string(i) + "), whose statistics would be each block's");
        }
      }
    });
    std::size_t values = 0;
    for (const auto& g : grads_) values += g.size();
    block_sum_.plan(options.reproducible_blocks, exec_.rank(), exec_.size(), values);
  }

  /// Distributed policies: the gradient buckets' plan, and the optimizer state sharded (or
  /// gathered back) as the options ask. Local policies have nothing to prepare.
  void prepare_data_parallel(const FitOptions& options) {
    if constexpr (Exec::is_distributed) {
      std::vector<std::vector<std::span<T>>> layer_grads;
      for (auto& layer : layers_) layer_grads.push_back(layer->gradients());
      sync_.prepare(&exec_, std::move(layer_grads), params_,
                    {.bucket_bytes = options.bucket_bytes,
                     .shard_optimizer_state = options.shard_optimizer_state});
      sync_.adopt(*optimizer_, exec_);  // shards (or gathers) the optimizer state
    }
  }

  /// The running fit's settings (fit_params()) and History: a resumed checkpoint's, checked to
  /// cut the same batches and to have epochs left, or new.
  void start_history(const FitPlan& plan, const FitOptions& options,
                     const std::optional<CheckpointData>& resumed, std::uint64_t fingerprint,
                     int fingerprint_scheme) {
    fit_params_ = FitParams{.epochs = options.epochs,
                            .initial_epoch = 0,
                            .steps = plan.batches.steps(),
                            .samples = plan.n_train,
                            .batch_size = plan.batch_size,
                            .shuffle = options.shuffle,
                            .seed = options.seed,
                            .validation_split = options.validation_split,
                            .validation_data = plan.has_validation_data,
                            .verbose = options.verbose,
                            .data_fingerprint = fingerprint,
                            .reproducible_blocks = options.reproducible_blocks,
                            .fingerprint_scheme = fingerprint_scheme};
    history_ = History{};
    if (resumed) {
      // Each rank checks its own checkpoint; a mismatch on one rank fails every rank.
      exec_.propagate_errors([&] {
        detail::check_resume(resumed->fit, fit_params_);
        if (options.epochs <= resumed->epoch) {
          throw invalid_argument(std::string(fit_where) + " (resume_from): expected epochs above " +
                                 std::to_string(resumed->epoch) +
                                 " (the epochs the checkpoint has done), found epochs = " +
                                 std::to_string(options.epochs) +
                                 ", which leaves nothing to train; ask for more epochs, or use "
                                 "load_checkpoint to restore the model without training");
        }
      });
      if constexpr (Exec::is_distributed) {
        onelearn::detail::NamedValues checkpoint;
        checkpoint.add("epoch of the resume_from checkpoint", resumed->epoch);
        exec_.check_same_values(fit_where, checkpoint.values());
      }
      fit_params_.initial_epoch = resumed->epoch;
      history_ = resumed->history;
    }
    epochs_done_ = fit_params_.initial_epoch;
  }

  /// One epoch's steps; `logs` gets the means of the batches' loss (and accuracy). With
  /// `log_batches`, on_batch_end(batch, running means) after every step.
  template <class OnBatchEnd>
  void run_epoch(const MatrixRef<T>& X, FitPlan& plan, int epoch, Logs& logs, bool log_batches,
                 OnBatchEnd& on_batch_end) {
    if (plan.shuffle) {
      std::uint64_t epoch_seed =
          detail::derive_seed(plan.seed ^ 0x5EEDULL, static_cast<std::uint64_t>(epoch));
      // Each rank shuffles its own rows, with a stream of its own; replicated data is
      // shuffled as one process shuffles it.
      if constexpr (Exec::is_distributed) {
        if (!plan.batches.replicated()) {
          epoch_seed = detail::derive_seed(epoch_seed, static_cast<std::uint64_t>(exec_.rank()));
        }
      }
      detail::permutation(epoch_seed, std::span<index_t>(plan.order));
    }
    double loss_sum = 0;
    double correct = 0;
    index_t seen = 0;
    for (index_t b = 0; b < plan.batches.steps(); ++b) {
      const auto [loss, batch_correct, global_m] =
          blocked_ ? run_batch_in_blocks(X, plan, epoch, b) : run_batch(X, plan, epoch, b);
      correct += batch_correct;
      loss_sum += loss * static_cast<double>(global_m);
      seen += global_m;
      if (log_batches) {
        plan.batch_logs.set("loss", loss_sum / static_cast<double>(seen));
        if (accuracy_) plan.batch_logs.set("accuracy", correct / static_cast<double>(seen));
        on_batch_end(static_cast<int>(b), plan.batch_logs);
      }
    }
    logs.set("loss", loss_sum / static_cast<double>(seen));
    if (accuracy_) logs.set("accuracy", correct / static_cast<double>(seen));
  }

  /// One training step on this rank's rows of global batch b: forward, loss, backward (each
  /// layer's gradients handed to the synchronisation as they are ready), then one optimizer
  /// step once the loss is known to be finite on every rank. Returns the global batch's loss
  /// (with regularisation), its correct predictions and its rows, the same on every rank.
  std::tuple<double, double, index_t> run_batch(const MatrixRef<T>& X, FitPlan& plan, int epoch,
                                                index_t b) {
    const index_t global_m = plan.batches.global_rows(b);
    const auto [start, m, offset] = plan.batches.share(b, global_m);
    begin_batch(offset, m, global_m);
    // Names the step in a collective's timeout message (exec::mpi's hang detection).
    if constexpr (requires { exec_.set_step("", 0, "", 0); }) {
      exec_.set_step("Sequential.fit epoch", epoch + 1, "batch", b + 1);
    }
    double loss = 0;       // the mean over this rank's rows, without regularisation
    step_stats_ = {0, 0};  // sums over this rank's rows: loss, correct predictions
    if (m > 0) {
      const TensorView<const T> xb = buffers_.gather(
          X, plan.targets,
          std::span<const index_t>(plan.order)
              .subspan(static_cast<std::size_t>(start), static_cast<std::size_t>(m)),
          !plan.shuffle, input_shape_);
      const TensorView<const T> out = forward(xb, true);
      loss_grad_.reshape(out.shape);
      const Targets<T> yb = buffers_.targets(plan.targets);
      loss = loss_->compute(out, yb, loss_grad_.view());
      if (accuracy_) step_stats_[1] = detail::count_correct(loss_->accuracy_kind(), out, yb);
      step_stats_[0] = loss * static_cast<double>(m);
      start_stats();
      // The rank's share of the global batch (1 on one process: its gradients stay as they are).
      backward(static_cast<T>(static_cast<double>(m) / static_cast<double>(global_m)));
    } else {
      // No rows left on this rank: it adds nothing to the sums, but joins every reduction,
      // the layers' own (shadow_forward/shadow_backward: synchronized BatchNormalization's) in
      // the order the ranks with rows make them.
      for (auto& layer : layers_) layer->shadow_forward();
      start_stats();
      for (std::size_t i = layers_.size(); i-- > 0;) {
        layers_[i]->shadow_backward(needs_input_grad_[i]);
        for (const auto& g : layers_[i]->gradients()) std::fill(g.begin(), g.end(), T(0));
        gradient_ready(i, T(1));
      }
    }
    wait_for_gradients();
    // The ranks' summed loss over the global batch; one process keeps its own mean as it is.
    if constexpr (Exec::is_distributed) loss = step_stats_[0] / static_cast<double>(global_m);
    loss += regularization_loss();
    check_finite_loss(loss, plan, epoch, b);
    apply_gradients();
    return {loss, step_stats_[1], global_m};
  }

  /// run_batch under FitOptions::reproducible_blocks (nn/detail/block_sum.hpp): this rank's
  /// blocks of global batch b, forward and backward one block at a time, then every block's
  /// gradient added in block order on every rank and one optimizer step. Every block starts
  /// from the step's random state (Dropout's mask stream), so a block draws the same masks on
  /// whichever rank runs it, and the step advances that state once, as one process's step.
  std::tuple<double, double, index_t> run_batch_in_blocks(const MatrixRef<T>& X, FitPlan& plan,
                                                          int epoch, index_t b) {
    const index_t global_m = plan.batches.global_rows(b);
    const index_t batch_start = b * plan.batch_size;
    if constexpr (requires { exec_.set_step("", 0, "", 0); }) {
      exec_.set_step("Sequential.fit epoch", epoch + 1, "batch", b + 1);
    }
    const std::vector<std::vector<std::int64_t>> step_random = random_states();
    for (index_t k = block_sum_.first(); k < block_sum_.end(); ++k) {
      restore_random_states(step_random);
      const auto [offset, m] = block_sum_.rows_of(k, global_m);
      if (m == 0) {
        for (auto& layer : layers_) layer->shadow_forward();  // Dropout's stream advances
        block_sum_.keep_empty(k);
        continue;
      }
      // No reducer: a block's passes are this process's alone.
      const BatchContext context{.offset = offset, .rows = m, .global_rows = global_m};
      for (auto& layer : layers_) layer->begin_batch(context);
      const TensorView<const T> xb = buffers_.gather(
          X, plan.targets,
          std::span<const index_t>(plan.order)
              .subspan(static_cast<std::size_t>(batch_start + offset), static_cast<std::size_t>(m)),
          !plan.shuffle, input_shape_);
      const TensorView<const T> out = forward(xb, true);
      loss_grad_.reshape(out.shape);
      const Targets<T> yb = buffers_.targets(plan.targets);
      const double loss = loss_->compute(out, yb, loss_grad_.view());
      const double correct =
          accuracy_ ? detail::count_correct(loss_->accuracy_kind(), out, yb) : 0.0;
      backward(T(1), /*synchronize=*/false);
      block_sum_.keep(k, grads_, static_cast<T>(static_cast<double>(m) / static_cast<double>(global_m)),
                      {loss * static_cast<double>(m), correct});
    }
    // A rank without blocks (more ranks than blocks) still advances its random state.
    if (block_sum_.first() == block_sum_.end()) {
      for (auto& layer : layers_) layer->shadow_forward();
    }
    const auto [loss_sum, correct] = block_sum_.sum(exec_, grads_);
    const double loss = loss_sum / static_cast<double>(global_m) + regularization_loss();
    check_finite_loss(loss, plan, epoch, b);
    optimizer_->step(params_, grads_);
    return {loss, correct, global_m};
  }

  /// Every layer's random state (Layer::rng_state: Dropout's seed and call count).
  std::vector<std::vector<std::int64_t>> random_states() {
    std::vector<std::vector<std::int64_t>> states;
    for (auto& layer : layers_) {
      const auto r = layer->rng_state();
      states.emplace_back(r.begin(), r.end());
    }
    return states;
  }

  void restore_random_states(const std::vector<std::vector<std::int64_t>>& states) {
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      const auto r = layers_[i]->rng_state();
      std::copy(states[i].begin(), states[i].end(), r.begin());
    }
  }

  /// The step's loss (over all ranks) must be finite before its update: training_error,
  /// naming the epoch and batch, otherwise (the same on every rank: the loss is).
  void check_finite_loss(double loss, const FitPlan& plan, int epoch, index_t b) const {
    if (std::isfinite(loss)) return;
    throw training_error(std::string(fit_where) + ": expected a finite loss, found " +
                         std::to_string(loss) + " in epoch " + std::to_string(epoch + 1) + "/" +
                         std::to_string(fit_params_.epochs) + ", batch " + std::to_string(b + 1) +
                         "/" + std::to_string(plan.batches.steps()) + " (" +
                         (Exec::is_distributed ? "over all ranks; " : "") +
                         "the optimisation diverged: lower the learning rate, clip the "
                         "gradients or scale the inputs)");
  }

  /// The held-out rows' val_loss (and val_accuracy) into `logs`, over every rank's rows.
  void validate(const MatrixRef<T>& X, const FitPlan& plan, Logs& logs) {
    const MatrixRef<T> held = plan.has_validation_data ? MatrixRef<T>(plan.X_val) : X;
    const TargetData& targets = plan.has_validation_data ? plan.val_targets : plan.targets;
    const index_t first = plan.has_validation_data ? 0 : plan.n_train;
    // Blocked: the blocks split all the held-out rows (every rank holds them). Otherwise
    // replicated held-out rows are shared by rank, and per-rank ones are each rank's own.
    const auto [val_begin, val_end] =
        blocked_ ? std::pair<index_t, index_t>{first, held.rows()}
                 : plan.batches.held_out(first, held.rows() - first);
    const auto [val_loss, val_correct, n_val] =
        blocked_ ? evaluate_in_blocks(held, targets, val_begin, val_end)
                 : evaluate_global(held, targets, val_begin, val_end);
    logs.set("val_loss", val_loss);
    if (accuracy_) logs.set("val_accuracy", val_correct / static_cast<double>(n_val));
  }

  template <class Derived>
  TargetData make_targets(std::string_view where, const Eigen::MatrixBase<Derived>& y) const {
    TargetData out;
    exec_.propagate_errors([&] { out = detail::make_targets(where, y, *loss_, output_shape_); });
    return out;
  }

  TensorView<const T> forward(TensorView<const T> x, bool training) {
    for (auto& layer : layers_) x = layer->forward(x, training);
    return x;
  }

  /// The backward pass from the loss gradient, calling the gradient-ready hook per layer
  /// (unless the step sums its gradients itself: reproducible_blocks).
  void backward(T weight = T(1), bool synchronize = true) {
    TensorView<const T> g = loss_grad_.view();
    for (std::size_t i = layers_.size(); i-- > 0;) {
      g = layers_[i]->backward(g, needs_input_grad_[i]);
      if (synchronize) gradient_ready(i, weight);
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

  // Data-parallel hooks of the step (nn/detail/gradient_sync.hpp); exec::local has nothing to
  // reduce, so they compile to nothing but the plain optimizer step.

  /// The step's batch sums (step_stats_) are reduced along with the gradients.
  void start_stats() {
    if constexpr (Exec::is_distributed) sync_.start_stats(std::span<double>(step_stats_));
  }

  /// Layer i's gradients are final. Data-parallel training scales them by this rank's share
  /// of the global batch and starts the non-blocking all-reduce of the bucket holding them,
  /// so communication overlaps the backward pass of the layers below.
  void gradient_ready(std::size_t layer, T weight) {
    if constexpr (Exec::is_distributed) sync_.ready(layer, weight);
  }

  /// Waits for every bucket's all-reduce (and the batch sums') before the optimizer steps.
  void wait_for_gradients() {
    if constexpr (Exec::is_distributed) sync_.wait();
  }

  /// The optimizer step: whole, or this rank's shard of the optimizer state then the
  /// parameters all-gathered.
  void apply_gradients() {
    if constexpr (Exec::is_distributed) {
      sync_.step(*optimizer_, params_, grads_);
    } else {
      optimizer_->step(params_, grads_);
    }
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

  /// evaluate_global under reproducible_blocks: rows [begin, end) of the whole held-out set
  /// (replicated: every rank holds them all) cut into the fit's blocks, each rank evaluating its
  /// blocks, the blocks' sums added in block order; the same bits on any number of ranks.
  std::tuple<double, double, index_t> evaluate_in_blocks(const MatrixRef<T>& X,
                                                         const TargetData& targets, index_t begin,
                                                         index_t end) {
    const index_t rows = end - begin;
    const double reg = regularization_loss();
    std::vector<double> mine;
    for (index_t k = block_sum_.first(); k < block_sum_.end(); ++k) {
      const auto [offset, m] = block_sum_.rows_of(k, rows);
      double loss_sum = 0, correct = 0;
      if (m > 0) {
        const auto [loss, c] = evaluate_rows(X, targets, begin + offset, begin + offset + m);
        loss_sum = (loss - reg) * static_cast<double>(m);
        correct = c;
      }
      mine.insert(mine.end(), {loss_sum, correct});
    }
    const auto [loss_sum, correct] = detail::BlockSum<T>::sum_stats(exec_, mine);
    return {rows > 0 ? loss_sum / static_cast<double>(rows) + reg : 0.0, correct, rows};
  }

  [[nodiscard]] double regularization_loss() const {
    double total = 0;
    for (const auto& layer : layers_) total += layer->regularization_loss();
    return total;
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
      const TensorView<const T> xb = buffers_.gather(
          X, targets, std::span<const index_t>(eval_rows_).first(static_cast<std::size_t>(m)), true,
          input_shape_);
      const TensorView<const T> out = forward(xb, false);
      const Targets<T> yb = buffers_.targets(targets);
      loss_sum += loss_->compute(out, yb, {}) * static_cast<double>(m);
      if (accuracy_) correct += detail::count_correct(loss_->accuracy_kind(), out, yb);
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

  Exec exec_{};
  // The space's kernels, which every layer holds a reference to: shared, so that moving the
  // model leaves them where the layers point (none for the host: a layer's default is the host's).
  std::shared_ptr<const NetworkKernels<T>> kernels_ = make_kernels();
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
  detail::BatchBuffers<T> buffers_;
  Tensor<T> loss_grad_;
  std::vector<index_t> eval_rows_;
  // Data-parallel training: the gradient buckets' reductions and one step's batch sums.
  detail::GradientSync<T, Exec> sync_;
  std::array<double, 2> step_stats_{};
  // FitOptions::reproducible_blocks: the step's gradient summed block by block.
  bool blocked_ = false;
  detail::BlockSum<T> block_sum_;
};

}  // namespace onelearn::nn
