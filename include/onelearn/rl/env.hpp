#pragma once
/**
 * \file
 * \brief rl::Environment: what a simulator implements, Gymnasium's Env API in C++.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/env.hpp>
 * #include <cmath>
 * #include <cstdint>
 * #include <random>
 * // A user's simulation, steered by one continuous control per step:
 * struct MySimulation {
 *   using value_type = double;
 *   using observation_type = onelearn::Vector<double>;  // or a fixed-size Eigen vector
 *   using action_type = onelearn::Vector<double>;       // std::int64_t for a Discrete space
 *
 *   observation_type reset(std::uint64_t seed) {        // reseed, start an episode
 *     rng.seed(seed);
 *     return reset();
 *   }
 *   observation_type reset() {                          // start an episode, same stream
 *     x = std::uniform_real_distribution<double>(-1, 1)(rng);
 *     steps = 0;
 *     return observation_type::Constant(1, x);
 *   }
 *   onelearn::rl::StepResult<observation_type> step(const action_type& action) {
 *     x += 0.1 * action(0);
 *     return {.observation = observation_type::Constant(1, x), .reward = -x * x,
 *             .terminated = std::abs(x) > 10, .truncated = ++steps == 200};
 *   }
 *   onelearn::rl::Box<double> observation_space() const {
 *     return onelearn::rl::Box<double>::uniform(1, -10, 10);
 *   }
 *   onelearn::rl::Box<double> action_space() const {   // or onelearn::rl::Discrete
 *     return onelearn::rl::Box<double>::uniform(1, -1, 1);
 *   }
 *
 *   std::mt19937_64 rng;
 *   double x = 0;
 *   int steps = 0;
 * };
 * static_assert(onelearn::rl::check_environment<MySimulation>());  // names a missing member
 *
 * MySimulation sim;
 * auto obs = sim.reset(42);
 * onelearn::Vector<double> my_action = onelearn::Vector<double>::Constant(1, 0.5);
 * auto [next, reward, terminated, truncated] = sim.step(my_action);
 * \endcode
 *
 * The environment concept: what a simulator implements so that onelearn's vectorised
 * environments and agents can step it. Gymnasium's Env API (reset/step/spaces), in C++.
 *
 * \par Requirements
 * The concept `rl::Environment`; `check_environment<E>()` names the first one missing in one
 * sentence, like `onelearn::check_estimator`.
 * - `value_type`: float or double, the scalar of observations and rewards.
 * - `observation_type`: an Eigen column vector of value_type (fixed size or `Vector<T>`).
 * - `action_type`: an integer type when action_space() is a Discrete, an Eigen column vector
 *   of value_type when it is a `Box<value_type>`.
 * - `reset(seed)` and `reset()` returning the episode's first observation. reset(seed) restarts
 *   the environment's random stream from `seed`; reset() continues it, so a sequence of
 *   episodes is reproducible from the first seed (Gymnasium's rule).
 * - `step(action)` returning a StepResult: the next observation, the reward, `terminated` (the
 *   episode reached a terminal state of the task: the pole fell, the goal was reached) and
 *   `truncated` (it was cut by a time limit or from outside). Both may be true at once.
 * - `observation_space()` (a `Box<value_type>`) and `action_space()` (Discrete or Box), const.
 *
 * Errors (rl/errors.hpp) expected of an implementation, and thrown by onelearn's own:
 * `invalid_action_error` for an action outside action_space(), `reset_required_error` for a
 * step before reset() or after the episode ended. VectorEnv checks actions and observations
 * itself, so a user's environment that does not is still caught there.
 */

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "onelearn/core/types.hpp"
#include "onelearn/rl/spaces.hpp"

namespace onelearn::rl {

/// What step() returns. Aggregate, so structured bindings and designated initializers work.
template <class Observation>
struct StepResult {
  Observation observation;                ///< the state after the step
  typename Observation::Scalar reward{};  ///< the reward for the step just taken
  bool terminated = false;                ///< a terminal state of the task was reached
  bool truncated = false;                 ///< the episode was cut (time limit)

  [[nodiscard]] bool done() const noexcept { return terminated || truncated; }
};

namespace detail {
template <class V, class T>
concept eigen_column_of = std::derived_from<V, Eigen::MatrixBase<V>> && V::ColsAtCompileTime == 1 &&
                          std::same_as<typename V::Scalar, T>;
}  // namespace detail

// One small requirement per member, so each static_assert in check_environment names one.
namespace env_member {

template <class E>
concept value_type = std::floating_point<typename E::value_type>;  // false when absent

template <class E>
concept observation_type =
    detail::eigen_column_of<typename E::observation_type, typename E::value_type>;

template <class E>
concept action_type = requires {
  typename E::action_type;
};

template <class E>
concept reset_seed = requires(E& e, std::uint64_t seed) {
  { e.reset(seed) } -> std::convertible_to<typename E::observation_type>;
};

template <class E>
concept reset = requires(E& e) {
  { e.reset() } -> std::convertible_to<typename E::observation_type>;
};

template <class E>
concept step = requires(E& e, const typename E::action_type& a) {
  { e.step(a) } -> std::convertible_to<StepResult<typename E::observation_type>>;
};

template <class E>
concept observation_space = requires(const E& e) {
  { e.observation_space() } -> std::convertible_to<Box<typename E::value_type>>;
};

template <class E>
concept discrete_action_space = requires(const E& e) {
  { e.action_space() } -> std::same_as<Discrete>;
};

template <class E>
concept box_action_space = requires(const E& e) {
  { e.action_space() } -> std::same_as<Box<typename E::value_type>>;
};

template <class E>
concept discrete_actions = discrete_action_space<E> && std::integral<typename E::action_type>;

template <class E>
concept box_actions =
    box_action_space<E> && detail::eigen_column_of<typename E::action_type, typename E::value_type>;

template <class E>
concept action_space = discrete_actions<E> || box_actions<E>;

}  // namespace env_member

template <class E>
concept Environment = env_member::value_type<E> && env_member::observation_type<E> &&
    env_member::action_type<E> && env_member::reset_seed<E> && env_member::reset<E> &&
    env_member::step<E> && env_member::observation_space<E> && env_member::action_space<E>;

/// An Environment whose actions are the integers of a Discrete space.
template <class E>
concept DiscreteEnvironment = Environment<E> && env_member::discrete_actions<E>;

/// An Environment whose actions are vectors in a Box.
template <class E>
concept ContinuousEnvironment = Environment<E> && env_member::box_actions<E>;

/// The static check: `static_assert(onelearn::rl::check_environment<MyEnv>());`. Stops at the
/// first broken requirement, so the compiler prints one sentence naming the missing member.
template <class E>
consteval bool check_environment() {
  using namespace env_member;
  if constexpr (!value_type<E>) {
    static_assert(value_type<E>,
                  "onelearn::rl::Environment: missing member type value_type (float or double)");
  } else if constexpr (!observation_type<E>) {
    static_assert(observation_type<E>,
                  "onelearn::rl::Environment: missing member type observation_type (an Eigen "
                  "column vector of value_type)");
  } else if constexpr (!action_type<E>) {
    static_assert(action_type<E>, "onelearn::rl::Environment: missing member type action_type");
  } else if constexpr (!reset_seed<E>) {
    static_assert(reset_seed<E>,
                  "onelearn::rl::Environment: missing member reset(std::uint64_t seed) returning "
                  "observation_type");
  } else if constexpr (!reset<E>) {
    static_assert(reset<E>,
                  "onelearn::rl::Environment: missing member reset() returning observation_type");
  } else if constexpr (!step<E>) {
    static_assert(step<E>,
                  "onelearn::rl::Environment: missing member step(action_type) returning "
                  "StepResult<observation_type>");
  } else if constexpr (!observation_space<E>) {
    static_assert(observation_space<E>,
                  "onelearn::rl::Environment: missing member observation_space() const returning "
                  "Box<value_type>");
  } else if constexpr (!action_space<E>) {
    static_assert(action_space<E>,
                  "onelearn::rl::Environment: missing member action_space() const returning "
                  "Discrete (with an integral "
                  "action_type) or Box<value_type> (with an Eigen vector action_type)");
  }
  return true;
}

}  // namespace onelearn::rl
