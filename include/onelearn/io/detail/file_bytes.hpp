#pragma once
// Private: a whole file's bytes for the text readers (CSV), mapped into memory where the system
// can (POSIX mmap), read into a string otherwise.
//
// Why map: a 1 GB CSV read into a std::string costs the allocation, zeroing it and a copy out of
// the page cache before parsing starts; mapped, the parser reads the page cache directly and
// the threads of a parallel parse fault their own pages in. Anything that cannot be mapped (a
// pipe, a special file, a system without <sys/mman.h>, an empty file) goes through ByteReader,
// which also gives the messages for a missing file, a directory or a read error, so the readers
// report those exactly as the other formats do.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "onelearn/io/byte_reader.hpp"

#if defined(__unix__) || defined(__APPLE__)
#if __has_include(<sys/mman.h>)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define ONELEARN_IO_HAS_MMAP 1
#endif
#endif

namespace onelearn::io::detail {

class FileBytes {
 public:
  explicit FileBytes(const std::filesystem::path& path) : where_(path.string()) {
    if (!map(path)) {
      ByteReader in(path);
      owned_ = in.read_rest();
      text_ = owned_;
    }
  }
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  ~FileBytes() {
#ifdef ONELEARN_IO_HAS_MMAP
    if (mapped_ != nullptr) ::munmap(mapped_, text_.size());
#endif
  }

  [[nodiscard]] std::string_view text() const noexcept { return text_; }
  /// The path, as messages start with it.
  [[nodiscard]] const std::string& where() const noexcept { return where_; }

 private:
  /// Maps a non-empty regular file; false (and nothing held) when that is not possible.
  bool map([[maybe_unused]] const std::filesystem::path& path) {
#ifdef ONELEARN_IO_HAS_MMAP
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat info {};
    void* mapped = MAP_FAILED;
    std::size_t size = 0;
    if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
      size = static_cast<std::size_t>(info.st_size);
      mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    }
    ::close(fd);  // the mapping keeps the file
    if (mapped == MAP_FAILED) return false;
    // All of it will be read soon: start reading ahead what is not in the page cache yet.
    ::madvise(mapped, size, MADV_WILLNEED);
    mapped_ = mapped;
    text_ = std::string_view(static_cast<const char*>(mapped), size);
    return true;
#else
    return false;
#endif
  }

  std::string where_;
  std::string owned_;
  std::string_view text_;
  void* mapped_ = nullptr;
};

}  // namespace onelearn::io::detail
