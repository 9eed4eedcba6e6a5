#pragma once
// The input checks of histogram gradient boosting, which differ from base/fit_input.hpp's in
// one point: NaN in X is a missing value, not an error (infinity still is, with its row and
// column), as in scikit-learn's HistGradientBoosting*.

#include <cmath>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::ensemble::detail {

/// Throws invalid_argument naming the first infinite entry of X; NaN passes.
template <class T>
void check_no_infinity(std::string_view where, const MatrixRef<T>& X) {
  // Fast path: x * 0 is NaN only for NaN and +-inf, so a finite sum means neither is there.
  if (!std::isnan((X.array() * T(0)).sum())) return;
  for (index_t r = 0; r < X.rows(); ++r) {
    for (index_t c = 0; c < X.cols(); ++c) {
      if (std::isinf(X(r, c))) {
        throw invalid_argument(std::string(where) + ": expected finite values or NaN (missing) " +
                               "in X, found " + std::to_string(X(r, c)) + " at row " +
                               std::to_string(r) + ", column " + std::to_string(c));
      }
    }
  }
}

}  // namespace onelearn::ensemble::detail
