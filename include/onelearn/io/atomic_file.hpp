#pragma once
/**
 * \code
 * #include <onelearn/io/atomic_file.hpp>
 *
 * onelearn::io::write_file_atomically("results.csv", text);     // a whole std::string_view
 * onelearn::io::write_file_atomically("X.npy", [&](onelearn::io::FileSink& out) {
 *   out.write(preamble);                                         // streamed, piece by piece
 *   for (index_t i = 0; i < X.rows(); ++i) out.write(X.row(i).data(), row_bytes);
 * });
 * \endcode
 *
 * io::write_file_atomically: the one way onelearn writes a file (save_npy, nn weights and
 * checkpoints, ONNX models, search and tune results), whole or not at all. The data goes to a
 * new temporary file "<path>.tmp-<pid>-<random>" in the same directory (so the rename stays on
 * one file system), created exclusively so that no two writers ever share one; it is flushed
 * to disk (fsync) and closed, then renamed over `path`, and the directory is fsync'ed so that
 * the rename itself survives a crash. A reader, or a crash, sees the old file or the new one,
 * never half of one. On any failure (including an exception thrown by the writing function)
 * the temporary file is removed and `path` is untouched. The new file gets the usual
 * permissions (0666 less the umask).
 *
 * Errors: `io_error`, its message starting with `path`: "cannot create temporary file '<tmp>':
 * <reason>" (a missing directory, no permission), "cannot write temporary file '<tmp>':
 * <reason>" (a full disk; a failed fsync or close), "cannot rename temporary file '<tmp>' to
 * it: <reason>" (`path` is a directory). Exceptions of the writing function pass through
 * unchanged.
 */

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "onelearn/core/errors.hpp"
#include "onelearn/io/detail/errno_message.hpp"

#if defined(__unix__) || defined(__APPLE__)
#define ONELEARN_IO_POSIX_FILES 1
#include <fcntl.h>   // open: O_EXCL creation
#include <unistd.h>  // write, fsync, close, getpid
#elif defined(_WIN32)
#include <process.h>  // _getpid, for temporary file names
#endif

namespace onelearn::io {

/// The open temporary file that write_file_atomically hands to its writing function.
class FileSink {
 public:
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  /// Appends `size` bytes; throws io_error "cannot write temporary file" on failure.
  void write(const void* data, std::size_t size) {
    const char* bytes = static_cast<const char*>(data);
#ifdef ONELEARN_IO_POSIX_FILES
    while (size > 0) {
      const ::ssize_t n = ::write(fd_, bytes, size);
      if (n < 0) {
        if (errno == EINTR) continue;
        fail(errno);
      }
      bytes += n;
      size -= static_cast<std::size_t>(n);
    }
#else
    if (size > 0 && std::fwrite(bytes, 1, size, file_) != size) fail(errno);
#endif
  }
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }

 private:
  template <class Write>
    requires std::invocable<Write&, FileSink&>
  friend void write_file_atomically(const std::filesystem::path& path, Write&& write);

  FileSink(std::string where, std::filesystem::path tmp)
      : where_(std::move(where)), tmp_(std::move(tmp)) {}

  /// Closes (if open) and removes the temporary file unless it was renamed into place.
  ~FileSink() {
    close_quietly();
    if (!renamed_) {
      std::error_code ignored;
      std::filesystem::remove(tmp_, ignored);
    }
  }

  /// Creates the temporary file; false when the name is taken (then try another name).
  bool create() {
    errno = 0;
#ifdef ONELEARN_IO_POSIX_FILES
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ >= 0) return true;
#else
    if (std::filesystem::exists(tmp_)) return false;
    file_ = std::fopen(tmp_.string().c_str(), "wb");
    if (file_ != nullptr) return true;
#endif
    if (errno == EEXIST) return false;
    throw io_error(where_ + ": cannot create temporary file '" + tmp_.string() +
                   "': " + detail::errno_message(errno));
  }

  /// Flushes the data to disk and closes the file.
  void commit_data() {
#ifdef ONELEARN_IO_POSIX_FILES
    // Data on disk before the rename publishes it: a crash cannot leave a renamed empty file.
    if (::fsync(fd_) != 0) fail(errno);
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail(errno);
#else
    std::FILE* file = std::exchange(file_, nullptr);
    const bool flushed = std::fflush(file) == 0;
    const int error = errno;
    if (std::fclose(file) != 0 || !flushed) fail(flushed ? errno : error);
#endif
  }

  void rename_to(const std::filesystem::path& path) {
    std::error_code ec;
    std::filesystem::rename(tmp_, path, ec);
    if (ec) {
      throw io_error(where_ + ": cannot rename temporary file '" + tmp_.string() +
                     "' to it: " + ec.message());
    }
    renamed_ = true;
#ifdef ONELEARN_IO_POSIX_FILES
    // The rename is an entry of the directory: fsync it too, so the new file survives a crash.
    // Best effort: the file is already in place, and some file systems refuse a directory.
    const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
      static_cast<void>(::fsync(dir_fd));
      ::close(dir_fd);
    }
#endif
  }

  void close_quietly() noexcept {
#ifdef ONELEARN_IO_POSIX_FILES
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
#else
    if (file_ != nullptr) std::fclose(std::exchange(file_, nullptr));
#endif
  }

  [[noreturn]] void fail(int error_number) {
    throw io_error(where_ + ": cannot write temporary file '" + tmp_.string() +
                   "': " + detail::errno_message(error_number));
  }

  std::string where_;
  std::filesystem::path tmp_;
  bool renamed_ = false;
#ifdef ONELEARN_IO_POSIX_FILES
  int fd_ = -1;
#else
  std::FILE* file_ = nullptr;
#endif
};

namespace detail {

inline long process_id() {
#if defined(ONELEARN_IO_POSIX_FILES)
  return static_cast<long>(::getpid());
#elif defined(_WIN32)
  return static_cast<long>(::_getpid());
#else
  return 0;
#endif
}

/// "<path>.tmp-<pid>-<random>": beside `path`; the pid and a random number keep concurrent
/// writers apart, and exclusive creation makes sure of it.
inline std::filesystem::path temporary_name(const std::filesystem::path& path) {
  static std::atomic<std::uint64_t> counter{0};
  std::uint64_t random = (counter.fetch_add(1) + 1) * 0x9E3779B97F4A7C15ULL;
  try {
    std::random_device device;
    random ^= (static_cast<std::uint64_t>(device()) << 32) ^ device();
  } catch (const std::exception&) {  // no entropy source: the clock and the counter suffice
    random ^=
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  char hex[17];
  const auto end = std::to_chars(hex, hex + 16, random, 16).ptr;
  std::filesystem::path tmp = path;
  tmp += ".tmp-" + std::to_string(process_id()) + "-" + std::string(hex, end);
  return tmp;
}

}  // namespace detail

/// Writes `path` whole or not at all: `write(sink)` fills a temporary file beside it, which is
/// then fsync'ed and renamed over `path`.
template <class Write>
  requires std::invocable<Write&, FileSink&>
void write_file_atomically(const std::filesystem::path& path, Write&& write) {
  const std::string where = path.string();
  // Exclusive creation fails only if another writer drew the same name: draw again.
  for (int attempt = 0;; ++attempt) {
    FileSink sink(where, detail::temporary_name(path));
    if (!sink.create()) {
      if (attempt < 16) continue;
      throw io_error(where + ": cannot create temporary file '" + sink.tmp_.string() +
                     "': " + detail::errno_message(EEXIST));
    }
    write(sink);
    sink.commit_data();
    sink.rename_to(path);
    return;
  }
}

/// Writes `bytes` to `path` whole or not at all.
inline void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  write_file_atomically(path, [bytes](FileSink& out) { out.write(bytes); });
}

}  // namespace onelearn::io

#undef ONELEARN_IO_POSIX_FILES
