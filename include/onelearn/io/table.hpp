#pragma once
/**
 * \class onelearn::io::Table
 * \brief read_table: a CSV file into named numeric and text columns.
 * \ingroup io
 *
 * \code
 * #include <onelearn/io/table.hpp>
 *
 * // sepal_length,sepal_width,petal_length,petal_width,species
 * // 5.1,3.5,1.4,0.2,setosa
 * const onelearn::io::Table table = onelearn::io::read_table("iris.csv");
 * const auto numeric = table.columns(onelearn::io::ColumnType::number);  // the first four
 * onelearn::Matrix<double> X = table.to_matrix<double>(numeric);
 * onelearn::preprocessing::LabelEncoder<std::string> species;  // preprocessing/label_encoder.hpp
 * onelearn::Labels y = species.fit_transform(table.text("species"));  // 0, 1, 2
 * \endcode
 *
 * io::read_table: a CSV file (RFC 4180, as load_csv reads it: see io/csv.hpp for the format)
 * into an io::Table of named columns, each numeric (double, missing values as NaN) or text
 * (std::string), as pandas.read_csv gives a DataFrame of float64 and object columns. Use it for
 * files with text in them (string labels, categories, identifiers); for a file of numbers
 * load_csv is shorter and goes straight to a Dataset.
 *
 * Column types: by default each column's type is inferred: numeric if every cell is a number
 * or a missing value (a column of missing values only is numeric, all NaN), text otherwise.
 * TableOptions::column_types fixes the type of columns named by header name or index, and
 * default_type that of the others: a column declared numeric makes a cell that is not a number
 * an error with its line and column (rather than turning the column into text), and a column
 * declared text keeps numbers as they are written ("007" stays "007").
 *
 * Text cells: a quoted cell's text is its content with "" made one quote, line ends and
 * delimiters included; spaces around an unquoted cell are not part of it (quote the cell to keep
 * them). A missing-value marker in a text column is kept as its text ("NA" stays "NA", an empty
 * cell is ""), so that a category called "NA" stays one; numeric columns read them as NaN.
 *
 * Cost: one pass over the mapped file, in parallel chunks when OpenMP is on and the file holds
 * no double quote (as load_csv). A column inferred to be text after its first cells were read
 * as numbers takes a second pass that collects that column's text; declaring text columns in
 * column_types avoids it. Text cells cost a std::string each; numeric ones nothing extra.
 *
 * Errors: io_error, with the file's path, line and column where they apply, as load_csv's; a
 * column in column_types that the header does not have (listing the header). Table's accessors
 * throw invalid_argument for an unknown column, a text column asked for numbers or the other
 * way round (naming the column), and at to_matrix<float>/to_vector a value the type cannot
 * hold (a NaN in an integer vector, a number beyond float's range), naming column and row.
 */

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/io/na_values.hpp"

namespace onelearn::io {

/// What a column holds. `infer` is only for TableOptions: a Table's columns are the other two.
enum class ColumnType { infer, number, text };

/// A column named by its 0-based index (negative counts from the end, -1 is the last) or by
/// its name in the header.
using ColumnRef = std::variant<index_t, std::string>;

struct TableOptions {
  char delimiter = ',';
  /// The first non-blank line holds the column names.
  bool header = true;
  /// The type of every column that column_types does not name.
  ColumnType default_type = ColumnType::infer;
  /// Types given per column: {{"species", ColumnType::text}, {0, ColumnType::number}}.
  std::vector<std::pair<ColumnRef, ColumnType>> column_types{};
  /// Cells read as a missing value (NaN) in numeric columns; see io/na_values.hpp.
  std::vector<std::string> na_values = default_na_values();
};

/// One column of a Table: `numbers` for a numeric column, `text` for a text one.
struct TableColumn {
  std::string name;  ///< "" when the file has no header
  ColumnType type = ColumnType::number;
  std::vector<double> numbers;
  std::vector<std::string> text;

  [[nodiscard]] std::size_t size() const noexcept {
    return type == ColumnType::text ? text.size() : numbers.size();
  }
};

/// Named columns of equal length, each numeric or text.
class Table {
 public:
  Table() = default;
  /// Columns of equal length, each `number` or `text`; `has_names`: their names are a header.
  Table(std::vector<TableColumn> columns, bool has_names);

  [[nodiscard]] index_t rows() const noexcept { return rows_; }
  [[nodiscard]] index_t cols() const noexcept { return static_cast<index_t>(columns_.size()); }
  /// The header's names, in column order; empty when the file had no header.
  [[nodiscard]] std::vector<std::string> names() const;

  /// The 0-based index of a column; invalid_argument if there is none such.
  [[nodiscard]] index_t index(const ColumnRef& column) const;
  [[nodiscard]] ColumnType type(const ColumnRef& column) const { return at(column).type; }
  [[nodiscard]] const TableColumn& column(const ColumnRef& column) const { return at(column); }
  /// A numeric column's values (NaN where a value was missing).
  [[nodiscard]] const std::vector<double>& numbers(const ColumnRef& column) const;
  /// A text column's cells.
  [[nodiscard]] const std::vector<std::string>& text(const ColumnRef& column) const;
  /// The indices of the columns of one type, in order: to_matrix(columns(ColumnType::number)).
  [[nodiscard]] std::vector<ColumnRef> columns(ColumnType type) const;

  /// Every column, which must all be numeric, as a rows() x cols() matrix.
  template <class T>
  [[nodiscard]] Matrix<T> to_matrix() const {
    return to_matrix<T>(all_columns());
  }
  /// The numeric columns named, in the order named, as a matrix (T float or double).
  template <class T>
  [[nodiscard]] Matrix<T> to_matrix(const std::vector<ColumnRef>& columns) const;
  /// One numeric column as a vector of Y: float, double or an integer type (class labels),
  /// whose values must then all be integers (no NaN).
  template <class Y>
  [[nodiscard]] Vector<Y> to_vector(const ColumnRef& column) const;

 private:
  [[nodiscard]] const TableColumn& at(const ColumnRef& column) const {
    return columns_[static_cast<std::size_t>(index(column))];
  }
  [[nodiscard]] std::vector<ColumnRef> all_columns() const;
  /// "column 2 ('species')" for messages.
  [[nodiscard]] std::string label(index_t j) const;
  template <class V>
  [[nodiscard]] V convert(double value, index_t column, index_t row, std::string_view where) const;

  std::vector<TableColumn> columns_;
  bool has_names_ = false;
  index_t rows_ = 0;
};

/// Reads a CSV file into a Table; see the top of this header.
[[nodiscard]] inline Table read_table(const std::filesystem::path& path,
                                      const TableOptions& options = {});

}  // namespace onelearn::io

#include "onelearn/io/detail/table_impl.hpp"
