#pragma once
// ONNX translation of the layers that only reshape: Flatten and Reshape (nn/layers/flatten.hpp,
// reshape.hpp).
//
// Export: Flatten (axis 1); Reshape: Reshape to (-1, per-sample output shape).
//
// Import: Flatten (axis 1 only) becomes Flatten; Reshape with a shape that keeps the batch
// (first entry 0, -1 or the input's fixed batch size; 0 elsewhere copies the input's
// dimension unless allowzero) becomes Reshape to the rest, or Flatten where the rest is (-1).
// The shape is a constant, or computed from the shape of the data being reshaped as torch.onnx
// writes x.view(x.size(0), -1) (Shape -> Gather -> Unsqueeze -> Concat, followed by
// onnx/detail/dynamic_shape.hpp): there the first entry may also be the data's own batch size,
// and the nodes computing it are read with the Reshape. A reshape across the batch (the batch
// size elsewhere than first, or a first entry that is not the batch) is an unsupported_error
// (kind attribute, "shape") naming the Reshape and the target it found.

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/layers/flatten.hpp"
#include "onelearn/nn/layers/reshape.hpp"
#include "onelearn/onnx/detail/dynamic_shape.hpp"
#include "onelearn/onnx/export/core.hpp"
#include "onelearn/onnx/layers/layer_io.hpp"

namespace onelearn::onnx::layers {

template <class T>
std::string export_flatten(LayerExport& e, const nn::FlattenLayer<T>& /*flatten*/) {
  std::string y = e.graph.fresh("flatten");
  set_attribute(e.graph.node("Flatten", {e.x}, {y}), "axis", std::int64_t{1});
  return y;
}

template <class T>
std::string export_reshape(LayerExport& e, const nn::ReshapeLayer<T>& reshape) {
  const nn::Shape out = reshape.output_shape(e.input);
  std::vector<std::int64_t> target = {-1};
  for (const std::int64_t d : detail::dims_of(out)) target.push_back(d);
  const std::string shape =
      e.graph.constant_int64("shape", {static_cast<std::int64_t>(target.size())}, target);
  e.description += "(target_shape=" + out.to_string() + ")";
  return e.graph.apply("Reshape", {e.x, shape}, "reshape");
}

template <class T>
void import_flatten(LayerImport<T>& in) {
  std::int64_t axis = in.attributes().get_int("axis", 1);
  if (axis < 0) axis += static_cast<std::int64_t>(in.shape().rank()) + 1;
  if (axis != 1) {
    in.unsupported_attribute("axis", "axis " + std::to_string(axis) +
                                         " (onelearn's Flatten keeps the batch: axis 1)");
  }
  in.add(nn::Flatten{});
}

template <class T>
void import_reshape(LayerImport<T>& in) {
  const nn::Shape& shape = in.shape();
  const bool allow_zero = in.attributes().get_int("allowzero", 0) != 0;
  const std::int64_t fixed_batch = in.fixed_batch();
  std::vector<std::int64_t> target;
  // Whether the target's first entry is the data's batch size, read from its Shape.
  bool batch_first = false;
  std::string computed;  // for errors: "; computed from the shape of 'x': (batch, -1)"
  if (in.has_input(1) && !in.reader().is_constant(in.node().input(1))) {
    detail::ShapeTracer tracer(in.reader(), in.node(), detail::dims_of(shape));
    const std::vector<detail::ShapeEntry> entries = tracer.target();
    computed = "; computed from the shape of '" + in.node().input(0) +
               "': " + detail::shape_entries_string(entries);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      // The batch elsewhere, or another of the data's dimensions first (x.view(x.size(1), -1)),
      // moves values across samples at other batch sizes, even where it equals a fixed batch.
      if ((entries[i].batch() && i > 0) || (i == 0 && entries[i].dimension > 0)) {
        in.unsupported_attribute(
            "shape", "a reshape across the batch dimension (entry " + std::to_string(i) +
                         " of the target is dimension " + std::to_string(entries[i].dimension) +
                         " of the data, where the batch size must be first" + computed + ")");
      }
      target.push_back(entries[i].value);
    }
    batch_first = !entries.empty() && entries[0].batch();
    for (const int n : tracer.nodes()) in.take(n);
  } else {
    target = detail::values_as<std::int64_t>(in.constant_input(1, "the shape"));
  }
  if (target.empty() || !(batch_first || target[0] == -1 || (target[0] == 0 && !allow_zero) ||
                          (fixed_batch > 0 && target[0] == fixed_batch))) {
    in.unsupported_attribute("shape",
                             "a reshape across the batch dimension (the target's first entry "
                             "must be 0, -1 or the batch size" +
                                 computed + ")");
  }
  nn::Shape per_sample;
  for (std::size_t i = 1; i < target.size(); ++i) {
    std::int64_t v = target[i];
    if (v == 0 && !allow_zero) {
      if (static_cast<int>(i) > shape.rank()) {
        throw shape_error(in.where() + ": shape entry 0 copies dimension " + std::to_string(i) +
                          ", which the input lacks");
      }
      v = shape[static_cast<int>(i) - 1];
    }
    per_sample.push_back(static_cast<index_t>(v));
  }
  if (per_sample.rank() == 0) in.unsupported_attribute("shape", "a reshape to (batch,) only");
  if (target[0] == -1) {
    // -1 for the batch: the rest are all known.
    for (int i = 0; i < per_sample.rank(); ++i) {
      if (per_sample[i] < 1) {
        in.unsupported_attribute("shape", "two inferred (-1) dimensions with the batch");
      }
    }
  }
  // (batch, -1) is what Flatten computes, and Flatten is how onelearn writes it back.
  if (per_sample.rank() == 1 && per_sample[0] == -1) {
    in.add(nn::Flatten{});
    return;
  }
  in.add(nn::Reshape(per_sample));
}

template <class T>
void register_reshapes(LayerTable<T>& table) {
  table.add_export("Flatten", &export_flatten<T>);
  table.add_export("Reshape", &export_reshape<T>);
  table.add_import("Flatten", &import_flatten<T>);
  table.add_import("Reshape", &import_reshape<T>);
}

}  // namespace onelearn::onnx::layers
