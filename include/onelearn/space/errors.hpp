#pragma once
/**
 * \file
 * \brief The errors of a compute space: the device is missing, out of memory, or failed.
 * \ingroup spaces
 *
 * \code
 * #include <onelearn/space/space.hpp>
 * namespace space = onelearn::space;
 * // The column sums of X in space s, or on the host when s's device is missing or full.
 * auto column_sums_or_host = [](const auto& s, const onelearn::Matrix<double>& X) {
 *   try {
 *     auto Xs = space::to_space(s, X);                    // a device space copies X here
 *     return space::column_sums(s, Xs.view(), {});
 *   } catch (const space::no_device_error& e) {           // a CUDA build without a GPU
 *     std::cerr << e.what() << '\n';
 *   } catch (const space::device_memory_error& e) {       // e.bytes(): the size asked for
 *     std::cerr << "needs " << e.bytes() << " bytes: " << e.what() << '\n';
 *   }                                                     // another device_error propagates
 *   space::host h;
 *   return space::column_sums(h, space::to_space(h, X).view(), {});
 * };
 * onelearn::Vector<double> sums = column_sums_or_host(space::host{}, X);
 * \endcode
 *
 * The errors of a compute space: the device is missing (`no_device_error`), out of memory
 * (`device_memory_error`), or failed (`device_error`, the base of the other two). Each derives
 * from `std::runtime_error` and `onelearn::error`.
 */

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
