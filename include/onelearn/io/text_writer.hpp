#pragma once
/**
 * \file
 * \brief The one writer of JSON and CSV text (search and tune results).
 * \ingroup io
 *
 * \code
 * #include <onelearn/io/text_writer.hpp>
 *
 * onelearn::io::CsvWriter csv;
 * csv.row({"name", "score"});                          // a header
 * csv.field("ridge, alpha=1").field(0.1).end_row();    // "\"ridge, alpha=1\",0.1\n"
 * onelearn::io::write_file_atomically("scores.csv", csv.text());   // io/atomic_file.hpp
 *
 * std::string json = "{" + onelearn::io::json_string("say \"hi\"") + ": " +
 *                    onelearn::io::json_number(0.1) + "}";   // {"say \"hi\"": 0.1}
 * \endcode
 *
 * The one writer of JSON and CSV text in onelearn (the cv_results of the searches, tune's result
 * tables): the pieces that must be exactly right, not a document model.
 *
 * - number_text: the shortest text that reads back as the same double (std::to_chars), and
 *   "nan", "inf", "-inf" for the values that have no JSON number.
 * - json_string: a JSON string literal: quotes and backslashes escaped, `\n` `\r` `\t` by name,
 *   every other byte below 0x20 as `\u00XX`; other bytes (UTF-8) as they are.
 * - json_number: number_text, or null for NaN and the infinities (JSON has no such numbers).
 * - csv_field and CsvWriter: fields quoted as RFC 4180 asks when they hold a comma, a double
 *   quote or a line break (quotes doubled inside), rows ended by "\n".
 *
 * Errors: none; these functions only build strings.
 */

#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>

namespace onelearn::io {

/// The shortest decimal text that reads back as exactly `v`; "nan", "inf" or "-inf".
inline std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  return {buffer, end};
}

/// `s` as a JSON string literal, quotes included.
inline std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\u%04x", static_cast<unsigned>(c));
          out += hex;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

/// `v` as a JSON number; null for NaN and the infinities.
inline std::string json_number(double v) {
  return std::isfinite(v) ? number_text(v) : std::string("null");
}

/// `text` as one CSV field: as it is, or quoted when it holds a comma, a quote or a line break.
inline std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';  // a quote inside a quoted field is doubled
    out += c;
  }
  return out + "\"";
}

/// Builds CSV text row by row: each field quoted as csv_field does, separated by commas.
class CsvWriter {
 public:
  /// Appends a field to the current row.
  CsvWriter& field(std::string_view text) {
    if (!at_row_start_) text_ += ',';
    text_ += csv_field(text);
    at_row_start_ = false;
    return *this;
  }
  CsvWriter& field(const char* text) { return field(std::string_view(text)); }
  CsvWriter& field(const std::string& text) { return field(std::string_view(text)); }
  /// A number as number_text writes it.
  CsvWriter& field(double value) { return field(std::string_view(number_text(value))); }
  CsvWriter& field(std::integral auto value) {
    return field(std::string_view(std::to_string(value)));
  }

  /// Ends the current row.
  CsvWriter& end_row() {
    text_ += '\n';
    at_row_start_ = true;
    return *this;
  }

  /// A whole row of text fields.
  CsvWriter& row(std::initializer_list<std::string_view> fields) {
    for (const std::string_view f : fields) field(f);
    return end_row();
  }

  [[nodiscard]] const std::string& text() const noexcept { return text_; }

 private:
  std::string text_;
  bool at_row_start_ = true;
};

}  // namespace onelearn::io
