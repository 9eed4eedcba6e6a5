// The ONNX executor's operators, compiled once for the test program that lists this file: its
// other source files see only their declaration (ONELEARN_ONNX_SEPARATE_OPERATORS, a compile
// definition of the whole program; see onelearn/onnx/ops/registry.hpp). Each of them compiled
// the ~200 operators again before, about 110 s a file under the sanitizers.
#define ONELEARN_ONNX_DEFINE_OPERATORS
#include "onelearn/onnx/ops/registry.hpp"
