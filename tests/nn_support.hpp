#pragma once
// What the nn test files (unit/test_nn*.cpp) share: the central-difference gradient checks'
// step, tolerance and error measure, and the digits scaled as the networks take them. One
// definition here, so that the files also compile as one translation unit (tests/CMakeLists.txt
// builds related test files together).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "onelearn/core/types.hpp"
#include "support.hpp"

namespace onelearn::test {

/// Central differences in double: the step h and the largest relative error accepted.
inline constexpr double fd_step = 1e-6;
inline constexpr double fd_tolerance = 1e-6;

/// ‖a - b‖ / max(‖a‖, ‖b‖): the relative error of a gradient as a whole.
inline double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  const double scale = std::max(std::sqrt(na), std::sqrt(nb));
  return scale == 0 ? 0 : std::sqrt(diff) / scale;
}

/// tests/data/digits with the pixels scaled to [0, 1] (/ 16), as float; loaded once.
struct ScaledDigits {
  Matrix<float> X_train, X_test;
  Labels y_train, y_test;
};

inline const ScaledDigits& scaled_digits() {
  static const ScaledDigits d = [] {
    const auto split = load_split<float, std::int64_t>("digits");
    return ScaledDigits{split.X_train / 16.0f, split.X_test / 16.0f, split.y_train, split.y_test};
  }();
  return d;
}

}  // namespace onelearn::test
