#pragma once
/**
 * \class onelearn::rl::A2C
 * \brief Synchronous advantage actor-critic: one gradient step per rollout, as
 * Stable-Baselines3's A2C.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/agents/a2c.hpp>
 * #include <onelearn/rl/envs/cartpole_vector.hpp>
 * onelearn::rl::A2C agent(onelearn::rl::CartPoleVectorEnv<float>(8), {.seed = 3});
 * agent.learn(50'000);
 * \endcode
 *
 * rl::A2C: synchronous advantage actor-critic (Mnih et al. 2016): after every rollout of
 * n_steps steps of every copy, ONE gradient step on all of it, of
 * \verbatim
 *   L = -mean(A log pi) - ent_coef mean(H) + vf_coef mean((R - V)^2)
 * \endverbatim
 * with A from GAE (lambda 1 by default: n-step returns minus V). Discrete or Box actions, as
 * PPO, with which it shares the rollout, the networks, the loss code and everything else
 * (rl/agents/detail/on_policy.hpp). Defaults are Stable-Baselines3's (RMSprop, alpha 0.99,
 * eps 1e-5; no advantage normalisation).
 *
 * \par Parameters (A2CParams)
 * `n_steps` (5), `learning_rate` (7e-4), `learning_rate_schedule` ("constant" or "linear"),
 * `gamma` (0.99) and `gae_lambda` (1) in [0, 1], `ent_coef` (0) and `vf_coef` (0.5) >= 0,
 * `max_grad_norm` (0.5), `normalize_advantage` (false), `optimizer` ("rmsprop" or "adam"),
 * `rmsprop_alpha` (0.99) in [0, 1), `optimizer_epsilon` (1e-5) > 0, `log_std_init` (0),
 * `hidden_layers` (2), `hidden_units` (64), `activation` ("tanh"), `seed` (0), `verbose` (0).
 *
 * Members, logs (without PPO's clipping statistics) and distribution as PPO
 * (rl/agents/ppo.hpp).
 *
 * Errors: as PPO (rl/agents/ppo.hpp): onelearn::invalid_argument at construction for a
 * parameter outside the ranges above.
 */

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "onelearn/exec/local.hpp"
#include "onelearn/nn/optimizers.hpp"
#include "onelearn/rl/agents/detail/on_policy.hpp"
#include "onelearn/rl/agents/detail/on_policy_params.hpp"
#include "onelearn/rl/callbacks.hpp"

namespace onelearn::rl {

struct A2CParams {
  std::int64_t n_steps = 5;
  double learning_rate = 7e-4;
  std::string learning_rate_schedule = "constant";
  double gamma = 0.99;
  double gae_lambda = 1.0;
  double ent_coef = 0.0;
  double vf_coef = 0.5;
  double max_grad_norm = 0.5;
  bool normalize_advantage = false;
  std::string optimizer = "rmsprop";
  double rmsprop_alpha = 0.99;
  double optimizer_epsilon = 1e-5;
  double log_std_init = 0.0;
  std::int64_t hidden_layers = 2;
  std::int64_t hidden_units = 64;
  std::string activation = "tanh";
  std::uint64_t seed = 0;
  int verbose = 0;

  static constexpr std::array names{
      std::string_view{"n_steps"},       std::string_view{"learning_rate"},
      std::string_view{"learning_rate_schedule"}, std::string_view{"gamma"},
      std::string_view{"gae_lambda"},    std::string_view{"ent_coef"},
      std::string_view{"vf_coef"},       std::string_view{"max_grad_norm"},
      std::string_view{"normalize_advantage"}, std::string_view{"optimizer"},
      std::string_view{"rmsprop_alpha"}, std::string_view{"optimizer_epsilon"},
      std::string_view{"log_std_init"},  std::string_view{"hidden_layers"},
      std::string_view{"hidden_units"},  std::string_view{"activation"},
      std::string_view{"seed"},          std::string_view{"verbose"}};
};

template <class Envs, class Exec = exec::local>
class A2C : public detail::OnPolicyAgent<A2C<Envs, Exec>, Envs, Exec, A2CParams> {
  using Base = detail::OnPolicyAgent<A2C<Envs, Exec>, Envs, Exec, A2CParams>;

 public:
  using Params = A2CParams;
  static constexpr std::string_view name = "A2C";

  explicit A2C(Envs envs, const Params& params = {}, const Exec& exec = Exec{})
      : Base(std::move(envs), params, exec) {}

  // Hooks of the shared on-policy code; not for users.
  static void check_params(const Params& p) {
    detail::check_on_policy_params(name, p);
    detail::check_param(name, "gae_lambda", p.gae_lambda, p.gae_lambda >= 0 && p.gae_lambda <= 1, "in [0, 1]");
    if (p.optimizer != "rmsprop" && p.optimizer != "adam") {
      throw onelearn::invalid_argument("A2C: optimizer must be \"rmsprop\" or \"adam\"; got \"" + p.optimizer + "\"");
    }
    detail::check_param(name, "rmsprop_alpha", p.rmsprop_alpha, p.rmsprop_alpha >= 0 && p.rmsprop_alpha < 1, "in [0, 1)");
    detail::check_param(name, "optimizer_epsilon", p.optimizer_epsilon, p.optimizer_epsilon > 0, "> 0");
  }
  template <class F>
  static void with_optimizer(const Params& p, F&& make) {
    if (p.optimizer == "adam") {
      make(nn::Adam{.learning_rate = p.learning_rate, .epsilon = p.optimizer_epsilon});
    } else {
      make(nn::RMSprop{.learning_rate = p.learning_rate, .rho = p.rmsprop_alpha, .epsilon = p.optimizer_epsilon});
    }
  }
  static double lambda(const Params& p) { return p.gae_lambda; }
  static bool uses_critic(const Params& /*p*/) { return true; }
  static constexpr bool logs_clipping = false;
  [[nodiscard]] static detail::PolicyTerm policy_term(double logp, double /*old*/, double adv) {
    return detail::vanilla_policy_term(logp, adv);
  }

  /// One iteration of learn(): a rollout, then one gradient step on all of it.
  void iterate(nn::Logs& logs) { this->iterate_one_step(logs); }
};

}  // namespace onelearn::rl
