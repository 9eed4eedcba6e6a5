#pragma once
/**
 * \class onelearn::rl::DQN
 * \brief Deep Q-learning with a replay buffer, a target network and double Q-learning, as
 * Stable-Baselines3's DQN.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/agents/dqn.hpp>
 * #include <onelearn/rl/envs/cartpole.hpp>
 * #include <onelearn/rl/envs/cartpole_vector.hpp>
 * namespace rl = onelearn::rl;
 * // RL Zoo's CartPole-v1 settings:
 * rl::DQN agent(rl::CartPoleVectorEnv<float>(1),
 *               {.buffer_size = 100'000, .learning_starts = 1000, .batch_size = 64,
 *                .learning_rate = 2.3e-3, .train_freq = 256, .gradient_steps = 128,
 *                .target_update_interval = 10, .exploration_fraction = 0.16,
 *                .exploration_final_eps = 0.04, .hidden_units = 256, .seed = 1});
 * agent.learn(50'000);
 * rl::CartPole<float> env;
 * double mean = agent.evaluate(env, 100);        // greedy policy
 * \endcode
 *
 * rl::DQN: deep Q-learning (Mnih et al. 2015) with a replay buffer, a target network, double
 * Q-learning targets (van Hasselt et al. 2016; optional) and a linearly decaying
 * epsilon-greedy exploration, for Discrete actions. Stable-Baselines3's DQN is the reference
 * for the defaults and the schedule of collection, gradient steps and target updates.
 *
 * \par An iteration of learn()
 * `train_freq` steps of every copy, each action epsilon-greedy (uniformly random before
 * `learning_starts` steps), the transitions stored; every `target_update_interval` steps
 * (counted over the copies) the target network becomes a copy of the online one; then, once
 * more than learning_starts steps are done, `gradient_steps` steps on minibatches of
 * `batch_size` drawn from the buffer, each of the Huber loss between Q(s, a) and
 * r + gamma (1 - terminated) Q_target(s', a'), a' = argmax Q(s', .) (double_dqn) or
 * argmax Q_target(s', .). Epsilon goes linearly from exploration_initial_eps to
 * exploration_final_eps over the first exploration_fraction of total_steps.
 * Logs: episode_return, episode_length, steps, loss, exploration_rate.
 *
 * \par Parameters (DQNParams)
 * Defaults are Stable-Baselines3's: `buffer_size` (1e6) >= batch_size, `learning_starts` (100)
 * >= 0, `batch_size` (32) >= 1, `learning_rate` (1e-4), `gamma` (0.99) in [0, 1],
 * `train_freq` (4) >= 1, `gradient_steps` (1) >= 0, `target_update_interval` (10000) >= 1,
 * `exploration_fraction` (0.1) in [0, 1], `exploration_initial_eps` (1) and
 * `exploration_final_eps` (0.05) in [0, 1], `max_grad_norm` (10), `double_dqn` (true),
 * `hidden_layers` (2), `hidden_units` (64), `activation` ("relu"), `adam_epsilon` (1e-8),
 * `seed` (0), `verbose` (0).
 *
 * \par Members
 * As PPO (learn, evaluate, predict, policy() = the online Q network, whose argmax is the
 * action, checkpoints with the replay buffer, weights).
 *
 * \par Distributed (exec::mpi)
 * Each rank steps its own copies and keeps their transitions in the replay buffer's global
 * row layout (rl::ReplayBuffer); every rank draws the same minibatch of batch_size rows, each
 * computes the loss gradient of the drawn rows its copies wrote, and the gradients are summed
 * over the ranks. The run is one process's stepping every copy, to the rounding of the
 * gradient sums (tested on 2 and 3 ranks).
 *
 * Errors: onelearn::invalid_argument, naming the parameter, its value and the rule, at
 * construction: a buffer smaller than a batch, the ranges above, an unknown activation; Box
 * actions are a compile-time error (a static_assert: DQN needs Discrete actions).
 */

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/exec/local.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/nn/detail/activation_kernels.hpp"
#include "onelearn/nn/detail/random.hpp"
#include "onelearn/nn/optimizers.hpp"
#include "onelearn/rl/agents/detail/agent_base.hpp"
#include "onelearn/rl/buffers/replay_buffer.hpp"
#include "onelearn/rl/callbacks.hpp"
#include "onelearn/rl/detail/network.hpp"
#include "onelearn/rl/distributions.hpp"

namespace onelearn::rl {

struct DQNParams {
  std::int64_t buffer_size = 1'000'000;
  std::int64_t learning_starts = 100;
  std::int64_t batch_size = 32;
  double learning_rate = 1e-4;
  double gamma = 0.99;
  std::int64_t train_freq = 4;
  std::int64_t gradient_steps = 1;
  std::int64_t target_update_interval = 10'000;
  double exploration_fraction = 0.1;
  double exploration_initial_eps = 1.0;
  double exploration_final_eps = 0.05;
  double max_grad_norm = 10;
  bool double_dqn = true;
  std::int64_t hidden_layers = 2;
  std::int64_t hidden_units = 64;
  std::string activation = "relu";
  double adam_epsilon = 1e-8;
  std::uint64_t seed = 0;
  int verbose = 0;

  static constexpr std::array names{
      std::string_view{"buffer_size"},  std::string_view{"learning_starts"},
      std::string_view{"batch_size"},   std::string_view{"learning_rate"},
      std::string_view{"gamma"},        std::string_view{"train_freq"},
      std::string_view{"gradient_steps"}, std::string_view{"target_update_interval"},
      std::string_view{"exploration_fraction"}, std::string_view{"exploration_initial_eps"},
      std::string_view{"exploration_final_eps"}, std::string_view{"max_grad_norm"},
      std::string_view{"double_dqn"},   std::string_view{"hidden_layers"},
      std::string_view{"hidden_units"}, std::string_view{"activation"},
      std::string_view{"adam_epsilon"}, std::string_view{"seed"},
      std::string_view{"verbose"}};
};

template <class Envs, class Exec = exec::local>
class DQN : public detail::AgentBase<DQN<Envs, Exec>, Envs, Exec, DQNParams> {
  using Base = detail::AgentBase<DQN<Envs, Exec>, Envs, Exec, DQNParams>;
  static_assert(std::integral<typename Envs::action_type>, "onelearn::rl::DQN needs Discrete actions");

 public:
  using Params = DQNParams;
  using T = typename Envs::value_type;
  static constexpr std::string_view name = "DQN";

  explicit DQN(Envs envs, const Params& params = {}, const Exec& exec = Exec{})
      : Base(std::move(envs), params, exec) {
    const Params& p = this->params_;
    n_actions_ = this->envs_.single_action_space().n;
    const detail::NetworkSpec spec{.inputs = this->envs_.observation_size(), .outputs = n_actions_,
                                   .hidden_layers = p.hidden_layers, .units = p.hidden_units,
                                   .activation = p.activation, .seed = nn::detail::derive_seed(p.seed, 1)};
    const nn::Adam adam{.learning_rate = p.learning_rate, .epsilon = p.adam_epsilon};
    q_.emplace(this->exec_, spec, adam);
    target_.emplace(this->exec_, spec, adam);
    target_->copy_parameters_from(*q_);
    buffer_ = ReplayBuffer<T>(p.buffer_size, this->envs_.observation_size());
  }

  /// The online Q network (observations -> one value per action): what onnx::save exports.
  [[nodiscard]] auto& policy() noexcept { return q_->model(); }
  [[nodiscard]] const ReplayBuffer<T>& replay_buffer() const noexcept { return buffer_; }
  /// Epsilon at the current step.
  [[nodiscard]] double exploration_rate() const {
    const Params& p = this->params_;
    const double progress = static_cast<double>(this->steps_done_) /
                            static_cast<double>(std::max<std::int64_t>(this->total_steps_, 1));
    if (p.exploration_fraction <= 0 || progress >= p.exploration_fraction) return p.exploration_final_eps;
    return p.exploration_initial_eps +
           (p.exploration_final_eps - p.exploration_initial_eps) * progress / p.exploration_fraction;
  }

  /// Greedy actions for the rows of `observations`.
  Labels predict(const MatrixRef<T>& observations) {
    this->check_observations("predict", observations);
    return act(Matrix<T>(observations));
  }

  // Hooks of AgentBase; not for users.
  static void check_params(const Params& p) {
    using detail::check_param;
    check_param(name, "batch_size", static_cast<double>(p.batch_size), p.batch_size >= 1, ">= 1");
    check_param(name, "buffer_size", static_cast<double>(p.buffer_size), p.buffer_size >= p.batch_size,
                ">= batch_size (" + std::to_string(p.batch_size) + "): the buffer must hold a batch");
    check_param(name, "learning_starts", static_cast<double>(p.learning_starts), p.learning_starts >= 0, ">= 0");
    check_param(name, "learning_rate", p.learning_rate, p.learning_rate >= 0, ">= 0");
    check_param(name, "train_freq", static_cast<double>(p.train_freq), p.train_freq >= 1, ">= 1");
    check_param(name, "gradient_steps", static_cast<double>(p.gradient_steps), p.gradient_steps >= 0, ">= 0");
    check_param(name, "target_update_interval", static_cast<double>(p.target_update_interval),
                p.target_update_interval >= 1, ">= 1");
    for (const auto& [field, v] : {std::pair{"exploration_fraction", p.exploration_fraction},
                                   std::pair{"exploration_initial_eps", p.exploration_initial_eps},
                                   std::pair{"exploration_final_eps", p.exploration_final_eps}}) {
      check_param(name, field, v, v >= 0 && v <= 1, "in [0, 1]");
    }
    check_param(name, "hidden_layers", static_cast<double>(p.hidden_layers), p.hidden_layers >= 0, ">= 0");
    check_param(name, "hidden_units", static_cast<double>(p.hidden_units), p.hidden_units >= 1, ">= 1");
    check_param(name, "adam_epsilon", p.adam_epsilon, p.adam_epsilon > 0, "> 0");
    (void)nn::detail::parse_activation(name, p.activation);
  }
  [[nodiscard]] std::int64_t steps_per_iteration() const { return this->params_.train_freq * this->n_global_; }
  Labels act(const Matrix<T>& obs) {
    const auto q = q_->forward(obs, false);
    Labels a(q.rows());
    for (index_t i = 0; i < q.rows(); ++i) a(i) = Categorical<T>::mode(q, i);
    return a;
  }
  [[nodiscard]] std::vector<std::span<T>> parameter_spans() { return q_->parameters(); }
  template <class Visitor>
  void visit_networks(Visitor& v) {
    v.network(*q_);
    for (const auto& p : target_->parameters()) v.values(p);
  }
  template <class Visitor>
  void visit_extra(Visitor& v) {
    v.i64(buffer_.position);
    v.i64(buffer_.full);
    v.i64(calls_);
    v.i64(updates_);
  }
  /// Per rank: a distributed agent's buffer holds the rows its own copies wrote.
  template <class Visitor>
  void visit_rank_extra(Visitor& v) {
    v.values(std::span<T>(buffer_.observations.data(), static_cast<std::size_t>(buffer_.observations.size())));
    v.values(std::span<T>(buffer_.next_observations.data(), static_cast<std::size_t>(buffer_.next_observations.size())));
    v.values(std::span<std::int64_t>(buffer_.actions.data(), static_cast<std::size_t>(buffer_.actions.size())));
    v.values(std::span<T>(buffer_.rewards.data(), static_cast<std::size_t>(buffer_.rewards.size())));
    v.values(std::span<T>(buffer_.terminated.data(), static_cast<std::size_t>(buffer_.terminated.size())));
    v.values(std::span<std::int64_t>(buffer_.copy_of.data(), static_cast<std::size_t>(buffer_.copy_of.size())));
  }

  /// One iteration of learn(): train_freq steps of every copy, then the gradient steps.
  void iterate(nn::Logs& logs) {
    const Params& p = this->params_;
    for (std::int64_t s = 0; s < p.train_freq; ++s) collect_step();
    this->log_episodes(logs);
    double loss = 0;
    if (this->steps_done_ > p.learning_starts) {
      for (std::int64_t g = 0; g < p.gradient_steps; ++g) loss += train_step();
      if (p.gradient_steps > 0) logs.set("loss", loss / static_cast<double>(p.gradient_steps));
    }
    logs.set("exploration_rate", exploration_rate());
    this->finish_iteration();
  }

 private:
  void collect_step() {
    const Params& p = this->params_;
    const index_t n = this->n_local_;
    const std::int64_t step = this->steps_done_ / this->n_global_;
    const double eps = this->steps_done_ < p.learning_starts ? 1.0 : exploration_rate();
    Labels actions = act(this->obs_);
    for (index_t i = 0; i < n; ++i) {
      nn::detail::SplitMix rng(nn::detail::derive_seed(
          nn::detail::derive_seed(p.seed ^ 0xD09ULL, static_cast<std::uint64_t>(step)),
          static_cast<std::uint64_t>(this->offset_ + i)));
      if (rng.uniform() < eps) actions(i) = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n_actions_)));
    }
    const Matrix<T> before = this->obs_;
    const auto& result = this->step_envs(actions);
    // Every rank reserves the rows of all copies; this rank writes those of its own.
    const index_t first = buffer_.reserve(this->n_global_);
    for (index_t i = 0; i < n; ++i) {
      const bool done = result.done(i);
      buffer_.put((first + this->offset_ + i) % buffer_.capacity(), before.row(i), actions(i),
                  result.rewards(i),
                  done ? result.final_observations.row(i) : result.observations.row(i),
                  result.terminated(i));
    }
    this->after_step(result, step);
    ++calls_;
    if (calls_ % std::max<std::int64_t>(p.target_update_interval / this->n_global_, 1) == 0) {
      target_->copy_parameters_from(*q_);
    }
  }

  /// One gradient step of the Huber loss on a minibatch; returns the loss. Every rank draws the
  /// same rows (the draw of rank 0 of one process) and takes the gradient of those its copies
  /// wrote, divided by the whole batch: summed over the ranks, one process's gradient.
  double train_step() {
    const Params& p = this->params_;
    const auto drawn = buffer_.sample(p.batch_size, nn::detail::derive_seed(
        nn::detail::derive_seed(p.seed ^ 0x5A3ULL, static_cast<std::uint64_t>(updates_)), 0));
    ++updates_;
    rows_.clear();
    for (const index_t r : drawn) {
      const std::int64_t copy = buffer_.copy_of(r);
      if (copy >= this->offset_ && copy < this->offset_ + this->n_local_) rows_.push_back(r);
    }
    const auto m = static_cast<index_t>(rows_.size());
    const double scale = 1.0 / static_cast<double>(p.batch_size);
    double loss = 0;
    if (m == 0) {
      q_->backward_empty();
    } else {
      mb_obs_.resize(m, buffer_.observations.cols());
      next_.resize(m, buffer_.observations.cols());
      for (index_t i = 0; i < m; ++i) {
        mb_obs_.row(i) = buffer_.observations.row(rows_[static_cast<std::size_t>(i)]);
        next_.row(i) = buffer_.next_observations.row(rows_[static_cast<std::size_t>(i)]);
      }
      target_y_.resize(m);
      const auto next_target = target_->forward(next_, false);
      best_.resize(m);
      if (p.double_dqn) {
        const auto next_online = q_->forward(next_, false);  // before the training forward
        for (index_t i = 0; i < m; ++i) best_(i) = Categorical<T>::mode(next_online, i);
      } else {
        for (index_t i = 0; i < m; ++i) best_(i) = Categorical<T>::mode(next_target, i);
      }
      for (index_t i = 0; i < m; ++i) {
        const index_t r = rows_[static_cast<std::size_t>(i)];
        target_y_(i) = static_cast<double>(buffer_.rewards(r)) +
                       p.gamma * (1.0 - static_cast<double>(buffer_.terminated(r))) *
                           static_cast<double>(next_target(i, best_(i)));
      }
      const auto q = q_->forward(mb_obs_, true);
      grad_.setZero(m, q.cols());
      for (index_t i = 0; i < m; ++i) {
        const index_t a = buffer_.actions(rows_[static_cast<std::size_t>(i)]);
        const double d = static_cast<double>(q(i, a)) - target_y_(i);
        loss += std::abs(d) < 1 ? 0.5 * d * d : std::abs(d) - 0.5;  // smooth L1 (Huber, delta 1)
        grad_(i, a) = static_cast<T>(std::clamp(d, -1.0, 1.0) * scale);
      }
      q_->backward(grad_);
    }
    loss *= scale;
    this->execution_policy().allreduce(std::span<double>(&loss, 1), exec::reduce_op::sum);
    q_->wait();
    detail::clip_global_norm(p.max_grad_norm, std::span<T>(), *q_);
    q_->step();
    return loss;
  }

  std::optional<detail::Network<T, Exec>> q_, target_;
  ReplayBuffer<T> buffer_;
  index_t n_actions_ = 0;
  std::int64_t calls_ = 0;    // vectorised steps (target updates count them)
  std::int64_t updates_ = 0;  // gradient steps (minibatch draws are keyed by them)
  std::vector<index_t> rows_;  // the drawn rows this rank's copies wrote, in draw order
  Matrix<T> mb_obs_, next_, grad_;
  Vector<double> target_y_;
  Labels best_;
};

}  // namespace onelearn::rl
