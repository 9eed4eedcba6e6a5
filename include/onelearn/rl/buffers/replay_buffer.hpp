#pragma once
/**
 * \class onelearn::rl::ReplayBuffer
 * \brief The last transitions of an off-policy agent (DQN), and uniform minibatches of them.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/buffers/replay_buffer.hpp>
 * #include <onelearn/rl/envs/cartpole_vector.hpp>
 * #include <vector>
 * onelearn::rl::ReplayBuffer<float> buffer(100'000, 4);        // capacity, observation size
 * onelearn::rl::CartPoleVectorEnv<float> envs(8);
 * onelearn::Matrix<float> obs = envs.reset(42);
 * onelearn::Labels actions = onelearn::Labels::Ones(8);
 * const auto& step = envs.step(actions);
 * for (onelearn::index_t i = 0; i < envs.size(); ++i) {   // s': the ended episode's last one
 *   const auto& next = step.done(i) ? step.final_observations : step.observations;
 *   buffer.add(obs.row(i), actions(i), step.rewards(i), next.row(i), step.terminated(i));
 * }
 * std::vector<onelearn::index_t> rows = buffer.sample(64, 7);  // 64 rows, seed 7
 * \endcode
 *
 * rl::ReplayBuffer: the last `capacity` transitions (s, a, r, s', terminated) of an
 * off-policy agent (DQN), overwritten oldest first, and uniform minibatches drawn from them
 * (with replacement, as Stable-Baselines3's ReplayBuffer.sample).
 *
 * `terminated` is the task's terminal flag only: a transition cut by a time limit keeps
 * bootstrapping from s' (its s' is the episode's last observation, not the next episode's
 * first), which is Stable-Baselines3's handle_timeout_termination.
 *
 * One vectorised step of N copies takes N consecutive rows, in copy order, and `copy_of(row)`
 * says which copy wrote a row. A distributed agent keeps the whole buffer's row layout on every
 * rank: each rank reserves the step's N rows (reserve) and fills its own copies' rows (put), so
 * row numbers, the buffer's size and the minibatches drawn are those of one process stepping
 * all copies, and a rank trains on the drawn rows its copies wrote.
 *
 * Errors: onelearn::invalid_argument for capacity or observation_size < 1 (construction) and
 * for sampling an empty buffer.
 */

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
    copy_of.setZero(capacity);
  }

  /// Appends one transition (the next row, overwriting the oldest when full); copy 0 wrote it.
  template <class Obs, class Next>
  void add(const Obs& obs, std::int64_t action, T reward, const Next& next, bool is_terminal) {
    put(reserve(1), obs, action, reward, next, is_terminal);
  }

  /// Takes the next `copies` rows for one vectorised step, as `copies` calls of add() would:
  /// row (first + c) mod capacity() belongs to copy c. Returns first; put() fills the rows.
  index_t reserve(index_t copies) {
    const index_t first = position;
    for (index_t c = 0; c < copies; ++c) {
      copy_of(position) = c;
      if (++position == capacity()) {
        position = 0;
        full = 1;
      }
    }
    return first;
  }

  /// Writes one transition at `row` (a row reserve() handed out).
  template <class Obs, class Next>
  void put(index_t row, const Obs& obs, std::int64_t action, T reward, const Next& next,
           bool is_terminal) {
    observations.row(row) = obs;
    next_observations.row(row) = next;
    actions(row) = action;
    rewards(row) = reward;
    terminated(row) = is_terminal ? T(1) : T(0);
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
  Labels copy_of;             ///< the copy of the vectorised step that wrote each row
  std::int64_t position = 0;  ///< where the next transition goes
  std::int64_t full = 0;      ///< 1 once the buffer has wrapped around
};

}  // namespace onelearn::rl
