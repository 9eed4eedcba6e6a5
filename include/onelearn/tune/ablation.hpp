#pragma once
/**
 * \file
 * \brief tune::ablation: a leave-one-component-out study.
 * \ingroup tuning
 *
 * \code
 * #include <onelearn/tune/ablation.hpp>
 * namespace tune = onelearn::tune;
 *
 * // The same training function as for a search; the components are parameters it reads.
 * auto train = [&](const tune::Trial& trial, tune::Reporter&) {
 *   const bool scale = trial.get<bool>("scaler");                  // a pipeline step
 *   const bool lags = trial.get<bool>("lag_features");             // a feature group
 *   const auto solver = trial.get<std::string>("solver");          // alternative values
 *   return fit_and_score(scale, lags, solver, trial.get<double>("alpha"), trial.seed());
 * };
 * tune::AblationResults table = tune::ablation(
 *     train,
 *     {{"scaler"}, {"lag_features"},                    // booleans: full true, ablated false
 *      {"solver", "lbfgs", {"sgd", "newton"}}},         // full "lbfgs", two alternatives
 *     {.repeats = 3, .fixed = {{"alpha", 0.1}}});
 * for (const tune::AblationRow& row : table.rows()) {
 *   // row.configuration ("full", "-scaler", "solver=sgd", ...), row.score, row.difference
 * }
 * table.to_csv("ablation.csv");
 * \endcode
 *
 * tune::ablation: a leave-one-component-out study. It runs the full configuration (every
 * component at its `full` value, plus the `fixed` parameters) and, for each component and each
 * of its alternatives, the full configuration with only that component changed, `repeats` times
 * each with seeds options.seed + r (the same seeds for every configuration, so differences are
 * paired). Each configuration gets a row with its mean score and its difference from the full
 * configuration's mean score.
 *
 * Method: the configurations are a fixed list of trials (configuration c, repeat r is trial
 * c·repeats + r), run by the same machinery as tune::run, so under exec::mpi the trials are
 * spread over the ranks (or sub-communicators) and every rank gets the same table.
 *
 * \par Parameters
 * - Component: `name`; `full` (ParamValue, default true); `alternatives` (default {false}):
 *   the values tried in its place. A boolean component ("use this feature group / step /
 *   layer") needs only its name.
 * - AblationOptions: `mode` (default max), `repeats` (default 1, >= 1), `seed` (default 0),
 *   `fixed` (parameters every trial gets, e.g. the best ones of a search), `batch_size` and
 *   `ranks_per_trial` as in RunOptions.
 *
 * \par Attributes (AblationRow)
 * - `configuration`: "full"; "-name" for a component whose full value is true and alternative
 *   false; "name=value" otherwise.
 * - `component`, `value`: the changed component and its value (both empty strings for the
 *   full row).
 * - `params`: the trial parameters. `score`: mean over the completed repeats (NaN if none).
 * - `difference`: score - the full configuration's score, in the score's units (for Mode::max a
 *   negative difference means the component helps).
 * - `n_ok`, `status` (failed if any repeat failed, with the first failure's `message`).
 * `AblationResults::trials()` is the table of the individual trials (tune::Results).
 *
 * Errors: `invalid_argument` for no components, a component with an empty or repeated name or
 * no alternatives, repeats of 0, or a fixed parameter that has a component's name. Raised on
 * every rank under an MPI policy.
 */

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/tune/results.hpp"
#include "onelearn/tune/run.hpp"
#include "onelearn/tune/trial.hpp"

namespace onelearn::tune {

struct Component {
  std::string name;
  ParamValue full = true;
  std::vector<ParamValue> alternatives{false};
};

struct AblationOptions {
  Mode mode = Mode::max;
  std::size_t repeats = 1;
  std::uint64_t seed = 0;
  ParamList fixed{};
  std::size_t batch_size = 0;
  int ranks_per_trial = 1;
};

struct AblationRow {
  std::string configuration;
  std::string component;  ///< empty for the full configuration
  ParamValue value;       ///< the component's value in this configuration
  ParamList params;
  double score = std::numeric_limits<double>::quiet_NaN();
  double difference = std::numeric_limits<double>::quiet_NaN();
  std::size_t n_ok = 0;
  Status status = Status::ok;
  std::string message;
};

class AblationResults {
 public:
  AblationResults() = default;
  AblationResults(std::vector<AblationRow> rows, Results trials)
      : rows_(std::move(rows)), trials_(std::move(trials)) {}

  [[nodiscard]] const std::vector<AblationRow>& rows() const noexcept { return rows_; }
  [[nodiscard]] const AblationRow& full() const { return rows_.at(0); }
  [[nodiscard]] const Results& trials() const noexcept { return trials_; }

  /// Header `configuration,component,value,score,difference,n_ok,status,message`.
  [[nodiscard]] std::string csv() const {
    std::string out = "configuration,component,value,score,difference,n_ok,status,message\n";
    for (const AblationRow& r : rows_) {
      out += detail::csv_field(r.configuration) + "," + detail::csv_field(r.component) + "," +
             detail::csv_field(detail::format_value(r.value)) + "," +
             detail::format_number(r.score) + "," + detail::format_number(r.difference) + "," +
             std::to_string(r.n_ok) + "," + std::string(to_string(r.status)) + "," +
             detail::csv_field(r.message) + "\n";
    }
    return out;
  }

  [[nodiscard]] std::string json() const {
    std::string out = "{\"rows\": [";
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const AblationRow& r = rows_[i];
      out += (i == 0 ? "\n  " : ",\n  ");
      out += "{\"configuration\": " + detail::json_string(r.configuration) +
             ", \"component\": " + detail::json_string(r.component) +
             ", \"value\": " + detail::json_value(r.value) +
             ", \"score\": " + detail::json_number(r.score) +
             ", \"difference\": " + detail::json_number(r.difference) +
             ", \"n_ok\": " + std::to_string(r.n_ok) + ", \"status\": \"" +
             std::string(to_string(r.status)) + "\", \"message\": " +
             detail::json_string(r.message) + "}";
    }
    return out + (rows_.empty() ? "]}\n" : "\n]}\n");
  }

  void to_csv(const std::filesystem::path& path) const { detail::write_text_atomically(path, csv()); }
  void to_json(const std::filesystem::path& path) const {
    detail::write_text_atomically(path, json());
  }

 private:
  std::vector<AblationRow> rows_;
  Results trials_;
};

namespace detail {

inline void validate_ablation(const std::vector<Component>& components,
                              const AblationOptions& options) {
  const std::string at = "tune::ablation";
  if (components.empty()) {
    throw invalid_argument(at + ": expected at least one component, found none");
  }
  if (options.repeats == 0) throw invalid_argument(at + ": repeats: expected >= 1, found 0");
  for (std::size_t i = 0; i < components.size(); ++i) {
    const Component& c = components[i];
    if (c.name.empty()) {
      throw invalid_argument(at + ": expected every component to have a name, found an empty "
                                  "name at position " + std::to_string(i));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (components[j].name == c.name) {
        throw invalid_argument(at + ": expected distinct component names, found '" + c.name +
                               "' twice");
      }
    }
    if (c.alternatives.empty()) {
      throw invalid_argument(at + ": component '" + c.name +
                             "': expected at least one alternative value, found none");
    }
    for (const auto& [name, v] : options.fixed) {
      if (name == c.name) {
        throw invalid_argument(at + ": fixed parameter '" + name +
                               "': expected fixed parameters other than the components, found "
                               "a component's name");
      }
    }
  }
}

/// The full configuration's row, then one per (component, alternative).
inline std::vector<AblationRow> ablation_rows(const std::vector<Component>& components,
                                              const ParamList& fixed) {
  ParamList full = fixed;
  for (const Component& c : components) full.emplace_back(c.name, c.full);
  std::vector<AblationRow> rows;
  AblationRow first;
  first.configuration = "full";
  first.params = full;
  rows.push_back(first);
  for (std::size_t i = 0; i < components.size(); ++i) {
    const Component& c = components[i];
    for (const ParamValue& alt : c.alternatives) {
      AblationRow row;
      const bool leave_out = c.full == ParamValue(true) && alt == ParamValue(false);
      row.configuration = leave_out ? "-" + c.name : c.name + "=" + format_value(alt);
      row.component = c.name;
      row.value = alt;
      row.params = full;
      row.params[fixed.size() + i].second = alt;
      rows.push_back(std::move(row));
    }
  }
  rows[0].value = std::string();  // nothing changed
  return rows;
}

template <exec::ExecutionPolicy Exec, class MakeGroup>
AblationResults run_ablation(const TrainFunction& fn, const std::vector<Component>& components,
                             const AblationOptions& options, const Exec& world,
                             MakeGroup make_group, bool groups_supported) {
  world.propagate_errors([&] {
    validate_ablation(components, options);
    if (options.ranks_per_trial < 1 || options.ranks_per_trial > world.size() ||
        (options.ranks_per_trial != 1 && !groups_supported)) {
      throw invalid_argument("tune::ablation: ranks_per_trial: expected 1" +
                             std::string(groups_supported
                                             ? " to " + std::to_string(world.size())
                                             : " (more needs a distributed execution policy)") +
                             ", found " + std::to_string(options.ranks_per_trial));
    }
  });
  std::vector<AblationRow> rows = ablation_rows(components, options.fixed);
  if constexpr (Exec::is_distributed) {
    // Ranks with other components or options would run other trials and fall out of step.
    using onelearn::detail::exact_text;
    onelearn::detail::NamedValues values;
    values.add("mode", options.mode == Mode::max ? "max" : "min");
    values.add("repeats", static_cast<std::int64_t>(options.repeats));
    values.add("seed", options.seed);
    values.add("batch_size", static_cast<std::int64_t>(options.batch_size));
    values.add("ranks_per_trial", options.ranks_per_trial);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      values.add("configuration " + std::to_string(i), exact_text(rows[i].params));
    }
    world.check_same_values("tune::ablation", values.values());
  }
  const std::size_t repeats = options.repeats;
  const Suggest suggest = [&](std::size_t first_id, std::size_t count,
                              const std::vector<TrialResult>&) {
    std::vector<Config> configs;
    for (std::size_t id = first_id; id < first_id + count; ++id) {
      configs.push_back({rows[id / repeats].params, options.seed + id % repeats});
    }
    return configs;
  };
  const Group group = make_group(options.ranks_per_trial);
  Results trials(execute(fn, rows.size() * repeats, suggest, Scheduler{}, options.mode,
                         options.batch_size, world, group),
                 options.mode);
  for (std::size_t c = 0; c < rows.size(); ++c) {
    AblationRow& row = rows[c];
    double sum = 0.0;
    for (std::size_t r = 0; r < repeats; ++r) {
      const TrialResult& t = trials[c * repeats + r];
      if (t.status == Status::ok) {
        sum += t.score;
        ++row.n_ok;
      } else if (row.status == Status::ok) {
        row.status = Status::failed;
        row.message = t.message;
      }
    }
    if (row.n_ok > 0) row.score = sum / static_cast<double>(row.n_ok);
    row.difference = row.score - rows[0].score;
  }
  return AblationResults(std::move(rows), std::move(trials));
}

}  // namespace detail

/// A leave-one-component-out study whose trials are spread over the ranks of `exec`.
template <class TrainFn, exec::ExecutionPolicy Exec>
AblationResults ablation(TrainFn&& train_fn, const std::vector<Component>& components,
                         const AblationOptions& options, const Exec& exec) {
  detail::check_train_fn<TrainFn>();
  return detail::run_ablation(
      detail::TrainFunction(std::ref(train_fn)), components, options, exec,
      [&](int k) { return detail::split_groups(exec, k); }, Exec::is_distributed);
}

/// A leave-one-component-out study in this process.
template <class TrainFn>
AblationResults ablation(TrainFn&& train_fn, const std::vector<Component>& components,
                         const AblationOptions& options = {}) {
  return ablation(std::forward<TrainFn>(train_fn), components, options, exec::local{});
}

}  // namespace onelearn::tune
