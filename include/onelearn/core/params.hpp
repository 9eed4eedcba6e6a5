#pragma once
/**
 * \file
 * \ingroup core
 *
 * Hyper-parameters as aggregate structs, iterated with Boost.PFR.
 *
 * An estimator's `Params` is a plain aggregate, so users write designated initializers:
 * \code{.unparsed}
 *     LinearRegression<double> lr({.fit_intercept = false});
 * \endcode
 * Boost 1.81's PFR cannot see field names, so each Params carries them itself:
 * \code{.unparsed}
 *     struct Params {
 *       bool fit_intercept = true;
 *       static constexpr std::array names{std::string_view{"fit_intercept"}};
 *     };
 * \endcode
 * check_params<P>() turns a forgotten or extra name into one readable static_assert.
 * On top of that this header gives every Params printing, equality, hashing and
 * get/set by name (what a search space, a checkpoint or ONNX metadata needs).
 */

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <boost/pfr/core.hpp>
#include <boost/pfr/ops_fields.hpp>

#include "onelearn/core/errors.hpp"

namespace onelearn {

/// A parameter value by name: what set_params({{"alpha", 0.5}}) and get_param("alpha") carry.
using ParamValue = std::variant<bool, std::int64_t, double, std::string>;

namespace params {

template <class P>
concept HasNames = requires {
  { P::names.size() } -> std::convertible_to<std::size_t>;
  { P::names[0] } -> std::convertible_to<std::string_view>;
};

/// Compile-time check of the Params conventions, with one sentence per broken rule.
template <class P>
consteval bool check_params() {
  static_assert(std::is_aggregate_v<P>,
                "onelearn: a Params type must be an aggregate (no constructors, all fields public)");
  static_assert(HasNames<P>,
                "onelearn: a Params type must declare its field names: "
                "static constexpr std::array names{std::string_view{\"first_field\"}, ...};");
#if !defined(__NVCC__)
  // Not under nvcc: its front end cannot count the fields of a one-field aggregate (Boost.PFR's
  // first-field check fails to match; GaussianNBParams). Every Params type is checked by the
  // host compiler's builds. In a .cu file, what walks the fields of such a Params fails the same
  // way: get_params/set_params, and the parameter agreement of a distributed fit
  // (GaussianNB<T, exec::mpi, ...> compiled by nvcc).
  if constexpr (HasNames<P>) {
    static_assert(P::names.size() == boost::pfr::tuple_size_v<P>,
                  "onelearn: Params::names must name every field of Params, in declaration order");
  }
#endif
  return true;
}

/// Names of the fields of P, in declaration order.
template <class P>
constexpr const auto& names() {
  static_assert(check_params<P>());
  return P::names;
}

namespace detail {

template <class F>
void print_value(std::ostream& os, const F& value) {
  if constexpr (std::is_same_v<F, bool>) {
    os << (value ? "true" : "false");
  } else if constexpr (std::is_convertible_v<F, std::string_view>) {
    os << '"' << std::string_view(value) << '"';
  } else if constexpr (std::is_enum_v<F>) {
    os << static_cast<std::underlying_type_t<F>>(value);
  } else {
    os << value;
  }
}

/// Converts a ParamValue into a field of type F, or says why it cannot.
template <class F>
F convert_param(std::string_view name, const ParamValue& value) {
  auto mismatch = [&](std::string_view expected) {
    return invalid_argument("parameter '" + std::string(name) + "': expected " +
                            std::string(expected) + ", found a value of another type");
  };
  if constexpr (std::is_same_v<F, bool>) {
    if (const auto* b = std::get_if<bool>(&value)) return *b;
    throw mismatch("a bool");
  } else if constexpr (std::is_integral_v<F>) {
    std::int64_t v = 0;
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
      v = *i;
    } else if (const auto* d = std::get_if<double>(&value);
               d != nullptr && *d == static_cast<double>(static_cast<std::int64_t>(*d))) {
      v = static_cast<std::int64_t>(*d);
    } else {
      throw mismatch("an integer");
    }
    if (std::cmp_less(v, std::numeric_limits<F>::min()) ||
        std::cmp_greater(v, std::numeric_limits<F>::max())) {
      throw invalid_argument("parameter '" + std::string(name) + "': value " + std::to_string(v) +
                             " does not fit its integer type");
    }
    return static_cast<F>(v);
  } else if constexpr (std::is_floating_point_v<F>) {
    if (const auto* d = std::get_if<double>(&value)) return static_cast<F>(*d);
    if (const auto* i = std::get_if<std::int64_t>(&value)) return static_cast<F>(*i);
    throw mismatch("a number");
  } else if constexpr (std::is_constructible_v<F, std::string>) {
    if (const auto* s = std::get_if<std::string>(&value)) return F(*s);
    throw mismatch("a string");
  } else {
    throw invalid_argument("parameter '" + std::string(name) +
                           "' has a type that cannot be set by name; set it through Params");
  }
}

template <class F>
ParamValue to_param_value(const F& field) {
  if constexpr (std::is_same_v<F, bool>) {
    return field;
  } else if constexpr (std::is_integral_v<F> || std::is_enum_v<F>) {
    return static_cast<std::int64_t>(field);
  } else if constexpr (std::is_floating_point_v<F>) {
    return static_cast<double>(field);
  } else if constexpr (std::is_convertible_v<F, std::string_view>) {
    return std::string(std::string_view(field));
  } else {
    std::ostringstream os;
    print_value(os, field);
    return os.str();
  }
}

template <class P>
std::string known_names() {
  std::string out;
  for (std::string_view n : names<P>()) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

}  // namespace detail

/// "fit_intercept=true, alpha=0.5": the body of scikit-learn's repr.
template <class P>
void print(std::ostream& os, const P& p) {
  const auto& field_names = names<P>();
  boost::pfr::for_each_field(p, [&](const auto& field, std::size_t i) {
    os << (i == 0 ? "" : ", ") << field_names[i] << '=';
    detail::print_value(os, field);
  });
}

template <class P>
std::string to_string(const P& p) {
  std::ostringstream os;
  print(os, p);
  return os.str();
}

template <class P>
bool equal(const P& a, const P& b) {
  return boost::pfr::eq_fields(a, b);
}

/// A hash of every field, for caches of fitted trials keyed by their parameters.
template <class P>
std::size_t hash(const P& p) {
  return boost::pfr::hash_fields(p);
}

/// The value of the field called `name`.
template <class P>
ParamValue get(const P& p, std::string_view name) {
  const auto& field_names = names<P>();
  // A plain value and a flag, not std::optional<ParamValue>: GCC 12 warns (falsely) that an
  // optional variant may be used uninitialised here.
  ParamValue found;
  bool have = false;
  boost::pfr::for_each_field(p, [&](const auto& field, std::size_t i) {
    if (field_names[i] != name) return;
    found = detail::to_param_value(field);
    have = true;
  });
  if (!have) {
    throw invalid_argument("unknown parameter '" + std::string(name) +
                           "'; expected one of: " + detail::known_names<P>());
  }
  return found;
}

/// Sets the field called `name` from `value`, converting between number types where no
/// information is lost (an integral double into an int field, an int into a double field).
template <class P>
void set(P& p, std::string_view name, const ParamValue& value) {
  const auto& field_names = names<P>();
  bool found = false;
  boost::pfr::for_each_field(p, [&](auto& field, std::size_t i) {
    if (field_names[i] != name) return;
    field = detail::convert_param<std::remove_cvref_t<decltype(field)>>(name, value);
    found = true;
  });
  if (!found) {
    throw invalid_argument("unknown parameter '" + std::string(name) +
                           "'; expected one of: " + detail::known_names<P>());
  }
}

/// Every field as (name, value), in declaration order: a row of a search's results table.
template <class P>
std::vector<std::pair<std::string, ParamValue>> to_list(const P& p) {
  const auto& field_names = names<P>();
  std::vector<std::pair<std::string, ParamValue>> out;
  boost::pfr::for_each_field(p, [&](const auto& field, std::size_t i) {
    out.emplace_back(std::string(field_names[i]), detail::to_param_value(field));
  });
  return out;
}

}  // namespace params

/// Mixin giving an estimator `get_params()`, `set_params(...)` and `get_param(name)` over its
/// Params struct, returning the derived estimator so calls chain like scikit-learn's.
/// Derived is the estimator (CRTP), so set_params(...).fit(X) keeps the estimator's type.
template <class Derived, class P>
class WithParams {
  static_assert(params::check_params<P>());

 public:
  using params_type = P;

  [[nodiscard]] const P& get_params() const noexcept { return params_; }
  [[nodiscard]] ParamValue get_param(std::string_view name) const {
    return params::get(params_, name);
  }

  Derived& set_params(const P& p) {
    params_ = p;
    return static_cast<Derived&>(*this);
  }

  /// set_params({{"alpha", 0.5}, {"fit_intercept", false}}): all or nothing, so a bad name
  /// leaves the parameters as they were.
  Derived& set_params(std::initializer_list<std::pair<std::string_view, ParamValue>> values) {
    P updated = params_;
    for (const auto& [name, value] : values) params::set(updated, name, value);
    params_ = updated;
    return static_cast<Derived&>(*this);
  }

 protected:
  WithParams() = default;
  explicit WithParams(const P& p) : params_(p) {}

  P params_{};
};

}  // namespace onelearn
