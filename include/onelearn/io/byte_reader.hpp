#pragma once
/**
 * \class onelearn::io::ByteReader
 * \brief The bounded reader of binary data: typed truncation errors instead of overruns.
 * \ingroup io
 *
 * \code
 * #include <onelearn/io/byte_reader.hpp>
 *
 * onelearn::io::ByteReader in("model.bin");            // or (bytes_in_memory, "where")
 * char magic[4];
 * in.read(magic, 4, "magic string");                   // exactly 4 bytes, or io_error
 * const auto count = in.little_endian<std::uint32_t>("element count");
 * const std::string name = in.read_bytes(in.little_endian<std::uint32_t>("name length"), "name");
 * const std::string rest = in.read_rest();
 * \endcode
 *
 * io::ByteReader: the one bounded reader of binary data in onelearn, over a file (.npy files,
 * CSV text, nn weights and checkpoints) or over bytes already in memory. It knows how many bytes
 * remain, so a corrupt length field is reported as truncation before anything is allocated for
 * it, and a large read goes straight into the caller's buffer (a matrix's storage) without a
 * second copy. Multi-byte integers are read little-endian whatever the host.
 *
 * Errors: `io_error`, its message starting with the file's path (or the `where` given for bytes
 * in memory): "cannot open for reading: <reason>" (missing, no permission, a directory);
 * "truncated: expected <n> bytes of <what>, found <m>" when fewer bytes remain than a read
 * needs; "read error: <reason>" when the operating system fails a read.
 */

#include <algorithm>
#include <cerrno>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ios>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "onelearn/core/errors.hpp"
#include "onelearn/io/detail/errno_message.hpp"

namespace onelearn::io {

class ByteReader {
 public:
  /// Opens `path` for reading; messages start with the path.
  explicit ByteReader(const std::filesystem::path& path) : where_(path.string()) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      throw io_error(where_ + ": cannot open for reading: it is a directory");
    }
    errno = 0;
    file_.open(path, std::ios::binary);
    if (!file_.is_open()) {
      throw io_error(where_ + ": cannot open for reading: " + detail::errno_message(errno));
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

  /// Reads `bytes`, which must outlive the reader; messages start with `where`.
  ByteReader(std::string_view bytes, std::string where)
      : where_(std::move(where)), memory_(bytes), in_memory_(true), size_known_(true),
        size_(bytes.size()) {}

  [[nodiscard]] const std::string& where() const noexcept { return where_; }
  /// Bytes not read yet (for a pipe: as many as a std::uint64_t can count).
  [[nodiscard]] std::uint64_t remaining() const noexcept { return size_ - pos_; }
  /// Bytes read so far: the offset of the next read.
  [[nodiscard]] std::uint64_t position() const noexcept { return pos_; }

  /// Reads exactly `n` bytes of `what` into `dst`, or throws "truncated".
  void read(void* dst, std::uint64_t n, std::string_view what) {
    if (n > remaining()) truncated(n, remaining(), what);
    const std::uint64_t got = read_some(dst, n);
    if (got != n) truncated(n, got, what);
  }

  /// Exactly `n` bytes of `what`; the length is checked before the string is allocated.
  [[nodiscard]] std::string read_bytes(std::uint64_t n, std::string_view what) {
    if (n > remaining()) truncated(n, remaining(), what);
    std::string out(static_cast<std::size_t>(n), '\0');
    read(out.data(), n, what);
    return out;
  }

  /// An unsigned integer stored little-endian in sizeof(U) bytes.
  template <std::unsigned_integral U>
  [[nodiscard]] U little_endian(std::string_view what) {
    unsigned char bytes[sizeof(U)];
    read(bytes, sizeof(U), what);
    U value = 0;
    for (std::size_t i = sizeof(U); i-- > 0;) value = static_cast<U>(value << 8 | bytes[i]);
    return value;
  }

  /// Up to `n` bytes: fewer at the end of the data.
  [[nodiscard]] std::string read_up_to(std::uint64_t n) {
    std::string out(static_cast<std::size_t>(std::min(n, remaining())), '\0');
    out.resize(static_cast<std::size_t>(read_some(out.data(), out.size())));
    return out;
  }

  /// Everything not read yet.
  [[nodiscard]] std::string read_rest() {
    if (!size_known_) {
      std::string out((std::istreambuf_iterator<char>(file_)), std::istreambuf_iterator<char>());
      check_not_bad();
      return out;
    }
    return read_up_to(remaining());
  }

 private:
  std::uint64_t read_some(void* dst, std::uint64_t n) {
    if (n == 0) return 0;  // memcpy and read never see a null pointer
    if (in_memory_) {
      const auto count = static_cast<std::size_t>(std::min(n, remaining()));
      std::memcpy(dst, memory_.data() + pos_, count);
      pos_ += count;
      return count;
    }
    file_.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    check_not_bad();
    const auto got = static_cast<std::uint64_t>(file_.gcount());
    pos_ += got;
    return got;
  }

  void check_not_bad() {
    if (file_.bad()) throw io_error(where_ + ": read error: " + detail::errno_message(errno));
  }

  [[noreturn]] void truncated(std::uint64_t expected, std::uint64_t found,
                              std::string_view what) const {
    throw io_error(where_ + ": truncated: expected " + std::to_string(expected) + " bytes of " +
                   std::string(what) + ", found " + std::to_string(found));
  }

  std::string where_;
  std::ifstream file_;
  std::string_view memory_;
  bool in_memory_ = false;
  bool size_known_ = false;
  std::uint64_t size_ = 0;
  std::uint64_t pos_ = 0;
};

}  // namespace onelearn::io
