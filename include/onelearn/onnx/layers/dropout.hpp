#pragma once
// ONNX translation of Dropout (nn/layers/dropout.hpp), the identity at inference.
//
// Export: nothing (no node; the next layer reads the layer's input).
//
// Import: Dropout (training_mode absent or false) and Identity: no layer. A Dropout in training
// mode is an unsupported_error (kind attribute, "training_mode").

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "onelearn/nn/layers/dropout.hpp"
#include "onelearn/onnx/layers/layer_io.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx::layers {

template <class T>
std::string export_dropout(LayerExport& e, const nn::DropoutLayer<T>& /*dropout*/) {
  return e.x;
}

template <class T>
void import_dropout(LayerImport<T>& in) {
  if (in.has_input(2)) {
    const std::vector<double> training =
        detail::values_as<double>(in.constant_input(2, "training_mode"));
    if (!training.empty() && training[0] != 0) {
      in.unsupported_attribute("training_mode", "training_mode = true");
    }
  }
}

template <class T>
void import_identity(LayerImport<T>& /*in*/) {}

template <class T>
void register_dropout(LayerTable<T>& table) {
  table.add_export("Dropout", &export_dropout<T>);
  table.add_import("Dropout", &import_dropout<T>);
  table.add_import("Identity", &import_identity<T>);
}

}  // namespace onelearn::onnx::layers
