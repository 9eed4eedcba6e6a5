#pragma once
// ONNX-ML operators: LinearClassifier (integer class labels), LinearRegressor, Scaler. Inputs
// float32, float64 or int64, a batch of rows (N, C) or one row (C); outputs float32, as the
// ONNX-ML specification (and scikit-learn's converters) have them.
//
// LinearClassifier: scores Z = X coefficients' + intercepts (E columns, one per class; E = 1
// with two labels is the binary case), then post_transform (NONE, SOFTMAX, LOGISTIC,
// SOFTMAX_ZERO); the label Y is the class with the largest score (binary: labels[1] if the score
// is positive) and, in the binary case, Z gets the two columns (-s, s) before the transform as
// onnxruntime does.

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdint>
#include <string>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"

namespace onelearn::onnx::ops {

namespace detail {

/// The input as float rows: (N, C) or one row (C).
inline std::vector<double> ml_rows(const NodeContext& ctx, std::int64_t& rows, std::int64_t& cols) {
  const Tensor& x = ctx.input(0);
  if (x.rank() == 1) {
    rows = 1;
    cols = x.shape()[0];
  } else if (x.rank() == 2) {
    rows = x.shape()[0];
    cols = x.shape()[1];
  } else {
    ctx.fail_shape("input must be (N, C) or (C), found " + shape_string(x.shape()));
  }
  return x.to_vector<double>();
}

inline void post_transform(const NodeContext& ctx, const std::string& kind, std::vector<double>& z,
                           std::int64_t rows, std::int64_t cols) {
  if (kind == "NONE") return;
  for (std::int64_t r = 0; r < rows; ++r) {
    double* row = z.data() + r * cols;
    if (kind == "LOGISTIC") {
      for (std::int64_t j = 0; j < cols; ++j) row[j] = 1.0 / (1.0 + std::exp(-row[j]));
    } else if (kind == "SOFTMAX" || kind == "SOFTMAX_ZERO") {
      // SOFTMAX_ZERO leaves zero scores at zero.
      const bool zero = kind == "SOFTMAX_ZERO";
      double top = -std::numeric_limits<double>::infinity(), sum = 0;
      for (std::int64_t j = 0; j < cols; ++j)
        if (!zero || row[j] != 0) top = std::max(top, row[j]);
      for (std::int64_t j = 0; j < cols; ++j) {
        if (zero && row[j] == 0) continue;
        row[j] = std::exp(row[j] - top);
        sum += row[j];
      }
      for (std::int64_t j = 0; j < cols; ++j) {
        if (!zero || row[j] != 0) row[j] /= sum;
      }
    } else {
      ctx.unsupported_attribute("post_transform " + kind);
    }
  }
}

/// Z = X W' + b with W (targets x cols) from `coefficients`.
inline std::vector<double> linear_scores(const NodeContext& ctx, const std::vector<double>& x,
                                         std::int64_t rows, std::int64_t cols,
                                         std::int64_t targets) {
  const std::vector<float> coef = ctx.get_floats("coefficients");
  std::vector<float> intercepts = ctx.get_floats("intercepts");
  if (static_cast<std::int64_t>(coef.size()) != targets * cols) {
    ctx.fail_shape("coefficients has " + std::to_string(coef.size()) + " values, " +
                   std::to_string(targets) + " targets of " + std::to_string(cols) +
                   " features need " + std::to_string(targets * cols));
  }
  if (intercepts.empty()) intercepts.assign(static_cast<std::size_t>(targets), 0.f);
  if (static_cast<std::int64_t>(intercepts.size()) != targets) {
    ctx.fail_shape("intercepts has " + std::to_string(intercepts.size()) + " values, expected " +
                   std::to_string(targets));
  }
  std::vector<double> z(static_cast<std::size_t>(rows * targets));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t t = 0; t < targets; ++t) {
      double s = intercepts[static_cast<std::size_t>(t)];
      for (std::int64_t j = 0; j < cols; ++j) {
        s += static_cast<double>(coef[static_cast<std::size_t>(t * cols + j)]) *
             x[static_cast<std::size_t>(r * cols + j)];
      }
      z[static_cast<std::size_t>(r * targets + t)] = s;
    }
  return z;
}

inline std::vector<float> to_float(const std::vector<double>& v) {
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(v[i]);
  return out;
}

}  // namespace detail

inline std::vector<Tensor> linear_classifier(const NodeContext& ctx) {
  if (ctx.has("classlabels_strings")) {
    throw unsupported_error(unsupported_kind::data_type, "string",
                            ctx.where() + ": unsupported data type string (class labels)");
  }
  const std::vector<std::int64_t> labels =
      ctx.get_ints("classlabels_ints").value_or(std::vector<std::int64_t>{});
  if (labels.empty()) ctx.fail("attribute 'classlabels_ints' is required");
  std::int64_t rows = 0, cols = 0;
  const std::vector<double> x = detail::ml_rows(ctx, rows, cols);
  const std::int64_t intercept_count = static_cast<std::int64_t>(ctx.get_floats("intercepts").size());
  const std::int64_t targets =
      intercept_count > 0 ? intercept_count
                          : (cols > 0 ? static_cast<std::int64_t>(ctx.get_floats("coefficients").size()) / cols : 0);
  const bool binary = targets == 1 && labels.size() == 2;
  if (!binary && targets != static_cast<std::int64_t>(labels.size())) {
    ctx.fail_shape(std::to_string(targets) + " score columns for " +
                   std::to_string(labels.size()) + " class labels");
  }
  std::vector<double> z = detail::linear_scores(ctx, x, rows, cols, targets);
  std::vector<std::int64_t> y(static_cast<std::size_t>(rows));
  std::int64_t width = targets;
  if (binary) {
    std::vector<double> two(static_cast<std::size_t>(rows * 2));
    for (std::int64_t r = 0; r < rows; ++r) {
      const double s = z[static_cast<std::size_t>(r)];
      y[static_cast<std::size_t>(r)] = s > 0 ? labels[1] : labels[0];
      two[static_cast<std::size_t>(2 * r)] = -s;
      two[static_cast<std::size_t>(2 * r + 1)] = s;
    }
    z = std::move(two);
    width = 2;
  } else {
    for (std::int64_t r = 0; r < rows; ++r) {
      std::int64_t best = 0;
      for (std::int64_t t = 1; t < targets; ++t) {
        if (z[static_cast<std::size_t>(r * targets + t)] >
            z[static_cast<std::size_t>(r * targets + best)]) {
          best = t;
        }
      }
      y[static_cast<std::size_t>(r)] = labels[static_cast<std::size_t>(best)];
    }
  }
  const std::string transform = ctx.get_string("post_transform", "NONE");
  if (binary && transform == "LOGISTIC") {
    // The two columns are 1 - p and p, p the sigmoid of the one score.
    for (std::int64_t r = 0; r < rows; ++r) {
      const double p = 1.0 / (1.0 + std::exp(-z[static_cast<std::size_t>(2 * r + 1)]));
      z[static_cast<std::size_t>(2 * r)] = 1 - p;
      z[static_cast<std::size_t>(2 * r + 1)] = p;
    }
  } else {
    detail::post_transform(ctx, transform, z, rows, width);
  }
  return {Tensor(Shape{rows}, std::move(y)), Tensor(Shape{rows, width}, detail::to_float(z))};
}

inline std::vector<Tensor> linear_regressor(const NodeContext& ctx) {
  std::int64_t rows = 0, cols = 0;
  const std::vector<double> x = detail::ml_rows(ctx, rows, cols);
  const std::int64_t targets = ctx.get_int("targets", 1);
  if (targets <= 0) ctx.fail("attribute 'targets' must be positive");
  std::vector<double> z = detail::linear_scores(ctx, x, rows, cols, targets);
  detail::post_transform(ctx, ctx.get_string("post_transform", "NONE"), z, rows, targets);
  return single_output(Tensor(Shape{rows, targets}, detail::to_float(z)));
}

/// Scaler: Y = (X - offset) * scale, offset and scale of one value or one per feature.
inline std::vector<Tensor> scaler(const NodeContext& ctx) {
  const Tensor& in = ctx.input(0);
  std::int64_t rows = 0, cols = 0;
  const std::vector<double> x = detail::ml_rows(ctx, rows, cols);
  const std::vector<float> offset = ctx.get_floats("offset");
  const std::vector<float> scale = ctx.get_floats("scale");
  const auto per_feature = [&](const std::vector<float>& v, const char* name) {
    if (v.size() != 1 && static_cast<std::int64_t>(v.size()) != cols) {
      ctx.fail_shape(std::string("attribute '") + name + "' has " + std::to_string(v.size()) +
                     " values, expected 1 or " + std::to_string(cols));
    }
  };
  if (!offset.empty()) per_feature(offset, "offset");
  if (!scale.empty()) per_feature(scale, "scale");
  std::vector<float> y(x.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < cols; ++j) {
      const auto k = static_cast<std::size_t>(r * cols + j);
      const auto jj = static_cast<std::size_t>(j);
      const double o = offset.empty() ? 0.0 : offset[offset.size() == 1 ? 0 : jj];
      const double s = scale.empty() ? 1.0 : scale[scale.size() == 1 ? 0 : jj];
      y[k] = static_cast<float>((x[k] - o) * s);
    }
  return single_output(Tensor(in.shape(), std::move(y)));
}

}  // namespace onelearn::onnx::ops
