#pragma once
// Private: whether a number converts to another arithmetic type without changing, shared by
// the .npy reader (labels stored as floats) and the CSV reader (labels written as "2.0").

#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

namespace onelearn::io::detail {

/// Whether `value` converts to Target without changing: into an integer type, floats must be
/// integral and everything must be in range. Conversions into a floating type always pass.
template <class Target, class Source>
bool converts_exactly(Source value) {
  if constexpr (!std::is_integral_v<Target>) {
    return true;
  } else if constexpr (std::is_integral_v<Source>) {
    return std::in_range<Target>(value);
  } else {
    const auto v = static_cast<double>(value);
    // [-2^digits, 2^digits) is exactly the range of a two's complement integer type.
    const double limit = std::ldexp(1.0, std::numeric_limits<Target>::digits);
    return std::isfinite(v) && std::trunc(v) == v && v >= -limit && v < limit;
  }
}

}  // namespace onelearn::io::detail
