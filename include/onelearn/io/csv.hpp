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
 * "\n" or "\r\n"; blank lines and a UTF-8 byte order mark are skipped.
 *
 * Errors: every failure is an onelearn::io_error whose message starts with the file's path
 * and, for a bad field, the line and column ("iris.csv:7, column 2 ('sepal width'): expected a
 * number, found 'abc'"), then says what was expected and what was found: a missing file, a row
 * with another number of fields than the first, an unknown or out-of-range label column, no
 * data rows.
 */

#include <Eigen/Core>
#include <algorithm>
#include <charconv>
#include <cstddef>
#include <filesystem>
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
#include "onelearn/io/detail/exact_conversion.hpp"

namespace onelearn::io {

struct CsvOptions {
  char delimiter = ',';
  /// The first non-blank line holds column names (they become Dataset::feature_names()).
  bool header = true;
  /// The column holding the targets: none (monostate), an index (negative counts from the
  /// end, -1 is the last column) or a header name.
  std::variant<std::monostate, index_t, std::string> label_column{};
};

/// Loads a delimited text file: features from every column except the label column, targets
/// (of type Y; use std::int64_t for class labels) from the label column if one is given.
/// Fields are numbers, optionally surrounded by spaces or double quotes (quoted fields cannot
/// contain the delimiter). Lines may end in "\n" or "\r\n"; blank lines are skipped.
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

/// Parses all of `text` as a number of type V. An integer type also takes integral values
/// written as floats ("2.0", "1e3"), because numpy.savetxt and spreadsheets write labels so.
template <class V>
bool parse_number(std::string_view text, V& value) {
  // from_chars rejects a leading '+', which other writers produce.
  if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc{} && ptr == end) return true;
  if constexpr (std::is_integral_v<V>) {
    double as_double = 0;
    if (!parse_number(text, as_double) || !converts_exactly<V>(as_double)) return false;
    value = static_cast<V>(as_double);
    return true;
  }
  return false;
}

/// The non-blank lines of a text, split into fields.
class CsvLines {
 public:
  CsvLines(std::string_view text, char delimiter) : text_(text), delimiter_(delimiter) {
    if (text_.starts_with("\xEF\xBB\xBF")) text_.remove_prefix(3);  // UTF-8 byte order mark
  }

  /// Advances to the next non-blank line; false at the end of the text.
  bool next() {
    while (pos_ < text_.size()) {
      const std::size_t newline = std::min(text_.find('\n', pos_), text_.size());
      std::string_view line = text_.substr(pos_, newline - pos_);
      pos_ = newline + 1;
      ++number_;
      if (line.ends_with('\r')) line.remove_suffix(1);
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

inline std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "'" : ", '") + name + "'";
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
      throw io_error(where + ": label column '" + *name +
                     "' is given by name, but CsvOptions::header is false");
    }
    const auto it = std::find(names.begin(), names.end(), *name);
    if (it == names.end()) {
      throw io_error(where + ": no column named '" + *name + "'; the header has " +
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
  CsvTable(std::string where, std::vector<std::string> names, index_t n_fields, index_t label)
      : where_(std::move(where)), names_(std::move(names)), n_fields_(n_fields), label_(label) {}

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
    if (parse_number(text, value)) return value;
    std::string where =
        where_ + ":" + std::to_string(line) + ", column " + std::to_string(column + 1);
    if (!names_.empty()) where += " ('" + names_[static_cast<std::size_t>(column)] + "')";
    throw io_error(where + ": expected " + (std::is_integral_v<V> ? "an integer" : "a number") +
                   ", found '" + std::string(text) + "'");
  }

  std::string where_;
  std::vector<std::string> names_;
  index_t n_fields_;
  index_t label_;
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

  detail::CsvTable<T, Y> table(where, names, n_fields, label);
  do {
    table.add_row(lines);
  } while (lines.next());
  return table.dataset(options.header);
}

}  // namespace onelearn::io
