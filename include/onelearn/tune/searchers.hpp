#pragma once
/**
 * \file
 * \brief Grid, random and TPE searchers: what proposes the next trials.
 * \ingroup tuning
 *
 * \code
 * #include <onelearn/tune/searchers.hpp>
 *
 * onelearn::tune::RunOptions options;
 * options.searcher = onelearn::tune::Search::grid;    // every point of the grid
 * options.searcher = onelearn::tune::Search::random;  // options.n_trials independent draws
 * options.searcher = onelearn::tune::Search::tpe;     // options.n_trials, model-based
 * options.tpe = {.n_startup_trials = 10, .gamma = 0.25, .n_ei_candidates = 24};
 * \endcode
 *
 * tune::GridSearcher, tune::RandomSearcher, tune::TPESearcher: what proposes the next trials'
 * parameters. A searcher is asked for a *batch* of configurations at a time, given the history
 * of finished trials; every rank asks its own copy with the same history, so every rank gets the
 * same configurations without communicating.
 *
 * - Grid: every combination of the space's values, in itertools.product order: the space's
 *   first parameter varies slowest, its last fastest (for {a: choice{1, 2}, b: choice{x, y}}:
 *   (1,x), (1,y), (2,x), (2,y)). Each parameter must be a choice (its values in order) or an
 *   integer range (low..high); a continuous distribution is an error.
 * - Random: independent draws from each distribution, from one std::mt19937_64 stream seeded
 *   with options.seed.
 * - TPE, the Tree-structured Parzen Estimator (Bergstra et al. 2011; the default of Optuna and
 *   Hyperopt). The finished trials with a score (completed, or stopped with their last score)
 *   are split into the best ceil(gamma·n) and the rest; for each parameter independently, a
 *   Parzen density l(x) is fitted to the good trials' values and g(x) to the rest,
 *   n_ei_candidates values are drawn from l and the one maximising l(x)/g(x) (the expected
 *   improvement's monotone proxy) is proposed. Numeric parameters use a mixture of Gaussians
 *   truncated to the bounds, one at each observed value plus a prior one at the centre with the
 *   range as its width; each width is the larger gap to its sorted neighbours, clipped to
 *   [range / min(100, 1 + n), range] (Hyperopt's adaptive Parzen estimator). log_uniform
 *   parameters are modelled in log space, integers as reals in [low - 0.5, high + 0.5] and
 *   rounded. A choice uses the value counts plus one (Laplace smoothing). Until
 *   n_startup_trials trials have a score it draws at random.
 *
 * Why TPE rather than a Gaussian process: it handles log-scaled, integer and categorical
 * parameters directly (a GP needs an encoding and a kernel for each), a suggestion costs
 * O(n) in the number of trials with no matrix factorisation or kernel fitting (a GP needs an
 * n x n Cholesky factorisation and a fit of its kernel's hyper-parameters each round), it is
 * trivially reproducible from a seed, and proposing a batch is just drawing several candidates
 * from the same model, which is what synchronous rounds under MPI need.
 *
 * \par Parameters (TPEOptions)
 * - `n_startup_trials` (default 10): random draws before the model is used (>= 2 in effect).
 * - `gamma` (default 0.25, in (0, 1)): share of the trials taken as good.
 * - `n_ei_candidates` (default 24, >= 1): candidates drawn from l(x) per parameter.
 *
 * \par Differences from Optuna / Hyperopt
 * - Parameters are modelled independently (Optuna's default; no multivariate TPE) and all
 *   components have equal weights (no down-weighting of old trials).
 * - Categorical smoothing is +1 per value (Optuna adds prior_weight / n_values).
 *
 * Errors: `invalid_argument` from the constructors for an invalid space (Space::validate), a
 * continuous parameter in a grid, and TPE gamma outside (0, 1) or n_ei_candidates of 0.
 */

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/tune/results.hpp"
#include "onelearn/tune/schedulers.hpp"
#include "onelearn/tune/space.hpp"
#include "onelearn/tune/trial.hpp"

namespace onelearn::tune {

enum class Search { grid, random, tpe };

struct TPEOptions {
  std::size_t n_startup_trials = 10;  ///< random draws before the model is used
  double gamma = 0.25;                ///< share of the scored trials taken as good
  std::size_t n_ei_candidates = 24;   ///< candidates drawn from l(x) per parameter
};

/// Proposes configurations, a batch at a time, from the finished trials.
class Searcher {
 public:
  virtual ~Searcher() = default;
  /// `count` configurations, given `history` (every finished trial, in trial-id order).
  virtual std::vector<ParamList> suggest(std::size_t count,
                                         const std::vector<TrialResult>& history) = 0;
};

class GridSearcher final : public Searcher {
 public:
  explicit GridSearcher(Space space) : space_(std::move(space)) {
    space_.validate("GridSearcher");
    size_ = detail::grid_size("GridSearcher", space_);
  }
  /// Number of points of the grid.
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

  std::vector<ParamList> suggest(std::size_t count, const std::vector<TrialResult>&) override {
    std::vector<ParamList> out;
    for (std::size_t k = 0; k < count && next_ < size_; ++k) out.push_back(detail::grid_point(space_, next_++));
    return out;
  }

 private:
  Space space_;
  std::uint64_t size_ = 0;
  std::uint64_t next_ = 0;
};

class RandomSearcher final : public Searcher {
 public:
  RandomSearcher(Space space, std::uint64_t seed) : space_(std::move(space)), engine_(seed) {
    space_.validate("RandomSearcher");
  }

  std::vector<ParamList> suggest(std::size_t count, const std::vector<TrialResult>&) override {
    std::vector<ParamList> out;
    for (std::size_t k = 0; k < count; ++k) out.push_back(detail::sample(space_, engine_));
    return out;
  }

 private:
  Space space_;
  std::mt19937_64 engine_;
};

namespace detail {

/// A mixture of equally weighted Gaussians truncated to [a, b].
struct Parzen {
  std::vector<double> mu;
  std::vector<double> sigma;
  double a = 0.0;
  double b = 1.0;

  double sample(std::mt19937_64& engine) const {
    const std::size_t k = uniform_index(engine, mu.size());
    for (int attempt = 0; attempt < 100; ++attempt) {
      const double x = mu[k] + sigma[k] * standard_normal(engine);
      if (x >= a && x <= b) return x;
    }
    return std::clamp(mu[k], a, b);  // practically unreachable: each component has mass >= 0.3
  }

  double log_pdf(double x) const {
    std::vector<double> terms(mu.size());
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < mu.size(); ++k) {
      const double z = (x - mu[k]) / sigma[k];
      const double mass = normal_cdf((b - mu[k]) / sigma[k]) - normal_cdf((a - mu[k]) / sigma[k]);
      terms[k] = -0.5 * z * z - std::log(sigma[k] * std::max(mass, 1e-300));
      top = std::max(top, terms[k]);
    }
    double sum = 0.0;
    for (double t : terms) sum += std::exp(t - top);
    return top + std::log(sum / static_cast<double>(mu.size()));  // constant -log√(2π) dropped
  }

  static double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }
};

/// Hyperopt's adaptive Parzen estimator over observations in [a, b], with a prior component.
inline Parzen fit_parzen(const std::vector<double>& observations, double a, double b) {
  Parzen p;
  p.a = a;
  p.b = b;
  p.mu = observations;
  p.mu.push_back(0.5 * (a + b));  // the prior
  const std::size_t n = p.mu.size();
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t i, std::size_t j) { return p.mu[i] < p.mu[j]; });
  const double range = b - a;
  const double min_sigma = range / std::min(100.0, 1.0 + static_cast<double>(n));
  p.sigma.assign(n, range);
  for (std::size_t r = 0; r < n; ++r) {
    double gap = 0.0;
    if (r > 0) gap = std::max(gap, p.mu[order[r]] - p.mu[order[r - 1]]);
    if (r + 1 < n) gap = std::max(gap, p.mu[order[r + 1]] - p.mu[order[r]]);
    p.sigma[order[r]] = std::clamp(n > 1 ? gap : range, min_sigma, range);
  }
  p.sigma[n - 1] = range;  // the prior is as wide as the range
  return p;
}

}  // namespace detail

class TPESearcher final : public Searcher {
 public:
  TPESearcher(Space space, std::uint64_t seed, Mode mode, TPEOptions options = {})
      : space_(std::move(space)), engine_(seed), mode_(mode), options_(options) {
    space_.validate("TPESearcher");
    if (!(options_.gamma > 0.0 && options_.gamma < 1.0)) {
      throw invalid_argument("TPESearcher: gamma: expected a value in (0, 1), found " +
                             std::to_string(options_.gamma));
    }
    if (options_.n_ei_candidates == 0) {
      throw invalid_argument("TPESearcher: n_ei_candidates: expected >= 1, found 0");
    }
  }

  std::vector<ParamList> suggest(std::size_t count,
                                 const std::vector<TrialResult>& history) override {
    // The scored trials, best first (ties: the earlier trial), as indices into history.
    std::vector<std::size_t> scored;
    for (std::size_t i = 0; i < history.size(); ++i) {
      const TrialResult& t = history[i];
      if (t.status != Status::failed && !std::isnan(t.score)) scored.push_back(i);
    }
    std::stable_sort(scored.begin(), scored.end(), [&](std::size_t i, std::size_t j) {
      return detail::signed_score(history[i].score, mode_) >
             detail::signed_score(history[j].score, mode_);
    });
    std::vector<ParamList> out;
    if (scored.size() < std::max<std::size_t>(options_.n_startup_trials, 2)) {
      for (std::size_t k = 0; k < count; ++k) out.push_back(detail::sample(space_, engine_));
      return out;
    }
    const std::size_t n = scored.size();
    auto n_good = static_cast<std::size_t>(std::ceil(options_.gamma * static_cast<double>(n)));
    n_good = std::clamp<std::size_t>(n_good, 1, n - 1);
    const std::vector<std::size_t> good(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(n_good));
    const std::vector<std::size_t> bad(scored.begin() + static_cast<std::ptrdiff_t>(n_good), scored.end());

    for (std::size_t k = 0; k < count; ++k) {
      ParamList config;
      for (const Dimension& d : space_.dimensions()) {
        config.emplace_back(d.name, propose(d, history, good, bad));
      }
      out.push_back(std::move(config));
    }
    return out;
  }

 private:
  ParamValue propose(const Dimension& d, const std::vector<TrialResult>& history,
                     const std::vector<std::size_t>& good, const std::vector<std::size_t>& bad) {
    if (const auto* c = std::get_if<choice>(&d.distribution)) return propose_choice(d.name, *c, history, good, bad);
    // Numeric: work in the internal coordinate (log for log_uniform, reals for integers).
    double a = 0.0;
    double b = 0.0;
    if (const auto* u = std::get_if<uniform>(&d.distribution)) {
      a = u->low;
      b = u->high;
    } else if (const auto* l = std::get_if<log_uniform>(&d.distribution)) {
      a = std::log(l->low);
      b = std::log(l->high);
    } else {
      const auto& i = std::get<integer>(d.distribution);
      a = static_cast<double>(i.low) - 0.5;
      b = static_cast<double>(i.high) + 0.5;
    }
    const bool is_log = std::holds_alternative<log_uniform>(d.distribution);
    auto values = [&](const std::vector<std::size_t>& which) {
      std::vector<double> v;
      for (std::size_t i : which) {
        for (const auto& [name, value] : history[i].params) {
          if (name != d.name) continue;
          double x = std::holds_alternative<std::int64_t>(value)
                         ? static_cast<double>(std::get<std::int64_t>(value))
                         : std::holds_alternative<double>(value) ? std::get<double>(value)
                                                                 : std::numeric_limits<double>::quiet_NaN();
          if (is_log) x = std::log(x);
          if (std::isfinite(x)) v.push_back(std::clamp(x, a, b));
        }
      }
      return v;
    };
    const detail::Parzen l = detail::fit_parzen(values(good), a, b);
    const detail::Parzen g = detail::fit_parzen(values(bad), a, b);
    double best_x = 0.0;
    double best_ratio = -std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < options_.n_ei_candidates; ++c) {
      const double x = l.sample(engine_);
      const double ratio = l.log_pdf(x) - g.log_pdf(x);
      if (ratio > best_ratio) {
        best_ratio = ratio;
        best_x = x;
      }
    }
    if (const auto* u = std::get_if<uniform>(&d.distribution)) return detail::clamp_below(best_x, u->low, u->high);
    if (const auto* lu = std::get_if<log_uniform>(&d.distribution)) return detail::clamp_below(std::exp(best_x), lu->low, lu->high);
    const auto& i = std::get<integer>(d.distribution);
    const double r = std::clamp(std::round(best_x), static_cast<double>(i.low), static_cast<double>(i.high));
    return static_cast<std::int64_t>(r);
  }

  ParamValue propose_choice(const std::string& name, const choice& c,
                            const std::vector<TrialResult>& history,
                            const std::vector<std::size_t>& good,
                            const std::vector<std::size_t>& bad) {
    const std::size_t m = c.values.size();
    auto weights = [&](const std::vector<std::size_t>& which) {
      std::vector<double> w(m, 1.0);  // Laplace smoothing
      for (std::size_t i : which) {
        for (const auto& [n, value] : history[i].params) {
          if (n != name) continue;
          const auto it = std::find(c.values.begin(), c.values.end(), value);
          if (it != c.values.end()) w[static_cast<std::size_t>(it - c.values.begin())] += 1.0;
        }
      }
      double total = 0.0;
      for (double x : w) total += x;
      for (double& x : w) x /= total;
      return w;
    };
    const std::vector<double> l = weights(good);
    const std::vector<double> g = weights(bad);
    std::size_t best = 0;
    double best_ratio = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < options_.n_ei_candidates; ++k) {
      // A draw from l by inverse CDF.
      const double u = detail::uniform01(engine_);
      std::size_t j = 0;
      double cumulative = l[0];
      while (j + 1 < m && u >= cumulative) cumulative += l[++j];
      const double ratio = std::log(l[j]) - std::log(g[j]);
      if (ratio > best_ratio) {
        best_ratio = ratio;
        best = j;
      }
    }
    return c.values[best];
  }

  Space space_;
  std::mt19937_64 engine_;
  Mode mode_;
  TPEOptions options_;
};

}  // namespace onelearn::tune
