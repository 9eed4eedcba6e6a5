#pragma once
// What every built-in environment keeps besides its physical state: the random stream of its
// resets, the step count that truncates the episode (Gymnasium's TimeLimit wrapper, built in),
// and whether step() is allowed (Gymnasium's OrderEnforcing, made strict: a step after the end
// is an error, not a warning).
//
// The random stream is splitmix64 (nn/detail/random.hpp), not numpy's PCG64, so a seed gives
// other initial states than Gymnasium's for the same seed; the distributions are the same.
// splitmix64 is 8 bytes of state and a few instructions per draw, which keeps the per-copy
// streams of a vectorised environment cheap, and its formulas do not depend on the standard
// library (std::uniform_real_distribution does), so episodes are the same on every platform.

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"
#include "onelearn/nn/detail/random.hpp"
#include "onelearn/rl/errors.hpp"

namespace onelearn::rl::detail {

using nn::detail::derive_seed;
using nn::detail::SplitMix;

/// low + (high - low) * u with u uniform in [0, 1): numpy's Generator.uniform formula.
inline double uniform(SplitMix& rng, double low, double high) noexcept {
  return low + (high - low) * rng.uniform();
}

/// max_episode_steps must allow one step; checked when an environment is constructed.
inline std::int64_t checked_max_steps(std::string_view env, std::int64_t max_episode_steps) {
  if (max_episode_steps < 1) {
    throw onelearn::invalid_argument(std::string(env) + ": max_episode_steps must be >= 1; got " +
                                     std::to_string(max_episode_steps));
  }
  return max_episode_steps;
}

class Episode {
 public:
  Episode(std::string_view env, std::int64_t max_episode_steps)
      : env_(env), max_steps_(checked_max_steps(env, max_episode_steps)) {}

  /// Restarts the random stream (reset(seed)). An environment never seeded draws from seed 0,
  /// so it is reproducible by default (Gymnasium seeds from the operating system instead).
  void seed(std::uint64_t seed) noexcept { rng_ = SplitMix(seed); }
  [[nodiscard]] SplitMix& rng() noexcept { return rng_; }

  /// A new episode starts (reset, or a state set by hand).
  void begin() noexcept {
    elapsed_ = 0;
    phase_ = phase::running;
  }

  /// Throws reset_required_error unless an episode is running.
  void require_running() const {
    if (phase_ == phase::running) return;
    if (phase_ == phase::never_reset) {
      throw reset_required_error(std::string(env_) +
                                 ": step() before the first reset(); call reset(seed) first");
    }
    throw reset_required_error(std::string(env_) + ": step() after the episode ended (" +
                               (phase_ == phase::terminated ? "terminated" : "truncated") +
                               " at step " + std::to_string(elapsed_) +
                               "); call reset() to start a new episode");
  }

  /// Counts a step; returns whether it truncates the episode (the time limit was reached).
  bool advance(bool terminated) noexcept {
    ++elapsed_;
    const bool truncated = elapsed_ >= max_steps_;
    if (terminated) {
      phase_ = phase::terminated;
    } else if (truncated) {
      phase_ = phase::truncated;
    }
    return truncated;
  }

  [[nodiscard]] std::int64_t elapsed_steps() const noexcept { return elapsed_; }
  [[nodiscard]] std::int64_t max_episode_steps() const noexcept { return max_steps_; }
  [[nodiscard]] std::string_view name() const noexcept { return env_; }

 private:
  enum class phase : std::uint8_t { never_reset, running, terminated, truncated };

  std::string_view env_;  // a string literal of the environment ("CartPole-v1")
  std::int64_t max_steps_;
  std::int64_t elapsed_ = 0;
  phase phase_ = phase::never_reset;
  SplitMix rng_{0};
};

/// Throws invalid_action_error unless 0 <= action < n.
inline void check_discrete_action(std::string_view env, std::int64_t action, std::int64_t n) {
  if (action < 0 || action >= n) {
    throw invalid_action_error(std::string(env) + ": action " + std::to_string(action) +
                               " is outside the action space Discrete(" + std::to_string(n) +
                               ") (an integer in [0, " + std::to_string(n) + "))");
  }
}

/// Throws onelearn::invalid_argument unless every element of a state set by hand is finite.
template <std::size_t N>
void check_state(std::string_view env, const std::array<double, N>& state) {
  for (std::size_t j = 0; j < N; ++j) {
    if (!std::isfinite(state[j])) {
      throw onelearn::invalid_argument(std::string(env) +
                                       ": set_state needs finite values; element " +
                                       std::to_string(j) + " is " + std::to_string(state[j]));
    }
  }
}

}  // namespace onelearn::rl::detail
