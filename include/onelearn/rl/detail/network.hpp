#pragma once
// rl::detail::Network: an nn::Sequential (an MLP) trained on a loss the agent computes itself.
//
// Sequential::fit owns its loss; a policy-gradient or Q-learning loss is not a function of
// (X, y) rows, so the agents drive the model's layers through its public interface instead:
// layer(i).forward / backward, parameters() / gradients(), and the compiled optimizer's
// step(). The loop is Sequential's own run_batch, with the loss gradient supplied by the
// caller. Data-parallel training reuses Sequential's gradient synchronisation
// (nn/detail/gradient_sync.hpp): each layer's gradients are all-reduced as soon as its backward
// is done, so under exec::mpi every rank ends the step with the gradient summed over the
// ranks. Callers pass gradients already divided by the GLOBAL batch size, so the sum over the
// ranks is the gradient of the mean over the global batch (weight 1: nothing is rescaled).
//
// The Sequential is compiled with a MeanSquaredError that is never evaluated: compile() needs
// a loss, and compiling is what makes optimizer(), save_weights and onnx::save available.
// It lives behind a unique_ptr so that the gradient synchronisation's pointer to its execution
// policy survives moves of the agent.

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/nn/detail/gradient_sync.hpp"
#include "onelearn/nn/optimizers.hpp"
#include "onelearn/nn/sequential.hpp"

namespace onelearn::rl::detail {

/// The MLP of an agent: `hidden_layers` Dense layers of `units` with `activation`, then a linear
/// output layer of `outputs` whose initial kernel is scaled by `output_scale` (0.01 for a
/// policy head: an almost uniform first policy, as Stable-Baselines3's orthogonal gain 0.01).
struct NetworkSpec {
  index_t inputs = 1;
  index_t outputs = 1;
  std::int64_t hidden_layers = 2;
  std::int64_t units = 64;
  std::string activation = "tanh";
  double output_scale = 1.0;
  std::uint64_t seed = 0;
  /// false: backward leaves the gradients unreduced and the caller sums them over the ranks
  /// (the on-policy agents reduce every network's gradients and their statistics in one
  /// message a step: for networks this small, a message per layer costs more than it overlaps).
  bool reduce_gradients = true;
};

template <class T, class Exec = exec::local>
class Network {
 public:
  using model_type = nn::Sequential<T, Exec>;

  template <class OptimizerSpec>
  Network(const Exec& exec, const NetworkSpec& spec, const OptimizerSpec& optimizer)
      : model_(std::make_unique<model_type>(exec)), reduce_(spec.reduce_gradients) {
    model_->add(nn::Input({spec.inputs}));
    for (std::int64_t i = 0; i < spec.hidden_layers; ++i) {
      model_->add(nn::Dense(spec.units, {.activation = spec.activation}));
    }
    model_->add(nn::Dense(spec.outputs));
    model_->build(nn::Shape{spec.inputs}, spec.seed);
    model_->compile(optimizer, nn::MeanSquaredError{});
    if (spec.output_scale != 1.0) {
      auto kernel = model_->layer(model_->size() - 1).parameters().front();
      for (auto& w : kernel) w = static_cast<T>(static_cast<double>(w) * spec.output_scale);
    }
    for (std::size_t i = 0; i < model_->size(); ++i) {
      for (auto p : model_->layer(i).parameters()) params_.push_back(p);
      for (auto g : model_->layer(i).gradients()) grads_.push_back(g);
    }
    std::vector<std::vector<std::span<T>>> layer_grads;
    for (std::size_t i = 0; i < model_->size(); ++i) {
      layer_grads.push_back(model_->layer(i).gradients());
    }
    sync_.prepare(&model_->execution_policy(), std::move(layer_grads),
                  std::span<const std::span<T>>(params_));
  }

  [[nodiscard]] model_type& model() noexcept { return *model_; }
  [[nodiscard]] const model_type& model() const noexcept { return *model_; }
  [[nodiscard]] const std::vector<std::span<T>>& parameters() const noexcept { return params_; }
  [[nodiscard]] const std::vector<std::span<T>>& gradients() const noexcept { return grads_; }
  [[nodiscard]] nn::Optimizer<T>& optimizer() { return model_->optimizer(); }

  /// The outputs for the rows of x (m x inputs, row-major, contiguous). The view is valid until
  /// the next forward; with `training`, x must stay unchanged until backward (the layers keep
  /// views of their inputs).
  Eigen::Map<const Matrix<T>> forward(const T* x, index_t rows, bool training) {
    nn::TensorView<const T> v{x, nn::Shape{rows, model_->input_shape()[0]}};
    for (std::size_t i = 0; i < model_->size(); ++i) v = model_->layer(i).forward(v, training);
    return Eigen::Map<const Matrix<T>>(v.data, rows, model_->output_shape()[0]);
  }
  Eigen::Map<const Matrix<T>> forward(const Matrix<T>& x, bool training) {
    return forward(x.data(), x.rows(), training);
  }

  /// Backward from dL/d(outputs) of the last training forward, starting each layer's
  /// all-reduce as its gradients are ready (unless the spec leaves that to the caller). Call
  /// wait() before reading the gradients.
  void backward(const Matrix<T>& grad_output) {
    nn::TensorView<const T> g{grad_output.data(), nn::Shape{grad_output.rows(), grad_output.cols()}};
    for (std::size_t i = model_->size(); i-- > 0;) {
      g = model_->layer(i).backward(g, i > 0);
      if (reduce_) sync_.ready(i, T(1));
    }
  }

  /// A rank with no rows in a distributed step: zero gradients, joining every reduction.
  void backward_empty() {
    for (std::size_t i = model_->size(); i-- > 0;) {
      for (const auto& g : model_->layer(i).gradients()) std::fill(g.begin(), g.end(), T(0));
      if (reduce_) sync_.ready(i, T(1));
    }
  }

  void wait() { sync_.wait(); }

  /// Sum of the squared gradients (for the global norm clipping of several networks).
  [[nodiscard]] double gradient_squares() const {
    double s = 0;
    for (const auto& g : grads_) {
      for (const T v : g) s += static_cast<double>(v) * static_cast<double>(v);
    }
    return s;
  }
  void scale_gradients(T factor) {
    for (const auto& g : grads_) {
      for (T& v : g) v *= factor;
    }
  }

  /// One optimizer update from the (summed) gradients.
  void step() {
    model_->optimizer().step(std::span<const std::span<T>>(params_),
                             std::span<const std::span<T>>(grads_));
  }

  /// Rank 0's parameters on every rank (nothing on one process).
  void broadcast_parameters() {
    if constexpr (Exec::is_distributed) {
      for (const auto& p : params_) model_->execution_policy().broadcast(p, 0);
    }
  }

  /// This network's parameters := other's (a DQN target network's hard update).
  void copy_parameters_from(const Network& other) {
    for (std::size_t i = 0; i < params_.size(); ++i) {
      std::copy(other.params_[i].begin(), other.params_[i].end(), params_[i].begin());
    }
  }

 private:
  std::unique_ptr<model_type> model_;
  bool reduce_ = true;
  std::vector<std::span<T>> params_, grads_;
  nn::detail::GradientSync<T, Exec> sync_;
};

/// Scales every gradient so that their global norm (over all networks given and the extra
/// spans) is at most max_norm (PyTorch's clip_grad_norm_ over all parameters of the agent).
/// Returns the norm before clipping. max_norm <= 0: no clipping.
template <class T, class... Nets>
double clip_global_norm(double max_norm, std::span<T> extra, Nets&... nets) {
  double squares = (nets.gradient_squares() + ... + 0.0);
  for (const T v : extra) squares += static_cast<double>(v) * static_cast<double>(v);
  const double norm = std::sqrt(squares);
  if (max_norm > 0 && norm > max_norm) {
    // PyTorch's clip_coef = max_norm / (norm + 1e-6).
    const auto factor = static_cast<T>(max_norm / (norm + 1e-6));
    (nets.scale_gradients(factor), ...);
    for (T& v : extra) v *= factor;
  }
  return norm;
}

}  // namespace onelearn::rl::detail
