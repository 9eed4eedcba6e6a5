#pragma once
// BatchNormalization: Y = scale * (X - mean) / sqrt(var + epsilon) + B per channel (axis 1).
// Inference uses the given mean and var. training_mode=1 (opset 14+) normalizes with the batch's
// own statistics and also returns the updated running mean and variance,
// running = input * momentum + batch * (1 - momentum), as ONNX's reference does (the batch
// variance is the biased one). Parameters of shape (C, D1, ...) (opset < 9, spatial=0) are
// applied per element.

#include <cmath>
#include <cstdint>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"

namespace onelearn::onnx::ops {

inline std::vector<Tensor> batch_normalization(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail_shape("input must have shape (N, C, ...), found " + shape_string(x.shape()));
  const double epsilon = ctx.get_float("epsilon", 1e-5f);
  const double momentum = ctx.get_float("momentum", 0.9f);
  const bool training = ctx.opset() >= 14 && ctx.get_int("training_mode", 0) != 0;
  if (ctx.opset() < 7 && ctx.has("is_test") && ctx.get_int("is_test", 0) == 0 &&
      (ctx.wants_output(1) || ctx.wants_output(2))) {
    ctx.unsupported_attribute("is_test=0 with running statistics outputs");
  }
  const auto batch = static_cast<std::size_t>(x.shape()[0]);
  const auto channels = static_cast<std::size_t>(x.shape()[1]);
  const auto spatial = static_cast<std::size_t>(product(x.shape(), 2, x.rank()));
  for (std::size_t i = 1; i <= 4; ++i) {
    const Tensor& p = ctx.input(i);
    if (p.dtype() != x.dtype()) {
      ctx.unsupported_type(p.dtype(), "parameters of the input's element type");
    }
    if (p.size() != channels && p.size() != channels * spatial) {
      ctx.fail_shape("parameter " + std::to_string(i) + " of shape " + shape_string(p.shape()) +
                     " does not match the " + std::to_string(channels) + " channels");
    }
  }
  return visit_float(ctx, x, [&](auto v) {
    using T = typename decltype(v)::value_type;
    const auto scale = ctx.input(1).data<T>(), bias = ctx.input(2).data<T>();
    const auto mean_in = ctx.input(3).data<T>(), var_in = ctx.input(4).data<T>();
    const std::size_t per = mean_in.size() == channels ? 1 : spatial;  // parameters per channel
    const auto at = [&](std::span<const T> p, std::size_t c, std::size_t s) {
      return p.size() == channels ? p[c] : p[c * spatial + s];
    };
    std::vector<T> mean(mean_in.begin(), mean_in.end()), var(var_in.begin(), var_in.end());
    if (training) {
      for (std::size_t c = 0; c < channels; ++c) {
        double sum = 0, sq = 0;
        for (std::size_t b = 0; b < batch; ++b)
          for (std::size_t s = 0; s < spatial; ++s) sum += v[(b * channels + c) * spatial + s];
        const double count = static_cast<double>(batch * spatial);
        const double mu = sum / count;
        for (std::size_t b = 0; b < batch; ++b)
          for (std::size_t s = 0; s < spatial; ++s) {
            const double d = v[(b * channels + c) * spatial + s] - mu;
            sq += d * d;
          }
        for (std::size_t s = 0; s < per; ++s) {
          mean[c * per + s] = static_cast<T>(mu);
          var[c * per + s] = static_cast<T>(sq / count);
        }
      }
    }
    const std::span<const T> m(mean), va(var);
    std::vector<T> y(v.size());
    for (std::size_t b = 0; b < batch; ++b)
      for (std::size_t c = 0; c < channels; ++c)
        for (std::size_t s = 0; s < spatial; ++s) {
          const std::size_t k = (b * channels + c) * spatial + s;
          y[k] = static_cast<T>(at(scale, c, s) * (v[k] - at(m, c, s)) /
                                    std::sqrt(at(va, c, s) + static_cast<T>(epsilon)) +
                                at(bias, c, s));
        }
    std::vector<Tensor> out{Tensor(x.shape(), std::move(y))};
    if (training) {
      std::vector<T> running_mean(mean.size()), running_var(var.size());
      const auto mom = static_cast<T>(momentum);
      for (std::size_t i = 0; i < mean.size(); ++i) {
        running_mean[i] = mean_in[i] * mom + mean[i] * (T{1} - mom);
        running_var[i] = var_in[i] * mom + var[i] * (T{1} - mom);
      }
      out.emplace_back(ctx.input(3).shape(), std::move(running_mean));
      out.emplace_back(ctx.input(4).shape(), std::move(running_var));
    }
    return out;
  });
}

}  // namespace onelearn::onnx::ops
