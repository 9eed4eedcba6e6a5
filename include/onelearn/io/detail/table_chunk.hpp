#pragma once
// Private: one chunk of read_table's records, column by column. A numeric column's cells are
// parsed in place (no string per cell); a text column's cells are copied into strings. A column
// whose type is inferred starts numeric and, at its first cell that is neither a number nor a
// missing value, turns to text for the rest of the file: the chunk drops its numbers and notes
// it, and read_table collects that column's text in a second pass (its earlier cells were never
// kept as text, and keeping every cell's text just in case would cost every numeric file).

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/io/detail/csv_layout.hpp"
#include "onelearn/io/detail/csv_number.hpp"
#include "onelearn/io/detail/csv_tokenizer.hpp"

namespace onelearn::io::detail {

/// How a pass reads a column.
enum class CellMode : unsigned char {
  infer,   ///< numbers, until a cell is text
  number,  ///< numbers; a cell that is not one is an error
  text,    ///< text
  skip,    ///< not read in this pass
};

/// What every chunk of one pass shares.
struct TableSetup {
  index_t n_fields = 0;
  std::vector<CellMode> modes;  ///< per column
  const std::vector<std::string>* names = nullptr;
  NumberSyntax syntax;
};

struct TableChunk {
  explicit TableChunk(const TableSetup* shared)
      : setup(shared),
        numbers(shared->modes.size()),
        text(shared->modes.size()),
        turned_text(shared->modes.size(), 0) {}

  const TableSetup* setup;
  std::vector<std::vector<double>> numbers;    ///< per numeric column
  std::vector<std::vector<std::string>> text;  ///< per text column
  std::vector<char> turned_text;               ///< per inferred column: met a text cell
  bool turned_any = false;                     ///< some column of turned_text is set
  index_t rows = 0;

  void parse(CsvTokenizer& records) {
    bool all_numbers = records.delimiter_ends_numbers();
    for (const CellMode mode : setup->modes) {
      all_numbers = all_numbers && (mode == CellMode::infer || mode == CellMode::number);
    }
    const auto bytes = static_cast<std::size_t>(records.text_end() - records.position());
    while (true) {
      const char* const start = records.position();
      if (!all_numbers || !read_plain_row(records)) {  // the fast path, as load_csv's
        if (!records.next()) break;
        read_row(records);
        all_numbers = all_numbers && !turned_any;
      }
      if (rows == 1) reserve(bytes, static_cast<std::size_t>(records.position() - start));
    }
  }

 private:
  /// As load_csv's fast path (io/csv.hpp): a row of numbers read straight from the text, every
  /// field taken whole by from_chars; false, with nothing read, for anything else.
  bool read_plain_row(CsvTokenizer& records) {
    const char* p = records.position();
    const char* const end = records.text_end();
    const auto n = static_cast<std::size_t>(setup->n_fields);
    for (std::size_t j = 0; j < n; ++j) {
      double value = 0;
      const auto [stop, ec] = std::from_chars(p, end, value);
      const bool last = j + 1 == n;
      const bool ends = last ? (stop == end || *stop == '\n' || *stop == '\r')
                             : (stop != end && *stop == records.delimiter());
      if (ec != std::errc{} || !ends) {
        for (std::size_t k = 0; k < j; ++k) numbers[k].pop_back();
        return false;
      }
      numbers[j].push_back(value);
      p = last ? stop : stop + 1;
    }
    records.skip_plain_record(p);
    ++rows;
    return true;
  }

  void read_row(const CsvTokenizer& records) {
    const std::span<const CsvField> fields = records.fields();
    if (static_cast<index_t>(fields.size()) != setup->n_fields) {
      throw wrong_field_count(records, setup->n_fields);
    }
    for (std::size_t j = 0; j < fields.size(); ++j) read(records, fields[j], j);
    ++rows;
  }

  /// Room for the rows of `bytes` of text when a row takes `row_bytes` (see load_csv's).
  void reserve(std::size_t bytes, std::size_t row_bytes) {
    const std::size_t expected = bytes / std::max<std::size_t>(row_bytes, 1) * 21 / 20 + 16;
    for (std::size_t j = 0; j < numbers.size(); ++j) {
      if (setup->modes[j] == CellMode::infer || setup->modes[j] == CellMode::number) {
        numbers[j].reserve(expected);
      } else if (setup->modes[j] == CellMode::text) {
        text[j].reserve(expected);
      }
    }
  }

  void read(const CsvTokenizer& records, const CsvField& field, std::size_t j) {
    const CellMode mode = setup->modes[j];
    if (mode == CellMode::skip || turned_text[j] != 0) return;
    if (mode == CellMode::text) {
      text[j].push_back(unescape(field));
      return;
    }
    double value = 0;
    const ParsedNumber parsed = parse_cell(field, value, setup->syntax);
    if (parsed == ParsedNumber::ok || parsed == ParsedNumber::missing) {
      numbers[j].push_back(value);
    } else if (mode == CellMode::infer) {
      turned_text[j] = 1;
      turned_any = true;
      std::vector<double>().swap(numbers[j]);
    } else {
      const std::string found = field.escaped ? unescape(field) : std::string(number_text(field));
      throw CsvError(records.line_of(field),
                     column_label(static_cast<index_t>(j), *setup->names) +
                         ": expected a number (the column is declared numeric), found '" +
                         escape_bytes(found) + "'");
    }
  }
};

}  // namespace onelearn::io::detail
