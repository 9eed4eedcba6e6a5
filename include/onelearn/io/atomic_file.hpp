#pragma once
/**
 * \file
 * \brief write_file_atomically: a file is written whole or not at all.
 * \ingroup io
 *
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
 * new temporary file "<path>.onelearn-tmp.<pid>.<random hex>" in the same directory (so the
 * rename stays on one file system), created exclusively so that no two writers ever share one;
 * it is flushed to disk (fsync) and closed, then renamed over `path`, and the directory is
 * fsync'ed so that the rename itself survives a crash. A reader, or a crash, sees the old file
 * or the new one, never half of one. On any failure (including an exception thrown by the
 * writing function) the temporary file is removed and `path` is untouched. The new file gets
 * the usual permissions (0666 less the umask).
 *
 * Temporary files of writers that died: a process killed half-way through a save (SIGKILL, the
 * OOM killer, a power cut) cannot remove its temporary file, and nothing else would. So the
 * name says whose it is, the target's file name and the writer's process id, and each save of
 * `path`, before it writes, removes the temporaries of that same `path` whose process is not
 * alive on this host (kill(pid, 0) fails with ESRCH). Left alone: temporaries of live processes
 * (one may be saving the same file right now; this process's own always count as live), of a
 * process that cannot be asked (EPERM: it exists, under another user), of other targets, and
 * every file whose name does not match the pattern exactly. The cleanup is best effort and never
 * fails a save. Its limits: it lists the directory once per save; a stale temporary is only
 * found by the next save of the same path; process ids are those of this host, so on a file
 * system shared between hosts or containers a writer elsewhere whose pid is not alive here can
 * lose its temporary (its rename then fails with an io_error, and its target stays untouched);
 * where there is no kill() (Windows) nothing is cleaned up.
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
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/io/detail/errno_message.hpp"

#if defined(__unix__) || defined(__APPLE__)
#define ONELEARN_IO_POSIX_FILES 1
#include <fcntl.h>   // open: O_EXCL creation
#include <signal.h>  // kill(pid, 0): whether the writer of a stale temporary is alive
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

/// What separates the target's file name from the writer's pid in a temporary's name.
inline constexpr std::string_view temporary_marker = ".onelearn-tmp.";

/// "<path>.onelearn-tmp.<pid>.<random hex>": beside `path`; the pid and a random number keep
/// concurrent writers apart, and exclusive creation makes sure of it. The target and the pid in
/// the name let a later save find the temporaries of writers that died.
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
  tmp += std::string(temporary_marker) + std::to_string(process_id()) + "." + std::string(hex, end);
  return tmp;
}

/// The writer's process id if `name` is exactly the name of a temporary of the file named
/// `target` ("<target>.onelearn-tmp.<pid>.<lowercase hex>", as temporary_name makes it), else 0.
inline long temporary_owner(std::string_view name, std::string_view target) {
  if (target.empty() || !name.starts_with(target)) return 0;
  name.remove_prefix(target.size());
  if (!name.starts_with(temporary_marker)) return 0;
  name.remove_prefix(temporary_marker.size());
  const std::size_t dot = name.find('.');
  if (dot == std::string_view::npos) return 0;
  const std::string_view pid_text = name.substr(0, dot);
  const std::string_view random = name.substr(dot + 1);
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  const auto is_hex = [&](char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); };
  if (pid_text.empty() || pid_text.front() == '0' || random.empty()) return 0;
  for (const char c : pid_text) {
    if (!is_digit(c)) return 0;
  }
  for (const char c : random) {
    if (!is_hex(c)) return 0;
  }
  long pid = 0;
  const auto [ptr, ec] = std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), pid);
  if (ec != std::errc{} || ptr != pid_text.data() + pid_text.size()) return 0;
  return pid;
}

/// Whether the system says that no process `pid` exists on this host. False whenever that is
/// not certain: this process, another user's process (EPERM), a platform without kill().
inline bool process_is_gone(long pid) {
#ifdef ONELEARN_IO_POSIX_FILES
  // kill(0, ...) and kill(-1, ...) address process groups, not one process: never ask for them.
  if (pid <= 0 || pid == process_id() || !std::in_range<::pid_t>(pid)) return false;
  errno = 0;
  return ::kill(static_cast<::pid_t>(pid), 0) != 0 && errno == ESRCH;
#else
  static_cast<void>(pid);
  return false;
#endif
}

/// Removes the temporary files of `path` whose writer died half-way (see the header comment).
/// Best effort: a directory that cannot be listed, or a file that cannot be removed, is left.
inline void remove_stale_temporaries(const std::filesystem::path& path) {
#ifdef ONELEARN_IO_POSIX_FILES
  namespace fs = std::filesystem;
  const std::string target = path.filename().string();
  if (target.empty()) return;  // "dir/": not a file; creating the temporary reports it
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::vector<fs::path> stale;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const long pid = temporary_owner(it->path().filename().native(), target);
    if (pid <= 0) continue;
    std::error_code status_ec;
    if (it->symlink_status(status_ec).type() != fs::file_type::regular) continue;
    if (process_is_gone(pid)) stale.push_back(it->path());
  }
  // Removed after the listing: a directory changed while it is read may skip entries.
  for (const fs::path& file : stale) {
    std::error_code ignored;
    fs::remove(file, ignored);
  }
#else
  static_cast<void>(path);
#endif
}

}  // namespace detail

/// Writes `path` whole or not at all: `write(sink)` fills a temporary file beside it, which is
/// then fsync'ed and renamed over `path`.
template <class Write>
  requires std::invocable<Write&, FileSink&>
void write_file_atomically(const std::filesystem::path& path, Write&& write) {
  const std::string where = path.string();
  detail::remove_stale_temporaries(path);
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
