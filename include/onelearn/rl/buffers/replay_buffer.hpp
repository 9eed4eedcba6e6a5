#pragma once
/// @file
/// rl::ReplayBuffer: the last `capacity` transitions (s, a, r, s', terminated) of an off-policy
/// agent (DQN), overwritten oldest first, and uniform minibatches drawn from them (with
/// replacement, as Stable-Baselines3's ReplayBuffer.sample).
///
/// @code
///   onelearn::rl::ReplayBuffer<float> buffer(100'000, 4);        // capacity, observation size
///   buffer.add(obs.row(i), action, reward, next.row(i), terminated);
///   std::vector<onelearn::index_t> rows = buffer.sample(64, seed);
/// @endcode
///
/// `terminated` is the task's terminal flag only: a transition cut by a time limit keeps
/// bootstrapping from s' (its s' is the episode's last observation, not the next episode's
/// first), which is Stable-Baselines3's handle_timeout_termination.
///
/// Errors: onelearn::invalid_argument for capacity or observation_size < 1 (construction) and
/// for sampling an empty buffer.

#include <cstdint>
#include <string>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/detail/random.hpp"

namespace onelearn::rl {

template <class T>
class ReplayBuffer {
 public:
  ReplayBuffer() = default;
  ReplayBuffer(index_t capacity, index_t observation_size) {
    if (capacity < 1 || observation_size < 1) {
      throw onelearn::invalid_argument("ReplayBuffer: capacity and observation_size must be >= 1; got " +
                                       std::to_string(capacity) + " and " + std::to_string(observation_size));
    }
    observations.setZero(capacity, observation_size);
    next_observations.setZero(capacity, observation_size);
    actions.setZero(capacity);
    rewards.setZero(capacity);
    terminated.setZero(capacity);
  }

  template <class Obs, class Next>
  void add(const Obs& obs, std::int64_t action, T reward, const Next& next, bool is_terminal) {
    observations.row(position) = obs;
    next_observations.row(position) = next;
    actions(position) = action;
    rewards(position) = reward;
    terminated(position) = is_terminal ? T(1) : T(0);
    if (++position == capacity()) {
      position = 0;
      full = 1;
    }
  }

  [[nodiscard]] index_t capacity() const noexcept { return rewards.size(); }
  [[nodiscard]] index_t size() const noexcept { return full != 0 ? capacity() : position; }

  /// `batch` rows drawn uniformly with replacement, from a stream keyed by `seed`.
  [[nodiscard]] std::vector<index_t> sample(index_t batch, std::uint64_t seed) const {
    if (size() == 0) throw onelearn::invalid_argument("ReplayBuffer.sample: the buffer is empty");
    nn::detail::SplitMix rng(seed);
    std::vector<index_t> rows(static_cast<std::size_t>(batch));
    for (auto& r : rows) r = static_cast<index_t>(rng.below(static_cast<std::uint64_t>(size())));
    return rows;
  }

  Matrix<T> observations, next_observations;
  Labels actions;
  Vector<T> rewards, terminated;
  std::int64_t position = 0;  ///< where the next transition goes
  std::int64_t full = 0;      ///< 1 once the buffer has wrapped around
};

}  // namespace onelearn::rl
