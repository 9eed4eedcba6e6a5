#pragma once
/**
 * \file
 * \brief The optimizers: SGD, Adam, AdamW, RMSprop, Adagrad.
 * \ingroup nn
 *
 * <!-- example-context: nn -->
 * \code
 * #include <onelearn/nn/optimizers.hpp>
 *
 * namespace nn = onelearn::nn;
 * model.compile(nn::Adam{.learning_rate = 1e-3, .global_clipnorm = 1.0}, nn::MeanSquaredError{});
 * model.compile(nn::SGD{.learning_rate = 0.1, .momentum = 0.9, .nesterov = true},
 *               nn::SparseCategoricalCrossentropy{.from_logits = true});
 * \endcode
 *
 * The optimizers. Names and defaults are Keras's; the update formulas are PyTorch's (the two
 * differ only in where epsilon enters, noted below). t counts updates from 1, lr is the
 * learning rate (a constant or a schedule of t - 1, nn/schedules.hpp), g the gradient, p the
 * parameter; all state starts at 0 unless said otherwise.
 * - SGD(learning_rate 0.01, momentum 0, nesterov false, weight_decay 0): g ← g + wd p;
 *   with momentum b ← μ b + g and g ← g + μ b (Nesterov) or g ← b; p ← p - lr g. (Keras's
 *   velocity form gives the same iterates for a constant rate.)
 * - Adam(learning_rate 1e-3, beta_1 0.9, beta_2 0.999, epsilon 1e-7, weight_decay 0):
 *   g ← g + wd p (L2, PyTorch's Adam); m ← β1 m + (1-β1) g; v ← β2 v + (1-β2) g²;
 *   p ← p - lr (m / (1-β1^t)) / (sqrt(v / (1-β2^t)) + ε). Keras adds ε to sqrt(v) before the
 *   bias correction, so the two differ in the scale of ε only.
 * - AdamW(weight_decay 0.004, the rest as Adam): p ← p (1 - lr wd), then Adam without L2
 *   (decoupled weight decay, Loshchilov and Hutter; PyTorch's and Keras's AdamW).
 * - RMSprop(learning_rate 1e-3, rho 0.9, momentum 0, epsilon 1e-7, centered false):
 *   v ← ρ v + (1-ρ) g²; centred: a ← ρ a + (1-ρ) g, d = sqrt(v - a²) + ε, else d = sqrt(v) + ε;
 *   with momentum b ← μ b + g / d, p ← p - lr b, else p ← p - lr g / d. (Keras: g / sqrt(v + ε).)
 * - Adagrad(learning_rate 1e-3, initial_accumulator_value 0.1, epsilon 1e-7):
 *   s ← s + g² (s starts at initial_accumulator_value); p ← p - lr g / (sqrt(s) + ε).
 *   (Keras: g / sqrt(s + ε).)
 *
 * The element-wise updates run through nn::NetworkKernels (nn/network_kernels.hpp): the host's
 * Eigen arrays, or a compute space's in Sequential<T, Exec, Space>.
 *
 * global_clipnorm (every optimizer, default 0 = off): before the update, when the global norm
 * N = sqrt(Σ over all buffers of |g|²) exceeds c, every gradient is scaled by c / N (Keras's
 * global_clipnorm, tf.clip_by_global_norm; PyTorch's clip_grad_norm_). Keras's per-variable
 * `clipnorm` is not provided: under this name a Keras user gets a compile error rather than a
 * silently different clipping.
 *
 * State is kept per parameter buffer (Optimizer::build allocates it for the buffers
 * Sequential collects from its layers), in T, and exposed by state() for checkpoints;
 * state_bytes() is its size. A checkpoint (nn/checkpoint.hpp) saves state(), iterations()
 * and, when it is a constant, the learning rate, and restores them with set_iterations and
 * set_learning_rate; a schedule is code, so it is recomputed from the restored step.
 *
 * \par Sharded state (ZeRO stage 1; data-parallel Sequential's FitOptions::shard_optimizer_state)
 * Every update is element-wise (the only cross-element quantity, the global clipping norm, is
 * a sum of squares), so the optimizer can hold the state of a slice of the parameters only.
 * Think of the parameter buffers as one flat vector in buffer order; shard(begin, end) keeps
 * the state of the flat range [begin, end) (local, no communication): afterwards the optimizer
 * works on the pieces of the buffers that fall in the range (the intersections, in order,
 * empty ones dropped), step takes those pieces (and a function summing the clipping norm's
 * squares over the shards), state() and state_bytes() are the slice's. unshard(gather)
 * rebuilds the whole state from every shard's slice, gather(mine) returning the slices of all
 * shards concatenated in range order (an all-gather: collective). build() and reset_shard()
 * return to whole, fresh state. nn/detail/gradient_sync.hpp drives this for Sequential.
 *
 * Errors: `invalid_argument` (at compile) for a learning rate < 0, betas, rho or momentum
 * outside [0, 1), epsilon <= 0, weight_decay < 0, global_clipnorm < 0, or a bad schedule.
 */

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/network_kernels.hpp"
#include "onelearn/nn/schedules.hpp"
#include "onelearn/nn/tensor.hpp"

namespace onelearn::nn {

template <class T>
class Optimizer {
 public:
  using value_type = T;

  Optimizer(LearningRate learning_rate, double global_clipnorm)
      : learning_rate_(std::move(learning_rate)), global_clipnorm_(global_clipnorm) {
    check("global_clipnorm", global_clipnorm, global_clipnorm >= 0, ">= 0");
    const double first = learning_rate_(0);  // also validates a schedule's own parameters
    check("learning_rate", first, first >= 0, ">= 0");
  }
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  virtual ~Optimizer() = default;

  [[nodiscard]] virtual std::string_view name() const = 0;

  /// The hyper-parameters besides the learning rate, by name: what a distributed fit compares
  /// across the ranks (ranks with another momentum would train different models). An
  /// optimizer of one's own overrides it to add its own, after the base's.
  [[nodiscard]] virtual std::vector<std::pair<std::string_view, double>> hyperparameters() const {
    return {{"global_clipnorm", global_clipnorm_}};
  }

  /// Allocates zeroed state for these parameter buffers and resets the step count.
  void build(std::span<const std::span<T>> params) {
    iterations_ = 0;
    sizes_.clear();
    for (const auto& p : params) sizes_.push_back(p.size());
    full_sizes_.clear();
    sharded_ = false;
    build_state();
  }

  /// One update of every buffer from its gradient (clipped first when global_clipnorm is set;
  /// the clipping scales the gradient buffers in place).
  void step(std::span<const std::span<T>> params, std::span<const std::span<T>> grads) {
    step(params, grads, [](double squares) { return squares; });
  }

  /// The same on a shard's pieces (see "Sharded state"): sum_over_shards(x) returns the sum
  /// of x over all shards (an all-reduce), called once per step with this shard's sum of
  /// squared gradients when global_clipnorm is set, so that every shard clips by the global
  /// norm.
  template <class SumOverShards>
  void step(std::span<const std::span<T>> params, std::span<const std::span<T>> grads,
            SumOverShards&& sum_over_shards) {
    if (params.size() != sizes_.size() || grads.size() != sizes_.size()) {
      throw invalid_argument(std::string(name()) + ".step: expected " +
                             std::to_string(sizes_.size()) +
                             " parameter and gradient buffers, as in build, found " +
                             std::to_string(params.size()) + " and " +
                             std::to_string(grads.size()));
    }
    if (global_clipnorm_ > 0) {
      double squares = 0;
      for (const auto& g : grads) squares += as_array(g).template cast<double>().square().sum();
      squares = sum_over_shards(squares);
      const double norm = std::sqrt(squares);
      if (norm > global_clipnorm_) {
        const T scale = static_cast<T>(global_clipnorm_ / norm);
        for (const auto& g : grads) as_array(g) *= scale;
      }
    }
    const double lr = learning_rate_(iterations_);
    ++iterations_;
    for (std::size_t i = 0; i < params.size(); ++i) update(i, params[i], grads[i], lr);
  }

  /// The compute space's kernels for the updates (nn/network_kernels.hpp): Sequential<T, Exec,
  /// Space> hands its space's; the host's by default. The optimizer keeps the reference.
  void use_kernels(const NetworkKernels<T>& kernels) noexcept { kernels_ = &kernels; }
  [[nodiscard]] const NetworkKernels<T>& kernels() const noexcept { return *kernels_; }

  /// Updates done so far (t of the last update).
  [[nodiscard]] std::int64_t iterations() const noexcept { return iterations_; }
  /// The learning rate the next update will use.
  [[nodiscard]] double learning_rate() const { return learning_rate_(iterations_); }

  /// Replaces the learning rate (a constant or a schedule of the step) from the next update on:
  /// what LearningRateScheduler and checkpoints use. Keras's `optimizer.learning_rate = lr`.
  void set_learning_rate(LearningRate learning_rate) {
    const double first = learning_rate(iterations_);
    check("learning_rate", first, first >= 0, ">= 0");
    learning_rate_ = std::move(learning_rate);
  }
  /// Whether the learning rate is a constant (not a schedule of the step).
  [[nodiscard]] bool has_constant_learning_rate() const noexcept {
    return learning_rate_.is_constant();
  }

  /// Sets the update count (a checkpoint's); the next update is step `iterations` + 1.
  void set_iterations(std::int64_t iterations) {
    if (iterations < 0) {
      throw invalid_argument(std::string(name()) + ".set_iterations: expected >= 0, found " +
                             std::to_string(iterations));
    }
    iterations_ = iterations;
  }

  /// The state buffers (moments, accumulators), for checkpoints: slot s of buffer i at
  /// i * slots() + s (of the shard's pieces when sharded).
  [[nodiscard]] std::vector<std::span<T>> state() {
    std::vector<std::span<T>> out;
    for (auto& s : state_) out.emplace_back(s);
    return out;
  }

  /// Bytes of state this process holds (the slice's when sharded): the optimizer memory.
  [[nodiscard]] std::size_t state_bytes() const noexcept {
    std::size_t n = 0;
    for (const auto& s : state_) n += s.size();
    return n * sizeof(T);
  }
  /// State buffers per parameter buffer (Adam: 2, the moments).
  [[nodiscard]] int slots() const noexcept { return slots_; }

  /// Whether the state is a slice (shard) rather than the whole.
  [[nodiscard]] bool is_sharded() const noexcept { return sharded_; }
  /// The flat range [begin, end) whose state this optimizer holds (everything when whole).
  [[nodiscard]] std::pair<std::size_t, std::size_t> shard_range() const noexcept {
    return sharded_ ? std::pair{shard_begin_, shard_end_} : std::pair{std::size_t{0}, total()};
  }
  /// The number of parameter values of the whole model (the flat vector's length).
  [[nodiscard]] std::size_t total() const noexcept {
    std::size_t n = 0;
    for (const std::size_t size : sharded_ ? full_sizes_ : sizes_) n += size;
    return n;
  }

  /// Keeps only the state of the flat range [begin, end) of whole state (see "Sharded
  /// state"); iterations and learning rate are kept. Local: no communication.
  void shard(std::size_t begin, std::size_t end) {
    const std::string where = std::string(name()) + ".shard";
    if (sharded_) {
      throw invalid_argument(where + ": expected whole optimizer state, found a shard; call "
                             "unshard first");
    }
    if (begin > end || end > total()) {
      throw invalid_argument(where + ": expected 0 <= begin <= end <= " +
                             std::to_string(total()) + ", found [" + std::to_string(begin) +
                             ", " + std::to_string(end) + ")");
    }
    std::vector<std::size_t> pieces;
    std::vector<std::pair<std::size_t, std::size_t>> source;  // (buffer, offset in it)
    std::size_t offset = 0;
    for (std::size_t j = 0; j < sizes_.size(); ++j) {
      const std::size_t lo = std::max(begin, offset);
      const std::size_t hi = std::min(end, offset + sizes_[j]);
      if (lo < hi) {
        pieces.push_back(hi - lo);
        source.emplace_back(j, lo - offset);
      }
      offset += sizes_[j];
    }
    std::vector<AlignedVector<T>> whole = std::move(state_);
    const std::size_t slots = static_cast<std::size_t>(slots_);
    full_sizes_ = std::move(sizes_);
    sizes_ = std::move(pieces);
    build_state();  // the pieces' buffers (initial values overwritten below)
    for (std::size_t k = 0; k < sizes_.size(); ++k) {
      for (std::size_t s = 0; s < slots; ++s) {
        const auto& from = whole[source[k].first * slots + s];
        std::copy_n(from.begin() + static_cast<std::ptrdiff_t>(source[k].second), sizes_[k],
                    state_[k * slots + s].begin());
      }
    }
    sharded_ = true;
    shard_begin_ = begin;
    shard_end_ = end;
  }

  /// Rebuilds whole state from every shard's slice: gather(std::span<const T> mine) must
  /// return every shard's values concatenated in range order (an all-gather; collective, so
  /// every shard calls unshard, once per slot). Nothing happens when the state is whole.
  template <class Gather>
  void unshard(Gather&& gather) {
    if (!sharded_) return;
    const std::size_t slots = static_cast<std::size_t>(slots_);
    const std::size_t n = total();
    std::vector<T> mine(shard_end_ - shard_begin_);
    std::vector<std::vector<T>> flat;
    for (std::size_t s = 0; s < slots; ++s) {
      std::size_t at = 0;
      for (std::size_t k = 0; k < sizes_.size(); ++k) {
        const auto& piece = state_[k * slots + s];
        std::copy(piece.begin(), piece.end(), mine.begin() + static_cast<std::ptrdiff_t>(at));
        at += piece.size();
      }
      flat.push_back(gather(std::span<const T>(mine)));
      if (flat.back().size() != n) {
        throw distributed_error(std::string(name()) + ".unshard: expected the shards' state to "
                                "gather to " + std::to_string(n) + " values, found " +
                                std::to_string(flat.back().size()));
      }
    }
    reset_shard();
    std::size_t offset = 0;
    for (std::size_t j = 0; j < sizes_.size(); ++j) {
      for (std::size_t s = 0; s < slots; ++s) {
        std::copy_n(flat[s].begin() + static_cast<std::ptrdiff_t>(offset), sizes_[j],
                    state_[j * slots + s].begin());
      }
      offset += sizes_[j];
    }
  }

  /// Returns to whole state, freshly initialised (what loading a checkpoint overwrites);
  /// iterations and learning rate are kept. Local. Nothing happens when the state is whole.
  void reset_shard() {
    if (!sharded_) return;
    sizes_ = std::move(full_sizes_);
    full_sizes_.clear();
    sharded_ = false;
    build_state();
  }

 protected:
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  static Eigen::Map<Array> as_array(std::span<T> s) {
    return {s.data(), static_cast<index_t>(s.size())};
  }

  static void check(const char* what, double value, bool ok, const char* expected) {
    if (ok) return;
    throw invalid_argument(std::string("optimizer: expected ") + what + " " + expected +
                           ", found " + std::to_string(value));
  }

  static index_t size_of(std::span<T> s) { return static_cast<index_t>(s.size()); }

  /// Called by build: allocate per-buffer state (`slots` buffers per parameter buffer).
  virtual void build_state() = 0;
  /// Updates buffer i (p) from its gradient (g) at step t = iterations().
  virtual void update(std::size_t i, std::span<T> p, std::span<T> g, double lr) = 0;

  /// Slot `slot` of buffer i: state_[i * slots + slot].
  void allocate_slots(int slots, T initial = T(0)) {
    slots_ = slots;
    state_.clear();
    for (std::size_t size : sizes_) {
      for (int s = 0; s < slots; ++s) state_.emplace_back(size, initial);
    }
  }
  /// Slot `slot` of buffer i: its first value (null when the optimizer keeps no such slot).
  T* slot_data(std::size_t i, int s) {
    if (s >= slots_) return nullptr;
    return state_[i * static_cast<std::size_t>(slots_) + static_cast<std::size_t>(s)].data();
  }

 private:
  const NetworkKernels<T>* kernels_ = &host_network_kernels<T>();
  LearningRate learning_rate_;
  double global_clipnorm_;
  std::int64_t iterations_ = 0;
  std::vector<std::size_t> sizes_;
  std::vector<AlignedVector<T>> state_;
  int slots_ = 0;
  // Sharded: sizes_ are the pieces of [shard_begin_, shard_end_), full_sizes_ the buffers'.
  std::vector<std::size_t> full_sizes_;
  bool sharded_ = false;
  std::size_t shard_begin_ = 0, shard_end_ = 0;
};

template <class T>
class SGDOptimizer;
template <class T>
class AdamOptimizer;
template <class T>
class RMSpropOptimizer;
template <class T>
class AdagradOptimizer;

struct SGD {
  LearningRate learning_rate = 0.01;
  double momentum = 0;
  bool nesterov = false;
  double weight_decay = 0;
  double global_clipnorm = 0;

  template <class T>
  [[nodiscard]] std::unique_ptr<Optimizer<T>> make() const {
    return std::make_unique<SGDOptimizer<T>>(*this);
  }
};

struct Adam {
  LearningRate learning_rate = 1e-3;
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
  double weight_decay = 0;  ///< L2 added to the gradient (PyTorch's Adam weight_decay)
  double global_clipnorm = 0;

  template <class T>
  [[nodiscard]] std::unique_ptr<Optimizer<T>> make() const {
    return std::make_unique<AdamOptimizer<T>>(*this, false);
  }
};

struct AdamW {
  LearningRate learning_rate = 1e-3;
  double weight_decay = 0.004;  ///< decoupled: p ← p (1 - lr wd)
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
  double global_clipnorm = 0;

  template <class T>
  [[nodiscard]] std::unique_ptr<Optimizer<T>> make() const {
    return std::make_unique<AdamOptimizer<T>>(
        Adam{learning_rate, beta_1, beta_2, epsilon, weight_decay, global_clipnorm}, true);
  }
};

struct RMSprop {
  LearningRate learning_rate = 1e-3;
  double rho = 0.9;
  double momentum = 0;
  double epsilon = 1e-7;
  bool centered = false;
  double global_clipnorm = 0;

  template <class T>
  [[nodiscard]] std::unique_ptr<Optimizer<T>> make() const {
    return std::make_unique<RMSpropOptimizer<T>>(*this);
  }
};

struct Adagrad {
  LearningRate learning_rate = 1e-3;
  double initial_accumulator_value = 0.1;
  double epsilon = 1e-7;
  double global_clipnorm = 0;

  template <class T>
  [[nodiscard]] std::unique_ptr<Optimizer<T>> make() const {
    return std::make_unique<AdagradOptimizer<T>>(*this);
  }
};

template <class S, class T>
concept OptimizerSpec = requires(const S& spec) {
  { spec.template make<T>() } -> std::convertible_to<std::unique_ptr<Optimizer<T>>>;
};

template <class T>
class SGDOptimizer final : public Optimizer<T> {
 public:
  explicit SGDOptimizer(const SGD& spec)
      : Optimizer<T>(spec.learning_rate, spec.global_clipnorm),
        momentum_(static_cast<T>(spec.momentum)),
        weight_decay_(static_cast<T>(spec.weight_decay)),
        nesterov_(spec.nesterov) {
    this->check("momentum", spec.momentum, spec.momentum >= 0 && spec.momentum < 1, "in [0, 1)");
    this->check("weight_decay", spec.weight_decay, spec.weight_decay >= 0, ">= 0");
  }
  [[nodiscard]] std::string_view name() const override { return "SGD"; }
  [[nodiscard]] std::vector<std::pair<std::string_view, double>> hyperparameters() const override {
    auto h = Optimizer<T>::hyperparameters();
    h.insert(h.end(), {{"momentum", momentum_}, {"nesterov", nesterov_ ? 1 : 0}, {"weight_decay", weight_decay_}});
    return h;
  }

 protected:
  void build_state() override { this->allocate_slots(momentum_ > 0 ? 1 : 0); }
  void update(std::size_t i, std::span<T> p, std::span<T> g, double lr) override {
    this->kernels().sgd_update({.rate = static_cast<T>(lr),
                                .momentum = momentum_,
                                .weight_decay = weight_decay_,
                                .nesterov = nesterov_},
                               p.data(), g.data(), this->slot_data(i, 0), this->size_of(p));
  }

 private:
  T momentum_, weight_decay_;
  bool nesterov_;
};

template <class T>
class AdamOptimizer final : public Optimizer<T> {
 public:
  AdamOptimizer(const Adam& spec, bool decoupled)
      : Optimizer<T>(spec.learning_rate, spec.global_clipnorm),
        beta_1_(spec.beta_1),
        beta_2_(spec.beta_2),
        epsilon_(static_cast<T>(spec.epsilon)),
        weight_decay_(spec.weight_decay),
        decoupled_(decoupled) {
    this->check("beta_1", spec.beta_1, spec.beta_1 >= 0 && spec.beta_1 < 1, "in [0, 1)");
    this->check("beta_2", spec.beta_2, spec.beta_2 >= 0 && spec.beta_2 < 1, "in [0, 1)");
    this->check("epsilon", spec.epsilon, spec.epsilon > 0, "> 0");
    this->check("weight_decay", spec.weight_decay, spec.weight_decay >= 0, ">= 0");
  }
  [[nodiscard]] std::string_view name() const override { return decoupled_ ? "AdamW" : "Adam"; }
  [[nodiscard]] std::vector<std::pair<std::string_view, double>> hyperparameters() const override {
    auto h = Optimizer<T>::hyperparameters();
    h.insert(h.end(), {{"beta_1", beta_1_}, {"beta_2", beta_2_}, {"epsilon", epsilon_}, {"weight_decay", weight_decay_}});
    return h;
  }

 protected:
  void build_state() override { this->allocate_slots(2); }
  void update(std::size_t i, std::span<T> p, std::span<T> g, double lr) override {
    const auto t = static_cast<double>(this->iterations());
    const bool decays = weight_decay_ > 0;
    this->kernels().adam_update(
        {.beta_1 = static_cast<T>(beta_1_),
         .beta_2 = static_cast<T>(beta_2_),
         .epsilon = epsilon_,
         .step_size = static_cast<T>(lr / (1 - std::pow(beta_1_, t))),
         .inv_sqrt_correction2 = static_cast<T>(1 / std::sqrt(1 - std::pow(beta_2_, t))),
         .l2 = decays && !decoupled_ ? static_cast<T>(weight_decay_) : T(0),
         .shrink = decays && decoupled_ ? static_cast<T>(1 - lr * weight_decay_) : T(1)},
        p.data(), g.data(), this->slot_data(i, 0), this->slot_data(i, 1), this->size_of(p));
  }

 private:
  double beta_1_, beta_2_;
  T epsilon_;
  double weight_decay_;
  bool decoupled_;
};

template <class T>
class RMSpropOptimizer final : public Optimizer<T> {
 public:
  explicit RMSpropOptimizer(const RMSprop& spec)
      : Optimizer<T>(spec.learning_rate, spec.global_clipnorm),
        rho_(static_cast<T>(spec.rho)),
        momentum_(static_cast<T>(spec.momentum)),
        epsilon_(static_cast<T>(spec.epsilon)),
        centered_(spec.centered) {
    this->check("rho", spec.rho, spec.rho >= 0 && spec.rho < 1, "in [0, 1)");
    this->check("momentum", spec.momentum, spec.momentum >= 0 && spec.momentum < 1, "in [0, 1)");
    this->check("epsilon", spec.epsilon, spec.epsilon > 0, "> 0");
  }
  [[nodiscard]] std::string_view name() const override { return "RMSprop"; }
  [[nodiscard]] std::vector<std::pair<std::string_view, double>> hyperparameters() const override {
    auto h = Optimizer<T>::hyperparameters();
    h.insert(h.end(), {{"rho", rho_}, {"momentum", momentum_}, {"epsilon", epsilon_}, {"centered", centered_ ? 1 : 0}});
    return h;
  }

 protected:
  // Slots: 0 the mean square, 1 the momentum buffer, 2 the mean (centred).
  void build_state() override { this->allocate_slots(3); }
  void update(std::size_t i, std::span<T> p, std::span<T> g, double lr) override {
    this->kernels().rmsprop_update({.rate = static_cast<T>(lr),
                                    .rho = rho_,
                                    .momentum = momentum_,
                                    .epsilon = epsilon_,
                                    .centered = centered_},
                                   p.data(), g.data(), this->slot_data(i, 0),
                                   this->slot_data(i, 1), this->slot_data(i, 2), this->size_of(p));
  }

 private:
  T rho_, momentum_, epsilon_;
  bool centered_;
};

template <class T>
class AdagradOptimizer final : public Optimizer<T> {
 public:
  explicit AdagradOptimizer(const Adagrad& spec)
      : Optimizer<T>(spec.learning_rate, spec.global_clipnorm),
        initial_(static_cast<T>(spec.initial_accumulator_value)),
        epsilon_(static_cast<T>(spec.epsilon)) {
    this->check("initial_accumulator_value", spec.initial_accumulator_value,
                spec.initial_accumulator_value >= 0, ">= 0");
    this->check("epsilon", spec.epsilon, spec.epsilon > 0, "> 0");
  }
  [[nodiscard]] std::string_view name() const override { return "Adagrad"; }
  [[nodiscard]] std::vector<std::pair<std::string_view, double>> hyperparameters() const override {
    auto h = Optimizer<T>::hyperparameters();
    h.insert(h.end(), {{"initial_accumulator_value", initial_}, {"epsilon", epsilon_}});
    return h;
  }

 protected:
  void build_state() override { this->allocate_slots(1, initial_); }
  void update(std::size_t i, std::span<T> p, std::span<T> g, double lr) override {
    this->kernels().adagrad_update({.rate = static_cast<T>(lr), .epsilon = epsilon_}, p.data(),
                                   g.data(), this->slot_data(i, 0), this->size_of(p));
  }

 private:
  T initial_, epsilon_;
};

}  // namespace onelearn::nn
