// tune: one training function for single runs, searches (grid, random, TPE), early stopping
// (median rule, ASHA) and ablations. Expected values are derived by hand in the comments, or
// are properties (bounds, determinism) that a wrong implementation breaks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "onelearn/linear_model/ridge.hpp"
#include "onelearn/tune/ablation.hpp"
#include "onelearn/tune/run.hpp"
#include "support.hpp"

using namespace onelearn;
using tune::ParamList;
using tune::Report;
using tune::Status;
using tune::TrialResult;

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A finished trial with these reports, for the scheduler tests.
TrialResult finished(std::size_t id, Status status, std::vector<Report> reports) {
  TrialResult t;
  t.trial_id = id;
  t.status = status;
  t.reports = std::move(reports);
  t.score = t.reports.back().score;
  return t;
}

/// Scripted training: reports a·step at steps 1..4 and returns a·4.
double linear_reports(const tune::Trial& trial, tune::Reporter& reporter) {
  const double a = trial.get<double>("a");
  for (std::int64_t step = 1; step <= 4; ++step) reporter.report(step, a * static_cast<double>(step));
  return a * 4;
}

std::vector<Status> statuses(const tune::Results& r) {
  std::vector<Status> out;
  for (const auto& t : r.trials()) out.push_back(t.status);
  return out;
}
std::vector<double> scores(const tune::Results& r) {
  std::vector<double> out;
  for (const auto& t : r.trials()) out.push_back(t.score);
  return out;
}
std::vector<std::size_t> report_counts(const tune::Results& r) {
  std::vector<std::size_t> out;
  for (const auto& t : r.trials()) out.push_back(t.reports.size());
  return out;
}

double constant_score(const tune::Trial&, tune::Reporter&) { return 1.0; }

}  // namespace

TEST_CASE("A Trial gives typed access to its parameters and a Reporter records, stops, checks") {
  const tune::Trial trial({{"C", std::int64_t{3}}, {"tol", 1e-4}, {"n", 5.0}, {"solver", "saga"},
                           {"fit_intercept", false}},
                          7, 42);
  CHECK(trial.get<double>("C") == 3.0);  // an integer read as a double
  CHECK(trial.get<int>("n") == 5);        // an integral double read as an int
  CHECK(trial.get<double>("tol") == 1e-4);
  CHECK(trial.get<std::string>("solver") == "saga");
  CHECK_FALSE(trial.get<bool>("fit_intercept"));
  CHECK(trial.id() == 7);
  CHECK(trial.seed() == 42);
  CHECK(trial.has("tol"));
  CHECK_FALSE(trial.has("alpha"));
  CHECK_THROWS_WITH_AS((void)trial.get<double>("alpha"),
                       doctest::Contains("unknown parameter 'alpha'; expected one of: C, tol, n"),
                       onelearn::invalid_argument);
  CHECK_THROWS_AS((void)trial.get<double>("solver"), onelearn::invalid_argument);
  CHECK_THROWS_AS((void)trial.get<int>("tol"), onelearn::invalid_argument);  // not integral
  CHECK_NOTHROW((void)trial.exec<exec::local>());
  CHECK_THROWS_AS((void)trial.exec<int>(), onelearn::invalid_argument);

  tune::Reporter never;
  never.report(1, 0.5);
  never.report(3, 0.25);
  CHECK(never.reports() == std::vector<Report>{{1, 0.5}, {3, 0.25}});
  CHECK_THROWS_AS(never.report(3, 0.1), onelearn::invalid_argument);  // step does not increase
  CHECK_THROWS_AS(never.report(4, std::nan("")), onelearn::invalid_argument);

  tune::Reporter stopping([](const std::vector<Report>& r) { return r.back().step >= 2; });
  stopping.report(1, 0.5);
  bool escaped_std_catch = false;
  try {
    try {
      stopping.report(2, 0.75);
    } catch (const std::exception&) {  // a training function's own handler must not see it
    }
  } catch (const tune::trial_stopped& stop) {
    escaped_std_catch = stop.step == 2 && stop.score == 0.75;
  }
  CHECK(escaped_std_catch);
}

TEST_CASE("run_once calls the training function as a search would, and as a direct call") {
  auto train = [](const tune::Trial& trial, tune::Reporter& reporter) {
    reporter.report(1, trial.get<double>("x"));
    return 2.0 * trial.get<double>("x") + static_cast<double>(trial.seed());
  };
  CHECK(tune::run_once(train, {{"x", 1.5}}) == 3.0);
  CHECK(tune::run_once(train, {{"x", 1.5}}, exec::local{}, 10) == 13.0);
  tune::Reporter reporter;
  CHECK(train(tune::Trial({{"x", 1.5}}), reporter) == 3.0);
  CHECK_THROWS_AS(tune::run_once(train, {{"y", 1.0}}), onelearn::invalid_argument);
}

TEST_CASE("Bad search spaces, options and ablations are typed errors that name the problem") {
  const tune::Space good{{"x", tune::uniform{0, 1}}};
  CHECK_THROWS_WITH_AS(tune::run(constant_score, tune::Space{}),
                       doctest::Contains("expected a search space with at least one parameter"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      tune::run(constant_score, tune::Space{{"x", tune::uniform{0, 1}}, {"x", tune::integer{0, 1}}}),
      doctest::Contains("'x' twice"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(tune::run(constant_score, tune::Space{{"lr", tune::uniform{1, 1}}}),
                       doctest::Contains("parameter 'lr'"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(tune::run(constant_score, tune::Space{{"lr", tune::uniform{0, INFINITY}}}),
                       doctest::Contains("parameter 'lr'"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(tune::run(constant_score, tune::Space{{"C", tune::log_uniform{0, 1}}}),
                       doctest::Contains("log_uniform bounds > 0"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(tune::run(constant_score, tune::Space{{"k", tune::integer{3, 2}}}),
                       doctest::Contains("parameter 'k'"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(tune::run(constant_score, tune::Space{{"s", tune::choice{}}}),
                       doctest::Contains("parameter 's'"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(tune::run(constant_score, tune::Space{{"k", tune::integer{0, 2}},
                                                             {"x", tune::uniform{0, 1}}},
                                 {.searcher = tune::Search::grid}),
                       doctest::Contains("parameter 'x': expected a choice or an integer range"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(tune::run(constant_score, good, {.n_trials = 0}),
                       doctest::Contains("n_trials"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(tune::run(constant_score, good, {.ranks_per_trial = 2}),
                       doctest::Contains("ranks_per_trial"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(tune::run(constant_score, good, {.scheduler = tune::ASHA{.reduction_factor = 1}}),
                       doctest::Contains("reduction_factor"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(tune::run(constant_score, good, {.scheduler = tune::ASHA{.grace_period = 0}}),
                       doctest::Contains("grace_period"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      tune::run(constant_score, good,
                {.scheduler = tune::MedianStoppingRule{.min_samples_required = 0}}),
      doctest::Contains("min_samples_required"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(tune::run(constant_score, good,
                                 {.searcher = tune::Search::tpe, .tpe = {.gamma = 1.0}}),
                       doctest::Contains("gamma"), onelearn::invalid_argument);

  CHECK_THROWS_WITH_AS(tune::ablation(constant_score, {}), doctest::Contains("at least one component"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(tune::ablation(constant_score, {{"a"}, {"a"}}), doctest::Contains("'a' twice"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(tune::ablation(constant_score, {{"a", true, {}}}),
                       doctest::Contains("component 'a'"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(tune::ablation(constant_score, {{"a"}}, {.repeats = 0}),
                       doctest::Contains("repeats"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(tune::ablation(constant_score, {{"a"}}, {.fixed = {{"a", 1.0}}}),
                       doctest::Contains("fixed parameter 'a'"), onelearn::invalid_argument);

  const tune::Results none(std::vector<TrialResult>{finished(0, Status::stopped, {{1, 1.0}})},
                           tune::Mode::max);
  CHECK_THROWS_WITH_AS((void)none.best(), doctest::Contains("0 failed, 1 stopped"),
                       onelearn::invalid_argument);
}

TEST_CASE("Grid search runs exactly the product of the values, last parameter fastest") {
  const tune::Space space{{"a", tune::choice{{std::int64_t{1}, std::int64_t{2}}}},
                          {"b", tune::choice{{"x", "y", "z"}}},
                          {"c", tune::integer{0, 1}}};
  auto train = [](const tune::Trial& t, tune::Reporter&) {
    return static_cast<double>(t.get<int>("a") * 100 + t.get<int>("c")) +
           (t.get<std::string>("b") == "y" ? 10.0 : 0.0);
  };
  // n_trials is ignored by a grid search.
  const tune::Results r = tune::run(train, space, {.searcher = tune::Search::grid, .n_trials = 1, .seed = 5});
  REQUIRE(r.size() == 12);
  std::size_t i = 0;
  for (std::int64_t a : {1, 2}) {
    for (const char* b : {"x", "y", "z"}) {
      for (std::int64_t c : {0, 1}) {
        CAPTURE(i);
        const TrialResult& t = r[i];
        CHECK(t.trial_id == i);
        CHECK(t.seed == 5 + i);
        CHECK(t.params == ParamList{{"a", a}, {"b", b}, {"c", c}});
        CHECK(t.status == Status::ok);
        ++i;
      }
    }
  }
  // Best: a=2, b="y", c=1 -> 211: trial (1·3 + 1)·2 + 1 = 9.
  CHECK(r.best().trial_id == 9);
  CHECK(r.best().score == 211.0);
  const tune::Results low = tune::run(train, space, {.mode = tune::Mode::min, .searcher = tune::Search::grid});
  CHECK(low.best().trial_id == 0);  // a=1, b="x", c=0 -> 100
}

TEST_CASE("Random and TPE searches are deterministic for a seed and respect the distributions") {
  const tune::Space space{{"u", tune::uniform{-2.0, 3.0}},
                          {"lu", tune::log_uniform{1e-4, 1.0}},
                          {"k", tune::integer{0, 3}},
                          {"s", tune::choice{{"p", "q", std::int64_t{7}}}}};
  // The score favours small u, lu near 1e-2 and k = 3, so TPE has something to model.
  auto train = [](const tune::Trial& t, tune::Reporter&) {
    return -t.get<double>("u") - std::abs(std::log10(t.get<double>("lu")) + 2) +
           t.get<double>("k");
  };
  for (const tune::Search searcher : {tune::Search::random, tune::Search::tpe}) {
    CAPTURE(static_cast<int>(searcher));
    const tune::RunOptions options{.searcher = searcher, .n_trials = 200, .seed = 11};
    const tune::Results a = tune::run(train, space, options);
    const tune::Results b = tune::run(train, space, options);
    CHECK(a.same_outcomes(b));
    tune::RunOptions other = options;
    other.seed = 12;
    const tune::Results c = tune::run(train, space, other);
    CHECK(c.trials()[0].params != a.trials()[0].params);

    std::size_t below_geometric_mean = 0;  // lu < 1e-2: half of the draws in log space
    std::vector<int> k_seen(4, 0);
    bool in_bounds = true;
    for (const TrialResult& t : a.trials()) {
      const auto& p = t.params;
      REQUIRE(p.size() == 4);
      const double u = std::get<double>(p[0].second);
      const double lu = std::get<double>(p[1].second);
      REQUIRE(std::holds_alternative<std::int64_t>(p[2].second));  // integral by type
      const std::int64_t k = std::get<std::int64_t>(p[2].second);
      in_bounds = in_bounds && u >= -2.0 && u < 3.0 && lu >= 1e-4 && lu < 1.0 && k >= 0 && k <= 3;
      in_bounds = in_bounds && (p[3].second == ParamValue("p") || p[3].second == ParamValue("q") ||
                                p[3].second == ParamValue(std::int64_t{7}));
      if (lu < 1e-2) ++below_geometric_mean;
      if (k >= 0 && k <= 3) ++k_seen[static_cast<std::size_t>(k)];
    }
    CHECK(in_bounds);
    for (int count : k_seen) CHECK(count > 0);  // both ends of the integer range are drawn
    if (searcher == tune::Search::random) {
      // Uniform in log space: about 100 of 200 below 1e-2 (a linear draw would give about 2).
      CHECK(below_geometric_mean >= 80);
      CHECK(below_geometric_mean <= 120);
    }
  }
}

TEST_CASE("TPE finds a better optimum than random search on a 2-D quadratic, same budget") {
  // Minimise (x - 1)² + (y + 2)² over [-5, 5]²: 40 trials, seeds 0..9, mean best value.
  const tune::Space space{{"x", tune::uniform{-5, 5}}, {"y", tune::uniform{-5, 5}}};
  auto quadratic = [](const tune::Trial& t, tune::Reporter&) {
    const double x = t.get<double>("x");
    const double y = t.get<double>("y");
    return (x - 1) * (x - 1) + (y + 2) * (y + 2);
  };
  double random_mean = 0.0;
  double tpe_mean = 0.0;
  const int seeds = 10;
  for (int seed = 0; seed < seeds; ++seed) {
    tune::RunOptions options{.mode = tune::Mode::min, .n_trials = 40,
                             .seed = static_cast<std::uint64_t>(seed)};
    random_mean += tune::run(quadratic, space, options).best().score / seeds;
    options.searcher = tune::Search::tpe;
    tpe_mean += tune::run(quadratic, space, options).best().score / seeds;
  }
  MESSAGE("mean best of 40 trials over 10 seeds: random ", random_mean, ", TPE ", tpe_mean);
  CHECK(tpe_mean < random_mean);
}

TEST_CASE("Median stopping rule: decisions on scripted reports, by hand") {
  using tune::detail::median_rule_stops;
  const tune::MedianStoppingRule rule{.grace_period = 1, .min_samples_required = 3};
  // Running means at step 1: 1, 2, 0 (median 1); at step 2: 1.5, 2.5, 0.5 (median 1.5).
  std::vector<TrialResult> history{finished(0, Status::ok, {{1, 1}, {2, 2}, {3, 3}}),
                                   finished(1, Status::ok, {{1, 2}, {2, 3}, {3, 4}}),
                                   finished(2, Status::ok, {{1, 0}, {2, 1}, {3, 2}})};
  const auto max = tune::Mode::max;
  CHECK(median_rule_stops(rule, history, {{1, 0.6}}, max));        // 0.6 < 1
  CHECK_FALSE(median_rule_stops(rule, history, {{1, 1.0}}, max));  // not strictly worse
  CHECK(median_rule_stops(rule, history, {{1, 1.0}, {2, 1.4}}, max));  // best 1.4 < 1.5
  CHECK_FALSE(median_rule_stops(rule, history, {{1, 1.6}, {2, 1.4}}, max));  // best 1.6
  // Grace period and too few completed trials.
  CHECK_FALSE(median_rule_stops({.grace_period = 2}, history, {{1, 0.6}}, max));
  CHECK_FALSE(median_rule_stops({.min_samples_required = 4}, history, {{1, 0.6}}, max));
  // Stopped and failed trials are not completed: with them the median at step 1 would be 1.5.
  history.push_back(finished(3, Status::stopped, {{1, 100}}));
  history.push_back(finished(4, Status::failed, {{1, 50}}));
  CHECK_FALSE(median_rule_stops(rule, history, {{1, 1.2}}, max));
  // Mode::min: negated scores; median of -1, -2, 0 is -1, so a trial at 1.2 (-1.2) stops.
  CHECK(median_rule_stops(rule, history, {{1, 1.2}}, tune::Mode::min));
  CHECK_FALSE(median_rule_stops(rule, history, {{1, 0.9}}, tune::Mode::min));
}

TEST_CASE("ASHA: decisions on scripted reports, by hand") {
  using tune::detail::asha_stops;
  const tune::ASHA asha{.grace_period = 1, .reduction_factor = 3};  // rungs at 1, 3, 9
  const std::vector<TrialResult> history{finished(0, Status::ok, {{1, 0.5}, {3, 0.9}}),
                                         finished(1, Status::ok, {{1, 0.2}, {3, 0.4}}),
                                         finished(2, Status::stopped, {{1, 0.8}})};
  const auto max = tune::Mode::max;
  // Rung 1 scores {0.2, 0.5, 0.8}: 2/3 quantile at position 4/3 -> 0.5 + 0.3/3 = 0.6.
  CHECK(asha_stops(asha, history, {{1, 0.55}}, max));
  CHECK_FALSE(asha_stops(asha, history, {{1, 0.7}}, max));
  // Step 2 reaches no new rung: never stopped there.
  CHECK_FALSE(asha_stops(asha, history, {{1, 0.7}, {2, 0.0}}, max));
  // Rung 3 scores {0.4, 0.9} (trial 2 never got there): 2/3 quantile 0.4 + 0.5·2/3 = 0.7333.
  CHECK(asha_stops(asha, history, {{1, 0.7}, {2, 0.0}, {3, 0.7}}, max));
  CHECK_FALSE(asha_stops(asha, history, {{1, 0.7}, {2, 0.0}, {3, 0.75}}, max));
  // A report jumping from step 1 to 4 reaches rung 3 there.
  CHECK(asha_stops(asha, history, {{1, 0.7}, {4, 0.7}}, max));
  // No history at a rung: continue.
  CHECK_FALSE(asha_stops(asha, {}, {{1, -100.0}}, max));
  // Mode::min: rung 1 scores negated {-0.8, -0.5, -0.2}: cutoff -0.5 + 0.3/3 = -0.4, so a
  // score of 0.45 (-0.45) stops and 0.35 continues.
  CHECK(asha_stops(asha, history, {{1, 0.45}}, tune::Mode::min));
  CHECK_FALSE(asha_stops(asha, history, {{1, 0.35}}, tune::Mode::min));
}

TEST_CASE("Schedulers in a search stop the trials they should, with their last scores") {
  // Trials reports a·step at steps 1..4 for a = 3, 2, 1, 0.5, 2.5 (a grid, in this order).
  const tune::Space space{{"a", tune::choice{{3.0, 2.0, 1.0, 0.5, 2.5}}}};
  tune::RunOptions options{.searcher = tune::Search::grid,
                           .scheduler = tune::MedianStoppingRule{.grace_period = 1,
                                                                 .min_samples_required = 2}};
  SUBCASE("median rule, one trial at a time") {
    // Trials 0, 1: fewer than 2 completed before them. Trial 2 (a=1): at step 1 the running
    // means of trials 0, 1 are 3, 2 (median 2.5) and 1 < 2.5. Trial 3 likewise (0.5). Trial 4
    // (a=2.5): step 1: 2.5 is not < 2.5; step 2: 5 vs median(4.5, 3) = 3.75; step 3: 7.5 vs 5;
    // step 4: 10 vs 6.25: it completes.
    const tune::Results r = tune::run(linear_reports, space, options);
    CHECK(statuses(r) == std::vector{Status::ok, Status::ok, Status::stopped, Status::stopped, Status::ok});
    CHECK(scores(r) == std::vector{12.0, 8.0, 1.0, 0.5, 10.0});
    CHECK(report_counts(r) == std::vector<std::size_t>{4, 4, 1, 1, 4});
  }
  SUBCASE("median rule, all five trials in one batch: no history, nothing stops") {
    options.batch_size = 5;
    const tune::Results r = tune::run(linear_reports, space, options);
    CHECK(statuses(r) == std::vector(5, Status::ok));
  }
  SUBCASE("ASHA, eta 2") {
    // Rungs at 1, 2, 4. Trial 1 (a=2) at rung 1: cutoff median{3} = 3, stop. Trial 2: median
    // {3, 2} = 2.5 > 1, stop. Trial 3: median {3, 2, 1} = 2 > 0.5, stop. Trial 4: rung 1
    // median {3, 2, 1, 0.5} = 1.5 <= 2.5, continue; rung 2: only trial 0 got there (6), 5 < 6,
    // stop at step 2 with score 5.
    options.scheduler = tune::ASHA{.grace_period = 1, .reduction_factor = 2};
    const tune::Results r = tune::run(linear_reports, space, options);
    CHECK(statuses(r) == std::vector{Status::ok, Status::stopped, Status::stopped, Status::stopped,
                                     Status::stopped});
    CHECK(scores(r) == std::vector{12.0, 2.0, 1.0, 0.5, 5.0});
    CHECK(report_counts(r) == std::vector<std::size_t>{4, 1, 1, 1, 2});
    CHECK(r.best().trial_id == 0);
  }
}

TEST_CASE("A trial that throws is recorded as failed with its message and the search goes on") {
  auto train = [](const tune::Trial& t, tune::Reporter& reporter) -> double {
    reporter.report(1, 0.5);
    switch (t.id()) {
      case 1: throw std::runtime_error("diverged at epoch 3");
      case 2: return t.get<double>("no_such_param");
      case 3: throw 42;
      case 4: return std::nan("");
      default: return static_cast<double>(t.id());
    }
  };
  const tune::Results r = tune::run(train, tune::Space{{"x", tune::uniform{0, 1}}}, {.n_trials = 6});
  REQUIRE(r.size() == 6);
  CHECK(statuses(r) == std::vector{Status::ok, Status::failed, Status::failed, Status::failed,
                                   Status::failed, Status::ok});
  CHECK(r[1].message == "diverged at epoch 3");
  CHECK(r[2].message.find("unknown parameter 'no_such_param'") != std::string::npos);
  CHECK(r[3].message == "an exception not derived from std::exception");
  CHECK(r[4].message == "the training function returned NaN");
  CHECK(std::isnan(r[1].score));
  CHECK(r[1].reports.size() == 1);  // what it reported before failing is kept
  CHECK(r.best().trial_id == 5);
}

TEST_CASE("Ablation gives exactly the known contributions of the components") {
  // score = 10 + 1·a + 0.25·b + solver (x: 0, y: -0.5, z: 0.125) + offset + seed/8, so with
  // paired seeds the differences from the full configuration are exactly -1, -0.25, -0.5 and
  // 0.125, and the full score is 11.75 + mean(0, 1, 2)/8 = 11.875 (all exact in binary).
  auto train = [](const tune::Trial& t, tune::Reporter&) {
    const std::string solver = t.get<std::string>("solver");
    const double s = solver == "x" ? 0.0 : solver == "y" ? -0.5 : 0.125;
    return 10.0 + (t.get<bool>("a") ? 1.0 : 0.0) + (t.get<bool>("b") ? 0.25 : 0.0) + s +
           t.get<double>("offset") + static_cast<double>(t.seed()) / 8;
  };
  const std::vector<tune::Component> components{{"a"}, {"b"}, {"solver", "x", {"y", "z"}}};
  const tune::AblationResults table =
      tune::ablation(train, components, {.repeats = 3, .fixed = {{"offset", 0.5}}});
  REQUIRE(table.rows().size() == 5);
  const std::vector<std::string> names{"full", "-a", "-b", "solver=y", "solver=z"};
  const std::vector<double> differences{0.0, -1.0, -0.25, -0.5, 0.125};
  for (std::size_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    CHECK(table.rows()[i].configuration == names[i]);
    CHECK(table.rows()[i].difference == differences[i]);
    CHECK(table.rows()[i].score == 11.875 + differences[i]);
    CHECK(table.rows()[i].n_ok == 3);
    CHECK(table.rows()[i].status == Status::ok);
  }
  CHECK(table.rows()[3].params ==
        ParamList{{"offset", 0.5}, {"a", true}, {"b", true}, {"solver", "y"}});
  CHECK(table.trials().size() == 15);
  CHECK(table.trials()[4].seed == 1);  // configuration 1, repeat 1

  // A configuration that fails is recorded; the others are unaffected.
  auto fragile = [&](const tune::Trial& t, tune::Reporter& r) {
    if (t.get<std::string>("solver") == "z") throw onelearn::invalid_argument("z diverges");
    return train(t, r);
  };
  const tune::AblationResults partial =
      tune::ablation(fragile, components, {.repeats = 2, .fixed = {{"offset", 0.5}}});
  CHECK(partial.rows()[4].status == Status::failed);
  CHECK(partial.rows()[4].message == "z diverges");
  CHECK(std::isnan(partial.rows()[4].score));
  CHECK(partial.rows()[1].difference == -1.0);

  const auto csv = table.csv();
  CHECK(csv.substr(0, csv.find('\n')) ==
        "configuration,component,value,score,difference,n_ok,status,message");
  CHECK(csv.find("\nsolver=z,solver,z,12,0.125,3,ok,\n") != std::string::npos);
}

TEST_CASE("Result tables are written as CSV and JSON through a temporary file") {
  const auto dir = std::filesystem::temp_directory_path() / "onelearn_test_tune";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto train = [](const tune::Trial& t, tune::Reporter& reporter) -> double {
    reporter.report(1, 0.5);
    if (t.get<std::string>("s") == "b,\"c\"") throw std::runtime_error("bad, \"quoted\"");
    return 0.25;
  };
  const tune::Results r = tune::run(
      train, tune::Space{{"s", tune::choice{{"a", "b,\"c\""}}}, {"k", tune::integer{1, 1}}},
      {.searcher = tune::Search::grid});
  r.to_csv(dir / "r.csv");
  r.to_json(dir / "r.json");
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  CHECK(files == 2);  // no temporary file left behind

  std::istringstream csv(slurp(dir / "r.csv"));
  std::string header, row0, row1;
  std::getline(csv, header);
  std::getline(csv, row0);
  std::getline(csv, row1);
  CHECK(header == "trial_id,status,score,s,k,n_reports,seconds,message");
  CHECK(row0.substr(0, row0.find(",1,1,") + 5) == "0,ok,0.25,a,1,1,");
  CHECK(row1.substr(0, row1.find(",1,1,") + 5) == "1,failed,,\"b,\"\"c\"\"\",1,1,");
  CHECK(row1.substr(row1.rfind(",\"bad")) == ",\"bad, \"\"quoted\"\"\"");

  const nlohmann::json json = nlohmann::json::parse(slurp(dir / "r.json"));
  CHECK(json["mode"] == "max");
  REQUIRE(json["trials"].size() == 2);
  CHECK(json["trials"][0]["score"] == 0.25);
  CHECK(json["trials"][0]["params"]["k"] == 1);
  CHECK(json["trials"][0]["reports"][0][1] == 0.5);
  CHECK(json["trials"][1]["status"] == "failed");
  CHECK(json["trials"][1]["score"].is_null());
  CHECK(json["trials"][1]["params"]["s"] == "b,\"c\"");
  CHECK(json["trials"][1]["message"] == "bad, \"quoted\"");

  CHECK_THROWS_AS(r.to_csv(dir / "missing_dir" / "r.csv"), onelearn::io_error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("A real use: log-uniform search of Ridge's alpha on diabetes") {
  // Each trial scores alpha by 5-fold cross-validation on the training rows (contiguous folds,
  // scikit-learn's KFold(5) without shuffling: the first 331 % 5 = 1 fold has one row more).
  // The best alpha is refitted on all training rows and compared on the test rows with
  // alpha = 1 (scikit-learn's default), both computed here.
  const auto data = test::load_split<double>("diabetes");
  const Eigen::Index n = data.X_train.rows();
  auto train = [&](const tune::Trial& trial, tune::Reporter& reporter) {
    double sum = 0.0;
    Eigen::Index begin = 0;
    for (Eigen::Index fold = 0; fold < 5; ++fold) {
      const Eigen::Index size = n / 5 + (fold < n % 5 ? 1 : 0);
      Matrix<double> X(n - size, data.X_train.cols());
      Vector<double> y(n - size);
      X << data.X_train.topRows(begin), data.X_train.bottomRows(n - begin - size);
      y << data.y_train.head(begin), data.y_train.tail(n - begin - size);
      linear_model::Ridge<double> ridge({.alpha = trial.get<double>("alpha")});
      ridge.fit(X, y);
      sum += ridge.score(data.X_train.middleRows(begin, size), data.y_train.segment(begin, size));
      reporter.report(fold + 1, sum / static_cast<double>(fold + 1));
      begin += size;
    }
    return sum / 5;
  };
  // scikit-learn 1.2.1: cross_val_score(Ridge(alpha=a), X_train, y_train, cv=5).mean()
  // for a = 0.1 and 1: 0.5175353422781701, 0.4261957163917546.
  CHECK(tune::run_once(train, {{"alpha", 0.1}}) == doctest::Approx(0.5175353422781701).epsilon(1e-10));
  CHECK(tune::run_once(train, {{"alpha", 1.0}}) == doctest::Approx(0.4261957163917546).epsilon(1e-10));

  const tune::Results r = tune::run(train, tune::Space{{"alpha", tune::log_uniform{1e-4, 1e2}}},
                                    {.n_trials = 20, .seed = 3});
  const double best_alpha = std::get<double>(r.best().params[0].second);
  auto test_r2 = [&](double alpha) {
    linear_model::Ridge<double> ridge({.alpha = alpha});
    ridge.fit(data.X_train, data.y_train);
    return ridge.score(data.X_test, data.y_test);
  };
  const double best_r2 = test_r2(best_alpha);
  const double default_r2 = test_r2(1.0);
  MESSAGE("best alpha ", best_alpha, ": cross-validated R² ", r.best().score, ", test R² ",
          best_r2, "; alpha = 1: test R² ", default_r2);
  CHECK(r.best().reports.size() == 5);
  CHECK(best_alpha >= 1e-4);
  CHECK(best_alpha < 1e2);
  CHECK(best_r2 >= default_r2);
}

TEST_CASE("A search with a journal resumes without running finished trials, to the same table") {
  const auto dir = std::filesystem::temp_directory_path() / "onelearn_test_tune_journal";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // TPE with a scheduler: every proposal and every stop depends on the history, so a resumed
  // search that replayed it wrongly would propose or stop other trials.
  const tune::Space space{{"x", tune::uniform{-2.0, 2.0}}, {"y", tune::log_uniform{0.1, 10.0}}};
  std::size_t calls = 0;
  const auto journal = dir / "search.journal";
  auto train = [&](const tune::Trial& t, tune::Reporter& reporter) -> double {
    ++calls;
    // An "interruption" after six trials: keep the journal as it was then.
    if (t.id() == 6) std::filesystem::copy_file(journal, dir / "after6.journal");
    if (t.id() == 3) throw std::runtime_error("trial 3 fails");
    const double x = t.get<double>("x"), y = t.get<double>("y");
    double score = 0;
    for (int step = 1; step <= 4; ++step) {
      score = -(x - 0.3) * (x - 0.3) - std::log(y) * std::log(y) * step / 4.0 + 0.01 * step;
      reporter.report(step, score);
    }
    return score;
  };
  const tune::RunOptions options{.searcher = tune::Search::tpe,
                                 .n_trials = 14,
                                 .seed = 5,
                                 .tpe = {.n_startup_trials = 4},
                                 .scheduler = tune::MedianStoppingRule{.grace_period = 2, .min_samples_required = 3},
                                 .journal = journal};
  const tune::Results straight = tune::run(train, space, options);
  CHECK(calls == 14);

  std::filesystem::rename(dir / "after6.journal", journal);
  calls = 0;
  const tune::Results resumed = tune::run(train, space, options);
  CHECK(calls == 8);  // trials 6..13 only
  REQUIRE(resumed.trials().size() == straight.trials().size());
  for (std::size_t i = 0; i < straight.trials().size(); ++i) {
    const TrialResult& a = straight.trials()[i];
    const TrialResult& b = resumed.trials()[i];
    CAPTURE(i);
    CHECK(a.params == b.params);
    CHECK(a.status == b.status);
    CHECK(a.message == b.message);
    CHECK(a.reports.size() == b.reports.size());
    CHECK((a.score == b.score || (std::isnan(a.score) && std::isnan(b.score))));
    if (i < 6) CHECK(a.seconds == b.seconds);  // read back, not run again
  }
  const std::vector<Status> status = statuses(straight);
  CHECK(std::count(status.begin(), status.end(), Status::stopped) > 0);  // the scheduler acted
  CHECK(std::count(status.begin(), status.end(), Status::failed) == 1);

  // A journal of another search, or a damaged one, is refused.
  tune::RunOptions other = options;
  other.seed = 6;
  CHECK_THROWS_WITH_AS((void)tune::run(train, space, other),
                       doctest::Contains("expected the journal of this search"), invalid_argument);
  const std::string bytes = slurp(journal);
  std::ofstream(journal, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 20);
  CHECK_THROWS_AS((void)tune::run(train, space, options), io_error);
  std::ofstream(journal, std::ios::binary | std::ios::trunc) << "not a journal";
  CHECK_THROWS_WITH_AS((void)tune::run(train, space, options),
                       doctest::Contains("expected a tune journal"), io_error);
  std::filesystem::remove_all(dir);
}
