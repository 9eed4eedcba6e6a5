// csv_load: onelearn's side of bench/csv_load.sh, which times it against pandas.read_csv on the
// same file in the same run.
//
//   csv_load generate PATH BYTES [COLUMNS]   writes a numeric CSV of about BYTES bytes
//   csv_load load_csv PATH                   times io::load_csv<double> (a Dataset, row-major)
//   csv_load read_table PATH                 times io::read_table (numeric columns inferred)
//
// The timed loaders print one JSON line: {"loader", "seconds", "rows", "columns", "sum"}; the
// sum of every value is there so that the work cannot be optimised away and both sides can
// be seen to read the same numbers (pandas prints it too).
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <string_view>

#include <onelearn/io/csv.hpp>
#include <onelearn/io/table.hpp>

namespace {

/// A header c0..c{columns-1}, then rows of numbers as a data frame of measurements holds them:
/// uniform in [-1000, 1000) with 6 decimals ("-123.456789"), every fourth column an integer.
int generate(const std::string& path, std::uint64_t bytes, int columns) {
  std::ofstream out(path, std::ios::binary);
  std::string line;
  for (int j = 0; j < columns; ++j) line += (j ? ",c" : "c") + std::to_string(j);
  line += '\n';
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> real(-1000.0, 1000.0);
  std::uniform_int_distribution<int> integer(0, 99999);
  std::uint64_t written = 0;
  std::string block;
  char buffer[64];
  while (written < bytes) {
    block += line;
    written += line.size();
    line.clear();
    for (int j = 0; j < columns; ++j) {
      if (j) line += ',';
      const auto r = (j % 4 == 3) ? std::to_chars(buffer, buffer + sizeof buffer, integer(rng))
                                  : std::to_chars(buffer, buffer + sizeof buffer, real(rng),
                                                  std::chars_format::fixed, 6);
      line.append(buffer, r.ptr);
    }
    line += '\n';
    if (block.size() > (1u << 20)) {
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
      block.clear();
    }
  }
  out.write(block.data(), static_cast<std::streamsize>(block.size()));
  return out.good() ? 0 : 1;
}

/// Times `load()` alone; `matrix(result)` is then summed, outside the timing.
template <class Load, class MatrixOf>
int time_load(const char* loader, Load load, MatrixOf matrix) {
  const auto start = std::chrono::steady_clock::now();
  const auto loaded = load();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const onelearn::Matrix<double>& X = matrix(loaded);
  std::printf(
      "{\"loader\": \"%s\", \"seconds\": %.3f, \"rows\": %ld, \"columns\": %ld, "
      "\"sum\": %.10e}\n",
      loader, seconds, static_cast<long>(X.rows()), static_cast<long>(X.cols()), X.sum());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "generate" && argc >= 4) {
      return generate(argv[2], std::strtoull(argv[3], nullptr, 10),
                      argc > 4 ? std::atoi(argv[4]) : 16);
    }
    if (mode == "load_csv" && argc == 3) {
      return time_load(
          "onelearn load_csv<double>", [&] { return onelearn::io::load_csv<double>(argv[2]); },
          [](const auto& data) -> const onelearn::Matrix<double>& { return data.features(); });
    }
    if (mode == "read_table" && argc == 3) {
      // The table and its conversion to the matrix an estimator takes, as pandas' read_csv
      // followed by .to_numpy() would be; timed together.
      return time_load(
          "onelearn read_table + to_matrix",
          [&] { return onelearn::io::read_table(argv[2]).to_matrix<double>(); },
          [](const auto& X) -> const onelearn::Matrix<double>& { return X; });
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "csv_load: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr,
               "usage: csv_load generate PATH BYTES [COLUMNS] | load_csv PATH | read_table PATH\n");
  return 2;
}
