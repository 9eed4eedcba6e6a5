#pragma once
/**
 * \file
 * \brief The errors of the reinforcement-learning module beyond onelearn's common ones.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/errors.hpp>
 * #include <onelearn/rl/envs/cartpole.hpp>
 * onelearn::rl::CartPole<float> env;
 * env.reset(42);
 * try {
 *   env.step(2);                              // CartPole's actions are 0 and 1
 * } catch (const onelearn::rl::invalid_action_error& e) {
 *   // "CartPole-v1: action 2 is outside the action space Discrete(2) (an integer in [0, 2))"
 * }
 * \endcode
 *
 * The errors of the reinforcement-learning module beyond onelearn's common ones
 * (core/errors.hpp). Each is a onelearn::invalid_argument (so
 * `catch (const onelearn::error&)` and `catch (const std::invalid_argument&)` both catch it)
 * whose message names the environment, the value found and the rule it broke.
 *
 * Errors:
 * - `invalid_action_error`: an action outside the action space (a discrete action out of
 *   range; a continuous action of the wrong length or with NaN/Inf), or a batch of actions
 *   whose length is not the number of copies of a vectorised environment.
 * - `invalid_observation_error`: an environment returned an observation with NaN/Inf or of the
 *   wrong length (checked by VectorEnv on every reset and step, so a user's simulator that
 *   blows up is stopped at the step where it happened, not many updates later as a NaN loss).
 * - `reset_required_error`: step() before the first reset(), or after the episode ended
 *   (terminated or truncated) without a reset in between. Gymnasium only warns there and goes
 *   on with undefined dynamics; an error is cheaper to debug than a silently wrong return.
 */

#include "onelearn/core/errors.hpp"

namespace onelearn::rl {

class invalid_action_error : public onelearn::invalid_argument {
 public:
  using onelearn::invalid_argument::invalid_argument;
};

class invalid_observation_error : public onelearn::invalid_argument {
 public:
  using onelearn::invalid_argument::invalid_argument;
};

/// Like not_fitted_error for estimators: the object is used in a state that does not allow the
/// call. An invalid_argument (error_code::invalid_argument) rather than a not_fitted_error,
/// whose code would be rethrown on other ranks under a name that says "fit".
class reset_required_error : public onelearn::invalid_argument {
 public:
  using onelearn::invalid_argument::invalid_argument;
};

}  // namespace onelearn::rl
