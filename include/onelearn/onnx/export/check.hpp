#pragma once
/**
 * \file
 * \brief ONNX's own validation of a model, as Python's onnx.checker.check_model(model,
 * full_check=True) does it.
 * \ingroup onnx
 *
 * \code
 * #include <onelearn/onnx/export/check.hpp>
 * onelearn::onnx::check_model_full(onelearn::onnx::to_proto(model));  // throws if invalid
 * \endcode
 *
 * ONNX's own validation of a model, as Python's onnx.checker.check_model(model,
 * full_check=True) does it: the checker, then strict shape inference with type checks. Debian's
 * ONNX 1.12 C++ check_model has no full_check argument, so the second half is spelled out.
 *
 * Throws onnx::checker::ValidationError or onnx::InferenceError (ONNX's own exceptions, from
 * std::runtime_error). Links onnx as well as onnx_proto and protobuf.
 */

// <sys/mman.h> (which onelearn/io/ includes to map files) defines MAP_TYPE, a name ONNX's
// parser.h uses for an enumerator: set aside while ONNX's headers are read, so that this header
// compiles after any other.
#pragma push_macro("MAP_TYPE")
#undef MAP_TYPE
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#pragma pop_macro("MAP_TYPE")

namespace onelearn::onnx {

inline void check_model_full(const ::onnx::ModelProto& model) {
  ::onnx::checker::check_model(model);
  ::onnx::ModelProto inferred = model;
  const ::onnx::ShapeInferenceOptions options(/*check_type=*/true, /*strict_mode=*/1,
                                              /*data_prop=*/false);
  ::onnx::shape_inference::InferShapes(inferred, ::onnx::OpSchemaRegistry::Instance(), options);
}

}  // namespace onelearn::onnx
