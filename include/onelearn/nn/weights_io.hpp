#pragma once
/**
 * \file
 * \brief The binary file behind save_weights, load_weights and checkpoints.
 * \ingroup nn
 *
 * <!-- example-context: nn -->
 * \code
 * #include <onelearn/nn/sequential.hpp>   // Sequential::save_weights / load_weights use this
 *
 * model.save_weights("digits.olw");       // written to a temporary name, then renamed
 * nn::Sequential<float> copy{nn::Input({64}), nn::Dense(128, "relu"), nn::Dropout{0.1},
 *                            nn::Dense(10)};
 * copy.load_weights("digits.olw");        // builds `copy` if needed; predictions now equal
 * \endcode
 *
 * The binary file behind save_weights/load_weights and checkpoints (nn/checkpoint.hpp).
 *
 * \par Format (version 1; all integers little-endian, values in the model's scalar type)
 * | bytes | content |
 * |-------|---------|
 * | 8     | magic: "OLNNWTS\0" (weights) or "OLNNCKP\0" (checkpoint) |
 * | 4     | format version (u32, 1) |
 * | 4     | scalar type (u32: 1 float32, 2 float64) |
 * | 8     | total file length in bytes, checksum included (u64): truncation is named as such |
 * | 8     | checkpoints only: the build seed (u64) |
 * | ...   | architecture: the input shape, then per layer its class name, output shape, and
 *           the sizes of its parameter buffers and of its state buffers (Layer::state()) |
 * | ...   | the data: per layer, its parameter buffers then its state buffers |
 * | ...   | checkpoints only: epochs done, the fit's settings (seed, batch size, shuffle,
 *           validation), the optimizer (name, step count, learning rate, state buffers), each
 *           layer's Dropout position, the History (nn/checkpoint.hpp) |
 * | 4     | CRC-32 (IEEE 802.3, as zlib's crc32) of every byte before it |
 *
 * Strings are a u32 length and the bytes; a shape is a u32 rank and u64 dimensions.
 *
 * Whole or nothing: the file is built in memory and written by io::write_file_atomically
 * (io/atomic_file.hpp): to a temporary file in the same directory, fsync'ed, then renamed over
 * `path`. A crash leaves the old file or the new one, never half of one. Files are read with
 * io::ByteReader (io/byte_reader.hpp), which bounds every read by the bytes that remain.
 *
 * Errors (reading checks in this order): `io_error` for a file that cannot be opened, written
 * or renamed, a wrong magic (not a onelearn file, or a weights file given as a checkpoint and
 * the reverse), an unknown format version, a file shorter or longer than its header says
 * (truncated), a checksum mismatch, and another scalar type than the model's; `shape_error`
 * for a file from another architecture, naming the first difference (layer index, class,
 * output shape or buffer sizes, or the number of layers / the input shape).
 */

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/io/atomic_file.hpp"
#include "onelearn/io/byte_reader.hpp"
#include "onelearn/nn/layer.hpp"
#include "onelearn/nn/tensor.hpp"

namespace onelearn::nn::detail {

inline constexpr std::uint32_t weights_format_version = 1;
inline constexpr std::string_view weights_magic{"OLNNWTS\0", 8};
inline constexpr std::string_view checkpoint_magic{"OLNNCKP\0", 8};

/// CRC-32 (reflected polynomial 0xEDB88320, as zlib's crc32 and PNG).
inline std::uint32_t crc32(std::string_view bytes) {
  static constexpr auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? 0xEDB88320U ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFU;
  for (const char ch : bytes) c = table[(c ^ static_cast<unsigned char>(ch)) & 0xFFU] ^ (c >> 8);
  return c ^ 0xFFFFFFFFU;
}

template <class T>
constexpr std::uint32_t scalar_code() {
  return std::is_same_v<T, float> ? 1U : 2U;
}
inline std::string scalar_name(std::uint32_t code) {
  if (code == 1) return "float32";
  if (code == 2) return "float64";
  return "unknown scalar type " + std::to_string(code);
}

/// Appends little-endian values to an in-memory file.
class ByteWriter {
 public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) { put_le(v); }
  void u64(std::uint64_t v) { put_le(v); }
  void i64(std::int64_t v) { put_le(static_cast<std::uint64_t>(v)); }
  void f64(double v) { put_le(std::bit_cast<std::uint64_t>(v)); }
  void str(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    out_.append(s);
  }
  void shape(const Shape& s) {
    u32(static_cast<std::uint32_t>(s.rank()));
    for (int i = 0; i < s.rank(); ++i) u64(static_cast<std::uint64_t>(s[i]));
  }
  template <class T>
  void values(std::span<const T> v) {
    if constexpr (std::endian::native == std::endian::little) {
      out_.append(reinterpret_cast<const char*>(v.data()), v.size_bytes());
    } else {
      using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
      for (const T x : v) put_le(std::bit_cast<U>(x));
    }
  }
  void raw(std::string_view bytes) { out_.append(bytes); }
  /// A 64-bit length, then the bytes (ByteReader::blob).
  void blob(std::string_view bytes) {
    u64(bytes.size());
    raw(bytes);
  }
  [[nodiscard]] std::string& bytes() noexcept { return out_; }

 private:
  template <class U>
  void put_le(U v) {
    for (std::size_t i = 0; i < sizeof(U); ++i) {
      out_.push_back(static_cast<char>(static_cast<unsigned char>(v >> (8 * i))));
    }
  }
  std::string out_;
};

/// Reads what ByteWriter wrote, through io::ByteReader: running past the end is an io_error
/// ("truncated") naming the caller and the offset.
class ByteReader {
 public:
  ByteReader(std::string_view bytes, std::string where) : in_(bytes, std::move(where)) {}

  std::uint8_t u8() { return in_.little_endian<std::uint8_t>(at("a byte")); }
  std::uint32_t u32() { return in_.little_endian<std::uint32_t>(at("a 32-bit integer")); }
  std::uint64_t u64() { return in_.little_endian<std::uint64_t>(at("a 64-bit integer")); }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  double f64() { return std::bit_cast<double>(u64()); }
  /// Bytes not read yet (optional trailing fields are read only when present).
  [[nodiscard]] std::uint64_t remaining() const noexcept { return in_.remaining(); }
  std::string str() {
    const std::uint32_t n = u32();
    return in_.read_bytes(n, at("a string"));
  }
  /// ByteWriter::blob's bytes (a 64-bit length, then the bytes).
  std::string blob() {
    const std::uint64_t n = u64();
    expect(n, 1);
    return in_.read_bytes(static_cast<std::size_t>(n), at("a block of bytes"));
  }
  Shape shape() {
    const std::uint32_t rank = u32();
    if (rank > static_cast<std::uint32_t>(Shape::max_rank)) {
      fail("a shape of rank " + std::to_string(rank));
    }
    Shape s;
    for (std::uint32_t i = 0; i < rank; ++i) s.push_back(static_cast<index_t>(u64()));
    return s;
  }
  template <class T>
  void values(std::span<T> out) {
    if constexpr (std::endian::native == std::endian::little) {
      in_.read(out.data(), out.size_bytes(), at("values"));
    } else {
      const std::string b = in_.read_bytes(out.size_bytes(), at("values"));
      using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
      for (std::size_t i = 0; i < out.size(); ++i) {
        U u = 0;
        for (std::size_t k = 0; k < sizeof(U); ++k) {
          u |= static_cast<U>(static_cast<unsigned char>(b[i * sizeof(U) + k])) << (8 * k);
        }
        out[i] = std::bit_cast<T>(u);
      }
    }
  }
  /// Checks that `count` values of `size` bytes remain before a buffer for them is allocated.
  void expect(std::uint64_t count, std::size_t size) const {
    if (count > in_.remaining() / size) {
      fail(std::to_string(count) + " values announced at offset " + std::to_string(position()) +
           " where " + std::to_string(in_.remaining()) + " bytes remain");
    }
  }
  [[nodiscard]] std::size_t position() const noexcept {
    return static_cast<std::size_t>(in_.position());
  }
  [[nodiscard]] const std::string& where() const noexcept { return in_.where(); }

  [[noreturn]] void fail(const std::string& found) const {
    throw io_error(where() + ": expected a well-formed file, found " + found);
  }

 private:
  /// "<what> at offset <n>": what a read is for, in its truncation message.
  [[nodiscard]] std::string at(std::string_view what) const {
    return std::string(what) + " at offset " + std::to_string(position());
  }

  io::ByteReader in_;
};

/// Starts an in-memory file: magic, version, scalar type, a placeholder for the length.
template <class T>
ByteWriter begin_file(std::string_view magic) {
  ByteWriter w;
  w.raw(magic);
  w.u32(weights_format_version);
  w.u32(scalar_code<T>());
  w.u64(0);  // total length, patched by finish_file
  return w;
}

inline constexpr std::size_t header_size = 8 + 4 + 4 + 8;

/// Patches the length, appends the checksum, and writes the file whole or not at all.
inline void finish_file(const std::string& where, const std::filesystem::path& path,
                        ByteWriter& w) {
  std::string& bytes = w.bytes();
  const std::uint64_t total = bytes.size() + 4;
  for (std::size_t i = 0; i < 8; ++i) {
    bytes[16 + i] = static_cast<char>(static_cast<unsigned char>(total >> (8 * i)));
  }
  w.u32(crc32(bytes));

  try {
    io::write_file_atomically(path, bytes);
  } catch (const io_error& e) {
    throw io_error(where + ": " + e.what());
  }
}

/// Reads a whole file and checks magic, version, length and checksum (in that order). Returns
/// the bytes; the caller reads the body from offset header_size with the scalar type checked.
template <class T>
std::string read_file(const std::string& where, const std::filesystem::path& path,
                      std::string_view magic) {
  std::optional<io::ByteReader> in;
  try {
    in.emplace(path);
  } catch (const io_error&) {
    throw io_error(where + ": expected a readable file at '" + path.string() +
                   "', found none (missing or no permission)");
  }
  std::string bytes = in->read_rest();
  const std::string file = "'" + path.string() + "'";
  const bool is_weights =
      bytes.size() >= 8 && std::string_view(bytes).substr(0, 8) == weights_magic;
  const bool is_checkpoint =
      bytes.size() >= 8 && std::string_view(bytes).substr(0, 8) == checkpoint_magic;
  const std::string kind = magic == weights_magic ? "weights file" : "checkpoint";
  if (!is_weights && !is_checkpoint) {
    throw io_error(where + ": expected a onelearn " + kind + " (magic \"" +
                   std::string(magic.substr(0, 7)) + "\"), found " + file +
                   " that does not start with one (not a onelearn file)");
  }
  if (std::string_view(bytes).substr(0, 8) != magic) {
    throw io_error(where + ": expected a onelearn " + kind + ", found " + file + " that is a " +
                   (is_weights ? "weights file (load it with load_weights)"
                               : "checkpoint (load it with load_checkpoint)"));
  }
  if (bytes.size() < header_size + 4) {
    throw io_error(where + ": expected at least " + std::to_string(header_size + 4) +
                   " bytes, found " + std::to_string(bytes.size()) + " in " + file +
                   " (truncated)");
  }
  ByteReader header(std::string_view(bytes).substr(8, header_size - 8), where);
  const std::uint32_t version = header.u32();
  const std::uint32_t scalar = header.u32();
  const std::uint64_t total = header.u64();
  if (version != weights_format_version) {
    throw io_error(where + ": expected format version " + std::to_string(weights_format_version) +
                   ", found version " + std::to_string(version) + " in " + file +
                   " (written by another onelearn version)");
  }
  if (total != bytes.size()) {
    throw io_error(where + ": expected " + std::to_string(total) + " bytes (as the header of " +
                   file + " says), found " + std::to_string(bytes.size()) +
                   (bytes.size() < total ? " (the file is truncated)" : " (trailing data)"));
  }
  const std::size_t body = bytes.size() - 4;
  ByteReader tail(std::string_view(bytes).substr(body), where);
  const std::uint32_t stored = tail.u32();
  const std::uint32_t computed = crc32(std::string_view(bytes).substr(0, body));
  if (stored != computed) {
    throw io_error(where + ": expected the CRC-32 stored in " + file + " (" +
                   std::to_string(stored) + ") to match its contents, found " +
                   std::to_string(computed) + " (the file is corrupt)");
  }
  if (scalar != scalar_code<T>()) {
    throw io_error(where + ": expected " + scalar_name(scalar_code<T>()) +
                   " values (the model's scalar type), found " + scalar_name(scalar) + " in " +
                   file + " (load it into a model of that type)");
  }
  bytes.resize(body);
  return bytes;
}

/// What a file records about a model: enough to refuse another architecture and say how.
struct LayerFingerprint {
  std::string class_name;
  Shape output_shape;
  std::vector<std::uint64_t> parameter_sizes, state_sizes;
};
struct Architecture {
  Shape input_shape;
  std::vector<LayerFingerprint> layers;
};

template <class Model>
Architecture architecture_of(Model& model) {
  Architecture a;
  a.input_shape = model.input_shape();
  Shape current = a.input_shape;
  for (std::size_t i = 0; i < model.size(); ++i) {
    auto& layer = model.layer(i);
    LayerFingerprint f;
    f.class_name = std::string(layer.class_name());
    current = layer.output_shape(current);
    f.output_shape = current;
    for (const auto& p : layer.parameters()) f.parameter_sizes.push_back(p.size());
    for (const auto& s : layer.state()) f.state_sizes.push_back(s.size());
    a.layers.push_back(std::move(f));
  }
  return a;
}

inline void write_architecture(ByteWriter& w, const Architecture& a) {
  w.shape(a.input_shape);
  w.u32(static_cast<std::uint32_t>(a.layers.size()));
  for (const auto& f : a.layers) {
    w.str(f.class_name);
    w.shape(f.output_shape);
    w.u32(static_cast<std::uint32_t>(f.parameter_sizes.size()));
    for (auto s : f.parameter_sizes) w.u64(s);
    w.u32(static_cast<std::uint32_t>(f.state_sizes.size()));
    for (auto s : f.state_sizes) w.u64(s);
  }
}

inline Architecture read_architecture(ByteReader& r) {
  Architecture a;
  a.input_shape = r.shape();
  const std::uint32_t n = r.u32();
  for (std::uint32_t i = 0; i < n; ++i) {
    LayerFingerprint f;
    f.class_name = r.str();
    f.output_shape = r.shape();
    const std::uint32_t np = r.u32();
    for (std::uint32_t k = 0; k < np; ++k) f.parameter_sizes.push_back(r.u64());
    const std::uint32_t ns = r.u32();
    for (std::uint32_t k = 0; k < ns; ++k) f.state_sizes.push_back(r.u64());
    a.layers.push_back(std::move(f));
  }
  return a;
}

inline std::string sizes_string(const std::vector<std::uint64_t>& sizes) {
  std::string out = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    out += (i > 0 ? ", " : "") + std::to_string(sizes[i]);
  }
  return out + "]";
}

inline std::string describe(const LayerFingerprint& f) {
  std::string out = f.class_name + " with output shape " + f.output_shape.to_string() +
                    " and parameter buffers " + sizes_string(f.parameter_sizes);
  if (!f.state_sizes.empty()) out += " and state buffers " + sizes_string(f.state_sizes);
  return out;
}

/// shape_error naming the first difference between the file's architecture and the model's.
inline void check_architecture(const std::string& where, const std::string& path,
                               const Architecture& file, const Architecture& model) {
  const std::string prefix = where + ": '" + path + "' holds another architecture: ";
  if (!(file.input_shape == model.input_shape)) {
    throw shape_error(prefix + "expected the model's input shape " + model.input_shape.to_string() +
                      ", found " + file.input_shape.to_string());
  }
  const std::size_t common = std::min(file.layers.size(), model.layers.size());
  for (std::size_t i = 0; i < common; ++i) {
    const LayerFingerprint& a = file.layers[i];
    const LayerFingerprint& b = model.layers[i];
    if (a.class_name == b.class_name && a.output_shape == b.output_shape &&
        a.parameter_sizes == b.parameter_sizes && a.state_sizes == b.state_sizes) {
      continue;
    }
    throw shape_error(prefix + "layer " + std::to_string(i) + " differs: expected " + describe(b) +
                      " (this model), found " + describe(a) + " (the file)");
  }
  if (file.layers.size() != model.layers.size()) {
    throw shape_error(prefix + "expected " + std::to_string(model.layers.size()) +
                      " layers (this model), found " + std::to_string(file.layers.size()) +
                      " (the file); the first " + std::to_string(common) + " agree");
  }
}

/// The model's parameters then state, layer by layer, as stored in the file.
template <class Model>
void write_values(ByteWriter& w, Model& model) {
  using T = typename Model::value_type;
  for (std::size_t i = 0; i < model.size(); ++i) {
    for (const auto& p : model.layer(i).parameters()) w.values(std::span<const T>(p));
    for (const auto& s : model.layer(i).state()) w.values(std::span<const T>(s));
  }
}

template <class Model>
void read_values(ByteReader& r, Model& model) {
  for (std::size_t i = 0; i < model.size(); ++i) {
    for (const auto& p : model.layer(i).parameters()) r.values(p);
    for (const auto& s : model.layer(i).state()) r.values(s);
  }
}

/// Builds an unbuilt model for the file's input shape (weights are overwritten next), so a
/// file loads into a freshly declared model as in Keras.
template <class Model>
void build_for_file(Model& model, const Architecture& file, std::uint64_t seed) {
  if (model.is_built()) return;
  if (model.input_shape().rank() > 0 && !(model.input_shape() == file.input_shape)) return;
  if (file.input_shape.rank() == 0) return;
  model.build(file.input_shape, seed);
}

/// After build_for_file: the model is built unless its Input shape differs from the file's.
template <class Model>
void check_built_for(const std::string& where, const std::filesystem::path& path, Model& model,
                     const Architecture& file) {
  if (model.is_built()) return;
  throw shape_error(where + ": '" + path.string() + "' holds another architecture: expected " +
                    "the model's input shape " + model.input_shape().to_string() + ", found " +
                    file.input_shape.to_string());
}

template <class Model>
void save_weights(Model& model, const std::filesystem::path& path) {
  using T = typename Model::value_type;
  const std::string where = "Sequential.save_weights";
  if (!model.is_built()) {
    throw not_fitted_error(where +
                           ": expected a built model, found one that is not built yet; "
                           "call fit (or build) first");
  }
  ByteWriter w = begin_file<T>(weights_magic);
  write_architecture(w, architecture_of(model));
  write_values(w, model);
  finish_file(where, path, w);
}

template <class Model>
void load_weights(Model& model, const std::filesystem::path& path) {
  using T = typename Model::value_type;
  const std::string where = "Sequential.load_weights";
  const std::string bytes = read_file<T>(where, path, weights_magic);
  ByteReader r(std::string_view(bytes).substr(header_size), where);
  const Architecture file = read_architecture(r);
  build_for_file(model, file, 0);
  check_built_for(where, path, model, file);
  check_architecture(where, path.string(), file, architecture_of(model));
  read_values(r, model);
}

}  // namespace onelearn::nn::detail
