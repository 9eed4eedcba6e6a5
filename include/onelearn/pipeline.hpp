#pragma once
/**
 * \class onelearn::pipeline::Pipeline
 * \brief A sequence of transformers ending in any estimator, as scikit-learn's Pipeline.
 * \ingroup estimators
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/pipeline.hpp>
 * #include <onelearn/preprocessing/standard_scaler.hpp>
 * #include <onelearn/linear_model/logistic_regression.hpp>
 * using namespace onelearn;
 *
 * auto pipe = pipeline::make_pipeline(preprocessing::StandardScaler<double>(),
 *                                     linear_model::LogisticRegression<double>({.C = 0.5}));
 * pipe.fit(X_train, y_train);                 // scaler.fit_transform, then the classifier's fit
 * Labels predicted = pipe.predict(X_test);    // scaler.transform, then predict
 * Matrix<double> proba = pipe.predict_proba(X_test);
 * double accuracy = pipe.score(X_test, y_test);
 * pipe.set_params({{"logisticregression__C", 10.0}, {"standardscaler__with_mean", false}});
 * double C = std::get<double>(pipe.get_param("logisticregression__C"));
 * const auto& scaler = pipe.step<0>();        // or, by type:
 * const auto& same = pipe.step<preprocessing::StandardScaler<double>>();
 *
 * // Steps named by hand, as Pipeline([("scale", ...), ("clf", ...)]):
 * pipeline::Pipeline named({"scale", "clf"}, preprocessing::StandardScaler<double>(),
 *                          linear_model::LogisticRegression<double>());
 * \endcode
 *
 * pipeline::Pipeline: a fixed sequence of transformers ending in any estimator (transformer,
 * regressor or classifier), as scikit-learn's Pipeline (1.2.1); itself an estimator, so it can
 * be cross-validated and searched. The steps are held by value in a std::tuple, so every call
 * is resolved at compile time and each step keeps its own type.
 *
 * - fit(X[, y]): each transformer in turn is fitted with fit_transform (with y when it has
 *   fit_transform(X, y)) and its output passed on; the last step is fitted on the result.
 * - predict, predict_proba, predict_log_proba, decision_function, score, transform,
 *   fit_transform: the data goes through every transformer's transform and then to the last
 *   step's method of the same name. Each exists exactly when the last step has it, so the
 *   Pipeline satisfies the concepts (core/concepts.hpp) its last step satisfies.
 * - Parameters by name, as scikit-learn: "<step>__<param>", where a step's name is its
 *   type's name lower-cased (what make_pipeline does: "standardscaler", "logisticregression";
 *   repeated names get "-1", "-2", ...), or the name given at construction. Pipelines nest:
 *   "outer__inner__param".
 *
 * \par Members
 * - `step<I>()`, `step<S>()` (the one step of type S): a step, fitted or not.
 * - `step_names()`: the names, in order. `param_names()`: every "<step>__<param>".
 * - `get_params()` / `set_params(params_type)`: params_type is the tuple of the steps'
 *   params_type. `get_param(name)`, `set_params({{name, value}, ...})` (all or nothing).
 *
 * \par Differences from scikit-learn
 * - The steps are fixed at compile time: a step cannot be replaced by name or set to
 *   "passthrough", and there is no memory (caching) or slicing.
 * - Step names come from the C++ type name without namespace or template arguments
 *   (GCC/Clang spelling); give names explicitly for other compilers or to choose them.
 *
 * Errors: an intermediate step that is not a transformer, or steps of different value_type,
 * fail to compile with one sentence. `invalid_argument` from get_param/set_params for a name
 * without "__", an unknown step or an unknown parameter of the step; `invalid_argument` at
 * construction for repeated or empty explicit names or names containing "__"; the steps' own
 * errors from fit/predict.
 */

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/core/concepts.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::pipeline {

namespace detail {

template <class T>
constexpr std::string_view pretty_function() {
#if defined(__clang__) || defined(__GNUC__)
  return __PRETTY_FUNCTION__;
#else
  return {};
#endif
}

/// "StandardScaler" for onelearn::preprocessing::StandardScaler<double, onelearn::exec::local>:
/// the type's own name, parsed from the compiler's function signature.
template <class T>
std::string type_name() {
  const std::string_view text = pretty_function<T>();
  const auto at = text.find("T = ");
  if (at == std::string_view::npos) return "step";
  std::string_view name = text.substr(at + 4);
  // The type ends at the first ';' or ']' outside template arguments.
  int depth = 0;
  std::size_t end = 0;
  for (; end < name.size(); ++end) {
    const char c = name[end];
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (depth == 0 && (c == ';' || c == ']')) break;
  }
  name = name.substr(0, end);
  name = name.substr(0, name.find('<'));
  const auto colon = name.rfind("::");
  if (colon != std::string_view::npos) name = name.substr(colon + 2);
  return std::string(name);
}

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// scikit-learn's _name_estimators: lower-cased type names; a name used by several steps
/// gets "-1", "-2", ... in order.
template <std::size_t N>
std::array<std::string, N> default_names(const std::array<std::string, N>& types) {
  std::array<std::string, N> out;
  for (std::size_t i = 0; i < N; ++i) {
    out[i] = lower(types[i]);
  }
  std::array<std::string, N> base = out;
  for (std::size_t i = 0; i < N; ++i) {
    const auto count = std::count(base.begin(), base.end(), base[i]);
    if (count > 1) {
      const auto rank =
          std::count(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(i) + 1, base[i]);
      out[i] = base[i] + "-" + std::to_string(rank);
    }
  }
  return out;
}

template <class S>
std::vector<std::string> step_param_names(const S& step) {
  if constexpr (requires { step.param_names(); }) {
    return step.param_names();
  } else {
    const auto& names = params::names<typename S::params_type>();
    return {names.begin(), names.end()};
  }
}

template <class S>
void set_step_param(S& step, std::string_view name, const ParamValue& value) {
  const std::initializer_list<std::pair<std::string_view, ParamValue>> one{{name, value}};
  step.set_params(one);
}

template <class... Steps>
using last_t = std::tuple_element_t<sizeof...(Steps) - 1, std::tuple<Steps...>>;

template <class S>
concept Transformer = concepts::Transformer<S>;

/// The compile-time checks of a Pipeline's steps, one sentence each.
template <class V, class... Steps>
consteval bool check_steps() {
  static_assert((std::is_same_v<typename Steps::value_type, V> && ...),
                "onelearn::Pipeline: every step must have the same value_type (float or double)");
  constexpr std::size_t n = sizeof...(Steps);
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    static_assert(((I + 1 == n || Transformer<Steps>)&&...),
                  "onelearn::Pipeline: every step but the last must be a transformer "
                  "(transform(X) and fit_transform(X))");
    return true;
  }
  (std::index_sequence_for<Steps...>{});
}

/// Marks fit without targets.
struct no_target {};

}  // namespace detail

template <class... Steps>
class Pipeline {
  static_assert(sizeof...(Steps) >= 1, "onelearn::Pipeline: expected at least one step");
  using Last = detail::last_t<Steps...>;
  static constexpr std::size_t N = sizeof...(Steps);

 public:
  using value_type = typename Last::value_type;
  using params_type = std::tuple<typename Steps::params_type...>;
  static constexpr std::size_t n_steps = N;

 private:
  static_assert(detail::check_steps<value_type, Steps...>());

  using T = value_type;

 public:
  /// Steps named as make_pipeline names them.
  explicit Pipeline(Steps... steps)
      : steps_(std::move(steps)...),
        names_(detail::default_names<N>({detail::type_name<Steps>()...})) {}

  /// Steps with the given names (non-empty, distinct, without "__").
  Pipeline(std::array<std::string, N> names, Steps... steps)
      : steps_(std::move(steps)...), names_(std::move(names)) {
    for (std::size_t i = 0; i < N; ++i) {
      const std::string& n = names_[i];
      if (n.empty() || n.find("__") != std::string::npos ||
          std::count(names_.begin(), names_.end(), n) > 1) {
        throw invalid_argument("Pipeline: expected distinct, non-empty step names without " +
                               std::string("\"__\", found \"") + n + "\" for step " +
                               std::to_string(i));
      }
    }
  }

  template <std::size_t I>
  [[nodiscard]] auto& step() noexcept {
    return std::get<I>(steps_);
  }
  template <std::size_t I>
  [[nodiscard]] const auto& step() const noexcept {
    return std::get<I>(steps_);
  }
  template <class S>
  [[nodiscard]] S& step() noexcept {
    return std::get<S>(steps_);
  }
  template <class S>
  [[nodiscard]] const S& step() const noexcept {
    return std::get<S>(steps_);
  }

  [[nodiscard]] const std::array<std::string, N>& step_names() const noexcept { return names_; }

  // ---- parameters ----

  [[nodiscard]] params_type get_params() const {
    return std::apply([](const auto&... s) { return params_type(s.get_params()...); }, steps_);
  }

  Pipeline& set_params(const params_type& p) {
    for_each_step([&]<std::size_t I>(auto& s) { s.set_params(std::get<I>(p)); });
    return *this;
  }

  /// set_params({{"ridge__alpha", 0.5}}): all or nothing, so a bad name changes nothing.
  Pipeline& set_params(std::initializer_list<std::pair<std::string_view, ParamValue>> values) {
    std::tuple<Steps...> updated = steps_;
    for (const auto& [name, value] : values) set_one(updated, name, value);
    steps_ = std::move(updated);
    return *this;
  }

  [[nodiscard]] ParamValue get_param(std::string_view name) const {
    // Named variables, not a structured binding: the lambda below captures them, which clang
    // accepts for bindings only from version 16.
    const auto resolved = resolve(name);
    const std::size_t index = resolved.first;
    const std::string_view rest = resolved.second;
    ParamValue out;
    for_each_step_const([&]<std::size_t I>(const auto& s) {
      if (I == index) out = s.get_param(rest);
    });
    return out;
  }

  /// Every "<step>__<param>" name, in step order.
  [[nodiscard]] std::vector<std::string> param_names() const {
    std::vector<std::string> out;
    for_each_step_const([&]<std::size_t I>(const auto& s) {
      for (const std::string& p : detail::step_param_names(s)) out.push_back(names_[I] + "__" + p);
    });
    return out;
  }

  // ---- fitting ----
  // (The constraints name Vector<T> and Labels, not their Refs: an Eigen::Ref converts to a Ref
  // of another scalar type as far as overload resolution can tell, and only fails inside.)

  Pipeline& fit(const MatrixRef<T>& X) requires requires(Last& l, const MatrixRef<T>& x) {
    l.fit(x);
  }
  {
    fit_last(X, detail::no_target{});
    return *this;
  }

  Pipeline& fit(const MatrixRef<T>& X, const VectorRef<T>& y) requires
      requires(Last& l, const MatrixRef<T>& x, const Vector<T>& v) {
    l.fit(x, v);
  }
  {
    fit_last(X, y);
    return *this;
  }

  Pipeline& fit(const MatrixRef<T>& X, const LabelsRef& y) requires
      requires(Last& l, const MatrixRef<T>& x, const Labels& v) {
    l.fit(x, v);
  }
  {
    fit_last(X, y);
    return *this;
  }

  Matrix<T> fit_transform(const MatrixRef<T>& X) requires requires(Last& l, const MatrixRef<T>& x) {
    l.fit_transform(x);
  }
  {
    if constexpr (N == 1) {
      return std::get<0>(steps_).fit_transform(X);
    } else {
      const Matrix<T> Xt = fit_transform_steps<0>(X, detail::no_target{});
      return std::get<N - 1>(steps_).fit_transform(Xt);
    }
  }

  // ---- forwarding ----

  [[nodiscard]] auto predict(const MatrixRef<T>& X) const requires
      requires(const Last& l, const MatrixRef<T>& x) {
    l.predict(x);
  }
  {
    return through([](const Last& l, const MatrixRef<T>& x) { return l.predict(x); }, X);
  }

  [[nodiscard]] auto predict_proba(const MatrixRef<T>& X) const requires
      requires(const Last& l, const MatrixRef<T>& x) {
    l.predict_proba(x);
  }
  {
    return through([](const Last& l, const MatrixRef<T>& x) { return l.predict_proba(x); }, X);
  }

  [[nodiscard]] auto predict_log_proba(const MatrixRef<T>& X) const requires
      requires(const Last& l, const MatrixRef<T>& x) {
    l.predict_log_proba(x);
  }
  {
    return through([](const Last& l, const MatrixRef<T>& x) { return l.predict_log_proba(x); }, X);
  }

  [[nodiscard]] auto decision_function(const MatrixRef<T>& X) const requires
      requires(const Last& l, const MatrixRef<T>& x) {
    l.decision_function(x);
  }
  {
    return through([](const Last& l, const MatrixRef<T>& x) { return l.decision_function(x); }, X);
  }

  [[nodiscard]] Matrix<T> transform(const MatrixRef<T>& X) const requires
      requires(const Last& l, const MatrixRef<T>& x) {
    l.transform(x);
  }
  {
    return through([](const Last& l, const MatrixRef<T>& x) { return l.transform(x); }, X);
  }

  [[nodiscard]] auto score(const MatrixRef<T>& X, const VectorRef<T>& y) const requires
      requires(const Last& l, const MatrixRef<T>& x, const Vector<T>& v) {
    l.score(x, v);
  }
  {
    return through([&](const Last& l, const MatrixRef<T>& x) { return l.score(x, y); }, X);
  }

  [[nodiscard]] auto score(const MatrixRef<T>& X, const LabelsRef& y) const requires
      requires(const Last& l, const MatrixRef<T>& x, const Labels& v) {
    l.score(x, v);
  }
  {
    return through([&](const Last& l, const MatrixRef<T>& x) { return l.score(x, y); }, X);
  }

  [[nodiscard]] decltype(auto) classes() const requires requires(const Last& l) { l.classes(); }
  { return std::get<N - 1>(steps_).classes(); }

  [[nodiscard]] bool is_fitted() const noexcept requires requires(const Last& l) { l.is_fitted(); }
  { return std::get<N - 1>(steps_).is_fitted(); }

 private:
  template <class F>
  void for_each_step(F&& f) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (f.template operator()<I>(std::get<I>(steps_)), ...);
    }
    (std::index_sequence_for<Steps...>{});
  }

  template <class F>
  void for_each_step_const(F&& f) const {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (f.template operator()<I>(std::get<I>(steps_)), ...);
    }
    (std::index_sequence_for<Steps...>{});
  }

  /// "<step>__<rest>" -> (index of step, rest).
  std::pair<std::size_t, std::string_view> resolve(std::string_view name) const {
    const auto sep = name.find("__");
    if (sep == std::string_view::npos) {
      throw invalid_argument("Pipeline: expected a parameter name \"<step>__<param>\", found \"" +
                             std::string(name) + "\"; steps: " + joined_names());
    }
    const std::string_view step_name = name.substr(0, sep);
    const auto it = std::find(names_.begin(), names_.end(), step_name);
    if (it == names_.end()) {
      throw invalid_argument("Pipeline: unknown step \"" + std::string(step_name) +
                             "\" in parameter \"" + std::string(name) +
                             "\"; expected one of: " + joined_names());
    }
    return {static_cast<std::size_t>(it - names_.begin()), name.substr(sep + 2)};
  }

  void set_one(std::tuple<Steps...>& steps, std::string_view name, const ParamValue& value) const {
    const auto resolved = resolve(name);  // (named variables: see get_param)
    const std::size_t index = resolved.first;
    const std::string_view rest = resolved.second;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((I == index ? detail::set_step_param(std::get<I>(steps), rest, value) : void()), ...);
    }
    (std::index_sequence_for<Steps...>{});
  }

  std::string joined_names() const {
    std::string out;
    for (const std::string& n : names_) out += (out.empty() ? "" : ", ") + n;
    return out;
  }

  /// Fits transformers I..N-2 with fit_transform and returns the last one's output.
  template <std::size_t I, class Y>
  Matrix<T> fit_transform_steps(const MatrixRef<T>& X, const Y& y) {
    auto& s = std::get<I>(steps_);
    Matrix<T> out;
    if constexpr (!std::is_same_v<Y, detail::no_target> && requires { s.fit_transform(X, y); }) {
      out = s.fit_transform(X, y);
    } else {
      out = s.fit_transform(X);
    }
    if constexpr (I + 2 < N) {
      return fit_transform_steps<I + 1>(out, y);
    } else {
      return out;
    }
  }

  template <class Y>
  void fit_last(const MatrixRef<T>& X, const Y& y) {
    auto& last = std::get<N - 1>(steps_);
    const auto fit_on = [&](const MatrixRef<T>& x) {
      if constexpr (std::is_same_v<Y, detail::no_target>) {
        last.fit(x);
      } else {
        last.fit(x, y);
      }
    };
    if constexpr (N == 1) {
      fit_on(X);
    } else {
      const Matrix<T> Xt = fit_transform_steps<0>(X, y);
      fit_on(Xt);
    }
  }

  /// transform through steps I..N-2.
  template <std::size_t I>
  Matrix<T> transform_steps(const MatrixRef<T>& X) const {
    Matrix<T> out = std::get<I>(steps_).transform(X);
    if constexpr (I + 2 < N) {
      return transform_steps<I + 1>(out);
    } else {
      return out;
    }
  }

  /// f(last step, X transformed by every other step).
  template <class F>
  auto through(F&& f, const MatrixRef<T>& X) const {
    const Last& last = std::get<N - 1>(steps_);
    if constexpr (N == 1) {
      return f(last, X);
    } else {
      const Matrix<T> Xt = transform_steps<0>(X);
      return f(last, Xt);
    }
  }

  std::tuple<Steps...> steps_;
  std::array<std::string, N> names_;
};

/// A Pipeline of `steps`, named by their lower-cased type names (scikit-learn's make_pipeline).
template <class... Steps>
Pipeline<std::remove_cvref_t<Steps>...> make_pipeline(Steps&&... steps) {
  return Pipeline<std::remove_cvref_t<Steps>...>(std::forward<Steps>(steps)...);
}

}  // namespace onelearn::pipeline
