#pragma once
// The agents' checkpoint file: everything learn() needs to continue bit for bit (the networks'
// weights, every optimizer's state, the environments' states, the current observations, the
// step and iteration counts, the episode statistics, the History, DQN's replay buffer).
//
// Each agent lists its state ONCE, in visit_state(visitor); StateWriter serialises what it is
// shown and StateReader reads it back, so saving and loading cannot disagree on the layout.
// Loading visits twice: a dry pass that reads and checks everything (sizes, names, parameters)
// without touching the agent, then a pass that applies it; a bad file leaves the agent as it
// was. The format is nn/weights_io.hpp's (little-endian, CRC-32, written to a temporary file
// and renamed) with the magic "OLRLCKP".
//
// The state comes in two parts. The shared part (parameters, networks and optimizers, counters,
// episode statistics, History) is the same on every rank of a distributed agent: it is written
// once. The per-rank part (the current observations and episode starts of the rank's copies,
// its environments' state, DQN's rows of the replay buffer) is one section per rank, tagged
// with the global copies it holds ([first_copy, first_copy + copies)); one process writes one
// section. A section is a byte string written with the same visitors, so it is checked as the
// rest is.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/io/byte_reader.hpp"
#include "onelearn/nn/callbacks.hpp"
#include "onelearn/nn/optimizers.hpp"
#include "onelearn/nn/weights_io.hpp"

namespace onelearn::rl::detail {

inline constexpr std::string_view agent_magic{"OLRLCKP\0", 8};

/// One rank's part of the state: the global copies it holds and their bytes (a section).
struct RankSection {
  std::int64_t first_copy = 0;
  std::int64_t copies = 0;
  std::string bytes;
};

class StateWriter {
 public:
  /// A whole file (header first; finish() writes it).
  template <class T>
  explicit StateWriter(T* /*scalar*/) : w_(nn::detail::begin_file<T>(agent_magic)) {}
  /// A section's bytes (no header; take_bytes() returns them).
  StateWriter() = default;

  void text(std::string_view /*what*/, const std::string& s) { w_.str(s); }
  void i64(std::int64_t& v) { w_.i64(v); }
  void f64(double& v) { w_.f64(v); }
  template <class T>
  void values(std::span<T> v) {
    w_.u64(v.size());
    w_.values(std::span<const T>(v));
  }
  void doubles(std::vector<double>& v) {
    w_.u64(v.size());
    for (const double x : v) w_.f64(x);
  }
  template <class Net>
  void network(Net& net) {
    for (const auto& p : net.parameters()) values(p);
    optimizer(net.optimizer());
  }
  template <class T>
  void optimizer(nn::Optimizer<T>& opt) {
    w_.i64(opt.iterations());
    w_.f64(opt.learning_rate());
    for (const auto& s : opt.state()) values(s);
  }
  void history(nn::History& h) {
    w_.u32(static_cast<std::uint32_t>(h.epoch.size()));
    for (const int e : h.epoch) w_.i64(e);
    w_.u32(static_cast<std::uint32_t>(h.history.size()));
    for (const auto& [key, v] : h.history) {
      w_.str(key);
      std::vector<double> copy = v;
      doubles(copy);
    }
  }
  void sections(const std::vector<RankSection>& all) {
    w_.u32(static_cast<std::uint32_t>(all.size()));
    for (const auto& s : all) {
      w_.i64(s.first_copy);
      w_.i64(s.copies);
      w_.blob(s.bytes);
    }
  }
  [[nodiscard]] static bool applying() noexcept { return false; }
  void finish(const std::filesystem::path& path) { nn::detail::finish_file("save_checkpoint", path, w_); }
  [[nodiscard]] std::string take_bytes() { return std::move(w_.bytes()); }

 private:
  nn::detail::ByteWriter w_;
};

class StateReader {
 public:
  StateReader(std::string_view body, bool apply) : r_(body, "load_checkpoint"), apply_(apply) {}

  /// A string that must equal `expected` (the agent's name, its parameters).
  void text(std::string_view what, const std::string& expected) {
    const std::string found = r_.str();
    if (found != expected) {
      throw onelearn::invalid_argument("load_checkpoint: expected " + std::string(what) + " '" +
                                       expected + "' (this agent's), found '" + found + "'");
    }
  }
  void i64(std::int64_t& v) {
    const std::int64_t x = r_.i64();
    if (apply_) v = x;
  }
  void f64(double& v) {
    const double x = r_.f64();
    if (apply_) v = x;
  }
  template <class T>
  void values(std::span<T> v) {
    const std::uint64_t n = r_.u64();
    if (n != v.size()) {
      throw shape_error("load_checkpoint: expected a buffer of " + std::to_string(v.size()) +
                        " values, found " + std::to_string(n) + " (another architecture)");
    }
    std::vector<T> read(v.size());
    r_.values(std::span<T>(read));
    if (apply_) std::copy(read.begin(), read.end(), v.begin());
  }
  void doubles(std::vector<double>& v) {
    const std::uint64_t n = r_.u64();
    r_.expect(n, sizeof(double));
    v.assign(static_cast<std::size_t>(n), 0.0);
    for (auto& d : v) d = r_.f64();  // always: callers pass temporaries they check
  }
  template <class Net>
  void network(Net& net) {
    for (const auto& p : net.parameters()) values(p);
    optimizer(net.optimizer());
  }
  template <class T>
  void optimizer(nn::Optimizer<T>& opt) {
    const std::int64_t iterations = r_.i64();
    const double lr = r_.f64();
    for (const auto& s : opt.state()) values(s);
    if (apply_) {
      opt.set_iterations(iterations);
      if (opt.has_constant_learning_rate()) opt.set_learning_rate(lr);
    }
  }
  void history(nn::History& h) {
    nn::History out;
    const std::uint32_t epochs = r_.u32();
    for (std::uint32_t i = 0; i < epochs; ++i) out.epoch.push_back(static_cast<int>(r_.i64()));
    const std::uint32_t keys = r_.u32();
    for (std::uint32_t k = 0; k < keys; ++k) {
      std::string key = r_.str();
      std::vector<double> v;
      doubles(v);
      out.history.emplace(std::move(key), std::move(v));
    }
    if (apply_) h = std::move(out);
  }
  [[nodiscard]] std::vector<RankSection> sections() {
    const std::uint32_t n = r_.u32();
    r_.expect(n, 3 * sizeof(std::uint64_t));
    std::vector<RankSection> out(n);
    for (auto& s : out) {
      s.first_copy = r_.i64();
      s.copies = r_.i64();
      s.bytes = r_.blob();
    }
    return out;
  }
  [[nodiscard]] bool applying() const noexcept { return apply_; }
  void finish() const {
    if (r_.remaining() != 0) r_.fail(std::to_string(r_.remaining()) + " bytes after the agent's state");
  }

 private:
  nn::detail::ByteReader r_;
  bool apply_;
};

/// The body of an agent checkpoint after its header, magic, length and checksum are checked.
template <class T>
std::string read_agent_file(const std::filesystem::path& path) {
  const std::string where = "load_checkpoint";
  std::optional<io::ByteReader> in;
  try {
    in.emplace(path);
  } catch (const io_error&) {
    throw io_error(where + ": expected a readable file at '" + path.string() + "', found none");
  }
  std::string bytes = in->read_rest();
  const std::string file = "'" + path.string() + "'";
  if (bytes.size() < nn::detail::header_size + 4 || std::string_view(bytes).substr(0, 8) != agent_magic) {
    throw io_error(where + ": expected a onelearn agent checkpoint (magic \"OLRLCKP\"), found " + file +
                   " that is not one (or is truncated)");
  }
  nn::detail::ByteReader header(std::string_view(bytes).substr(8, nn::detail::header_size - 8), where);
  const std::uint32_t version = header.u32();
  const std::uint32_t scalar = header.u32();
  const std::uint64_t total = header.u64();
  if (version != nn::detail::weights_format_version || total != bytes.size()) {
    throw io_error(where + ": expected format version 1 and " + std::to_string(total) + " bytes in " + file +
                   ", found version " + std::to_string(version) + " and " + std::to_string(bytes.size()) +
                   " bytes (truncated or from another onelearn version)");
  }
  const std::size_t body = bytes.size() - 4;
  nn::detail::ByteReader tail(std::string_view(bytes).substr(body), where);
  if (tail.u32() != nn::detail::crc32(std::string_view(bytes).substr(0, body))) {
    throw io_error(where + ": the CRC-32 of " + file + " does not match its contents (corrupt)");
  }
  if (scalar != nn::detail::scalar_code<T>()) {
    throw io_error(where + ": expected " + nn::detail::scalar_name(nn::detail::scalar_code<T>()) +
                   " values, found " + nn::detail::scalar_name(scalar) + " in " + file);
  }
  bytes.resize(body);
  return bytes.substr(nn::detail::header_size);
}

}  // namespace onelearn::rl::detail
