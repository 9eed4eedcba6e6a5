#pragma once
/**
 * \class onelearn::rl::Pendulum
 * \brief Gymnasium's Pendulum-v1: swing an inverted pendulum up with a continuous torque.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/envs/pendulum.hpp>
 * onelearn::rl::Pendulum<float> env;
 * auto obs = env.reset(1);                    // cos(theta), sin(theta), theta_dot
 * onelearn::Vector<float> torque(1);
 * torque << 0.5f;
 * auto result = env.step(torque);             // or env.step(0.5f)
 * \endcode
 *
 * rl::Pendulum: Gymnasium's Pendulum-v1 (inverted pendulum swing-up, continuous torque), with
 * its equations, constants, reward and 200-step truncation.
 *
 * \par Parameters (PendulumParams)
 * - `max_episode_steps` (int, default 200): truncation, >= 1.
 * - `g` (double, default 10): gravity, finite.
 *
 * \par The task
 * As Gymnasium's pendulum.py. State (theta, theta_dot) in double, theta = 0 upright. The
 * action is a torque u, a vector of length 1; a finite u outside [-2, 2] is clipped to it (as
 * Gymnasium, so a Gaussian policy's samples need no clipping of their own). With m = l = 1 and
 * dt = 0.05:
 * \verbatim
 *   reward     = -(normalize(theta)^2 + 0.1 theta_dot^2 + 0.001 u^2), normalize into [-pi, pi)
 *   theta_dot' = clip(theta_dot + (3 g / 2 sin(theta) + 3 u) dt, -8, 8)
 *   theta'     = theta + theta_dot' dt
 * \endverbatim
 * (the reward uses the state before the step). Never terminated; truncated at
 * max_episode_steps. Initial state: theta uniform in [-pi, pi), theta_dot in [-1, 1).
 *
 * \par Seeding
 * As CartPole (splitmix64, not numpy's PCG64: other draws for the same seed; the same
 * distribution). Arithmetic in double, without fused multiply-adds, in Gymnasium's order.
 * (Gymnasium under numpy 2 computes the two terms in u in float32, the type of its action, and
 * the rest in double: the results differ from ours by about 1e-7 of those terms.)
 *
 * Errors (rl/errors.hpp): `invalid_action_error` for an action that is not one finite number
 * (NaN, Inf, or a length other than 1); `reset_required_error` for step() before reset() or
 * after truncation; onelearn::invalid_argument for max_episode_steps < 1, a non-finite g or a
 * non-finite set_state.
 */

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <numbers>
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

struct PendulumParams {
  std::int64_t max_episode_steps = 200;  ///< truncation: 200 in Pendulum-v1
  double g = 10.0;                       ///< gravity
};

namespace detail::pendulum {
inline constexpr std::string_view name = "Pendulum-v1";
inline constexpr double pi = std::numbers::pi;
inline constexpr double max_speed = 8;
inline constexpr double max_torque = 2.0;
inline constexpr double dt = 0.05;
inline constexpr double m = 1.0;
inline constexpr double l = 1.0;

/// ((x + pi) mod 2 pi) - pi with the floored modulo of Python and numpy (the result takes the
/// divisor's sign), where std::fmod truncates.
inline double angle_normalize(double x) noexcept {
  double r = std::fmod(x + pi, 2 * pi);
  if (r < 0) r += 2 * pi;
  return r - pi;
}
}  // namespace detail::pendulum

template <std::floating_point T = float>
class Pendulum {
 public:
  using value_type = T;
  using observation_type = Eigen::Vector<T, 3>;
  using action_type = Vector<T>;             ///< one torque
  using state_type = std::array<double, 2>;  ///< theta, theta_dot
  using Params = PendulumParams;

  explicit Pendulum(const Params& params = {})
      : params_(params), episode_(detail::pendulum::name, params.max_episode_steps) {
    if (!std::isfinite(params.g)) {
      throw onelearn::invalid_argument(std::string(detail::pendulum::name) +
                                       ": g must be finite; got " + std::to_string(params.g));
    }
  }

  observation_type reset(std::uint64_t seed) {
    episode_.seed(seed);
    return reset();
  }

  observation_type reset() {
    namespace pd = detail::pendulum;
    const double theta = detail::uniform(episode_.rng(), -pd::pi, pd::pi);
    const double theta_dot = detail::uniform(episode_.rng(), -1.0, 1.0);
    state_ = {theta, theta_dot};
    episode_.begin();
    return observation();
  }

  StepResult<observation_type> step(VectorRef<T> action) {
    if (action.size() != 1) {
      throw invalid_action_error(
          std::string(detail::pendulum::name) +
          ": an action is one torque (a vector of length 1); got a vector of length " +
          std::to_string(action.size()));
    }
    return step(action(0));
  }

  StepResult<observation_type> step(T torque) {
    namespace pd = detail::pendulum;
    episode_.require_running();
    if (!std::isfinite(torque)) {
      throw invalid_action_error(std::string(pd::name) +
                                 ": the torque must be finite (values outside [-2, 2] are " +
                                 "clipped); got " + std::to_string(torque));
    }
    const double u = std::clamp(static_cast<double>(torque), -pd::max_torque, pd::max_torque);
    const double th = state_[0], thdot = state_[1];
    const double norm = pd::angle_normalize(th);
    const double costs = norm * norm + 0.1 * (thdot * thdot) + 0.001 * (u * u);
    double newthdot =
        thdot +
        (3 * params_.g / (2 * pd::l) * std::sin(th) + 3.0 / (pd::m * (pd::l * pd::l)) * u) * pd::dt;
    newthdot = std::clamp(newthdot, -pd::max_speed, pd::max_speed);
    const double newth = th + newthdot * pd::dt;
    state_ = {newth, newthdot};
    const bool truncated = episode_.advance(false);
    return {observation(), static_cast<T>(-costs), false, truncated};
  }

  [[nodiscard]] Box<T> action_space() const {
    return Box<T>::uniform(1, static_cast<T>(-detail::pendulum::max_torque),
                           static_cast<T>(detail::pendulum::max_torque));
  }
  [[nodiscard]] Box<T> observation_space() const {
    Box<T> box{Vector<T>(3), Vector<T>(3)};
    box.high << 1, 1, static_cast<T>(detail::pendulum::max_speed);
    box.low = -box.high;
    return box;
  }

  [[nodiscard]] const state_type& state() const noexcept { return state_; }
  /// Starts an episode from `state` (step count 0), taken as it is (not clipped).
  void set_state(const state_type& state) {
    detail::check_state(detail::pendulum::name, state);
    state_ = state;
    episode_.begin();
  }

  [[nodiscard]] std::int64_t elapsed_steps() const noexcept { return episode_.elapsed_steps(); }
  [[nodiscard]] const Params& get_params() const noexcept { return params_; }

 private:
  [[nodiscard]] observation_type observation() const {
    return observation_type(static_cast<T>(std::cos(state_[0])),
                            static_cast<T>(std::sin(state_[0])), static_cast<T>(state_[1]));
  }

  Params params_;
  detail::Episode episode_;
  state_type state_{};
};

}  // namespace onelearn::rl
ONELEARN_END_NO_FMA
