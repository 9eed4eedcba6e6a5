#pragma once
// ONNX translation of the pooling layers: MaxPool2D, AveragePool2D, GlobalAveragePool2D
// (nn/layers/max_pool2d.hpp, average_pool2d.hpp, global_average_pool2d.hpp).
//
// Export: MaxPool; AveragePool with count_include_pad as the layer's (0, the default, divides
// by the image positions in the window, as onelearn's default; 1 by the whole window). pads as
// resolved ("same" becomes explicit sizes), the bottom/right pad the smallest that gives the
// layer's output size (the windows are the same). GlobalAveragePool2D: GlobalAveragePool +
// Flatten (ONNX keeps the 1 x 1 spatial dims).
//
// Import: MaxPool, AveragePool (2-D; pads smaller than the window; count_include_pad;
// dilations 1; ceil_mode only where it gives the same output size) become MaxPool2D,
// AveragePool2D; GlobalAveragePool becomes GlobalAveragePool2D + Reshape to (C, 1, 1), ONNX's
// output shape. Anything else is an unsupported_error (kind attribute) naming the attribute.

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/nn/detail/im2col.hpp"
#include "onelearn/nn/layers/average_pool2d.hpp"
#include "onelearn/nn/layers/global_average_pool2d.hpp"
#include "onelearn/nn/layers/max_pool2d.hpp"
#include "onelearn/nn/layers/reshape.hpp"
#include "onelearn/onnx/export/core.hpp"
#include "onelearn/onnx/layers/layer_io.hpp"

namespace onelearn::onnx::layers {

/// The end (bottom or right) pad of a pooling window along one axis that ONNX is given: the
/// smallest that gives the layer's output count `out` over `n` positions (window k, stride s,
/// begin pad as resolved). The windows are the layer's; a resolved "same" pad is already this.
inline index_t pool_end_pad(index_t n, index_t k, index_t s, index_t begin, index_t out) {
  return std::max<index_t>(0, (out - 1) * s + k - n - begin);
}

/// Appends a MaxPool or AveragePool node over the layer's resolved window `g`; returns its
/// output and appends the layer's settings to the description.
inline std::string export_pool(LayerExport& e, const nn::detail::WindowGeometry& g, bool average,
                               bool count_include_pad) {
  GraphBuilder& b = e.graph;
  const index_t end_h = pool_end_pad(g.height, g.kh, g.sh, g.pad_top, g.out_h);
  const index_t end_w = pool_end_pad(g.width, g.kw, g.sw, g.pad_left, g.out_w);
  std::string y = b.fresh(average ? "average_pool" : "max_pool");
  auto& n = b.node(average ? "AveragePool" : "MaxPool", {e.x}, {y});
  set_attribute(n, "kernel_shape", std::vector<std::int64_t>{g.kh, g.kw});
  set_attribute(n, "strides", std::vector<std::int64_t>{g.sh, g.sw});
  // ONNX's order: begin of each axis, then end of each axis.
  set_attribute(n, "pads", std::vector<std::int64_t>{g.pad_top, g.pad_left, end_h, end_w});
  if (average) set_attribute(n, "count_include_pad", std::int64_t{count_include_pad ? 1 : 0});
  e.description +=
      "(pool_size=" + detail::pair_string(g.kh, g.kw) +
      ", strides=" + detail::pair_string(g.sh, g.sw) + ", padding=(" +
      std::to_string(g.pad_top) + ", " + std::to_string(end_h) + ", " +
      std::to_string(g.pad_left) + ", " + std::to_string(end_w) + ")" +
      (average ? std::string(", count_include_pad=") + (count_include_pad ? "true" : "false")
               : std::string()) +
      ")";
  return y;
}

template <class T>
std::string export_max_pool2d(LayerExport& e, const nn::MaxPool2DLayer<T>& pool) {
  return export_pool(e, pool.geometry(e.input), false, false);
}

template <class T>
std::string export_average_pool2d(LayerExport& e, const nn::AveragePool2DLayer<T>& pool) {
  return export_pool(e, pool.geometry(e.input), true, pool.count_include_pad());
}

template <class T>
std::string export_global_average_pool2d(LayerExport& e,
                                         const nn::GlobalAveragePool2DLayer<T>& /*pool*/) {
  const std::string pooled = e.graph.apply("GlobalAveragePool", {e.x}, "global_average_pool");
  std::string y = e.graph.fresh("flatten");
  set_attribute(e.graph.node("Flatten", {pooled}, {y}), "axis", std::int64_t{1});
  return y;
}

/// MaxPool and AveragePool: the window as a pooling layer's options.
template <class T>
nn::PoolOptions import_pool_options(const LayerImport<T>& in, std::vector<std::int64_t>& k) {
  const nn::Shape& shape = in.shape();
  if (shape.rank() != 3) {
    in.unsupported_attribute("kernel_shape", "pooling on per-sample shape " + shape.to_string() +
                                                 "; onelearn's pools are 2-D on (C, H, W)");
  }
  k = detail::pair_attribute(in, "kernel_shape", 0);
  const std::vector<std::int64_t> s = detail::pair_attribute(in, "strides", 1);
  const std::vector<std::int64_t> d = detail::pair_attribute(in, "dilations", 1);
  if (d[0] != 1 || d[1] != 1) {
    in.unsupported_attribute("dilations", "dilated pooling (onelearn's pools have no dilation)");
  }
  const std::vector<std::int64_t> p = detail::window_pads(in, k, s, d);
  const NodeAttributes& a = in.attributes();
  if (a.get_int("ceil_mode", 0) != 0) {
    // Harmless only where rounding up gives the same output size.
    for (std::size_t axis = 0; axis < 2; ++axis) {
      const std::int64_t span = shape[static_cast<int>(axis) + 1] + p[axis] + p[axis + 2] - k[axis];
      if (span % s[axis] != 0) {
        in.unsupported_attribute("ceil_mode",
                                 "ceil_mode = 1 gives a larger output than onelearn's pools, "
                                 "which round down");
      }
    }
  }
  if (a.get_int("storage_order", 0) != 0 && in.node().output_size() > 1) {
    in.unsupported_attribute("storage_order", "storage_order = 1");
  }
  nn::PoolOptions options;
  options.strides = nn::Size2{s[0], s[1]};
  options.padding = nn::Padding2D(p[0], p[2], p[1], p[3]);
  options.count_include_pad = a.get_int("count_include_pad", 0) != 0;
  return options;
}

template <class T>
void import_max_pool(LayerImport<T>& in) {
  std::vector<std::int64_t> k;
  const nn::PoolOptions options = import_pool_options(in, k);
  in.add(nn::MaxPool2D(nn::Size2{k[0], k[1]}, options));
}

template <class T>
void import_average_pool(LayerImport<T>& in) {
  std::vector<std::int64_t> k;
  const nn::PoolOptions options = import_pool_options(in, k);
  in.add(nn::AveragePool2D(nn::Size2{k[0], k[1]}, options));
}

template <class T>
void import_global_average_pool(LayerImport<T>& in) {
  if (in.shape().rank() != 3) {
    in.unsupported_attribute("input", "global pooling on per-sample shape " +
                                          in.shape().to_string() +
                                          "; onelearn's is 2-D on (C, H, W)");
  }
  const index_t C = in.shape()[0];
  in.add(nn::GlobalAveragePool2D{});
  // ONNX keeps the spatial dimensions as 1 x 1.
  in.add(nn::Reshape(nn::Shape{C, 1, 1}));
}

template <class T>
void register_pools(LayerTable<T>& table) {
  table.add_export("MaxPool2D", &export_max_pool2d<T>);
  table.add_export("AveragePool2D", &export_average_pool2d<T>);
  table.add_export("GlobalAveragePool2D", &export_global_average_pool2d<T>);
  table.add_import("MaxPool", &import_max_pool<T>);
  table.add_import("AveragePool", &import_average_pool<T>);
  table.add_import("GlobalAveragePool", &import_global_average_pool<T>);
}

}  // namespace onelearn::onnx::layers
