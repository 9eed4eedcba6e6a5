#pragma once
/**
 * \file
 * \ingroup nn
 *
 * The errors of the neural-network module beyond onelearn's common ones (core/errors.hpp).
 */

#include <stdexcept>
#include <string>

#include "onelearn/core/errors.hpp"

namespace onelearn::nn {

/// Training could not continue: the loss became NaN or infinite. The message names the epoch
/// and the batch. A std::runtime_error (the input was valid; the optimisation diverged).
class training_error : public std::runtime_error, public onelearn::error {
 public:
  using std::runtime_error::runtime_error;
  [[nodiscard]] error_code code() const noexcept override { return error_code::runtime; }
};

}  // namespace onelearn::nn
