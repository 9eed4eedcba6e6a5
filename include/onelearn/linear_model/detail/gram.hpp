#pragma once
// The normal equations of a linear model, summed over all ranks: the kernel Ridge, Lasso and
// ElasticNet share. Each rank computes G = Σ w_i x̃_i x̃_iᵀ, b = Σ w_i x̃_i ỹ_i and c = Σ w_i ỹ_i²
// over its rows (x̃ = x - x_mean and ỹ = y - y_mean with the global means; local_gram_sums in
// core/detail/gram_sums.hpp, which also serves space::gram), and normal_equations sums them over
// every rank in one all-reduce. The local sums run in the fit's compute space (space::gram: on
// the host, a Thrust system, or cuBLAS on a GPU); the all-reduce and the solve on the host.

#include <cstddef>
#include <optional>
#include <span>

#include <Eigen/Core>

#include "onelearn/base/in_space.hpp"
#include "onelearn/core/detail/gram_sums.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/space/data.hpp"
#include "onelearn/space/host.hpp"

namespace onelearn::linear_model::detail {

/// G (both triangles filled once normal_equations returns), b and c.
using NormalEquations = onelearn::detail::GramSums;

/// The normal equations over every rank's rows: one all-reduce of p(p+1)/2 + p + 1 doubles
/// (the lower triangle, Xᵀy and yᵀy). Every rank returns the same values. X, y and the weights
/// (empty: all 1) are this rank's, in compute space `s`.
template <class T, exec::ExecutionPolicy Exec, space::ComputeSpace S>
NormalEquations normal_equations(const Exec& exec, const S& s, space::matrix_view<const T> X,
                                 space::vector_view<const T> y, space::vector_view<const T> weights,
                                 double weight_scale, const Vector<double>& x_mean, double y_mean) {
  // gram: the space's kernel, found by argument-dependent lookup (space/host.hpp). run_in_space:
  // on a device, a rank whose allocation fails raises on every rank, not only its own.
  NormalEquations eq = onelearn::detail::run_in_space(
      exec, s, [&] { return gram(s, X, y, weights, weight_scale, x_mean, y_mean); });
  const index_t p = X.cols;
  if constexpr (Exec::is_distributed) {
    Eigen::VectorXd packed(p * (p + 1) / 2 + p + 1);
    index_t k = 0;
    for (index_t j = 0; j < p; ++j) {
      packed.segment(k, p - j) = eq.gram.col(j).tail(p - j);
      k += p - j;
    }
    packed.segment(k, p) = eq.xty;
    packed(k + p) = eq.yty;
    exec.allreduce(std::span(packed.data(), static_cast<std::size_t>(packed.size())),
                   exec::reduce_op::sum);
    k = 0;
    for (index_t j = 0; j < p; ++j) {
      eq.gram.col(j).tail(p - j) = packed.segment(k, p - j);
      k += p - j;
    }
    eq.xty = packed.segment(k, p);
    eq.yty = packed(k + p);
  }
  // Fill the upper triangle from the lower one.
  eq.gram = Eigen::MatrixXd(eq.gram.selfadjointView<Eigen::Lower>());
  return eq;
}

}  // namespace onelearn::linear_model::detail
