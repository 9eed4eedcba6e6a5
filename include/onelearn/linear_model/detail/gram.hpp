#pragma once
// The normal equations of a linear model, summed over all ranks: the kernel Ridge, Lasso and
// ElasticNet share: under a distributed policy the linear models all-reduce XᵀX and Xᵀy.
//
//   local_normal_equations  this rank's  G = Σ w_i x̃_i x̃_iᵀ,  b = Σ w_i x̃_i ỹ_i,  c = Σ w_i ỹ_i²
//                           with x̃ = x - x_mean and ỹ = y - y_mean (the global means);
//   normal_equations        the same summed over every rank in one all-reduce.
//
// Precision: the rows are converted to double before centring and the sums are kept in double
// whatever T is, as the column moments are (core/detail/moments.hpp). The Gram matrix squares
// the condition number of X, so a float Gram would lose digits that a float X still holds;
// the cost is a double-precision rank update instead of a float one. Like scikit-learn
// (_rescale_data), weights enter as sqrt(w) scaling of the centred rows.
//
// This is the seam a Thrust backend replaces: a blocked rank-k update of a small p x p matrix.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>

#include <Eigen/Core>

#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::linear_model::detail {

struct NormalEquations {
  Eigen::MatrixXd gram;  ///< p x p, both triangles filled
  Eigen::VectorXd xty;   ///< p
  double yty = 0;        ///< squared norm of the centred, weighted targets

  NormalEquations& operator+=(const NormalEquations& other) {
    gram += other.gram;
    xty += other.xty;
    yty += other.yty;
    return *this;
  }
};

/// This rank's share. `weight_scale` multiplies every weight (ElasticNet rescales the weights
/// to sum to the number of samples). Only the lower triangle of `gram` is filled.
template <class T>
NormalEquations local_normal_equations(const MatrixRef<T>& X, const VectorRef<T>& y,
                                       const std::optional<VectorRef<T>>& weights,
                                       double weight_scale, const Vector<double>& x_mean,
                                       double y_mean) {
  const index_t n = X.rows();
  const index_t p = X.cols();
  // Blocks of rows of about 2 MB in double: large enough for a fast rank-k update, small
  // enough that the double copy of X is never made whole. Chunks of blocks run on threads.
  constexpr index_t budget = index_t{1} << 18;
  const index_t block =
      std::min(std::max<index_t>(budget / std::max<index_t>(p, 1), 64), std::max<index_t>(n, 1));
  const NormalEquations zero{Eigen::MatrixXd::Zero(p, p), Eigen::VectorXd::Zero(p), 0.0};
  return onelearn::detail::sum_over_chunks(
      n, block, zero, [&](index_t chunk_begin, index_t chunk_end, NormalEquations& out) {
        Matrix<double> A;
        Vector<double> r;
        for (index_t begin = chunk_begin; begin < chunk_end; begin += block) {
          const index_t rows = std::min(block, chunk_end - begin);
          A = X.middleRows(begin, rows).template cast<double>().rowwise() - x_mean.transpose();
          r = y.segment(begin, rows).template cast<double>().array() - y_mean;
          if (weights) {
            const Vector<double> root =
                (weights->segment(begin, rows).template cast<double>() * weight_scale).cwiseSqrt();
            A.array().colwise() *= root.array();
            r.array() *= root.array();
          }
          out.gram.selfadjointView<Eigen::Lower>().rankUpdate(A.transpose());
          out.xty.noalias() += A.transpose() * r;
          out.yty += r.squaredNorm();
        }
      });
}

/// The normal equations over every rank's rows: one all-reduce of p(p+1)/2 + p + 1 doubles
/// (the lower triangle, Xᵀy and yᵀy). Every rank returns the same values.
template <class T, exec::ExecutionPolicy Exec>
NormalEquations normal_equations(const Exec& exec, const MatrixRef<T>& X, const VectorRef<T>& y,
                                 const std::optional<VectorRef<T>>& weights, double weight_scale,
                                 const Vector<double>& x_mean, double y_mean) {
  NormalEquations eq = local_normal_equations<T>(X, y, weights, weight_scale, x_mean, y_mean);
  const index_t p = X.cols();
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
