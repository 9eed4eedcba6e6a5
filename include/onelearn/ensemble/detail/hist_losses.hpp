#pragma once
// The losses of histogram gradient boosting, as scikit-learn 1.2.1's sklearn/_loss:
//   squared_error  HalfSquaredError: loss ½(raw - y)², gradient raw - y, hessian 1 (constant)
//   binomial       HalfBinomialLoss: loss log(1 + e^raw) - y raw, gradient p - y, hessian p(1-p)
//   multinomial    HalfMultinomialLoss: loss logsumexp(raw) - raw_y, gradient p_k - [y = k],
//                  hessian p_k (1 - p_k), p = softmax(raw)
// with sample weights multiplying gradient, hessian and loss (and the hessian then no longer
// constant). Gradients and hessians are stored in float, as scikit-learn's G_H_DTYPE; raw
// predictions in double, column k (tree k of an iteration) at [k * n, (k + 1) * n).
// baseline() is fit_intercept_only: the weighted mean of y, its clipped log-odds, or the
// log of the clipped class priors over their geometric mean; its sums are all-reduced.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "onelearn/core/detail/no_fma.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"

ONELEARN_BEGIN_NO_FMA  // scikit-learn's roundings (core/detail/no_fma.hpp)
namespace onelearn::ensemble::detail {

enum class LossKind { squared_error, binomial, multinomial };

struct HistLoss {
  LossKind kind = LossKind::squared_error;
  index_t n_trees = 1;  ///< trees per iteration (= raw prediction columns)

  /// y: the target (regression) or the class index (classification), per local row;
  /// weights: empty or one per row. Collective.
  template <exec::ExecutionPolicy Exec>
  [[nodiscard]] std::vector<double> baseline(const Exec& exec, const std::vector<double>& y,
                                             const std::vector<double>& weights) const {
    const auto k = static_cast<std::size_t>(kind == LossKind::multinomial ? n_trees : 1);
    // [sum w, sum w y (regression, binary) or sum w [y = c] per class]
    std::vector<double> sums(1 + k, 0.0);
    for (std::size_t i = 0; i < y.size(); ++i) {
      const double w = weights.empty() ? 1.0 : weights[i];
      sums[0] += w;
      if (kind == LossKind::multinomial) {
        sums[1 + static_cast<std::size_t>(y[i])] += w;
      } else {
        sums[1] += w * y[i];
      }
    }
    exec.allreduce(std::span<double>(sums), exec::reduce_op::sum);
    const double eps = std::numeric_limits<double>::epsilon();
    if (kind == LossKind::squared_error) return {sums[1] / sums[0]};
    if (kind == LossKind::binomial) {
      const double p = std::clamp(sums[1] / sums[0], 10 * eps, 1 - 10 * eps);
      return {std::log(p / (1 - p))};
    }
    std::vector<double> p(k);
    double mean_log = 0;
    for (std::size_t c = 0; c < k; ++c) {
      p[c] = std::clamp(sums[1 + c] / sums[0], eps, 1 - eps);
      mean_log += std::log(p[c]);
    }
    const double geometric_mean = std::exp(mean_log / static_cast<double>(k));
    for (double& v : p) v = std::log(v / geometric_mean);
    return p;
  }

  [[nodiscard]] bool constant_hessian(bool weighted) const noexcept {
    return kind == LossKind::squared_error && !weighted;
  }

  /// Gradients and hessians of every row for every tree of the iteration (column-major like
  /// raw). With a constant hessian, hessian is left as it is (scikit-learn keeps a single 1).
  /// `chunks` runs the blocks of rows (host_chunks: OpenMP's threads).
  template <class Chunks = onelearn::detail::host_chunks>
  void gradients(const std::vector<double>& y, const std::vector<double>& raw,
                 const std::vector<double>& weights, std::vector<float>& gradient,
                 std::vector<float>& hessian, const Chunks& chunks = {}) const {
    const std::size_t n = y.size();
    const bool weighted = !weights.empty();
    // Row by row, independent: blocks of rows on threads.
    chunks(static_cast<index_t>(n), 16384, [&](index_t, index_t begin, index_t end) {
      if (kind == LossKind::binomial) {
        binomial_gradients(y.data(), raw.data(), weighted ? weights.data() : nullptr,
                           gradient.data(), hessian.data(), static_cast<std::size_t>(begin),
                           static_cast<std::size_t>(end));
        return;
      }
      for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
        const double w = weighted ? weights[i] : 1.0;
        if (kind == LossKind::squared_error) {
          gradient[i] = static_cast<float>(w * (raw[i] - y[i]));
          if (weighted) hessian[i] = static_cast<float>(w);
        } else {
          const auto k = static_cast<std::size_t>(n_trees);
          const auto [top, total] = softmax_terms(raw, n, i);
          for (std::size_t c = 0; c < k; ++c) {
            const double p = std::exp(raw[c * n + i] - top) / total;
            const double is_class = static_cast<std::size_t>(y[i]) == c ? 1.0 : 0.0;
            gradient[c * n + i] = static_cast<float>(w * (p - is_class));
            hessian[c * n + i] = static_cast<float>(w * p * (1 - p));
          }
        }
      }
    });
  }

  /// [sum of w * loss, sum of w] over the local rows (the caller all-reduces).
  [[nodiscard]] std::array<double, 2> loss_sums(const std::vector<double>& y,
                                                const std::vector<double>& raw,
                                                const std::vector<double>& weights) const {
    const std::size_t n = y.size();
    std::array<double, 2> out{0.0, 0.0};
    for (std::size_t i = 0; i < n; ++i) {
      const double w = weights.empty() ? 1.0 : weights[i];
      double loss = 0;
      if (kind == LossKind::squared_error) {
        loss = 0.5 * (raw[i] - y[i]) * (raw[i] - y[i]);
      } else if (kind == LossKind::binomial) {
        loss = log1p_exp(raw[i]) - y[i] * raw[i];
      } else {
        const auto [top, total] = softmax_terms(raw, n, i);
        loss = top + std::log(total) - raw[static_cast<std::size_t>(y[i]) * n + i];
      }
      out[0] += w * loss;
      out[1] += w;
    }
    return out;
  }

  /// Row i's largest raw prediction over the trees (raw column-major, n rows) and the sum of
  /// exp(raw - largest): the pieces of a softmax that cannot overflow.
  [[nodiscard]] std::pair<double, double> softmax_terms(const std::vector<double>& raw,
                                                        std::size_t n, std::size_t i) const {
    const auto k = static_cast<std::size_t>(n_trees);
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < k; ++c) top = std::max(top, raw[c * n + i]);
    double total = 0;
    for (std::size_t c = 0; c < k; ++c) total += std::exp(raw[c * n + i] - top);
    return {top, total};
  }

  /// log(1 + e^x) without overflow (the branches of scikit-learn's closs_half_binomial).
  static double log1p_exp(double x) {
    if (x <= -37) return std::exp(x);
    if (x <= 18) return std::log1p(std::exp(x));
    if (x <= 33.3) return x + std::exp(-x);
    return x;
  }

  /// The binomial loss's gradients and hessians of rows [begin, end) (weights: null for none),
  /// scikit-learn's cgrad_hess_half_binomial: with e = exp(-raw) (exp(raw) below -37),
  /// g = ((1 - y) - y e) / (1 + e) and h = e / (1 + e)^2, or g = e - y and h = e. The
  /// exponentials are glibc's, one call each; the rest runs over a block at a time in SIMD
  /// lanes, both forms computed and one kept, so that its two divisions per row go 8 to an
  /// instruction instead of one (the same operations on the same values: the same results).
  static void binomial_gradients(const double* y, const double* raw, const double* weights,
                                 float* gradient, float* hessian, std::size_t begin,
                                 std::size_t end) {
    constexpr std::size_t block = 256;
    std::array<double, block> e{};
    for (std::size_t first = begin; first < end; first += block) {
      const std::size_t n = std::min(block, end - first);
      const double* r = raw + first;
      for (std::size_t i = 0; i < n; ++i) e[i] = std::exp(r[i] > -37 ? -r[i] : r[i]);
      const double* t = y + first;
      float* g = gradient + first;
      float* h = hessian + first;
      for (std::size_t i = 0; i < n; ++i) {
        const bool usual = r[i] > -37;
        const double w = weights == nullptr ? 1.0 : weights[first + i];
        const double one_plus = 1 + e[i];
        const double g_usual = ((1 - t[i]) - t[i] * e[i]) / one_plus;
        const double h_usual = e[i] / (one_plus * one_plus);
        g[i] = static_cast<float>(w * (usual ? g_usual : e[i] - t[i]));
        h[i] = static_cast<float>(w * (usual ? h_usual : e[i]));
      }
    }
  }
};

}  // namespace onelearn::ensemble::detail
ONELEARN_END_NO_FMA
