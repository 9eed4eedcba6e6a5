#pragma once
// A limited-memory BFGS minimiser over Eigen vectors in double, written to take the same steps
// as scipy's L-BFGS-B (scipy 1.10, Fortran lbfgsb.f 3.0) does on a problem without bounds,
// which is what scikit-learn's LogisticRegression(solver="lbfgs") calls:
//
//   - direction d = -H g, H the L-BFGS inverse Hessian of the last `memory` pairs (s, y) with
//     H0 = (sᵀy / yᵀy) I of the newest pair (L-BFGS-B's B0 = theta I, theta = yᵀy / sᵀy; with
//     no bounds its Cauchy point and subspace minimisation give exactly this quasi-Newton step);
//   - line search: MINPACK-2's dcsrch/dcstep (Moré and Thuente 1994), which L-BFGS-B uses, with
//     its constants ftol = 1e-3, gtol = 0.9, xtol = 0.1 on phi(stp) = f(x + stp d): it ends at
//     a step satisfying the strong Wolfe conditions
//         f(x + stp d) <= f(x) + 1e-3 stp gᵀd   and   |g(x + stp d)ᵀd| <= 0.9 |gᵀd|
//     (or at a step its interval tests accept when rounding prevents more progress).
//     The first step of the first iteration is 1/‖d‖, later ones 1;
//   - the pair (s, y) is skipped when sᵀy <= eps · (-gᵀs) (curvature too small);
//   - a line search that fails (more than max_linesearch evaluations, or an ascent direction)
//     restores the last iterate and restarts from steepest descent with an empty memory; if the
//     memory was already empty the minimiser stops (scipy's ABNORMAL_TERMINATION_IN_LNSRCH);
//   - stopping: max_i |g_i| <= gtol (scipy's pgtol test on the projected gradient, which is the
//     gradient without bounds), or a relative reduction (f_old - f) <= ftol · max(|f_old|, |f|, 1)
//     (scipy's factr test; its default ftol is 1e7 · eps = 2.22e-9, what scikit-learn leaves it
//     at), or max_iter iterations, or more than max_fun function evaluations. As in scipy, the
//     last two are tested first, so an iteration that reaches max_iter reports max_iter even
//     if it also passes a convergence test.
//
// The objective is a callable `double f(const Eigen::VectorXd& x, Eigen::VectorXd& grad)` that
// returns the value at x and writes the gradient into grad (already sized). Every decision here
// depends only on the values it returns, so a distributed objective that returns the same bits
// on every rank (an all-reduce inside the callable) makes every rank take the same steps and
// call the objective the same number of times.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include <Eigen/Core>

namespace onelearn::linear_model::detail {

struct LbfgsOptions {
  std::int64_t max_iter = 15000;         ///< iterations (scipy's maxiter)
  double gtol = 1e-5;                    ///< stop when max_i |g_i| <= gtol (scipy's pgtol)
  double ftol = 2.2204460492503131e-09;  ///< relative reduction of f (scipy's ftol = factr·eps)
  int memory = 10;                       ///< pairs (s, y) kept (scipy's maxcor)
  int max_linesearch = 20;               ///< evaluations per line search (scipy's maxls)
  std::int64_t max_fun = 15000;          ///< evaluations of the objective (scipy's maxfun)
};

enum class LbfgsStatus {
  converged_gradient,   ///< max |g_i| <= gtol
  converged_reduction,  ///< relative reduction of f <= ftol
  max_iter,             ///< max_iter iterations made without converging
  max_fun,              ///< more than max_fun evaluations
  line_search_failed,   ///< the line search failed from steepest descent (no memory to drop)
};

inline std::string_view to_string(LbfgsStatus status) {
  switch (status) {
    case LbfgsStatus::converged_gradient:
      return "converged: max |gradient| <= gtol";
    case LbfgsStatus::converged_reduction:
      return "converged: relative reduction of f <= ftol";
    case LbfgsStatus::max_iter:
      return "stopped: max_iter iterations reached";
    case LbfgsStatus::max_fun:
      return "stopped: too many function evaluations";
    case LbfgsStatus::line_search_failed:
      break;
  }
  return "stopped: the line search failed";
}

struct LbfgsResult {
  Eigen::VectorXd x;     ///< the last accepted iterate
  double f = 0;          ///< objective at x
  Eigen::VectorXd grad;  ///< gradient at x
  std::int64_t n_iter = 0;
  std::int64_t n_fev = 0;
  LbfgsStatus status = LbfgsStatus::max_iter;

  [[nodiscard]] bool converged() const noexcept {
    return status == LbfgsStatus::converged_gradient || status == LbfgsStatus::converged_reduction;
  }
};

/// MINPACK-2 dcstep: one safeguarded step of the Moré-Thuente search. (stx, fx, dx) is the best
/// step so far, (sty, fy, dy) the other end of the interval, (stp, fp, dp) the current trial;
/// updates the interval and returns the next trial in stp.
struct MoreThuenteStep {
  static void step(double& stx, double& fx, double& dx, double& sty, double& fy, double& dy,
                   double& stp, double fp, double dp, bool& brackt, double stpmin, double stpmax) {
    const double sgnd = dp * (dx / std::abs(dx));
    double stpf = 0;
    auto cubic_gamma = [](double theta, double a, double b, double s, bool clamp) {
      const double root = (theta / s) * (theta / s) - (a / s) * (b / s);
      return s * std::sqrt(clamp ? std::max(0.0, root) : root);
    };
    if (fp > fx) {
      // Higher function value: the minimum is bracketed. Cubic or mid cubic/quadratic step.
      const double theta = 3.0 * (fx - fp) / (stp - stx) + dx + dp;
      const double s = std::max({std::abs(theta), std::abs(dx), std::abs(dp)});
      double gamma = cubic_gamma(theta, dx, dp, s, false);
      if (stp < stx) gamma = -gamma;
      const double p = (gamma - dx) + theta;
      const double q = ((gamma - dx) + gamma) + dp;
      const double stpc = stx + (p / q) * (stp - stx);
      const double stpq = stx + ((dx / ((fx - fp) / (stp - stx) + dx)) / 2.0) * (stp - stx);
      stpf = std::abs(stpc - stx) < std::abs(stpq - stx) ? stpc : stpc + (stpq - stpc) / 2.0;
      brackt = true;
    } else if (sgnd < 0) {
      // Derivatives of opposite sign: bracketed. Cubic or secant step.
      const double theta = 3.0 * (fx - fp) / (stp - stx) + dx + dp;
      const double s = std::max({std::abs(theta), std::abs(dx), std::abs(dp)});
      double gamma = cubic_gamma(theta, dx, dp, s, false);
      if (stp > stx) gamma = -gamma;
      const double p = (gamma - dp) + theta;
      const double q = ((gamma - dp) + gamma) + dx;
      const double stpc = stp + (p / q) * (stx - stp);
      const double stpq = stp + (dp / (dp - dx)) * (stx - stp);
      stpf = std::abs(stpc - stp) > std::abs(stpq - stp) ? stpc : stpq;
      brackt = true;
    } else if (std::abs(dp) < std::abs(dx)) {
      // Same sign, derivative decreasing in magnitude.
      const double theta = 3.0 * (fx - fp) / (stp - stx) + dx + dp;
      const double s = std::max({std::abs(theta), std::abs(dx), std::abs(dp)});
      double gamma = cubic_gamma(theta, dx, dp, s, true);
      if (stp > stx) gamma = -gamma;
      const double p = (gamma - dp) + theta;
      const double q = (gamma + (dx - dp)) + gamma;
      const double r = p / q;
      double stpc = 0;
      if (r < 0 && gamma != 0) {
        stpc = stp + r * (stx - stp);
      } else if (stp > stx) {
        stpc = stpmax;
      } else {
        stpc = stpmin;
      }
      const double stpq = stp + (dp / (dp - dx)) * (stx - stp);
      if (brackt) {
        stpf = std::abs(stpc - stp) < std::abs(stpq - stp) ? stpc : stpq;
        stpf = stp > stx ? std::min(stp + 0.66 * (sty - stp), stpf)
                         : std::max(stp + 0.66 * (sty - stp), stpf);
      } else {
        stpf = std::abs(stpc - stp) > std::abs(stpq - stp) ? stpc : stpq;
        stpf = std::max(stpmin, std::min(stpmax, stpf));
      }
    } else {
      // Same sign, derivative not decreasing: extrapolate or cubic step towards sty.
      if (brackt) {
        const double theta = 3.0 * (fp - fy) / (sty - stp) + dy + dp;
        const double s = std::max({std::abs(theta), std::abs(dy), std::abs(dp)});
        double gamma = cubic_gamma(theta, dy, dp, s, false);
        if (stp > sty) gamma = -gamma;
        const double p = (gamma - dp) + theta;
        const double q = ((gamma - dp) + gamma) + dy;
        stpf = stp + (p / q) * (sty - stp);
      } else {
        stpf = stp > stx ? stpmax : stpmin;
      }
    }
    if (fp > fx) {
      sty = stp;
      fy = fp;
      dy = dp;
    } else {
      if (sgnd < 0) {
        sty = stx;
        fy = fx;
        dy = dx;
      }
      stx = stp;
      fx = fp;
      dx = dp;
    }
    stp = stpf;
  }
};

/// MINPACK-2 dcsrch as a state machine: start() with phi(0), phi'(0) and the first trial step,
/// then next(phi(stp), phi'(stp)) until it reports done; stp() is the step to evaluate next (or
/// the accepted one once done).
class MoreThuenteSearch {
 public:
  MoreThuenteSearch(double ftol, double gtol, double xtol, double stpmin, double stpmax)
      : ftol_(ftol), gtol_(gtol), xtol_(xtol), stpmin_(stpmin), stpmax_(stpmax) {}

  void start(double f0, double g0, double stp) {
    stp_ = stp;
    brackt_ = false;
    stage_ = 1;
    finit_ = f0;
    ginit_ = g0;
    gtest_ = ftol_ * ginit_;
    width_ = stpmax_ - stpmin_;
    width1_ = width_ / 0.5;
    stx_ = 0;
    fx_ = finit_;
    gx_ = ginit_;
    sty_ = 0;
    fy_ = finit_;
    gy_ = ginit_;
    stmin_ = 0;
    stmax_ = stp_ + 4.0 * stp_;
  }

  /// Takes phi and phi' at stp(); returns true when stp() is accepted (converged, or a warning
  /// that rounding or the interval prevent progress: L-BFGS-B accepts both).
  bool next(double f, double g) {
    const double ftest = finit_ + stp_ * gtest_;
    if (stage_ == 1 && f <= ftest && g >= 0) stage_ = 2;
    if (brackt_ && (stp_ <= stmin_ || stp_ >= stmax_)) return true;   // rounding errors
    if (brackt_ && stmax_ - stmin_ <= xtol_ * stmax_) return true;    // xtol test
    if (stp_ == stpmax_ && f <= ftest && g <= gtest_) return true;    // stp = stpmax
    if (stp_ == stpmin_ && (f > ftest || g >= gtest_)) return true;   // stp = stpmin
    if (f <= ftest && std::abs(g) <= gtol_ * (-ginit_)) return true;  // strong Wolfe holds

    if (stage_ == 1 && f <= fx_ && f > ftest) {
      // Modified function psi(stp) = phi(stp) - phi(0) - ftol stp phi'(0) until a step with
      // sufficient decrease and non-negative derivative has been seen.
      double fm = f - stp_ * gtest_;
      double fxm = fx_ - stx_ * gtest_;
      double fym = fy_ - sty_ * gtest_;
      double gm = g - gtest_;
      double gxm = gx_ - gtest_;
      double gym = gy_ - gtest_;
      MoreThuenteStep::step(stx_, fxm, gxm, sty_, fym, gym, stp_, fm, gm, brackt_, stmin_, stmax_);
      fx_ = fxm + stx_ * gtest_;
      fy_ = fym + sty_ * gtest_;
      gx_ = gxm + gtest_;
      gy_ = gym + gtest_;
    } else {
      MoreThuenteStep::step(stx_, fx_, gx_, sty_, fy_, gy_, stp_, f, g, brackt_, stmin_, stmax_);
    }
    if (brackt_) {
      if (std::abs(sty_ - stx_) >= 0.66 * width1_) stp_ = stx_ + 0.5 * (sty_ - stx_);
      width1_ = width_;
      width_ = std::abs(sty_ - stx_);
      stmin_ = std::min(stx_, sty_);
      stmax_ = std::max(stx_, sty_);
    } else {
      stmin_ = stp_ + 1.1 * (stp_ - stx_);
      stmax_ = stp_ + 4.0 * (stp_ - stx_);
    }
    stp_ = std::min(std::max(stp_, stpmin_), stpmax_);
    if ((brackt_ && (stp_ <= stmin_ || stp_ >= stmax_)) ||
        (brackt_ && stmax_ - stmin_ <= xtol_ * stmax_)) {
      stp_ = stx_;  // no further progress possible: try the best step so far
    }
    return false;
  }

  [[nodiscard]] double stp() const noexcept { return stp_; }

 private:
  double ftol_, gtol_, xtol_, stpmin_, stpmax_;
  double stp_ = 0;
  bool brackt_ = false;
  int stage_ = 1;
  double finit_ = 0, ginit_ = 0, gtest_ = 0, width_ = 0, width1_ = 0;
  double stx_ = 0, fx_ = 0, gx_ = 0, sty_ = 0, fy_ = 0, gy_ = 0, stmin_ = 0, stmax_ = 0;
};

/// What lbfgs_minimize reports after each iteration when nobody listens: nothing.
struct no_lbfgs_report {
  void operator()(const LbfgsResult& /*state*/) const noexcept {}
};

/// Minimises `objective` from x0; see the top of this header for the algorithm. After each
/// iteration (each accepted step, the last one included) `on_iteration(result so far)` is
/// called: n_iter, f, grad and n_fev are those of the new iterate (LogisticRegression's
/// verbose lines).
template <class Objective, class OnIteration = no_lbfgs_report>
LbfgsResult lbfgs_minimize(Objective&& objective, Eigen::VectorXd x0, const LbfgsOptions& options,
                           const OnIteration& on_iteration = {}) {
  constexpr double eps = std::numeric_limits<double>::epsilon();
  constexpr double stpmax = 1e10;  // L-BFGS-B's bound on the step without bounds on x
  const Eigen::Index n = x0.size();

  LbfgsResult result;
  result.x = std::move(x0);
  result.grad.resize(n);
  result.f = objective(result.x, result.grad);
  result.n_fev = 1;
  if (n == 0 || result.grad.template lpNorm<Eigen::Infinity>() <= options.gtol) {
    result.status = LbfgsStatus::converged_gradient;
    return result;
  }
  if (options.max_iter <= 0) {
    result.status = LbfgsStatus::max_iter;
    return result;
  }

  std::deque<std::pair<Eigen::VectorXd, Eigen::VectorXd>> pairs;  // (s, y), newest last
  double h0 = 1.0;  // sᵀy / yᵀy of the newest pair; 1 with an empty memory (theta = 1)
  std::vector<double> alpha(static_cast<std::size_t>(std::max(options.memory, 0)));
  Eigen::VectorXd d(n), x_new(n), g_new(n);

  while (true) {
    // Two-loop recursion: d = -H g.
    d = -result.grad;
    for (std::size_t j = pairs.size(); j-- > 0;) {
      const auto& [s, y] = pairs[j];
      alpha[j] = s.dot(d) / s.dot(y);
      d -= alpha[j] * y;
    }
    d *= h0;
    for (std::size_t j = 0; j < pairs.size(); ++j) {
      const auto& [s, y] = pairs[j];
      const double beta = y.dot(d) / s.dot(y);
      d += (alpha[j] - beta) * s;
    }

    const double gd0 = result.grad.dot(d);
    const double stp0 = result.n_iter == 0 ? std::min(1.0 / d.norm(), stpmax) : 1.0;
    bool accepted = false;
    double gd = gd0;
    double stp = stp0;
    if (gd0 < 0) {
      MoreThuenteSearch search(1e-3, 0.9, 0.1, 0.0, stpmax);
      search.start(result.f, gd0, stp0);
      for (int evals = 0; evals < options.max_linesearch; ++evals) {
        stp = search.stp();
        x_new = result.x + stp * d;
        const double f_new = objective(x_new, g_new);
        ++result.n_fev;
        gd = g_new.dot(d);
        if (search.next(f_new, gd)) {
          accepted = true;
          std::swap(result.x, x_new);  // x_new keeps the previous iterate
          std::swap(result.grad, g_new);
          const double f_old = result.f;
          result.f = f_new;
          x_new = result.x - x_new;     // s
          g_new = result.grad - g_new;  // y
          ++result.n_iter;
          on_iteration(std::as_const(result));
          // scipy's order: it stops on max_iter and max_fun when handed the new iterate, before
          // L-BFGS-B gets to test convergence at it (scikit-learn then warns).
          if (result.n_iter >= options.max_iter) {
            result.status = LbfgsStatus::max_iter;
            return result;
          }
          if (result.n_fev > options.max_fun) {
            result.status = LbfgsStatus::max_fun;
            return result;
          }
          if (result.grad.template lpNorm<Eigen::Infinity>() <= options.gtol) {
            result.status = LbfgsStatus::converged_gradient;
            return result;
          }
          if (f_old - result.f <=
              options.ftol * std::max({std::abs(f_old), std::abs(result.f), 1.0})) {
            result.status = LbfgsStatus::converged_reduction;
            return result;
          }
          break;
        }
      }
    }
    if (!accepted) {
      // Ascent direction or too many evaluations: keep the last iterate (never overwritten by a
      // trial), drop the memory and restart from steepest descent, unless it already was.
      if (pairs.empty()) {
        result.status = LbfgsStatus::line_search_failed;
        return result;
      }
      pairs.clear();
      h0 = 1.0;
      continue;
    }
    // L-BFGS-B's update test: skip the pair when the curvature sᵀy <= eps · (-gᵀs).
    const double sy = (gd - gd0) * stp;
    if (sy > eps * (-gd0 * stp) && options.memory > 0) {
      h0 = sy / g_new.squaredNorm();
      if (static_cast<int>(pairs.size()) == options.memory) pairs.pop_front();
      pairs.emplace_back(x_new, g_new);
    }
  }
}

}  // namespace onelearn::linear_model::detail
