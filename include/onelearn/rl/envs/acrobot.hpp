#pragma once
/**
 * \class onelearn::rl::Acrobot
 * \brief Gymnasium's Acrobot-v1: swing the tip of a two-link pendulum above a bar.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/envs/acrobot.hpp>
 * onelearn::rl::Acrobot<float> env;
 * auto obs = env.reset(7);       // cos t1, sin t1, cos t2, sin t2, t1_dot, t2_dot
 * auto result = env.step(2);     // torque +1 on the joint between the links
 * \endcode
 *
 * rl::Acrobot: Gymnasium's Acrobot-v1 (Sutton's two-link underactuated pendulum, "book"
 * dynamics), with its equations, constants, reward, termination and 500-step truncation.
 *
 * \par Parameters (AcrobotParams)
 * - `max_episode_steps` (int, default 500): truncation, >= 1.
 *
 * \par The task
 * As Gymnasium's acrobot.py. State (theta1, theta2, dtheta1, dtheta2) in double. Action a in
 * {0, 1, 2} applies torque a - 1 (no torque noise). The equations of motion of Sutton and
 * Barto's book (link masses and lengths 1, centres of mass at 0.5, moments of inertia 1,
 * g = 9.8) are integrated over dt = 0.2 s by one classical Runge-Kutta step (RK4, Gymnasium's
 * rk4 with t = [0, dt]). Then both angles are wrapped into [-pi, pi] and the velocities
 * clipped to [-4 pi, 4 pi] and [-9 pi, 9 pi]. Terminated when
 * -cos(theta1) - cos(theta1 + theta2) > 1 (the tip above the bar); the reward is -1 for every
 * step that does not terminate and 0 for the one that does. Initial state: each value uniform
 * in [-0.1, 0.1), rounded to float32 as Gymnasium's reset does (astype(np.float32)).
 *
 * \par Seeding
 * As CartPole (splitmix64, not numpy's PCG64: other draws for the same seed; the same
 * distribution). Dynamics in double, without fused multiply-adds, in Gymnasium's order.
 *
 * Errors (rl/errors.hpp): `invalid_action_error` for an action outside {0, 1, 2};
 * `reset_required_error` for step() before reset() or after the episode ended;
 * onelearn::invalid_argument for max_episode_steps < 1 or a non-finite set_state.
 */

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <numbers>
#include <string_view>

#include "onelearn/core/detail/no_fma.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/rl/detail/episode.hpp"
#include "onelearn/rl/env.hpp"
#include "onelearn/rl/errors.hpp"
#include "onelearn/rl/spaces.hpp"

ONELEARN_BEGIN_NO_FMA
namespace onelearn::rl {

struct AcrobotParams {
  std::int64_t max_episode_steps = 500;  ///< truncation: 500 in Acrobot-v1
};

namespace detail::acrobot {

inline constexpr std::string_view name = "Acrobot-v1";
inline constexpr double pi = std::numbers::pi;
inline constexpr double dt = 0.2;
inline constexpr double m1 = 1.0, m2 = 1.0;    // link masses
inline constexpr double l1 = 1.0;              // length of link 1
inline constexpr double lc1 = 0.5, lc2 = 0.5;  // centres of mass
inline constexpr double I1 = 1.0, I2 = 1.0;    // moments of inertia
inline constexpr double g = 9.8;
inline constexpr double max_vel_1 = 4 * pi;
inline constexpr double max_vel_2 = 9 * pi;

using state = std::array<double, 4>;

/// The time derivative of (theta1, theta2, dtheta1, dtheta2) under torque `a` ("book" dynamics;
/// the NIPS paper's version lacks the m2 l1 lc2 dtheta1^2 sin(theta2) term of ddtheta2).
inline state derivative(const state& s, double a) noexcept {
  const double theta1 = s[0], theta2 = s[1], dtheta1 = s[2], dtheta2 = s[3];
  const double d1 =
      m1 * (lc1 * lc1) + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * std::cos(theta2)) + I1 + I2;
  const double d2 = m2 * (lc2 * lc2 + l1 * lc2 * std::cos(theta2)) + I2;
  const double phi2 = m2 * lc2 * g * std::cos(theta1 + theta2 - pi / 2.0);
  const double phi1 = -m2 * l1 * lc2 * (dtheta2 * dtheta2) * std::sin(theta2) -
                      2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * std::sin(theta2) +
                      (m1 * lc1 + m2 * l1) * g * std::cos(theta1 - pi / 2) + phi2;
  const double ddtheta2 =
      (a + d2 / d1 * phi1 - m2 * l1 * lc2 * (dtheta1 * dtheta1) * std::sin(theta2) - phi2) /
      (m2 * (lc2 * lc2) + I2 - (d2 * d2) / d1);
  const double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
  return {dtheta1, dtheta2, ddtheta1, ddtheta2};
}

/// One RK4 step of length dt: y + dt/6 (k1 + 2 k2 + 2 k3 + k4), grouped as Gymnasium's rk4.
inline state rk4(const state& y, double a) noexcept {
  const double dt2 = dt / 2.0;
  auto shifted = [&y](const state& k, double h) {
    return state{y[0] + h * k[0], y[1] + h * k[1], y[2] + h * k[2], y[3] + h * k[3]};
  };
  const state k1 = derivative(y, a);
  const state k2 = derivative(shifted(k1, dt2), a);
  const state k3 = derivative(shifted(k2, dt2), a);
  const state k4 = derivative(shifted(k3, dt), a);
  state out;
  for (std::size_t j = 0; j < 4; ++j)
    out[j] = y[j] + dt / 6.0 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
  return out;
}

/// Gymnasium's wrap(x, -pi, pi): whole turns added or removed until x is in [-pi, pi].
inline double wrap(double x) noexcept {
  while (x > pi) x = x - 2 * pi;
  while (x < -pi) x = x + 2 * pi;
  return x;
}

}  // namespace detail::acrobot

template <std::floating_point T = float>
class Acrobot {
 public:
  using value_type = T;
  using observation_type = Eigen::Vector<T, 6>;
  using action_type = std::int64_t;
  using state_type = std::array<double, 4>;  ///< theta1, theta2, dtheta1, dtheta2
  using Params = AcrobotParams;

  explicit Acrobot(const Params& params = {})
      : params_(params), episode_(detail::acrobot::name, params.max_episode_steps) {}

  observation_type reset(std::uint64_t seed) {
    episode_.seed(seed);
    return reset();
  }

  observation_type reset() {
    for (double& v : state_) v = static_cast<float>(detail::uniform(episode_.rng(), -0.1, 0.1));
    episode_.begin();
    return observation();
  }

  StepResult<observation_type> step(action_type action) {
    namespace ab = detail::acrobot;
    episode_.require_running();
    detail::check_discrete_action(ab::name, action, 3);
    state_type next = ab::rk4(state_, static_cast<double>(action - 1));
    next[0] = ab::wrap(next[0]);
    next[1] = ab::wrap(next[1]);
    next[2] = std::clamp(next[2], -ab::max_vel_1, ab::max_vel_1);
    next[3] = std::clamp(next[3], -ab::max_vel_2, ab::max_vel_2);
    state_ = next;
    const bool terminated = -std::cos(state_[0]) - std::cos(state_[1] + state_[0]) > 1.0;
    const bool truncated = episode_.advance(terminated);
    return {observation(), terminated ? T(0) : T(-1), terminated, truncated};
  }

  [[nodiscard]] Discrete action_space() const noexcept { return Discrete{3}; }
  [[nodiscard]] Box<T> observation_space() const {
    Box<T> box{Vector<T>(6), Vector<T>(6)};
    box.high << 1, 1, 1, 1, static_cast<T>(detail::acrobot::max_vel_1),
        static_cast<T>(detail::acrobot::max_vel_2);
    box.low = -box.high;
    return box;
  }

  [[nodiscard]] const state_type& state() const noexcept { return state_; }
  /// Starts an episode from `state` (step count 0), taken as it is (not wrapped or clipped).
  void set_state(const state_type& state) {
    detail::check_state(detail::acrobot::name, state);
    state_ = state;
    episode_.begin();
  }

  [[nodiscard]] std::int64_t elapsed_steps() const noexcept { return episode_.elapsed_steps(); }
  [[nodiscard]] const Params& get_params() const noexcept { return params_; }

 private:
  [[nodiscard]] observation_type observation() const {
    observation_type obs;
    obs << static_cast<T>(std::cos(state_[0])), static_cast<T>(std::sin(state_[0])),
        static_cast<T>(std::cos(state_[1])), static_cast<T>(std::sin(state_[1])),
        static_cast<T>(state_[2]), static_cast<T>(state_[3]);
    return obs;
  }

  Params params_;
  detail::Episode episode_;
  state_type state_{};
};

}  // namespace onelearn::rl
ONELEARN_END_NO_FMA
