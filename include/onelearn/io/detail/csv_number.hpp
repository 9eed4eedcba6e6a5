#pragma once
// Private: a CSV cell read as a number of a given type, or recognised as a missing value.
//
// The fast path is one std::from_chars on the cell's bytes in place (libstdc++ 12 and later
// implement it with the Eisel-Lemire algorithm, exact and allocation-free); only a cell it does
// not take whole (a leading '+', a missing-value marker, text, a quoted field, an integer
// written as "2.0", a float overflow) goes down the slow path, so text columns cost nothing on
// numeric data.

#include <charconv>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "onelearn/io/detail/csv_tokenizer.hpp"
#include "onelearn/io/detail/exact_conversion.hpp"

namespace onelearn::io::detail {

enum class ParsedNumber {
  ok,            ///< `value` holds the number
  missing,       ///< a missing-value marker: `value` is NaN for a floating type
  not_a_number,  ///< not a number of the type asked for (text, or not an integer)
  beyond_float,  ///< a finite number that a float cannot hold: it would become inf
};

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Parses all of `text` as a number of type V. An integer type also takes integral values
/// written as floats ("2.0", "1e3"), because numpy.savetxt and spreadsheets write labels so.
/// A float takes every decimal number from_chars reads as a double: rounded, tiny ones to a
/// subnormal or 0; those beyond its range are beyond_float, or +-inf with `allow_lossy`.
template <class V>
ParsedNumber parse_number(std::string_view text, V& value, bool allow_lossy = false) {
  // from_chars rejects a leading '+', which other writers produce.
  if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc{} && ptr == end) return ParsedNumber::ok;
  if constexpr (std::is_integral_v<V>) {
    double as_double = 0;
    if (parse_number(text, as_double) != ParsedNumber::ok || !converts_exactly<V>(as_double)) {
      return ParsedNumber::not_a_number;
    }
    value = static_cast<V>(as_double);
    return ParsedNumber::ok;
  } else if constexpr (std::is_same_v<V, float>) {
    // from_chars reports both overflow and underflow of a float as out of range. Read as a
    // double, the number tells which: an underflow is rounding like any other and loads.
    double as_double = 0;
    if (ec != std::errc::result_out_of_range || ptr != end ||
        parse_number(text, as_double) != ParsedNumber::ok) {
      return ParsedNumber::not_a_number;
    }
    if (!overflows_to_infinity<float>(as_double)) {
      value = static_cast<float>(as_double);
      return ParsedNumber::ok;
    }
    if (!allow_lossy) return ParsedNumber::beyond_float;
    constexpr float inf = std::numeric_limits<float>::infinity();
    value = as_double < 0 ? -inf : inf;
    return ParsedNumber::ok;
  }
  return ParsedNumber::not_a_number;
}

/// What a reader needs to turn a cell into a number.
struct NumberSyntax {
  const std::vector<std::string>* na_values = nullptr;  ///< cells that mean "missing"
  bool allow_lossy = false;                             ///< see CsvOptions::allow_lossy

  [[nodiscard]] bool is_missing(std::string_view text) const {
    if (na_values == nullptr) return false;
    for (const std::string& marker : *na_values) {
      if (text == marker) return true;
    }
    return false;
  }
};

/// The text of a cell as a number reads it: a quoted field's content without blanks around it
/// (old writers quote every field, some with padding).
inline std::string_view number_text(const CsvField& field) {
  return field.quoted ? trim(field.raw()) : field.raw();
}

/// Reads one cell into `value`. A missing cell sets a floating `value` to NaN.
template <class V>
ParsedNumber parse_cell(const CsvField& field, V& value, const NumberSyntax& syntax) {
  if (!field.quoted) {
    const auto [ptr, ec] = std::from_chars(field.begin, field.end, value);
    if (ec == std::errc{} && ptr == field.end) return ParsedNumber::ok;
  }
  const std::string_view text = number_text(field);
  const ParsedNumber parsed =
      field.escaped ? ParsedNumber::not_a_number : parse_number(text, value, syntax.allow_lossy);
  if (parsed == ParsedNumber::ok || parsed == ParsedNumber::beyond_float) return parsed;
  const std::string unescaped = field.escaped ? unescape(field) : std::string();
  if (!syntax.is_missing(field.escaped ? std::string_view(unescaped) : text)) return parsed;
  if constexpr (std::is_floating_point_v<V>) value = std::numeric_limits<V>::quiet_NaN();
  return ParsedNumber::missing;
}

}  // namespace onelearn::io::detail
