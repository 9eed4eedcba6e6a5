#pragma once
// The reinforcement-learning workloads of bench/README.md (../shared/BENCH.md):
// - ppo_cartpole, dqn_cartpole: the agent (rl/agents/) with RL Zoo's CartPole-v1 settings and a
//   fixed seed, trained until the mean return of 100 evaluation episodes (deterministic policy,
//   evaluated every 4 iterations on 20 separate copies) reaches 475, or 1e5 (PPO) / 5e4 (DQN)
//   steps. One JSON line each: "steps" (environment steps trained), "seconds" (wall time of
//   learn, the evaluations included), "quality" (the mean return of 100 fresh evaluation
//   episodes at the end). ppo_cartpole adds "steps_per_second": a whole uninterrupted 1e5-step
//   run without evaluations (rollouts, updates, everything), the agent's throughput.
// - cartpole_env,
// the vectorised CartPole-v1 alone (rl::CartPoleVectorEnv<float>) with random actions on one
// core. It prints one JSON line:
//   {"workload": "cartpole_env", "impl": "onelearn", "policy": "local", "samples_per_second": ...,
//    "copies": 256, "episodes": ...}
// samples_per_second counts copy-steps (a step of 256 copies is 256), the best of 3 runs of
// 2^25 copy-steps each; the time includes drawing the random actions (one 64-bit splitmix64
// draw per 64 copies), since an agent must produce its actions too. 256 copies keep the state
// (8 KiB of doubles) and the observations in L1/L2, as PPO's batches of copies would.
// "episodes" (the number of episodes finished in the kept run) is printed so that the work
// cannot be optimised away, and as a sanity check: random actions end an episode after
// about 22 steps.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>

#include <onelearn/core/dataset.hpp>
#include <onelearn/core/types.hpp>
#include <onelearn/nn/detail/random.hpp>
#include <onelearn/rl/agents/dqn.hpp>
#include <onelearn/rl/agents/ppo.hpp>
#include <onelearn/rl/callbacks.hpp>
#include <onelearn/rl/envs/cartpole_vector.hpp>

namespace onelearn_bench {

inline void bench_cartpole_env() {
  using Clock = std::chrono::steady_clock;
  constexpr onelearn::index_t copies = 256;
  constexpr std::int64_t total = std::int64_t{1} << 25;  // copy-steps per run
  constexpr std::int64_t steps = total / copies;

  onelearn::rl::CartPoleVectorEnv<float> envs(copies);
  onelearn::Labels actions(copies);
  onelearn::nn::detail::SplitMix gen(12345);
  double best = 0;
  std::int64_t best_episodes = 0;
  for (int run = 0; run < 3; ++run) {
    envs.reset(static_cast<std::uint64_t>(run));
    std::int64_t episodes = 0;
    const auto start = Clock::now();
    for (std::int64_t s = 0; s < steps; ++s) {
      for (onelearn::index_t i = 0; i < copies; i += 64) {
        const std::uint64_t bits = gen.next();
        for (onelearn::index_t k = 0; k < 64; ++k)
          actions(i + k) = static_cast<std::int64_t>((bits >> k) & 1U);
      }
      const auto& step = envs.step(actions);
      episodes += (step.terminated || step.truncated).count();
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (static_cast<double>(total) / seconds > best) {
      best = static_cast<double>(total) / seconds;
      best_episodes = episodes;
    }
  }
  std::printf(
      R"({"workload": "cartpole_env", "impl": "onelearn", "policy": "local", "samples_per_second": %.1f, )"
      R"("copies": %ld, "episodes": %lld})"
      "\n",
      best, static_cast<long>(copies), static_cast<long long>(best_episodes));
}

/// Trains `agent` until 100 evaluation episodes average 475 or `budget` steps; rank 0 prints
/// the line. Under a distributed policy every rank evaluates the same weights on the same
/// episodes, so all stop at the same iteration.
template <class Agent>
void bench_agent_until_solved(const char* workload, Agent& agent, std::int64_t budget, const char* extra,
                              const char* policy = "local") {
  using Clock = std::chrono::steady_clock;
  onelearn::rl::CartPoleVectorEnv<float> eval_env(20);
  onelearn::rl::EvaluateAndStop stop(eval_env, {.episodes = 100, .threshold = 475, .every = 4});
  const auto start = Clock::now();
  agent.learn(budget, stop);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  onelearn::rl::CartPoleVectorEnv<float> final_env(20);
  const double quality = agent.evaluate(final_env, 100, 424242);
  if (agent.execution_policy().rank() != 0) return;
  std::printf(R"({"workload": "%s", "impl": "onelearn", "policy": "%s", "steps": %lld, "seconds": %.4f, )"
              R"("quality": %.2f%s})" "\n",
              workload, policy, static_cast<long long>(agent.steps_done()), seconds, quality, extra);
}

inline onelearn::rl::PPOParams zoo_ppo_cartpole() {
  return {.n_steps = 32, .batch_size = 256, .n_epochs = 20, .learning_rate = 1e-3,
          .learning_rate_schedule = "linear", .gamma = 0.98, .gae_lambda = 0.8,
          .clip_range_schedule = "linear", .seed = 1};
}

/// RL Zoo's 8 copies, split over the ranks (rank r steps copies [first, first + n)): with the
/// same global batch, a distributed run is one process's (tests/mpi/test_rl.cpp).
template <class Exec>
void bench_ppo_cartpole(const Exec& exec, const char* policy) {
  namespace rl = onelearn::rl;
  using Envs = rl::CartPoleVectorEnv<float>;
  const auto [first, end] = onelearn::Dataset<float>::shard_bounds(8, exec.rank(), exec.size());
  const onelearn::index_t n = end - first;
  // Throughput of the whole Zoo run (1e5 steps, no evaluation).
  rl::PPO<Envs, Exec> full(Envs(n, {}, first), zoo_ppo_cartpole(), exec);
  const auto start = std::chrono::steady_clock::now();
  full.learn(100'000);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char extra[96];
  std::snprintf(extra, sizeof extra, R"(, "steps_per_second": %.1f)", static_cast<double>(full.steps_done()) / seconds);
  rl::PPO<Envs, Exec> agent(Envs(n, {}, first), zoo_ppo_cartpole(), exec);
  bench_agent_until_solved("ppo_cartpole", agent, 100'000, extra, policy);
}

inline void bench_dqn_cartpole() {
  namespace rl = onelearn::rl;
  rl::DQN agent(rl::CartPoleVectorEnv<float>(1),
                {.buffer_size = 100'000, .learning_starts = 1000, .batch_size = 64, .learning_rate = 2.3e-3,
                 .train_freq = 256, .gradient_steps = 128, .target_update_interval = 10,
                 .exploration_fraction = 0.16, .exploration_final_eps = 0.04, .hidden_units = 256, .seed = 1});
  bench_agent_until_solved("dqn_cartpole", agent, 50'000, "");
}

}  // namespace onelearn_bench
