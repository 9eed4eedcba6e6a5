#pragma once
/**
 * \file
 * \brief tune::Trial and tune::Reporter: what a training function receives.
 * \ingroup tuning
 *
 * \code
 * #include <onelearn/tune/trial.hpp>
 *
 * // The one training function: build a model from the trial's hyper-parameters, fit it, report
 * // intermediate scores if it trains in steps, return the final score.
 * auto train = [&](const onelearn::tune::Trial& trial, onelearn::tune::Reporter& reporter) {
 *   const double alpha = trial.get<double>("alpha");
 *   const auto solver = trial.get<std::string>("solver");
 *   double score = 0;
 *   for (std::int64_t epoch = 1; epoch <= 20; ++epoch) {
 *     score = train_one_epoch(alpha, solver, trial.seed());
 *     reporter.report(epoch, score);  // throws tune::trial_stopped if the scheduler says so
 *   }
 *   return score;
 * };
 *
 * // Alone: a Trial from a parameter list and a Reporter that never stops anything.
 * onelearn::tune::Reporter reporter;
 * double score = train(onelearn::tune::Trial({{"alpha", 0.1}, {"solver", "lbfgs"}}), reporter);
 * \endcode
 *
 * tune::Trial, tune::Reporter: what a training function receives. Its signature is
 * `double(const tune::Trial&, tune::Reporter&)`; the same function runs alone (called directly,
 * or through tune::run_once), in a search (tune::run) and in an ablation (tune::ablation).
 *
 * A Trial gives typed access to its hyper-parameters with `get<T>(name)`, converting between
 * number types only where nothing is lost (an integer to double, an integral double to an
 * integer type), as set_params does. `seed()` is a per-trial seed for the function's own
 * randomness (run: options.seed + trial id; ablation: options.seed + repeat). `exec<Policy>()`
 * is the execution policy the trial should train with: under tune::run or tune::ablation with a
 * distributed policy (exec::mpi, exec::ucx) the policy of the trial's own group of ranks, so the
 * same function trains data-parallel; `exec<exec::local>()` always works.
 *
 * `Reporter::report(step, score)` records an intermediate score. It signals early stopping by
 * THROWING `tune::trial_stopped` (it never returns a flag): the function needs no code to stop,
 * and the search records the trial as stopped with that last score. trial_stopped derives from
 * no standard exception, so `catch (const std::exception&)` in the function does not swallow
 * it; a `catch (...)` that does makes the trial run to its end and be recorded as completed.
 * Steps must increase strictly from one report to the next.
 *
 * Errors: `get` throws `invalid_argument` naming the parameter when the trial has no parameter
 * of that name (listing the ones it has) or when the value cannot be converted to T; `exec`
 * throws `invalid_argument` when the trial was given no policy of that type; `report` throws
 * `invalid_argument` for a NaN score or a step that does not increase. Inside a search these
 * errors make the trial fail with that message; the search goes on.
 */

#include <any>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/tune/space.hpp"

namespace onelearn::tune {

/// Whether a larger or a smaller score is better.
enum class Mode { max, min };

/// How a trial ended.
enum class Status { ok, failed, stopped };

inline std::string_view to_string(Status status) {
  switch (status) {
    case Status::failed: return "failed";
    case Status::stopped: return "stopped";
    case Status::ok: break;
  }
  return "ok";
}

/// One intermediate score.
struct Report {
  std::int64_t step = 0;
  double score = 0.0;
  friend bool operator==(const Report&, const Report&) = default;
};

/// Thrown by Reporter::report when the scheduler stops the trial. Not a std::exception, so a
/// training function's `catch (const std::exception&)` lets it through.
struct trial_stopped {
  std::int64_t step = 0;
  double score = 0.0;
};

class Trial {
 public:
  /// A trial with these parameters, run on one process (exec<exec::local>()).
  explicit Trial(ParamList params, std::size_t id = 0, std::uint64_t seed = 0)
      : params_(std::move(params)), id_(id), seed_(seed), policy_(exec::local{}) {}

  /// A trial whose training function should use `policy` (e.g. an exec::mpi communicator).
  template <class Policy>
  Trial(ParamList params, std::size_t id, std::uint64_t seed, Policy policy)
      : params_(std::move(params)), id_(id), seed_(seed), policy_(std::move(policy)) {}

  /// The value of parameter `name` as T (bool, an integer type, a floating type or
  /// std::string).
  template <class T>
  [[nodiscard]] T get(std::string_view name) const {
    return params::detail::convert_param<T>(name, find(name));
  }

  /// The value of parameter `name` as it was drawn.
  [[nodiscard]] const ParamValue& value(std::string_view name) const { return find(name); }

  [[nodiscard]] bool has(std::string_view name) const noexcept {
    for (const auto& [n, v] : params_) {
      if (n == name) return true;
    }
    return false;
  }

  [[nodiscard]] const ParamList& params() const noexcept { return params_; }
  [[nodiscard]] std::size_t id() const noexcept { return id_; }
  [[nodiscard]] std::uint64_t seed() const noexcept { return seed_; }

  /// The policy this trial trains with. exec::local is always available.
  template <class Policy>
  [[nodiscard]] Policy exec() const {
    if (const auto* p = std::any_cast<Policy>(&policy_)) return *p;
    if constexpr (std::is_same_v<Policy, exec::local>) {
      return exec::local{};
    } else {
      throw invalid_argument(
          "Trial::exec: expected the trial to have been given a policy of the requested type, "
          "found another (a search gives each trial a policy of the type it was run with; "
          "alone, pass the policy to tune::run_once)");
    }
  }

 private:
  const ParamValue& find(std::string_view name) const {
    for (const auto& [n, v] : params_) {
      if (n == name) return v;
    }
    std::string known;
    for (const auto& [n, v] : params_) known += (known.empty() ? "" : ", ") + n;
    throw invalid_argument("Trial::get: unknown parameter '" + std::string(name) +
                           "'; expected one of: " + (known.empty() ? "(none)" : known));
  }

  ParamList params_;
  std::size_t id_ = 0;
  std::uint64_t seed_ = 0;
  std::any policy_;
};

class Reporter {
 public:
  /// Decides, from the reports so far (the last one just made), whether to stop the trial.
  using StopRule = std::function<bool(const std::vector<Report>&)>;
  /// Makes every process training the trial agree on a score (the group leader's).
  using Agree = std::function<double(double)>;

  /// A reporter that records and never stops: for running a training function alone.
  Reporter() = default;
  explicit Reporter(StopRule stop, Agree agree = {})
      : stop_(std::move(stop)), agree_(std::move(agree)) {}

  /// Records `score` at `step`; throws trial_stopped when the scheduler stops the trial.
  void report(std::int64_t step, double score) {
    if (agree_) score = agree_(score);
    if (std::isnan(score)) {
      throw invalid_argument("Reporter::report: expected a score that is not NaN, found NaN at "
                             "step " + std::to_string(step));
    }
    if (!reports_.empty() && step <= reports_.back().step) {
      throw invalid_argument("Reporter::report: expected steps that increase, found step " +
                             std::to_string(step) + " after step " +
                             std::to_string(reports_.back().step));
    }
    reports_.push_back({step, score});
    if (stop_ && stop_(reports_)) throw trial_stopped{step, score};
  }

  [[nodiscard]] const std::vector<Report>& reports() const noexcept { return reports_; }

 private:
  StopRule stop_;
  Agree agree_;
  std::vector<Report> reports_;
};

}  // namespace onelearn::tune
