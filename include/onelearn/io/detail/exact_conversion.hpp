#pragma once
// Private: whether a number converts to another arithmetic type without changing, or (between
// floating types) without overflowing to inf; shared by the .npy reader (labels stored as
// floats, float64 data loaded as float32) and the CSV reader (labels written as "2.0", numbers
// beyond float's range), with the text of the offending value for their messages.

#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace onelearn::io::detail {

/// The shortest text of `value` that reads back the same, for messages about conversions.
template <class V>
std::string value_text(V value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

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

/// Whether converting the finite `value` to the floating type Target gives an infinity, as a
/// double beyond float's range does. Narrowing that merely rounds (a double near 0.1, or one
/// below float's smallest subnormal, which becomes 0) is not an overflow, nor are NaN and the
/// infinities, which convert to themselves. Always false when Target's range covers Source's.
template <class Target, class Source>
bool overflows_to_infinity(Source value) {
  using Limits = std::numeric_limits<Target>;
  if constexpr (!std::is_floating_point_v<Target> || !std::is_floating_point_v<Source>) {
    return false;
  } else if constexpr (Limits::max_exponent >= std::numeric_limits<Source>::max_exponent) {
    return false;
  } else {
    // Rounding to nearest takes everything from max + half an ulp of max upwards to infinity
    // (the tie goes to the even neighbour, 2^max_exponent, which is infinity). The limit is
    // exact in Source, which has more digits than Target.
    const Source limit = static_cast<Source>(Limits::max()) +
                         std::ldexp(Source{1}, Limits::max_exponent - Limits::digits - 1);
    return std::isfinite(value) && std::abs(value) >= limit;
  }
}

}  // namespace onelearn::io::detail
