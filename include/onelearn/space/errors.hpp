#pragma once
// The errors of a compute space: the device is missing, out of memory, or failed.

#include <cstddef>
#include <stdexcept>
#include <string>

#include "onelearn/core/errors.hpp"

namespace onelearn::space {

/// A compute space could not do what it was asked (a CUDA call failed). Under a distributed
/// policy it travels to the other ranks as a std::runtime_error with the same message.
class device_error : public std::runtime_error, public onelearn::error {
 public:
  using std::runtime_error::runtime_error;
  [[nodiscard]] error_code code() const noexcept override { return error_code::runtime; }
};

/// A CUDA build ran where there is no usable CUDA device: raised at the space's first use
/// (first allocation or kernel), never a crash.
class no_device_error : public device_error {
 public:
  using device_error::device_error;
};

/// An allocation in a space's memory failed; bytes() is the size that was asked for.
class device_memory_error : public device_error {
 public:
  device_memory_error(const std::string& message, std::size_t bytes)
      : device_error(message), bytes_(bytes) {}
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

 private:
  std::size_t bytes_;
};

}  // namespace onelearn::space
