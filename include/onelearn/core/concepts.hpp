#pragma once
/**
 * \file
 * \ingroup core
 *
 * The single concept family every onelearn model satisfies:
 *
 * \code{.unparsed}
 *   Estimator   fit(...) -> Estimator&, get_params(), set_params(Params)
 *   Predictor   + predict(X)
 *   Regressor   + fit(X, y) with real targets, predict -> Vector<T>, score(X, y)
 *   Classifier  + fit(X, labels), predict -> Labels, predict_proba(X), classes()
 *   Transformer + transform(X), fit_transform(X)
 *   Model       an Estimator that predicts or transforms: what Pipeline, cross-validation,
 *               search and ONNX export take.
 * \endcode
 *
 * A concept failure in a deep template is an unreadable error. So beside each concept stands a
 * check_* function whose static_asserts name the first missing member in one sentence, the way
 * ensmallen's function/static_checks.hpp does:
 * \code{.unparsed}
 *     static_assert(onelearn::check_classifier<MyModel>());
 * \endcode
 */

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "onelearn/core/types.hpp"

namespace onelearn::concepts {

// One small requirement per member, so each static_assert below can name exactly one.
namespace member {

template <class E>
concept value_type = requires { typename E::value_type; };

template <class E>
concept params_type = requires { typename E::params_type; };

template <class E>
concept get_params = requires(const E& e) {
  { e.get_params() } -> std::convertible_to<const typename E::params_type&>;
};

template <class E>
concept set_params = requires(E& e, const typename E::params_type& p) { e.set_params(p); };

template <class E>
concept fit_unsupervised = requires(E& e, const Matrix<typename E::value_type>& X) {
  { e.fit(X) } -> std::same_as<E&>;
};

template <class E>
concept fit_regression =
    requires(E& e, const Matrix<typename E::value_type>& X, const Vector<typename E::value_type>& y) {
      { e.fit(X, y) } -> std::same_as<E&>;
    };

template <class E>
concept fit_classification = requires(E& e, const Matrix<typename E::value_type>& X, const Labels& y) {
  { e.fit(X, y) } -> std::same_as<E&>;
};

template <class E>
concept fit = fit_unsupervised<E> || fit_regression<E> || fit_classification<E>;

template <class E>
concept predict = requires(const E& e, const Matrix<typename E::value_type>& X) { e.predict(X); };

template <class E>
concept predict_values = requires(const E& e, const Matrix<typename E::value_type>& X) {
  { e.predict(X) } -> std::convertible_to<Vector<typename E::value_type>>;
};

template <class E>
concept predict_labels = requires(const E& e, const Matrix<typename E::value_type>& X) {
  { e.predict(X) } -> std::convertible_to<Labels>;
};

template <class E>
concept score = requires(const E& e, const Matrix<typename E::value_type>& X,
                         const Vector<typename E::value_type>& y) {
  { e.score(X, y) } -> std::convertible_to<typename E::value_type>;
};

template <class E>
concept predict_proba = requires(const E& e, const Matrix<typename E::value_type>& X) {
  { e.predict_proba(X) } -> std::convertible_to<Matrix<typename E::value_type>>;
};

template <class E>
concept classes = requires(const E& e) {
  { e.classes() } -> std::convertible_to<Labels>;
};

template <class E>
concept transform = requires(const E& e, const Matrix<typename E::value_type>& X) {
  { e.transform(X) } -> std::convertible_to<Matrix<typename E::value_type>>;
};

template <class E>
concept fit_transform = requires(E& e, const Matrix<typename E::value_type>& X) {
  { e.fit_transform(X) } -> std::convertible_to<Matrix<typename E::value_type>>;
};

}  // namespace member

template <class D>
concept Dataset = requires(const D& d, index_t i) {
  typename D::value_type;
  { d.features() } -> std::convertible_to<Matrix<typename D::value_type>>;
  { d.size() } -> std::convertible_to<index_t>;
  { d.has_targets() } -> std::convertible_to<bool>;
  d.targets();
  { d.shard(0, 1) } -> std::same_as<D>;
  d.batch(i, i);
};

template <class E>
concept Estimator = member::value_type<E> && member::params_type<E> && member::get_params<E> &&
                    member::set_params<E> && member::fit<E>;

template <class E>
concept Predictor = Estimator<E> && member::predict<E>;

template <class E>
concept Regressor = Predictor<E> && member::fit_regression<E> && member::predict_values<E> &&
                    member::score<E>;

template <class E>
concept Classifier = Predictor<E> && member::fit_classification<E> && member::predict_labels<E> &&
                     member::predict_proba<E> && member::classes<E>;

template <class E>
concept Transformer = Estimator<E> && member::transform<E> && member::fit_transform<E>;

template <class E>
concept Model = Predictor<E> || Transformer<E>;

}  // namespace onelearn::concepts

namespace onelearn {

// The static checks. Each returns true, so it sits in a static_assert of its own. The checks
// run in order and stop at the first broken requirement, so the compiler prints exactly one
// sentence naming the missing member.

template <class E>
consteval bool check_estimator() {
  using namespace concepts::member;
  if constexpr (!value_type<E>) {
    static_assert(value_type<E>, "onelearn::Estimator: missing member type value_type (the scalar type T)");
  } else if constexpr (!params_type<E>) {
    static_assert(params_type<E>, "onelearn::Estimator: missing member type params_type (the Params struct)");
  } else if constexpr (!get_params<E>) {
    static_assert(get_params<E>, "onelearn::Estimator: missing member get_params() const returning params_type");
  } else if constexpr (!set_params<E>) {
    static_assert(set_params<E>, "onelearn::Estimator: missing member set_params(params_type)");
  } else if constexpr (!fit<E>) {
    static_assert(fit<E>, "onelearn::Estimator: missing member fit(X) or fit(X, y) returning a reference to the estimator");
  }
  return true;
}

template <class E>
consteval bool check_predictor() {
  if constexpr (!concepts::Estimator<E>) {
    return check_estimator<E>();
  } else {
    static_assert(concepts::member::predict<E>, "onelearn::Predictor: missing member predict(X) const");
    return true;
  }
}

template <class E>
consteval bool check_regressor() {
  using namespace concepts::member;
  if constexpr (!concepts::Predictor<E>) {
    return check_predictor<E>();
  } else if constexpr (!fit_regression<E>) {
    static_assert(fit_regression<E>, "onelearn::Regressor: missing member fit(X, y) taking Vector<T> targets");
  } else if constexpr (!predict_values<E>) {
    static_assert(predict_values<E>, "onelearn::Regressor: member predict(X) must return Vector<T>");
  } else if constexpr (!score<E>) {
    static_assert(score<E>, "onelearn::Regressor: missing member score(X, y) const");
  }
  return true;
}

template <class E>
consteval bool check_classifier() {
  using namespace concepts::member;
  if constexpr (!concepts::Predictor<E>) {
    return check_predictor<E>();
  } else if constexpr (!fit_classification<E>) {
    static_assert(fit_classification<E>, "onelearn::Classifier: missing member fit(X, y) taking Labels");
  } else if constexpr (!predict_labels<E>) {
    static_assert(predict_labels<E>, "onelearn::Classifier: member predict(X) must return Labels");
  } else if constexpr (!predict_proba<E>) {
    static_assert(predict_proba<E>, "onelearn::Classifier: missing member predict_proba(X) const");
  } else if constexpr (!classes<E>) {
    static_assert(classes<E>, "onelearn::Classifier: missing member classes() const");
  }
  return true;
}

template <class E>
consteval bool check_transformer() {
  using namespace concepts::member;
  if constexpr (!concepts::Estimator<E>) {
    return check_estimator<E>();
  } else if constexpr (!transform<E>) {
    static_assert(transform<E>, "onelearn::Transformer: missing member transform(X) const");
  } else if constexpr (!fit_transform<E>) {
    static_assert(fit_transform<E>, "onelearn::Transformer: missing member fit_transform(X)");
  }
  return true;
}

template <class E>
consteval bool check_model() {
  if constexpr (!concepts::Estimator<E>) {
    return check_estimator<E>();
  } else {
    static_assert(concepts::Model<E>, "onelearn::Model: missing member predict(X) const or transform(X) const");
    return true;
  }
}

}  // namespace onelearn
