#pragma once
/**
 * \file
 * \brief load_npy and save_npy: NumPy's .npy format.
 * \ingroup io
 *
 * \code
 * #include <onelearn/io/npy.hpp>
 *
 * auto X = onelearn::io::load_npy<onelearn::Matrix<double>>("X_train.npy");
 * auto y = onelearn::io::load_npy<onelearn::Labels>("y_train.npy");   // int64 labels
 * onelearn::io::save_npy("X_scaled.npy", X_scaled);
 * \endcode
 *
 * NumPy's .npy format: load_npy reads what numpy.save writes, save_npy writes exactly the bytes
 * numpy.save writes for the same C-order array.
 *
 * Supported: dtypes <f4, <f8, <i4 and <i8 (little-endian float32/float64/int32/int64), C or
 * Fortran order, format versions 1.0, 2.0 and 3.0. The data is converted to the scalar type
 * asked for; a conversion into an integer type must be exact, so that labels are never silently
 * rounded. float64 data loaded as float32 may lose precision (that is what asking for float32
 * means), but a finite value beyond float32's range, which would become inf, is an error unless
 * NpyLoadOptions::allow_lossy is set; NaN and the infinities stay what they are. The bytes are
 * read with io::ByteReader (io/byte_reader.hpp), which checks every length against the file's
 * size before allocating; save_npy writes through io::write_file_atomically
 * (io/atomic_file.hpp), which fsyncs the data before the rename, so `path` is either untouched
 * or complete.
 *
 * Errors: every failure is an onelearn::io_error whose message starts with the file's path,
 * then says what was expected and what was found: a missing or unreadable file, a wrong magic
 * string, an unsupported version or dtype, a malformed header, a truncated file, an array of
 * the wrong rank for M, a value that does not convert exactly or (into float32) is out of
 * range; bytes taken from the file (the magic string, the header, the dtype) are shown with
 * non-printable bytes as `\xHH`. For save_npy, a temporary file that cannot be created or
 * written, or a rename that fails.
 */

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/io/atomic_file.hpp"
#include "onelearn/io/byte_reader.hpp"
#include "onelearn/io/detail/escape_bytes.hpp"
#include "onelearn/io/detail/exact_conversion.hpp"
#include "onelearn/io/detail/npy_header.hpp"

// .npy data is read and written by copying bytes, which is only right on a little-endian host
// (every platform onelearn targets). A big-endian port would byte-swap in read_npy_data and
// write_elements.
static_assert(std::endian::native == std::endian::little,
              "onelearn/io/npy.hpp assumes a little-endian host");

namespace onelearn::io {

/// How load_npy converts the stored values into the scalar type asked for.
struct NpyLoadOptions {
  /// Lets a finite float64 value beyond float32's range (magnitude above 3.4028235e+38) load
  /// into float as +-inf, as a static_cast would. Off by default: such a value is an io_error,
  /// because an inf in the features poisons every computation downstream without a word. This
  /// does not relax conversions into integer types, which stay exact (labels are never rounded).
  bool allow_lossy = false;
};

/// Loads a .npy file into `M`, which is `Matrix<T>` or `Vector<T>` for T in {float, double,
/// std::int32_t, std::int64_t} (so `load_npy<Labels>` works). A Matrix needs a 2-d array; a
/// Vector takes shape (n,), (n, 1) or (1, n). Float data loaded into an integer type must hold
/// integers in range; float64 data loaded into float32 must be within float32's range (see
/// NpyLoadOptions::allow_lossy); every other conversion is a static_cast.
template <class M>
[[nodiscard]] M load_npy(const std::filesystem::path& path, const NpyLoadOptions& options = {});

/// Saves any Eigen dense expression as a .npy file (format 1.0, C order, dtype from the scalar
/// type). A compile-time column vector is saved with shape (n,), everything else as (rows, cols).
/// The file is written under a temporary name in the same directory and renamed into place, so
/// `path` is either untouched or complete.
template <class Derived>
void save_npy(const std::filesystem::path& path, const Eigen::DenseBase<Derived>& array);

/// The dtype, memory order and shape of a .npy file, for readers of arrays of any rank (as
/// tools/onelearn_onnx.cpp): `descr` (e.g. "<f8"; descr_is_string is false for a structured
/// dtype), `fortran_order`, `shape`.
using NpyHeader = detail::NpyHeader;

/// Reads the magic string, format version, header length and header of a .npy file, leaving
/// `in` at the first byte of the array data.
[[nodiscard]] inline NpyHeader read_npy_header(ByteReader& in);

/// What precedes the array data in a .npy file of format 1.0: the magic string, the version,
/// the header length and the header for `descr` and `shape` (C order), padded as numpy pads it.
[[nodiscard]] inline std::string npy_preamble(const std::string& descr,
                                              const std::vector<std::uint64_t>& shape);

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

/// "[i, j]" (or "[i]"): where the flat element `k` sits in the array as numpy indexes it.
inline std::string npy_element_index(const NpyHeader& header, std::uint64_t k) {
  const std::vector<std::uint64_t>& s = header.shape;
  if (s.size() != 2) return "[" + std::to_string(k) + "]";
  const std::uint64_t i = header.fortran_order ? k % s[0] : k / s[1];
  const std::uint64_t j = header.fortran_order ? k / s[0] : k % s[1];
  return "[" + std::to_string(i) + ", " + std::to_string(j) + "]";
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
                   " is " + value_text(raw[k]) +
                   (integral ? ", which is out of range" : ", which is not an integer"));
  }
}

/// Refuses (or, with `allow_lossy`, turns into +-inf) the finite values of `raw` that are
/// beyond Target's range, so that the cast that follows never overflows. Only float64 data
/// loaded as float32 can be out of range so; for the other pairs this does nothing.
template <class Target, class Source>
void check_floating_range(std::vector<Source>& raw, const NpyHeader& header,
                          const std::string& where, bool allow_lossy) {
  if constexpr (std::is_floating_point_v<Source> && std::is_floating_point_v<Target>) {
    for (std::size_t k = 0; k < raw.size(); ++k) {
      if (!overflows_to_infinity<Target>(raw[k])) continue;
      if (allow_lossy) {
        raw[k] = std::copysign(std::numeric_limits<Source>::infinity(), raw[k]);
        continue;
      }
      throw io_error(where + ": cannot convert " + header.descr + " data to " +
                     scalar_name<Target>() + ": element " + npy_element_index(header, k) + " is " +
                     value_text(raw[k]) + ", beyond " + scalar_name<Target>() +
                     "'s largest value " + value_text(std::numeric_limits<Target>::max()) +
                     " (it would become inf); load it as " + scalar_name<Source>() +
                     ", or set NpyLoadOptions::allow_lossy to accept inf");
    }
  }
}

/// Reads the array data, stored as `Source`, into an M of `rows` x `cols`.
template <class Source, class M>
M read_npy_data(ByteReader& in, const NpyHeader& header, index_t rows, index_t cols,
                const NpyLoadOptions& options) {
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
  check_floating_range<Target>(raw, header, in.where(), options.allow_lossy);
  if constexpr (std::is_same_v<M, Vector<Target>>) {
    return Eigen::Map<const Vector<Source>>(raw.data(), rows).template cast<Target>();
  } else if (header.fortran_order) {
    using ColMajor = Eigen::Matrix<Source, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
    return Eigen::Map<const ColMajor>(raw.data(), rows, cols).template cast<Target>();
  } else {
    return Eigen::Map<const Matrix<Source>>(raw.data(), rows, cols).template cast<Target>();
  }
}

template <class Scalar>
void write_elements(FileSink& out, const Scalar* data, index_t count) {
  out.write(data, static_cast<std::size_t>(count) * sizeof(Scalar));
}

}  // namespace detail

inline NpyHeader read_npy_header(ByteReader& in) {
  static constexpr std::string_view magic("\x93NUMPY", 6);
  const std::string prefix = in.read_up_to(magic.size());
  if (prefix != magic.substr(0, prefix.size())) {
    throw io_error(in.where() +
                   ": not a .npy file: expected the magic string \"\\x93NUMPY\", "
                   "found \"" +
                   detail::escape_bytes(prefix) + "\"");
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
  const std::uint64_t header_length = version[0] == 1
                                          ? in.little_endian<std::uint16_t>("header length")
                                          : in.little_endian<std::uint32_t>("header length");

  std::string text(static_cast<std::size_t>(std::min(header_length, in.remaining())), '\0');
  in.read(text.data(), header_length, "header");
  return detail::parse_npy_header(text, in.where());
}

inline std::string npy_preamble(const std::string& descr, const std::vector<std::uint64_t>& shape) {
  const std::string header = detail::format_npy_header(descr, shape);
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  return out + header;
}

template <class M>
M load_npy(const std::filesystem::path& path, const NpyLoadOptions& options) {
  static_assert(detail::is_npy_target<M>,
                "load_npy<M>: M must be onelearn::Matrix<T> or onelearn::Vector<T> with T one of "
                "float, double, std::int32_t, std::int64_t");
  ByteReader in(path);
  const NpyHeader header = read_npy_header(in);
  const std::string& descr = header.descr;
  if (!header.descr_is_string ||
      (descr != "<f4" && descr != "<f8" && descr != "<i4" && descr != "<i8")) {
    throw io_error(in.where() + ": unsupported dtype " + (header.descr_is_string ? "'" : "") +
                   detail::escape_bytes(descr) + (header.descr_is_string ? "'" : "") +
                   " (supported: <f4, <f8, <i4, <i8)");
  }
  const auto [rows, cols] = detail::npy_target_shape<M>(header, in.where());
  if (descr == "<f4") return detail::read_npy_data<float, M>(in, header, rows, cols, options);
  if (descr == "<f8") return detail::read_npy_data<double, M>(in, header, rows, cols, options);
  if (descr == "<i4")
    return detail::read_npy_data<std::int32_t, M>(in, header, rows, cols, options);
  return detail::read_npy_data<std::int64_t, M>(in, header, rows, cols, options);
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
    write_file_atomically(path, [&](FileSink& out) {
      out.write(npy_preamble(descr, shape));
      detail::write_elements(out, v.data(), v.size());
    });
  } else {
    // Written row by row, so a row-major Ref with padding between rows needs no copy; a
    // column-major expression is evaluated into C order by the Ref.
    const Eigen::Ref<const Matrix<Scalar>> m(array.derived().matrix());
    const std::vector<std::uint64_t> shape{static_cast<std::uint64_t>(m.rows()),
                                           static_cast<std::uint64_t>(m.cols())};
    write_file_atomically(path, [&](FileSink& out) {
      out.write(npy_preamble(descr, shape));
      for (index_t i = 0; i < m.rows(); ++i) {
        detail::write_elements(out, m.row(i).data(), m.cols());
      }
    });
  }
}

}  // namespace onelearn::io
