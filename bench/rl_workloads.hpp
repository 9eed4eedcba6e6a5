#pragma once
// The reinforcement-learning workloads of bench/README.md that need no agent: cartpole_env,
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

#include <onelearn/core/types.hpp>
#include <onelearn/nn/detail/random.hpp>
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

}  // namespace onelearn_bench
