#pragma once
/**
 * \file
 * \brief ONNX export of LabelEncoder: labels to their codes.
 * \ingroup onnx
 *
 * \code
 * #include <onelearn/onnx/export/labels.hpp>   // onnx/export.hpp includes it
 * onelearn::Vector<std::int64_t> labels(4);
 * labels << 30, 10, 20, 10;
 * onelearn::preprocessing::LabelEncoder<std::int64_t> encoder;
 * onelearn::onnx::save(encoder.fit(labels), "labels.onnx");   // input "X": int64 labels, (N)
 * \endcode
 *
 * One ai.onnx.ml LabelEncoder node, as skl2onnx writes scikit-learn's: keys = classes() (in
 * their sorted order), values = their codes 0..k-1, output "variable" (int64, (N)). Unlike the
 * other exports the input is not a real N x n_features matrix: it is the label vector, int64
 * for integer labels and float32 for real ones (ai.onnx.ml opset 3's keys_floats), declared by
 * the export_input overload below. A label that is not a class maps to -1 (default_int64):
 * ONNX cannot raise transform's error. Real labels that float32 cannot hold exactly are refused
 * (unsupported_error), since their keys would match other values; the text encoder (std::string
 * labels) is not exportable (onelearn's executor has no string tensors). The precision option
 * has nothing to change: the codes are int64 either way.
 */

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "onelearn/onnx/export/core.hpp"
#include "onelearn/preprocessing/label_encoder.hpp"

namespace onelearn::onnx {

template <class T, class E>
  requires(!std::is_same_v<T, std::string>)
ExportedInput export_input(const GraphBuilder& /*b*/, const preprocessing::LabelEncoder<T, E>& /*m*/) {
  return {std::is_integral_v<T> ? ::onnx::TensorProto::INT64 : ::onnx::TensorProto::FLOAT, {-1}};
}

template <class T, class E>
  requires(!std::is_same_v<T, std::string>)
Exported export_model(GraphBuilder& b, const preprocessing::LabelEncoder<T, E>& m,
                      const std::string& x) {
  const auto& classes = m.classes();
  std::vector<std::int64_t> codes;
  for (index_t k = 0; k < classes.size(); ++k) codes.push_back(k);
  const std::string y = b.fresh("variable");
  auto& n = b.node("LabelEncoder", {x}, {y}, ml_domain);
  if constexpr (std::is_integral_v<T>) {
    set_attribute(n, "keys_int64s", std::vector<std::int64_t>(classes.begin(), classes.end()));
  } else {
    std::vector<float> keys;
    for (const T c : classes) {
      if (static_cast<T>(static_cast<float>(c)) != c) {
        throw unsupported_error(unsupported_kind::data_type, "float64",
                                "onnx::to_proto: LabelEncoder's class " + std::to_string(c) +
                                    " is not a float32 value (expected labels float32 holds "
                                    "exactly: ai.onnx.ml opset 3's keys are float32)");
      }
      keys.push_back(static_cast<float>(c));
    }
    set_attribute(n, "keys_floats", keys);
  }
  set_attribute(n, "values_int64s", codes);
  set_attribute(n, "default_int64", std::int64_t{-1});
  b.declare(y, ::onnx::TensorProto::INT64, {-1});
  return {{"variable", y, ::onnx::TensorProto::INT64, {-1}}};
}

}  // namespace onelearn::onnx
