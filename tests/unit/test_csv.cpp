// Tests for reading CSV tables: io::load_csv and io::read_table over the RFC 4180 tokenizer
// (quoting, escaped quotes, delimiters and line ends inside quotes, CRLF, missing values, text
// columns, column types, errors with file, line and column, the parallel chunked parse of large
// files), and LabelEncoder<std::string>, which takes a table's text column.
//
// Expected values are written by hand from the literal CSV text of each test; the large-file
// tests compute theirs from the formula that wrote the file.

#include <doctest/doctest.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/io/csv.hpp"
#include "onelearn/io/table.hpp"
#include "onelearn/preprocessing/label_encoder.hpp"
#include "onelearn/preprocessing/one_hot_encoder.hpp"
#include "onelearn/preprocessing/simple_imputer.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using onelearn::test::TempDir;
using onelearn::test::write_file;
using namespace std::string_literals;
using onelearn::index_t;
using onelearn::Labels;
using onelearn::Matrix;
using onelearn::Vector;
using onelearn::io::ColumnType;
using onelearn::io::load_csv;
using onelearn::io::read_table;
using onelearn::io::Table;
using onelearn::io::TableOptions;
using Strings = std::vector<std::string>;

bool all_nan(const std::vector<double>& values) {
  for (const double v : values) {
    if (!std::isnan(v)) return false;
  }
  return true;
}

#define CHECK_IO_ERROR_IS(expr, message) \
  CHECK_THROWS_WITH_AS(static_cast<void>(expr), std::string(message).c_str(), onelearn::io_error)
#define CHECK_INVALID(expr, fragment)                                                     \
  CHECK_THROWS_WITH_AS(static_cast<void>(expr),                                           \
                       doctest::Contains(doctest::String(std::string(fragment).c_str())), \
                       onelearn::invalid_argument)

}  // namespace

// =============================================================================================
// RFC 4180 quoting
// =============================================================================================

TEST_CASE("read_table reads quoted fields: escaped quotes, delimiters and line ends inside") {
  TempDir dir;
  const fs::path path = dir / "q.csv";
  write_file(path,
             "id,name,comment\r\n"
             "1,\"Smith, John\",\"said \"\"hi\"\"\r\nthen left\"\r\n"
             "2,plain,  spaced  \r\n"
             "3,\"\",\"a\nb,c\"\r\n");
  const Table table = read_table(path);
  CHECK(table.rows() == 3);
  CHECK(table.names() == Strings{"id", "name", "comment"});
  CHECK(table.type("id") == ColumnType::number);
  CHECK(table.numbers("id") == std::vector<double>{1, 2, 3});
  CHECK(table.type("name") == ColumnType::text);
  CHECK(table.text("name") == Strings{"Smith, John", "plain", ""});
  CHECK(table.text(2) == Strings{"said \"hi\"\r\nthen left", "spaced", "a\nb,c"});
}

TEST_CASE("load_csv reads quoted numbers and quoted header names with delimiters and quotes") {
  TempDir dir;
  const fs::path path = dir / "q.csv";
  write_file(path, "\"a,1\",\"b \"\"2\"\"\",c\n\"1.5\", \" -2 \" ,3\n4,\"5\",\"6\"\n");
  const auto data = load_csv<double>(path);
  CHECK(data.feature_names() == Strings{"a,1", "b \"2\"", "c"});
  CHECK(data.features() == (Matrix<double>(2, 3) << 1.5, -2, 3, 4, 5, 6).finished());
}

TEST_CASE("CRLF, LF and CR line ends, blank lines and a byte order mark read alike") {
  TempDir dir;
  const fs::path path = dir / "ends.csv";
  for (const std::string text : {"k,v\nx,1\ny,2\n", "k,v\r\nx,1\r\ny,2\r\n", "k,v\rx,1\ry,2",
                                 "\xEF\xBB\xBFk,v\r\n\r\nx,1\n  \ny,2"}) {
    CAPTURE(text);
    write_file(path, text);
    const Table table = read_table(path);
    CHECK(table.names() == Strings{"k", "v"});
    CHECK(table.text("k") == Strings{"x", "y"});
    CHECK(table.numbers("v") == std::vector<double>{1, 2});
  }
}

TEST_CASE("a delimiter that can be part of a number still separates fields") {
  TempDir dir;
  const fs::path path = dir / "dots.csv";
  const std::string p = path.string();
  write_file(path, "a.b\n1.5\n-2.25\n");
  CHECK(load_csv<double>(path, {.delimiter = '.'}).features() ==
        (Matrix<double>(2, 2) << 1, 5, -2, 25).finished());
  write_file(path, "a.b\n1.5.7\n");  // not the row (1.5, 7)
  CHECK_IO_ERROR_IS(load_csv<double>(path, {.delimiter = '.'}),
                    p + ":2: expected 2 fields, found 3");
  CHECK_IO_ERROR_IS(read_table(path, {.delimiter = '.'}), p + ":2: expected 2 fields, found 3");
  write_file(path, "aeb\n1e5\n");
  CHECK(read_table(path, {.delimiter = 'e'}).numbers("b") == std::vector<double>{5});
}

// =============================================================================================
// Missing values
// =============================================================================================

TEST_CASE("empty cells and NA/NaN markers are missing values: NaN in numeric columns") {
  TempDir dir;
  const fs::path path = dir / "na.csv";
  write_file(path,
             "a,b,c,d\n"
             "1,,NA,x\n"
             "NaN,2,N/A,NA\n"
             "\"\",3,null,\n"
             "-nan,#N/A,None,y\n");

  SUBCASE("read_table") {
    const Table table = read_table(path);
    const std::vector<double>& a = table.numbers("a");
    REQUIRE(a.size() == 4);
    CHECK(a[0] == 1);
    CHECK(std::isnan(a[1]));
    CHECK(std::isnan(a[2]));
    CHECK(std::isnan(a[3]));
    const std::vector<double>& b = table.numbers("b");
    CHECK(std::isnan(b[0]));
    CHECK(b[1] == 2);
    CHECK(b[2] == 3);
    CHECK(std::isnan(b[3]));
    CHECK(table.type("c") == ColumnType::number);  // only missing values: numeric, all NaN
    CHECK(all_nan(table.numbers("c")));
    // In a text column the markers stay text.
    CHECK(table.text("d") == Strings{"x", "NA", "", "y"});
  }
  SUBCASE("load_csv, then SimpleImputer fills them") {
    write_file(path, "a,b\n1,\n3,NA\nnan,8\n");
    const auto data = load_csv<double>(path);
    CHECK(std::isnan(data.features()(0, 1)));
    CHECK(std::isnan(data.features()(1, 1)));
    CHECK(std::isnan(data.features()(2, 0)));
    onelearn::preprocessing::SimpleImputer<double> imputer({.strategy = "mean"});
    CHECK(imputer.fit_transform(data.features()) ==
          (Matrix<double>(3, 2) << 1, 8, 3, 8, 2, 8).finished());
  }
  SUBCASE("float columns too") {
    write_file(path, "a,b\n1,\n");
    CHECK(std::isnan(load_csv<float>(path).features()(0, 1)));
  }
}

TEST_CASE("the missing-value markers can be replaced; markers match whole cells only") {
  TempDir dir;
  const fs::path path = dir / "na.csv";
  const std::string p = path.string();
  write_file(path, "a,b\n1,?\n2,NA\n");
  CHECK_IO_ERROR_IS(load_csv<double>(path, {.na_values = {"?"}}),
                    p + ":3, column 2 ('b'): expected a number, found 'NA'");
  const Table table = read_table(path, {.na_values = {"?", "NA"}});
  CHECK(all_nan(table.numbers("b")));
  // "na" (lower case) is not a marker: the column is text.
  write_file(path, "a\nna\n1\n");
  CHECK(read_table(path).text("a") == Strings{"na", "1"});
}

TEST_CASE("an integer label column cannot hold a missing value") {
  TempDir dir;
  const fs::path path = dir / "y.csv";
  const std::string p = path.string();
  write_file(path, "x,y\n1,0\n2,\n");
  CHECK_IO_ERROR_IS((load_csv<double, std::int64_t>(path, {.label_column = std::string("y")})),
                    p + ":3, column 2 ('y'): expected an integer, found '', a missing value, "
                        "which an integer column cannot hold");
}

// =============================================================================================
// Column types
// =============================================================================================

TEST_CASE("read_table infers each column's type: numbers, or text if any cell is text") {
  TempDir dir;
  const fs::path path = dir / "t.csv";
  write_file(path,
             "x,color,code,late\n"
             "1.5,red,7,1\n"
             " +2 ,blue,008,2\n"
             "\" 3 \",\"green\",9,two\n");
  const Table table = read_table(path);
  CHECK(table.cols() == 4);
  CHECK(table.numbers("x") == std::vector<double>{1.5, 2, 3});
  CHECK(table.text("color") == Strings{"red", "blue", "green"});
  CHECK(table.numbers("code") == std::vector<double>{7, 8, 9});
  // Text in the last row only: every cell of the column is kept as it was written.
  CHECK(table.type("late") == ColumnType::text);
  CHECK(table.text("late") == Strings{"1", "2", "two"});
  CHECK(table.columns(ColumnType::number).size() == 2);
  CHECK(table.to_matrix<double>(table.columns(ColumnType::number)) ==
        (Matrix<double>(3, 2) << 1.5, 7, 2, 8, 3, 9).finished());
}

TEST_CASE("read_table takes column types given by name and by index") {
  TempDir dir;
  const fs::path path = dir / "t.csv";
  const std::string p = path.string();
  write_file(path, "x,code,y\n1,007,0.5\n2,010,abc\n");

  SUBCASE("text by name keeps numbers as written; number by index") {
    const Table table = read_table(
        path, {.column_types = {{"code", ColumnType::text}, {index_t{0}, ColumnType::number}}});
    CHECK(table.text("code") == Strings{"007", "010"});
    CHECK(table.numbers("x") == std::vector<double>{1, 2});
    CHECK(table.text("y") == Strings{"0.5", "abc"});  // inferred
  }
  SUBCASE("every column text by default") {
    const Table table = read_table(path, {.default_type = ColumnType::text});
    CHECK(table.text("x") == Strings{"1", "2"});
    CHECK(table.columns(ColumnType::number).empty());
  }
  SUBCASE("a text cell in a column declared numeric is an error with line and column") {
    CHECK_IO_ERROR_IS(read_table(path, {.column_types = {{index_t{-1}, ColumnType::number}}}),
                      p + ":3, column 3 ('y'): expected a number (the column is declared "
                          "numeric), found 'abc'");
    CHECK_IO_ERROR_IS(read_table(path, {.default_type = ColumnType::number}),
                      p + ":3, column 3 ('y'): expected a number (the column is declared "
                          "numeric), found 'abc'");
  }
  SUBCASE("a column that is not there") {
    CHECK_IO_ERROR_IS(read_table(path, {.column_types = {{"zz", ColumnType::text}}}),
                      p + ": no column named 'zz'; the header has 'x', 'code', 'y'");
    CHECK_IO_ERROR_IS(read_table(path, {.column_types = {{index_t{3}, ColumnType::text}}}),
                      p + ": column index 3 is out of range for 3 columns");
    CHECK_IO_ERROR_IS(
        read_table(path, {.header = false, .column_types = {{"x", ColumnType::text}}}),
        p + ": column 'x' is given by name, but TableOptions::header is false");
  }
}

TEST_CASE("a table without a header is indexed by position") {
  TempDir dir;
  const fs::path path = dir / "t.csv";
  write_file(path, "1;a\n2;b\n");
  const Table table = read_table(path, {.delimiter = ';', .header = false});
  CHECK(table.names().empty());
  CHECK(table.numbers(0) == std::vector<double>{1, 2});
  CHECK(table.text(-1) == Strings{"a", "b"});
  CHECK_INVALID(table.index("a"), "Table: no column named 'a'; the table has no header");
}

TEST_CASE("Table converts numeric columns to a Matrix and a Vector, and refuses text") {
  TempDir dir;
  const fs::path path = dir / "t.csv";
  write_file(path, "a,s,b,y\n1,u,2,0\n3,v,4,2\n5,u,,1\n");
  const Table table = read_table(path);
  const Matrix<float> X = table.to_matrix<float>({"b", index_t{0}});
  CHECK(X(0, 0) == 2.0f);
  CHECK(X(1, 0) == 4.0f);
  CHECK(std::isnan(X(2, 0)));
  CHECK(X.col(1) == (Vector<float>(3) << 1, 3, 5).finished());
  CHECK(table.to_vector<std::int64_t>("y") == (Labels(3) << 0, 2, 1).finished());
  CHECK_INVALID(table.to_matrix<double>(),
                "Table::to_matrix: column 2 ('s') holds text; expected numeric columns");
  CHECK_INVALID(table.numbers("s"), "Table::numbers: column 2 ('s') holds text");
  CHECK_INVALID(table.text("a"), "Table::text: column 1 ('a') is numeric");
  CHECK_INVALID(table.to_vector<std::int64_t>("b"),
                "Table::to_vector: column 3 ('b'), row 2: expected an integer (NaN is a missing "
                "value), found nan");
  CHECK_INVALID(table.index("zz"),
                "Table: no column named 'zz'; the columns are 'a', 's', 'b', 'y'");
  CHECK_INVALID(table.index(index_t{4}), "Table: column index 4 is out of range for 4 columns");

  write_file(path, "a\n1e39\n");
  CHECK_INVALID(read_table(path).to_matrix<float>(),
                "Table::to_matrix: column 1 ('a'), row 0: expected a number the type can hold");
  CHECK(read_table(path).to_matrix<double>()(0, 0) == 1e39);
}

// =============================================================================================
// Errors: file, line and column
// =============================================================================================

TEST_CASE("an unterminated quote is reported at the line where the field starts") {
  TempDir dir;
  const fs::path path = dir / "bad.csv";
  const std::string p = path.string();
  write_file(path, "a,b\n1,2\n3,\"abc\n4,5\n");
  const std::string message = p +
                              ":3, column 2: expected a closing double quote for the quoted "
                              "field that starts on this line, found the end of the file";
  CHECK_IO_ERROR_IS(read_table(path), message);
  CHECK_IO_ERROR_IS(load_csv<double>(path), message);
  write_file(path, "\"a,b\n");  // in the header
  CHECK_IO_ERROR_IS(load_csv<double>(path),
                    p + ":1, column 1: expected a closing double quote for the quoted field that "
                        "starts on this line, found the end of the file");
}

TEST_CASE("a record with the wrong number of fields names the line where it starts") {
  TempDir dir;
  const fs::path path = dir / "bad.csv";
  const std::string p = path.string();
  write_file(path, "a,b\n1,2\n3,4,5\n");
  CHECK_IO_ERROR_IS(read_table(path), p + ":3: expected 2 fields, found 3");
  CHECK_IO_ERROR_IS(load_csv<double>(path), p + ":3: expected 2 fields, found 3");
  // A comma inside quotes is no field separator; a quoted line end is no record end.
  write_file(path, "a,b\n\"1,5\",x\n\"multi\nline\",y,z\n");
  CHECK_IO_ERROR_IS(read_table(path), p + ":3: expected 2 fields, found 3 in the record that "
                                          "starts on this line and ends on line 4");
}

TEST_CASE("a bad cell after a quoted line end is reported at the cell's own line") {
  TempDir dir;
  const fs::path path = dir / "bad.csv";
  const std::string p = path.string();
  write_file(path, "a,b\n\"multi\nline\",oops\n5,6\n");
  CHECK_IO_ERROR_IS(read_table(path, {.column_types = {{"b", ColumnType::number}}}),
                    p + ":3, column 2 ('b'): expected a number (the column is declared numeric), "
                        "found 'oops'");
  // An escaped quote is unescaped in the message, and shown as \x22 (as every quote taken
  // from a file is, so that the text between the message's quotes is unambiguous).
  write_file(path, "a,b\n1,\"2\"\"\"\n");
  CHECK_IO_ERROR_IS(load_csv<double>(path),
                    p + ":2, column 2 ('b'): expected a number, found '2\\x22'");
}

TEST_CASE("text after a closing quote, and a quote as the delimiter, are errors") {
  TempDir dir;
  const fs::path path = dir / "bad.csv";
  const std::string p = path.string();
  write_file(path, "a,b\n1,\"x\"y\n");
  CHECK_IO_ERROR_IS(read_table(path), p + ":2, column 2: expected the delimiter or a line end "
                                          "after the closing quote, found 'y'");
  CHECK_IO_ERROR_IS(read_table(path, {.delimiter = '"'}),
                    p + ": TableOptions::delimiter cannot be '\\x22': it is part of the CSV "
                        "syntax (quote or line end)");
  // A quote inside an unquoted field is text.
  write_file(path, "h\n5'11\"\n");
  CHECK(read_table(path).text("h") == Strings{"5'11\""});
}

TEST_CASE("read_table reports a missing file, a directory and a file without data") {
  TempDir dir;
  CHECK_IO_ERROR_IS(
      read_table(dir / "missing.csv"),
      (dir / "missing.csv").string() + ": cannot open for reading: No such file or directory");
  CHECK_IO_ERROR_IS(read_table(dir.path()),
                    dir.path().string() + ": cannot open for reading: it is a directory");
  const fs::path path = dir / "empty.csv";
  write_file(path, "");
  CHECK_IO_ERROR_IS(read_table(path), path.string() + ": no data rows");
  write_file(path, "a,b\r\n\r\n");
  CHECK_IO_ERROR_IS(read_table(path), path.string() + ": no data rows");
}

// =============================================================================================
// Large files: the chunked (parallel, under OpenMP) parse gives the same values and lines
// =============================================================================================

namespace {

/// "i,i/4,i%7" for i in [0, rows), then `last_line`: 1,500,000 rows are about 30 MB, several
/// chunks. The numbers are written in their shortest round-trip form.
void write_large(const fs::path& path, index_t rows, const std::string& last_line) {
  std::string text = "i,quarter,code\n";
  char buffer[32];
  for (index_t i = 0; i < rows; ++i) {
    text += std::to_string(i) + ',';
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, static_cast<double>(i) / 4).ptr;
    text.append(buffer, end);
    text += ',' + std::to_string(i % 7) + '\n';
  }
  write_file(path, text + last_line);
}

}  // namespace

TEST_CASE("a large file loads in chunks with every row in order and whole-file line numbers") {
  TempDir dir;
  const fs::path path = dir / "large.csv";
  const std::string p = path.string();
  constexpr index_t rows = 1'500'000;
  write_large(path, rows, "");
  REQUIRE(fs::file_size(path) > (std::uintmax_t{24} << 20));  // load_csv cuts 16 MiB and up

  const auto data = load_csv<double, std::int64_t>(path, {.label_column = std::string("code")});
  REQUIRE(data.size() == rows);
  bool in_order = true;
  for (index_t i = 0; i < rows && in_order; ++i) {
    in_order = data.features()(i, 0) == static_cast<double>(i) &&
               data.features()(i, 1) == static_cast<double>(i) / 4 && data.targets()(i) == i % 7;
  }
  CHECK(in_order);

  // Line 1 is the header, so row i is on line i + 2; the bad line is the last.
  write_large(path, rows, "1,2,x\n");
  CHECK_IO_ERROR_IS(load_csv<double>(path), p + ":1500002, column 3 ('code'): expected a number, "
                                                "found 'x'");
  // Text in the last line turns an inferred column to text: every cell is kept as written.
  const Table table = read_table(path);
  CHECK(table.rows() == rows + 1);
  CHECK(table.numbers("quarter")[9] == 2.25);
  const Strings& code = table.text("code");
  CHECK(code[0] == "0");
  CHECK(code[13] == "6");
  CHECK(code.back() == "x");
}

// =============================================================================================
// LabelEncoder<std::string>, and a text column on to OneHotEncoder
// =============================================================================================

TEST_CASE("LabelEncoder<std::string> round-trips text labels in sorted order") {
  using onelearn::preprocessing::LabelEncoder;
  LabelEncoder<std::string> encoder;
  const Strings y{"versicolor", "setosa", "virginica", "setosa"};
  CHECK_THROWS_AS(static_cast<void>(encoder.transform(y)), onelearn::not_fitted_error);
  CHECK(encoder.fit_transform(y) == (Labels(4) << 1, 0, 2, 0).finished());
  CHECK(encoder.classes() == Strings{"setosa", "versicolor", "virginica"});
  CHECK(encoder.n_classes() == 3);
  CHECK(encoder.inverse_transform((Labels(3) << 2, 0, 1).finished()) ==
        Strings{"virginica", "setosa", "versicolor"});
  CHECK(encoder.inverse_transform(encoder.transform(y)) == y);
  CHECK_INVALID(encoder.transform(Strings{"setosa", "rose"}),
                "LabelEncoder.transform: found unseen label 'rose' at row 1; expected one of the "
                "3 labels seen in fit");
  CHECK_INVALID(encoder.inverse_transform((Labels(1) << 3).finished()),
                "LabelEncoder.inverse_transform: expected codes in [0, 2], found 3 at row 0");
  CHECK_INVALID(encoder.fit(Strings{}), "LabelEncoder.fit: expected at least one label, found 0");
  CHECK_FALSE(encoder.is_fitted());

  // Byte order, which for UTF-8 is Python's code-point order: sorted(["b", "B", "a", "é", ""]).
  CHECK(encoder.fit(Strings{"b", "B", "a", "\xC3\xA9", ""}).classes() ==
        Strings{"", "B", "a", "b", "\xC3\xA9"});
}

TEST_CASE("a text column goes to LabelEncoder<std::string> and OneHotEncoder<std::string>") {
  TempDir dir;
  const fs::path path = dir / "pets.csv";
  write_file(path, "weight,kind\n4.5,cat\n30,dog\n3.9,\"cat\"\n0.1,fish\n");
  const Table table = read_table(path);
  onelearn::preprocessing::LabelEncoder<std::string> kinds;
  const Labels codes = kinds.fit_transform(table.text("kind"));
  CHECK(codes == (Labels(4) << 0, 1, 0, 2).finished());
  CHECK(kinds.classes() == Strings{"cat", "dog", "fish"});

  onelearn::preprocessing::OneHotEncoder<std::string> onehot;
  const Matrix<double> Z = onehot.fit_transform({table.text("kind")});
  CHECK(Z == (Matrix<double>(4, 3) << 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1).finished());
  CHECK(table.to_matrix<double>({"weight"}).col(0) ==
        (Vector<double>(4) << 4.5, 30, 3.9, 0.1).finished());
}

// scikit-learn 1.2.1:
//   X = np.array([["red", "S"], ["blue", "M"], ["red", "S"], ["grün", "NA"], ["", "M"]],
//                dtype=object)
//   o = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(X)
//   [c.tolist() for c in o.categories_]  # [['', 'blue', 'grün', 'red'], ['M', 'NA', 'S']]
//   o.transform(X), o.transform(np.array([["blue", "XL"], ["pink", "S"]], dtype=object))
//   o.inverse_transform(np.array([[0, 0, 0, 1, 0, 0, 0], [0, 1, 0, 0, 0, 0, 1]]))
//   # [['red', None], ['blue', 'S']]
TEST_CASE("OneHotEncoder<std::string> encodes text columns as scikit-learn's OneHotEncoder") {
  using onelearn::preprocessing::OneHotEncoder;
  using Columns = OneHotEncoder<std::string>::TextColumns;
  const Columns X{{"red", "blue", "red", "gr\xC3\xBCn", ""}, {"S", "M", "S", "NA", "M"}};
  OneHotEncoder<std::string> encoder({.handle_unknown = "ignore"});
  CHECK_THROWS_AS(static_cast<void>(encoder.transform(X)), onelearn::not_fitted_error);
  const Matrix<double> Z = encoder.fit_transform(X);
  CHECK(encoder.categories() == Columns{{"", "blue", "gr\xC3\xBCn", "red"}, {"M", "NA", "S"}});
  CHECK(encoder.n_output_features() == 7);
  CHECK(encoder.n_features_in() == 2);
  CHECK(Z == (Matrix<double>(5, 7) << 0, 0, 0, 1, 0, 0, 1,  //
              0, 1, 0, 0, 1, 0, 0,                          //
              0, 0, 0, 1, 0, 0, 1,                          //
              0, 0, 1, 0, 0, 1, 0,                          //
              1, 0, 0, 0, 1, 0, 0)
                 .finished());
  // Unknown categories under "ignore": a block of zeros.
  CHECK(encoder.transform(Columns{{"blue", "pink"}, {"XL", "S"}}) ==
        (Matrix<double>(2, 7) << 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1).finished());
  const auto back = encoder.inverse_transform(
      (Matrix<double>(2, 7) << 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1).finished());
  REQUIRE(back.size() == 2);
  CHECK(back[0] == std::vector<std::optional<std::string>>{"red", "blue"});
  CHECK(back[1] == std::vector<std::optional<std::string>>{std::nullopt, "S"});
  CHECK(encoder.inverse_transform(Z)[1][3] == "NA");
}

TEST_CASE("OneHotEncoder<std::string> refuses what it cannot encode, naming it") {
  using onelearn::preprocessing::OneHotEncoder;
  using Columns = OneHotEncoder<std::string>::TextColumns;
  OneHotEncoder<std::string> encoder;
  encoder.fit(Columns{{"a", "b"}});
  CHECK_INVALID(encoder.transform(Columns{{"b", "c"}}),
                "OneHotEncoder.transform: found unknown category 'c' in column 0 at row 1");
  CHECK_THROWS_WITH_AS(static_cast<void>(encoder.transform(Columns{{"a"}, {"b"}})),
                       doctest::Contains("expected X with 1 features"), onelearn::shape_error);
  CHECK_THROWS_WITH_AS(
      encoder.fit(Columns{{"a", "b"}, {"c"}}),
      "OneHotEncoder.fit: expected columns of one length (the rows), found 2 in column 0 and 1 "
      "in column 1",
      onelearn::shape_error);
  CHECK_FALSE(encoder.is_fitted());
  CHECK_INVALID(encoder.fit(Columns{}), "OneHotEncoder.fit: expected at least one sample");
  CHECK_INVALID(encoder.fit(Columns{{}, {}}), "OneHotEncoder.fit: expected at least one sample");
  CHECK_THROWS_AS(static_cast<void>(encoder.inverse_transform(Matrix<double>(1, 2))),
                  onelearn::not_fitted_error);
  OneHotEncoder<std::string> typo({.handle_unknown = "skip"});
  CHECK_INVALID(typo.fit(Columns{{"a"}}), "handle_unknown");
}
