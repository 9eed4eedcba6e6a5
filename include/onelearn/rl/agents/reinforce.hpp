#pragma once
/**
 * \class onelearn::rl::REINFORCE
 * \brief Williams's Monte-Carlo policy gradient, with an optional learned baseline.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/agents/reinforce.hpp>
 * #include <onelearn/rl/envs/cartpole_vector.hpp>
 * onelearn::rl::REINFORCE agent(onelearn::rl::CartPoleVectorEnv<float>(8), {.seed = 3});
 * agent.learn(100'000);
 * \endcode
 *
 * rl::REINFORCE: Williams's (1992) Monte-Carlo policy gradient, -mean(G log pi) with G the
 * discounted return from each step, optionally minus a learned baseline V (use_baseline,
 * default true: "REINFORCE with baseline", whose critic is trained on
 * vf_coef mean((G - V)^2)). It is the on-policy machinery of PPO and A2C
 * (rl/agents/detail/on_policy.hpp) with lambda = 1 and one gradient step per rollout.
 *
 * \par Rollouts
 * Updates come every n_steps steps of every copy, not at episode ends (so that copies stay in
 * step and rollouts spread over ranks as PPO's do). An episode still running at the cut has
 * its return completed by the baseline's estimate V(s) of the rest; without a baseline the
 * rest counts as 0, which biases the returns of such steps downwards: take n_steps well above
 * the episode length then (the default 512 covers CartPole's 500).
 *
 * \par Parameters (REINFORCEParams)
 * `n_steps` (512), `learning_rate` (1e-3), `learning_rate_schedule` ("constant" or "linear"),
 * `gamma` (0.99) in [0, 1], `use_baseline` (true), `normalize_advantage` (true), `ent_coef`
 * (0), `vf_coef` (0.5), `max_grad_norm` (0.5), `log_std_init` (0), `hidden_layers` (2),
 * `hidden_units` (64), `activation` ("tanh"), `adam_epsilon` (1e-8), `seed` (0), `verbose` (0).
 *
 * Members, logs and distribution as PPO (rl/agents/ppo.hpp).
 *
 * Errors: as PPO (rl/agents/ppo.hpp): onelearn::invalid_argument at construction for a
 * parameter outside its range.
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

struct REINFORCEParams {
  std::int64_t n_steps = 512;
  double learning_rate = 1e-3;
  std::string learning_rate_schedule = "constant";
  double gamma = 0.99;
  bool use_baseline = true;
  bool normalize_advantage = true;
  double ent_coef = 0.0;
  double vf_coef = 0.5;
  double max_grad_norm = 0.5;
  double log_std_init = 0.0;
  std::int64_t hidden_layers = 2;
  std::int64_t hidden_units = 64;
  std::string activation = "tanh";
  double adam_epsilon = 1e-8;
  std::uint64_t seed = 0;
  int verbose = 0;

  static constexpr std::array names{
      std::string_view{"n_steps"},      std::string_view{"learning_rate"},
      std::string_view{"learning_rate_schedule"}, std::string_view{"gamma"},
      std::string_view{"use_baseline"}, std::string_view{"normalize_advantage"},
      std::string_view{"ent_coef"},     std::string_view{"vf_coef"},
      std::string_view{"max_grad_norm"}, std::string_view{"log_std_init"},
      std::string_view{"hidden_layers"}, std::string_view{"hidden_units"},
      std::string_view{"activation"},   std::string_view{"adam_epsilon"},
      std::string_view{"seed"},         std::string_view{"verbose"}};
};

template <class Envs, class Exec = exec::local>
class REINFORCE : public detail::OnPolicyAgent<REINFORCE<Envs, Exec>, Envs, Exec, REINFORCEParams> {
  using Base = detail::OnPolicyAgent<REINFORCE<Envs, Exec>, Envs, Exec, REINFORCEParams>;

 public:
  using Params = REINFORCEParams;
  static constexpr std::string_view name = "REINFORCE";

  explicit REINFORCE(Envs envs, const Params& params = {}, const Exec& exec = Exec{})
      : Base(std::move(envs), params, exec) {}

  // Hooks of the shared on-policy code; not for users.
  static void check_params(const Params& p) {
    detail::check_on_policy_params(name, p);
    detail::check_param(name, "adam_epsilon", p.adam_epsilon, p.adam_epsilon > 0, "> 0");
  }
  template <class F>
  static void with_optimizer(const Params& p, F&& make) {
    make(nn::Adam{.learning_rate = p.learning_rate, .epsilon = p.adam_epsilon});
  }
  static double lambda(const Params& /*p*/) { return 1.0; }
  static bool uses_critic(const Params& p) { return p.use_baseline; }
  static constexpr bool logs_clipping = false;
  [[nodiscard]] static detail::PolicyTerm policy_term(double logp, double /*old*/, double adv) {
    return detail::vanilla_policy_term(logp, adv);
  }

  /// One iteration of learn(): a rollout, then one gradient step on all of it.
  void iterate(nn::Logs& logs) { this->iterate_one_step(logs); }
};

}  // namespace onelearn::rl
