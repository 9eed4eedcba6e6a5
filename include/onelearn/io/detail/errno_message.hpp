#pragma once
// Private: the text of an errno value, for the messages of io_error.

#include <string>
#include <system_error>

namespace onelearn::io::detail {

/// strerror's text for `error_number`; "unknown error" when the failing call did not set errno.
inline std::string errno_message(int error_number) {
  return error_number != 0 ? std::generic_category().message(error_number) : "unknown error";
}

}  // namespace onelearn::io::detail
