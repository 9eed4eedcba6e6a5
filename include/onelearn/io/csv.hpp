#pragma once
/**
 * \file
 * \brief load_csv: delimited text (CSV, RFC 4180) of numbers into a Dataset.
 * \ingroup io
 *
 * \code
 * #include <onelearn/io/csv.hpp>
 *
 * auto data = onelearn::io::load_csv<double, std::int64_t>(
 *     "iris.csv", {.label_column = std::string("species")});
 * const onelearn::Matrix<double>& X = data.features();       // every other column
 * const onelearn::Vector<std::int64_t>& y = data.targets();  // the "species" column
 * \endcode
 *
 * Delimited text (CSV, RFC 4180) of numbers into a Dataset (core/dataset.hpp): features from
 * every column except the label column, targets from the label column if one is given, the
 * header's names as the feature names. For text columns (string labels, categories) read the
 * file with read_table (io/table.hpp) instead.
 *
 * The format: fields may be quoted ("1.5"), and a quoted field may hold the delimiter, line
 * ends and "" for a quote (RFC 4180); spaces and tabs around a field are ignored. Lines may end
 * in "\n", "\r\n" or "\r" (old Mac files), mixed freely; blank lines and a UTF-8 byte order
 * mark are skipped. A missing value (an empty cell, `NA`, `NaN` and the other markers of
 * CsvOptions::na_values, see io/na_values.hpp) loads as NaN, ready for SimpleImputer. An
 * integer column (std::int64_t labels) has no NaN, so a missing value there is an error; it
 * takes integral values written as floats ("2.0", "1e3"), as numpy.savetxt and spreadsheets
 * write labels. A float column takes any number a double can read, rounded to float (tiny ones
 * to 0), but a finite number beyond float's range, which would become inf, is an error unless
 * CsvOptions::allow_lossy is set; "nan" and "inf" are read as they are.
 *
 * Speed: the file is mapped into memory and parsed in place, with std::from_chars on each cell
 * and no allocation per cell; with OpenMP (link onelearn::openmp, or -fopenmp) a file of more
 * than 16 MiB holding no double quote is parsed in chunks on all threads. bench/csv_load.sh
 * compares it with pandas.read_csv.
 *
 * Errors: every failure is an onelearn::io_error whose message starts with the file's path
 * and, for a bad field, the line and column ("iris.csv:7, column 2 ('sepal width'): expected a
 * number, found 'abc'"), then says what was expected and what was found: a missing file, a row
 * with another number of fields than the first, a quoted field never closed (at the line where
 * it starts) or followed by text after its closing quote, an unknown or out-of-range label
 * column, a number beyond float's range, a missing value in an integer column, no data rows.
 * The line of a record or a field is the line where it starts, when quoted line ends make it
 * span several. Text taken from the file (a field, a column name) is shown with non-printable
 * bytes as `\xHH`, so that a NUL byte does not cut the message short.
 */

#include <Eigen/Core>
#include <algorithm>
#include <charconv>
#include <cstddef>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "onelearn/core/dataset.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/io/detail/csv_chunks.hpp"
#include "onelearn/io/detail/csv_layout.hpp"
#include "onelearn/io/detail/csv_number.hpp"
#include "onelearn/io/detail/csv_tokenizer.hpp"
#include "onelearn/io/detail/exact_conversion.hpp"
#include "onelearn/io/detail/file_bytes.hpp"
#include "onelearn/io/na_values.hpp"

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
  /// Cells read as a missing value (NaN); see io/na_values.hpp. Empty: every cell is a number.
  std::vector<std::string> na_values = default_na_values();
};

/// Loads a delimited text file of numbers: features from every column except the label column,
/// targets (of type Y; use std::int64_t for class labels) from the label column if one is
/// given. See the top of this header for the format and the errors.
template <class T, class Y = T>
[[nodiscard]] Dataset<T, Y> load_csv(const std::filesystem::path& path,
                                     const CsvOptions& options = {});

namespace detail {

/// What every chunk of a load_csv shares.
struct CsvNumericSetup {
  index_t n_fields = 0;
  index_t label = -1;  ///< -1: no label column
  const std::vector<std::string>* names = nullptr;
  NumberSyntax syntax;
};

/// The message of a cell that is not a value of type V (the error's line is the cell's).
template <class V>
CsvError bad_cell(const CsvTokenizer& records, const CsvField& field, index_t column,
                  ParsedNumber parsed, const std::vector<std::string>& names) {
  const std::string text = field.escaped ? unescape(field) : std::string(number_text(field));
  std::string message = column_label(column, names);
  const std::string found = ", found '" + escape_bytes(text) + "'";
  if (parsed == ParsedNumber::beyond_float) {
    message += ": expected a number that a float can hold (magnitude at most " +
               value_text(std::numeric_limits<float>::max()) + ")" + found +
               ", which would become inf; set CsvOptions::allow_lossy to accept inf";
  } else {
    message +=
        std::string(": expected ") + (std::is_integral_v<V> ? "an integer" : "a number") + found;
    if (parsed == ParsedNumber::missing) {
      message += ", a missing value, which an integer column cannot hold";
    }
  }
  return {records.line_of(field), message};
}

/// One chunk's rows, row-major: the features and the targets, each parsed in place.
template <class T, class Y>
struct CsvNumericChunk {
  explicit CsvNumericChunk(const CsvNumericSetup* shared) : setup(shared) {}

  const CsvNumericSetup* setup;
  std::vector<T> features;
  std::vector<Y> targets;
  index_t rows = 0;

  void parse(CsvTokenizer& records) {
    const auto bytes = static_cast<std::size_t>(records.text_end() - records.position());
    const bool fast = records.delimiter_ends_numbers();
    while (true) {
      const char* const start = records.position();
      if (!fast || !read_plain_row(records)) {
        if (!records.next()) break;
        read_row(records);
      }
      if (rows == 1) reserve(bytes, static_cast<std::size_t>(records.position() - start));
    }
  }

  /// Reads the row at the tokenizer's position if it is plain: every field a number that
  /// from_chars reads to the byte before the delimiter or the line end (the layout of every
  /// large numeric file). False, with nothing read, for anything else; read_row then reads it
  /// field by field, with the same numbers (the same from_chars) or the right error.
  bool read_plain_row(CsvTokenizer& records) {
    const char* p = records.position();
    const char* const end = records.text_end();
    const char delimiter = records.delimiter();
    const std::size_t features_before = features.size();
    const std::size_t targets_before = targets.size();
    for (index_t j = 0; j < setup->n_fields; ++j) {
      bool parsed = false;
      if (j == setup->label) {
        parsed = read_plain(p, end, targets);
      } else {
        parsed = read_plain(p, end, features);
      }
      const bool last = j + 1 == setup->n_fields;
      if (!parsed ||
          (last ? (p != end && *p != '\n' && *p != '\r') : (p == end || *p != delimiter))) {
        features.resize(features_before);
        targets.resize(targets_before);
        return false;
      }
      if (!last) ++p;
    }
    records.skip_plain_record(p);
    ++rows;
    return true;
  }

  /// The general path: a record from the tokenizer, any quoting, missing values, errors.
  void read_row(const CsvTokenizer& records) {
    const std::span<const CsvField> fields = records.fields();
    const index_t n = setup->n_fields;
    if (static_cast<index_t>(fields.size()) != n) throw wrong_field_count(records, n);
    for (index_t j = 0; j < n; ++j) {
      const CsvField& field = fields[static_cast<std::size_t>(j)];
      if (j == setup->label) {
        targets.push_back(read<Y>(records, field, j));
      } else {
        features.push_back(read<T>(records, field, j));
      }
    }
    ++rows;
  }

  template <class V>
  static bool read_plain(const char*& p, const char* end, std::vector<V>& out) {
    V value{};
    const auto [stop, ec] = std::from_chars(p, end, value);
    if (ec != std::errc{}) return false;
    out.push_back(value);
    p = stop;
    return true;
  }

  /// Room for the rows of `bytes` of text when a row takes `row_bytes`, so that the vectors
  /// grow once rather than by doubling (each doubling copies and faults in fresh pages).
  void reserve(std::size_t bytes, std::size_t row_bytes) {
    const std::size_t expected = bytes / std::max<std::size_t>(row_bytes, 1) * 21 / 20 + 16;
    const auto width = static_cast<std::size_t>(setup->n_fields - (setup->label >= 0 ? 1 : 0));
    features.reserve(expected * width);
    if (setup->label >= 0) targets.reserve(expected);
  }

  template <class V>
  V read(const CsvTokenizer& records, const CsvField& field, index_t column) const {
    V value{};
    const ParsedNumber parsed = parse_cell(field, value, setup->syntax);
    if (parsed == ParsedNumber::ok) return value;
    if (parsed == ParsedNumber::missing && std::is_floating_point_v<V>) return value;
    throw bad_cell<V>(records, field, column, parsed, *setup->names);
  }
};

/// The chunks' rows copied, in file order, into one row-major buffer of `width` columns.
template <class V, class Chunk>
void gather_rows(std::vector<Chunk>& chunks, std::vector<V> Chunk::*part, index_t width, V* out) {
  std::vector<index_t> first_row(chunks.size() + 1, 0);
  for (std::size_t c = 0; c < chunks.size(); ++c) first_row[c + 1] = first_row[c] + chunks[c].rows;
  onelearn::detail::for_each_chunk(
      static_cast<index_t>(chunks.size()), 1, [&](index_t chunk, index_t, index_t) {
        const auto c = static_cast<std::size_t>(chunk);
        std::vector<V>& values = chunks[c].*part;
        std::copy(values.begin(), values.end(), out + first_row[c] * width);
        std::vector<V>().swap(values);  // give the memory back as soon as it is copied
      });
}

}  // namespace detail

template <class T, class Y>
Dataset<T, Y> load_csv(const std::filesystem::path& path, const CsvOptions& options) {
  static_assert(std::is_arithmetic_v<T> && std::is_arithmetic_v<Y> && !std::is_same_v<T, bool> &&
                    !std::is_same_v<Y, bool>,
                "load_csv<T, Y>: T and Y must be numeric types");
  const detail::FileBytes file(path);
  const std::string& where = file.where();
  detail::check_delimiter(options.delimiter, where, "CsvOptions");
  const detail::CsvLayout layout =
      detail::csv_layout(file.text(), options.delimiter, options.header, where);
  index_t label = -1;
  if (const auto* index = std::get_if<index_t>(&options.label_column)) {
    label = detail::resolve_column(*index, layout, "label column", "CsvOptions", where);
  } else if (const auto* name = std::get_if<std::string>(&options.label_column)) {
    label = detail::resolve_column(*name, layout, "label column", "CsvOptions", where);
  }

  const detail::CsvNumericSetup setup{
      layout.n_fields, label, &layout.names, {&options.na_values, options.allow_lossy}};
  auto chunks = detail::parse_in_chunks(layout.data, layout.first_line, options.delimiter, where,
                                        [&] { return detail::CsvNumericChunk<T, Y>(&setup); });
  index_t rows = 0;
  for (const auto& chunk : chunks) rows += chunk.rows;
  if (rows == 0) throw io_error(where + ": no data rows");

  const index_t n_features = layout.n_fields - (label >= 0 ? 1 : 0);
  using Chunk = detail::CsvNumericChunk<T, Y>;
  Matrix<T> X(rows, n_features);
  detail::gather_rows(chunks, &Chunk::features, n_features, X.data());
  Vector<Y> y(label >= 0 ? rows : 0);
  if (label >= 0) detail::gather_rows(chunks, &Chunk::targets, 1, y.data());
  Dataset<T, Y> out =
      label >= 0 ? Dataset<T, Y>(std::move(X), std::move(y)) : Dataset<T, Y>(std::move(X));
  if (options.header) {
    std::vector<std::string> feature_names = layout.names;
    if (label >= 0) feature_names.erase(feature_names.begin() + label);
    out.set_feature_names(std::move(feature_names));
  }
  return out;
}

}  // namespace onelearn::io
