#pragma once
// Hyper-parameter checks shared by the regularised linear models. Each throws
// onelearn::invalid_argument naming the parameter, the accepted range and the value found:
//     "Lasso.fit: expected alpha >= 0, found -1"

#include <sstream>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"

namespace onelearn::linear_model::detail {

/// The shortest natural form of a number: "0.1", "-1", "1e-09".
inline std::string format_number(double value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

/// value >= lower; NaN fails.
inline void check_at_least(std::string_view where, std::string_view name, double value,
                           double lower) {
  if (value >= lower) return;
  throw invalid_argument(std::string(where) + ": expected " + std::string(name) +
                         " >= " + format_number(lower) + ", found " + format_number(value));
}

/// lower <= value <= upper; NaN fails.
inline void check_in_closed_interval(std::string_view where, std::string_view name, double value,
                                     double lower, double upper) {
  if (value >= lower && value <= upper) return;
  throw invalid_argument(std::string(where) + ": expected " + std::string(name) + " in [" +
                         format_number(lower) + ", " + format_number(upper) + "], found " +
                         format_number(value));
}

}  // namespace onelearn::linear_model::detail
