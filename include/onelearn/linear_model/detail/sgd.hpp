#pragma once
// The engine behind SGDClassifier and SGDRegressor: scikit-learn 1.2.1's _plain_sgd
// (sklearn/linear_model/_sgd_fast.pyx) for dense data, one or several binary/regression
// problems at a time, plus the synchronous model averaging that runs it across ranks.
//
// Each problem keeps scikit-learn's per-sample update, in double whatever T is:
//     p      = w·x + b                          (before the update)
//     eta    = eta0 | 1/(alpha (t0 + t - 1)) | eta0 / t^power_t
//     w     *= max(0, 1 - (1 - l1_ratio) eta alpha)   (l2, elasticnet; as a scale factor)
//     w     += -eta dloss(p, y) sample_weight x,  b += the same step
//     l1:      cumulative truncated gradient (Tsuruoka et al. 2009) with u and q
// The L2 shrink multiplies a scale factor (scikit-learn's WeightVector.wscale) instead of every
// weight, so a step touches the weights once; the factor is folded back into the weights when
// it falls below 1e-9 and at the end of every epoch.
//
// Several problems (the k one-vs-rest problems of a classifier) run in lockstep, epoch by
// epoch, sharing each epoch's sample order. Each still stops on its own training loss exactly
// as scikit-learn stops it, so the lockstep changes nothing but lets one all-reduce per epoch
// serve them all under a distributed policy.
//
// Per-sample SGD is sequential by nature, so the loops here run over raw rows; they are not
// one of the bulk kernels a Thrust backend would replace.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/detail/progress.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/linear_model/detail/checks.hpp"

namespace onelearn::linear_model::detail {

enum class sgd_loss {
  hinge,
  log_loss,
  modified_huber,
  squared_hinge,
  perceptron,
  squared_error,
  huber,
  epsilon_insensitive
};
enum class sgd_penalty { none, l1, l2, elasticnet };
enum class sgd_learning_rate { constant, optimal, invscaling, adaptive };

/// scikit-learn's loss functions of _sgd_fast.pyx: loss(p, y) and its derivative in p. For the
/// classification losses y is +1 or -1.
struct SgdLoss {
  sgd_loss kind = sgd_loss::hinge;
  double epsilon = 0.1;  ///< huber's c, epsilon_insensitive's epsilon

  [[nodiscard]] double loss(double p, double y) const {
    switch (kind) {
      case sgd_loss::hinge:
      case sgd_loss::perceptron: {
        const double threshold = kind == sgd_loss::hinge ? 1.0 : 0.0;
        const double z = p * y;
        return z <= threshold ? threshold - z : 0.0;
      }
      case sgd_loss::squared_hinge: {
        const double z = 1.0 - p * y;
        return z > 0 ? z * z : 0.0;
      }
      case sgd_loss::log_loss: {
        const double z = p * y;
        // scikit-learn's shortcuts: equal to log(1 + exp(-z)) to double precision there.
        if (z > 18) return std::exp(-z);
        if (z < -18) return -z;
        return std::log(1.0 + std::exp(-z));
      }
      case sgd_loss::modified_huber: {
        const double z = p * y;
        if (z >= 1.0) return 0.0;
        if (z >= -1.0) return (1.0 - z) * (1.0 - z);
        return -4.0 * z;
      }
      case sgd_loss::squared_error:
        return 0.5 * (p - y) * (p - y);
      case sgd_loss::huber: {
        const double r = p - y;
        const double abs_r = std::fabs(r);
        return abs_r <= epsilon ? 0.5 * r * r : epsilon * abs_r - 0.5 * epsilon * epsilon;
      }
      case sgd_loss::epsilon_insensitive: {
        const double r = std::fabs(y - p) - epsilon;
        return r > 0 ? r : 0.0;
      }
    }
    return 0.0;
  }

  [[nodiscard]] double dloss(double p, double y) const {
    switch (kind) {
      case sgd_loss::hinge:
      case sgd_loss::perceptron: {
        const double threshold = kind == sgd_loss::hinge ? 1.0 : 0.0;
        return p * y <= threshold ? -y : 0.0;
      }
      case sgd_loss::squared_hinge: {
        const double z = 1.0 - p * y;
        return z > 0 ? -2 * y * z : 0.0;
      }
      case sgd_loss::log_loss: {
        const double z = p * y;
        if (z > 18.0) return std::exp(-z) * -y;
        if (z < -18.0) return -y;
        return -y / (std::exp(z) + 1.0);
      }
      case sgd_loss::modified_huber: {
        const double z = p * y;
        if (z >= 1.0) return 0.0;
        if (z >= -1.0) return 2.0 * (1.0 - z) * -y;
        return -4.0 * y;
      }
      case sgd_loss::squared_error:
        return p - y;
      case sgd_loss::huber: {
        const double r = p - y;
        if (std::fabs(r) <= epsilon) return r;
        return r > 0.0 ? epsilon : -epsilon;
      }
      case sgd_loss::epsilon_insensitive:
        if (y - p > epsilon) return -1;
        if (p - y > epsilon) return 1;
        return 0;
    }
    return 0.0;
  }
};

/// Everything an SGD run needs from the estimator's parameters, validated and parsed.
struct SgdSettings {
  SgdLoss loss;
  sgd_penalty penalty = sgd_penalty::l2;
  double alpha = 1e-4;
  double l1_ratio = 0.15;  ///< as scikit-learn uses it: 0 for l2, 1 for l1
  bool fit_intercept = true;
  std::int64_t max_iter = 1000;
  double tol = 1e-3;  ///< -inf: never stop early (scikit-learn's tol=None)
  bool shuffle = true;
  sgd_learning_rate learning_rate = sgd_learning_rate::optimal;
  double eta0 = 0.0;
  double power_t = 0.5;
  std::int64_t n_iter_no_change = 5;
};

/// The string parameters, named as in scikit-learn's error messages.
template <class E>
E parse_option(std::string_view where, std::string_view name, const std::string& value,
               std::span<const std::string_view> names, std::span<const E> kinds) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (value == names[i]) return kinds[i];
  }
  std::string expected;
  for (std::size_t i = 0; i < names.size(); ++i) {
    expected +=
        (i == 0 ? "'" : (i + 1 == names.size() ? " or '" : ", '")) + std::string(names[i]) + "'";
  }
  throw invalid_argument(std::string(where) + ": expected " + std::string(name) + " " + expected +
                         ", found '" + value + "'");
}

/// The checks scikit-learn's parameter constraints and _more_validate_params make, on the
/// parts SGDClassifier and SGDRegressor share. Returns the settings with l1_ratio set the way
/// _plain_sgd uses it.
template <class P>
SgdSettings common_settings(std::string_view where, const P& p, SgdLoss loss) {
  static constexpr std::array<std::string_view, 4> penalty_names{"l2", "l1", "elasticnet", "none"};
  static constexpr std::array<sgd_penalty, 4> penalties{sgd_penalty::l2, sgd_penalty::l1,
                                                        sgd_penalty::elasticnet, sgd_penalty::none};
  static constexpr std::array<std::string_view, 4> rate_names{"constant", "optimal", "invscaling",
                                                              "adaptive"};
  static constexpr std::array<sgd_learning_rate, 4> rates{
      sgd_learning_rate::constant, sgd_learning_rate::optimal, sgd_learning_rate::invscaling,
      sgd_learning_rate::adaptive};
  SgdSettings s;
  s.loss = loss;
  s.penalty = parse_option<sgd_penalty>(where, "penalty", p.penalty, penalty_names, penalties);
  s.learning_rate =
      parse_option<sgd_learning_rate>(where, "learning_rate", p.learning_rate, rate_names, rates);
  check_at_least(where, "alpha", p.alpha, 0.0);
  check_in_closed_interval(where, "l1_ratio", p.l1_ratio, 0.0, 1.0);
  if (p.max_iter < 1) {
    throw invalid_argument(std::string(where) + ": expected max_iter >= 1, found " +
                           std::to_string(p.max_iter));
  }
  if (p.verbose < 0) {
    throw invalid_argument(std::string(where) + ": expected verbose >= 0, found " +
                           std::to_string(p.verbose));
  }
  if (p.n_iter_no_change < 1) {
    throw invalid_argument(std::string(where) + ": expected n_iter_no_change >= 1, found " +
                           std::to_string(p.n_iter_no_change));
  }
  if (!(p.tol >= 0 || p.tol == -std::numeric_limits<double>::infinity())) {
    throw invalid_argument(std::string(where) + ": expected tol >= 0, or -inf for no early " +
                           "stopping, found " + format_number(p.tol));
  }
  check_at_least(where, "eta0", p.eta0, 0.0);
  if (!std::isfinite(p.power_t)) {
    throw invalid_argument(std::string(where) + ": expected a finite power_t, found " +
                           format_number(p.power_t));
  }
  if (s.learning_rate != sgd_learning_rate::optimal && !(p.eta0 > 0)) {
    throw invalid_argument(std::string(where) + ": expected eta0 > 0 with learning_rate '" +
                           p.learning_rate + "', found " + format_number(p.eta0));
  }
  if (s.learning_rate == sgd_learning_rate::optimal && p.alpha == 0) {
    throw invalid_argument(std::string(where) + ": expected alpha > 0 with learning_rate " +
                           "'optimal' (alpha sets the optimal learning rate), found 0");
  }
  s.alpha = p.alpha;
  s.l1_ratio = s.penalty == sgd_penalty::l2 ? 0.0 : s.penalty == sgd_penalty::l1 ? 1.0 : p.l1_ratio;
  s.fit_intercept = p.fit_intercept;
  s.max_iter = p.max_iter;
  s.tol = p.tol;
  s.shuffle = p.shuffle;
  s.eta0 = p.eta0;
  s.power_t = p.power_t;
  s.n_iter_no_change = p.n_iter_no_change;
  return s;
}

/// One binary (or regression) problem: its weights and everything _plain_sgd keeps between
/// epochs of one call.
struct SgdProblem {
  Vector<double> w;
  double intercept = 0;
  Vector<double> q;  ///< L1 penalty applied so far to each weight (l1, elasticnet)
  double u = 0;      ///< L1 penalty each weight could have received so far
  double eta = 0;    ///< current rate of "constant" and "adaptive"
  double best_loss = std::numeric_limits<double>::infinity();
  std::int64_t no_improvement = 0;
  std::int64_t n_iter = 0;
  bool done = false;

  /// The state at the start of a _plain_sgd call, keeping the weights.
  void start_call(const SgdSettings& s) {
    q = Vector<double>::Zero(w.size());
    u = 0;
    eta = s.eta0;
    best_loss = std::numeric_limits<double>::infinity();
    no_improvement = 0;
    n_iter = 0;
    done = false;
  }
};

/// scikit-learn's optimal_init: t is offset so that the first step of "optimal" has the rate
/// typw / max(1, dloss(-typw, 1)), with typw = sqrt(1 / sqrt(alpha)).
inline double optimal_init(const SgdSettings& s) {
  if (s.learning_rate != sgd_learning_rate::optimal) return 0.0;
  const double typw = std::sqrt(1.0 / std::sqrt(s.alpha));
  const double initial_eta0 = typw / std::max(1.0, s.loss.dloss(-typw, 1.0));
  return 1.0 / (initial_eta0 * s.alpha);
}

/// One epoch of _plain_sgd over the rows `order` of X for one problem, starting at update
/// count t. target(i) is the problem's y for row i. Returns the summed (unweighted) loss of the
/// epoch, each term taken before its update as scikit-learn does.
template <class T, class Target>
double sgd_epoch(const SgdSettings& s, double init, const MatrixRef<T>& X, Target&& target,
                 const std::optional<VectorRef<T>>& sample_weight, std::span<const index_t> order,
                 double t, SgdProblem& problem) {
  constexpr double max_dloss = 1e12;
  const index_t p = X.cols();
  double* const w = problem.w.data();
  double* const q = problem.q.data();
  double wscale = 1.0;
  double sumloss = 0.0;
  const bool scales = s.penalty == sgd_penalty::l2 || s.penalty == sgd_penalty::elasticnet;
  const bool truncates = s.penalty == sgd_penalty::l1 || s.penalty == sgd_penalty::elasticnet;
  double eta = problem.eta;
  for (const index_t i : order) {
    const T* const x = X.data() + i * X.outerStride();
    const double y = target(i);
    double dot = 0.0;
    for (index_t j = 0; j < p; ++j) dot += w[j] * static_cast<double>(x[j]);
    const double prediction = dot * wscale + problem.intercept;
    if (s.learning_rate == sgd_learning_rate::optimal) {
      eta = 1.0 / (s.alpha * (init + t - 1));
    } else if (s.learning_rate == sgd_learning_rate::invscaling) {
      eta = s.eta0 / std::pow(t, s.power_t);
    }
    sumloss += s.loss.loss(prediction, y);
    const double dloss = std::clamp(s.loss.dloss(prediction, y), -max_dloss, max_dloss);
    double update = -eta * dloss;
    if (sample_weight) update *= static_cast<double>((*sample_weight)(i));

    if (scales) {
      // Never a negative scale when eta alpha is large: the weights become 0 instead.
      wscale *= std::max(0.0, 1.0 - ((1.0 - s.l1_ratio) * eta * s.alpha));
      if (wscale < 1e-9) {
        for (index_t j = 0; j < p; ++j) w[j] *= wscale;
        wscale = 1.0;
      }
    }
    if (update != 0.0) {
      const double step = update / wscale;
      for (index_t j = 0; j < p; ++j) w[j] += static_cast<double>(x[j]) * step;
      if (s.fit_intercept) problem.intercept += update;
    }
    if (truncates) {
      problem.u += s.l1_ratio * eta * s.alpha;
      for (index_t j = 0; j < p; ++j) {
        const double z = w[j];
        if (wscale * z > 0.0) {
          w[j] = std::max(0.0, w[j] - ((problem.u + q[j]) / wscale));
        } else if (wscale * z < 0.0) {
          w[j] = std::min(0.0, w[j] + ((problem.u - q[j]) / wscale));
        }
        q[j] += wscale * (w[j] - z);
      }
    }
    t += 1;
  }
  for (index_t j = 0; j < p; ++j) w[j] *= wscale;
  return sumloss;
}

/// A fresh permutation of 0..n-1 (Fisher-Yates from the identity, so that each epoch's order
/// depends only on the engine, not on the previous epoch's order), or the identity.
inline void epoch_order(std::vector<index_t>& order, bool shuffle, std::mt19937_64& engine) {
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<index_t>(i);
  if (!shuffle || order.size() < 2) return;
  for (std::size_t i = 0; i + 1 < order.size(); ++i) {
    // Modulo of a 64-bit draw: its bias, below n / 2^64, is immaterial.
    const std::size_t j = i + static_cast<std::size_t>(engine() % (order.size() - i));
    std::swap(order[i], order[j]);
  }
}

/// What sgd_run reports after each epoch when nobody listens: nothing.
struct no_epoch_report {
  void operator()(std::int64_t /*epoch*/, double /*average_loss*/,
                  std::size_t /*running*/) const noexcept {}
};

/// The verbose lines of SGDClassifier and SGDRegressor (rank 0, verbose >= 1): one per epoch,
///   "SGDClassifier: epoch 3/1000: average loss 0.234567, 2 of 3 problems running; elapsed
///    0.01s, remaining <= 2.1s"
/// (the loss is the epoch's summed loss over all ranks' rows divided by their number, averaged
/// over the one-vs-rest problems that ran it, as scikit-learn's "Avg. loss"; the time left is a
/// bound, as the stopping test usually ends the fit before max_iter), and after a fit one line
/// saying why it stopped.
class SgdProgress {
 public:
  template <exec::ExecutionPolicy Exec>
  SgdProgress(std::string_view who, std::int64_t verbose, const Exec& exec, std::int64_t max_epochs,
              std::size_t n_problems)
      : log_(who, verbose, exec), max_epochs_(max_epochs), n_problems_(n_problems) {}

  void operator()(std::int64_t epoch, double average_loss, std::size_t running) const {
    if (!log_.enabled()) return;
    std::string text = "epoch " + std::to_string(epoch) + "/" + std::to_string(max_epochs_) +
                       ": average loss " + onelearn::detail::format_quantity(average_loss);
    if (n_problems_ > 1) {
      text += ", " + std::to_string(running) + " of " + std::to_string(n_problems_) +
              " problems running";
    }
    log_.step(text, static_cast<double>(epoch), static_cast<double>(max_epochs_),
              onelearn::detail::Remaining::at_most);
  }

  /// After a fit of up to max_epochs that ran `epochs`.
  void finish(std::int64_t epochs) const {
    if (!log_.enabled()) return;
    log_.note(std::string(epochs < max_epochs_ ? "converged: no improvement by tol in "
                                                 "n_iter_no_change epochs"
                                               : "stopped: max_iter epochs reached") +
              " after " + std::to_string(epochs) + " epochs; elapsed " +
              onelearn::detail::format_duration(log_.elapsed()));
  }

 private:
  onelearn::detail::ProgressLog log_;
  std::int64_t max_epochs_;
  std::size_t n_problems_;
};

/// The engine of one rank: rank 0 draws from random_state itself, so one rank reproduces
/// exec::local; other ranks get other streams.
inline std::uint64_t rank_seed(std::uint64_t random_state, int rank) {
  return random_state ^ (static_cast<std::uint64_t>(rank) * 0x9E3779B97F4A7C15ULL);
}

/// Runs up to `max_epochs` epochs of every problem, as _plain_sgd does for each one, and
/// returns the largest number of epochs a problem ran. t_start is scikit-learn's t_ and
/// n_total the number of rows over all ranks.
///
/// Distributed (synchronous model averaging): each rank runs the epoch over its own rows from
/// the same weights, then the weights, intercepts and L1 accumulators are averaged with weights
/// n_rank / n_total and the epoch losses summed, in one all-reduce; the stopping test then
/// sees the same numbers on every rank, so every rank stops together. Inside an epoch the
/// update count runs on from t_start + epoch n_total over the rank's own rows. With one rank
/// the factor is exactly 1 and this is exec::local's computation, bit for bit.
/// After each epoch `on_epoch(epoch (from 1), average loss, problems still running)` is called
/// with numbers every rank shares (SgdProgress).
template <class T, exec::ExecutionPolicy Exec, class TargetOf, class OnEpoch = no_epoch_report>
std::int64_t sgd_run(std::string_view where, const Exec& exec, const SgdSettings& s,
                     const MatrixRef<T>& X, TargetOf&& target_of,
                     const std::optional<VectorRef<T>>& sample_weight,
                     std::vector<SgdProblem>& problems, std::int64_t max_epochs, double t_start,
                     std::int64_t n_total, std::mt19937_64& engine, const OnEpoch& on_epoch = {}) {
  const index_t p = X.cols();
  const double init = optimal_init(s);
  const bool truncates = s.penalty == sgd_penalty::l1 || s.penalty == sgd_penalty::elasticnet;
  for (auto& problem : problems) problem.start_call(s);
  std::vector<index_t> order(static_cast<std::size_t>(X.rows()));
  // Per problem: [w (p) | intercept | u | q (p, with L1) | epoch loss].
  const index_t stride = p + 3 + (truncates ? p : 0);
  std::vector<double> buffer;
  const double share = static_cast<double>(X.rows()) / static_cast<double>(n_total);
  std::int64_t epochs_run = 0;

  for (std::int64_t epoch = 0; epoch < max_epochs; ++epoch) {
    epoch_order(order, s.shuffle, engine);
    const double t = t_start + static_cast<double>(epoch) * static_cast<double>(n_total);
    std::vector<double> losses(problems.size(), 0.0);
    bool any = false;
    for (std::size_t c = 0; c < problems.size(); ++c) {
      if (problems[c].done) continue;
      any = true;
      losses[c] = sgd_epoch<T>(
          s, init, X, [&](index_t i) { return target_of(c, i); }, sample_weight, order, t,
          problems[c]);
    }
    if (!any) break;
    epochs_run = epoch + 1;

    if constexpr (Exec::is_distributed) {
      buffer.assign(problems.size() * static_cast<std::size_t>(stride), 0.0);
      for (std::size_t c = 0; c < problems.size(); ++c) {
        if (problems[c].done) continue;
        double* out = buffer.data() + c * static_cast<std::size_t>(stride);
        SgdProblem& problem = problems[c];
        for (index_t j = 0; j < p; ++j) out[j] = share * problem.w(j);
        out[p] = share * problem.intercept;
        out[p + 1] = share * problem.u;
        if (truncates) {
          for (index_t j = 0; j < p; ++j) out[p + 2 + j] = share * problem.q(j);
        }
        out[stride - 1] = losses[c];
      }
      exec.allreduce(std::span(buffer), exec::reduce_op::sum);
      for (std::size_t c = 0; c < problems.size(); ++c) {
        if (problems[c].done) continue;
        const double* in = buffer.data() + c * static_cast<std::size_t>(stride);
        SgdProblem& problem = problems[c];
        for (index_t j = 0; j < p; ++j) problem.w(j) = in[j];
        problem.intercept = in[p];
        problem.u = in[p + 1];
        if (truncates) {
          for (index_t j = 0; j < p; ++j) problem.q(j) = in[p + 2 + j];
        }
        losses[c] = in[stride - 1];
      }
    } else {
      (void)exec;
      (void)share;
    }

    double loss_sum = 0;
    std::size_t ran = 0;
    for (std::size_t c = 0; c < problems.size(); ++c) {
      SgdProblem& problem = problems[c];
      if (problem.done) continue;
      loss_sum += losses[c];
      ++ran;
      problem.n_iter = epoch + 1;
      if (!std::isfinite(problem.intercept) || !problem.w.allFinite()) {
        // The same numbers on every rank after the all-reduce, so every rank throws.
        throw invalid_argument(std::string(where) + ": floating-point under-/overflow " +
                               "occurred at epoch #" + std::to_string(epoch + 1) +
                               "; expected finite weights (scaling the input with " +
                               "StandardScaler might help)");
      }
      const double sumloss = losses[c];
      if (s.tol > -std::numeric_limits<double>::infinity() &&
          sumloss > problem.best_loss - s.tol * static_cast<double>(n_total)) {
        ++problem.no_improvement;
      } else {
        problem.no_improvement = 0;
      }
      if (sumloss < problem.best_loss) problem.best_loss = sumloss;
      if (problem.no_improvement >= s.n_iter_no_change) {
        if (s.learning_rate == sgd_learning_rate::adaptive && problem.eta > 1e-6) {
          problem.eta /= 5;
          problem.no_improvement = 0;
        } else {
          problem.done = true;
        }
      }
    }
    std::size_t running = 0;
    for (const SgdProblem& problem : problems) running += problem.done ? 0 : 1;
    on_epoch(epoch + 1, loss_sum / (static_cast<double>(ran) * static_cast<double>(n_total)),
             running);
  }
  return epochs_run;
}

}  // namespace onelearn::linear_model::detail
