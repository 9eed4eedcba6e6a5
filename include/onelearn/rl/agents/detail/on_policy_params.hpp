#pragma once
// The checks every on-policy agent's Params share (PPO, A2C, REINFORCE have these fields under
// the same names): each failure is an onelearn::invalid_argument naming the agent, the
// parameter, its value and the rule. gamma and verbose are checked by AgentBase.

#include <cmath>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"
#include "onelearn/nn/detail/activation_kernels.hpp"
#include "onelearn/rl/agents/detail/agent_base.hpp"

namespace onelearn::rl::detail {

inline void check_schedule(std::string_view agent, std::string_view name, const std::string& value) {
  if (value == "constant" || value == "linear") return;
  throw onelearn::invalid_argument(std::string(agent) + ": " + std::string(name) +
                                   " must be \"constant\" or \"linear\"; got \"" + value + "\"");
}

template <class P>
void check_on_policy_params(std::string_view agent, const P& p) {
  check_param(agent, "n_steps", static_cast<double>(p.n_steps), p.n_steps >= 1, ">= 1");
  check_param(agent, "learning_rate", p.learning_rate, p.learning_rate >= 0, ">= 0");
  check_schedule(agent, "learning_rate_schedule", p.learning_rate_schedule);
  check_param(agent, "ent_coef", p.ent_coef, p.ent_coef >= 0, ">= 0");
  check_param(agent, "vf_coef", p.vf_coef, p.vf_coef >= 0, ">= 0");
  check_param(agent, "log_std_init", p.log_std_init, std::isfinite(p.log_std_init), "finite");
  check_param(agent, "hidden_layers", static_cast<double>(p.hidden_layers), p.hidden_layers >= 0, ">= 0");
  check_param(agent, "hidden_units", static_cast<double>(p.hidden_units), p.hidden_units >= 1, ">= 1");
  (void)nn::detail::parse_activation(agent, p.activation);
}

}  // namespace onelearn::rl::detail
