#pragma once
/**
 * \file
 * \brief rl::Discrete and rl::Box: the action and observation spaces of an environment.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/spaces.hpp>
 * #include <string>
 * onelearn::rl::Discrete actions{2};                          // actions 0 and 1
 * bool ok = actions.contains(1);                              // true
 * onelearn::rl::Box<float> torque = onelearn::rl::Box<float>::uniform(1, -2.0f, 2.0f);
 * onelearn::Vector<float> a(1);
 * a << 3.0f;
 * bool inside = torque.contains(a);                           // false: 3 > 2
 * std::string s = torque.to_string();                         // "Box(1) in [-2, 2]"
 * \endcode
 *
 * rl::Discrete and rl::Box: the action and observation spaces of an environment, as
 * Gymnasium's spaces.Discrete (with start = 0) and spaces.Box.
 *
 * \par Members
 * - Discrete: `n` (the number of actions, 0..n-1), `contains(a)`, `to_string()`.
 * - `Box<T>`: `low`, `high` (vectors of one length; +-infinity for an unbounded coordinate),
 *   `size()`, `contains(x)` (right length, every element finite and in [low, high]),
 *   `to_string()`, and `Box::uniform(n, low, high)` for equal bounds on every coordinate.
 *
 * Errors: none: spaces only answer questions. Environments throw `invalid_action_error`
 * (rl/errors.hpp) with the space's to_string() in the message.
 */

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "onelearn/core/types.hpp"

namespace onelearn::rl {

/// The integers 0..n-1.
struct Discrete {
  std::int64_t n = 0;

  [[nodiscard]] constexpr bool contains(std::int64_t action) const noexcept {
    return action >= 0 && action < n;
  }
  [[nodiscard]] std::string to_string() const { return "Discrete(" + std::to_string(n) + ")"; }
};

/// The vectors x with low(j) <= x(j) <= high(j) for every j.
template <class T>
struct Box {
  Vector<T> low;
  Vector<T> high;

  [[nodiscard]] static Box uniform(index_t size, T lo, T hi) {
    return Box{Vector<T>::Constant(size, lo), Vector<T>::Constant(size, hi)};
  }

  [[nodiscard]] index_t size() const noexcept { return low.size(); }

  /// NaN is never inside, even with infinite bounds (NaN compares false with everything, so the
  /// test is written as "inside", not as "not outside").
  template <class Derived>
  [[nodiscard]] bool contains(const Eigen::MatrixBase<Derived>& x) const {
    if (x.size() != size()) return false;
    for (index_t j = 0; j < size(); ++j) {
      const T v = static_cast<T>(x(j));
      if (!(std::isfinite(v) && v >= low(j) && v <= high(j))) return false;
    }
    return true;
  }

  /// "Box(3) in [-1, 1] x [-1, 1] x [-8, 8]", or "Box(1) in [-2, 2]".
  [[nodiscard]] std::string to_string() const {
    std::ostringstream out;
    out << "Box(" << size() << ") in ";
    for (index_t j = 0; j < size(); ++j) {
      out << (j > 0 ? " x [" : "[") << low(j) << ", " << high(j) << "]";
    }
    return out.str();
  }
};

}  // namespace onelearn::rl
