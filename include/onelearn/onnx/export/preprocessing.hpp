#pragma once
/**
 * \file
 * \brief ONNX export of the scalers.
 * \ingroup onnx
 *
 * \code
 * #include <onelearn/onnx/export/preprocessing.hpp>
 * onelearn::preprocessing::StandardScaler<double> scaler;
 * onelearn::onnx::save(scaler.fit(X), "scaler.onnx");
 * \endcode
 *
 * ONNX export of the scalers: one ONNX-ML Scaler node, y = (x - offset) * scale, as skl2onnx
 * writes them; output "variable" (float, N x p).
 *
 * - StandardScaler: offset = mean (0 without with_mean), scale = 1 / scale() (1 without
 *   with_std).
 * - MinMaxScaler: x * scale() + min() written as (x + min/scale) * scale; with clip = true a
 *   Clip node to feature_range follows.
 * - MaxAbsScaler: offset 0, scale = 1 / scale().
 * The reciprocal is taken in double and rounded once to float32.
 */

#include <cstdint>
#include <string>
#include <vector>

#include "onelearn/onnx/export/core.hpp"
// standard_scaler.hpp first: it names onelearn::detail helpers as `detail::` from inside
// onelearn::preprocessing, which breaks once another preprocessing header has opened
// onelearn::preprocessing::detail.
#include "onelearn/preprocessing/standard_scaler.hpp"
// (keep the order)
#include "onelearn/preprocessing/max_abs_scaler.hpp"
#include "onelearn/preprocessing/min_max_scaler.hpp"

namespace onelearn::onnx {

namespace detail {

inline Exported export_scaler(GraphBuilder& b, const std::vector<double>& offset,
                              const std::vector<double>& scale, const std::string& x) {
  const std::string y = b.fresh("variable");
  auto& n = b.node("Scaler", {x}, {y}, ml_domain);
  std::vector<float> off, sc;
  for (const double o : offset) off.push_back(static_cast<float>(o));
  for (const double s : scale) sc.push_back(static_cast<float>(s));
  set_attribute(n, "offset", off);
  set_attribute(n, "scale", sc);
  const std::vector<std::int64_t> dims{-1, static_cast<std::int64_t>(offset.size())};
  b.declare(y, ::onnx::TensorProto::FLOAT, dims);
  return {{"variable", y, ::onnx::TensorProto::FLOAT, dims}};
}

}  // namespace detail

template <class T, class E>
Exported export_model(GraphBuilder& b, const preprocessing::StandardScaler<T, E>& m,
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
    const std::string lo =
        b.constant("clip_min", {}, {static_cast<float>(params.feature_range.min)});
    const std::string hi =
        b.constant("clip_max", {}, {static_cast<float>(params.feature_range.max)});
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

}  // namespace onelearn::onnx
