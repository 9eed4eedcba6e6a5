#pragma once
// onelearn's version, as CMakeLists.txt's PROJECT_VERSION: what exported models record
// (onnx metadata "onelearn_version", producer_version). Keep the two in step.

#include <string_view>

namespace onelearn {

inline constexpr std::string_view version = "0.1.0";

}  // namespace onelearn
