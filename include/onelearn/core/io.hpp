#pragma once
// Reading and writing data: NumPy's .npy format and delimited text (CSV).
//
//   auto X = onelearn::io::load_npy<onelearn::Matrix<double>>("X_train.npy");
//   auto y = onelearn::io::load_npy<onelearn::Labels>("y_train.npy");
//   onelearn::io::save_npy("X_scaled.npy", X_scaled);
//   auto data = onelearn::io::load_csv<double, std::int64_t>(
//       "iris.csv", {.label_column = std::string("species")});
//
// Every failure is an onelearn::io_error whose message starts with the file's path (and, for a
// CSV, the line and column), then says what was expected and what was found.
//
// .npy: dtypes <f4, <f8, <i4 and <i8 (little-endian float32/float64/int32/int64), C or Fortran
// order, format versions 1.0, 2.0 and 3.0. The data is converted to the scalar type asked for;
// a conversion into an integer type must be exact, so that labels are never silently rounded.
// save_npy writes exactly the bytes numpy.save writes for the same C-order array.

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <ios>
#include <iterator>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "onelearn/core/dataset.hpp"
#include "onelearn/core/detail/npy_header.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"

#if defined(_WIN32)
#include <process.h>  // _getpid, for temporary file names
#else
#include <unistd.h>  // getpid, for temporary file names
#endif

// .npy data is read and written by copying bytes, which is only right on a little-endian host
// (every platform onelearn targets). A big-endian port would byte-swap in read_npy_data and
// write_npy_data.
static_assert(std::endian::native == std::endian::little,
              "onelearn/core/io.hpp assumes a little-endian host");

namespace onelearn::io {

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

/// Loads a .npy file into `M`, which is `Matrix<T>` or `Vector<T>` for T in {float, double,
/// std::int32_t, std::int64_t} (so `load_npy<Labels>` works). A Matrix needs a 2-d array; a
/// Vector takes shape (n,), (n, 1) or (1, n). Float data loaded into an integer type must hold
/// integers in range; every other conversion is a static_cast.
template <class M>
[[nodiscard]] M load_npy(const std::filesystem::path& path);

/// Saves any Eigen dense expression as a .npy file (format 1.0, C order, dtype from the scalar
/// type). A compile-time column vector is saved with shape (n,), everything else as (rows, cols).
/// The file is written under a temporary name in the same directory and renamed into place, so
/// `path` is either untouched or complete.
template <class Derived>
void save_npy(const std::filesystem::path& path, const Eigen::DenseBase<Derived>& array);

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

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

namespace detail {

template <class T>
concept npy_scalar = std::is_same_v<T, float> || std::is_same_v<T, double> ||
    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>;

template <npy_scalar T>
constexpr const char* npy_descr() {
  if constexpr (std::is_same_v<T, float>) return "<f4";
  if constexpr (std::is_same_v<T, double>) return "<f8";
  if constexpr (std::is_same_v<T, std::int32_t>) return "<i4";
  if constexpr (std::is_same_v<T, std::int64_t>) return "<i8";
}

template <class T>
constexpr const char* scalar_name() {
  if constexpr (std::is_same_v<T, float>) return "float32";
  if constexpr (std::is_same_v<T, double>) return "float64";
  if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  return "this type";
}

/// True for the types load_npy can produce.
template <class M>
constexpr bool is_npy_target = npy_scalar<typename M::Scalar> &&
                               (std::is_same_v<M, Matrix<typename M::Scalar>> ||
                                std::is_same_v<M, Vector<typename M::Scalar>>);

inline std::string errno_message(int error_number) {
  return error_number != 0 ? std::generic_category().message(error_number) : "unknown error";
}

/// Shows bytes that may not be text: printable ASCII as is, the rest as \xHH.
inline std::string escape_bytes(std::string_view bytes) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\' && c != '"') {
      out += c;
    } else {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 0xf];
    }
  }
  return out;
}

/// A binary input file that knows its size, so a corrupt length field is reported as
/// "truncated" before anything is allocated for it.
class ByteReader {
 public:
  explicit ByteReader(const std::filesystem::path& path) : where_(path.string()) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      throw io_error(where_ + ": cannot open for reading: it is a directory");
    }
    errno = 0;
    file_.open(path, std::ios::binary);
    if (!file_.is_open()) {
      throw io_error(where_ + ": cannot open for reading: " + errno_message(errno));
    }
    file_.seekg(0, std::ios::end);
    const std::streamoff end = file_.tellg();
    file_.seekg(0, std::ios::beg);
    // A stream that cannot seek (a pipe) has no known size; reads then check what arrived.
    size_known_ = end >= 0;
    size_ =
        size_known_ ? static_cast<std::uint64_t>(end) : std::numeric_limits<std::uint64_t>::max();
    file_.clear();
  }

  [[nodiscard]] const std::string& where() const noexcept { return where_; }
  [[nodiscard]] std::uint64_t remaining() const noexcept { return size_ - pos_; }

  /// Reads exactly `n` bytes of `what`, or throws "truncated".
  void read(void* dst, std::uint64_t n, const char* what) {
    if (n > remaining()) truncated(n, remaining(), what);
    const std::uint64_t got = read_some(dst, n);
    if (got != n) truncated(n, got, what);
  }

  /// Reads up to `n` bytes.
  std::string read_up_to(std::uint64_t n) {
    std::string out(static_cast<std::size_t>(std::min(n, remaining())), '\0');
    out.resize(static_cast<std::size_t>(read_some(out.data(), out.size())));
    return out;
  }

  std::string read_rest() {
    if (!size_known_) {
      std::string out((std::istreambuf_iterator<char>(file_)), std::istreambuf_iterator<char>());
      check_not_bad();
      return out;
    }
    return read_up_to(remaining());
  }

 private:
  std::uint64_t read_some(void* dst, std::uint64_t n) {
    if (n == 0) return 0;
    file_.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    check_not_bad();
    const auto got = static_cast<std::uint64_t>(file_.gcount());
    pos_ += got;
    return got;
  }

  void check_not_bad() {
    if (file_.bad()) throw io_error(where_ + ": read error: " + errno_message(errno));
  }

  [[noreturn]] void truncated(std::uint64_t expected, std::uint64_t found, const char* what) const {
    throw io_error(where_ + ": truncated: expected " + std::to_string(expected) + " bytes of " +
                   what + ", found " + std::to_string(found));
  }

  std::string where_;
  std::ifstream file_;
  bool size_known_ = false;
  std::uint64_t size_ = 0;
  std::uint64_t pos_ = 0;
};

// --- load_npy --------------------------------------------------------------------------------

/// Reads the magic string, version, header length and header, leaving `in` at the data.
inline NpyHeader read_npy_header(ByteReader& in) {
  static constexpr std::string_view magic("\x93NUMPY", 6);
  const std::string prefix = in.read_up_to(magic.size());
  if (prefix != magic.substr(0, prefix.size())) {
    throw io_error(in.where() +
                   ": not a .npy file: expected the magic string \"\\x93NUMPY\", "
                   "found \"" +
                   escape_bytes(prefix) + "\"");
  }
  if (prefix.size() < magic.size()) {
    throw io_error(in.where() + ": truncated: expected " + std::to_string(magic.size()) +
                   " bytes of magic string, found " + std::to_string(prefix.size()));
  }

  unsigned char version[2];
  in.read(version, 2, "format version");
  if (version[1] != 0 || version[0] < 1 || version[0] > 3) {
    throw io_error(in.where() + ": unsupported npy format version " + std::to_string(version[0]) +
                   "." + std::to_string(version[1]) + " (supported: 1.0, 2.0, 3.0)");
  }

  // Version 1.0 stores the header length in 2 bytes, 2.0 and 3.0 in 4; always little-endian.
  unsigned char length_bytes[4] = {0, 0, 0, 0};
  const std::uint64_t length_size = version[0] == 1 ? 2 : 4;
  in.read(length_bytes, length_size, "header length");
  std::uint64_t header_length = 0;
  for (std::uint64_t i = length_size; i-- > 0;)
    header_length = header_length << 8 | length_bytes[i];

  std::string text(static_cast<std::size_t>(std::min(header_length, in.remaining())), '\0');
  in.read(text.data(), header_length, "header");
  return parse_npy_header(text, in.where());
}

/// Rows and columns of the M that the array of `header.shape` loads into (for a Vector,
/// columns is 1).
template <class M>
std::pair<index_t, index_t> npy_target_shape(const NpyHeader& header, const std::string& where) {
  const std::vector<std::uint64_t>& shape = header.shape;
  const auto fits = [](std::uint64_t d) {
    return d <= static_cast<std::uint64_t>(std::numeric_limits<index_t>::max());
  };
  if (!std::all_of(shape.begin(), shape.end(), fits)) {
    throw io_error(where + ": array of shape " + shape_repr(shape) + " is too large");
  }
  const auto dim = [&](std::size_t i) { return static_cast<index_t>(shape[i]); };
  if constexpr (std::is_same_v<M, Matrix<typename M::Scalar>>) {
    if (shape.size() != 2) {
      throw io_error(where + ": expected a 2-d array, found shape " + shape_repr(shape));
    }
    return {dim(0), dim(1)};
  } else {
    if (shape.size() == 1) return {dim(0), 1};
    if (shape.size() == 2 && shape[1] == 1) return {dim(0), 1};
    if (shape.size() == 2 && shape[0] == 1) return {dim(1), 1};
    throw io_error(where +
                   ": expected a 1-d array (or a 2-d array with one row or one column), "
                   "found shape " +
                   shape_repr(shape));
  }
}

/// Whether `value` converts to Target without changing: into an integer type, floats must be
/// integral and everything must be in range. Conversions into a floating type always pass.
template <class Target, class Source>
bool converts_exactly(Source value) {
  if constexpr (!std::is_integral_v<Target>) {
    return true;
  } else if constexpr (std::is_integral_v<Source>) {
    return std::in_range<Target>(value);
  } else {
    const auto v = static_cast<double>(value);
    // [-2^digits, 2^digits) is exactly the range of a two's complement integer type.
    const double limit = std::ldexp(1.0, std::numeric_limits<Target>::digits);
    return std::isfinite(v) && std::trunc(v) == v && v >= -limit && v < limit;
  }
}

/// "[i, j]" (or "[i]"): where the flat element `k` sits in the array as numpy indexes it.
inline std::string npy_element_index(const NpyHeader& header, std::uint64_t k) {
  const std::vector<std::uint64_t>& s = header.shape;
  if (s.size() != 2) return "[" + std::to_string(k) + "]";
  const std::uint64_t i = header.fortran_order ? k % s[0] : k / s[1];
  const std::uint64_t j = header.fortran_order ? k / s[0] : k % s[1];
  return "[" + std::to_string(i) + ", " + std::to_string(j) + "]";
}

template <class V>
std::string number_text(V value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

template <class Target, class Source>
void check_exact_conversion(const std::vector<Source>& raw, const NpyHeader& header,
                            const std::string& where) {
  for (std::size_t k = 0; k < raw.size(); ++k) {
    if (converts_exactly<Target>(raw[k])) continue;
    bool integral = true;
    if constexpr (std::is_floating_point_v<Source>) integral = std::trunc(raw[k]) == raw[k];
    throw io_error(where + ": cannot convert " + header.descr + " data to " +
                   scalar_name<Target>() + " exactly: element " + npy_element_index(header, k) +
                   " is " + number_text(raw[k]) +
                   (integral ? ", which is out of range" : ", which is not an integer"));
  }
}

/// Reads the array data, stored as `Source`, into an M of `rows` x `cols`.
template <class Source, class M>
M read_npy_data(ByteReader& in, const NpyHeader& header, index_t rows, index_t cols) {
  using Target = typename M::Scalar;
  const auto count = static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols);
  if (rows != 0 && count / static_cast<std::uint64_t>(rows) != static_cast<std::uint64_t>(cols)) {
    throw io_error(in.where() + ": array of shape " + shape_repr(header.shape) + " is too large");
  }
  if (count > in.remaining() / sizeof(Source)) {
    // Checked before allocating: a corrupt shape must not turn into a huge allocation.
    const bool overflows = count > std::numeric_limits<std::uint64_t>::max() / sizeof(Source);
    const std::string expected =
        overflows ? "more than 2^64" : std::to_string(count * sizeof(Source));
    throw io_error(in.where() + ": truncated: expected " + expected +
                   " bytes of array data, found " + std::to_string(in.remaining()));
  }
  const std::uint64_t bytes = count * sizeof(Source);

  // Same type and same order: read straight into the result, without a second copy.
  const bool same_order = !header.fortran_order || rows <= 1 || cols <= 1;
  if constexpr (std::is_same_v<Source, Target>) {
    if (same_order) {
      M out(rows, cols);
      in.read(out.data(), bytes, "array data");
      return out;
    }
  }

  std::vector<Source> raw(static_cast<std::size_t>(count));
  in.read(raw.data(), bytes, "array data");
  check_exact_conversion<Target>(raw, header, in.where());
  if constexpr (std::is_same_v<M, Vector<Target>>) {
    return Eigen::Map<const Vector<Source>>(raw.data(), rows).template cast<Target>();
  } else if (header.fortran_order) {
    using ColMajor = Eigen::Matrix<Source, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
    return Eigen::Map<const ColMajor>(raw.data(), rows, cols).template cast<Target>();
  } else {
    return Eigen::Map<const Matrix<Source>>(raw.data(), rows, cols).template cast<Target>();
  }
}

// --- save_npy --------------------------------------------------------------------------------

/// Removes a temporary file unless released; so a failed save leaves nothing behind.
class TemporaryFile {
 public:
  explicit TemporaryFile(std::filesystem::path path) : path_(std::move(path)) {}
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  ~TemporaryFile() {
    if (!path_.empty()) {
      std::error_code ignored;
      std::filesystem::remove(path_, ignored);
    }
  }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  void release() noexcept { path_.clear(); }

 private:
  std::filesystem::path path_;
};

inline long process_id() {
#if defined(_WIN32)
  return static_cast<long>(::_getpid());
#else
  return static_cast<long>(::getpid());
#endif
}

/// "<path>.tmp-<pid>-<random>": in the same directory as `path`, so the final rename stays on
/// one file system and is atomic; the pid and a random number keep concurrent writers apart.
inline std::filesystem::path temporary_name(const std::filesystem::path& path) {
  static std::atomic<std::uint64_t> counter{0};
  std::uint64_t random = counter.fetch_add(1) * 0x9E3779B97F4A7C15ULL;
  try {
    std::random_device device;
    random ^= (static_cast<std::uint64_t>(device()) << 32) ^ device();
  } catch (const std::exception&) {  // no entropy source: the clock is unique enough
    random ^=
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  char hex[17];
  const auto end = std::to_chars(hex, hex + 16, random, 16).ptr;
  std::filesystem::path tmp = path;
  tmp += ".tmp-" + std::to_string(process_id()) + "-" + std::string(hex, end);
  return tmp;
}

/// Writes `header` and then what `write_data` writes to a temporary file, and renames it to
/// `path`.
template <class WriteData>
void write_file_atomically(const std::filesystem::path& path, const std::string& preamble,
                           WriteData write_data) {
  const std::string where = path.string();
  TemporaryFile tmp(temporary_name(path));
  const std::string tmp_name = tmp.path().string();
  {
    errno = 0;
    std::ofstream out(tmp.path(), std::ios::binary | std::ios::trunc);
    if (!out.is_open()) {
      throw io_error(where + ": cannot create temporary file '" + tmp_name +
                     "': " + errno_message(errno));
    }
    out.write(preamble.data(), static_cast<std::streamsize>(preamble.size()));
    write_data(out);
    out.flush();
    out.close();
    if (out.fail()) {
      throw io_error(where + ": cannot write temporary file '" + tmp_name +
                     "': " + errno_message(errno));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp.path(), path, ec);
  if (ec) {
    throw io_error(where + ": cannot rename temporary file '" + tmp_name +
                   "' to it: " + ec.message());
  }
  tmp.release();
}

/// Magic string, version 1.0, 2-byte little-endian header length, header text.
inline std::string npy_preamble(const std::string& descr, const std::vector<std::uint64_t>& shape) {
  const std::string header = format_npy_header(descr, shape);
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  return out + header;
}

template <class Scalar>
void write_elements(std::ostream& out, const Scalar* data, index_t count) {
  out.write(reinterpret_cast<const char*>(data),
            static_cast<std::streamsize>(count) * static_cast<std::streamsize>(sizeof(Scalar)));
}

// --- load_csv --------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Definitions of the public API
// ---------------------------------------------------------------------------------------------

template <class M>
M load_npy(const std::filesystem::path& path) {
  static_assert(detail::is_npy_target<M>,
                "load_npy<M>: M must be onelearn::Matrix<T> or onelearn::Vector<T> with T one of "
                "float, double, std::int32_t, std::int64_t");
  detail::ByteReader in(path);
  const detail::NpyHeader header = detail::read_npy_header(in);
  const std::string& descr = header.descr;
  if (!header.descr_is_string ||
      (descr != "<f4" && descr != "<f8" && descr != "<i4" && descr != "<i8")) {
    throw io_error(in.where() + ": unsupported dtype " + (header.descr_is_string ? "'" : "") +
                   descr + (header.descr_is_string ? "'" : "") +
                   " (supported: <f4, <f8, <i4, <i8)");
  }
  const auto [rows, cols] = detail::npy_target_shape<M>(header, in.where());
  if (descr == "<f4") return detail::read_npy_data<float, M>(in, header, rows, cols);
  if (descr == "<f8") return detail::read_npy_data<double, M>(in, header, rows, cols);
  if (descr == "<i4") return detail::read_npy_data<std::int32_t, M>(in, header, rows, cols);
  return detail::read_npy_data<std::int64_t, M>(in, header, rows, cols);
}

template <class Derived>
void save_npy(const std::filesystem::path& path, const Eigen::DenseBase<Derived>& array) {
  using Scalar = typename Derived::Scalar;
  static_assert(detail::npy_scalar<Scalar>,
                "save_npy: the scalar type must be float, double, std::int32_t or std::int64_t");
  const char* descr = detail::npy_descr<Scalar>();
  if constexpr (Derived::ColsAtCompileTime == 1) {
    // Ref views contiguous data in place and evaluates anything else (a strided column, an
    // expression) once into a temporary.
    const Eigen::Ref<const Vector<Scalar>> v(array.derived().matrix());
    const std::vector<std::uint64_t> shape{static_cast<std::uint64_t>(v.size())};
    detail::write_file_atomically(path, detail::npy_preamble(descr, shape), [&](std::ostream& out) {
      detail::write_elements(out, v.data(), v.size());
    });
  } else {
    // Written row by row, so a row-major Ref with padding between rows needs no copy; a
    // column-major expression is evaluated into C order by the Ref.
    const Eigen::Ref<const Matrix<Scalar>> m(array.derived().matrix());
    const std::vector<std::uint64_t> shape{static_cast<std::uint64_t>(m.rows()),
                                           static_cast<std::uint64_t>(m.cols())};
    detail::write_file_atomically(path, detail::npy_preamble(descr, shape), [&](std::ostream& out) {
      for (index_t i = 0; i < m.rows(); ++i) {
        detail::write_elements(out, m.row(i).data(), m.cols());
      }
    });
  }
}

template <class T, class Y>
Dataset<T, Y> load_csv(const std::filesystem::path& path, const CsvOptions& options) {
  static_assert(std::is_arithmetic_v<T> && std::is_arithmetic_v<Y> && !std::is_same_v<T, bool> &&
                    !std::is_same_v<Y, bool>,
                "load_csv<T, Y>: T and Y must be numeric types");
  detail::ByteReader in(path);
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
