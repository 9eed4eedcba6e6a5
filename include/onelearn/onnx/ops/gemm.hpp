#pragma once
// Gemm (Y = alpha * A' * B' + beta * C, C broadcast to Y) and MatMul (numpy.matmul: 1-d operands
// promoted, batch dimensions broadcast). Matrix products of untransposed operands whose shape
// suits it run on the unpacked kernel (nn/detail/unpacked_gemm.hpp: a batch of rows times a
// layer's weights as stored, 1.5x Eigen's on bench/'s mlp layers on one thread, 2.8x on two);
// the others through the networks' GEMM (nn/detail/gemm.hpp: Eigen's kernel with packing
// buffers that persist from one run to the next), adding onto an output that holds beta * C
// first.
// A product with one row or one column (a batch of one) goes to Eigen's matrix-vector kernel
// instead, as do Gemm with alpha != 1 and MatMul of integers: packing a layer's weights for a
// single row cost 4x the product (measured on bench/'s mlp network, 110 us against 25).

#include <Eigen/Core>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "onelearn/nn/detail/gemm.hpp"
#include "onelearn/nn/detail/unpacked_gemm.hpp"
#include "onelearn/onnx/ops/common.hpp"

namespace onelearn::onnx::ops {

namespace detail {

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using ConstMap = Eigen::Map<const RowMajor<T>>;
template <class T>
using MutMap = Eigen::Map<RowMajor<T>>;

}  // namespace detail

inline std::vector<Tensor> gemm(const NodeContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.rank() != 2 || b.rank() != 2) {
    ctx.fail_shape("A and B must be 2-d, found " + shape_string(a.shape()) + " and " +
                   shape_string(b.shape()));
  }
  if (a.dtype() != b.dtype()) ctx.fail("A and B must have one element type");
  const bool trans_a = ctx.get_int("transA", 0) != 0;
  const bool trans_b = ctx.get_int("transB", 0) != 0;
  const double alpha = ctx.get_float("alpha", 1.f);
  const double beta = ctx.get_float("beta", 1.f);
  const std::int64_t m = trans_a ? a.shape()[1] : a.shape()[0];
  const std::int64_t k = trans_a ? a.shape()[0] : a.shape()[1];
  const std::int64_t kb = trans_b ? b.shape()[1] : b.shape()[0];
  const std::int64_t n = trans_b ? b.shape()[0] : b.shape()[1];
  if (k != kb) {
    ctx.fail_shape("A" + std::string(trans_a ? "'" : "") + " of shape " +
                   shape_string(a.shape()) + " and B" + (trans_b ? "'" : "") + " of shape " +
                   shape_string(b.shape()) + " do not multiply");
  }
  const Shape out{m, n};
  return single_output(visit_float(ctx, a, [&](auto va) {
    using T = typename decltype(va)::value_type;
    detail::ConstMap<T> ma(va.data(), a.shape()[0], a.shape()[1]);
    detail::ConstMap<T> mb(b.data<T>().data(), b.shape()[0], b.shape()[1]);
    std::vector<T> y(static_cast<std::size_t>(m * n), T{0});
    const bool has_c = ctx.has_input(2) && beta != 0;
    if (has_c) {
      const Tensor& c = ctx.input(2);
      if (c.dtype() != a.dtype()) ctx.fail("C must have A's element type");
      if (broadcast_shape(ctx, out, c.shape()) != out) {
        ctx.fail_shape("C of shape " + shape_string(c.shape()) + " does not broadcast to " +
                       shape_string(out));
      }
    }
    if (alpha == 1 && m > 1 && n > 1) {
      if (has_c) {
        const T be = static_cast<T>(beta);
        y = broadcast_apply<T>(out, out, std::span<const T>(y), ctx.input(2).shape(),
                               ctx.input(2).data<T>(), [&](T, T q) { return be * q; });
      }
      if (!trans_a && !trans_b && nn::detail::UnpackedGemm<T>::suits(m, n, k)) {
        nn::detail::unpacked_gemm_accumulate<T>(m, n, k, va.data(), k, b.data<T>().data(), n,
                                                y.data(), n);
      } else {
        nn::detail::gemm_accumulate<T>({va.data(), a.shape()[0], a.shape()[1], trans_a},
                                       {b.data<T>().data(), b.shape()[0], b.shape()[1], trans_b},
                                       y.data(), n);
      }
      return Tensor(out, std::move(y));
    }
    detail::MutMap<T> my(y.data(), m, n);
    const T al = static_cast<T>(alpha);
    if (trans_a && trans_b) my.noalias() = al * (ma.transpose() * mb.transpose());
    else if (trans_a) my.noalias() = al * (ma.transpose() * mb);
    else if (trans_b) my.noalias() = al * (ma * mb.transpose());
    else my.noalias() = al * (ma * mb);
    if (has_c) {
      const Tensor& c = ctx.input(2);
      const T be = static_cast<T>(beta);
      y = broadcast_apply<T>(out, out, std::span<const T>(y), c.shape(), c.data<T>(),
                             [&](T p, T q) { return p + be * q; });
    }
    return Tensor(out, std::move(y));
  }));
}

inline std::vector<Tensor> matmul(const NodeContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype()) ctx.fail("A and B must have one element type");
  if (a.rank() == 0 || b.rank() == 0) ctx.fail_shape("MatMul operands must not be scalars");
  // numpy: a 1-d A is a row vector, a 1-d B a column vector; the added dimension is dropped.
  Shape sa = a.shape(), sb = b.shape();
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  const std::int64_t m = sa[sa.size() - 2], k = sa.back();
  const std::int64_t kb = sb[sb.size() - 2], n = sb.back();
  if (k != kb) {
    ctx.fail_shape("shapes " + shape_string(a.shape()) + " and " + shape_string(b.shape()) +
                   " do not multiply");
  }
  const Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
  const Shape batch = broadcast_shape(ctx, batch_a, batch_b);
  Shape out = batch;
  if (a.rank() > 1) out.push_back(m);
  if (b.rank() > 1) out.push_back(n);
  const auto batches = static_cast<std::size_t>(product(batch, 0, batch.size()));
  // For every output batch, the batch index of A and of B (broadcast): computed with
  // broadcast_apply over index tensors.
  std::vector<std::int64_t> ia(static_cast<std::size_t>(product(batch_a, 0, batch_a.size())));
  std::vector<std::int64_t> ib(static_cast<std::size_t>(product(batch_b, 0, batch_b.size())));
  for (std::size_t i = 0; i < ia.size(); ++i) ia[i] = static_cast<std::int64_t>(i);
  for (std::size_t i = 0; i < ib.size(); ++i) ib[i] = static_cast<std::int64_t>(i);
  const auto pa = broadcast_apply<std::int64_t>(batch, batch_a, std::span<const std::int64_t>(ia),
                                                batch_b, std::span<const std::int64_t>(ib),
                                                [](std::int64_t x, std::int64_t) { return x; });
  const auto pb = broadcast_apply<std::int64_t>(batch, batch_a, std::span<const std::int64_t>(ia),
                                                batch_b, std::span<const std::int64_t>(ib),
                                                [](std::int64_t, std::int64_t y) { return y; });
  return single_output(visit_types<types::floats | TypeSet{DataType::int64, DataType::int32}>(ctx, a, [&](auto va) {
    using T = typename decltype(va)::value_type;
    const auto vb = b.data<T>();
    if constexpr (std::is_floating_point_v<T>) {
      if (m > 1 && n > 1) {
        std::vector<T> y(batches * static_cast<std::size_t>(m * n), T{0});
        const bool unpacked = nn::detail::UnpackedGemm<T>::suits(m, n, k);
        for (std::size_t p = 0; p < batches; ++p) {
          const T* pa_data = va.data() + pa[p] * m * k;
          const T* pb_data = vb.data() + pb[p] * k * n;
          T* py = y.data() + static_cast<std::int64_t>(p) * m * n;
          if (unpacked) {
            nn::detail::unpacked_gemm_accumulate<T>(m, n, k, pa_data, k, pb_data, n, py, n);
          } else {
            nn::detail::gemm_accumulate<T>({pa_data, m, k}, {pb_data, k, n}, py, n);
          }
        }
        return Tensor(out, std::move(y));
      }
    }
    std::vector<T> y(batches * static_cast<std::size_t>(m * n));
    for (std::size_t p = 0; p < batches; ++p) {
      detail::ConstMap<T> ma(va.data() + pa[p] * m * k, m, k);
      detail::ConstMap<T> mb(vb.data() + pb[p] * k * n, k, n);
      detail::MutMap<T> my(y.data() + static_cast<std::int64_t>(p) * m * n, m, n);
      my.noalias() = ma * mb;
    }
    return Tensor(out, std::move(y));
  }));
}

}  // namespace onelearn::onnx::ops
