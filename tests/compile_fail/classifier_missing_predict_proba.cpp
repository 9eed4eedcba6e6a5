// expect: onelearn::Classifier: missing member predict_proba\(X\)
#include <onelearn/core/concepts.hpp>

struct NoProba {
  using value_type = float;
  struct params_type {};
  const params_type& get_params() const;
  NoProba& set_params(const params_type&);
  NoProba& fit(const onelearn::Matrix<float>&, const onelearn::Labels&);
  onelearn::Labels predict(const onelearn::Matrix<float>&) const;
  onelearn::Labels classes() const;
};
static_assert(onelearn::check_classifier<NoProba>());
