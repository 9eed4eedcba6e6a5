// expect: onelearn::rl::Environment: missing member step\(action_type\)
// A user's simulator that can reset but not step.
#include <cstdint>

#include <onelearn/rl/env.hpp>

struct NoStep {
  using value_type = double;
  using observation_type = onelearn::Vector<double>;
  using action_type = std::int64_t;
  observation_type reset(std::uint64_t seed);
  observation_type reset();
  onelearn::rl::Discrete action_space() const;
  onelearn::rl::Box<double> observation_space() const;
};
static_assert(onelearn::rl::check_environment<NoStep>());
