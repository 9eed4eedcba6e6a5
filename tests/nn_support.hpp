#pragma once
// What the nn test files (unit/test_nn*.cpp, and mpi/ where named) share: the central-difference
// gradient checks' step, tolerance and error measure, the digits scaled as the networks take
// them, and the rows of the checkpoint fixture of the first fingerprint scheme. One
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

/// The 40 rows (3 features, 3 classes) tests/data/checkpoints/fingerprint_v1.olc was trained on:
/// 2 epochs of Input(3) -> Dense(8, relu) -> Dense(3), Adam, batch 8, seed 3, written by onelearn
/// before 2026-11-29, when the training rows' fingerprint had only its first scheme (used by
/// unit/test_nn_training.cpp and mpi/test_agreement_nn.cpp).
struct FingerprintV1Rows {
  Matrix<float> X;
  Labels y;
};
inline FingerprintV1Rows fingerprint_v1_rows() {
  FingerprintV1Rows out{Matrix<float>(40, 3), Labels(40)};
  for (index_t i = 0; i < 40; ++i) {
    for (index_t j = 0; j < 3; ++j) {
      out.X(i, j) = static_cast<float>((i * 7 + j * 3) % 11) / 11.0F - 0.5F;
    }
    out.y(i) = (i * 5) % 3;
  }
  return out;
}

}  // namespace onelearn::test
