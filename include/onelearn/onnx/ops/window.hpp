#pragma once
// The sliding-window geometry that Conv, MaxPool and AveragePool share: strides, dilations,
// pads (explicit or auto_pad SAME_UPPER / SAME_LOWER / VALID), ceil_mode, and the output size.

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"

namespace onelearn::onnx::ops {

struct Window {
  Shape in, kernel, strides, dilations, pad_begin, pad_end, out;
};

/// The geometry of a window of `kernel` sliding over `in` (the spatial dimensions), read from
/// the node's attributes.
inline Window window_geometry(const NodeContext& ctx, const Shape& in, const Shape& kernel,
                              bool ceil_mode) {
  const std::size_t d = in.size();
  Window w{in, kernel, Shape(d, 1), Shape(d, 1), Shape(d, 0), Shape(d, 0), Shape(d, 0)};
  const auto read = [&](const char* name, Shape& into, std::size_t count) {
    if (const auto v = ctx.get_ints(name)) {
      if (v->size() != count) {
        ctx.fail(std::string("attribute '") + name + "' has " + std::to_string(v->size()) +
                 " values, expected " + std::to_string(count));
      }
      into.assign(v->begin(), v->end());
    }
  };
  read("strides", w.strides, d);
  read("dilations", w.dilations, d);
  if (kernel.size() != d) ctx.fail_shape("kernel_shape has the wrong number of dimensions");
  Shape pads(2 * d, 0);
  read("pads", pads, 2 * d);
  // Values past 2^31 are refused: no real model has them, and below that bound every product
  // and sum of the geometry fits in int64 (a kernel of 2^40 cells with a dilation of 2^40 would
  // overflow).
  constexpr std::int64_t largest = INT32_MAX;
  for (std::size_t i = 0; i < d; ++i) {
    if (w.strides[i] <= 0 || w.dilations[i] <= 0 || kernel[i] <= 0) {
      ctx.fail("strides, dilations and kernel_shape must be positive");
    }
    if (pads[i] < 0 || pads[i + d] < 0) ctx.fail("pads must not be negative");
    if (w.strides[i] > largest || w.dilations[i] > largest || kernel[i] > largest ||
        pads[i] > largest || pads[i + d] > largest) {
      ctx.fail("strides, dilations, kernel_shape and pads must be at most 2^31 - 1");
    }
  }
  const std::string auto_pad = ctx.get_string("auto_pad", "NOTSET");
  for (std::size_t i = 0; i < d; ++i) {
    const std::int64_t span = (kernel[i] - 1) * w.dilations[i] + 1;
    const std::int64_t s = w.strides[i];
    if (auto_pad == "NOTSET" || auto_pad.empty()) {
      w.pad_begin[i] = pads[i];
      w.pad_end[i] = pads[i + d];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const std::int64_t out = (in[i] + s - 1) / s;
      const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * s + span - in[i]);
      const std::int64_t small = total / 2;
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.pad_end[i] = total - w.pad_begin[i];
    } else if (auto_pad != "VALID") {
      ctx.fail("unknown auto_pad '" + auto_pad + "'");
    }
    const std::int64_t room = in[i] + w.pad_begin[i] + w.pad_end[i] - span;
    if (room < 0) {
      ctx.fail_shape("the window (extent " + std::to_string(span) + ") is larger than the padded "
                     "input (" + std::to_string(in[i] + w.pad_begin[i] + w.pad_end[i]) +
                     ") along spatial axis " + std::to_string(i));
    }
    w.out[i] = (ceil_mode ? (room + s - 1) / s : room / s) + 1;
  }
  // Every output position is visited, so their count must be a number (huge pads over several
  // axes could describe more than 2^63 of them): element_count throws shape_error beyond that.
  (void)element_count(w.out);
  return w;
}

/// Calls f(index) for every multi-index of `shape` in row-major order.
template <class F>
void for_each_index(const Shape& shape, F f) {
  const std::size_t n = element_count(shape);
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::size_t k = 0; k < n; ++k) {
    f(static_cast<const std::vector<std::int64_t>&>(index));
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace onelearn::onnx::ops
