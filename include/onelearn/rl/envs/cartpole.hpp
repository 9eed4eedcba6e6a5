#pragma once
/**
 * \class onelearn::rl::CartPole
 * \brief Gymnasium's CartPole-v1: balance a pole on a cart pushed left or right.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/envs/cartpole.hpp>
 * onelearn::rl::CartPole<float> env;                     // CartPole-v1, float observations
 * auto obs = env.reset(42);                              // x, x_dot, theta, theta_dot
 * double episode_return = 0;
 * for (;;) {
 *   auto [next, reward, terminated, truncated] = env.step(obs(2) > 0 ? 1 : 0);
 *   episode_return += reward;
 *   if (terminated || truncated) break;
 *   obs = next;
 * }
 * \endcode
 *
 * rl::CartPole: Gymnasium's CartPole-v1 (Barto, Sutton and Anderson's cart-pole), with its
 * equations, constants, reward, termination and 500-step truncation.
 *
 * \par Parameters (CartPoleParams)
 * - `max_episode_steps` (int, default 500): the step at which an episode is truncated (500 in
 *   v1, 200 in v0), >= 1.
 *
 * \par The task
 * As Gymnasium's cartpole.py. State (x, x_dot, theta, theta_dot), in double. Action 0 pushes
 * the cart left, 1 right, with a force of 10 N. Explicit Euler steps of tau = 0.02 s of the
 * equations of Florian's "Correct equations for the dynamics of the cart-pole system" with
 * gravity 9.8, cart mass 1, pole mass 0.1, half pole length 0.5:
 * \verbatim
 *   temp      = (F + m_p l theta_dot^2 sin(theta)) / (m_c + m_p)
 *   theta_acc = (g sin(theta) - cos(theta) temp) / (l (4/3 - m_p cos^2(theta) / (m_c + m_p)))
 *   x_acc     = temp - m_p l theta_acc cos(theta) / (m_c + m_p)
 * \endverbatim
 * (x and theta advance with the old velocities, then the velocities with the accelerations.)
 * Reward 1 for every step, the terminating one included. Terminated when |x| > 2.4 or
 * |theta| > 12 degrees (12 * 2 pi / 360 rad); truncated at max_episode_steps. Initial state:
 * each of the four values uniform in [-0.05, 0.05).
 *
 * \par Seeding
 * reset(seed) restarts the reset stream; reset() continues it. The stream is splitmix64, not
 * numpy's PCG64: the same seed gives other initial states than Gymnasium's (the distribution
 * is the same). The dynamics are computed in double, as Gymnasium does, and the observation is
 * rounded to T (Gymnasium returns float32). The arithmetic is done in Gymnasium's order
 * without fused multiply-adds whatever the flags (core/detail/no_fma.hpp), so a seed gives the
 * same episodes with and without -march=native.
 *
 * CartPoleVectorEnv (envs/cartpole_vector.hpp) steps many copies at once, faster than
 * `VectorEnv<CartPole<T>>` and to the same numbers.
 *
 * Errors (rl/errors.hpp): `invalid_action_error` for an action other than 0 or 1;
 * `reset_required_error` for step() before reset() or after the episode ended;
 * onelearn::invalid_argument for max_episode_steps < 1 or a non-finite set_state.
 */

#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
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

struct CartPoleParams {
  std::int64_t max_episode_steps = 500;  ///< truncation: 500 in CartPole-v1
};

namespace detail::cartpole {

inline constexpr std::string_view name = "CartPole-v1";
inline constexpr double gravity = 9.8;
inline constexpr double masscart = 1.0;
inline constexpr double masspole = 0.1;
inline constexpr double total_mass = masspole + masscart;
inline constexpr double length = 0.5;  // half the pole's length
inline constexpr double polemass_length = masspole * length;
inline constexpr double force_mag = 10.0;
inline constexpr double tau = 0.02;
inline constexpr double theta_threshold = 12 * 2 * std::numbers::pi / 360;
inline constexpr double x_threshold = 2.4;
inline constexpr double reset_low = -0.05;
inline constexpr double reset_high = 0.05;

/// One Euler step of (x, x_dot, theta, theta_dot) in place, pushing right when `right`. Returns
/// whether the new state is terminal. The products and sums are grouped as cartpole.py groups
/// them, so the numbers are Gymnasium's to the rounding of sin and cos.
inline bool advance(double& x, double& x_dot, double& theta, double& theta_dot,
                    bool right) noexcept {
  const double force = right ? force_mag : -force_mag;
  const double costheta = std::cos(theta);
  const double sintheta = std::sin(theta);
  const double temp = (force + polemass_length * (theta_dot * theta_dot) * sintheta) / total_mass;
  const double thetaacc = (gravity * sintheta - costheta * temp) /
                          (length * (4.0 / 3.0 - masspole * (costheta * costheta) / total_mass));
  const double xacc = temp - polemass_length * thetaacc * costheta / total_mass;
  x = x + tau * x_dot;
  x_dot = x_dot + tau * xacc;
  theta = theta + tau * theta_dot;
  theta_dot = theta_dot + tau * thetaacc;
  return x < -x_threshold || x > x_threshold || theta < -theta_threshold || theta > theta_threshold;
}

template <class T>
Box<T> observation_space() {
  // Twice the termination bounds, so the terminal observation is inside (as Gymnasium).
  constexpr T inf = std::numeric_limits<T>::infinity();
  Box<T> box{Vector<T>(4), Vector<T>(4)};
  box.high << static_cast<T>(x_threshold * 2), inf, static_cast<T>(theta_threshold * 2), inf;
  box.low = -box.high;
  return box;
}

}  // namespace detail::cartpole

template <std::floating_point T = float>
class CartPole {
 public:
  using value_type = T;
  using observation_type = Eigen::Vector<T, 4>;
  using action_type = std::int64_t;
  using state_type = std::array<double, 4>;  ///< x, x_dot, theta, theta_dot
  using Params = CartPoleParams;

  explicit CartPole(const Params& params = {})
      : params_(params), episode_(detail::cartpole::name, params.max_episode_steps) {}

  observation_type reset(std::uint64_t seed) {
    episode_.seed(seed);
    return reset();
  }

  observation_type reset() {
    for (double& v : state_) {
      v = detail::uniform(episode_.rng(), detail::cartpole::reset_low,
                          detail::cartpole::reset_high);
    }
    episode_.begin();
    return observation();
  }

  StepResult<observation_type> step(action_type action) {
    episode_.require_running();
    detail::check_discrete_action(detail::cartpole::name, action, 2);
    const bool terminated =
        detail::cartpole::advance(state_[0], state_[1], state_[2], state_[3], action == 1);
    const bool truncated = episode_.advance(terminated);
    return {observation(), T(1), terminated, truncated};
  }

  [[nodiscard]] Discrete action_space() const noexcept { return Discrete{2}; }
  [[nodiscard]] Box<T> observation_space() const {
    return detail::cartpole::observation_space<T>();
  }

  /// The state in double (Gymnasium's env.unwrapped.state).
  [[nodiscard]] const state_type& state() const noexcept { return state_; }
  /// Starts an episode from `state` (step count 0), for tests and model-based uses.
  void set_state(const state_type& state) {
    detail::check_state(detail::cartpole::name, state);
    state_ = state;
    episode_.begin();
  }

  [[nodiscard]] std::int64_t elapsed_steps() const noexcept { return episode_.elapsed_steps(); }
  [[nodiscard]] const Params& get_params() const noexcept { return params_; }

 private:
  [[nodiscard]] observation_type observation() const {
    return observation_type(static_cast<T>(state_[0]), static_cast<T>(state_[1]),
                            static_cast<T>(state_[2]), static_cast<T>(state_[3]));
  }

  Params params_;
  detail::Episode episode_;
  state_type state_{};
};

}  // namespace onelearn::rl
ONELEARN_END_NO_FMA
