// libFuzzer target for onelearn's ONNX loader and executor (issue 6, "bad input").
//
// Each input is tried as a serialized ModelProto: parsed, checked and prepared into a Graph, then
// run on small inputs built from the graph's declared input shapes. It is also tried as a
// TensorProto (the backend test data's input_*.pb) and converted into a Tensor. A typed onelearn
// error (a subclass of onelearn::error) is the expected outcome for bad bytes; anything else that
// escapes (std::out_of_range, a crash, a sanitizer report, a hang caught by -timeout) is a bug
// that libFuzzer reports with the input that caused it.
//
// One exception is tolerated: std::bad_alloc for a single allocation above 64 MiB. A well-formed
// graph may ask for any amount of memory (a MaxPool with pads of 2^25 is valid ONNX); refusing
// it is the allocator's job, and onelearn passes std::bad_alloc through unchanged, as the
// standard library does. The limit is set below by replacing operator new.
//
// Built with clang (-fsanitize=fuzzer,address,undefined) by tests/fuzz/CMakeLists.txt; run by
// tests/fuzz/run_fuzz.sh, which seeds the corpus from the ONNX backend test data.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/onnx/graph.hpp"
#include "onelearn/onnx/load.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace ox = onelearn::onnx;

namespace {

// Inputs are kept small so that one run stays well below libFuzzer's per-input time limit:
// the executor's cost is what the graph asks for, and a fuzzed graph can ask for a lot.
constexpr std::int64_t symbolic_dimension = 2;
constexpr std::size_t max_input_elements = 1 << 12;

/// A graph input filled with small, varied values; false when its shape is unknown or large.
bool make_input(const ox::ValueInfo& info, ox::Tensor& out) {
  if (!info.has_shape) return false;
  ox::Shape shape;
  std::size_t n = 1;
  for (const std::int64_t d : info.dims) {
    const std::int64_t dim = d < 0 ? symbolic_dimension : d;
    if (dim > static_cast<std::int64_t>(max_input_elements)) return false;
    shape.push_back(dim);
    n *= static_cast<std::size_t>(dim);
    if (n > max_input_elements) return false;
  }
  // Small values every element type holds (bool: alternating), of the input's type.
  ox::dispatch(info.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        v[i] = static_cast<T>(static_cast<double>(i % 7) * 0.25 - 0.5);
      } else {
        v[i] = static_cast<T>(i % 2 == 1);
      }
    }
    out = ox::Tensor(std::move(shape), std::move(v));
  });
  return true;
}

void try_model(std::string_view bytes) {
  try {
    const ox::Graph graph(ox::parse_model_proto(bytes, "fuzz input"), "fuzz input");
    std::vector<ox::Tensor> inputs(graph.inputs().size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!make_input(graph.inputs()[i], inputs[i])) return;
    }
    (void)graph.run(inputs);
  } catch (const onelearn::error&) {
    // A typed error is the loader's answer to bad bytes.
  } catch (const std::bad_alloc&) {
    // A valid graph that asks for more than max_allocation_size_mb (see the header comment).
  }
}

void try_tensor(std::string_view bytes) {
  try {
    ::onnx::TensorProto proto;
    ox::detail::parse_proto(proto, bytes, "fuzz input", "TensorProto");
    (void)ox::tensor_from_proto(proto, "fuzz input");
  } catch (const onelearn::error&) {
  }
}

}  // namespace

// The allocation limit: operator new throws std::bad_alloc above it. (AddressSanitizer's own
// allocator_may_return_null does not make operator new throw; it reports out-of-memory.)
constexpr std::size_t max_allocation_bytes = std::size_t{64} << 20;

void* operator new(std::size_t size) {
  if (size > max_allocation_bytes) throw std::bad_alloc();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

// The replacement allocates with malloc, which AddressSanitizer would report as a mismatch
// wherever a library frees through a delete it did not see replaced (the array and aligned
// forms): that check is switched off, every other one stays.
extern "C" const char* __asan_default_options() { return "alloc_dealloc_mismatch=0"; }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try_model(bytes);
  try_tensor(bytes);
  return 0;
}
