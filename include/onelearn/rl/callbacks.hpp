#pragma once
/**
 * \file
 * \brief rl::StopOnReturnThreshold and rl::EvaluateAndStop: callbacks of the agents' learn().
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/callbacks.hpp>
 * #include <onelearn/rl/agents/ppo.hpp>
 * #include <onelearn/rl/envs/cartpole_vector.hpp>
 * namespace rl = onelearn::rl;
 * rl::PPO agent(rl::CartPoleVectorEnv<float>(8));
 * // Stop once the mean training return of the last 100 episodes reaches 475:
 * agent.learn(100'000, rl::StopOnReturnThreshold({.threshold = 475}));
 * // Stop once 100 evaluation episodes on a separate environment average 475, evaluated
 * // every 4 iterations:
 * rl::CartPoleVectorEnv<float> eval_env(20);
 * rl::EvaluateAndStop stop(eval_env, {.episodes = 100, .threshold = 475, .every = 4});
 * agent.learn(100'000, stop);
 * double last = stop.last_mean_return();
 * \endcode
 *
 * Callbacks of the agents' learn(total_steps, callbacks...) beyond nn's (nn::EarlyStopping,
 * nn::ModelCheckpoint, nn::CSVLogger and lambdas work on agents as they do on Sequential; an
 * "epoch" is one iteration of the agent).
 *
 * - StopOnReturnThreshold (Stable-Baselines3's StopTrainingOnRewardThreshold, Keras's
 *   EarlyStopping with a baseline): after an iteration whose logged `monitor` (default
 *   "episode_return", the mean over the last 100 training episodes) is >= threshold, training
 *   stops. `min_episodes` (default 1) episodes must have ended first.
 * - EvaluateAndStop: every `every` iterations, agent.evaluate(env, episodes) (deterministic
 *   policy, seed `seed`); stops training when the mean return is >= threshold. Under a
 *   distributed policy every rank evaluates on its own copy of the environment with the same
 *   seed and the same model, so they agree.
 *
 * Errors: onelearn::invalid_argument for episodes < 1 or every < 1 (at construction), and a
 * monitor missing from the logs (at the first iteration).
 */

#include <cstdint>
#include <limits>
#include <string>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::rl {

class StopOnReturnThreshold {
 public:
  struct Options {
    double threshold = 0;
    std::string monitor = "episode_return";
    std::int64_t min_episodes = 1;
  };

  explicit StopOnReturnThreshold(Options options) : options_(std::move(options)) {}

  template <class Agent, class Logs>
  void on_epoch_end(Agent& agent, int iteration, const Logs& logs) {
    if (agent.episodes_finished() < options_.min_episodes) return;
    const double* value = logs.find(options_.monitor);
    if (value == nullptr) {
      throw onelearn::invalid_argument("StopOnReturnThreshold: expected '" + options_.monitor +
                                       "' in the iteration's logs; found only " + logs.keys());
    }
    if (*value >= options_.threshold) {
      stopped_iteration_ = iteration;
      agent.stop_training();
    }
  }

  /// The iteration after which training stopped, or -1.
  [[nodiscard]] int stopped_iteration() const noexcept { return stopped_iteration_; }

 private:
  Options options_;
  int stopped_iteration_ = -1;
};

template <class Env>
class EvaluateAndStop {
 public:
  struct Options {
    index_t episodes = 100;
    double threshold = std::numeric_limits<double>::infinity();
    int every = 1;
    std::uint64_t seed = 1'000'003;
  };

  EvaluateAndStop(Env& env, Options options) : env_(&env), options_(options) {
    if (options.episodes < 1 || options.every < 1) {
      throw onelearn::invalid_argument(
          "EvaluateAndStop: episodes and every must be >= 1; got episodes = " +
          std::to_string(options.episodes) + ", every = " + std::to_string(options.every));
    }
  }

  template <class Agent, class Logs>
  void on_epoch_end(Agent& agent, int iteration, const Logs& /*logs*/) {
    if ((iteration + 1) % options_.every != 0) return;
    last_ = agent.evaluate(*env_, options_.episodes, options_.seed);
    ++evaluations_;
    steps_at_last_ = agent.steps_done();
    if (last_ >= options_.threshold) {
      reached_ = true;
      agent.stop_training();
    }
  }

  [[nodiscard]] double last_mean_return() const noexcept { return last_; }
  [[nodiscard]] bool reached() const noexcept { return reached_; }
  [[nodiscard]] int evaluations() const noexcept { return evaluations_; }
  /// Environment steps of training when the last evaluation ran.
  [[nodiscard]] std::int64_t steps_at_last() const noexcept { return steps_at_last_; }

 private:
  Env* env_;
  Options options_;
  double last_ = -std::numeric_limits<double>::infinity();
  bool reached_ = false;
  int evaluations_ = 0;
  std::int64_t steps_at_last_ = 0;
};

}  // namespace onelearn::rl
