// onelearn reinforcement learning: PPO learns CartPole-v1 with RL Zoo's settings, shows the
// progress bar (the mean return of the last 100 episodes in it), stops when that return reaches
// 475, evaluates the deterministic policy on 100 fresh episodes, saves a checkpoint (from which
// learn() would continue bit for bit) and the policy network as ONNX-ready weights.
//
//   ./cartpole_ppo [seed]
//
// The policy network is an nn::Sequential (policy()): onnx::save(agent.policy(), "p.onnx")
// exports it where onelearn::onnx is linked (its outputs are logits; the action is the argmax).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include <onelearn/nn/checkpoint.hpp>
#include <onelearn/rl/agents/ppo.hpp>
#include <onelearn/rl/callbacks.hpp>
#include <onelearn/rl/envs/cartpole.hpp>
#include <onelearn/rl/envs/cartpole_vector.hpp>

int main(int argc, char** argv) {
  namespace rl = onelearn::rl;
  try {
    const std::uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1;
    // 8 copies of CartPole-v1 stepped together; RL Zoo's tuned PPO settings for CartPole-v1.
    rl::PPO agent(rl::CartPoleVectorEnv<float>(8),
                  {.n_steps = 32, .batch_size = 256, .n_epochs = 20, .learning_rate = 1e-3,
                   .learning_rate_schedule = "linear", .gamma = 0.98, .gae_lambda = 0.8,
                   .clip_range_schedule = "linear", .seed = seed, .verbose = 1});
    const auto start = std::chrono::steady_clock::now();
    agent.learn(100'000, rl::StopOnReturnThreshold({.threshold = 475}),
                onelearn::nn::ModelCheckpoint("cartpole_ppo.olrl", {.save_freq_epochs = 50}));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    rl::CartPole<float> env;
    const auto result = agent.evaluate_episodes(env, 100, seed + 1);
    std::printf("trained on %lld steps in %.2f s (%.0f steps/s)\n", static_cast<long long>(agent.steps_done()),
                seconds, static_cast<double>(agent.steps_done()) / seconds);
    std::printf("evaluation: mean return %.1f +- %.1f over %zu episodes (CartPole-v1 is solved at 475)\n",
                result.mean_return, result.std_return, result.returns.size());
    agent.save_checkpoint("cartpole_ppo.olrl");
    agent.save_weights("cartpole_policy.olw");
    return result.mean_return >= 475 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cartpole_ppo: %s\n", e.what());
    return 2;
  }
}
