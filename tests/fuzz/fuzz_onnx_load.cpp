// libFuzzer target for onelearn's ONNX loader, executor and importer (issues 6 and 17, "bad
// input").
//
// Each input is tried as a serialized ModelProto: parsed, checked and prepared into a Graph, then
// run on small inputs built from the graph's declared input shapes; and handed to
// onnx::to_estimator for a dozen estimator types (the chain readers, the float64 folds, the
// tree and boosting readers, the k-NN, KMeans, PCA and naive Bayes graph readers, a pipeline),
// each model that comes back then predicting or transforming two rows. It is also tried as a
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

#include <array>
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
#include "onelearn/onnx/to_estimator.hpp"

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

/// to_estimator<E> on the model; a model that comes back predicts (or transforms) two rows.
template <class E>
void try_import(const ::onnx::ModelProto& model) {
  try {
    const E estimator = ox::to_estimator<E>(model);
    onelearn::index_t width = 0;
    if constexpr (requires { estimator.n_features_in(); }) {
      width = static_cast<onelearn::index_t>(estimator.n_features_in());
    } else {
      width = static_cast<onelearn::index_t>(estimator.template step<0>().n_features_in());
    }
    if (width < 1 || width > 256) return;
    onelearn::Matrix<double> X(2, width);
    for (onelearn::index_t j = 0; j < width; ++j) {
      X(0, j) = 0.25 * static_cast<double>(j % 5);
      X(1, j) = -0.5 + static_cast<double>(j % 3);
    }
    if constexpr (requires { estimator.predict(X); }) {
      (void)estimator.predict(X);
    } else {
      (void)estimator.transform(X);
    }
  } catch (const onelearn::error&) {
    // A typed error is the importer's answer to a model it cannot read.
  } catch (const std::bad_alloc&) {
  }
}

/// One importer per input, picked by a hash of its bytes (so that the mutations of one seed try
/// them all): trying every importer on every input made a run 7x slower (2,300 inputs a
/// second against 17,000).
void try_estimators(std::string_view bytes) {
  ::onnx::ModelProto model;
  try {
    model = ox::parse_model_proto(bytes, "fuzz input");
  } catch (const onelearn::error&) {
    return;
  }
  using namespace onelearn;
  using Import = void (*)(const ::onnx::ModelProto&);
  static constexpr std::array<Import, 13> importers{
      &try_import<linear_model::LogisticRegression<double>>,
      &try_import<linear_model::Ridge<double>>,
      &try_import<preprocessing::StandardScaler<double>>,
      &try_import<preprocessing::OneHotEncoder<double>>,
      &try_import<tree::DecisionTreeRegressor<double>>,
      &try_import<ensemble::RandomForestClassifier<double>>,
      &try_import<ensemble::HistGradientBoostingClassifier<double>>,
      &try_import<ensemble::HistGradientBoostingRegressor<double>>,
      &try_import<neighbors::KNeighborsClassifier<double>>,
      &try_import<cluster::KMeans<double>>,
      &try_import<decomposition::PCA<double>>,
      &try_import<naive_bayes::GaussianNB<double>>,
      &try_import<pipeline::Pipeline<preprocessing::StandardScaler<double>,
                                     linear_model::LogisticRegression<double>>>};
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a
  for (const char c : bytes) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  importers[hash % importers.size()](model);
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
  try_estimators(bytes);
  try_tensor(bytes);
  return 0;
}
