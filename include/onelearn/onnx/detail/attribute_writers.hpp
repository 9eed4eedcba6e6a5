#pragma once
// Writing a NodeProto's attributes, one overload per attribute type: used by the exports
// (onnx/export/) to build their nodes and by onnx::to_estimator's folds (float64_layouts.hpp,
// tree_walk_fold.hpp) to rebuild the ai.onnx.ml nodes of the float32 layouts.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace onelearn::onnx {

inline void set_attribute(::onnx::NodeProto& n, const std::string& name, std::int64_t value) {
  ::onnx::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(value);
}

inline void set_attribute(::onnx::NodeProto& n, const std::string& name, float value) {
  ::onnx::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

inline void set_attribute(::onnx::NodeProto& n, const std::string& name, const std::string& value) {
  ::onnx::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(value);
}

inline void set_attribute(::onnx::NodeProto& n, const std::string& name,
                          const std::vector<std::string>& values) {
  ::onnx::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRINGS);
  for (const std::string& v : values) a->add_strings(v);
}

inline void set_attribute(::onnx::NodeProto& n, const std::string& name,
                          const std::vector<float>& values) {
  ::onnx::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOATS);
  for (const float v : values) a->add_floats(v);
}

inline void set_attribute(::onnx::NodeProto& n, const std::string& name,
                          const std::vector<std::int64_t>& values) {
  ::onnx::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (const std::int64_t v : values) a->add_ints(v);
}

namespace detail {

/// A real list in double as "<attribute>_as_tensor" (the convention of ai.onnx.ml opset 3's
/// TreeEnsemble), and as the float list "<attribute>" for a reader that knows only that.
inline void set_double_values(::onnx::NodeProto& node, const std::string& attribute,
                              const std::vector<double>& values) {
  auto* a = node.add_attribute();
  a->set_name(attribute + "_as_tensor");
  a->set_type(::onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(::onnx::TensorProto::DOUBLE);
  t->add_dims(static_cast<std::int64_t>(values.size()));
  for (const double v : values) t->add_double_data(v);
  // The float list too, for a reader that knows only that.
  auto* f = node.add_attribute();
  f->set_name(attribute);
  f->set_type(::onnx::AttributeProto::FLOATS);
  for (const double v : values) f->add_floats(static_cast<float>(v));
}

}  // namespace detail

}  // namespace onelearn::onnx
