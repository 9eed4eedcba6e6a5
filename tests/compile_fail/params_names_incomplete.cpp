// expect: onelearn: Params::names must name every field of Params
// Two fields, one name: the names array was not updated when a field was added.
#include <onelearn/core/params.hpp>

struct Params {
  double alpha = 1;
  int max_iter = 100;
  static constexpr std::array<std::string_view, 1> names{"alpha"};
};
static_assert(onelearn::params::check_params<Params>());
