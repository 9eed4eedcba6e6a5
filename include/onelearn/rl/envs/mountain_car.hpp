#pragma once
/**
 * \class onelearn::rl::MountainCar
 * \brief Gymnasium's MountainCar-v0: drive an underpowered car out of a valley.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/envs/mountain_car.hpp>
 * onelearn::rl::MountainCar<float> env;
 * auto obs = env.reset(3);                           // position, velocity
 * auto result = env.step(obs(1) >= 0 ? 2 : 0);       // push along the velocity
 * \endcode
 *
 * rl::MountainCar: Gymnasium's MountainCar-v0 (Moore's car in a valley, discrete actions),
 * with its equations, constants, reward, termination and 200-step truncation.
 *
 * \par Parameters (MountainCarParams)
 * - `max_episode_steps` (int, default 200): truncation, >= 1.
 * - `goal_velocity` (double, default 0): the velocity the car must have at the goal.
 *
 * \par The task
 * As Gymnasium's mountain_car.py. State (position, velocity) in double. Action a in {0, 1, 2}
 * (left, none, right):
 * \verbatim
 *   velocity += (a - 1) * 0.001 + cos(3 position) * (-0.0025), clipped to [-0.07, 0.07];
 *   position += velocity, clipped to [-1.2, 0.6]; at the left wall a negative velocity
 *   becomes 0 (an inelastic collision).
 * \endverbatim
 * Reward -1 for every step. Terminated when position >= 0.5 and velocity >= goal_velocity;
 * truncated at max_episode_steps. Initial state: position uniform in [-0.6, -0.4),
 * velocity 0.
 *
 * \par Seeding
 * As CartPole (splitmix64, not numpy's PCG64: other draws for the same seed; the same
 * distribution). Arithmetic in double, without fused multiply-adds, in Gymnasium's order.
 *
 * Errors (rl/errors.hpp): `invalid_action_error` for an action outside {0, 1, 2};
 * `reset_required_error` for step() before reset() or after the episode ended;
 * onelearn::invalid_argument for max_episode_steps < 1, a non-finite goal_velocity or
 * set_state.
 */

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

#include "onelearn/core/detail/no_fma.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/rl/detail/episode.hpp"
#include "onelearn/rl/env.hpp"
#include "onelearn/rl/errors.hpp"
#include "onelearn/rl/spaces.hpp"

ONELEARN_BEGIN_NO_FMA
namespace onelearn::rl {

struct MountainCarParams {
  std::int64_t max_episode_steps = 200;  ///< truncation: 200 in MountainCar-v0
  double goal_velocity = 0.0;            ///< velocity needed at the goal position
};

namespace detail::mountain_car {
inline constexpr std::string_view name = "MountainCar-v0";
inline constexpr double min_position = -1.2;
inline constexpr double max_position = 0.6;
inline constexpr double max_speed = 0.07;
inline constexpr double goal_position = 0.5;
inline constexpr double force = 0.001;
inline constexpr double gravity = 0.0025;
}  // namespace detail::mountain_car

template <std::floating_point T = float>
class MountainCar {
 public:
  using value_type = T;
  using observation_type = Eigen::Vector<T, 2>;
  using action_type = std::int64_t;
  using state_type = std::array<double, 2>;  ///< position, velocity
  using Params = MountainCarParams;

  explicit MountainCar(const Params& params = {})
      : params_(params), episode_(detail::mountain_car::name, params.max_episode_steps) {
    if (!std::isfinite(params.goal_velocity)) {
      throw onelearn::invalid_argument(std::string(detail::mountain_car::name) +
                                       ": goal_velocity must be finite; got " +
                                       std::to_string(params.goal_velocity));
    }
  }

  observation_type reset(std::uint64_t seed) {
    episode_.seed(seed);
    return reset();
  }

  observation_type reset() {
    state_ = {detail::uniform(episode_.rng(), -0.6, -0.4), 0.0};
    episode_.begin();
    return observation();
  }

  StepResult<observation_type> step(action_type action) {
    namespace mc = detail::mountain_car;
    episode_.require_running();
    detail::check_discrete_action(mc::name, action, 3);
    double position = state_[0], velocity = state_[1];
    velocity +=
        static_cast<double>(action - 1) * mc::force + std::cos(3 * position) * (-mc::gravity);
    velocity = std::clamp(velocity, -mc::max_speed, mc::max_speed);
    position += velocity;
    position = std::clamp(position, mc::min_position, mc::max_position);
    if (position == mc::min_position && velocity < 0) velocity = 0;
    state_ = {position, velocity};
    const bool terminated = position >= mc::goal_position && velocity >= params_.goal_velocity;
    const bool truncated = episode_.advance(terminated);
    return {observation(), T(-1), terminated, truncated};
  }

  [[nodiscard]] Discrete action_space() const noexcept { return Discrete{3}; }
  [[nodiscard]] Box<T> observation_space() const {
    namespace mc = detail::mountain_car;
    Box<T> box{Vector<T>(2), Vector<T>(2)};
    box.low << static_cast<T>(mc::min_position), static_cast<T>(-mc::max_speed);
    box.high << static_cast<T>(mc::max_position), static_cast<T>(mc::max_speed);
    return box;
  }

  [[nodiscard]] const state_type& state() const noexcept { return state_; }
  /// Starts an episode from `state` (step count 0), taken as it is (not clipped).
  void set_state(const state_type& state) {
    detail::check_state(detail::mountain_car::name, state);
    state_ = state;
    episode_.begin();
  }

  [[nodiscard]] std::int64_t elapsed_steps() const noexcept { return episode_.elapsed_steps(); }
  [[nodiscard]] const Params& get_params() const noexcept { return params_; }

 private:
  [[nodiscard]] observation_type observation() const {
    return observation_type(static_cast<T>(state_[0]), static_cast<T>(state_[1]));
  }

  Params params_;
  detail::Episode episode_;
  state_type state_{};
};

}  // namespace onelearn::rl
ONELEARN_END_NO_FMA
