// expect: onelearn: a Params type must declare its field names
#include <onelearn/core/params.hpp>

struct Params {
  double alpha = 1;
};
static_assert(onelearn::params::check_params<Params>());
