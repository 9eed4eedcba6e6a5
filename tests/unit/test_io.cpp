// Tests for onelearn/io/npy.hpp and onelearn/io/csv.hpp: .npy read/write and CSV read.
//
// Expected values come from outside the code under test: files numpy wrote (and the
// scikit-learn reference statistics computed from them), .npy files assembled byte by byte
// here, and literal CSV text.

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/io/io.hpp"
#include "temp_dir.hpp"

#if defined(__unix__) || defined(__APPLE__)
#define ONELEARN_TEST_POSIX 1
#include <sys/resource.h>  // setrlimit(RLIMIT_FSIZE): a write that fails half-way
#endif

namespace {

namespace fs = std::filesystem;
using onelearn::test::TempDir;
using onelearn::test::write_file;
using namespace std::string_literals;  // "..."s keeps embedded NUL bytes
using onelearn::index_t;
using onelearn::io_error;
using onelearn::Labels;
using onelearn::Matrix;
using onelearn::Vector;
using onelearn::io::CsvOptions;
using onelearn::io::load_csv;
using onelearn::io::load_npy;
using onelearn::io::NpyLoadOptions;
using onelearn::io::save_npy;

const fs::path data_dir{ONELEARN_TEST_DATA_DIR};

nlohmann::json reference(const std::string& dataset) {
  std::ifstream in(data_dir / dataset / "sklearn_reference.json");
  REQUIRE(in.is_open());
  return nlohmann::json::parse(in);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.is_open());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// --- building .npy files by hand --------------------------------------------------------------

/// The low `n` bytes of `bits`, least significant first.
std::string little_endian(std::uint64_t bits, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += static_cast<char>((bits >> (8 * i)) & 0xff);
  return out;
}

std::string f4(std::initializer_list<float> values) {
  std::string out;
  for (const float v : values) out += little_endian(std::bit_cast<std::uint32_t>(v), 4);
  return out;
}
std::string f8(std::initializer_list<double> values) {
  std::string out;
  for (const double v : values) out += little_endian(std::bit_cast<std::uint64_t>(v), 8);
  return out;
}
std::string i4(std::initializer_list<std::int32_t> values) {
  std::string out;
  for (const std::int32_t v : values) out += little_endian(static_cast<std::uint32_t>(v), 4);
  return out;
}
std::string i8(std::initializer_list<std::int64_t> values) {
  std::string out;
  for (const std::int64_t v : values) out += little_endian(static_cast<std::uint64_t>(v), 8);
  return out;
}

/// A .npy file: magic, version major.0, header length (2 bytes for 1.0, 4 otherwise), the
/// header dict followed by '\n', then `data`. Padding is left to the caller's dict text.
std::string npy_bytes(std::string_view dict, std::string_view data, int major = 1) {
  const std::string header = std::string(dict) + "\n";
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  out += little_endian(header.size(), major == 1 ? 2 : 4);
  return out + header + std::string(data);
}

std::string dict(std::string_view descr, std::string_view shape, bool fortran = false) {
  return "{'descr': '" + std::string(descr) +
         "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + std::string(shape) + ", }";
}

// Check that `expr` throws onelearn::io_error (not just any exception) with a message that
// contains `fragment` / is exactly `message` (std::string or string literal).
#define CHECK_IO_ERROR(expr, fragment)                                                    \
  CHECK_THROWS_WITH_AS(static_cast<void>(expr),                                           \
                       doctest::Contains(doctest::String(std::string(fragment).c_str())), \
                       onelearn::io_error)
#define CHECK_IO_ERROR_IS(expr, message) \
  CHECK_THROWS_WITH_AS(static_cast<void>(expr), std::string(message).c_str(), onelearn::io_error)

/// The message of the io_error that `load` throws ("" if it throws none), checked to be a whole
/// C string: what() must not hold a NUL byte that would cut it short for every reader.
template <class Load>
std::string io_error_message(Load&& load) {
  try {
    static_cast<void>(load());
  } catch (const io_error& e) {
    return e.what();
  }
  return "";
}

#define CHECK_WHOLE_IO_ERROR(expr, message)                           \
  do {                                                                \
    const std::string expected_message = (message);                   \
    const std::string got = io_error_message([&] { return (expr); }); \
    CHECK(got == expected_message);                                   \
    CHECK(std::strlen(got.c_str()) == expected_message.size());       \
  } while (false)

}  // namespace

// =============================================================================================
// load_npy on files numpy wrote
// =============================================================================================

TEST_CASE_TEMPLATE("load_npy reads numpy's diabetes data; column means match scikit-learn", T,
                   float, double) {
  const nlohmann::json ref = reference("diabetes");
  const auto X = load_npy<Matrix<T>>(data_dir / "diabetes" / "X_train.npy");
  REQUIRE(X.rows() == ref["n_train"].get<index_t>());
  REQUIRE(X.cols() == ref["n_features"].get<index_t>());
  REQUIRE(X.cols() == 10);

  const auto expected = ref["scaler_mean"].get<std::vector<double>>();
  REQUIRE(expected.size() == 10);
  // float32 keeps ~7 digits of each value; the features are O(0.1) with means O(1e-3).
  const double tolerance = std::is_same_v<T, double> ? 1e-12 : 1e-7;
  for (index_t j = 0; j < X.cols(); ++j) {
    const double mean = X.col(j).template cast<double>().mean();
    CHECK(std::abs(mean - expected[static_cast<std::size_t>(j)]) <= tolerance);
  }

  const auto y = load_npy<Vector<T>>(data_dir / "diabetes" / "y_train.npy");
  CHECK(y.size() == ref["n_train"].get<index_t>());
  // Diabetes targets are disease-progression scores between 25 and 346.
  CHECK(y.minCoeff() >= T(25));
  CHECK(y.maxCoeff() <= T(346));
}

TEST_CASE("load_npy reads numpy's iris labels as Labels and as floating-point vectors") {
  const nlohmann::json ref = reference("iris");
  const auto n_train = ref["n_train"].get<index_t>();
  const auto y = load_npy<Labels>(data_dir / "iris" / "y_train.npy");
  REQUIRE(y.size() == n_train);
  for (index_t i = 0; i < y.size(); ++i) {
    CHECK((y(i) == 0 || y(i) == 1 || y(i) == 2));
  }
  CHECK((y.array() == 0).any());
  CHECK((y.array() == 1).any());
  CHECK((y.array() == 2).any());

  const auto y_double = load_npy<Vector<double>>(data_dir / "iris" / "y_train.npy");
  CHECK(y_double == y.cast<double>());
  const auto y_int32 = load_npy<Vector<std::int32_t>>(data_dir / "iris" / "y_train.npy");
  CHECK(y_int32 == y.cast<std::int32_t>());

  const auto X = load_npy<Matrix<double>>(data_dir / "iris" / "X_train.npy");
  CHECK(X.rows() == n_train);
  CHECK(X.cols() == ref["n_features"].get<index_t>());
}

TEST_CASE("load_npy converts float64 data to integers only when every value is an integer") {
  // Digits pixels are float64 holding the integers 0..16: the conversion is exact.
  const auto pixels = load_npy<Matrix<std::int32_t>>(data_dir / "digits" / "X_train.npy");
  const auto exact = load_npy<Matrix<double>>(data_dir / "digits" / "X_train.npy");
  CHECK(pixels.rows() == reference("digits")["n_train"].get<index_t>());
  CHECK(pixels.cast<double>() == exact);
  CHECK(pixels.minCoeff() == 0);
  CHECK(pixels.maxCoeff() == 16);

  // Iris measurements such as 5.1 are not integers.
  const fs::path iris = data_dir / "iris" / "X_train.npy";
  CHECK_IO_ERROR(load_npy<Matrix<std::int64_t>>(iris), "which is not an integer");
  CHECK_IO_ERROR(load_npy<Matrix<std::int64_t>>(iris), iris.string() + ": cannot convert <f8 data");
}

TEST_CASE("save_npy writes the same bytes numpy wrote") {
  // numpy.save's header (sorted keys, spare space for growth, 64-byte alignment) is reproduced
  // exactly, so saving what was loaded gives back the original files byte for byte.
  TempDir dir;
  for (const char* dataset : {"diabetes", "iris", "digits"}) {
    CAPTURE(dataset);
    const fs::path X_path = data_dir / dataset / "X_train.npy";
    save_npy(dir / "X.npy", load_npy<Matrix<double>>(X_path));
    CHECK(read_file(dir / "X.npy") == read_file(X_path));
  }
  const fs::path y_reg = data_dir / "diabetes" / "y_test.npy";
  save_npy(dir / "y.npy", load_npy<Vector<double>>(y_reg));
  CHECK(read_file(dir / "y.npy") == read_file(y_reg));
  const fs::path y_cls = data_dir / "iris" / "y_test.npy";
  save_npy(dir / "labels.npy", load_npy<Labels>(y_cls));
  CHECK(read_file(dir / "labels.npy") == read_file(y_cls));
}

// =============================================================================================
// load_npy on hand-built files
// =============================================================================================

TEST_CASE("the test's byte encoders agree with known IEEE-754 and two's complement bytes") {
  CHECK(f8({1.0}) == "\x00\x00\x00\x00\x00\x00\xf0\x3f"s);
  CHECK(f8({-2.5}) == "\x00\x00\x00\x00\x00\x00\x04\xc0"s);
  CHECK(f4({1.5f}) == "\x00\x00\xc0\x3f"s);
  CHECK(i4({-2}) == "\xfe\xff\xff\xff"s);
  CHECK(i8({258}) == "\x02\x01\x00\x00\x00\x00\x00\x00"s);
}

TEST_CASE("load_npy reads a file written from literal bytes") {
  TempDir dir;
  // [[1.0, -2.5]] as <f8, bytes written out by hand.
  const std::string bytes = "\x93NUMPY\x01\x00"s + "\x46\x00"s +
                            "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }" +
                            std::string(10, ' ') + "\n" + "\x00\x00\x00\x00\x00\x00\xf0\x3f"s +
                            "\x00\x00\x00\x00\x00\x00\x04\xc0"s;
  write_file(dir / "a.npy", bytes);
  const auto m = load_npy<Matrix<double>>(dir / "a.npy");
  REQUIRE(m.rows() == 1);
  REQUIRE(m.cols() == 2);
  CHECK(m(0, 0) == 1.0);
  CHECK(m(0, 1) == -2.5);
}

TEST_CASE_TEMPLATE("load_npy converts each supported dtype (C order)", T, float, double) {
  TempDir dir;
  const fs::path path = dir / "a.npy";
  // Row-major 2x3: [[1, -2, 3.5], [0, 1024, -0.25]] (values exact in every type used).
  SUBCASE("<f4") {
    write_file(path, npy_bytes(dict("<f4", "(2, 3)"), f4({1, -2, 3.5f, 0, 1024, -0.25f})));
  }
  SUBCASE("<f8") {
    write_file(path, npy_bytes(dict("<f8", "(2, 3)"), f8({1, -2, 3.5, 0, 1024, -0.25})));
  }
  const auto m = load_npy<Matrix<T>>(path);
  REQUIRE(m.rows() == 2);
  REQUIRE(m.cols() == 3);
  CHECK(m(0, 0) == T(1));
  CHECK(m(0, 1) == T(-2));
  CHECK(m(0, 2) == T(3.5));
  CHECK(m(1, 0) == T(0));
  CHECK(m(1, 1) == T(1024));
  CHECK(m(1, 2) == T(-0.25));
}

TEST_CASE_TEMPLATE("load_npy converts integer dtypes", T, float, double, std::int32_t,
                   std::int64_t) {
  TempDir dir;
  const fs::path path = dir / "a.npy";
  SUBCASE("<i4") { write_file(path, npy_bytes(dict("<i4", "(2, 2)"), i4({7, -3, 0, 100000}))); }
  SUBCASE("<i8") { write_file(path, npy_bytes(dict("<i8", "(2, 2)"), i8({7, -3, 0, 100000}))); }
  const auto m = load_npy<Matrix<T>>(path);
  REQUIRE(m.rows() == 2);
  REQUIRE(m.cols() == 2);
  CHECK(m(0, 0) == T(7));
  CHECK(m(0, 1) == T(-3));
  CHECK(m(1, 0) == T(0));
  CHECK(m(1, 1) == T(100000));

  write_file(path, npy_bytes(dict("<i8", "(3,)"), i8({-1, 0, 1})));
  const auto v = load_npy<Vector<T>>(path);
  REQUIRE(v.size() == 3);
  CHECK(v(0) == T(-1));
  CHECK(v(2) == T(1));
}

TEST_CASE_TEMPLATE("load_npy transposes Fortran-order data correctly", T, float, double) {
  TempDir dir;
  const fs::path path = dir / "f.npy";
  // The 2x3 array [[1, 2, 3], [4, 5, 6]] stored column by column.
  SUBCASE("<f8") {
    write_file(path, npy_bytes(dict("<f8", "(2, 3)", true), f8({1, 4, 2, 5, 3, 6})));
  }
  SUBCASE("<f4") {
    write_file(path, npy_bytes(dict("<f4", "(2, 3)", true), f4({1, 4, 2, 5, 3, 6})));
  }
  SUBCASE("<i4") {
    write_file(path, npy_bytes(dict("<i4", "(2, 3)", true), i4({1, 4, 2, 5, 3, 6})));
  }
  const auto m = load_npy<Matrix<T>>(path);
  REQUIRE(m.rows() == 2);
  REQUIRE(m.cols() == 3);
  Matrix<T> expected(2, 3);
  expected << 1, 2, 3, 4, 5, 6;
  CHECK(m == expected);
}

TEST_CASE("load_npy reads a Fortran-order column as a Vector and names Fortran indices") {
  TempDir dir;
  write_file(dir / "col.npy", npy_bytes(dict("<f8", "(3, 1)", true), f8({4, 5, 6})));
  const auto v = load_npy<Vector<double>>(dir / "col.npy");
  REQUIRE(v.size() == 3);
  CHECK(v(0) == 4.0);
  CHECK(v(2) == 6.0);

  // Column-major [[0, 0.5], [0, 0]]: the non-integer sits at row 0, column 1.
  write_file(dir / "half.npy", npy_bytes(dict("<f8", "(2, 2)", true), f8({0, 0, 0.5, 0})));
  CHECK_IO_ERROR(load_npy<Matrix<std::int64_t>>(dir / "half.npy"),
                 "element [0, 1] is 0.5, which is not an integer");
}

TEST_CASE("load_npy reads format versions 2.0 and 3.0") {
  TempDir dir;
  for (const int major : {2, 3}) {
    CAPTURE(major);
    write_file(dir / "v.npy", npy_bytes(dict("<f8", "(2,)"), f8({0.5, 8}), major));
    const auto v = load_npy<Vector<double>>(dir / "v.npy");
    REQUIRE(v.size() == 2);
    CHECK(v(0) == 0.5);
    CHECK(v(1) == 8.0);
  }
}

TEST_CASE("load_npy parses headers written in any valid Python literal form") {
  TempDir dir;
  const fs::path path = dir / "h.npy";
  const std::string data = f8({1, 2, 3, 4, 5, 6});
  const std::vector<std::string> headers = {
      "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f8'}",         // order, no comma
      "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (2,3)}",  // double quotes
      "  {  'descr' :'<f8' ,\t'fortran_order':False,'shape':( 2 , 3 , ) ,}  ",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L), }",  // Python 2 longs
  };
  for (const std::string& header : headers) {
    CAPTURE(header);
    write_file(path, npy_bytes(header, data));
    const auto m = load_npy<Matrix<double>>(path);
    REQUIRE(m.rows() == 2);
    REQUIRE(m.cols() == 3);
    CHECK(m(1, 0) == 4.0);
  }
}

TEST_CASE("load_npy into a Vector takes shapes (n,), (n, 1) and (1, n)") {
  TempDir dir;
  const fs::path path = dir / "v.npy";
  for (const char* shape : {"(3,)", "(3, 1)", "(1, 3)"}) {
    CAPTURE(shape);
    write_file(path, npy_bytes(dict("<i8", shape), i8({5, 6, 7})));
    const Labels v = load_npy<Labels>(path);
    REQUIRE(v.size() == 3);
    CHECK(v(0) == 5);
    CHECK(v(1) == 6);
    CHECK(v(2) == 7);
  }
  write_file(path, npy_bytes(dict("<i8", "(0,)"), ""));
  CHECK(load_npy<Labels>(path).size() == 0);
  write_file(path, npy_bytes(dict("<f8", "(0, 4)"), ""));
  const auto empty = load_npy<Matrix<double>>(path);
  CHECK(empty.rows() == 0);
  CHECK(empty.cols() == 4);
}

// --- errors ---------------------------------------------------------------------------------

TEST_CASE("load_npy reports a missing file with its path and the system's reason") {
  TempDir dir;
  const fs::path path = dir / "missing.npy";
  CHECK_IO_ERROR_IS(load_npy<Matrix<double>>(path),
                    path.string() + ": cannot open for reading: No such file or directory");
}

TEST_CASE("load_npy rejects a file that is not .npy") {
  TempDir dir;
  const fs::path path = dir / "bad.npy";
  write_file(path, "PK\x03\x04 this is a zip"s);
  CHECK_IO_ERROR_IS(
      load_npy<Matrix<double>>(path),
      (path.string() + ": not a .npy file: expected the magic string \"\\x93NUMPY\", found "
                       "\"PK\\x03\\x04 t\""));
  write_file(path, "");
  CHECK_IO_ERROR(load_npy<Matrix<double>>(path),
                 path.string() + ": truncated: expected 6 bytes of magic string, found 0");
}

TEST_CASE("load_npy reports truncated files") {
  TempDir dir;
  const fs::path path = dir / "t.npy";
  const std::string whole = npy_bytes(dict("<f8", "(2, 3)"), f8({1, 2, 3, 4, 5, 6}));

  SUBCASE("data") {
    write_file(path, whole.substr(0, whole.size() - 8));
    CHECK_IO_ERROR_IS(load_npy<Matrix<double>>(path),
                      path.string() + ": truncated: expected 48 bytes of array data, found 40");
  }
  SUBCASE("data, converting") {
    write_file(path, whole.substr(0, whole.size() - 1));
    CHECK_IO_ERROR(load_npy<Matrix<float>>(path), "expected 48 bytes of array data, found 47");
  }
  SUBCASE("header") {
    write_file(path, whole.substr(0, 30));
    const std::size_t header_size = whole.size() - 48 - 10;
    CHECK_IO_ERROR(load_npy<Matrix<double>>(path), path.string() + ": truncated: expected " +
                                                       std::to_string(header_size) +
                                                       " bytes of header, found 20");
  }
  SUBCASE("header length") {
    write_file(path, whole.substr(0, 9));
    CHECK_IO_ERROR(load_npy<Matrix<double>>(path), "truncated: expected 2 bytes of header length");
  }
  SUBCASE("magic string") {
    write_file(path, whole.substr(0, 4));
    CHECK_IO_ERROR(load_npy<Matrix<double>>(path),
                   "truncated: expected 6 bytes of magic string, found 4");
  }
  SUBCASE("a huge shape is reported, not allocated") {
    write_file(path, npy_bytes(dict("<f8", "(4000000000, 4000000000)"), f8({1})));
    CHECK_IO_ERROR(load_npy<Matrix<double>>(path), "bytes of array data, found 8");
  }
}

TEST_CASE("load_npy rejects unsupported dtypes, naming the supported ones") {
  TempDir dir;
  const fs::path path = dir / "d.npy";
  for (const char* descr : {"<c16", ">f8", ">i4", "|b1", "<U3", "|O", "<f2", "<u8", "|i1"}) {
    CAPTURE(descr);
    write_file(path, npy_bytes(dict(descr, "(2,)"), std::string(32, '\0')));
    CHECK_IO_ERROR_IS(
        load_npy<Vector<double>>(path),
        (path.string() + ": unsupported dtype '" + descr + "' (supported: <f4, <f8, <i4, <i8)"));
  }
  // A structured dtype is a list of fields, not a string.
  write_file(path, npy_bytes("{'descr': [('a', '<f8'), ('b', '<i4')], 'fortran_order': False, "
                             "'shape': (2,), }",
                             std::string(24, '\0')));
  CHECK_IO_ERROR(load_npy<Vector<double>>(path), "unsupported dtype [('a', '<f8'), ('b', '<i4')]");
}

TEST_CASE("load_npy checks the number of dimensions") {
  TempDir dir;
  const fs::path path = dir / "s.npy";
  write_file(path, npy_bytes(dict("<f8", "(3,)"), f8({1, 2, 3})));
  CHECK_IO_ERROR_IS(load_npy<Matrix<double>>(path),
                    path.string() + ": expected a 2-d array, found shape (3,)");
  write_file(path, npy_bytes(dict("<f8", "()"), f8({1})));
  CHECK_IO_ERROR(load_npy<Matrix<double>>(path), "expected a 2-d array, found shape ()");
  CHECK_IO_ERROR(load_npy<Vector<double>>(path), "found shape ()");
  write_file(path, npy_bytes(dict("<f8", "(1, 2, 1)"), f8({1, 2})));
  CHECK_IO_ERROR(load_npy<Matrix<double>>(path), "expected a 2-d array, found shape (1, 2, 1)");
  write_file(path, npy_bytes(dict("<f8", "(2, 2)"), f8({1, 2, 3, 4})));
  CHECK_IO_ERROR(load_npy<Vector<double>>(path),
                 "expected a 1-d array (or a 2-d array with one row or one column), found shape "
                 "(2, 2)");
}

TEST_CASE("load_npy into integers rejects non-integral and out-of-range values, naming the index") {
  TempDir dir;
  const fs::path path = dir / "y.npy";
  write_file(path, npy_bytes(dict("<f8", "(3,)"), f8({0, 1.5, 2})));
  CHECK_IO_ERROR_IS(
      load_npy<Labels>(path),
      (path.string() + ": cannot convert <f8 data to int64 exactly: element [1] is 1.5, which is "
                       "not an integer"));

  write_file(path, npy_bytes(dict("<f4", "(2, 2)"), f4({0, 1, 2, 2.25f})));
  CHECK_IO_ERROR(load_npy<Matrix<std::int32_t>>(path), "element [1, 1] is 2.25");

  write_file(path,
             npy_bytes(dict("<f8", "(2,)"), f8({1, std::numeric_limits<double>::quiet_NaN()})));
  CHECK_IO_ERROR(load_npy<Labels>(path), "element [1] is nan");

  write_file(path, npy_bytes(dict("<i8", "(2,)"), i8({1, 3000000000})));
  CHECK_IO_ERROR(load_npy<Vector<std::int32_t>>(path),
                 "cannot convert <i8 data to int32 exactly: element [1] is 3000000000, which is "
                 "out of range");
  CHECK(load_npy<Labels>(path)(1) == 3000000000);

  write_file(path, npy_bytes(dict("<f8", "(1,)"), f8({9.3e18})));  // just above 2^63
  CHECK_IO_ERROR(load_npy<Labels>(path), "which is out of range");
}

TEST_CASE("load_npy rejects malformed headers and unknown versions") {
  TempDir dir;
  const fs::path path = dir / "m.npy";
  const std::string data = f8({1, 2});

  write_file(path, npy_bytes(dict("<f8", "(2,)"), data, 4));
  CHECK_IO_ERROR(load_npy<Vector<double>>(path),
                 path.string() + ": unsupported npy format version 4.0 (supported: 1.0, 2.0, 3.0)");

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{'descr': '<f8', 'shape': (2,)}", "missing key 'fortran_order'"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}", "unexpected key 'x'"},
      {"{'descr': '<f8', 'fortran_order': 0, 'shape': (2,)}",
       "expected True or False for 'fortran_order', found 0"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2)}", "1-tuple needs a trailing comma"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (-2,)}", "not an integer"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': [2]}", "not a tuple"},
      {"{'descr': '<f8' 'fortran_order': False}", "expected ',' or '}'"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,)", "expected ',' or '}'"},
      {"{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,)}",
       "duplicate key 'descr'"},
      {"{'descr: '<f8'}", "expected ':'"},
      {"['descr', '<f8']", "expected '{'"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,)} x", "only padding after '}'"},
  };
  for (const auto& c : cases) {
    const std::string& header = c.first;
    CAPTURE(header);
    write_file(path, npy_bytes(header, data));
    CHECK_IO_ERROR(load_npy<Vector<double>>(path), path.string() + ": malformed npy header: ");
    CHECK_IO_ERROR(load_npy<Vector<double>>(path), c.second);
  }
}

TEST_CASE("load_npy escapes the file's bytes in its messages, so a NUL does not cut them short") {
  TempDir dir;
  const fs::path path = dir / "nul.npy";
  const std::string p = path.string();

  SUBCASE("a header whose length field lies takes in the array data, NUL bytes and all") {
    const std::string header = dict("<f8", "(2,)") + "\n";
    REQUIRE(header.size() == 58);
    std::string bytes = npy_bytes(dict("<f8", "(2,)"), f8({1, 2}));
    bytes[8] = static_cast<char>(header.size() + 16);  // the length now covers the data too
    write_file(path, bytes);
    CHECK_WHOLE_IO_ERROR(
        load_npy<Vector<double>>(path),
        p + ": malformed npy header: expected only padding after '}' at offset 58, found "
            "'\\x00' in \"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\\x0A"
            "\\x00\\x00\\x00\\x00\\x00\\x00\\xF0?\\x00\\x00\\x00\\x00\\x00\\x00\\x00@\"");
  }
  SUBCASE("a dtype holding a NUL byte") {
    write_file(path, npy_bytes(dict("<f\0"
                                    "8"s,
                                    "(2,)"),
                               f8({1, 2})));
    CHECK_WHOLE_IO_ERROR(load_npy<Vector<double>>(path),
                         p + ": unsupported dtype '<f\\x008' (supported: <f4, <f8, <i4, <i8)");
  }
  SUBCASE("a key and a value holding NUL bytes") {
    write_file(path,
               npy_bytes("{'descr': '<f8', 'fortran_order': F\0, 'shape': (2,), }"s, f8({1, 2})));
    CHECK_WHOLE_IO_ERROR(load_npy<Vector<double>>(path),
                         p + ": malformed npy header: expected True or False for 'fortran_order', "
                             "found F\\x00 in \"{'descr': '<f8', 'fortran_order': F\\x00, "
                             "'shape': (2,), }\"");
  }
  SUBCASE("magic bytes") {
    write_file(path, "\0\0\0\0\0\0\0\0"s);
    CHECK_WHOLE_IO_ERROR(load_npy<Vector<double>>(path),
                         p + ": not a .npy file: expected the magic string \"\\x93NUMPY\", found "
                             "\"\\x00\\x00\\x00\\x00\\x00\\x00\"");
  }
}

TEST_CASE("load_npy refuses float64 values beyond float32's range unless allow_lossy is set") {
  TempDir dir;
  const fs::path path = dir / "big.npy";
  const std::string p = path.string();
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  constexpr double inf = std::numeric_limits<double>::infinity();
  constexpr auto float_max = static_cast<double>(std::numeric_limits<float>::max());
  // float32 rounds everything from max + half an ulp (2^128 - 2^103) upwards to inf.
  const double first_overflow = std::ldexp(1.0, 128) - std::ldexp(1.0, 103);
  const double last_finite = std::nextafter(first_overflow, 0.0);

  // Values that only lose precision load, NaN and inf stay as they are.
  write_file(path, npy_bytes(dict("<f8", "(2, 3)"), f8({0.1, 1e-50, -last_finite, nan, -inf, 2})));
  const auto fine = load_npy<Matrix<float>>(path);
  CHECK(fine(0, 0) == 0.1f);
  CHECK(fine(0, 1) == 0.0f);
  CHECK(fine(0, 2) == -std::numeric_limits<float>::max());
  CHECK(std::isnan(fine(1, 0)));
  CHECK(fine(1, 1) == -std::numeric_limits<float>::infinity());
  CHECK(fine(1, 2) == 2.0f);

  // A value that would become inf is refused, naming it and where it is.
  write_file(path, npy_bytes(dict("<f8", "(2, 3)"), f8({0.1, float_max, nan, -inf, 2, 1e300})));
  CHECK_IO_ERROR_IS(load_npy<Matrix<float>>(path),
                    p + ": cannot convert <f8 data to float32: element [1, 2] is 1e+300, beyond "
                        "float32's largest value 3.4028235e+38 (it would become inf); load it as "
                        "float64, or set NpyLoadOptions::allow_lossy to accept inf");
  CHECK(load_npy<Matrix<double>>(path)(1, 2) == 1e300);  // float64 holds it
  const auto lossy = load_npy<Matrix<float>>(path, NpyLoadOptions{.allow_lossy = true});
  CHECK(lossy(0, 1) == std::numeric_limits<float>::max());
  CHECK(std::isnan(lossy(0, 2)));
  CHECK(lossy(1, 2) == std::numeric_limits<float>::infinity());

  write_file(path, npy_bytes(dict("<f8", "(3,)"), f8({1, -first_overflow, 2})));
  CHECK_IO_ERROR(load_npy<Vector<float>>(path),
                 "element [1] is -3.4028235677973366e+38, beyond float32's largest value");
  CHECK(load_npy<Vector<float>>(path, {.allow_lossy = true})(1) ==
        -std::numeric_limits<float>::infinity());

  // Fortran order: the index is numpy's, not the position in the file.
  write_file(path, npy_bytes(dict("<f8", "(2, 2)", true), f8({1, 2, -1e39, 4})));
  CHECK_IO_ERROR(load_npy<Matrix<float>>(path), "element [0, 1] is -1e+39");
}

// =============================================================================================
// save_npy
// =============================================================================================

namespace {

struct SavedNpy {
  std::string header;  ///< the header text (dict, padding and '\n')
  std::string data;    ///< the bytes after the header
};

/// Splits a version 1.0 .npy file, checking the fixed parts of the format on the way.
SavedNpy split_saved(const fs::path& path) {
  const std::string bytes = read_file(path);
  REQUIRE(bytes.size() >= 10);
  CHECK(bytes.substr(0, 8) == "\x93NUMPY\x01\x00"s);
  const std::size_t header_size =
      static_cast<unsigned char>(bytes[8]) +
      256 * static_cast<std::size_t>(static_cast<unsigned char>(bytes[9]));
  CHECK((10 + header_size) % 64 == 0);
  REQUIRE(bytes.size() >= 10 + header_size);
  SavedNpy out{bytes.substr(10, header_size), bytes.substr(10 + header_size)};
  CHECK(out.header.back() == '\n');
  return out;
}

}  // namespace

TEST_CASE_TEMPLATE("save_npy writes a Matrix in C order and it loads back", T, float, double) {
  TempDir dir;
  Matrix<T> m(2, 3);
  m << 1, -2, 3.5, 0, 1024, -0.25;
  save_npy(dir / "m.npy", m);
  CHECK(dir.entries() == std::vector<std::string>{"m.npy"});

  const SavedNpy saved = split_saved(dir / "m.npy");
  const std::string descr = std::is_same_v<T, float> ? "<f4" : "<f8";
  CHECK(saved.header.starts_with("{'descr': '" + descr +
                                 "', 'fortran_order': False, 'shape': (2, 3), }"));
  const std::string expected_data = std::is_same_v<T, float> ? f4({1, -2, 3.5f, 0, 1024, -0.25f})
                                                             : f8({1, -2, 3.5, 0, 1024, -0.25});
  CHECK(saved.data == expected_data);
  CHECK(load_npy<Matrix<T>>(dir / "m.npy") == m);
}

TEST_CASE("save_npy writes a Vector with shape (n,) and Labels as <i8") {
  TempDir dir;
  Vector<double> v(3);
  v << 0.5, -1, 7;
  save_npy(dir / "v.npy", v);
  const SavedNpy saved_v = split_saved(dir / "v.npy");
  CHECK(saved_v.header.starts_with("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"));
  CHECK(saved_v.data == f8({0.5, -1, 7}));
  CHECK(load_npy<Vector<double>>(dir / "v.npy") == v);

  Labels y(4);
  y << 2, 0, -1, 5000000000;
  save_npy(dir / "y.npy", y);
  const SavedNpy saved_y = split_saved(dir / "y.npy");
  CHECK(saved_y.header.starts_with("{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }"));
  CHECK(saved_y.data == i8({2, 0, -1, 5000000000}));
  CHECK(load_npy<Labels>(dir / "y.npy") == y);

  Vector<std::int32_t> small(2);
  small << -7, 9;
  save_npy(dir / "s.npy", small);
  CHECK(split_saved(dir / "s.npy").data == i4({-7, 9}));

  CHECK(dir.entries() == std::vector<std::string>{"s.npy", "v.npy", "y.npy"});
}

TEST_CASE("save_npy writes column-major and strided expressions in C order") {
  TempDir dir;
  Eigen::MatrixXd col_major(2, 3);  // column-major storage
  col_major << 1, 2, 3, 4, 5, 6;
  save_npy(dir / "c.npy", col_major);
  const SavedNpy saved = split_saved(dir / "c.npy");
  CHECK(saved.header.starts_with("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"));
  CHECK(saved.data == f8({1, 2, 3, 4, 5, 6}));

  Matrix<double> expected(2, 3);
  expected << 1, 2, 3, 4, 5, 6;
  CHECK(load_npy<Matrix<double>>(dir / "c.npy") == expected);

  // A block of a row-major matrix has padding between its rows; an expression has no storage.
  Matrix<double> big(3, 4);
  big << 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12;
  save_npy(dir / "b.npy", big.block(1, 1, 2, 2));
  CHECK(split_saved(dir / "b.npy").data == f8({6, 7, 10, 11}));
  save_npy(dir / "e.npy", big.topRows(1) * 2);
  CHECK(split_saved(dir / "e.npy").data == f8({2, 4, 6, 8}));
  save_npy(dir / "col.npy", big.col(2));  // a strided column: shape (3,)
  const SavedNpy column = split_saved(dir / "col.npy");
  CHECK(column.header.starts_with("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"));
  CHECK(column.data == f8({3, 7, 11}));
  save_npy(dir / "a.npy", Eigen::ArrayXXf::Constant(1, 2, 0.5f));
  CHECK(split_saved(dir / "a.npy").data == f4({0.5f, 0.5f}));

  CHECK(dir.entries() == std::vector<std::string>{"a.npy", "b.npy", "c.npy", "col.npy", "e.npy"});
}

TEST_CASE("save_npy replaces an existing file and leaves no temporary file") {
  TempDir dir;
  write_file(dir / "x.npy", "old contents");
  Matrix<float> m = Matrix<float>::Constant(3, 2, 1.25f);
  save_npy(dir / "x.npy", m);
  CHECK(load_npy<Matrix<float>>(dir / "x.npy") == m);
  CHECK(dir.entries() == std::vector<std::string>{"x.npy"});
}

TEST_CASE("save_npy into a missing directory throws io_error and creates nothing") {
  TempDir dir;
  const fs::path path = dir / "no_such_dir" / "x.npy";
  const Matrix<double> m = Matrix<double>::Zero(2, 2);
  CHECK_IO_ERROR(save_npy(path, m), path.string() + ": cannot create temporary file");
  CHECK_IO_ERROR(save_npy(path, m), "No such file or directory");
  CHECK(dir.entries().empty());
}

TEST_CASE("save_npy onto a directory fails at the rename and removes its temporary file") {
  TempDir dir;
  fs::create_directories(dir / "taken" / "child");  // a non-empty directory cannot be replaced
  CHECK_IO_ERROR(save_npy(dir / "taken", Vector<double>::Zero(2)), "cannot rename temporary file");
  CHECK(dir.entries() == std::vector<std::string>{"taken"});
}

#ifdef ONELEARN_TEST_POSIX
namespace {

/// Lowers the file size limit for this process, as a full disk would stop a write: write()
/// then fails with EFBIG (SIGXFSZ, which would kill the process, is ignored meanwhile).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_limit_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = old_limit_;
    limit.rlim_cur = old_limit_.rlim_max == RLIM_INFINITY ? bytes : std::min(bytes, limit.rlim_max);
    ok_ = ::setrlimit(RLIMIT_FSIZE, &limit) == 0;
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_limit_);
    std::signal(SIGXFSZ, old_handler_);
  }
  [[nodiscard]] bool ok() const { return ok_; }

 private:
  rlimit old_limit_{};
  void (*old_handler_)(int) = nullptr;
  bool ok_ = false;
};

}  // namespace

TEST_CASE("save_npy whose write fails half-way keeps the old file and leaves no temporary file") {
  TempDir dir;
  const fs::path path = dir / "x.npy";
  write_file(path, "old contents");
  const Matrix<double> m = Matrix<double>::Ones(100, 100);  // 80 kB, far over the limit
  std::string message;
  bool limited = false;
  {
    // Nothing but the save runs under the limit: a test log written to a file must not fail.
    FileSizeLimit limit(4096);
    limited = limit.ok();
    message = io_error_message([&] {
      save_npy(path, m);
      return 0;
    });
  }
  REQUIRE(limited);
  CHECK(message.starts_with(path.string() + ": cannot write temporary file '" + path.string() +
                            ".onelearn-tmp."));
  CHECK(message.ends_with("': File too large"));
  CHECK(read_file(path) == "old contents");
  CHECK(dir.entries() == std::vector<std::string>{"x.npy"});

  // The same save without the limit succeeds, and leaves nothing but its file either.
  save_npy(path, m);
  CHECK(load_npy<Matrix<double>>(path) == m);
  CHECK(dir.entries() == std::vector<std::string>{"x.npy"});
}
#endif

// =============================================================================================
// load_csv
// =============================================================================================

TEST_CASE_TEMPLATE("load_csv reads features and a label column chosen in every way", T, float,
                   double) {
  TempDir dir;
  const fs::path path = dir / "d.csv";
  write_file(path,
             "a,b,label,c\n"
             "1.5,-2,0,3e2\n"
             "0.25,4,1,-7\n");
  Matrix<T> all(2, 4);
  all << 1.5, -2, 0, 300, 0.25, 4, 1, -7;
  Matrix<T> features(2, 3);
  features << 1.5, -2, 300, 0.25, 4, -7;

  SUBCASE("no label column") {
    const auto data = load_csv<T>(path);
    CHECK(data.features() == all);
    CHECK_FALSE(data.has_targets());
    CHECK(data.feature_names() == std::vector<std::string>{"a", "b", "label", "c"});
  }
  SUBCASE("by name") {
    const auto data = load_csv<T, std::int64_t>(path, {.label_column = std::string("label")});
    CHECK(data.features() == features);
    CHECK(data.targets() == (Labels(2) << 0, 1).finished());
    CHECK(data.feature_names() == std::vector<std::string>{"a", "b", "c"});
  }
  SUBCASE("by index") {
    const auto data = load_csv<T, std::int64_t>(path, {.label_column = index_t{2}});
    CHECK(data.features() == features);
    CHECK(data.targets() == (Labels(2) << 0, 1).finished());
  }
  SUBCASE("by negative index") {
    const auto data = load_csv<T>(path, {.label_column = index_t{-1}});
    CHECK(data.features() == all.leftCols(3));
    CHECK(data.targets() == (Vector<T>(2) << 300, -7).finished());
    CHECK(data.feature_names() == std::vector<std::string>{"a", "b", "label"});
  }
}

TEST_CASE_TEMPLATE("load_csv handles ';', CRLF, spaces, quotes, blank lines and no header", T,
                   float, double) {
  TempDir dir;
  const fs::path path = dir / "d.csv";
  Matrix<T> expected(2, 3);
  expected << 1, 2.5, -3, 4, +5, 6;

  SUBCASE("semicolons and CRLF") {
    write_file(path, "x;y;z\r\n1;2.5;-3\r\n4;+5;6\r\n");
    const auto data = load_csv<T>(path, {.delimiter = ';'});
    CHECK(data.features() == expected);
    CHECK(data.feature_names() == std::vector<std::string>{"x", "y", "z"});
  }
  SUBCASE("spaces, quotes, blank lines, no final newline") {
    write_file(path, "\"x\", \"y\" ,z\n\n  1 ,\"2.5\", -3\n \n4,5,\" 6 \"");
    const auto data = load_csv<T>(path);
    CHECK(data.features() == expected);
    CHECK(data.feature_names() == std::vector<std::string>{"x", "y", "z"});
  }
  SUBCASE("tabs, no header") {
    write_file(path, "1\t2.5\t-3\n4\t5\t6\n\n");
    const auto data = load_csv<T>(path, {.delimiter = '\t', .header = false});
    CHECK(data.features() == expected);
    CHECK(data.feature_names().empty());
  }
  SUBCASE("byte order mark") {
    write_file(path, "\xEF\xBB\xBFx,y,z\n1,2.5,-3\n4,5,6\n");
    const auto data = load_csv<T>(path);
    CHECK(data.features() == expected);
    CHECK(data.feature_names().front() == "x");
  }
}

TEST_CASE("load_csv reads integral labels written as floats, as numpy.savetxt does") {
  TempDir dir;
  const fs::path path = dir / "d.csv";
  write_file(path,
             "5.000000000000000000e+00 2.000000000000000000e+00\n"
             "1.500000000000000000e+00 0.000000000000000000e+00\n");
  const auto data = load_csv<double, std::int64_t>(
      path, {.delimiter = ' ', .header = false, .label_column = index_t{1}});
  CHECK(data.features() == (Matrix<double>(2, 1) << 5, 1.5).finished());
  CHECK(data.targets() == (Labels(2) << 2, 0).finished());
}

TEST_CASE("load_csv reports bad rows and fields with line and column") {
  TempDir dir;
  const fs::path path = dir / "bad.csv";
  const std::string p = path.string();

  SUBCASE("ragged row") {
    write_file(path, "a,b,c\n1,2,3\n4,5\n");
    CHECK_IO_ERROR_IS(load_csv<double>(path), p + ":3: expected 3 fields, found 2");
  }
  SUBCASE("too many fields, line numbers count blank lines") {
    write_file(path, "a,b\r\n\r\n1,2\r\n3,4,5\r\n");
    CHECK_IO_ERROR(load_csv<double>(path), p + ":4: expected 2 fields, found 3");
  }
  SUBCASE("not a number, with a header") {
    write_file(path, "a,b,c\n1,abc,3\n");
    CHECK_IO_ERROR_IS(load_csv<float>(path),
                      p + ":2, column 2 ('b'): expected a number, found 'abc'");
  }
  SUBCASE("not a number, without a header") {
    write_file(path, "1,2,3\n4,5,6x\n");
    CHECK_IO_ERROR_IS(load_csv<double>(path, {.header = false}),
                      p + ":2, column 3: expected a number, found '6x'");
  }
  SUBCASE("empty field: a missing value (NaN) by default, an error with no missing markers") {
    write_file(path, "a,b\n1,\n");
    CHECK(std::isnan(load_csv<double>(path).features()(0, 1)));
    CHECK_IO_ERROR(load_csv<double>(path, {.na_values = {}}),
                   p + ":2, column 2 ('b'): expected a number, found ''");
  }
  SUBCASE("non-integral label") {
    write_file(path, "x,y\n1,0\n2,1.5\n");
    const auto load = [&] {
      return load_csv<double, std::int64_t>(path, {.label_column = std::string("y")});
    };
    CHECK_IO_ERROR_IS(load(), p + ":3, column 2 ('y'): expected an integer, found '1.5'");
  }
  SUBCASE("unknown label column name lists the header") {
    write_file(path, "x,y\n1,0\n");
    CHECK_IO_ERROR_IS(load_csv<double>(path, {.label_column = std::string("target")}),
                      p + ": no column named 'target'; the header has 'x', 'y'");
  }
  SUBCASE("label column by name without a header") {
    write_file(path, "1,0\n");
    const CsvOptions options{.header = false, .label_column = std::string("y")};
    CHECK_IO_ERROR(load_csv<double>(path, options), "CsvOptions::header is false");
  }
  SUBCASE("label column index out of range") {
    write_file(path, "x,y\n1,0\n");
    CHECK_IO_ERROR(load_csv<double>(path, {.label_column = index_t{2}}),
                   p + ": label column index 2 is out of range for 2 columns");
    CHECK_IO_ERROR(load_csv<double>(path, {.label_column = index_t{-3}}),
                   "label column index -3 is out of range for 2 columns");
  }
  SUBCASE("empty file") {
    write_file(path, "");
    CHECK_IO_ERROR_IS(load_csv<double>(path), p + ": no data rows");
    CHECK_IO_ERROR(load_csv<double>(path, {.header = false}), p + ": no data rows");
  }
  SUBCASE("header only") {
    write_file(path, "a,b\r\n\r\n");
    CHECK_IO_ERROR(load_csv<double>(path), p + ": no data rows");
  }
  SUBCASE("missing file") {
    const fs::path missing = dir / "missing.csv";
    CHECK_IO_ERROR(load_csv<double>(missing),
                   missing.string() + ": cannot open for reading: No such file or directory");
  }
}

TEST_CASE("load_csv reads LF, CRLF and CR-only (old Mac) line ends alike, mixed too") {
  TempDir dir;
  const fs::path path = dir / "ends.csv";
  const Matrix<double> expected = (Matrix<double>(2, 2) << 1, 2, 3, 4).finished();
  for (const std::string text : {"a,b\n1,2\n3,4\n", "a,b\r\n1,2\r\n3,4\r\n", "a,b\r1,2\r3,4\r",
                                 "a,b\r1,2\r\n3,4\n", "a,b\r1,2\r3,4", "a,b\n\r\r\n1,2\r\r3,4"}) {
    CAPTURE(text);
    write_file(path, text);
    const auto data = load_csv<double>(path);
    CHECK(data.features() == expected);
    CHECK(data.feature_names() == std::vector<std::string>{"a", "b"});
  }

  // Line numbers count a CR, an LF and a CRLF as one line end each; blank lines count.
  const std::string p = path.string();
  write_file(path, "a,b\r\r1,2\r3,x\r");
  CHECK_IO_ERROR_IS(load_csv<double>(path), p + ":4, column 2 ('b'): expected a number, found 'x'");
  write_file(path, "a,b\r\r\n1,x\n");  // CR, then CRLF: a blank line 2
  CHECK_IO_ERROR(load_csv<double>(path), p + ":3, column 2 ('b')");
  write_file(path, "a,b\r\r");
  CHECK_IO_ERROR_IS(load_csv<double>(path), p + ": no data rows");
}

TEST_CASE("load_csv escapes the file's bytes in its messages, so a NUL does not cut them short") {
  TempDir dir;
  const fs::path path = dir / "nul.csv";
  const std::string p = path.string();

  write_file(path, "a,b\n1\0,2\n"s);
  CHECK_WHOLE_IO_ERROR(load_csv<double>(path),
                       p + ":2, column 1 ('a'): expected a number, found '1\\x00'");

  write_file(path, "a\0x,b\x01\n1,2\x7f\n"s);
  CHECK_WHOLE_IO_ERROR(load_csv<double>(path),
                       p + ":2, column 2 ('b\\x01'): expected a number, found '2\\x7F'");
  CHECK_WHOLE_IO_ERROR(load_csv<double>(path, {.label_column = std::string("y")}),
                       p + ": no column named 'y'; the header has 'a\\x00x', 'b\\x01'");

  write_file(path, "a,b\n1,2\n3,4\0\n"s);
  CHECK_WHOLE_IO_ERROR(load_csv<std::int64_t>(path),
                       p + ":3, column 2 ('b'): expected an integer, found '4\\x00'");
}

TEST_CASE("load_csv into float refuses numbers beyond float's range unless allow_lossy is set") {
  TempDir dir;
  const fs::path path = dir / "big.csv";
  const std::string p = path.string();
  constexpr float float_max = std::numeric_limits<float>::max();
  constexpr float inf = std::numeric_limits<float>::infinity();

  // Numbers that only lose precision load, tiny ones as 0; "nan" and "inf" stay as they are.
  write_file(path, "a,b\n0.1,1e-50\n3.4028235e38,nan\n-inf,-3.40282356e38\n");
  const auto fine = load_csv<float>(path);
  CHECK(fine.features()(0, 0) == 0.1f);
  CHECK(fine.features()(0, 1) == 0.0f);
  CHECK(fine.features()(1, 0) == float_max);
  CHECK(std::isnan(fine.features()(1, 1)));
  CHECK(fine.features()(2, 0) == -inf);
  CHECK(fine.features()(2, 1) == -float_max);

  write_file(path, "a,b\n0.1,2\n+1e39,4\n");
  CHECK_IO_ERROR_IS(load_csv<float>(path),
                    p + ":3, column 1 ('a'): expected a number that a float can hold (magnitude at "
                        "most 3.4028235e+38), found '+1e39', which would become inf; set "
                        "CsvOptions::allow_lossy to accept inf");
  CHECK(load_csv<double>(path).features()(1, 0) == 1e39);  // a double holds it
  const auto lossy = load_csv<float>(path, {.allow_lossy = true});
  CHECK(lossy.features()(1, 0) == inf);
  CHECK(lossy.features()(0, 0) == 0.1f);

  // The label column too.
  write_file(path, "x,y\n1,-3.40282357e38\n");
  CHECK_IO_ERROR((load_csv<double, float>(path, {.label_column = std::string("y")})),
                 p + ":2, column 2 ('y'): expected a number that a float can hold");
  const auto labels =
      load_csv<double, float>(path, {.label_column = std::string("y"), .allow_lossy = true});
  CHECK(labels.targets()(0) == -inf);
  CHECK(labels.features()(0, 0) == 1.0);
}
