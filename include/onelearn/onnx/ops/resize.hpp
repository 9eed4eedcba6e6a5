#pragma once
// Resize (opsets 10 to 17) and Upsample (7 to 9): nearest (round_prefer_floor,
// round_prefer_ceil, floor, ceil), linear and cubic (cubic_coeff_a, exclude_outside)
// interpolation, with every coordinate_transformation_mode (half_pixel, pytorch_half_pixel,
// align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize with roi and
// extrapolation_value). Output size from scales (floor(in * scale)) or sizes. The
// interpolation is separable: one axis after the other, in double precision.

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"
#include "onelearn/onnx/ops/reduce.hpp"

namespace onelearn::onnx::ops {

namespace detail {

struct ResizeOptions {
  std::string mode = "nearest", transform = "half_pixel", nearest = "round_prefer_floor";
  double cubic_a = -0.75, extrapolation = 0;
  bool exclude_outside = false;
};

/// The taps (source index, weight) of one output index along one axis; empty: extrapolate.
struct Taps {
  std::vector<std::size_t> index;
  std::vector<double> weight;
};

inline std::vector<Taps> axis_taps(const NodeContext& ctx, const ResizeOptions& o, std::int64_t in,
                                   std::int64_t out, double scale, double roi_start,
                                   double roi_end) {
  std::vector<Taps> taps(static_cast<std::size_t>(out));
  // The resized length is in * scale, unrounded (what the specification's formulas use: it
  // differs from the output size when scales are given and in * scale is not an integer).
  const auto len_in = static_cast<double>(in);
  const double len_out = len_in * scale;
  const auto clamp_index = [&](std::int64_t i) {
    return static_cast<std::size_t>(std::clamp<std::int64_t>(i, 0, in - 1));
  };
  for (std::int64_t xo = 0; xo < out; ++xo) {
    const auto x = static_cast<double>(xo);
    double c = 0;
    const std::string& t = o.transform;
    if (t == "half_pixel") c = (x + 0.5) / scale - 0.5;
    else if (t == "pytorch_half_pixel") c = len_out > 1 ? (x + 0.5) / scale - 0.5 : 0;
    else if (t == "align_corners") c = len_out == 1 ? 0 : x * (len_in - 1) / (len_out - 1);
    else if (t == "asymmetric") c = x / scale;
    else if (t == "tf_half_pixel_for_nn") c = (x + 0.5) / scale;
    else if (t == "tf_crop_and_resize") {
      c = len_out > 1 ? roi_start * (len_in - 1) + x * (roi_end - roi_start) * (len_in - 1) / (len_out - 1)
                      : 0.5 * (roi_start + roi_end) * (len_in - 1);
      if (c < 0 || c > len_in - 1) continue;  // extrapolation_value
    } else {
      ctx.fail("unknown coordinate_transformation_mode '" + t + "'");
    }
    Taps& tp = taps[static_cast<std::size_t>(xo)];
    if (o.mode == "nearest") {
      double r = 0;
      const std::string& m = o.nearest;
      if (m == "round_prefer_floor") r = c == std::floor(c) + 0.5 ? std::floor(c) : std::round(c);
      else if (m == "round_prefer_ceil") r = c == std::floor(c) + 0.5 ? std::ceil(c) : std::round(c);
      else if (m == "floor") r = std::floor(c);
      else if (m == "ceil") r = std::ceil(c);
      else ctx.fail("unknown nearest_mode '" + m + "'");
      tp.index = {clamp_index(static_cast<std::int64_t>(r))};
      tp.weight = {1.0};
    } else if (o.mode == "linear") {
      const double cc = std::clamp(c, 0.0, len_in - 1);
      const double f = std::floor(cc);
      const double r = cc - f;
      const auto i = static_cast<std::int64_t>(f);
      tp.index = {clamp_index(i), clamp_index(i + 1)};
      tp.weight = {1 - r, r};
    } else if (o.mode == "cubic") {
      const double f = std::floor(c);
      const double r = c - f;
      const double a = o.cubic_a;
      const auto w = [&](double d) {  // the cubic kernel at distance d
        d = std::abs(d);
        if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
        if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
        return 0.0;
      };
      const auto i0 = static_cast<std::int64_t>(f);
      double total = 0;
      for (std::int64_t k = -1; k <= 2; ++k) {
        const std::int64_t i = i0 + k;
        double wk = w(r - static_cast<double>(k));
        if (o.exclude_outside && (i < 0 || i >= in)) wk = 0;
        tp.index.push_back(clamp_index(i));
        tp.weight.push_back(wk);
        total += wk;
      }
      if (o.exclude_outside && total != 0) {
        for (double& wk : tp.weight) wk /= total;
      }
    } else {
      ctx.fail("unknown mode '" + o.mode + "'");
    }
  }
  return taps;
}

inline Tensor resize_impl(const NodeContext& ctx, const Tensor& x, const ResizeOptions& o,
                          std::vector<double> scales, Shape sizes, const std::vector<double>& roi) {
  const std::size_t r = x.rank();
  if (sizes.empty()) {
    if (scales.size() != r) ctx.fail_shape("scales must have one value per dimension");
    for (std::size_t d = 0; d < r; ++d) {
      if (!(scales[d] > 0)) ctx.fail("scales must be positive");
      const double s = std::floor(static_cast<double>(x.shape()[d]) * scales[d]);
      if (!(s < 1e12)) ctx.fail_shape("the output is too large");
      sizes.push_back(static_cast<std::int64_t>(s));
    }
  } else {
    if (sizes.size() != r) ctx.fail_shape("sizes must have one value per dimension");
    scales.assign(r, 1.0);
    for (std::size_t d = 0; d < r; ++d) {
      if (sizes[d] < 0) ctx.fail_shape("negative size");
      scales[d] = static_cast<double>(sizes[d]) / static_cast<double>(x.shape()[d]);
    }
  }
  element_count(sizes);
  std::vector<double> v = as_doubles(ctx, x);
  Shape shape = x.shape();
  for (std::size_t d = 0; d < r; ++d) {
    if (sizes[d] == shape[d] && scales[d] == 1.0 && o.transform != "tf_crop_and_resize") continue;
    if (shape[d] == 0) ctx.fail_shape("cannot resize an empty dimension");
    const double rs = roi.size() == 2 * r ? roi[d] : 0, re = roi.size() == 2 * r ? roi[d + r] : 1;
    const std::vector<Taps> taps = axis_taps(ctx, o, shape[d], sizes[d], scales[d], rs, re);
    const auto outer = static_cast<std::size_t>(product(shape, 0, d));
    const auto inner = static_cast<std::size_t>(product(shape, d + 1, r));
    const auto n_in = static_cast<std::size_t>(shape[d]);
    std::vector<double> y(outer * taps.size() * inner);
    for (std::size_t a = 0; a < outer; ++a) {
      for (std::size_t j = 0; j < taps.size(); ++j) {
        for (std::size_t i = 0; i < inner; ++i) {
          double s = 0;
          if (taps[j].index.empty()) s = o.extrapolation;
          for (std::size_t t = 0; t < taps[j].index.size(); ++t) {
            s += taps[j].weight[t] * v[(a * n_in + taps[j].index[t]) * inner + i];
          }
          y[(a * taps.size() + j) * inner + i] = s;
        }
      }
    }
    v = std::move(y);
    shape[d] = sizes[d];
  }
  return from_doubles(x.dtype(), shape, v);
}

inline std::vector<double> float_values(const NodeContext& ctx, const Tensor& t) {
  return visit_float(ctx, t, [](auto s) { return std::vector<double>(s.begin(), s.end()); });
}

}  // namespace detail

inline std::vector<Tensor> resize(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  visit_numeric(ctx, x, [](auto) { return 0; });
  detail::ResizeOptions o;
  o.mode = ctx.get_string("mode", "nearest");
  std::vector<double> scales, roi;
  Shape sizes;
  if (ctx.opset() < 11) {
    expect_inputs(ctx, 2, 2);
    o.transform = "asymmetric";
    o.nearest = "floor";
    scales = detail::float_values(ctx, ctx.input(1));
  } else {
    expect_inputs(ctx, 1, 4);
    o.transform = ctx.get_string("coordinate_transformation_mode", "half_pixel");
    o.nearest = ctx.get_string("nearest_mode", "round_prefer_floor");
    o.cubic_a = ctx.get_float("cubic_coeff_a", -0.75f);
    o.exclude_outside = ctx.get_int("exclude_outside", 0) != 0;
    o.extrapolation = ctx.get_float("extrapolation_value", 0.f);
    if (ctx.has_input(1) && ctx.input(1).size() > 0) roi = detail::float_values(ctx, ctx.input(1));
    if (ctx.has_input(2) && ctx.input(2).size() > 0) scales = detail::float_values(ctx, ctx.input(2));
    if (ctx.has_input(3) && ctx.input(3).size() > 0) sizes = int_values(ctx, ctx.input(3), "sizes");
    if (scales.empty() == sizes.empty()) ctx.fail("exactly one of scales and sizes must be given");
  }
  return single_output(detail::resize_impl(ctx, x, o, scales, sizes, roi));
}

/// Upsample: nearest or linear, asymmetric coordinates; scales an attribute (opset 7) or an
/// input (9).
inline std::vector<Tensor> upsample(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  detail::ResizeOptions o;
  o.mode = ctx.get_string("mode", "nearest");
  o.transform = "asymmetric";
  o.nearest = "floor";
  std::vector<double> scales;
  if (ctx.opset() < 9) {
    expect_inputs(ctx, 1, 1);
    for (const float f : ctx.get_floats("scales")) scales.push_back(f);
  } else {
    expect_inputs(ctx, 2, 2);
    scales = detail::float_values(ctx, ctx.input(1));
  }
  return single_output(detail::resize_impl(ctx, x, o, scales, {}, {}));
}

}  // namespace onelearn::onnx::ops
