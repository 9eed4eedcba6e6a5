#pragma once
// ONNX-ML's feature transforms, the nodes scikit-learn's converters (skl2onnx) write for the
// preprocessing estimators: Normalizer, Imputer, Binarizer, OneHotEncoder, LabelEncoder
// (numeric keys and values) and ArrayFeatureExtractor. Where the specification leaves a case
// open, the choice is onnxruntime's (the runtime these files are written for), named below.
//
// - Normalizer: each row (of an (N, C) input; a (C) input is one row) divided by its MAX (the
//   largest value, not the largest magnitude: onnxruntime's reading of "max(x_i)"), L1 or L2
//   norm; a row whose norm is 0 is copied. Output float32; computed in double.
// - Imputer: values equal to replaced_value_float (every NaN when it is NaN) or to
//   replaced_value_int64 become imputed_value_floats / imputed_value_int64s (one value, or one
//   per feature of the last axis). Output of the input's type.
// - Binarizer: 1 where x > threshold, else 0, in the input's type.
// - OneHotEncoder: input int64, int32, float or double (reals truncated to int64, as
//   onnxruntime does); output float32 of shape input + [categories]; with zeros = 0 a value
//   that is no category is an error.
// - LabelEncoder (opsets 1-3 with numbers): keys_int64s or keys_floats to values_int64s or
//   values_floats, others to default_int64 (-1) / default_float (-0.0); a NaN key matches NaN.
//   Strings are unsupported (onelearn's tensors hold numbers).
// - ArrayFeatureExtractor: Z = X[..., Y] along the last axis (a (C) input gives (1, k)).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"

namespace onelearn::onnx::ops {

namespace detail {

/// Rows and width of an ONNX-ML (N, C) or (C) input; another rank is a shape error.
inline std::pair<std::int64_t, std::int64_t> ml_matrix_shape(const NodeContext& ctx,
                                                             const Tensor& x) {
  if (x.rank() == 1) return {1, x.shape()[0]};
  if (x.rank() == 2) return {x.shape()[0], x.shape()[1]};
  ctx.fail_shape("input must be (N, C) or (C), found " + shape_string(x.shape()));
}

/// The last axis' length (1 for a scalar).
inline std::int64_t last_axis(const Tensor& x) {
  return x.rank() == 0 ? 1 : x.shape()[x.rank() - 1];
}

}  // namespace detail

inline std::vector<Tensor> ml_normalizer(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& in = ctx.input(0);
  const std::string norm = ctx.get_string("norm", "MAX");
  if (norm != "MAX" && norm != "L1" && norm != "L2") ctx.unsupported_attribute("norm " + norm);
  // Not a structured binding: the lambda below captures them (clang refuses that before C++20's
  // P1091 support, which its 14 and 15 lack).
  const std::pair<std::int64_t, std::int64_t> matrix = detail::ml_matrix_shape(ctx, in);
  const std::int64_t rows = matrix.first, cols = matrix.second;
  std::vector<float> y(static_cast<std::size_t>(rows * cols));
  visit_types<types::floats | TypeSet{DataType::int64, DataType::int32}>(
      ctx, in, [&](auto x) {
        for (std::int64_t r = 0; r < rows; ++r) {
          const auto* row = x.data() + r * cols;
          double divisor = 0;
          if (norm == "MAX") {
            divisor = cols > 0 ? static_cast<double>(*std::max_element(row, row + cols)) : 0.0;
          } else {
            for (std::int64_t j = 0; j < cols; ++j) {
              const auto v = static_cast<double>(row[j]);
              divisor += norm == "L1" ? std::abs(v) : v * v;
            }
            if (norm == "L2") divisor = std::sqrt(divisor);
          }
          if (divisor == 0) divisor = 1;  // a zero row stays as it is
          for (std::int64_t j = 0; j < cols; ++j) {
            y[static_cast<std::size_t>(r * cols + j)] =
                static_cast<float>(static_cast<double>(row[j]) / divisor);
          }
        }
        return 0;
      });
  return single_output(Tensor(in.shape(), std::move(y)));
}

inline std::vector<Tensor> ml_imputer(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& in = ctx.input(0);
  const std::vector<float> floats = ctx.get_floats("imputed_value_floats");
  const std::vector<std::int64_t> ints =
      ctx.get_ints("imputed_value_int64s").value_or(std::vector<std::int64_t>{});
  if (floats.empty() == ints.empty()) {
    ctx.fail("expects exactly one of imputed_value_floats and imputed_value_int64s");
  }
  const std::int64_t width = detail::last_axis(in);
  const std::size_t count = floats.empty() ? ints.size() : floats.size();
  if (count != 1 && static_cast<std::int64_t>(count) != width) {
    ctx.fail_shape("has " + std::to_string(count) + " imputed values, expected 1 or " +
                   std::to_string(width) + " (the input's last axis)");
  }
  return visit_types<types::floats | TypeSet{DataType::int64, DataType::int32}>(
      ctx, in, [&](auto x) {
        using T = typename decltype(x)::element_type;
        std::vector<std::remove_const_t<T>> y(x.begin(), x.end());
        if constexpr (std::is_floating_point_v<T>) {
          if (floats.empty()) ctx.fail("a real input needs imputed_value_floats");
          const double replaced = ctx.get_float("replaced_value_float", 0.0F);
          for (std::size_t i = 0; i < y.size(); ++i) {
            const double v = static_cast<double>(y[i]);
            if (std::isnan(replaced) ? std::isnan(v) : v == replaced) {
              y[i] = static_cast<T>(floats[count == 1 ? 0 : i % count]);
            }
          }
        } else {
          if (ints.empty()) ctx.fail("an integer input needs imputed_value_int64s");
          const std::int64_t replaced = ctx.get_int("replaced_value_int64", 0);
          for (std::size_t i = 0; i < y.size(); ++i) {
            if (static_cast<std::int64_t>(y[i]) == replaced) {
              y[i] = static_cast<T>(ints[count == 1 ? 0 : i % count]);
            }
          }
        }
        return single_output(Tensor(in.shape(), std::move(y)));
      });
}

inline std::vector<Tensor> ml_binarizer(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& in = ctx.input(0);
  const double threshold = ctx.get_float("threshold", 0.0F);
  return visit_types<types::floats | TypeSet{DataType::int64, DataType::int32}>(
      ctx, in, [&](auto x) {
        using T = std::remove_const_t<typename decltype(x)::element_type>;
        std::vector<T> y(x.size());
        for (std::size_t i = 0; i < y.size(); ++i) {
          y[i] = static_cast<double>(x[i]) > threshold ? T(1) : T(0);
        }
        return single_output(Tensor(in.shape(), std::move(y)));
      });
}

inline std::vector<Tensor> ml_one_hot_encoder(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& in = ctx.input(0);
  if (ctx.has("cats_strings")) {
    throw unsupported_error(unsupported_kind::data_type, "string",
                            ctx.where() + ": unsupported data type string (cats_strings)");
  }
  const std::vector<std::int64_t> cats =
      ctx.get_ints("cats_int64s").value_or(std::vector<std::int64_t>{});
  if (cats.empty()) ctx.fail("attribute 'cats_int64s' is required");
  const bool zeros = ctx.get_int("zeros", 1) != 0;
  std::unordered_map<std::int64_t, std::size_t> position;
  for (std::size_t k = 0; k < cats.size(); ++k) position.emplace(cats[k], k);
  std::vector<std::int64_t> shape = in.shape();
  shape.push_back(static_cast<std::int64_t>(cats.size()));
  std::vector<float> y(static_cast<std::size_t>(in.size()) * cats.size(), 0.0F);
  visit_types<types::floats | TypeSet{DataType::int64, DataType::int32}>(ctx, in, [&](auto x) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double v = static_cast<double>(x[i]);
      // Reals are truncated to int64 (onnxruntime); NaN and values beyond int64 are no category.
      const bool representable = std::isfinite(v) && std::abs(v) < 9.2e18;
      const auto found =
          representable ? position.find(static_cast<std::int64_t>(x[i])) : position.end();
      if (found != position.end()) {
        y[i * cats.size() + found->second] = 1.0F;
      } else if (!zeros) {
        ctx.fail("value " + std::to_string(v) + " (element " + std::to_string(i) +
                 ") is no category, and zeros = 0 makes that an error");
      }
    }
    return 0;
  });
  return single_output(Tensor(Shape(shape), std::move(y)));
}

inline std::vector<Tensor> ml_label_encoder(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& in = ctx.input(0);
  for (const char* name : {"keys_strings", "values_strings", "classes_strings"}) {
    if (ctx.has(name)) {
      throw unsupported_error(unsupported_kind::data_type, "string",
                              ctx.where() + ": unsupported data type string (" + name + ")");
    }
  }
  const std::vector<float> key_floats = ctx.get_floats("keys_floats");
  const std::vector<std::int64_t> key_ints =
      ctx.get_ints("keys_int64s").value_or(std::vector<std::int64_t>{});
  const std::vector<float> value_floats = ctx.get_floats("values_floats");
  const std::vector<std::int64_t> value_ints =
      ctx.get_ints("values_int64s").value_or(std::vector<std::int64_t>{});
  if (key_floats.empty() == key_ints.empty() || value_floats.empty() == value_ints.empty()) {
    ctx.fail("expects exactly one of keys_int64s and keys_floats, and one of values_int64s and "
             "values_floats");
  }
  const std::size_t keys = key_ints.empty() ? key_floats.size() : key_ints.size();
  const std::size_t values = value_ints.empty() ? value_floats.size() : value_ints.size();
  if (keys != values) {
    ctx.fail_shape("has " + std::to_string(keys) + " keys and " + std::to_string(values) +
                   " values, expected as many of each");
  }
  // Each input element's position among the keys, or keys.size() for the default.
  std::vector<std::size_t> where(static_cast<std::size_t>(in.size()), keys);
  if (!key_ints.empty()) {
    if (in.dtype() != DataType::int64) ctx.unsupported_type(in.dtype(), "int64 (keys_int64s)");
    std::unordered_map<std::int64_t, std::size_t> index;
    for (std::size_t k = keys; k-- > 0;) index[key_ints[k]] = k;  // the first of equal keys
    const auto x = in.data<std::int64_t>();
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (const auto it = index.find(x[i]); it != index.end()) where[i] = it->second;
    }
  } else {
    if (in.dtype() != DataType::float32) ctx.unsupported_type(in.dtype(), "float (keys_floats)");
    const auto x = in.data<float>();
    for (std::size_t i = 0; i < x.size(); ++i) {
      for (std::size_t k = 0; k < keys; ++k) {
        const float key = key_floats[k];
        if (x[i] == key || (std::isnan(x[i]) && std::isnan(key))) {
          where[i] = k;
          break;
        }
      }
    }
  }
  if (!value_ints.empty()) {
    const std::int64_t fallback = ctx.get_int("default_int64", -1);
    std::vector<std::int64_t> y(where.size());
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = where[i] < keys ? value_ints[where[i]] : fallback;
    return single_output(Tensor(in.shape(), std::move(y)));
  }
  const float fallback = ctx.get_float("default_float", -0.0F);
  std::vector<float> y(where.size());
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = where[i] < keys ? value_floats[where[i]] : fallback;
  return single_output(Tensor(in.shape(), std::move(y)));
}

inline std::vector<Tensor> ml_array_feature_extractor(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const Tensor& in = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (in.rank() == 0) ctx.fail_shape("X must have at least one axis, found a scalar");
  if (indices.dtype() != DataType::int64) ctx.unsupported_type(indices.dtype(), "int64 (Y)");
  const std::int64_t stride = detail::last_axis(in);
  const auto picks = indices.data<std::int64_t>();
  if (picks.empty()) ctx.fail_shape("Y holds no index");
  for (std::size_t j = 0; j < picks.size(); ++j) {
    if (picks[j] < 0 || picks[j] >= stride) {
      ctx.fail_shape("Y[" + std::to_string(j) + "] = " + std::to_string(picks[j]) +
                     " is outside 0.." + std::to_string(stride - 1) + " (X's last axis)");
    }
  }
  std::vector<std::int64_t> shape = in.shape();
  if (shape.size() == 1) shape.insert(shape.begin(), 1);  // (C) gives (1, k), as onnxruntime
  shape.back() = static_cast<std::int64_t>(picks.size());
  return visit_types<types::numbers>(ctx, in, [&](auto x) {
    using T = std::remove_const_t<typename decltype(x)::element_type>;
    const std::size_t outer = stride > 0 ? x.size() / static_cast<std::size_t>(stride) : 0;
    std::vector<T> z;
    z.reserve(outer * picks.size());
    for (std::size_t r = 0; r < outer; ++r) {
      for (const std::int64_t p : picks) z.push_back(x[r * static_cast<std::size_t>(stride) + static_cast<std::size_t>(p)]);
    }
    return single_output(Tensor(Shape(shape), std::move(z)));
  });
}

}  // namespace onelearn::onnx::ops
