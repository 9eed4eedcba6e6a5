#pragma once
/**
 * \class onelearn::rl::VectorEnv
 * \brief N copies of an environment stepped together, with auto-reset, as Gymnasium's
 * SyncVectorEnv.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/vector_env.hpp>
 * #include <onelearn/rl/envs/cartpole.hpp>
 * #include <onelearn/rl/envs/pendulum.hpp>
 * onelearn::rl::VectorEnv<onelearn::rl::CartPole<float>> envs(8);   // 8 copies
 * const onelearn::Matrix<float>& obs = envs.reset(42);                // 8 x 4
 * onelearn::Labels actions = onelearn::Labels::Zero(8);
 * const auto& step = envs.step(actions);       // observations, rewards, terminated, truncated
 * for (onelearn::index_t i = 0; i < envs.size(); ++i) {
 *   if (step.done(i)) {
 *     // step.observations.row(i) is the NEW episode's first observation; the last one of the
 *     // episode that ended is step.final_observations.row(i), and its return:
 *     float episode_return = step.episode_returns(i);
 *   }
 * }
 * // Continuous actions: one row per copy.
 * onelearn::rl::VectorEnv<onelearn::rl::Pendulum<float>> pendulums(4);
 * pendulums.reset(1);
 * onelearn::Matrix<float> torques = onelearn::Matrix<float>::Zero(4, 1);   // 4 x action length
 * pendulums.step(torques);
 * \endcode
 *
 * rl::VectorEnv: N copies of an environment stepped together, with auto-reset, as Gymnasium's
 * SyncVectorEnv in its "same-step" auto-reset mode.
 *
 * \par Construction
 * `VectorEnv(n, prototype = Env(), first_copy = 0)` makes n copies of `prototype`;
 * `VectorEnv(std::vector<Env>, first_copy = 0)` takes given copies (a user's simulations, each
 * with its own settings, but all with copy 0's spaces, which the batch is checked against).
 * `first_copy` numbers the copies' seed streams: copy i is reset with
 * derive_seed(seed, first_copy + i) (splitmix64 mixing, nn/detail/random.hpp), so rank r of a
 * distributed run that owns global copies [r n, (r + 1) n) passes first_copy = r n and steps
 * exactly the copies one process stepping all of them would. (Gymnasium seeds copy i with
 * seed + i; a mixed seed keeps the streams of nearby seeds apart.)
 *
 * \par Auto-reset
 * Gymnasium's AutoresetMode.SAME_STEP: when a copy's episode ends at a step, that step's
 * reward, terminated and truncated are the ending step's, `final_observations` row holds the
 * episode's last observation, `episode_returns`/`episode_lengths` its undiscounted return and
 * length, and `observations` row the first observation of the next episode (reset() of that
 * copy, continuing its random stream). Rows of final_observations, episode_returns and
 * episode_lengths of copies that did not finish are left as they were (do not read them).
 *
 * Errors (rl/errors.hpp). All actions are checked before any copy steps, so a bad batch leaves
 * every copy as it was:
 * - `invalid_action_error`: a batch whose length is not size() (or, for Box actions, whose
 *   columns are not the action length), a discrete action outside the copy's Discrete space, a
 *   continuous action with NaN/Inf (values outside a Box are passed on: Gymnasium's Pendulum
 *   clips them, and a user's environment decides for itself).
 * - `invalid_observation_error`: an observation with NaN/Inf or of another length than
 *   single_observation_space(), or a NaN/Inf reward, returned by a copy's reset or step. The
 *   message names the copy, the element and the value. The VectorEnv then needs reset().
 * - `reset_required_error`: step() before reset(), or after a step that threw.
 */

#include <cmath>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/rl/detail/episode.hpp"
#include "onelearn/rl/env.hpp"
#include "onelearn/rl/errors.hpp"
#include "onelearn/rl/spaces.hpp"

namespace onelearn::rl {

/// One flag per copy.
using Flags = Eigen::Array<bool, Eigen::Dynamic, 1>;

/// What VectorEnv::step returns (a reference to buffers reused at every step).
template <class T>
struct VectorStep {
  Matrix<T> observations;  ///< n x d: after auto-reset, the next episode's first observation
  Vector<T> rewards;       ///< the reward of each copy's step
  Flags terminated;        ///< the copy's episode reached a terminal state at this step
  Flags truncated;         ///< the copy's episode was cut at this step (time limit)
  Matrix<T>
      final_observations;     ///< row i: the last observation of the episode that ended (done(i))
  Vector<T> episode_returns;  ///< where done(i): the sum of the rewards of that episode
  Eigen::VectorX<std::int64_t> episode_lengths;  ///< where done(i): its number of steps

  [[nodiscard]] bool done(index_t i) const { return terminated(i) || truncated(i); }
  [[nodiscard]] index_t size() const noexcept { return rewards.size(); }

  void resize(index_t n, index_t d) {
    observations.setZero(n, d);
    final_observations.setZero(n, d);
    rewards.setZero(n);
    episode_returns.setZero(n);
    episode_lengths.setZero(n);
    terminated.setConstant(n, false);
    truncated.setConstant(n, false);
  }
};

namespace detail {
inline void check_batch_length(index_t found, index_t copies, std::string_view what) {
  if (found != copies) {
    throw invalid_action_error("VectorEnv: expected " + std::to_string(copies) + " " +
                               std::string(what) + " (one per copy); got " + std::to_string(found));
  }
}

inline std::size_t checked_copies(std::string_view who, index_t n) {
  if (n < 1) {
    throw onelearn::invalid_argument(std::string(who) + ": needs at least 1 copy; got " +
                                     std::to_string(n));
  }
  return static_cast<std::size_t>(n);
}
}  // namespace detail

template <Environment Env>
class VectorEnv {
 public:
  using env_type = Env;
  using value_type = typename Env::value_type;
  using action_type = typename Env::action_type;
  using step_type = VectorStep<value_type>;
  using T = value_type;

  explicit VectorEnv(index_t n, const Env& prototype = Env(), index_t first_copy = 0)
      : VectorEnv(std::vector<Env>(detail::checked_copies("VectorEnv", n), prototype), first_copy) {
  }

  explicit VectorEnv(std::vector<Env> envs, index_t first_copy = 0)
      : envs_(std::move(envs)), first_copy_(first_copy) {
    detail::checked_copies("VectorEnv", size());
    if (first_copy < 0) {
      throw onelearn::invalid_argument("VectorEnv: first_copy must be >= 0; got " +
                                       std::to_string(first_copy));
    }
    observation_space_ = envs_.front().observation_space();
    action_space_ = envs_.front().action_space();
    result_.resize(size(), observation_space_.size());
    returns_.assign(envs_.size(), 0.0);
    lengths_.assign(envs_.size(), 0);
  }

  [[nodiscard]] index_t size() const noexcept { return static_cast<index_t>(envs_.size()); }
  [[nodiscard]] index_t observation_size() const noexcept { return observation_space_.size(); }
  /// Copies [first, first + n) of these (copied as they are now), seeded as they are here: the
  /// share of one rank in a distributed evaluation.
  [[nodiscard]] VectorEnv slice(index_t first, index_t n) const {
    const auto begin = envs_.begin() + static_cast<std::ptrdiff_t>(first);
    return VectorEnv(std::vector<Env>(begin, begin + static_cast<std::ptrdiff_t>(n)),
                     first_copy_ + first);
  }
  [[nodiscard]] const Box<T>& single_observation_space() const noexcept {
    return observation_space_;
  }
  [[nodiscard]] const auto& single_action_space() const noexcept { return action_space_; }
  [[nodiscard]] Env& env(index_t i) { return envs_.at(static_cast<std::size_t>(i)); }
  /// The observations of the last reset or step.
  [[nodiscard]] const Matrix<T>& observations() const noexcept { return result_.observations; }

  /// Reseeds every copy (copy i from derive_seed(seed, first_copy + i)) and starts its episode.
  const Matrix<T>& reset(std::uint64_t seed) {
    return reset_all([&](Env& env, std::size_t i) {
      return env.reset(detail::derive_seed(seed, static_cast<std::uint64_t>(first_copy_) + i));
    });
  }

  /// Starts a new episode in every copy, continuing each copy's random stream.
  const Matrix<T>& reset() {
    return reset_all([](Env& env, std::size_t) { return env.reset(); });
  }

  /// Steps copy i with actions(i).
  const step_type& step(LabelsRef actions) requires DiscreteEnvironment<Env> {
    require_ready();
    detail::check_batch_length(actions.size(), size(), "actions");
    for (index_t i = 0; i < size(); ++i) {
      if (!action_space_.contains(actions(i))) {
        throw invalid_action_error("VectorEnv: action " + std::to_string(actions(i)) + " of copy " +
                                   std::to_string(i) + " is outside the action space " +
                                   action_space_.to_string());
      }
    }
    return step_all([&](index_t i) { return static_cast<action_type>(actions(i)); });
  }

  /// Steps copy i with row i of `actions` (size() x action length).
  const step_type& step(MatrixRef<T> actions) requires ContinuousEnvironment<Env> {
    require_ready();
    detail::check_batch_length(actions.rows(), size(), "rows of actions");
    if (actions.cols() != action_space_.size()) {
      throw invalid_action_error("VectorEnv: actions must have " +
                                 std::to_string(action_space_.size()) +
                                 " columns (the action length of " + action_space_.to_string() +
                                 "); got " + std::to_string(actions.cols()));
    }
    for (index_t i = 0; i < actions.rows(); ++i) {
      for (index_t j = 0; j < actions.cols(); ++j) {
        if (!std::isfinite(actions(i, j))) {
          throw invalid_action_error("VectorEnv: action element " + std::to_string(j) +
                                     " of copy " + std::to_string(i) + " must be finite; got " +
                                     std::to_string(actions(i, j)));
        }
      }
    }
    return step_all([&](index_t i) -> const action_type& {
      scratch_ = actions.row(i).transpose();
      return scratch_;
    });
  }

 private:
  template <class ResetOne>
  const Matrix<T>& reset_all(ResetOne reset_one) {
    ready_ = false;
    for (std::size_t i = 0; i < envs_.size(); ++i) {
      store(result_.observations, static_cast<index_t>(i), reset_one(envs_[i], i), "reset");
      returns_[i] = 0;
      lengths_[i] = 0;
    }
    result_.terminated.setConstant(false);
    result_.truncated.setConstant(false);
    result_.rewards.setZero();
    ready_ = true;
    return result_.observations;
  }

  template <class ActionOf>
  const step_type& step_all(ActionOf action_of) {
    ready_ = false;  // until every copy has stepped: a throw leaves the batch needing reset()
    for (std::size_t s = 0; s < envs_.size(); ++s) {
      const auto i = static_cast<index_t>(s);
      const auto r = envs_[s].step(action_of(i));
      store(result_.observations, i, r.observation, "step");
      if (!std::isfinite(r.reward)) fail(i, "step", "the reward is " + std::to_string(r.reward));
      result_.rewards(i) = r.reward;
      result_.terminated(i) = r.terminated;
      result_.truncated(i) = r.truncated;
      returns_[s] += static_cast<double>(r.reward);
      ++lengths_[s];
      if (r.terminated || r.truncated) {
        result_.final_observations.row(i) = result_.observations.row(i);
        result_.episode_returns(i) = static_cast<T>(returns_[s]);
        result_.episode_lengths(i) = lengths_[s];
        returns_[s] = 0;
        lengths_[s] = 0;
        store(result_.observations, i, envs_[s].reset(), "auto-reset");
      }
    }
    ready_ = true;
    return result_;
  }

  template <class Obs>
  void store(Matrix<T>& out, index_t i, const Obs& obs, const char* when) {
    if (obs.size() != out.cols()) {
      fail(i, when,
           "the observation has " + std::to_string(obs.size()) +
               " elements; the observation space has " + std::to_string(out.cols()));
    }
    for (index_t j = 0; j < obs.size(); ++j) {
      if (!std::isfinite(obs(j))) {
        fail(i, when,
             "element " + std::to_string(j) + " of the observation is " + std::to_string(obs(j)));
      }
      out(i, j) = obs(j);
    }
  }

  [[noreturn]] static void fail(index_t i, const char* when, const std::string& what) {
    throw invalid_observation_error("VectorEnv: copy " + std::to_string(i) +
                                    " returned a bad value at " + when + ": " + what +
                                    " (observations and rewards must be finite numbers)");
  }

  void require_ready() const {
    if (!ready_) {
      throw reset_required_error(
          "VectorEnv: step() before reset(), or after a step or reset that threw; call "
          "reset(seed)");
    }
  }

  std::vector<Env> envs_;
  index_t first_copy_;
  Box<T> observation_space_;
  std::remove_cvref_t<decltype(std::declval<const Env&>().action_space())> action_space_;
  step_type result_;
  std::vector<double> returns_;        // running return of each copy's episode
  std::vector<std::int64_t> lengths_;  // running length
  action_type scratch_{};              // the action row handed to a continuous copy
  bool ready_ = false;
};

}  // namespace onelearn::rl
