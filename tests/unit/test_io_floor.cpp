// Tests for the building blocks of the io/ floor that every file format shares:
// io/atomic_file.hpp (whole or nothing, stale temporaries cleaned up), io/byte_reader.hpp
// (bounded reads, typed truncation errors), io/text_writer.hpp (JSON escaping, CSV quoting,
// round-trip numbers) and io/detail/escape_bytes.hpp (input bytes in messages).
//
// Expected values are literal bytes and text written here, and for numbers std::from_chars
// reading the text back.

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "onelearn/io/atomic_file.hpp"
#include "onelearn/io/byte_reader.hpp"
#include "onelearn/io/detail/escape_bytes.hpp"
#include "onelearn/io/text_writer.hpp"
#include "temp_dir.hpp"

#if defined(__unix__) || defined(__APPLE__)
#define ONELEARN_TEST_POSIX 1
#include <signal.h>    // kill
#include <sys/wait.h>  // waitpid
#include <unistd.h>    // fork, getpid
#endif

namespace {

namespace fs = std::filesystem;
using onelearn::test::TempDir;
using onelearn::test::write_file;
using namespace std::string_literals;  // "..."s keeps embedded NUL bytes
using onelearn::io_error;
namespace io = onelearn::io;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.is_open());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

#define CHECK_IO_ERROR(expr, fragment)                                                    \
  CHECK_THROWS_WITH_AS(static_cast<void>(expr),                                           \
                       doctest::Contains(doctest::String(std::string(fragment).c_str())), \
                       onelearn::io_error)
#define CHECK_IO_ERROR_IS(expr, message) \
  CHECK_THROWS_WITH_AS(static_cast<void>(expr), std::string(message).c_str(), onelearn::io_error)

}  // namespace

// =============================================================================================
// io::write_file_atomically
// =============================================================================================

TEST_CASE("write_file_atomically writes every byte and replaces an existing file") {
  TempDir dir;
  const std::string bytes = "binary\0data\xff\n"s;
  io::write_file_atomically(dir / "a.bin", bytes);
  CHECK(read_file(dir / "a.bin") == bytes);

  write_file(dir / "b.bin", "old contents, longer than the new ones");
  io::write_file_atomically(dir / "b.bin", std::string_view());
  CHECK(read_file(dir / "b.bin").empty());

  // Streamed in pieces, as save_npy writes a matrix row by row.
  const double values[2] = {1.5, -2.0};
  io::write_file_atomically(dir / "b.bin", [&](io::FileSink& out) {
    out.write(std::string_view("piece "));
    out.write(values, sizeof values);
  });
  const std::string expected =
      "piece "s + std::string(reinterpret_cast<const char*>(values), sizeof values);
  CHECK(read_file(dir / "b.bin") == expected);
  CHECK(dir.entries() == std::vector<std::string>{"a.bin", "b.bin"});  // no temporary left
}

TEST_CASE("write_file_atomically: a failure mid-write leaves the old file and no temporary") {
  TempDir dir;
  write_file(dir / "x.txt", "the old file");
  const auto failing_writer = [](io::FileSink& out) {
    out.write(std::string_view("half of the new file"));
    throw std::runtime_error("the writer failed");
  };
  CHECK_THROWS_WITH_AS(io::write_file_atomically(dir / "x.txt", failing_writer),
                       "the writer failed", std::runtime_error);
  CHECK(read_file(dir / "x.txt") == "the old file");
  CHECK(dir.entries() == std::vector<std::string>{"x.txt"});

  // The same when there was no file before: nothing at all is left.
  CHECK_THROWS_AS(io::write_file_atomically(dir / "new.txt", failing_writer), std::runtime_error);
  CHECK(dir.entries() == std::vector<std::string>{"x.txt"});

  // An io_error from inside the writer (a nested format's own check) passes through as it is.
  CHECK_IO_ERROR_IS(
      io::write_file_atomically(dir / "x.txt", [](io::FileSink&) { throw io_error("inner"); }),
      "inner");
  CHECK(read_file(dir / "x.txt") == "the old file");
  CHECK(dir.entries() == std::vector<std::string>{"x.txt"});
}

TEST_CASE("write_file_atomically: a missing directory or a directory in the way is an io_error") {
  TempDir dir;
  const fs::path missing = dir / "no_such_dir" / "x.txt";
  CHECK_IO_ERROR(
      io::write_file_atomically(missing, "data"),
      missing.string() + ": cannot create temporary file '" + missing.string() + ".onelearn-tmp.");
  CHECK_IO_ERROR(io::write_file_atomically(missing, "data"), "No such file or directory");
  CHECK(dir.entries().empty());

  // The rename fails after the data was written and synced: the temporary is removed.
  fs::create_directories(dir / "taken" / "child");  // a non-empty directory cannot be replaced
  CHECK_IO_ERROR(io::write_file_atomically(dir / "taken", "data"),
                 (dir / "taken").string() + ": cannot rename temporary file '");
  CHECK(dir.entries() == std::vector<std::string>{"taken"});
  CHECK(fs::is_directory(dir / "taken" / "child"));
}

TEST_CASE(
    "write_file_atomically gives the new file the usual permissions, not the 0600 of a "
    "temporary") {
  TempDir dir;
  io::write_file_atomically(dir / "p.txt", "x");
  const fs::perms p = fs::status(dir / "p.txt").permissions();
  CHECK((p & fs::perms::owner_read) != fs::perms::none);
  CHECK((p & fs::perms::owner_write) != fs::perms::none);
  // Whatever the umask lets through for a file created with 0666, as std::ofstream would.
  write_file(dir / "reference.txt", "x");
  CHECK(p == fs::status(dir / "reference.txt").permissions());
}

#ifdef ONELEARN_TEST_POSIX
namespace {

/// The id of a process that existed and is gone: a child that exited and was waited for.
long dead_pid() {
  const ::pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  errno = 0;
  REQUIRE(::kill(child, 0) != 0);  // reaped: no such process any more
  REQUIRE(errno == ESRCH);
  return static_cast<long>(child);
}

}  // namespace

TEST_CASE("write_file_atomically names its temporary after the target and the writing process") {
  TempDir dir;
  std::vector<std::string> during;
  io::write_file_atomically(dir / "t.bin", [&](io::FileSink& out) {
    out.write(std::string_view("x"));
    during = dir.entries();
  });
  REQUIRE(during.size() == 1);
  const std::string prefix = "t.bin.onelearn-tmp." + std::to_string(::getpid()) + ".";
  CHECK(during.front().starts_with(prefix));
  const std::string random = during.front().substr(prefix.size());
  CHECK(!random.empty());
  CHECK(random.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(dir.entries() == std::vector<std::string>{"t.bin"});
}

TEST_CASE(
    "write_file_atomically removes the temporaries that dead writers of its target left, "
    "and nothing else") {
  TempDir dir;
  const std::string dead = std::to_string(dead_pid());
  const std::string self = std::to_string(::getpid());
  const std::string stale = "x.bin.onelearn-tmp." + dead + ".1f2e3d";
  const std::vector<std::string> kept = {
      "x.bin.onelearn-tmp." + self + ".1f2e3d",  // a live writer: this process
      "x.bin.onelearn-tmp.1.1f2e3d",             // a live writer: pid 1 always exists
      "y.bin.onelearn-tmp." + dead + ".1f2e3d",  // another target
      "xx.bin.onelearn-tmp." + dead + ".1f2e3d",
      "x.bin.onelearn-tmp." + dead + ".1f2e3d.bak",  // names that do not match exactly
      "x.bin.onelearn-tmp." + dead + ".",
      "x.bin.onelearn-tmp.0" + dead + ".1f2e3d",
      "x.bin.onelearn-tmp.-" + dead + ".1f2e3d",
      "x.bin.tmp-" + dead + "-1f2e3d",
  };
  write_file(dir / stale, "left by a writer that was killed");
  for (const std::string& name : kept) write_file(dir / name, "keep me");
  fs::create_directory(dir / ("x.bin.onelearn-tmp." + dead + ".abc"));  // not a file

  io::write_file_atomically(dir / "x.bin", "new");
  CHECK(read_file(dir / "x.bin") == "new");
  std::vector<std::string> expected = kept;
  expected.push_back("x.bin");
  expected.push_back("x.bin.onelearn-tmp." + dead + ".abc");
  std::sort(expected.begin(), expected.end());
  CHECK(dir.entries() == expected);

  // The next save of y.bin cleans up after y.bin's dead writer.
  io::write_file_atomically(dir / "y.bin", "y");
  CHECK(!fs::exists(dir / ("y.bin.onelearn-tmp." + dead + ".1f2e3d")));
  CHECK(fs::exists(dir / ("x.bin.onelearn-tmp." + self + ".1f2e3d")));

  // A save that fails cleans up too: the stale file goes before the writing starts.
  write_file(dir / stale, "left by a writer that was killed");
  CHECK_THROWS_AS(io::write_file_atomically(dir / "x.bin",
                                            [](io::FileSink&) { throw std::runtime_error("x"); }),
                  std::runtime_error);
  CHECK(!fs::exists(dir / stale));
  CHECK(read_file(dir / "x.bin") == "new");
}
#endif

// =============================================================================================
// io::ByteReader
// =============================================================================================

TEST_CASE("ByteReader over bytes in memory reads little-endian integers and exact lengths") {
  const std::string bytes =
      "\x01\x02\x03\x04\x05\x06\x07\x08\x2a\x00"
      "abc"s;
  io::ByteReader in(bytes, "buffer");
  CHECK(in.where() == "buffer");
  CHECK(in.remaining() == 13);
  CHECK(in.little_endian<std::uint32_t>("first") == 0x04030201U);
  CHECK(in.little_endian<std::uint32_t>("second") == 0x08070605U);
  CHECK(in.little_endian<std::uint16_t>("third") == 42U);
  CHECK(in.position() == 10);
  CHECK(in.read_bytes(2, "text") == "ab");
  CHECK(in.read_rest() == "c");
  CHECK(in.remaining() == 0);
  CHECK(in.read_up_to(5).empty());
  char nothing = 'x';
  in.read(&nothing, 0, "nothing");  // a read of zero bytes at the end is fine
  CHECK(nothing == 'x');
}

TEST_CASE("ByteReader: reading past the end is an io_error that says how much was missing") {
  const std::string bytes = "\x01\x02\x03"s;
  io::ByteReader in(bytes, "buffer");
  CHECK(in.little_endian<std::uint8_t>("tag") == 1U);
  CHECK_IO_ERROR_IS(in.little_endian<std::uint32_t>("element count"),
                    "buffer: truncated: expected 4 bytes of element count, found 2");
  char out[8];
  CHECK_IO_ERROR_IS(in.read(out, 8, "payload"),
                    "buffer: truncated: expected 8 bytes of payload, found 2");
  // A corrupt length is refused before anything is allocated for it.
  CHECK_IO_ERROR_IS(static_cast<void>(in.read_bytes(std::uint64_t{1} << 60, "a name")),
                    "buffer: truncated: expected 1152921504606846976 bytes of a name, found 2");
  CHECK(in.read_up_to(10) == "\x02\x03");  // a refused read consumes nothing
}

TEST_CASE("ByteReader over a file: open errors and truncation name the path") {
  TempDir dir;
  const fs::path missing = dir / "missing.bin";
  CHECK_IO_ERROR_IS(io::ByteReader{missing},
                    missing.string() + ": cannot open for reading: No such file or directory");
  CHECK_IO_ERROR_IS(io::ByteReader{dir / ""},
                    (dir / "").string() + ": cannot open for reading: it is a directory");

  const fs::path path = dir / "short.bin";
  write_file(path, "\x10\x00\x00\x00xyz"s);
  io::ByteReader in(path);
  CHECK(in.where() == path.string());
  CHECK(in.remaining() == 7);
  const auto length = in.little_endian<std::uint32_t>("record length");
  CHECK(length == 16U);
  CHECK_IO_ERROR_IS(static_cast<void>(in.read_bytes(length, "record")),
                    path.string() + ": truncated: expected 16 bytes of record, found 3");
  CHECK(in.read_rest() == "xyz");
}

// =============================================================================================
// io/text_writer.hpp
// =============================================================================================

TEST_CASE("json_string escapes quotes, backslashes and control bytes, and nothing else") {
  CHECK(io::json_string("") == "\"\"");
  CHECK(io::json_string("plain text") == "\"plain text\"");
  CHECK(io::json_string("say \"hi\"") == R"("say \"hi\"")");
  CHECK(io::json_string(R"(C:\path\file)") == R"("C:\\path\\file")");
  CHECK(io::json_string("a\nb\rc\td") == R"("a\nb\rc\td")");
  CHECK(io::json_string("\x01\x1f\b\f"s) == R"("\u0001\u001f\u0008\u000c")");
  CHECK(io::json_string("nul\0byte"s) == R"("nul\u0000byte")");
  CHECK(io::json_string("caf\xc3\xa9 \x7f") == "\"caf\xc3\xa9 \x7f\"");  // UTF-8 and DEL as is
}

TEST_CASE("json_number and number_text print doubles that read back exactly") {
  CHECK(io::json_number(0.1) == "0.1");
  CHECK(io::json_number(-2.0) == "-2");
  CHECK(io::json_number(1e300) == "1e+300");
  CHECK(io::json_number(std::numeric_limits<double>::quiet_NaN()) == "null");
  CHECK(io::json_number(std::numeric_limits<double>::infinity()) == "null");
  CHECK(io::json_number(-std::numeric_limits<double>::infinity()) == "null");
  CHECK(io::number_text(std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(io::number_text(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(io::number_text(-std::numeric_limits<double>::infinity()) == "-inf");

  std::mt19937_64 random(7);
  std::vector<double> values = {1.0 / 3.0,
                                -0.0,
                                std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::epsilon()};
  for (int i = 0; i < 1000; ++i) {
    const double v = std::bit_cast<double>(random());
    if (std::isfinite(v)) values.push_back(v);
  }
  for (const double v : values) {
    const std::string text = io::json_number(v);
    double back = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), back);
    REQUIRE(error == std::errc{});
    CHECK(end == text.data() + text.size());
    CHECK(std::bit_cast<std::uint64_t>(back) == std::bit_cast<std::uint64_t>(v));
  }
}

TEST_CASE("csv_field quotes commas, quotes and line breaks, doubling the quotes") {
  CHECK(io::csv_field("") == "");
  CHECK(io::csv_field("plain") == "plain");
  CHECK(io::csv_field("a,b") == "\"a,b\"");
  CHECK(io::csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(io::csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(io::csv_field("cr\rhere") == "\"cr\rhere\"");
  CHECK(io::csv_field("\"") == "\"\"\"\"");
  CHECK(io::csv_field("tab\tand space ") == "tab\tand space ");  // not special in CSV
}

TEST_CASE("CsvWriter builds rows of quoted fields and numbers") {
  io::CsvWriter csv;
  csv.row({"name", "value", "note"});
  csv.field("alpha, beta").field(0.1).field("said \"ok\"").end_row();
  csv.field(std::int64_t{-3}).field(std::size_t{7}).field(std::string()).end_row();
  csv.field(std::numeric_limits<double>::quiet_NaN()).end_row();
  CHECK(csv.text() ==
        "name,value,note\n"
        "\"alpha, beta\",0.1,\"said \"\"ok\"\"\"\n"
        "-3,7,\n"
        "nan\n");
}

// =============================================================================================
// io/detail/escape_bytes.hpp
// =============================================================================================

TEST_CASE("escape_bytes keeps printable ASCII and writes every other byte as \\xHH") {
  CHECK(io::detail::escape_bytes("") == "");
  CHECK(io::detail::escape_bytes("plain 'text' 0-9") == "plain 'text' 0-9");
  const std::string escaped = io::detail::escape_bytes("1\0\t\n\x1f\x7f\x80\xff\\\""s);
  CHECK(escaped == R"(1\x00\x09\x0A\x1F\x7F\x80\xFF\x5C\x22)");
  CHECK(escaped.find('\0') == std::string::npos);
}
