// expect: onelearn::Regressor: missing member score\(X, y\)
#include <onelearn/core/concepts.hpp>

struct NoScore {
  using value_type = double;
  struct params_type {};
  const params_type& get_params() const;
  NoScore& set_params(const params_type&);
  NoScore& fit(const onelearn::Matrix<double>&, const onelearn::Vector<double>&);
  onelearn::Vector<double> predict(const onelearn::Matrix<double>&) const;
};
static_assert(onelearn::check_regressor<NoScore>());
