#pragma once
// Private: the text part of a .npy file's header, read and written without any file I/O, so
// that io/npy.hpp only deals with bytes and files.
//
// A .npy header is the repr() of a Python dict, e.g.
//   {'descr': '<f8', 'fortran_order': False, 'shape': (331, 10), }
// padded with spaces and ending in '\n'. numpy reads it with ast.literal_eval, so any valid
// Python literal is allowed: keys in any order, either quote character, extra whitespace, an
// optional trailing comma, and (in files written by Python 2) integers with an 'L' suffix. This
// parser accepts that subset of Python literal syntax and nothing more.
//
// The header comes from the file, and a corrupt length field makes it hold array data: every
// piece of it that goes into an error message is passed through escape_bytes, so that a NUL
// byte does not cut the message short.
// Format reference: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/io/detail/escape_bytes.hpp"

namespace onelearn::io::detail {

/// The three keys of a .npy header.
struct NpyHeader {
  std::string descr;                 ///< dtype string such as "<f8"; for a structured dtype,
                                     ///< the raw (non-string) text of the value
  bool descr_is_string = true;       ///< false for structured dtypes (a list of fields)
  bool fortran_order = false;        ///< true: the data is in column-major order
  std::vector<std::uint64_t> shape;  ///< empty for a 0-d (scalar) array
};

/// "(331, 10)", "(331,)" or "()": how Python prints a shape tuple, for messages and headers.
inline std::string shape_repr(const std::vector<std::uint64_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

/// Parses the header dict. `where` (the file's path) prefixes every error message.
class NpyHeaderParser {
 public:
  NpyHeaderParser(std::string_view text, std::string where)
      : text_(text), where_(std::move(where)) {}

  NpyHeader parse() {
    std::map<std::string, std::string_view> entries = parse_dict();
    for (const auto& [key, value] : entries) {
      if (key != "descr" && key != "fortran_order" && key != "shape") {
        fail("unexpected key '" + escape_bytes(key) +
             "' (expected 'descr', 'fortran_order' and 'shape')");
      }
    }
    NpyHeader header;
    interpret_descr(require(entries, "descr"), header);
    header.fortran_order = interpret_bool(require(entries, "fortran_order"), "fortran_order");
    header.shape = interpret_shape(require(entries, "shape"));
    return header;
  }

 private:
  // --- the dict: '{' (key ':' value ',')* [key ':' value] '}' followed by padding ------------

  std::map<std::string, std::string_view> parse_dict() {
    std::map<std::string, std::string_view> entries;
    skip_space();
    expect('{');
    skip_space();
    while (peek() != '}') {
      const std::string key = parse_key();
      skip_space();
      expect(':');
      skip_space();
      const std::string_view value = scan_value();
      if (!entries.emplace(key, value).second) fail("duplicate key '" + escape_bytes(key) + "'");
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != '}') {
        fail_expected("',' or '}'");
      }
    }
    ++pos_;  // the '}'
    skip_space();
    if (pos_ != text_.size()) fail_expected("only padding after '}'");
    return entries;
  }

  std::string parse_key() {
    if (peek() != '\'' && peek() != '"') fail_expected("a quoted key");
    const std::string_view raw = scan_string();
    return std::string(raw.substr(1, raw.size() - 2));
  }

  /// The raw text of one value: a string, or everything up to the next ',' or '}' that is not
  /// inside brackets or quotes (so a structured dtype's list is skipped as a whole).
  std::string_view scan_value() {
    const std::size_t begin = pos_;
    if (peek() == '\'' || peek() == '"') return scan_string();
    int depth = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\'' || c == '"') {
        scan_string();
        continue;
      }
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) break;  // the dict's own '}'
        --depth;
      }
      if (c == ',' && depth == 0) break;
      ++pos_;
    }
    std::string_view value = text_.substr(begin, pos_ - begin);
    while (!value.empty() && is_space(value.back())) value.remove_suffix(1);
    if (value.empty()) fail_expected("a value");
    return value;
  }

  /// A quoted string including its quotes; backslash escapes are skipped over, not decoded
  /// (none of the values this parser interprets contain any).
  std::string_view scan_string() {
    const std::size_t begin = pos_;
    const char quote = text_[pos_++];
    while (pos_ < text_.size() && text_[pos_] != quote) {
      pos_ += (text_[pos_] == '\\') ? std::size_t{2} : std::size_t{1};
    }
    if (pos_ >= text_.size()) {
      pos_ = begin;
      fail("unterminated string");
    }
    ++pos_;  // closing quote
    return text_.substr(begin, pos_ - begin);
  }

  // --- the values ----------------------------------------------------------------------------

  std::string_view require(const std::map<std::string, std::string_view>& entries,
                           const std::string& key) {
    const auto it = entries.find(key);
    if (it == entries.end()) fail("missing key '" + key + "'");
    return it->second;
  }

  static void interpret_descr(std::string_view value, NpyHeader& header) {
    const bool quoted = value.size() >= 2 && (value.front() == '\'' || value.front() == '"');
    header.descr_is_string = quoted;
    header.descr = std::string(quoted ? value.substr(1, value.size() - 2) : value);
  }

  bool interpret_bool(std::string_view value, const std::string& key) {
    if (value == "True") return true;
    if (value == "False") return false;
    fail("expected True or False for '" + key + "', found " + escape_bytes(value));
  }

  /// '(' [int (',' int)* [',']] ')', where each int may carry a Python 2 'L' suffix.
  std::vector<std::uint64_t> interpret_shape(std::string_view value) {
    const auto bad = [&](const std::string& why) {
      fail("expected a tuple of non-negative integers for 'shape', found " + escape_bytes(value) +
           " (" + why + ")");
    };
    if (value.size() < 2 || value.front() != '(' || value.back() != ')') bad("not a tuple");
    std::vector<std::uint64_t> shape;
    std::size_t i = 1;
    const std::size_t end = value.size() - 1;
    bool need_comma = false;  // a 1-tuple needs its trailing comma: "(3)" is just 3 in Python
    while (true) {
      while (i < end && is_space(value[i])) ++i;
      if (i == end) break;
      if (value[i] < '0' || value[i] > '9') bad("not an integer");
      std::uint64_t dim = 0;
      for (; i < end && value[i] >= '0' && value[i] <= '9'; ++i) {
        const auto digit = static_cast<std::uint64_t>(value[i] - '0');
        if (dim > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) bad("too large");
        dim = dim * 10 + digit;
      }
      if (i < end && (value[i] == 'L' || value[i] == 'l')) ++i;
      shape.push_back(dim);
      while (i < end && is_space(value[i])) ++i;
      need_comma = true;
      if (i == end) break;
      if (value[i] != ',') bad("expected ','");
      need_comma = false;
      ++i;
    }
    if (shape.size() == 1 && need_comma) bad("a 1-tuple needs a trailing comma");
    return shape;
  }

  // --- scanning helpers ----------------------------------------------------------------------

  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }
  [[nodiscard]] char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void expect(char c) {
    if (peek() != c) fail_expected(std::string("'") + c + "'");
    ++pos_;
  }

  [[noreturn]] void fail_expected(const std::string& what) const {
    const std::string found = pos_ < text_.size() ? "'" + escape_bytes(text_.substr(pos_, 1)) + "'"
                                                  : "the end of the header";
    fail("expected " + what + " at offset " + std::to_string(pos_) + ", found " + found);
  }

  [[noreturn]] void fail(const std::string& why) const {
    constexpr std::size_t max_shown = 200;  // a corrupt length can make the "header" huge
    std::string_view head = text_.substr(0, max_shown);
    while (!head.empty() && is_space(head.back())) head.remove_suffix(1);
    std::string shown = escape_bytes(head);
    if (text_.size() > max_shown) shown += "...";
    throw io_error(where_ + ": malformed npy header: " + why + " in \"" + shown + "\"");
  }

  std::string_view text_;
  std::string where_;
  std::size_t pos_ = 0;
};

/// Parses the header text (everything between the length field and the data).
inline NpyHeader parse_npy_header(std::string_view text, const std::string& where) {
  return NpyHeaderParser(text, where).parse();
}

/// The header text numpy (>= 1.23, format 1.0) writes for a C-order array, byte for byte: the
/// dict with sorted keys, then spare spaces so the first dimension can grow in place (numpy's
/// GROWTH_AXIS_MAX_DIGITS = 21), then spaces and '\n' so that the data starts at a multiple of
/// 64 bytes (numpy's ARRAY_ALIGN; it adds a whole 64 spaces when already aligned).
inline std::string format_npy_header(const std::string& descr,
                                     const std::vector<std::uint64_t>& shape) {
  constexpr std::size_t preamble = 10;  // magic (6) + version (2) + 2-byte length
  constexpr std::size_t align = 64;
  constexpr std::size_t growth_axis_max_digits = 21;
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_repr(shape) + ", }";
  if (!shape.empty()) {
    const std::size_t digits = std::to_string(shape.front()).size();
    if (digits < growth_axis_max_digits) header.append(growth_axis_max_digits - digits, ' ');
  }
  header.append(align - (preamble + header.size() + 1) % align, ' ');
  header += '\n';
  return header;
}

}  // namespace onelearn::io::detail
