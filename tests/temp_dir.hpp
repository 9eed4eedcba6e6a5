#pragma once
// A scratch directory for the tests that write files (io, CSV, the I/O floor), and the one-line
// file writer they share.

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace onelearn::test {

/// A fresh directory under the system temp directory (named `prefix` and two random numbers),
/// removed with everything in it.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "onelearn_test") {
    std::random_device device;
    path_ = std::filesystem::temp_directory_path() /
            (std::string(prefix) + "_" + std::to_string(device()) + "_" + std::to_string(device()));
    std::filesystem::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const {
    return path_ / name;
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  /// Names of the entries in the directory, sorted.
  [[nodiscard]] std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

/// Writes `bytes` to `path` exactly (binary), replacing what was there.
inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

}  // namespace onelearn::test
