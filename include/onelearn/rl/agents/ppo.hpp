#pragma once
/**
 * \class onelearn::rl::PPO
 * \brief Proximal policy optimisation with the clipped surrogate objective, as
 * Stable-Baselines3's PPO.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/agents/ppo.hpp>
 * #include <onelearn/rl/envs/cartpole.hpp>
 * #include <onelearn/rl/envs/cartpole_vector.hpp>
 * #include <onelearn/onnx/export.hpp>
 * namespace rl = onelearn::rl;
 * // RL Zoo's CartPole-v1 settings:
 * rl::PPO agent(rl::CartPoleVectorEnv<float>(8),
 *               {.n_steps = 32, .batch_size = 256, .n_epochs = 20, .learning_rate = 1e-3,
 *                .learning_rate_schedule = "linear", .gamma = 0.98, .gae_lambda = 0.8,
 *                .clip_range_schedule = "linear", .seed = 1, .verbose = 1});
 * agent.learn(100'000, rl::StopOnReturnThreshold({.threshold = 475}));
 * rl::CartPole<float> env;
 * double mean = agent.evaluate(env, 100);                 // deterministic policy
 * onelearn::onnx::save(agent.policy(), "cartpole.onnx");  // logits; argmax is the action
 * \endcode
 *
 * rl::PPO: proximal policy optimisation (Schulman et al. 2017) with the clipped surrogate
 * objective, GAE, a value loss and an entropy bonus, trained in minibatch epochs over each
 * rollout; Discrete actions (categorical policy) or Box actions (Gaussian policy with a
 * state-independent log standard deviation). Stable-Baselines3's PPO is the reference for
 * the defaults and the details (per-minibatch advantage normalisation, bootstrapped time
 * limits, joint gradient-norm clipping, linear schedules).
 *
 * \par Parameters (PPOParams)
 * Defaults are Stable-Baselines3's.
 * - `n_steps` (2048): steps of every copy per rollout. `batch_size` (64): rows per gradient
 *   step (the last minibatch of an epoch may be smaller), at most n_steps x copies.
 *   `n_epochs` (10): passes over each rollout, in a new random order each.
 * - `learning_rate` (3e-4), `learning_rate_schedule` ("constant" or "linear": multiplied by
 *   the fraction of total_steps left, updated after every rollout), Adam with
 *   `adam_epsilon` (1e-5).
 * - `gamma` (0.99) in [0, 1], `gae_lambda` (0.95) in [0, 1].
 * - `clip_range` (0.2) > 0, `clip_range_schedule` ("constant" or "linear").
 * - `normalize_advantage` (true): per minibatch, (A - mean) / (std + 1e-8).
 * - `ent_coef` (0) >= 0, `vf_coef` (0.5) >= 0, `max_grad_norm` (0.5; <= 0: no clipping).
 * - `log_std_init` (0): Box actions' initial log standard deviation.
 * - `hidden_layers` (2), `hidden_units` (64), `activation` ("tanh"): the actor's and the
 *   critic's MLPs (separate networks, as SB3's MlpPolicy). The policy head's initial kernel is
 *   scaled by 0.01 (an almost uniform first policy).
 * - `seed` (0): environments, weights, action draws, minibatch orders. `verbose` (0 or 1: the
 *   progress bar, with the mean return of the last 100 episodes).
 *
 * \par The loss
 * On a minibatch of M rows, r = exp(log pi - log pi_old), A normalised:
 * \verbatim
 *   L = -1/M sum min(r A, clip(r, 1 - eps, 1 + eps) A)
 *       - ent_coef mean(H) + vf_coef mean((R - V)^2)
 * \endverbatim
 * Its gradient is checked against finite differences (tests/unit/test_rl_agents.cpp).
 * learn() logs per iteration: episode_return, episode_length (last 100 episodes), steps,
 * policy_loss, value_loss, entropy, clip_fraction, approx_kl, learning_rate, clip_range.
 *
 * \par Members
 * learn(total_steps, callbacks...), evaluate(env, episodes[, seed]),
 * predict(observations[, deterministic]), policy() / value_function() (the nn::Sequential
 * networks), save_checkpoint / load_checkpoint (exact resume), get_weights / set_weights,
 * history(), steps_done(), get_params(); see rl/agents/detail/agent_base.hpp.
 *
 * \par Distributed (Exec = exec::mpi)
 * Construct each rank's environments with first_copy = the number of copies of the ranks
 * before it; every rank then steps its own copies and takes the step one process stepping all
 * copies would (rl/agents/detail/on_policy.hpp). Checkpoints hold every rank's copies: one
 * written by nn::ModelCheckpoint (or a save_checkpoint called on every rank) resumes, with a
 * load_checkpoint called on every rank, on as many ranks with the same copies each, to the
 * bits of the uninterrupted run (tests/mpi/test_rl.cpp).
 *
 * Errors: onelearn::invalid_argument, naming the parameter, its value and the rule, at
 * construction: gamma or gae_lambda outside [0, 1], clip_range <= 0, n_steps, n_epochs or
 * batch_size < 1, a batch larger than the rollout (n_steps x copies), learning_rate < 0,
 * ent_coef or vf_coef < 0, an unknown schedule or activation, hidden_layers < 0 or
 * hidden_units < 1, verbose not 0 or 1. The environments' own errors pass through.
 */

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/exec/local.hpp"
#include "onelearn/nn/detail/random.hpp"
#include "onelearn/nn/optimizers.hpp"
#include "onelearn/rl/agents/detail/on_policy.hpp"
#include "onelearn/rl/agents/detail/on_policy_params.hpp"
#include "onelearn/rl/callbacks.hpp"

namespace onelearn::rl {

struct PPOParams {
  std::int64_t n_steps = 2048;
  std::int64_t batch_size = 64;
  std::int64_t n_epochs = 10;
  double learning_rate = 3e-4;
  std::string learning_rate_schedule = "constant";
  double gamma = 0.99;
  double gae_lambda = 0.95;
  double clip_range = 0.2;
  std::string clip_range_schedule = "constant";
  bool normalize_advantage = true;
  double ent_coef = 0.0;
  double vf_coef = 0.5;
  double max_grad_norm = 0.5;
  double log_std_init = 0.0;
  std::int64_t hidden_layers = 2;
  std::int64_t hidden_units = 64;
  std::string activation = "tanh";
  double adam_epsilon = 1e-5;
  std::uint64_t seed = 0;
  int verbose = 0;

  static constexpr std::array names{
      std::string_view{"n_steps"},       std::string_view{"batch_size"},
      std::string_view{"n_epochs"},      std::string_view{"learning_rate"},
      std::string_view{"learning_rate_schedule"}, std::string_view{"gamma"},
      std::string_view{"gae_lambda"},    std::string_view{"clip_range"},
      std::string_view{"clip_range_schedule"}, std::string_view{"normalize_advantage"},
      std::string_view{"ent_coef"},      std::string_view{"vf_coef"},
      std::string_view{"max_grad_norm"}, std::string_view{"log_std_init"},
      std::string_view{"hidden_layers"}, std::string_view{"hidden_units"},
      std::string_view{"activation"},    std::string_view{"adam_epsilon"},
      std::string_view{"seed"},          std::string_view{"verbose"}};
};

template <class Envs, class Exec = exec::local>
class PPO : public detail::OnPolicyAgent<PPO<Envs, Exec>, Envs, Exec, PPOParams> {
  using Base = detail::OnPolicyAgent<PPO<Envs, Exec>, Envs, Exec, PPOParams>;

 public:
  using Params = PPOParams;
  static constexpr std::string_view name = "PPO";

  explicit PPO(Envs envs, const Params& params = {}, const Exec& exec = Exec{})
      : Base(std::move(envs), params, exec) {
    const std::int64_t rollout = params.n_steps * this->n_global_;
    detail::check_param(name, "batch_size", static_cast<double>(params.batch_size),
                        params.batch_size <= rollout,
                        "at most the rollout buffer's n_steps x copies = " + std::to_string(rollout));
  }

  // Hooks of the shared on-policy code (rl/agents/detail/on_policy.hpp); not for users.
  static void check_params(const Params& p) {
    detail::check_on_policy_params(name, p);
    detail::check_param(name, "batch_size", static_cast<double>(p.batch_size), p.batch_size >= 1, ">= 1");
    detail::check_param(name, "n_epochs", static_cast<double>(p.n_epochs), p.n_epochs >= 1, ">= 1");
    detail::check_param(name, "gae_lambda", p.gae_lambda, p.gae_lambda >= 0 && p.gae_lambda <= 1, "in [0, 1]");
    detail::check_param(name, "clip_range", p.clip_range, p.clip_range > 0, "> 0");
    detail::check_schedule(name, "clip_range_schedule", p.clip_range_schedule);
    detail::check_param(name, "adam_epsilon", p.adam_epsilon, p.adam_epsilon > 0, "> 0");
  }
  template <class F>
  static void with_optimizer(const Params& p, F&& make) {
    make(nn::Adam{.learning_rate = p.learning_rate, .epsilon = p.adam_epsilon});
  }
  static double lambda(const Params& p) { return p.gae_lambda; }
  static bool uses_critic(const Params& /*p*/) { return true; }
  static constexpr bool logs_clipping = true;

  /// The clipped surrogate's per-sample loss -min(r A, clip(r) A) and its derivative in
  /// log pi: -r A where the unclipped term is the minimum, 0 where the clipped one is (a
  /// constant there).
  [[nodiscard]] detail::PolicyTerm policy_term(double logp, double old, double adv) const {
    const double r = std::exp(logp - old);
    const double clipped = std::clamp(r, 1.0 - clip_, 1.0 + clip_);
    const double s1 = r * adv;
    const double s2 = clipped * adv;
    return {.loss = -std::min(s1, s2), .dlogp = s1 <= s2 ? -s1 : 0.0, .clipped = std::abs(r - 1.0) > clip_};
  }

  /// One iteration of learn(): a rollout, then n_epochs passes over it in minibatches.
  void iterate(nn::Logs& logs) {
    const Params& p = this->params_;
    this->collect_rollout();
    this->log_episodes(logs);
    const double lr = this->scheduled(p.learning_rate, p.learning_rate_schedule);
    clip_ = this->scheduled(p.clip_range, p.clip_range_schedule);
    this->set_learning_rate(lr);
    const auto rows = static_cast<std::size_t>(p.n_steps * this->n_global_);
    order_.resize(rows);
    for (std::int64_t epoch = 0; epoch < p.n_epochs; ++epoch) {
      const auto stream = static_cast<std::uint64_t>(this->iterations_) * static_cast<std::uint64_t>(p.n_epochs) +
                          static_cast<std::uint64_t>(epoch);
      nn::detail::permutation(nn::detail::derive_seed(p.seed ^ 0x5EEDULL, stream), std::span<index_t>(order_));
      for (std::size_t start = 0; start < rows; start += static_cast<std::size_t>(p.batch_size)) {
        const std::size_t m = std::min(static_cast<std::size_t>(p.batch_size), rows - start);
        this->gradient_step(std::span<const index_t>(order_).subspan(start, m));
      }
    }
    this->log_step_stats(logs);
    logs.set("learning_rate", lr);
    logs.set("clip_range", clip_);
    this->finish_iteration();
  }

  /// The clip range the next gradient steps use (after the schedule; tests set it by hand).
  void set_clip_range(double clip) { clip_ = clip; }

 private:
  double clip_ = this->params_.clip_range;
  std::vector<index_t> order_;
};

}  // namespace onelearn::rl
