#pragma once
// onnxruntime as the independent runtime of the ONNX export tests (test_onnx_export.cpp,
// test_onnx_nn.cpp): the npm package onnxruntime-node, run through Node by
// tests/onnx/run_onnxruntime.js. Tests that need it are skipped, saying why, when Node or the
// package is missing (onnxruntime_unavailable() gives the reason). Also: scratch_dir, where
// those tests write their models.
//
// \code
//   #include "onnxruntime_support.hpp"
//   using namespace onelearn::test;
//   if (onnxruntime_unavailable().empty()) {
//     const std::string json = require_command_output(node_command() + " " +
//         quoted(runner_script().string()) + " " + quoted("model.onnx") + " " + quoted("in.json"),
//         "run_onnxruntime.js failed: ");
//   }
// \endcode

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace onelearn::test {

/// A directory for a test file's exported models, temp/<prefix>_<pid>, created at first use and
/// removed at exit. Each test file passes its own prefix (the test files share one executable,
/// and with it this function's directories).
inline std::filesystem::path scratch_dir(const std::string& prefix) {
  struct TempDir {
    std::filesystem::path path;
    explicit TempDir(const std::string& name)
        : path(std::filesystem::temp_directory_path() /
               (name + "_" + std::to_string(static_cast<long>(::getpid())))) {
      std::filesystem::create_directories(path);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static std::map<std::string, TempDir> dirs;
  return dirs.try_emplace(prefix, prefix).first->second.path;
}

/// tests/onnx/run_onnxruntime.js.
inline std::filesystem::path runner_script() {
  return std::filesystem::path(ONELEARN_TEST_DATA_DIR).parent_path() / "onnx" /
         "run_onnxruntime.js";
}

/// Where onnxruntime-node is installed: $ONELEARN_ONNXRUNTIME_NODE_PATH (a node_modules
/// directory), else build-onnxrt/node_modules beside tests/ (what scripts install).
inline std::string node_path() {
  if (const char* env = std::getenv("ONELEARN_ONNXRUNTIME_NODE_PATH"); env != nullptr && *env) {
    return env;
  }
  return (std::filesystem::path(ONELEARN_TEST_DATA_DIR).parent_path().parent_path() /
          "build-onnxrt" / "node_modules")
      .string();
}

/// Runs a shell command, returning its exit status and standard output.
inline std::pair<int, std::string> run_command(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, out};
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {status, out};
}

inline std::string quoted(const std::string& s) { return "'" + s + "'"; }

/// Runs a shell command and returns its standard output; the test case fails with `what` and the
/// output when the command exits with a nonzero status. (Not a structured binding: doctest's
/// message macros capture their arguments in a lambda, and clang before 16 cannot capture one.)
inline std::string require_command_output(const std::string& command, std::string_view what) {
  std::pair<int, std::string> result = run_command(command);
  REQUIRE_MESSAGE(result.first == 0, what, result.second);
  return std::move(result.second);
}

inline std::string node_command() { return "NODE_PATH=" + quoted(node_path()) + " node"; }

/// Empty when node and onnxruntime-node can run, else why not.
inline const std::string& onnxruntime_unavailable() {
  static const std::string reason = []() -> std::string {
    if (run_command("node --version >/dev/null 2>&1").first != 0) {
      return "node is not installed (onnxruntime runs through Node)";
    }
    const auto [status, version] =
        run_command(node_command() +
                    " -e \"process.stdout.write(require('onnxruntime-node/package.json')"
                    ".version)\" 2>/dev/null");
    if (status != 0) {
      return "the npm package onnxruntime-node is not installed under " + node_path() +
             " (npm install --ignore-scripts onnxruntime-node there, or set "
             "ONELEARN_ONNXRUNTIME_NODE_PATH)";
    }
    return {};
  }();
  return reason;
}

}  // namespace onelearn::test
