#pragma once
// Private: what the CSV readers settle before the data is parsed: the header's column names,
// the number of fields every record must have, where the data records start, and columns
// named by index or by name in the options resolved against the header, with the messages
// for a column that is not there.

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/io/detail/csv_tokenizer.hpp"
#include "onelearn/io/detail/escape_bytes.hpp"

namespace onelearn::io::detail {

struct CsvLayout {
  std::vector<std::string> names;  ///< the header's names; empty without a header
  index_t n_fields = 0;            ///< fields per record: the header's, or the first record's
  std::string_view data;           ///< the text from the first data record on
  std::size_t first_line = 1;      ///< the line on which `data` starts
};

/// Checks the delimiter (`options` names the options struct in the message).
inline void check_delimiter(char delimiter, const std::string& where, std::string_view options) {
  if (delimiter == '"' || delimiter == '\n' || delimiter == '\r') {
    throw io_error(where + ": " + std::string(options) + "::delimiter cannot be '" +
                   escape_bytes(std::string_view(&delimiter, 1)) +
                   "': it is part of the CSV syntax (quote or line end)");
  }
}

/// Reads the header (if `header`) and finds the first data record; "no data rows" if none.
inline CsvLayout csv_layout(std::string_view text, char delimiter, bool header,
                            const std::string& where) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 byte order mark
  CsvTokenizer records(text, delimiter);
  CsvLayout layout;
  try {
    if (header && records.next()) {
      for (const CsvField& field : records.fields()) layout.names.push_back(unescape(field));
    }
    if (!records.next()) throw io_error(where + ": no data rows");
  } catch (const CsvError& e) {  // an unterminated quote in the header or the first record
    throw io_error(where + ":" + std::to_string(e.line) + e.message);
  }
  layout.n_fields = static_cast<index_t>(header ? layout.names.size() : records.fields().size());
  layout.data = text.substr(records.record_offset());
  layout.first_line = records.line();
  return layout;
}

/// "'a', 'b'": the names of a header, escaped (they are bytes from the file).
inline std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    out += (out.empty() ? "'" : ", '") + escape_bytes(name) + "'";
  }
  return out;
}

/// The 0-based index of a column given by index (negative counts from the end, -1 is the last)
/// or by header name. `what` names it in messages ("label column"), `options` names the
/// options struct ("CsvOptions").
inline index_t resolve_column(const std::variant<index_t, std::string>& column,
                              const CsvLayout& layout, std::string_view what,
                              std::string_view options, const std::string& where) {
  if (const auto* index = std::get_if<index_t>(&column)) {
    const index_t resolved = *index < 0 ? *index + layout.n_fields : *index;
    if (resolved < 0 || resolved >= layout.n_fields) {
      throw io_error(where + ": " + std::string(what) + " index " + std::to_string(*index) +
                     " is out of range for " + std::to_string(layout.n_fields) + " columns");
    }
    return resolved;
  }
  const std::string& name = std::get<std::string>(column);
  if (layout.names.empty()) {
    throw io_error(where + ": " + std::string(what) + " '" + escape_bytes(name) +
                   "' is given by name, but " + std::string(options) + "::header is false");
  }
  const auto it = std::find(layout.names.begin(), layout.names.end(), name);
  if (it == layout.names.end()) {
    throw io_error(where + ": no column named '" + escape_bytes(name) + "'; the header has " +
                   quoted_list(layout.names));
  }
  return static_cast<index_t>(it - layout.names.begin());
}

/// ", column 2 ('b')": which cell, for the message of a bad one (after "path:line").
inline std::string column_label(index_t column, const std::vector<std::string>& names) {
  std::string out = ", column " + std::to_string(column + 1);
  if (!names.empty()) out += " ('" + escape_bytes(names[static_cast<std::size_t>(column)]) + "')";
  return out;
}

/// The message of a record with another number of fields than the first, naming the lines a
/// record spans when a quoted field holds line ends (the error's line is where it starts).
inline CsvError wrong_field_count(const CsvTokenizer& records, index_t expected) {
  std::string message = ": expected " + std::to_string(expected) + " fields, found " +
                        std::to_string(records.fields().size());
  if (records.last_line() != records.line()) {
    message += " in the record that starts on this line and ends on line " +
               std::to_string(records.last_line());
  }
  return {records.line(), message};
}

}  // namespace onelearn::io::detail
