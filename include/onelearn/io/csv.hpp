#pragma once
/**
 * \code
 * #include <onelearn/io/csv.hpp>
 *
 * auto data = onelearn::io::load_csv<double, std::int64_t>(
 *     "iris.csv", {.label_column = std::string("species")});
 * const onelearn::Matrix<double>& X = data.features();       // every other column
 * const onelearn::Vector<std::int64_t>& y = data.targets();  // the "species" column
 * \endcode
 *
 * Delimited text (CSV) into a Dataset (core/dataset.hpp): features from every column except the
 * label column, targets from the label column if one is given, the header's names as the
 * feature names. Fields are numbers, optionally surrounded by spaces or double quotes (quoted
 * fields cannot contain the delimiter); an integer column also takes integral values written
 * as floats ("2.0", "1e3"), as numpy.savetxt and spreadsheets write labels. Lines may end in
 * "\n", "\r\n" or "\r" (old Mac files), mixed freely; blank lines and a UTF-8 byte order mark
 * are skipped. A float column takes any number a double can read, rounded to float (tiny ones
 * to 0), but a finite number beyond float's range, which would become inf, is an error unless
 * CsvOptions::allow_lossy is set; "nan" and "inf" are read as they are.
 *
 * Errors: every failure is an onelearn::io_error whose message starts with the file's path
 * and, for a bad field, the line and column ("iris.csv:7, column 2 ('sepal width'): expected a
 * number, found 'abc'"), then says what was expected and what was found: a missing file, a row
 * with another number of fields than the first, an unknown or out-of-range label column, a
 * number beyond float's range, no data rows. Text taken from the file (a field, a column
 * name) is shown with non-printable bytes as \xHH, so that a NUL byte does not cut the message
 * short.
 */

#include <Eigen/Core>
#include <algorithm>
#include <charconv>
#include <cstddef>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "onelearn/core/dataset.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/io/byte_reader.hpp"
#include "onelearn/io/detail/escape_bytes.hpp"
#include "onelearn/io/detail/exact_conversion.hpp"

namespace onelearn::io {

struct CsvOptions {
  char delimiter = ',';
  /// The first non-blank line holds column names (they become Dataset::feature_names()).
  bool header = true;
  /// The column holding the targets: none (monostate), an index (negative counts from the
  /// end, -1 is the last column) or a header name.
  std::variant<std::monostate, index_t, std::string> label_column{};
  /// Lets a finite number beyond float's range (magnitude above 3.4028235e+38) load into a float
  /// column as +-inf. Off by default: such a value is an io_error, because an inf in the
  /// features poisons every computation downstream without a word. Numbers that merely round
  /// load either way; integer columns stay exact either way.
  bool allow_lossy = false;
};

/// Loads a delimited text file: features from every column except the label column, targets
/// (of type Y; use std::int64_t for class labels) from the label column if one is given.
/// Fields are numbers, optionally surrounded by spaces or double quotes (quoted fields cannot
/// contain the delimiter). Lines may end in "\n", "\r\n" or "\r"; blank lines are skipped.
template <class T, class Y = T>
[[nodiscard]] Dataset<T, Y> load_csv(const std::filesystem::path& path,
                                     const CsvOptions& options = {});

namespace detail {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// A field without surrounding spaces and double quotes.
inline std::string_view field_text(std::string_view field) {
  field = trim(field);
  if (field.size() >= 2 && field.front() == '"' && field.back() == '"') {
    field = trim(field.substr(1, field.size() - 2));
  }
  return field;
}

enum class ParsedNumber {
  ok,            ///< `value` holds the number
  not_a_number,  ///< not a number of the type asked for (text, or not an integer)
  beyond_float,  ///< a finite number that a float cannot hold: it would become inf
};

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

/// The non-blank lines of a text, split into fields.
class CsvLines {
 public:
  CsvLines(std::string_view text, char delimiter) : text_(text), delimiter_(delimiter) {
    if (text_.starts_with("\xEF\xBB\xBF")) text_.remove_prefix(3);  // UTF-8 byte order mark
  }

  /// Advances to the next non-blank line; false at the end of the text. A line ends at "\n",
  /// "\r\n" or a lone "\r" (classic Mac OS files), so that every such file has the same lines.
  bool next() {
    while (pos_ < text_.size()) {
      const std::size_t eol = std::min(text_.find_first_of("\r\n", pos_), text_.size());
      const std::string_view line = text_.substr(pos_, eol - pos_);
      const bool crlf = eol + 1 < text_.size() && text_[eol] == '\r' && text_[eol + 1] == '\n';
      pos_ = eol + (crlf ? 2 : 1);
      ++number_;
      if (trim(line).empty()) continue;
      split(line);
      return true;
    }
    return false;
  }

  /// 1-based line number of the current line.
  [[nodiscard]] std::size_t number() const noexcept { return number_; }
  [[nodiscard]] const std::vector<std::string_view>& fields() const noexcept { return fields_; }

 private:
  void split(std::string_view line) {
    fields_.clear();
    std::size_t start = 0;
    while (true) {
      const std::size_t stop = line.find(delimiter_, start);
      fields_.push_back(line.substr(start, stop == std::string_view::npos ? stop : stop - start));
      if (stop == std::string_view::npos) break;
      start = stop + 1;
    }
  }

  std::string_view text_;
  char delimiter_;
  std::size_t pos_ = 0;
  std::size_t number_ = 0;
  std::vector<std::string_view> fields_;
};

/// "'a', 'b'": the names of a header, escaped (they are bytes from the file).
inline std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    out += (out.empty() ? "'" : ", '") + escape_bytes(name) + "'";
  }
  return out;
}

/// The 0-based index of the label column, or -1 when there is none.
inline index_t resolve_label_column(const CsvOptions& options,
                                    const std::vector<std::string>& names, index_t n_fields,
                                    const std::string& where) {
  if (const auto* index = std::get_if<index_t>(&options.label_column)) {
    const index_t resolved = *index < 0 ? *index + n_fields : *index;
    if (resolved < 0 || resolved >= n_fields) {
      throw io_error(where + ": label column index " + std::to_string(*index) +
                     " is out of range for " + std::to_string(n_fields) + " columns");
    }
    return resolved;
  }
  if (const auto* name = std::get_if<std::string>(&options.label_column)) {
    if (!options.header) {
      throw io_error(where + ": label column '" + escape_bytes(*name) +
                     "' is given by name, but CsvOptions::header is false");
    }
    const auto it = std::find(names.begin(), names.end(), *name);
    if (it == names.end()) {
      throw io_error(where + ": no column named '" + escape_bytes(*name) + "'; the header has " +
                     quoted_list(names));
    }
    return static_cast<index_t>(it - names.begin());
  }
  return -1;
}

/// Collects the parsed values of a CSV, row by row.
template <class T, class Y>
class CsvTable {
 public:
  CsvTable(std::string where, std::vector<std::string> names, index_t n_fields, index_t label,
           bool allow_lossy)
      : where_(std::move(where)), names_(std::move(names)), n_fields_(n_fields), label_(label),
        allow_lossy_(allow_lossy) {}

  void add_row(const CsvLines& line) {
    const std::vector<std::string_view>& fields = line.fields();
    if (static_cast<index_t>(fields.size()) != n_fields_) {
      throw io_error(where_ + ":" + std::to_string(line.number()) + ": expected " +
                     std::to_string(n_fields_) + " fields, found " + std::to_string(fields.size()));
    }
    for (index_t j = 0; j < n_fields_; ++j) {
      const std::string_view text = field_text(fields[static_cast<std::size_t>(j)]);
      if (j == label_) {
        targets_.push_back(parse<Y>(text, line.number(), j));
      } else {
        features_.push_back(parse<T>(text, line.number(), j));
      }
    }
    ++rows_;
  }

  Dataset<T, Y> dataset(bool with_names) {
    if (rows_ == 0) throw io_error(where_ + ": no data rows");
    const index_t n_features = n_fields_ - (label_ >= 0 ? 1 : 0);
    Matrix<T> X = Eigen::Map<const Matrix<T>>(features_.data(), rows_, n_features);
    Dataset<T, Y> out =
        label_ >= 0
            ? Dataset<T, Y>(std::move(X), Eigen::Map<const Vector<Y>>(targets_.data(), rows_))
            : Dataset<T, Y>(std::move(X));
    if (with_names) {
      std::vector<std::string> feature_names = names_;
      if (label_ >= 0) feature_names.erase(feature_names.begin() + label_);
      out.set_feature_names(std::move(feature_names));
    }
    return out;
  }

 private:
  template <class V>
  [[nodiscard]] V parse(std::string_view text, std::size_t line, index_t column) const {
    V value{};
    const ParsedNumber parsed = parse_number(text, value, allow_lossy_);
    if (parsed == ParsedNumber::ok) return value;
    std::string where =
        where_ + ":" + std::to_string(line) + ", column " + std::to_string(column + 1);
    if (!names_.empty()) {
      where += " ('" + escape_bytes(names_[static_cast<std::size_t>(column)]) + "')";
    }
    const std::string found = ", found '" + escape_bytes(text) + "'";
    if (parsed == ParsedNumber::beyond_float) {
      throw io_error(where + ": expected a number that a float can hold (magnitude at most " +
                     value_text(std::numeric_limits<float>::max()) + ")" + found +
                     ", which would become inf; set CsvOptions::allow_lossy to accept inf");
    }
    throw io_error(where + ": expected " + (std::is_integral_v<V> ? "an integer" : "a number") +
                   found);
  }

  std::string where_;
  std::vector<std::string> names_;
  index_t n_fields_;
  index_t label_;
  bool allow_lossy_;
  index_t rows_ = 0;
  std::vector<T> features_;
  std::vector<Y> targets_;
};

}  // namespace detail

template <class T, class Y>
Dataset<T, Y> load_csv(const std::filesystem::path& path, const CsvOptions& options) {
  static_assert(std::is_arithmetic_v<T> && std::is_arithmetic_v<Y> && !std::is_same_v<T, bool> &&
                    !std::is_same_v<Y, bool>,
                "load_csv<T, Y>: T and Y must be numeric types");
  ByteReader in(path);
  const std::string where = in.where();
  const std::string text = in.read_rest();
  detail::CsvLines lines(text, options.delimiter);

  std::vector<std::string> names;
  if (options.header && lines.next()) {
    for (const std::string_view field : lines.fields()) {
      names.emplace_back(detail::field_text(field));
    }
  }
  const bool has_row = lines.next();
  if (!has_row) throw io_error(where + ": no data rows");
  const auto n_fields = static_cast<index_t>(options.header ? names.size() : lines.fields().size());
  const index_t label = detail::resolve_label_column(options, names, n_fields, where);

  detail::CsvTable<T, Y> table(where, names, n_fields, label, options.allow_lossy);
  do {
    table.add_row(lines);
  } while (lines.next());
  return table.dataset(options.header);
}

}  // namespace onelearn::io
