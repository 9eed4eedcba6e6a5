// expect: onelearn::Estimator: missing member get_params\(\)
#include <onelearn/core/concepts.hpp>

struct NoGetParams {
  using value_type = double;
  struct params_type {};
  NoGetParams& set_params(const params_type&);
  NoGetParams& fit(const onelearn::Matrix<double>&);
};
static_assert(onelearn::check_estimator<NoGetParams>());
