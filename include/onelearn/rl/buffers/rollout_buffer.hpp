#pragma once
/**
 * \class onelearn::rl::RolloutBuffer
 * \brief What the on-policy agents collect between two updates, and its GAE advantages.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/buffers/rollout_buffer.hpp>
 * onelearn::rl::RolloutBuffer<float> buffer(32, 8, 4, 1);   // steps, copies, obs, action dims
 * // row t * n_envs + i holds copy i's step t (observations, actions, ...), filled by the agent
 * buffer.rewards.setOnes();
 * onelearn::Vector<float> last_values = onelearn::Vector<float>::Zero(8);  // V after the end
 * onelearn::Labels last_dones = onelearn::Labels::Zero(8);  // 1: the episode ended there
 * buffer.compute_advantages(last_values, last_dones, 0.98, 0.8);
 * const onelearn::Vector<float>& advantages = buffer.advantages;
 * \endcode
 *
 * rl::RolloutBuffer: what the on-policy agents (PPO, A2C, REINFORCE) collect between two
 * updates, n_steps steps of n_envs copies, and the advantages computed from it by generalised
 * advantage estimation (Schulman et al. 2016), as Stable-Baselines3's RolloutBuffer.
 *
 * \par GAE
 * With episode_starts(t, i) = 1 when the observation of step t began an episode,
 * \verbatim
 *   delta_t = r_t + gamma V(s_{t+1}) (1 - start_{t+1}) - V(s_t)
 *   A_t = delta_t + gamma lambda (1 - start_{t+1}) A_{t+1},   returns_t = A_t + V(s_t)
 * \endverbatim
 * with V(s_n) and start_n the values and "done" flags after the last step. An episode cut by
 * a time limit (truncated, not terminated) is bootstrapped by the agent, which adds
 * gamma V(final observation) to that step's reward before it is stored (as
 * Stable-Baselines3): the time limit is not a terminal state of the task. lambda = 1 gives
 * the Monte-Carlo return minus the baseline (REINFORCE with baseline; with zero values, the
 * discounted return itself).
 *
 * Errors: onelearn::invalid_argument for a size < 1 (at construction).
 */

#include <cstdint>
#include <string>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::rl {

template <class T>
class RolloutBuffer {
 public:
  RolloutBuffer() = default;
  RolloutBuffer(index_t n_steps, index_t n_envs, index_t observation_size, index_t action_size)
      : n_steps_(n_steps), n_envs_(n_envs) {
    for (const auto& [name, v] : {std::pair{"n_steps", n_steps}, std::pair{"n_envs", n_envs},
                                  std::pair{"observation_size", observation_size},
                                  std::pair{"action_size", action_size}}) {
      if (v < 1) {
        throw onelearn::invalid_argument(std::string("RolloutBuffer: ") + name +
                                         " must be >= 1; got " + std::to_string(v));
      }
    }
    const index_t n = n_steps * n_envs;
    observations.setZero(n, observation_size);
    continuous_actions.setZero(n, action_size);
    discrete_actions.setZero(n);
    rewards.setZero(n);
    episode_starts.setZero(n);
    values.setZero(n);
    log_probs.setZero(n);
    advantages.setZero(n);
    returns.setZero(n);
  }

  [[nodiscard]] index_t size() const noexcept { return n_steps_ * n_envs_; }
  [[nodiscard]] index_t n_steps() const noexcept { return n_steps_; }
  [[nodiscard]] index_t n_envs() const noexcept { return n_envs_; }
  [[nodiscard]] static index_t row(index_t t, index_t i, index_t n_envs) noexcept {
    return t * n_envs + i;
  }

  /// GAE over the buffer (see the file's comment). last_values(i): V of copy i's observation
  /// after the last step; last_dones(i): whether its episode ended at the last step.
  template <class Values, class Dones>
  void compute_advantages(const Values& last_values, const Dones& last_dones, double gamma,
                          double lambda) {
    for (index_t i = 0; i < n_envs_; ++i) {
      double gae = 0;
      for (index_t t = n_steps_; t-- > 0;) {
        const index_t r = row(t, i, n_envs_);
        double next_value = 0;
        double next_non_terminal = 0;
        if (t + 1 == n_steps_) {
          next_non_terminal = last_dones(i) ? 0.0 : 1.0;
          next_value = static_cast<double>(last_values(i));
        } else {
          const index_t next = row(t + 1, i, n_envs_);
          next_non_terminal = 1.0 - static_cast<double>(episode_starts(next));
          next_value = static_cast<double>(values(next));
        }
        const double delta = static_cast<double>(rewards(r)) +
                             gamma * next_value * next_non_terminal -
                             static_cast<double>(values(r));
        gae = delta + gamma * lambda * next_non_terminal * gae;
        advantages(r) = static_cast<T>(gae);
        returns(r) = static_cast<T>(gae + static_cast<double>(values(r)));
      }
    }
  }

  Matrix<T> observations;        ///< row t * n_envs + i: the observation acted on
  Matrix<T> continuous_actions;  ///< Box actions as sampled (before clipping to the box)
  Labels discrete_actions;       ///< Discrete actions
  Vector<T> rewards;             ///< with gamma V(final observation) added where truncated
  Vector<T> episode_starts;      ///< 1 where the observation began an episode
  Vector<T> values;              ///< V(observation) when it was collected
  Vector<T> log_probs;           ///< log pi(action | observation) when it was collected
  Vector<T> advantages;
  Vector<T> returns;

 private:
  index_t n_steps_ = 0;
  index_t n_envs_ = 0;
};

}  // namespace onelearn::rl
