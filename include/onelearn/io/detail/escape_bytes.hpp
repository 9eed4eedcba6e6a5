#pragma once
// Private: bytes taken from a file, shown in an error message. what() is a C string, so a NUL
// byte from the input would cut the message short, and control bytes would garble a terminal:
// every reader in io/ (the .npy magic, header and dtype; CSV cells and column names) passes
// input bytes through escape_bytes before putting them into a message.

#include <string>
#include <string_view>

namespace onelearn::io::detail {

/// Shows bytes that may not be text: printable ASCII as is, the rest as \xHH. The backslash
/// and the double quote are escaped too, so that the text between the quotes of a message is
/// unambiguous.
inline std::string escape_bytes(std::string_view bytes) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size());
  for (const char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\' && c != '"') {
      out += c;
    } else {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 0xf];
    }
  }
  return out;
}

}  // namespace onelearn::io::detail
