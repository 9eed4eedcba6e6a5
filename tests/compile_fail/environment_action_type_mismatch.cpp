// expect: onelearn::rl::Environment: missing member action_space\(\) const returning Discrete
// A Box action space with a std::vector action: actions in a Box must be Eigen vectors.
#include <cstdint>
#include <vector>

#include <onelearn/rl/env.hpp>

struct VectorAction {
  using value_type = double;
  using observation_type = onelearn::Vector<double>;
  using action_type = std::vector<double>;
  observation_type reset(std::uint64_t seed);
  observation_type reset();
  onelearn::rl::StepResult<observation_type> step(const action_type& action);
  onelearn::rl::Box<double> action_space() const;
  onelearn::rl::Box<double> observation_space() const;
};
static_assert(onelearn::rl::check_environment<VectorAction>());
