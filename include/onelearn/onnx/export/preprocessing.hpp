#pragma once
/**
 * \file
 * \brief ONNX export of the scalers, Normalizer, SimpleImputer, PolynomialFeatures and
 * OneHotEncoder.
 * \ingroup onnx
 *
 * \code
 * #include <onelearn/onnx/export/preprocessing.hpp>
 * onelearn::preprocessing::StandardScaler<double> scaler;
 * onelearn::onnx::save(scaler.fit(X), "scaler.onnx");
 * \endcode
 *
 * ONNX export of the numeric transformers; output "variable" (N x n_features_out, float or
 * double as ExportOptions asks).
 *
 * The scalers: one ONNX-ML Scaler node, y = (x - offset) * scale, as skl2onnx writes them (in
 * float64, whose Scaler output would be float32, Sub and Mul).
 * - StandardScaler: offset = mean (0 without with_mean), scale = 1 / scale() (1 without
 *   with_std).
 * - MinMaxScaler: x * scale() + min() written as (x + min/scale) * scale; with clip = true a
 *   Clip node to feature_range follows.
 * - MaxAbsScaler: offset 0, scale = 1 / scale().
 * The reciprocal is taken in double and rounded once to float32.
 *
 * The others in plain ONNX operators, which every runtime has (skl2onnx uses the ONNX-ML
 * Normalizer and Imputer for the first two):
 * - Normalizer: x / norm, the norm from ReduceL2, ReduceL1 or ReduceMax of Abs (keepdims), a
 *   norm below 10 epsilon of the estimator's type replaced by 1 (Less, Where), as transform.
 * - SimpleImputer: Where(IsNaN(x), statistics, x), then Gather of the kept columns when fit
 *   dropped all-missing ones.
 * - PolynomialFeatures: a ones column is appended to x (Shape, Gather, Concat, Expand); output
 *   column k multiplies `degree` Gathers of that matrix, its features padded with the ones
 *   column (Mul), so that every column is one product of the same number of factors.
 * - OneHotEncoder (numeric codes): per feature, its column (Gather) compared with its
 *   categories (Equal, broadcast to N x categories), cast to the model's precision, the blocks
 *   concatenated. A
 *   value that is no category gives a block of zeros, handle_unknown = "ignore"'s output: ONNX
 *   cannot raise the error of "error", so the exported encoder ignores unknown values. The
 *   comparison is in float32, so two categories of a feature that round to the same float32
 *   are refused (invalid_argument) in a float32 export. The text encoder (T = std::string) is
 *   not exportable.
 */

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/onnx/export/core.hpp"
// standard_scaler.hpp first: it names onelearn::detail helpers as `detail::` from inside
// onelearn::preprocessing, which breaks once another preprocessing header has opened
// onelearn::preprocessing::detail.
#include "onelearn/preprocessing/standard_scaler.hpp"
// (keep the order)
#include "onelearn/preprocessing/max_abs_scaler.hpp"
#include "onelearn/preprocessing/min_max_scaler.hpp"
#include "onelearn/preprocessing/normalizer.hpp"
#include "onelearn/preprocessing/one_hot_encoder.hpp"
#include "onelearn/preprocessing/polynomial_features.hpp"
#include "onelearn/preprocessing/simple_imputer.hpp"

namespace onelearn::onnx {

namespace detail {

inline Exported export_scaler(GraphBuilder& b, const std::vector<double>& offset,
                              const std::vector<double>& scale, const std::string& x) {
  const auto p = static_cast<std::int64_t>(offset.size());
  const std::vector<std::int64_t> dims{-1, p};
  if (b.is_float64()) {
    // Scaler's output is float32 only: the same (x - offset) * scale in Sub and Mul.
    const std::string centred = b.apply("Sub", {x, b.constant("offset", {p}, offset)}, "offset_x");
    const std::string y = b.apply("Mul", {centred, b.constant("scale", {p}, scale)}, "variable");
    return {{"variable", y, b.real_type(), dims}};
  }
  const std::string y = b.fresh("variable");
  auto& n = b.node("Scaler", {x}, {y}, ml_domain);
  set_attribute(n, "offset", to_floats(offset));
  set_attribute(n, "scale", to_floats(scale));
  b.declare(y, ::onnx::TensorProto::FLOAT, dims);
  return {{"variable", y, ::onnx::TensorProto::FLOAT, dims}};
}

}  // namespace detail

template <class T, class E, class S>
Exported export_model(GraphBuilder& b, const preprocessing::StandardScaler<T, E, S>& m,
                      const std::string& x) {
  const auto p = static_cast<std::size_t>(m.n_features_in());
  const auto& params = m.get_params();
  std::vector<double> offset(p, 0.0), scale(p, 1.0);
  for (std::size_t j = 0; j < p; ++j) {
    const auto i = static_cast<index_t>(j);
    if (params.with_mean) offset[j] = static_cast<double>(m.mean()(i));
    if (params.with_std) scale[j] = 1.0 / static_cast<double>(m.scale()(i));
  }
  return detail::export_scaler(b, offset, scale, x);
}

template <class T, class E>
Exported export_model(GraphBuilder& b, const preprocessing::MinMaxScaler<T, E>& m,
                      const std::string& x) {
  const auto p = static_cast<std::size_t>(m.n_features_in());
  std::vector<double> offset(p), scale(p);
  for (std::size_t j = 0; j < p; ++j) {
    const auto i = static_cast<index_t>(j);
    scale[j] = static_cast<double>(m.scale()(i));
    offset[j] = -static_cast<double>(m.min()(i)) / scale[j];
  }
  Exported out = detail::export_scaler(b, offset, scale, x);
  const auto& params = m.get_params();
  if (params.clip) {
    const std::string lo = b.constant("clip_min", {}, {static_cast<double>(params.feature_range.min)});
    const std::string hi = b.constant("clip_max", {}, {static_cast<double>(params.feature_range.max)});
    out[0].name = b.apply("Clip", {out[0].name, lo, hi}, "clipped");
  }
  return out;
}

template <class T, class E>
Exported export_model(GraphBuilder& b, const preprocessing::MaxAbsScaler<T, E>& m,
                      const std::string& x) {
  const auto p = static_cast<std::size_t>(m.n_features_in());
  std::vector<double> offset(p, 0.0), scale(p);
  for (std::size_t j = 0; j < p; ++j) {
    scale[j] = 1.0 / static_cast<double>(m.scale()(static_cast<index_t>(j)));
  }
  return detail::export_scaler(b, offset, scale, x);
}

template <class T, class E>
Exported export_model(GraphBuilder& b, const preprocessing::Normalizer<T, E>& m,
                      const std::string& x) {
  const std::string& norm = m.get_params().norm;
  std::string norms;
  auto reduce = [&](std::string_view op, const std::string& input) {
    norms = b.fresh("norms");
    auto& n = b.node(op, {input}, {norms});
    set_attribute(n, "axes", std::vector<std::int64_t>{1});
    set_attribute(n, "keepdims", std::int64_t{1});
  };
  if (norm == "l2") {
    reduce("ReduceL2", x);
  } else if (norm == "l1") {
    reduce("ReduceL1", x);
  } else {
    reduce("ReduceMax", b.apply("Abs", {x}, "magnitudes"));
  }
  // transform's _handle_zeros_in_scale: a norm below 10 epsilon of T divides by 1.
  const double tiny = 10 * static_cast<double>(std::numeric_limits<T>::epsilon());
  const std::string is_tiny =
      b.apply("Less", {norms, b.constant("tiny_norm", {}, {tiny})}, "is_tiny");
  const std::string divisor =
      b.apply("Where", {is_tiny, b.constant("one", {}, {1.0}), norms}, "divisors");
  const std::string y = b.apply("Div", {x, divisor}, "variable");
  const auto p = static_cast<std::int64_t>(m.n_features_in());
  return {{"variable", y, b.real_type(), {-1, p}}};
}

namespace detail {

/// op(inputs) with an "axis" attribute; returns its output, a fresh value called `base`.
inline std::string apply_on_axis(GraphBuilder& b, std::string_view op,
                                 const std::vector<std::string>& inputs, std::string_view base,
                                 std::int64_t axis) {
  const std::string out = b.fresh(base);
  set_attribute(b.node(op, inputs, {out}), "axis", axis);
  return out;
}

}  // namespace detail

template <class T, class E>
Exported export_model(GraphBuilder& b, const preprocessing::SimpleImputer<T, E>& m,
                      const std::string& x) {
  const Vector<T>& statistics = m.statistics();
  std::vector<double> fill;
  std::vector<std::int64_t> kept;
  for (index_t j = 0; j < statistics.size(); ++j) {
    const auto s = static_cast<double>(statistics(j));
    fill.push_back(std::isnan(s) ? 0.0 : s);  // NaN: dropped just below
    if (!std::isnan(s)) kept.push_back(j);
  }
  const auto p = static_cast<std::int64_t>(statistics.size());
  const auto n_kept = static_cast<std::int64_t>(kept.size());
  const std::string missing = b.apply("IsNaN", {x}, "is_missing");
  std::string y =
      b.apply("Where", {missing, b.constant("statistics", {1, p}, fill), x}, "variable");
  if (n_kept != p) {
    const std::string columns = b.constant_int64("kept_columns", {n_kept}, kept);
    y = detail::apply_on_axis(b, "Gather", {y, columns}, "variable", 1);
  }
  return {{"variable", y, b.real_type(), {-1, n_kept}}};
}

template <class T, class E>
Exported export_model(GraphBuilder& b, const preprocessing::PolynomialFeatures<T, E>& m,
                      const std::string& x) {
  const auto& powers = m.powers();  // n_out x p
  const auto n_out = static_cast<std::int64_t>(powers.rows());
  const auto p = static_cast<std::int64_t>(powers.cols());
  // Each output column's factors, features in increasing order (transform's product order).
  std::vector<std::vector<std::int64_t>> factors(static_cast<std::size_t>(n_out));
  std::size_t degree = 0;
  for (index_t k = 0; k < powers.rows(); ++k) {
    auto& f = factors[static_cast<std::size_t>(k)];
    for (index_t j = 0; j < powers.cols(); ++j) {
      f.insert(f.end(), static_cast<std::size_t>(powers(k, j)), j);
    }
    degree = std::max(degree, f.size());
  }
  // The ones column, N x 1: a 1 x 1 constant expanded to (N, 1).
  const std::string shape = b.apply("Shape", {x}, "input_shape");
  const std::string rows =
      b.apply("Gather", {shape, b.constant_int64("first_dimension", {1}, {0})}, "batch_size");
  const std::string ones_shape = detail::apply_on_axis(
      b, "Concat", {rows, b.constant_int64("one_column", {1}, {1})}, "ones_shape", 0);
  const std::string ones =
      b.apply("Expand", {b.constant("one", {1, 1}, {1.0}), ones_shape}, "ones");
  if (degree == 0) return {{"variable", ones, b.real_type(), {-1, n_out}}};

  const std::string padded = detail::apply_on_axis(b, "Concat", {x, ones}, "x_and_ones", 1);
  std::string y;
  for (std::size_t position = 0; position < degree; ++position) {
    std::vector<std::int64_t> columns;  // column p of `padded` is the ones
    for (const auto& f : factors) columns.push_back(position < f.size() ? f[position] : p);
    const std::string indices = b.constant_int64("factor_columns", {n_out}, columns);
    const std::string factor = detail::apply_on_axis(b, "Gather", {padded, indices}, "factors", 1);
    y = position == 0 ? factor : b.apply("Mul", {y, factor}, "products");
  }
  return {{"variable", y, b.real_type(), {-1, n_out}}};
}

template <std::floating_point T, class E>
Exported export_model(GraphBuilder& b, const preprocessing::OneHotEncoder<T, E>& m,
                      const std::string& x) {
  const auto& categories = m.categories();
  std::vector<std::string> blocks;
  for (std::size_t j = 0; j < categories.size(); ++j) {
    const Vector<T>& c = categories[j];
    std::vector<double> values;
    for (index_t k = 0; k < c.size(); ++k) {
      values.push_back(static_cast<double>(c(k)));
      if (k > 0 && !b.is_float64() &&
          static_cast<float>(values[static_cast<std::size_t>(k)]) ==
              static_cast<float>(values[static_cast<std::size_t>(k - 1)])) {
        throw invalid_argument("onnx::to_proto: OneHotEncoder's categories " +
                               std::to_string(static_cast<double>(c(k - 1))) + " and " +
                               std::to_string(static_cast<double>(c(k))) + " of feature " +
                               std::to_string(j) + " are one float32 value; the exported graph " +
                               "compares float32 inputs and could not tell them apart");
      }
    }
    const auto count = static_cast<std::int64_t>(values.size());
    const std::string feature = b.constant_int64("feature", {1}, {static_cast<std::int64_t>(j)});
    const std::string column = detail::apply_on_axis(b, "Gather", {x, feature}, "column", 1);
    const std::string is_category =
        b.apply("Equal", {column, b.constant("categories", {1, count}, values)}, "is_category");
    const std::string block = b.fresh("indicators");
    set_attribute(b.node("Cast", {is_category}, {block}), "to", std::int64_t{b.real_type()});
    blocks.push_back(block);
  }
  const std::string y =
      blocks.size() == 1 ? blocks[0] : detail::apply_on_axis(b, "Concat", blocks, "variable", 1);
  return {{"variable", y, b.real_type(), {-1, static_cast<std::int64_t>(m.n_output_features())}}};
}

}  // namespace onelearn::onnx
