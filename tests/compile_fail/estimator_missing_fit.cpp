// expect: onelearn::Estimator: missing member fit\(X\) or fit\(X, y\)
// An estimator with parameters but no fit.
#include <onelearn/core/concepts.hpp>
#include <onelearn/core/params.hpp>

struct NoFitParams {
  double alpha = 1;
  static constexpr std::array<std::string_view, 1> names{"alpha"};
};
struct NoFit : onelearn::WithParams<NoFit, NoFitParams> {
  using value_type = double;
};
static_assert(onelearn::check_estimator<NoFit>());
