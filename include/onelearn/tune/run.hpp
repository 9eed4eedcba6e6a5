#pragma once
/**
 * \file
 * \brief tune::run: a hyper-parameter search over one training function.
 * \ingroup tuning
 *
 * \code
 * #include <onelearn/tune/run.hpp>
 * namespace tune = onelearn::tune;
 *
 * auto train = [&](const tune::Trial& trial, tune::Reporter& reporter) {
 *   onelearn::linear_model::Ridge<double> model({.alpha = trial.get<double>("alpha")});
 *   model.fit(X_train, y_train);
 *   return model.score(X_val, y_val);  // R²: larger is better (Mode::max)
 * };
 * tune::Space space{{"alpha", tune::log_uniform{1e-4, 1e2}}};
 *
 * double alone = tune::run_once(train, {{"alpha", 1.0}});            // a single run
 * tune::Results results = tune::run(train, space, {.n_trials = 20, .seed = 7});  // a search
 * double best_alpha = std::get<double>(results.best().params[0].second);
 *
 * // The same search with its trials spread over the ranks of a distributed policy (exec::mpi,
 * // exec::ucx): every rank returns the same table.
 * tune::Results spread = tune::run(train, space, {.n_trials = 20, .seed = 7},
 *                                  onelearn::exec::mpi{comm});
 * \endcode
 *
 * tune::run: a hyper-parameter search over one training function,
 * `double train_fn(const tune::Trial&, tune::Reporter&)` (see trial.hpp), which builds a model
 * from the trial's parameters, trains it, may report intermediate scores, and returns its
 * score. The searcher (grid, random or TPE; searchers.hpp) proposes the trials; a scheduler
 * (median rule or ASHA; schedulers.hpp) may stop poor ones early from their reports. A trial
 * that throws is recorded as failed with its message and the search goes on; a stopped trial is
 * recorded as stopped with its last reported score (results.hpp).
 *
 * Method: the search proceeds in batches of `batch_size` trials. Each batch's configurations are
 * proposed from the history of all earlier batches; within a batch, trial i runs on trial group
 * i mod (number of groups); at the end of the batch the rows are gathered (an all-gather of the
 * rows, serialised exactly) so that every rank holds the same history, and the next batch is
 * proposed identically on every rank. In one process there is one group; under a distributed
 * policy the groups are consecutive blocks of ranks_per_trial ranks (the last one smaller when
 * the number of ranks is not a multiple), made with the policy's split(rank / ranks_per_trial,
 * rank) at the start of the search (collective: every rank of the policy calls run) and
 * released at its end. Every rank of a group calls the training function, and
 * Trial::exec<Exec>() is the group's policy (of the search's type: one rank when
 * ranks_per_trial is 1), so a function written against it trains data-parallel inside the
 * search, and alone over all ranks through run_once. The group agrees on each reported score
 * (its first rank's, broadcast) so that a scheduler stops the trial on all of its ranks
 * together; the group's first rank contributes the trial's row. The scheduler decides
 * from the history too, never from trials still running, so the table depends only on the
 * options: with batch_size fixed, a search gives the same trials, scores and order on any
 * number of ranks (the wall times aside). Grid and random searches without a scheduler do not
 * depend on the history, so for them that holds whatever the batch size.
 *
 * \par Parameters (RunOptions)
 * - `mode` (Mode, default max): whether a larger (max) or smaller (min) score is better.
 * - `searcher` (Search, default random): grid, random or tpe.
 * - `n_trials` (default 10, >= 1): number of trials of random and TPE searches; a grid search
 *   runs every point of its grid and ignores it.
 * - `seed` (std::uint64_t, default 0): the searcher's seed; trial i gets Trial::seed() = seed + i.
 * - `tpe` (TPEOptions): TPE's settings.
 * - `scheduler` (Scheduler, default none): MedianStoppingRule or ASHA.
 * - `batch_size` (default 0): trials proposed from the same history; 0 means the number of
 *   trial groups (1 in one process: each trial sees every earlier one). Set it to make a
 *   model-based or scheduled search reproducible across numbers of ranks.
 * - `ranks_per_trial` (default 1): ranks that train one trial together; > 1 only under a
 *   distributed policy (exec::mpi, exec::ucx).
 * - `verbose` (int, default 0): >= 1 logs (core/log.hpp's sink; rank 0 of the search's policy
 *   only) a line opening the search, "tune::run: 20 trials, random search", one line per
 *   trial, "tune::run: trial 3/20 {alpha=0.5}: ok, score 0.921248 (best 0.93), 0.12s;
 *   elapsed 0.4s, remaining ~2.3s" ("failed: <message>" or "stopped at step 4, score ..."
 *   for the others), and one closing it with the best trial. Under a distributed policy the
 *   lines of a batch come when the batch ends (the ranks gather its rows then). Not compared
 *   across ranks.
 * - `journal` (path, default none): a file where rank 0 records the rows of every finished
 *   batch (all or nothing: a temporary file renamed into place; tune/detail/journal.hpp). When
 *   it exists at the start, the search resumes: the journal's batches are proposed again (so
 *   the searcher and scheduler move as they did) and their rows read back instead of run, and
 *   the search ends with the table of a search never interrupted (the rows read back keep
 *   their recorded seconds). A journal of another search (other options or space) or a
 *   damaged one is an error on every rank. With onelearn-run, put it in the checkpoint
 *   directory: `.journal = onelearn::run::checkpoint_dir() / "search.journal"`.
 *
 * \par Differences from Ray Tune
 * - Synchronous batches instead of asynchronous trial scheduling: slower when trial times vary
 *   a lot, but reproducible. Early stopping is signalled by an exception from
 *   Reporter::report, not by the function polling.
 *
 * Errors: `io_error` for a journal that cannot be read or written; `invalid_argument` for a
 * journal of another search, for an invalid space (empty, a bad distribution), a continuous
 * parameter in a grid search, n_trials = 0, bad scheduler or TPE settings, ranks_per_trial
 * outside [1, number of ranks]. Under a distributed policy these are raised on every rank. With
 * ranks_per_trial > 1 a training function that throws on some ranks of a group but not on the
 * others (e.g. from a check of its local data) can leave the others waiting in a collective:
 * check inside exec.propagate_errors, as onelearn's estimators do, so that the whole group
 * fails together. Errors
 * inside train_fn (an unknown parameter name in trial.get, anything it throws) are not errors
 * of run: they make that trial fail, with the message in the table.
 */

#include <algorithm>
#include <any>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/core/detail/progress.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/tune/detail/journal.hpp"
#include "onelearn/tune/results.hpp"
#include "onelearn/tune/schedulers.hpp"
#include "onelearn/tune/searchers.hpp"
#include "onelearn/tune/space.hpp"
#include "onelearn/tune/trial.hpp"

namespace onelearn::tune {

struct RunOptions {
  Mode mode = Mode::max;
  Search searcher = Search::random;
  std::size_t n_trials = 10;
  std::uint64_t seed = 0;
  TPEOptions tpe{};
  Scheduler scheduler{};
  std::size_t batch_size = 0;
  int ranks_per_trial = 1;
  int verbose = 0;  ///< >= 1: a progress line per trial (rank 0); not compared across ranks
  /// A file recording every finished batch (rank 0 writes it); an existing one is resumed.
  std::filesystem::path journal{};
};

namespace detail {

using TrainFunction = std::function<double(const Trial&, Reporter&)>;

/// A trial to run: its parameters and its seed.
struct Config {
  ParamList params;
  std::uint64_t seed = 0;
};

/// The configurations of trials first_id, first_id + 1, ... (at most count), from the history.
using Suggest = std::function<std::vector<Config>(std::size_t first_id, std::size_t count,
                                                  const std::vector<TrialResult>& history)>;

/// The processes that train one trial together, as seen from this process.
struct Group {
  std::size_t index = 0;  ///< which group this process belongs to
  std::size_t count = 1;  ///< number of groups
  bool leader = true;     ///< whether this process contributes the group's rows
  std::any policy = exec::local{};  ///< what Trial::exec returns (it owns the group's resources)
  Reporter::Agree agree;  ///< makes the group agree on a reported score (empty: alone)
};

/// This rank's trial group: consecutive blocks of `ranks_per_trial` ranks of `world`, through
/// the policy's split (collective).
template <exec::ExecutionPolicy Exec>
Group split_groups(const Exec& world, int ranks_per_trial) {
  Group g;
  const int rank = world.rank();
  g.index = static_cast<std::size_t>(rank / ranks_per_trial);
  g.count = static_cast<std::size_t>((world.size() + ranks_per_trial - 1) / ranks_per_trial);
  const Exec policy = world.split(rank / ranks_per_trial, rank);
  g.leader = policy.rank() == 0;
  g.policy = policy;
  if (policy.size() > 1) {
    g.agree = [policy](double score) {
      policy.broadcast(std::span<double>(&score, 1), 0);
      return score;
    };
  }
  return g;
}

inline TrialResult run_trial(const TrainFunction& fn, std::size_t id, Config config,
                             const Scheduler& scheduler, Mode mode,
                             const std::vector<TrialResult>& history, const Group& group) {
  TrialResult row;
  row.trial_id = id;
  row.params = config.params;
  row.seed = config.seed;
  const Trial trial(std::move(config.params), id, config.seed, group.policy);
  Reporter reporter(
      [&](const std::vector<Report>& reports) { return should_stop(scheduler, history, reports, mode); },
      group.agree);
  const auto start = std::chrono::steady_clock::now();
  try {
    row.score = fn(trial, reporter);
    if (std::isnan(row.score)) {
      row.status = Status::failed;
      row.message = "the training function returned NaN";
    }
  } catch (const trial_stopped& stop) {
    row.status = Status::stopped;
    row.score = stop.score;
  } catch (const std::exception& e) {
    row.status = Status::failed;
    row.score = std::numeric_limits<double>::quiet_NaN();
    row.message = e.what();
  } catch (...) {
    row.status = Status::failed;
    row.score = std::numeric_limits<double>::quiet_NaN();
    row.message = "an exception not derived from std::exception";
  }
  row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  row.reports = reporter.reports();
  return row;
}

/// Every rank's rows of one batch, on every rank, in trial-id order.
template <exec::ExecutionPolicy Exec>
std::vector<TrialResult> gather_rows(const Exec& world, const std::vector<TrialResult>& mine) {
  if constexpr (!Exec::is_distributed) {
    return mine;
  } else {
    Writer writer;
    for (const TrialResult& r : mine) writer.row(r);
    const std::vector<std::int64_t> words = writer.words();
    // Each rank's chunk: [chunk length in words, number of rows, the rows' words...].
    std::vector<std::int64_t> chunk{static_cast<std::int64_t>(words.size() + 2),
                                    static_cast<std::int64_t>(mine.size())};
    chunk.insert(chunk.end(), words.begin(), words.end());
    const std::vector<std::int64_t> all =
        world.allgatherv(std::span<const std::int64_t>(chunk.data(), chunk.size()));
    std::vector<TrialResult> rows;
    for (std::size_t pos = 0; pos + 2 <= all.size();) {
      const auto length = static_cast<std::size_t>(all[pos]);
      const auto n_rows = static_cast<std::size_t>(all[pos + 1]);
      if (length < 2 || pos + length > all.size()) {
        throw distributed_error("tune: expected well-formed rows from every rank, found a "
                                "chunk of bad length");
      }
      Reader reader(std::span<const std::int64_t>(all.data() + pos + 2, length - 2));
      for (std::size_t k = 0; k < n_rows; ++k) rows.push_back(reader.row());
      pos += length;
    }
    std::sort(rows.begin(), rows.end(), [](const TrialResult& a, const TrialResult& b) {
      return a.trial_id < b.trial_id;
    });
    return rows;
  }
}

/// The verbose lines of tune::run (see RunOptions::verbose): one per trial, from the rows every
/// rank holds once a batch is gathered.
class TrialProgress {
 public:
  template <exec::ExecutionPolicy Exec>
  TrialProgress(int verbose, const Exec& world, Mode mode, std::size_t total)
      : log_("tune::run", verbose, world), mode_(mode), total_(total) {}

  [[nodiscard]] bool enabled() const noexcept { return log_.enabled(); }
  [[nodiscard]] const onelearn::detail::ProgressLog& log() const noexcept { return log_; }

  void row(const TrialResult& r) {
    ++done_;
    if (r.status == Status::ok &&
        (!have_best_ || (mode_ == Mode::max ? r.score > best_ : r.score < best_))) {
      best_ = r.score;
      best_id_ = r.trial_id;
      have_best_ = true;
    }
    if (!enabled()) return;
    using onelearn::detail::format_quantity;
    std::string text = "trial " + std::to_string(r.trial_id + 1) + "/" + std::to_string(total_) +
                       " " + onelearn::detail::exact_text(r.params) + ": ";
    if (r.status == Status::failed) {
      text += "failed: " + r.message;
    } else {
      if (r.status == Status::stopped) {
        text += "stopped at step " +
                std::to_string(r.reports.empty() ? std::int64_t{0} : r.reports.back().step) +
                ", score " + format_quantity(r.score);
      } else {
        text += "ok, score " + format_quantity(r.score);
      }
    }
    if (have_best_) text += " (best " + format_quantity(best_) + ")";
    text += ", " + onelearn::detail::format_duration(r.seconds);
    log_.step(text, static_cast<double>(done_), static_cast<double>(total_));
  }

  /// The closing line.
  void finish() const {
    if (!enabled()) return;
    log_.note(std::to_string(done_) + " trials done" +
              (have_best_ ? ", best trial " + std::to_string(best_id_ + 1) + " with score " +
                                onelearn::detail::format_quantity(best_)
                          : std::string(", none completed")) +
              "; elapsed " + onelearn::detail::format_duration(log_.elapsed()));
  }

 private:
  onelearn::detail::ProgressLog log_;
  Mode mode_;
  std::size_t total_;
  std::size_t done_ = 0;
  double best_ = 0;
  std::size_t best_id_ = 0;
  bool have_best_ = false;
};

/// Runs `total` trials in batches (see run's Method) and returns every trial's row, each
/// reported to `progress` when given.
/// `done`: the rows of a journal, trials 0.. already run; their batches are proposed again
/// (the searcher's state moves as it did) and their rows taken instead of running them.
/// `on_batch` sees the history after every batch that ran.
template <exec::ExecutionPolicy Exec>
std::vector<TrialResult> execute(const TrainFunction& fn, std::size_t total, const Suggest& suggest,
                                 const Scheduler& scheduler, Mode mode, std::size_t batch_size,
                                 const Exec& world, const Group& group,
                                 TrialProgress* progress = nullptr,
                                 std::vector<TrialResult> done = {},
                                 const std::function<void(const std::vector<TrialResult>&)>& on_batch = {}) {
  const std::size_t batch = batch_size == 0 ? group.count : batch_size;
  std::vector<TrialResult> history;
  for (std::size_t next = 0; next < total;) {
    std::vector<Config> configs = suggest(next, std::min(batch, total - next), history);
    if (configs.empty()) break;
    if (next < done.size()) {
      // Replayed from the journal: the same batch with the same parameters, or another search.
      for (std::size_t k = 0; k < configs.size(); ++k) {
        if (next + k >= done.size() || done[next + k].params != configs[k].params) {
          throw invalid_argument("tune::run (journal): expected trial " +
                                 std::to_string(next + k) + " of this search in the journal, " +
                                 "found " + (next + k >= done.size() ? "none (it ends inside a batch)"
                                                                     : "other parameters"));
        }
        history.push_back(std::move(done[next + k]));
        if (progress != nullptr) progress->row(history.back());
      }
      next += configs.size();
      continue;
    }
    std::vector<TrialResult> mine;
    for (std::size_t k = 0; k < configs.size(); ++k) {
      const std::size_t id = next + k;
      if (id % group.count != group.index) continue;
      TrialResult row = run_trial(fn, id, std::move(configs[k]), scheduler, mode, history, group);
      if (group.leader) mine.push_back(std::move(row));
    }
    std::vector<TrialResult> rows = gather_rows(world, mine);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (rows.size() != configs.size() || rows[k].trial_id != next + k) {
        throw distributed_error("tune: expected one row for each trial of the batch from the "
                                "ranks, found " + std::to_string(rows.size()) + " rows for " +
                                std::to_string(configs.size()) + " trials");
      }
    }
    if (progress != nullptr) {
      for (const TrialResult& r : rows) progress->row(r);
    }
    history.insert(history.end(), std::make_move_iterator(rows.begin()),
                   std::make_move_iterator(rows.end()));
    next += configs.size();
    if (on_batch) on_batch(history);
  }
  return history;
}

/// The searcher `options` asks for, and how many trials it runs.
inline std::pair<std::unique_ptr<Searcher>, std::size_t> make_searcher(const Space& space,
                                                                       const RunOptions& options) {
  switch (options.searcher) {
    case Search::grid: {
      auto grid = std::make_unique<GridSearcher>(space);
      const auto size = static_cast<std::size_t>(grid->size());
      return {std::move(grid), size};
    }
    case Search::tpe:
      return {std::make_unique<TPESearcher>(space, options.seed, options.mode, options.tpe),
              options.n_trials};
    case Search::random: break;
  }
  return {std::make_unique<RandomSearcher>(space, options.seed), options.n_trials};
}

/// The search's settings and space as check_same_values compares them across the ranks: ranks
/// with another seed or space would propose other trials and fall out of step. verbose is left
/// out on purpose: only rank 0 prints, so `verbose = rank == 0` is fine.
inline onelearn::detail::NamedValues describe_run(const Space& space, const RunOptions& o) {
  using onelearn::detail::exact_text;
  onelearn::detail::NamedValues v;
  v.add("mode", o.mode == Mode::max ? "max" : "min");
  v.add("searcher", o.searcher == Search::grid ? "grid" : o.searcher == Search::tpe ? "tpe" : "random");
  v.add("n_trials", static_cast<std::int64_t>(o.n_trials));
  v.add("seed", o.seed);
  v.add("tpe.n_startup_trials", static_cast<std::int64_t>(o.tpe.n_startup_trials));
  v.add("tpe.gamma", o.tpe.gamma);
  v.add("tpe.n_ei_candidates", static_cast<std::int64_t>(o.tpe.n_ei_candidates));
  v.add("scheduler", std::visit(
                         [](const auto& s) -> std::string {
                           using S = std::decay_t<decltype(s)>;
                           if constexpr (std::is_same_v<S, MedianStoppingRule>) {
                             return "MedianStoppingRule(grace_period=" + exact_text(s.grace_period) +
                                    ", min_samples_required=" +
                                    exact_text(static_cast<std::int64_t>(s.min_samples_required)) + ")";
                           } else if constexpr (std::is_same_v<S, ASHA>) {
                             return "ASHA(grace_period=" + exact_text(s.grace_period) +
                                    ", reduction_factor=" + exact_text(s.reduction_factor) + ")";
                           } else {
                             return "none";
                           }
                         },
                         o.scheduler));
  v.add("batch_size", static_cast<std::int64_t>(o.batch_size));
  v.add("ranks_per_trial", o.ranks_per_trial);
  for (const Dimension& d : space.dimensions()) {
    v.add("space." + d.name,
          std::visit(
              [](const auto& dist) -> std::string {
                using D = std::decay_t<decltype(dist)>;
                if constexpr (std::is_same_v<D, uniform>) {
                  return "uniform(" + exact_text(dist.low) + ", " + exact_text(dist.high) + ")";
                } else if constexpr (std::is_same_v<D, log_uniform>) {
                  return "log_uniform(" + exact_text(dist.low) + ", " + exact_text(dist.high) + ")";
                } else if constexpr (std::is_same_v<D, integer>) {
                  return "integer(" + exact_text(dist.low) + ", " + exact_text(dist.high) + ")";
                } else {
                  std::string text = "choice(";
                  for (std::size_t i = 0; i < dist.values.size(); ++i) {
                    text += (i == 0 ? "" : ", ") + exact_text(dist.values[i]);
                  }
                  return text + ")";
                }
              },
              d.distribution));
  }
  return v;
}

/// Checks `options` on every rank together and runs the search; `make_group` is called after
/// the checks have passed everywhere (it may be collective).
template <exec::ExecutionPolicy Exec, class MakeGroup>
Results run_search(const TrainFunction& fn, const Space& space, const RunOptions& options,
                   const Exec& world, MakeGroup make_group, bool groups_supported) {
  std::unique_ptr<Searcher> searcher;
  std::size_t total = 0;
  world.propagate_errors([&] {
    if (options.searcher != Search::grid && options.n_trials == 0) {
      throw invalid_argument("tune::run: n_trials: expected >= 1, found 0");
    }
    if (options.ranks_per_trial < 1 || options.ranks_per_trial > world.size() ||
        (options.ranks_per_trial != 1 && !groups_supported)) {
      throw invalid_argument(
          "tune::run: ranks_per_trial: expected 1" +
          std::string(groups_supported ? " to " + std::to_string(world.size()) + " (the ranks)"
                                       : " (more needs a distributed execution policy)") +
          ", found " + std::to_string(options.ranks_per_trial));
    }
    validate("tune::run", options.scheduler);
    space.validate("tune::run");
    std::tie(searcher, total) = make_searcher(space, options);
  });
  if constexpr (Exec::is_distributed) {
    world.check_same_values("tune::run", describe_run(space, options).values());
  }
  const Group group = make_group(options.ranks_per_trial);
  const std::uint64_t seed = options.seed;
  const Suggest suggest = [&](std::size_t first_id, std::size_t count,
                              const std::vector<TrialResult>& history) {
    std::vector<Config> configs;
    for (ParamList& p : searcher->suggest(count, history)) {
      configs.push_back({std::move(p), seed + first_id + configs.size()});
    }
    return configs;
  };
  TrialProgress progress(options.verbose, world, options.mode, total);
  if (progress.enabled()) {
    progress.log().note(std::to_string(total) + " trials, " +
                        (options.searcher == Search::grid  ? "grid"
                         : options.searcher == Search::tpe ? "TPE"
                                                           : "random") +
                        " search");
  }
  std::vector<TrialResult> done;
  std::function<void(const std::vector<TrialResult>&)> on_batch;
  std::string description;  // the journal's: one "name=value" line per setting
  if (!options.journal.empty()) {
    const onelearn::detail::NamedValues described = describe_run(space, options);
    for (const exec::NamedValue& v : described.values()) {
      description += v.name + "=" + v.text + "\n";
    }
    done = read_journal(world, options.journal, description);
    on_batch = [&](const std::vector<TrialResult>& history) {
      write_journal(world, options.journal, description, history);
    };
  }
  Results results(execute(fn, total, suggest, options.scheduler, options.mode, options.batch_size,
                          world, group, &progress, std::move(done), on_batch),
                  options.mode);
  progress.finish();
  return results;
}

template <class TrainFn>
void check_train_fn() {
  static_assert(std::is_invocable_r_v<double, TrainFn&, const Trial&, Reporter&>,
                "onelearn::tune: the training function must be callable as "
                "double(const tune::Trial&, tune::Reporter&)");
}

}  // namespace detail

/// A search whose trials are spread over groups of options.ranks_per_trial ranks of `exec`
/// (see Method). Every rank returns the same table.
template <class TrainFn, exec::ExecutionPolicy Exec>
Results run(TrainFn&& train_fn, const Space& space, const RunOptions& options, const Exec& exec) {
  detail::check_train_fn<TrainFn>();
  return detail::run_search(
      detail::TrainFunction(std::ref(train_fn)), space, options, exec,
      [&](int k) { return detail::split_groups(exec, k); }, Exec::is_distributed);
}

/// A search in this process.
template <class TrainFn>
Results run(TrainFn&& train_fn, const Space& space, const RunOptions& options = {}) {
  return run(std::forward<TrainFn>(train_fn), space, options, exec::local{});
}

/// One run of the training function with `params`, exactly as a search would call it (a
/// Reporter that never stops it), training with `policy`: exec::local, or e.g.
/// exec::mpi{comm} for one distributed training run over all of comm's ranks. Exceptions
/// propagate.
template <class TrainFn, class Policy = exec::local>
double run_once(TrainFn&& train_fn, ParamList params, Policy policy = {}, std::uint64_t seed = 0) {
  detail::check_train_fn<TrainFn>();
  const Trial trial(std::move(params), 0, seed, std::move(policy));
  Reporter reporter;
  return std::forward<TrainFn>(train_fn)(trial, reporter);
}

}  // namespace onelearn::tune
