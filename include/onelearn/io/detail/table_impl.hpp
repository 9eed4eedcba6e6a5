#pragma once
// Private: io::Table's members and io::read_table; included at the end of io/table.hpp, which
// declares them.

#include <cmath>
#include <cstddef>
#include <filesystem>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/io/detail/csv_chunks.hpp"
#include "onelearn/io/detail/csv_layout.hpp"
#include "onelearn/io/detail/escape_bytes.hpp"
#include "onelearn/io/detail/exact_conversion.hpp"
#include "onelearn/io/detail/file_bytes.hpp"
#include "onelearn/io/detail/table_chunk.hpp"
#include "onelearn/io/table.hpp"

namespace onelearn::io {

inline Table::Table(std::vector<TableColumn> columns, bool has_names)
    : columns_(std::move(columns)), has_names_(has_names) {
  rows_ = columns_.empty() ? 0 : static_cast<index_t>(columns_.front().size());
  for (std::size_t j = 0; j < columns_.size(); ++j) {
    const TableColumn& c = columns_[j];
    if (c.type == ColumnType::infer) {
      throw invalid_argument(
          "Table: expected each column's type to be number or text, found "
          "infer at " +
          label(static_cast<index_t>(j)));
    }
    if (static_cast<index_t>(c.size()) != rows_) {
      throw shape_error("Table: expected columns of equal length, found " + std::to_string(rows_) +
                        " rows in column 1 and " + std::to_string(c.size()) + " in " +
                        label(static_cast<index_t>(j)));
    }
  }
}

inline std::vector<std::string> Table::names() const {
  std::vector<std::string> out;
  if (!has_names_) return out;
  for (const TableColumn& c : columns_) out.push_back(c.name);
  return out;
}

inline index_t Table::index(const ColumnRef& column) const {
  if (const auto* i = std::get_if<index_t>(&column)) {
    const index_t resolved = *i < 0 ? *i + cols() : *i;
    if (resolved < 0 || resolved >= cols()) {
      throw invalid_argument("Table: column index " + std::to_string(*i) + " is out of range for " +
                             std::to_string(cols()) + " columns");
    }
    return resolved;
  }
  const std::string& name = std::get<std::string>(column);
  if (has_names_) {
    for (std::size_t j = 0; j < columns_.size(); ++j) {
      if (columns_[j].name == name) return static_cast<index_t>(j);
    }
  }
  throw invalid_argument("Table: no column named '" + detail::escape_bytes(name) + "'; " +
                         (has_names_ ? "the columns are " + detail::quoted_list(names())
                                     : std::string("the table has no header")));
}

inline const std::vector<double>& Table::numbers(const ColumnRef& column) const {
  const TableColumn& c = at(column);
  if (c.type != ColumnType::number) {
    throw invalid_argument("Table::numbers: " + label(index(column)) +
                           " holds text; expected a numeric column (encode text with "
                           "LabelEncoder<std::string> first)");
  }
  return c.numbers;
}

inline const std::vector<std::string>& Table::text(const ColumnRef& column) const {
  const TableColumn& c = at(column);
  if (c.type != ColumnType::text) {
    throw invalid_argument("Table::text: " + label(index(column)) +
                           " is numeric; expected a text column (declare it ColumnType::text "
                           "in TableOptions::column_types to read its cells as text)");
  }
  return c.text;
}

inline std::vector<ColumnRef> Table::columns(ColumnType type) const {
  std::vector<ColumnRef> out;
  for (std::size_t j = 0; j < columns_.size(); ++j) {
    if (columns_[j].type == type) out.emplace_back(static_cast<index_t>(j));
  }
  return out;
}

inline std::vector<ColumnRef> Table::all_columns() const {
  std::vector<ColumnRef> out;
  for (index_t j = 0; j < cols(); ++j) out.emplace_back(j);
  return out;
}

inline std::string Table::label(index_t j) const {
  std::string out = "column " + std::to_string(j + 1);
  if (has_names_) {
    out += " ('" + detail::escape_bytes(columns_[static_cast<std::size_t>(j)].name) + "')";
  }
  return out;
}

template <class V>
V Table::convert(double value, index_t column, index_t row, std::string_view where) const {
  const auto fail = [&](const std::string& expected) {
    throw invalid_argument(std::string(where) + ": " + label(column) + ", row " +
                           std::to_string(row) + ": expected " + expected + ", found " +
                           detail::value_text(value));
  };
  if constexpr (std::is_integral_v<V>) {
    if (!detail::converts_exactly<V>(value)) {
      fail(std::isnan(value) ? "an integer (NaN is a missing value)" : "an integer in range");
    }
  } else if (detail::overflows_to_infinity<V>(value)) {
    fail("a number the type can hold (it would become inf)");
  }
  return static_cast<V>(value);
}

template <class T>
Matrix<T> Table::to_matrix(const std::vector<ColumnRef>& columns) const {
  static_assert(std::is_floating_point_v<T>, "Table::to_matrix<T>: T must be float or double");
  std::vector<const double*> sources;
  for (const ColumnRef& ref : columns) {
    const index_t j = index(ref);
    const TableColumn& column = columns_[static_cast<std::size_t>(j)];
    if (column.type != ColumnType::number) {
      throw invalid_argument("Table::to_matrix: " + label(j) +
                             " holds text; expected numeric columns (encode text with "
                             "LabelEncoder<std::string> first)");
    }
    if constexpr (!std::is_same_v<T, double>) {  // checked first: the copy below cannot throw
      for (index_t i = 0; i < rows_; ++i) {
        static_cast<void>(
            convert<T>(column.numbers[static_cast<std::size_t>(i)], j, i, "Table::to_matrix"));
      }
    }
    sources.push_back(column.numbers.data());
  }
  // Row by row, so that the matrix is written in order; in parallel over blocks of rows.
  Matrix<T> out(rows_, static_cast<index_t>(sources.size()));
  const auto width = sources.size();
  onelearn::detail::for_each_chunk(rows_, 4096, [&](index_t, index_t begin, index_t end) {
    for (index_t i = begin; i < end; ++i) {
      T* row = out.data() + i * out.cols();
      for (std::size_t k = 0; k < width; ++k) row[k] = static_cast<T>(sources[k][i]);
    }
  });
  return out;
}

template <class Y>
Vector<Y> Table::to_vector(const ColumnRef& column) const {
  static_assert(std::is_arithmetic_v<Y> && !std::is_same_v<Y, bool>,
                "Table::to_vector<Y>: Y must be a numeric type");
  const std::vector<double>& values = numbers(column);
  const index_t j = index(column);
  Vector<Y> out(rows_);
  for (index_t i = 0; i < rows_; ++i) {
    out(i) = convert<Y>(values[static_cast<std::size_t>(i)], j, i, "Table::to_vector");
  }
  return out;
}

namespace detail {

/// One pass of read_table over the data records, returning its chunks in file order.
inline std::vector<TableChunk> table_pass(const CsvLayout& layout, const TableSetup& setup,
                                          char delimiter, const std::string& where) {
  return parse_in_chunks(layout.data, layout.first_line, delimiter, where,
                         [&] { return TableChunk(&setup); });
}

inline CellMode cell_mode(ColumnType type) {
  switch (type) {
    case ColumnType::number:
      return CellMode::number;
    case ColumnType::text:
      return CellMode::text;
    case ColumnType::infer:
      break;
  }
  return CellMode::infer;
}

}  // namespace detail

inline Table read_table(const std::filesystem::path& path, const TableOptions& options) {
  const detail::FileBytes file(path);
  const std::string& where = file.where();
  detail::check_delimiter(options.delimiter, where, "TableOptions");
  const detail::CsvLayout layout =
      detail::csv_layout(file.text(), options.delimiter, options.header, where);
  const auto n = static_cast<std::size_t>(layout.n_fields);

  detail::TableSetup setup{
      layout.n_fields,
      std::vector<detail::CellMode>(n, detail::cell_mode(options.default_type)),
      &layout.names,
      {&options.na_values, false}};
  for (const auto& [column, type] : options.column_types) {
    const index_t j = detail::resolve_column(column, layout, "column", "TableOptions", where);
    setup.modes[static_cast<std::size_t>(j)] = detail::cell_mode(type);
  }
  std::vector<detail::TableChunk> chunks =
      detail::table_pass(layout, setup, options.delimiter, where);

  // Inferred columns that met text in any chunk: a second pass reads only them, as text.
  detail::TableSetup second = setup;
  bool any_turned = false;
  for (std::size_t j = 0; j < n; ++j) {
    bool turned = false;
    for (const detail::TableChunk& chunk : chunks) turned = turned || chunk.turned_text[j] != 0;
    second.modes[j] = turned ? detail::CellMode::text : detail::CellMode::skip;
    any_turned = any_turned || turned;
  }
  std::vector<detail::TableChunk> text_chunks;
  if (any_turned) text_chunks = detail::table_pass(layout, second, options.delimiter, where);

  std::vector<TableColumn> columns(n);
  for (std::size_t j = 0; j < n; ++j) {
    TableColumn& column = columns[j];
    if (!layout.names.empty()) column.name = layout.names[j];
    const bool is_text = second.modes[j] == detail::CellMode::text;
    column.type = (is_text || setup.modes[j] == detail::CellMode::text) ? ColumnType::text
                                                                        : ColumnType::number;
    std::vector<detail::TableChunk>& parts = is_text ? text_chunks : chunks;
    std::size_t total = 0;
    for (const detail::TableChunk& chunk : parts) {
      total += chunk.numbers[j].size() + chunk.text[j].size();
    }
    column.numbers.reserve(column.type == ColumnType::number ? total : 0);
    column.text.reserve(column.type == ColumnType::text ? total : 0);
    for (detail::TableChunk& chunk : parts) {
      if (column.type == ColumnType::text) {
        column.text.insert(column.text.end(), std::make_move_iterator(chunk.text[j].begin()),
                           std::make_move_iterator(chunk.text[j].end()));
      } else {
        column.numbers.insert(column.numbers.end(), chunk.numbers[j].begin(),
                              chunk.numbers[j].end());
        std::vector<double>().swap(chunk.numbers[j]);  // give the memory back as it is copied
      }
    }
  }
  Table table(std::move(columns), options.header);
  if (table.rows() == 0) throw io_error(where + ": no data rows");
  return table;
}

}  // namespace onelearn::io
