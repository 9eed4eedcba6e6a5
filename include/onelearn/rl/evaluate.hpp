#pragma once
/**
 * \file
 * \brief rl::evaluate_policy: the returns of a policy over whole episodes.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/evaluate.hpp>
 * #include <onelearn/rl/envs/cartpole.hpp>
 * onelearn::rl::CartPole<float> env;
 * auto result = onelearn::rl::evaluate_policy(
 *     [](const onelearn::Matrix<float>& obs) {            // one row per observation
 *       onelearn::Labels a(obs.rows());
 *       for (onelearn::index_t i = 0; i < obs.rows(); ++i) a(i) = obs(i, 2) > 0 ? 1 : 0;
 *       return a;
 *     },
 *     env, 100, 7);
 * double mean = result.mean_return;
 * \endcode
 *
 * rl::evaluate_policy: the returns of a policy over whole episodes, as Stable-Baselines3's
 * evaluate_policy. What every agent's evaluate(env, episodes) calls with its deterministic
 * policy (the most probable action, or the Gaussian's mean).
 *
 * `env` is an Environment (episodes played one after the other) or a vectorised environment
 * (VectorEnv, CartPoleVectorEnv: copies stepped together, the policy called once per step on
 * all of them). With n copies, copy i plays (episodes + i) / n episodes and its later ones are
 * ignored, so the episodes counted do not favour the short ones (SB3's rule). The first
 * reset uses `seed`; the episodes of a single environment follow from it.
 *
 * Under a distributed policy an agent's evaluate() splits a vectorised environment that can
 * be sliced (`envs.slice(first, n)`: CartPoleVectorEnv, VectorEnv) over the ranks: each rank
 * steps its share of the copies (evaluate_copies), the episodes are gathered in the order one
 * process counts them, and every rank returns one process's result on the whole environment
 * (the user's environment object itself is not stepped). Any other environment is evaluated
 * whole on every rank.
 *
 * Errors: onelearn::invalid_argument for episodes < 1; the environment's own errors.
 */

#include <cmath>
#include <concepts>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/rl/env.hpp"

namespace onelearn::rl {

struct EvaluationResult {
  double mean_return = 0;
  double std_return = 0;  ///< population standard deviation (numpy's std)
  std::vector<double> returns;
  std::vector<std::int64_t> lengths;
};

/// Environments stepped as a batch: reset(seed) returns the n x d observations.
template <class V>
concept VectorEnvironment = requires(V& v, std::uint64_t seed) {
  { v.reset(seed) } -> std::convertible_to<const Matrix<typename V::value_type>&>;
  { v.size() } -> std::convertible_to<index_t>;
};

namespace detail {
inline void check_episodes(index_t episodes) {
  if (episodes < 1) {
    throw onelearn::invalid_argument("evaluate: episodes must be >= 1; got " +
                                     std::to_string(episodes));
  }
}

inline EvaluationResult summarize(EvaluationResult r) {
  double s = 0;
  for (const double x : r.returns) s += x;
  r.mean_return = s / static_cast<double>(r.returns.size());
  double v = 0;
  for (const double x : r.returns) v += (x - r.mean_return) * (x - r.mean_return);
  r.std_return = std::sqrt(v / static_cast<double>(r.returns.size()));
  return r;
}
}  // namespace detail

/// One environment, episodes one after the other.
template <Environment Env, class Act>
EvaluationResult evaluate_policy(Act&& act, Env& env, index_t episodes, std::uint64_t seed = 0) {
  using T = typename Env::value_type;
  detail::check_episodes(episodes);
  EvaluationResult result;
  Matrix<T> obs(1, env.observation_space().size());
  for (index_t e = 0; e < episodes; ++e) {
    obs.row(0) = (e == 0 ? env.reset(seed) : env.reset()).transpose();
    double total = 0;
    std::int64_t length = 0;
    for (;;) {
      const auto actions = act(obs);
      typename Env::action_type action{};
      if constexpr (std::integral<typename Env::action_type>) {
        action = static_cast<typename Env::action_type>(actions(0));
      } else {
        action = actions.row(0).transpose();
      }
      const auto step = env.step(action);
      total += static_cast<double>(step.reward);
      ++length;
      if (step.terminated || step.truncated) break;
      obs.row(0) = step.observation.transpose();
    }
    result.returns.push_back(total);
    result.lengths.push_back(length);
  }
  return detail::summarize(std::move(result));
}

/// Copies [first, first + envs.size()) of an evaluation over `total` copies (a slice of them,
/// seeded as in the whole: see VectorEnv's first_copy), each playing its share of `episodes`
/// as in the whole evaluation; the returns and lengths in the order counted, not summarized.
/// `keys`, when given, receives step * total + copy for each episode counted: the order in
/// which one process stepping all copies counts them.
template <VectorEnvironment Envs, class Act>
EvaluationResult evaluate_copies(Act&& act, Envs& envs, index_t episodes, std::uint64_t seed,
                                 index_t first, index_t total, std::vector<double>* keys) {
  detail::check_episodes(episodes);
  const index_t n = envs.size();
  std::vector<index_t> target(static_cast<std::size_t>(n)), done(static_cast<std::size_t>(n), 0);
  index_t wanted = 0;
  for (index_t i = 0; i < n; ++i) {
    target[static_cast<std::size_t>(i)] = (episodes + first + i) / total;
    wanted += target[static_cast<std::size_t>(i)];
  }
  EvaluationResult result;
  envs.reset(seed);
  index_t finished = 0;
  for (std::int64_t t = 0; finished < wanted; ++t) {
    const auto& step = envs.step(act(envs.observations()));
    for (index_t i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (!step.done(i) || done[k] >= target[k]) continue;
      ++done[k];
      ++finished;
      result.returns.push_back(static_cast<double>(step.episode_returns(i)));
      result.lengths.push_back(step.episode_lengths(i));
      if (keys != nullptr) keys->push_back(static_cast<double>(t * total + first + i));
    }
  }
  return result;
}

/// Copies stepped together, each counting its share of the episodes.
template <VectorEnvironment Envs, class Act>
EvaluationResult evaluate_policy(Act&& act, Envs& envs, index_t episodes, std::uint64_t seed = 0) {
  return detail::summarize(evaluate_copies(act, envs, episodes, seed, 0, envs.size(), nullptr));
}

}  // namespace onelearn::rl
