#pragma once
// The actor of the policy-gradient agents: the policy network's outputs turned into actions,
// log-probabilities, entropies and loss gradients, for Discrete actions (a categorical over
// the logits) or Box actions (a Gaussian with the outputs as mean and a learned,
// state-independent log standard deviation, as Stable-Baselines3's default).
//
// Sampling is counter-based: the draw of global copy e at global step t comes from
// splitmix64 seeded with (seed, t, e), so it is the same whichever rank steps that copy and
// whatever happened before: a distributed rollout equals one process's, and a resumed run's
// equals an uninterrupted one's with nothing but the step count saved.

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <span>

#include "onelearn/core/types.hpp"
#include "onelearn/nn/detail/random.hpp"
#include "onelearn/rl/distributions.hpp"
#include "onelearn/rl/spaces.hpp"

namespace onelearn::rl::detail {

template <class T, bool Discrete>
struct PolicyHead {
  static constexpr bool discrete = Discrete;
  using Actions = std::conditional_t<Discrete, Labels, Matrix<T>>;

  Vector<T> log_std;       ///< Box actions: one per dimension (empty for Discrete)
  Vector<T> log_std_grad;  ///< its gradient
  Vector<T> low, high;     ///< Box actions: the bounds actions are clipped to before a step

  static std::uint64_t draw_seed(std::uint64_t seed, std::int64_t step, index_t copy) {
    return nn::detail::derive_seed(nn::detail::derive_seed(seed ^ 0xAC7100ULL, static_cast<std::uint64_t>(step)),
                                   static_cast<std::uint64_t>(copy));
  }

  /// Samples row i's action into `actions` (row i) and returns its log-probability.
  template <class Out>
  double sample(const Out& out, index_t i, std::uint64_t seed, Actions& actions) const {
    nn::detail::SplitMix rng(seed);
    if constexpr (Discrete) {
      actions(i) = Categorical<T>::sample(out, i, rng.uniform());
      return static_cast<double>(out(i, actions(i))) - Categorical<T>::log_sum_exp(out, i);
    } else {
      double lp = 0;
      for (index_t j = 0; j < out.cols(); ++j) {
        const double z = rng.normal();
        const double s = static_cast<double>(log_std(j));
        actions(i, j) = static_cast<T>(static_cast<double>(out(i, j)) + std::exp(s) * z);
        // From the stored (rounded) action, as the loss will recompute it: a first ratio of 1.
        const double d = (static_cast<double>(actions(i, j)) - static_cast<double>(out(i, j))) *
                         std::exp(-s);
        lp += -0.5 * d * d - s - DiagGaussian<T>::half_log_two_pi;
      }
      return lp;
    }
  }

  /// The deterministic action of every row: argmax, or the mean clipped to the box.
  template <class Out>
  Actions mode(const Out& out) const {
    if constexpr (Discrete) {
      Labels a(out.rows());
      for (index_t i = 0; i < out.rows(); ++i) a(i) = Categorical<T>::mode(out, i);
      return a;
    } else {
      Matrix<T> a = out;
      clip(a);
      return a;
    }
  }

  /// Box actions into [low, high] (what the environment is stepped with; the buffer keeps the
  /// sampled action, whose log-probability the loss needs).
  void clip(Matrix<T>& a) const {
    if constexpr (!Discrete) {
      for (index_t i = 0; i < a.rows(); ++i) {
        for (index_t j = 0; j < a.cols(); ++j) a(i, j) = std::clamp(a(i, j), low(j), high(j));
      }
    }
  }

  template <class Out, class A>
  Vector<T> log_prob(const Out& out, const A& a) const {
    if constexpr (Discrete) {
      return Categorical<T>::log_prob(out, a);
    } else {
      return DiagGaussian<T>::log_prob(out, log_std, a);
    }
  }

  template <class Out>
  Vector<T> entropy(const Out& out) const {
    if constexpr (Discrete) {
      return Categorical<T>::entropy(out);
    } else {
      return Vector<T>::Constant(out.rows(), static_cast<T>(DiagGaussian<T>::entropy(log_std)));
    }
  }

  /// d/d(out) of sum_i [w_i log p(a_i) + v_i H_i] into grad; Box actions add the log_std part
  /// to log_std_grad (zeroed by the caller once per step).
  template <class Out, class A, class W, class V>
  void backward(const Out& out, const A& a, const W& w, const V& v, Matrix<T>& grad) {
    grad.resize(out.rows(), out.cols());
    if constexpr (Discrete) {
      Categorical<T>::backward(out, a, w, v, grad);
    } else {
      Vector<T> g(log_std.size());
      DiagGaussian<T>::backward(out, log_std, a, w, v, grad, g);
      log_std_grad += g;
    }
  }
};

}  // namespace onelearn::rl::detail
