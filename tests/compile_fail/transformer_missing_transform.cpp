// expect: onelearn::Transformer: missing member transform\(X\)
#include <onelearn/core/concepts.hpp>

struct NoTransform {
  using value_type = double;
  struct params_type {};
  const params_type& get_params() const;
  NoTransform& set_params(const params_type&);
  NoTransform& fit(const onelearn::Matrix<double>&);
  onelearn::Matrix<double> fit_transform(const onelearn::Matrix<double>&);
};
static_assert(onelearn::check_transformer<NoTransform>());
