#pragma once
/**
 * \file
 * \brief rl::Categorical and rl::DiagGaussian: the action distributions of PPO, A2C, REINFORCE.
 * \ingroup rl
 *
 * \code
 * #include <onelearn/rl/distributions.hpp>
 * namespace rl = onelearn::rl;
 * onelearn::Matrix<float> logits(2, 3);            // 2 states, 3 actions
 * logits << 0, 1, 2, 0, 0, 0;
 * onelearn::Labels a(2);
 * a << 2, 0;
 * onelearn::Vector<float> lp = rl::Categorical<float>::log_prob(logits, a);  // log softmax at a
 * onelearn::Vector<float> h = rl::Categorical<float>::entropy(logits);
 * \endcode
 *
 * The action distributions of the policy-gradient agents (PPO, A2C, REINFORCE): a categorical
 * over Discrete(n) actions parameterised by logits, and a diagonal Gaussian over Box actions
 * parameterised by a mean (the network's output) and a state-independent log standard
 * deviation (one learned value per action dimension, as Stable-Baselines3's default).
 *
 * Each distribution gives, per row: log_prob(params, action), entropy(params), a sample from a
 * uniform or normal draw, the mode (the deterministic action), and the gradients of
 * w * log_prob + v * entropy with respect to its parameters (what a policy-gradient loss
 * backpropagates into the network; the agents' losses are tested against finite differences
 * through them). Computed in double internally and returned in T, so float networks lose
 * nothing to cancellation in log-sum-exp.
 *
 * Errors: none (the agents check shapes and actions before they get here).
 */

#include <cmath>
#include <cstdint>
#include <numbers>

#include "onelearn/core/types.hpp"

namespace onelearn::rl {

/// Categorical over 0..n-1 with logits z: p = softmax(z).
template <class T>
struct Categorical {
  /// log softmax(z)_a per row.
  template <class Logits, class Actions>
  static Vector<T> log_prob(const Logits& z, const Actions& a) {
    Vector<T> out(z.rows());
    for (index_t i = 0; i < z.rows(); ++i) {
      out(i) = static_cast<T>(static_cast<double>(z(i, static_cast<index_t>(a(i)))) -
                              log_sum_exp(z, i));
    }
    return out;
  }

  /// -sum_j p_j log p_j per row.
  template <class Logits>
  static Vector<T> entropy(const Logits& z) {
    Vector<T> out(z.rows());
    for (index_t i = 0; i < z.rows(); ++i) {
      const double lse = log_sum_exp(z, i);
      double h = 0;
      for (index_t j = 0; j < z.cols(); ++j) {
        const double lp = static_cast<double>(z(i, j)) - lse;
        h -= std::exp(lp) * lp;
      }
      out(i) = static_cast<T>(h);
    }
    return out;
  }

  /// The action of row i for a uniform draw u in [0, 1): the first j whose cumulative
  /// probability exceeds u (inverse-CDF sampling; the last action catches rounding).
  template <class Logits>
  static std::int64_t sample(const Logits& z, index_t i, double u) {
    const double lse = log_sum_exp(z, i);
    double cumulative = 0;
    for (index_t j = 0; j + 1 < z.cols(); ++j) {
      cumulative += std::exp(static_cast<double>(z(i, j)) - lse);
      if (u < cumulative) return j;
    }
    return z.cols() - 1;
  }

  /// The most probable action of row i (the first on ties, as numpy's argmax).
  template <class Logits>
  static std::int64_t mode(const Logits& z, index_t i) {
    index_t best = 0;
    for (index_t j = 1; j < z.cols(); ++j) {
      if (z(i, j) > z(i, best)) best = j;
    }
    return best;
  }

  /// Row i of d/dz [w_i log p(a_i) + v_i H_i] into grad (same shape as z):
  /// d log p_a / dz_j = [j = a] - p_j and dH / dz_j = -p_j (log p_j + H).
  template <class Logits, class Actions, class W, class V, class Grad>
  static void backward(const Logits& z, const Actions& a, const W& w, const V& v, Grad& grad) {
    for (index_t i = 0; i < z.rows(); ++i) {
      const double lse = log_sum_exp(z, i);
      double h = 0;
      for (index_t j = 0; j < z.cols(); ++j) {
        const double lp = static_cast<double>(z(i, j)) - lse;
        h -= std::exp(lp) * lp;
      }
      for (index_t j = 0; j < z.cols(); ++j) {
        const double lp = static_cast<double>(z(i, j)) - lse;
        const double p = std::exp(lp);
        const double dlogp = (j == static_cast<index_t>(a(i)) ? 1.0 : 0.0) - p;
        const double dh = -p * (lp + h);
        grad(i, j) = static_cast<T>(static_cast<double>(w(i)) * dlogp + static_cast<double>(v(i)) * dh);
      }
    }
  }

  template <class Logits>
  static double log_sum_exp(const Logits& z, index_t i) {
    double m = static_cast<double>(z(i, 0));
    for (index_t j = 1; j < z.cols(); ++j) m = std::max(m, static_cast<double>(z(i, j)));
    double s = 0;
    for (index_t j = 0; j < z.cols(); ++j) s += std::exp(static_cast<double>(z(i, j)) - m);
    return m + std::log(s);
  }
};

/// Diagonal Gaussian with per-row mean mu and one log standard deviation per dimension.
template <class T>
struct DiagGaussian {
  static constexpr double half_log_two_pi = 0.9189385332046727;  // log(2 pi) / 2

  /// sum_j [-(a_j - mu_j)^2 / (2 sigma_j^2) - log sigma_j - log(2 pi) / 2] per row.
  template <class Mean, class LogStd, class Actions>
  static Vector<T> log_prob(const Mean& mu, const LogStd& log_std, const Actions& a) {
    Vector<T> out(mu.rows());
    for (index_t i = 0; i < mu.rows(); ++i) {
      double lp = 0;
      for (index_t j = 0; j < mu.cols(); ++j) {
        const double s = static_cast<double>(log_std(j));
        const double d = (static_cast<double>(a(i, j)) - static_cast<double>(mu(i, j))) * std::exp(-s);
        lp += -0.5 * d * d - s - half_log_two_pi;
      }
      out(i) = static_cast<T>(lp);
    }
    return out;
  }

  /// sum_j (1/2 + log(2 pi) / 2 + log sigma_j): the same for every row (state-independent).
  template <class LogStd>
  static double entropy(const LogStd& log_std) {
    double h = 0;
    for (index_t j = 0; j < log_std.size(); ++j) {
      h += 0.5 + half_log_two_pi + static_cast<double>(log_std(j));
    }
    return h;
  }

  /// Gradients of sum_i [w_i log p(a_i) + v_i H] with respect to mu (row i into grad_mu) and
  /// to log_std (summed over the rows into grad_log_std):
  /// d log p / d mu_j = (a_j - mu_j) / sigma_j^2, d log p / d log sigma_j = d_j^2 - 1 with
  /// d_j = (a_j - mu_j) / sigma_j, and dH / d log sigma_j = 1.
  template <class Mean, class LogStd, class Actions, class W, class V, class GradMu, class GradStd>
  static void backward(const Mean& mu, const LogStd& log_std, const Actions& a, const W& w,
                       const V& v, GradMu& grad_mu, GradStd& grad_log_std) {
    grad_log_std.setZero();
    for (index_t i = 0; i < mu.rows(); ++i) {
      for (index_t j = 0; j < mu.cols(); ++j) {
        const double inv = std::exp(-static_cast<double>(log_std(j)));
        const double d = (static_cast<double>(a(i, j)) - static_cast<double>(mu(i, j))) * inv;
        grad_mu(i, j) = static_cast<T>(static_cast<double>(w(i)) * d * inv);
        grad_log_std(j) += static_cast<T>(static_cast<double>(w(i)) * (d * d - 1.0) +
                                          static_cast<double>(v(i)));
      }
    }
  }
};

}  // namespace onelearn::rl
