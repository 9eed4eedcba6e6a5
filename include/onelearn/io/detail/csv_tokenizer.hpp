#pragma once
// Private: the RFC 4180 tokenizer under every CSV reader in io/ (load_csv, read_table). It cuts
// a text held in memory into records and fields without copying: a field is a pair of pointers
// into the text, so a numeric column never allocates a std::string per cell.
//
// The grammar, RFC 4180 with the leniencies real files need:
// - A record ends at "\n", "\r\n" or a lone "\r" (classic Mac OS), mixed freely. A line holding
//   only spaces and tabs is blank and skipped (it is counted in line numbers all the same).
// - A field that starts with a double quote runs to the matching quote; inside it the delimiter
//   and line ends are text and "" stands for one quote (`escaped` marks such a field, whose text
//   unescape() gives). A quote inside an unquoted field is kept as text, as pandas does, since
//   files with 5'11" in them exist; RFC 4180 would reject it.
// - Spaces and tabs around a field are not part of it (quote the field to keep them); a blank
//   that is the delimiter is never trimmed. After a closing quote only blanks may come before the
//   delimiter or the line end: `"ab"c` is an error rather than a guess.
//
// Lines are counted as the text is read, line ends inside quoted fields included, so a record's
// line is where it starts and line_of() finds the line of any of its fields. Errors are thrown
// as CsvError, which carries the line within this text: a reader that splits a file into chunks
// adds the lines of the chunks before it, then prefixes the path.

#include <array>
#include <cstddef>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/io/detail/escape_bytes.hpp"

namespace onelearn::io::detail {

/// One field of a record: its bytes in the text, without the quotes of a quoted field.
struct CsvField {
  const char* begin = nullptr;
  const char* end = nullptr;
  bool quoted = false;   ///< written between double quotes
  bool escaped = false;  ///< quoted and holding "" pairs, each standing for one quote

  [[nodiscard]] std::string_view raw() const noexcept {
    return {begin, static_cast<std::size_t>(end - begin)};
  }
};

/// The text of a field: its bytes, with each "" of a quoted field made one ".
inline std::string unescape(const CsvField& field) {
  if (!field.escaped) return std::string(field.raw());
  std::string out;
  out.reserve(field.raw().size());
  for (const char* p = field.begin; p < field.end; ++p) {
    out += *p;
    if (*p == '"') ++p;  // the second quote of the pair
  }
  return out;
}

/// A malformed record or field, at `line` of the text the tokenizer was given; `message` is
/// what follows "path:line" in the io_error the reader throws (", column 2: expected ...").
struct CsvError : std::exception {
  CsvError(std::size_t at_line, std::string text) : line(at_line), message(std::move(text)) {}
  [[nodiscard]] const char* what() const noexcept override { return message.c_str(); }

  std::size_t line;
  std::string message;
};

/// Line ends in [begin, end): "\n", "\r\n" and a lone "\r" count one each.
inline std::size_t count_line_ends(const char* begin, const char* end) {
  std::size_t n = 0;
  for (const char* p = begin; p < end; ++p) {
    if (*p == '\n' || (*p == '\r' && (p + 1 == end || p[1] != '\n'))) ++n;
  }
  return n;
}

class CsvTokenizer {
 public:
  /// Reads `text` (which must outlive the tokenizer), its first byte being on line `first_line`.
  CsvTokenizer(std::string_view text, char delimiter, std::size_t first_line = 1)
      : pos_(text.data()),
        end_(text.data() + text.size()),
        begin_(text.data()),
        delimiter_(delimiter),
        first_line_(first_line),
        line_(first_line) {
    for (const char c : {' ', '\t'}) blank_[static_cast<unsigned char>(c)] = c != delimiter;
    for (const char c : {delimiter, '\n', '\r'}) stop_[static_cast<unsigned char>(c)] = true;
  }

  /// Advances to the next record that is not blank; false at the end of the text.
  bool next() {
    fields_.clear();
    while (true) {
      const char* p = pos_;
      while (p < end_ && is_blank(*p)) ++p;
      if (p == end_) {
        pos_ = end_;
        return false;
      }
      if (*p != '\n' && *p != '\r') break;
      pos_ = after_line_end(p);
      ++line_;
    }
    record_line_ = line_;
    record_begin_ = pos_;
    read_record();
    return true;
  }

  [[nodiscard]] std::span<const CsvField> fields() const noexcept { return fields_; }
  /// The line on which the current record starts.
  [[nodiscard]] std::size_t line() const noexcept { return record_line_; }
  /// The line on which the current record ends: later than line() when a quoted field holds
  /// line ends.
  [[nodiscard]] std::size_t last_line() const noexcept { return record_last_line_; }
  /// The line on which `field`, one of fields(), starts.
  [[nodiscard]] std::size_t line_of(const CsvField& field) const noexcept {
    return record_line_ + count_line_ends(record_begin_, field.begin);
  }
  /// Offset in the text of the current record's first byte.
  [[nodiscard]] std::size_t record_offset() const noexcept {
    return static_cast<std::size_t>(record_begin_ - begin_);
  }
  /// Line ends read so far (the lines that follow the first).
  [[nodiscard]] std::size_t line_ends_read() const noexcept { return line_ - first_line_; }

  // A reader's fast path may read a plain record (no quotes, no blanks) itself, straight from
  // the text, and hand over to next() for anything else.
  /// Where the next record (or blank line) starts.
  [[nodiscard]] const char* position() const noexcept { return pos_; }
  [[nodiscard]] const char* text_end() const noexcept { return end_; }
  [[nodiscard]] char delimiter() const noexcept { return delimiter_; }
  /// Whether std::from_chars never reads the delimiter as part of a number (it reads digits,
  /// letters of inf and nan(...), '.', '+', '-', '_', '(' and ')'), so that a fast path may let
  /// from_chars find where a numeric field ends: true for ',', ';', '\t', ' ', '|'.
  [[nodiscard]] bool delimiter_ends_numbers() const noexcept {
    const auto c = static_cast<unsigned char>(delimiter_);
    const bool alphanumeric =
        (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    return !alphanumeric && std::string_view(".+-_()").find(delimiter_) == std::string_view::npos;
  }
  /// Moves past the record at position() that the reader read up to `stop`: its line end, or
  /// the end of the text.
  void skip_plain_record(const char* stop) noexcept {
    if (stop == end_) {
      pos_ = end_;
    } else {
      pos_ = after_line_end(stop);
      ++line_;
    }
  }

 private:
  [[nodiscard]] bool is_blank(char c) const noexcept {
    return blank_[static_cast<unsigned char>(c)];
  }

  /// Past the line end at p ("\r\n" is one).
  [[nodiscard]] const char* after_line_end(const char* p) const noexcept {
    return (*p == '\r' && p + 1 < end_ && p[1] == '\n') ? p + 2 : p + 1;
  }

  void read_record() {
    const char* p = pos_;
    while (true) {
      while (p < end_ && is_blank(*p)) ++p;
      CsvField field;
      if (p < end_ && *p == '"') {
        p = read_quoted(p, field);
      } else {
        field.begin = p;
        while (p < end_ && !stop_[static_cast<unsigned char>(*p)]) ++p;
        field.end = p;
        while (field.end > field.begin && is_blank(field.end[-1])) --field.end;
      }
      fields_.push_back(field);
      if (p == end_) break;
      if (*p != delimiter_) {  // a line end
        record_last_line_ = line_;
        pos_ = after_line_end(p);
        ++line_;
        return;
      }
      ++p;
    }
    record_last_line_ = line_;
    pos_ = end_;
  }

  /// Reads the quoted field whose opening quote is at p; returns where the delimiter or line
  /// end after it is (or the end of the text).
  const char* read_quoted(const char* p, CsvField& field) {
    const std::size_t start_line = line_;
    field.quoted = true;
    field.begin = ++p;
    while (true) {
      if (p == end_) {
        throw CsvError(start_line, ", column " + std::to_string(fields_.size() + 1) +
                                       ": expected a closing double quote for the quoted field "
                                       "that starts on this line, found the end of the file");
      }
      if (*p == '"') {
        if (p + 1 < end_ && p[1] == '"') {
          field.escaped = true;
          p += 2;
          continue;
        }
        break;
      }
      if (*p == '\n' || (*p == '\r' && (p + 1 == end_ || p[1] != '\n'))) ++line_;
      ++p;
    }
    field.end = p++;
    while (p < end_ && is_blank(*p)) ++p;
    if (p < end_ && !stop_[static_cast<unsigned char>(*p)]) {
      throw CsvError(line_, ", column " + std::to_string(fields_.size() + 1) +
                                ": expected the delimiter or a line end after the closing "
                                "quote, found '" +
                                escape_bytes(std::string_view(p, 1)) + "'");
    }
    return p;
  }

  const char* pos_;
  const char* end_;
  const char* begin_;
  char delimiter_;
  std::size_t first_line_;
  std::size_t line_;
  std::size_t record_line_ = 0;
  std::size_t record_last_line_ = 0;
  const char* record_begin_ = nullptr;
  std::array<bool, 256> blank_{};
  std::array<bool, 256> stop_{};
  std::vector<CsvField> fields_;
};

}  // namespace onelearn::io::detail
