// The logging hook (core/log.hpp) and the verbose progress lines of the searches, tune::run,
// KMeans, LogisticRegression and the SGD estimators: with verbose = 1 each prints the lines its
// documentation promises, counted from the fitted attributes and matched by shape; with the
// default verbose = 0 nothing reaches the sink.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <iostream>
#include <limits>
#include <mutex>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/cluster/k_means.hpp"
#include "onelearn/core/detail/progress.hpp"
#include "onelearn/core/log.hpp"
#include "onelearn/linear_model/logistic_regression.hpp"
#include "onelearn/linear_model/ridge.hpp"
#include "onelearn/linear_model/sgd_classifier.hpp"
#include "onelearn/linear_model/sgd_regressor.hpp"
#include "onelearn/model_selection/grid_search_cv.hpp"
#include "onelearn/model_selection/halving_grid_search_cv.hpp"
#include "onelearn/model_selection/randomized_search_cv.hpp"
#include "onelearn/tune/run.hpp"

using namespace onelearn;

namespace {

/// Collects every message for the lifetime of the object (and puts the previous sink back).
struct Capture {
  std::vector<std::string> lines;
  std::vector<LogLevel> levels;
  ScopedLogSink sink{[this](LogLevel level, std::string_view message) {
    lines.emplace_back(message);
    levels.push_back(level);
  }};
};

/// The timing every progress line ends with.
const std::string duration = R"((\d+\.\d\ds|\d+\.\ds|\d+m\d\ds|\d+h\d\dm))";
const std::string estimate = "; elapsed " + duration + ", remaining ~" + duration + "$";
const std::string bound = "; elapsed " + duration + ", remaining <= " + duration + "$";
const std::string number = R"([-+0-9.e]+|nan|inf)";

std::size_t count_matching(const std::vector<std::string>& lines, const std::string& pattern) {
  const std::regex re(pattern);
  std::size_t n = 0;
  for (const std::string& line : lines) n += std::regex_search(line, re) ? 1 : 0;
  return n;
}

/// Three blobs in two dimensions, 12 rows each, from a fixed seed.
struct Blobs {
  Matrix<double> X{36, 2};
  Labels y{36};
  Vector<double> target{36};
  Blobs() {
    std::mt19937_64 engine(7);
    std::normal_distribution<double> noise(0.0, 0.5);
    const double centres[3][2] = {{0, 0}, {5, 5}, {0, 6}};
    for (index_t i = 0; i < 36; ++i) {
      const auto c = static_cast<std::size_t>(i % 3);
      X(i, 0) = centres[c][0] + noise(engine);
      X(i, 1) = centres[c][1] + noise(engine);
      y(i) = static_cast<std::int64_t>(c);
      target(i) = 2 * X(i, 0) - X(i, 1) + noise(engine);
    }
  }
};

/// A policy whose rank is not 0: everything ProgressLog looks at.
struct NotRankZero {
  [[nodiscard]] int rank() const noexcept { return 1; }
};

}  // namespace

TEST_CASE("set_log_sink routes messages, returns the previous sink, and {} restores stderr") {
  std::vector<std::string> first, second;
  LogSink previous = set_log_sink([&](LogLevel, std::string_view m) { first.emplace_back(m); });
  log_message(LogLevel::info, "one");
  LogSink mine = set_log_sink([&](LogLevel, std::string_view m) { second.emplace_back(m); });
  log_message(LogLevel::warning, "two");
  CHECK(first == std::vector<std::string>{"one"});
  CHECK(second == std::vector<std::string>{"two"});
  REQUIRE(mine);  // the first sink came back
  mine(LogLevel::info, "direct");
  CHECK(first.back() == "direct");

  // The default: "onelearn: " and the message on std::cerr, the level named unless info.
  set_log_sink({});
  std::ostringstream err;
  std::streambuf* const saved = std::cerr.rdbuf(err.rdbuf());
  log_message(LogLevel::info, "to stderr");
  log_message(LogLevel::warning, "careful");
  std::cerr.rdbuf(saved);
  CHECK(err.str() == "onelearn: to stderr\nonelearn: warning: careful\n");
  set_log_sink(previous);

  CHECK(to_string(LogLevel::debug) == "debug");
  CHECK(to_string(LogLevel::error) == "error");
}

TEST_CASE("ScopedLogSink puts the previous sink back") {
  std::vector<std::string> outer;
  const ScopedLogSink keep([&](LogLevel, std::string_view m) { outer.emplace_back(m); });
  {
    Capture inner;
    log_message(LogLevel::info, "inner");
    CHECK(inner.lines == std::vector<std::string>{"inner"});
  }
  log_message(LogLevel::info, "outer");
  CHECK(outer == std::vector<std::string>{"outer"});
}

TEST_CASE("log_message and set_log_sink from several threads lose no message") {
  std::mutex mutex;
  std::size_t a = 0;
  std::size_t b = 0;
  const LogSink count_a = [&](LogLevel, std::string_view) {
    const std::lock_guard<std::mutex> lock(mutex);
    ++a;
  };
  const LogSink count_b = [&](LogLevel, std::string_view) {
    const std::lock_guard<std::mutex> lock(mutex);
    ++b;
  };
  const LogSink previous = set_log_sink(count_a);
  constexpr int threads = 4;
  constexpr int messages = 2000;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([] {
      for (int i = 0; i < messages; ++i) log_message(LogLevel::debug, "tick");
    });
  }
  // Swapping sinks meanwhile: each message goes to exactly one of them.
  for (int i = 0; i < 200; ++i) set_log_sink(i % 2 == 0 ? count_b : count_a);
  for (std::thread& t : pool) t.join();
  set_log_sink(previous);
  CHECK(a + b == static_cast<std::size_t>(threads * messages));
}

TEST_CASE("the elapsed/remaining helper") {
  using onelearn::detail::format_duration;
  CHECK(format_duration(0) == "0.00s");
  CHECK(format_duration(3.456) == "3.46s");
  CHECK(format_duration(42.13) == "42.1s");
  CHECK(format_duration(125) == "2m05s");
  CHECK(format_duration(3 * 3600 + 5 * 60) == "3h05m");
  CHECK(format_duration(-1) == "?");
  CHECK(format_duration(std::numeric_limits<double>::infinity()) == "?");
  CHECK(onelearn::detail::format_quantity(0.93654433785) == "0.936544");

  const onelearn::detail::ProgressLog on("Test", 1, exec::local{});
  CHECK(on.enabled());
  CHECK(std::regex_match(on.timing(0, 10), std::regex("elapsed " + duration + ", remaining \\?")));
  CHECK(std::regex_match(on.timing(5, 10),
                         std::regex("elapsed " + duration + ", remaining ~" + duration)));
  CHECK(std::regex_match(on.timing(5, 10, onelearn::detail::Remaining::at_most),
                         std::regex("elapsed " + duration + ", remaining <= " + duration)));
  // Quiet below verbose 1 and on every rank but 0.
  CHECK_FALSE(onelearn::detail::ProgressLog("Test", 0, exec::local{}).enabled());
  CHECK_FALSE(onelearn::detail::ProgressLog("Test", 2, NotRankZero{}).enabled());
  Capture capture;
  on.step("half way", 5, 10);
  onelearn::detail::ProgressLog("Test", 1, NotRankZero{}).note("never");
  REQUIRE(capture.lines.size() == 1);
  CHECK(std::regex_match(capture.lines[0], std::regex("Test: half way" + estimate)));
  CHECK(capture.levels[0] == LogLevel::info);
}

TEST_CASE("verbose is a parameter, but not one the ranks must agree on") {
  cluster::KMeans<double> km({.n_clusters = 2, .verbose = 1});
  CHECK(std::get<std::int64_t>(km.get_param("verbose")) == 1);
  km.set_params({{"verbose", std::int64_t{0}}});
  CHECK(km.get_params().verbose == 0);
  onelearn::detail::NamedValues values;
  values.add_params("", linear_model::LogisticRegressionParams{.verbose = 1});
  for (const exec::NamedValue& v : values.values()) CHECK(v.name != "verbose");
  CHECK(values.values().size() == linear_model::LogisticRegressionParams::names.size() - 1);
}

TEST_CASE("verbose < 0 is an error naming it") {
  const Blobs data;
  CHECK_THROWS_WITH_AS(cluster::KMeans<double>({.n_clusters = 3, .verbose = -1}).fit(data.X),
                       doctest::Contains("verbose >= 0, found -1"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      linear_model::LogisticRegression<double>({.verbose = -1}).fit(data.X, data.y),
      doctest::Contains("verbose >= 0, found -1"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(linear_model::SGDClassifier<double>({.verbose = -1}).fit(data.X, data.y),
                       doctest::Contains("verbose >= 0, found -1"), onelearn::invalid_argument);
}

TEST_CASE("KMeans verbose: a line per Lloyd iteration and one per run") {
  const Blobs data;
  {
    Capture quiet;
    cluster::KMeans<double>({.n_clusters = 3, .n_init = 2}).fit(data.X);
    CHECK(quiet.lines.empty());
  }
  Capture capture;
  cluster::KMeans<double> km(
      {.n_clusters = 3, .n_init = 1, .max_iter = 50, .random_state = 3, .verbose = 1});
  km.fit(data.X);
  const auto n_iter = static_cast<std::size_t>(km.n_iter());
  REQUIRE(capture.lines.size() == n_iter + 1);
  for (std::size_t i = 0; i < n_iter; ++i) {
    CAPTURE(capture.lines[i]);
    CHECK(std::regex_match(
        capture.lines[i],
        std::regex("KMeans: run 1/1, iteration " + std::to_string(i + 1) +
                   "/50: \\d+ labels changed, centre shift (" + number + ")" + bound)));
  }
  CHECK(std::regex_match(capture.lines.back(),
                         std::regex("KMeans: run 1/1 done: " + std::to_string(n_iter) +
                                    " iterations, inertia (" + number + ")" + estimate)));

  Capture two_runs;
  cluster::KMeans<double>({.n_clusters = 3, .n_init = 2, .verbose = 1}).fit(data.X);
  CHECK(count_matching(two_runs.lines, "^KMeans: run [12]/2 done: ") == 2);
  CHECK(count_matching(two_runs.lines, "^KMeans: run [12]/2, iteration ") ==
        two_runs.lines.size() - 2);
}

TEST_CASE("LogisticRegression verbose: a line per L-BFGS iteration, then why it stopped") {
  const Blobs data;
  {
    Capture quiet;
    linear_model::LogisticRegression<double>().fit(data.X, data.y);
    CHECK(quiet.lines.empty());
  }
  Capture capture;
  linear_model::LogisticRegression<double> lr({.max_iter = 200, .verbose = 1});
  lr.fit(data.X, data.y);
  const auto n_iter = static_cast<std::size_t>(lr.n_iter());
  REQUIRE(n_iter > 0);
  REQUIRE(capture.lines.size() == n_iter + 1);
  for (std::size_t i = 0; i < n_iter; ++i) {
    CAPTURE(capture.lines[i]);
    CHECK(std::regex_match(
        capture.lines[i],
        std::regex("LogisticRegression: iteration " + std::to_string(i + 1) + "/200: loss (" +
                   number + "), max \\|gradient\\| (" + number + ")" + bound)));
  }
  CHECK(std::regex_match(
      capture.lines.back(),
      std::regex("LogisticRegression: (converged|stopped): .* after " + std::to_string(n_iter) +
                 " iterations; elapsed " + duration + "$")));
}

TEST_CASE("SGDClassifier and SGDRegressor verbose: a line per epoch, then why it stopped") {
  const Blobs data;
  {
    Capture quiet;
    linear_model::SGDClassifier<double>().fit(data.X, data.y);
    linear_model::SGDRegressor<double>().fit(data.X, data.target);
    CHECK(quiet.lines.empty());
  }
  {
    Capture capture;
    linear_model::SGDClassifier<double> clf({.max_iter = 30, .random_state = 1, .verbose = 1});
    clf.fit(data.X, data.y);
    const auto epochs = static_cast<std::size_t>(clf.n_iter());
    REQUIRE(capture.lines.size() == epochs + 1);
    for (std::size_t e = 0; e < epochs; ++e) {
      CAPTURE(capture.lines[e]);
      CHECK(std::regex_match(
          capture.lines[e],
          std::regex("SGDClassifier: epoch " + std::to_string(e + 1) + "/30: average loss (" +
                     number + "), [0-3] of 3 problems running" + bound)));
    }
    CHECK(std::regex_match(
        capture.lines.back(),
        std::regex("SGDClassifier: (converged: .*|stopped: max_iter epochs "
                   "reached) after " +
                   std::to_string(epochs) + " epochs; elapsed " + duration + "$")));
    // partial_fit: its one epoch, no closing line.
    capture.lines.clear();
    clf.partial_fit(data.X, data.y);
    REQUIRE(capture.lines.size() == 1);
    CHECK(std::regex_match(
        capture.lines[0],
        std::regex("SGDClassifier.partial_fit: epoch 1/1: average loss .*" + bound)));
  }
  Capture capture;
  linear_model::SGDRegressor<double> reg(
      {.max_iter = 20, .tol = -std::numeric_limits<double>::infinity(), .verbose = 1});
  reg.fit(data.X, data.target);
  REQUIRE(reg.n_iter() == 20);  // tol = -inf: every epoch runs
  REQUIRE(capture.lines.size() == 21);
  CHECK(count_matching(capture.lines, "^SGDRegressor: epoch \\d+/20: average loss (" + number +
                                          ")" + bound) == 20);
  CHECK(std::regex_match(capture.lines.back(),
                         std::regex("SGDRegressor: stopped: max_iter epochs reached after 20 "
                                    "epochs; elapsed " +
                                    duration)));
}

TEST_CASE("GridSearchCV and RandomizedSearchCV verbose: the plan, a line per fit, the refit") {
  const Blobs data;
  namespace ms = model_selection;
  const ms::ParamGrid grid{{"alpha", {0.1, 1.0, 10.0}}};
  {
    Capture quiet;
    ms::GridSearchCV(linear_model::Ridge<double>(), grid, {.cv = 3}).fit(data.X, data.target);
    CHECK(quiet.lines.empty());
  }
  Capture capture;
  ms::GridSearchCV search(linear_model::Ridge<double>(), grid, {.cv = 3, .verbose = 1});
  search.fit(data.X, data.target);
  REQUIRE(capture.lines.size() == 1 + 9 + 1);
  CHECK(capture.lines.front() ==
        "GridSearchCV: fitting 3 folds for each of 3 candidates, totalling 9 fits");
  for (std::size_t k = 0; k < 9; ++k) {
    CAPTURE(capture.lines[1 + k]);
    CHECK(std::regex_match(
        capture.lines[1 + k],
        std::regex("GridSearchCV: \\[CV " + std::to_string(k % 3 + 1) + "/3\\] candidate " +
                   std::to_string(k / 3 + 1) + "/3 \\{alpha=[0-9.]+\\}: score (" + number +
                   "), fit " + duration + estimate)));
  }
  CHECK(std::regex_match(capture.lines.back(),
                         std::regex("GridSearchCV: refitted the best candidate \\{alpha=[0-9.]+\\} "
                                    "on 36 rows in " +
                                    duration + "; elapsed " + duration)));

  Capture random;
  ms::RandomizedSearchCV drawn(linear_model::Ridge<double>(),
                               tune::Space{{"alpha", tune::log_uniform{1e-3, 1e2}}},
                               {.n_iter = 4, .cv = 2, .refit = false, .verbose = 1});
  drawn.fit(data.X, data.target);
  REQUIRE(random.lines.size() == 1 + 8);  // no refit, no refit line
  CHECK(random.lines.front() ==
        "RandomizedSearchCV: fitting 2 folds for each of 4 candidates, totalling 8 fits");
  CHECK(count_matching(random.lines, "^RandomizedSearchCV: \\[CV [12]/2\\] candidate [1-4]/4 " +
                                         std::string("\\{alpha=.*\\}: score .*") + estimate) == 8);
}

TEST_CASE("HalvingGridSearchCV verbose: each iteration's plan and its fits") {
  const Blobs data;
  namespace ms = model_selection;
  const ms::ParamGrid grid{{"alpha", {0.001, 0.01, 0.1, 1.0, 10.0, 100.0}}};
  {
    Capture quiet;
    ms::HalvingGridSearchCV(linear_model::Ridge<double>(), grid, {.cv = 2, .factor = 2})
        .fit(data.X, data.target);
    CHECK(quiet.lines.empty());
  }
  Capture capture;
  ms::HalvingGridSearchCV search(linear_model::Ridge<double>(), grid,
                                 {.cv = 2, .factor = 2, .verbose = 1});
  search.fit(data.X, data.target);
  const auto iterations = static_cast<std::size_t>(search.n_iterations());
  REQUIRE(iterations >= 2);
  std::size_t fits = 0;
  for (std::size_t i = 0; i < iterations; ++i) {
    const auto candidates = static_cast<std::size_t>(search.n_candidates()[i]);
    fits += candidates * 2;
    CHECK(count_matching(capture.lines, "^HalvingGridSearchCV: iteration " + std::to_string(i + 1) +
                                            "/" + std::to_string(iterations) + ", " +
                                            std::to_string(search.n_resources()[i]) +
                                            " samples: fitting 2 folds for each of " +
                                            std::to_string(candidates) + " candidates, totalling " +
                                            std::to_string(candidates * 2) + " fits$") == 1);
  }
  CHECK(capture.lines.size() == iterations + fits + 1);
  CHECK(count_matching(capture.lines,
                       "^HalvingGridSearchCV: \\[CV [12]/2\\] candidate \\d+/\\d+ "
                       "\\{alpha=.*\\}: score .*" +
                           estimate) == fits);
  CHECK(count_matching(capture.lines, "^HalvingGridSearchCV: refitted the best candidate ") == 1);
  // The last fit has nothing left to wait for.
  CHECK(std::regex_search(capture.lines[capture.lines.size() - 2],
                          std::regex(", remaining ~0\\.00s$")));
}

TEST_CASE("tune::run verbose: the search, a line per trial, the best") {
  const Blobs data;
  auto train = [&](const tune::Trial& trial, tune::Reporter&) {
    if (trial.get<double>("alpha") > 50) throw std::runtime_error("alpha too large");
    linear_model::Ridge<double> model({.alpha = trial.get<double>("alpha")});
    model.fit(data.X.topRows(24), data.target.head(24));
    return model.score(data.X.bottomRows(12), data.target.tail(12));
  };
  const tune::Space space{{"alpha", tune::choice{{0.1, 1.0, 100.0}}}};
  {
    Capture quiet;
    (void)tune::run(train, space, {.searcher = tune::Search::grid});
    CHECK(quiet.lines.empty());
  }
  Capture capture;
  const tune::Results results =
      tune::run(train, space, {.searcher = tune::Search::grid, .verbose = 1});
  REQUIRE(results.size() == 3);
  REQUIRE(capture.lines.size() == 1 + 3 + 1);
  CHECK(capture.lines[0] == "tune::run: 3 trials, grid search");
  CHECK(std::regex_match(capture.lines[1],
                         std::regex("tune::run: trial 1/3 \\{alpha=0.1\\}: ok, score (" + number +
                                    ") \\(best (" + number + ")\\), " + duration + estimate)));
  CHECK(std::regex_match(
      capture.lines[2],
      std::regex("tune::run: trial 2/3 \\{alpha=1\\}: ok, score .* \\(best .*\\), " + duration +
                 estimate)));
  CHECK(std::regex_match(capture.lines[3],
                         std::regex("tune::run: trial 3/3 \\{alpha=100\\}: failed: alpha too "
                                    "large \\(best .*\\), " +
                                    duration + "; elapsed " + duration + ", remaining ~0.00s")));
  const std::size_t best = results.best().trial_id + 1;
  CHECK(std::regex_match(capture.lines[4],
                         std::regex("tune::run: 3 trials done, best trial " + std::to_string(best) +
                                    " with score (" + number + "); elapsed " + duration)));
}
