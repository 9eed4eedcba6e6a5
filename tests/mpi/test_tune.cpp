// tune under exec::mpi with 2 and 3 ranks: searches and ablations spread over the ranks (or
// over sub-communicators training each trial data-parallel) give every rank the same table,
// identical to the one-process run of the same search (computed here on each rank).
//
// Checks here use CHECK, never REQUIRE: a REQUIRE that stops one rank's test case early would
// leave the other ranks waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <chrono>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "onelearn/core/dataset.hpp"
#include "onelearn/exec/mpi.hpp"
#include "onelearn/linear_model/ridge.hpp"
#include "onelearn/tune/mpi.hpp"
#include "mpi_support.hpp"
#include "support.hpp"

using namespace onelearn;
using tune::Status;

namespace {

using test::world;

/// Reports at steps 1..5 and fails for trial 1 (on rank 1 under -np 2 and -np 3).
double scripted(const tune::Trial& trial, tune::Reporter& reporter) {
  if (trial.id() == 1) throw std::runtime_error("trial 1 fails on purpose");
  const double x = trial.get<double>("x");
  const double y = trial.get<double>("y");
  const double loss = (x - 0.3) * (x - 0.3) + (y - 0.1) * (y - 0.1) +
                      0.1 * static_cast<double>(trial.get<std::int64_t>("k"));
  double score = 0.0;
  for (std::int64_t step = 1; step <= 5; ++step) {
    score = -loss * (1.0 + 1.0 / static_cast<double>(step));
    reporter.report(step, score);
  }
  return score;
}

const tune::Space search_space{{"x", tune::uniform{-1, 1}},
                        {"y", tune::log_uniform{1e-3, 1}},
                        {"k", tune::integer{0, 2}},
                        {"opt", tune::choice{{"a", "b"}}}};

/// Whether every rank holds the same scores, bit for bit.
bool same_on_every_rank(const tune::Results& r, const exec::mpi& comm) {
  std::vector<double> mine;
  for (const auto& t : r.trials()) mine.push_back(std::isnan(t.score) ? -1e300 : t.score);
  std::vector<double> low = mine;
  std::vector<double> high = mine;
  comm.allreduce(std::span<double>(low), exec::reduce_op::min);
  comm.allreduce(std::span<double>(high), exec::reduce_op::max);
  return low == high;
}

}  // namespace

TEST_CASE("Random, TPE and grid searches give every rank the one-process table") {
  const auto comm = world();
  struct Case {
    std::string name;
    tune::RunOptions options;
  };
  const std::vector<Case> cases{
      {"random + median rule", {.n_trials = 14, .seed = 4, .scheduler = tune::MedianStoppingRule{}, .batch_size = 6}},
      {"random + ASHA", {.n_trials = 14, .seed = 5, .scheduler = tune::ASHA{}, .batch_size = 6}},
      {"TPE", {.searcher = tune::Search::tpe, .n_trials = 16, .seed = 6, .tpe = {.n_startup_trials = 4}, .batch_size = 4}},
      {"random, default batch", {.n_trials = 7, .seed = 7}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const tune::Results alone = tune::run(scripted, search_space, c.options);
    const tune::Results spread = tune::run(scripted, search_space, c.options, comm);
    CHECK(spread.size() == c.options.n_trials);
    CHECK(spread.same_outcomes(alone));
    CHECK(same_on_every_rank(spread, comm));
    // The failure on one rank is in every rank's table.
    CHECK(spread.trials().size() > 1);
    if (spread.trials().size() > 1) {
      CHECK(spread[1].status == Status::failed);
      CHECK(spread[1].message == "trial 1 fails on purpose");
    }
    std::size_t stopped = 0;
    for (const auto& t : spread.trials()) stopped += t.status == Status::stopped ? 1 : 0;
    if (comm.rank() == 0) MESSAGE(c.name, ": ", stopped, " trials stopped early");
  }
  // A grid does not depend on the history: any batch size gives the same table.
  const tune::Space grid{{"x", tune::choice{{-0.5, 0.0, 0.5}}},
                         {"y", tune::choice{{0.01, 0.1}}},
                         {"k", tune::integer{0, 1}},
                         {"opt", tune::choice{{"a"}}}};
  const tune::Results alone = tune::run(scripted, grid, {.searcher = tune::Search::grid});
  const tune::Results spread = tune::run(scripted, grid, {.searcher = tune::Search::grid}, comm);
  CHECK(spread.size() == 12);
  CHECK(spread.same_outcomes(alone));
}

TEST_CASE("An ablation gives every rank the one-process table") {
  const auto comm = world();
  auto train = [](const tune::Trial& t, tune::Reporter&) {
    if (t.get<std::string>("solver") == "z" && t.seed() == 1) throw std::runtime_error("z, seed 1");
    return (t.get<bool>("a") ? 1.0 : 0.0) + (t.get<bool>("b") ? 0.5 : 0.0) +
           (t.get<std::string>("solver") == "y" ? -0.25 : 0.0) + static_cast<double>(t.seed());
  };
  const std::vector<tune::Component> components{{"a"}, {"b"}, {"solver", "x", {"y", "z"}}};
  const tune::AblationOptions options{.repeats = 2};
  const tune::AblationResults alone = tune::ablation(train, components, options);
  const tune::AblationResults spread = tune::ablation(train, components, options, comm);
  CHECK(spread.trials().same_outcomes(alone.trials()));
  CHECK(spread.rows().size() == 5);
  CHECK(spread.csv() == alone.csv());
  if (spread.rows().size() == 5) {
    CHECK(spread.rows()[1].difference == -1.0);
    CHECK(spread.rows()[3].difference == -0.25);
    CHECK(spread.rows()[4].status == Status::failed);
  }
}

TEST_CASE("Trials on sub-communicators train data-parallel with the same function") {
  // Each trial fits Ridge on its group's ranks, each rank holding a shard of the rows; the
  // score (R² over all the group's test shards) must equal the one-process fit's, and the same
  // function over the whole communicator is one distributed training run.
  const auto comm = world();
  const auto data = test::load_split<double>("diabetes");
  const Dataset<double> train_set(data.X_train, data.y_train);
  const Dataset<double> test_set(data.X_test, data.y_test);
  auto train = [&](const tune::Trial& trial, tune::Reporter& reporter) {
    const auto policy = trial.exec<exec::mpi>();
    linear_model::Ridge<double, exec::mpi> ridge({.alpha = trial.get<double>("alpha")}, policy);
    const auto fit_rows = train_set.shard(policy);
    const auto test_rows = test_set.shard(policy);
    ridge.fit(fit_rows.features(), fit_rows.targets());
    const double score = ridge.score(test_rows.features(), test_rows.targets());
    reporter.report(1, score);
    return score;
  };
  auto train_alone = [&](const tune::Trial& trial, tune::Reporter&) {
    linear_model::Ridge<double> ridge({.alpha = trial.get<double>("alpha")});
    ridge.fit(data.X_train, data.y_train);
    return ridge.score(data.X_test, data.y_test);
  };
  const tune::Space alphas{{"alpha", tune::log_uniform{1e-3, 1e1}}};
  for (int ranks_per_trial : {1, 2}) {
    CAPTURE(ranks_per_trial);
    const tune::RunOptions options{.n_trials = 7, .seed = 2, .ranks_per_trial = ranks_per_trial};
    const tune::Results spread = tune::run(train, alphas, options, comm);
    tune::RunOptions one_process = options;
    one_process.ranks_per_trial = 1;  // more is an error without a communicator
    const tune::Results alone = tune::run(train_alone, alphas, one_process);
    CHECK(same_on_every_rank(spread, comm));
    CHECK(spread.size() == 7);
    for (std::size_t i = 0; i < spread.size() && i < alone.size(); ++i) {
      CHECK(spread[i].status == Status::ok);
      CHECK(spread[i].params == alone[i].params);
      CHECK(spread[i].score == doctest::Approx(alone[i].score).epsilon(1e-10));
    }
  }
  // One distributed training run of the best configuration over every rank.
  const tune::ParamList best{{"alpha", 0.1}};
  CHECK(tune::run_once(train, best, comm) ==
        doctest::Approx(tune::run_once(train_alone, best)).epsilon(1e-10));
}

TEST_CASE("Bad input fails on every rank together") {
  const auto comm = world();
  CHECK_THROWS_AS(tune::run(scripted, tune::Space{}, {}, comm), onelearn::invalid_argument);
  CHECK_THROWS_AS(tune::run(scripted, search_space, {.ranks_per_trial = comm.size() + 1}, comm),
                  onelearn::invalid_argument);
  CHECK_THROWS_AS(tune::ablation(scripted, {}, {}, comm), onelearn::invalid_argument);
  // A training function with a bad parameter name: every trial fails, the search completes.
  auto typo = [](const tune::Trial& t, tune::Reporter&) { return t.get<double>("alhpa"); };
  const tune::Results r = tune::run(typo, search_space, {.n_trials = 4}, comm);
  CHECK(r.size() == 4);
  for (const auto& t : r.trials()) {
    CHECK(t.status == Status::failed);
    CHECK(t.message.find("unknown parameter 'alhpa'") != std::string::npos);
  }
}

TEST_CASE("Wall time of a search falls with more ranks") {
  // 12 trials of 40 ms each: about 480 ms in one process, 240 ms on 2 ranks, 160 ms on 3.
  const auto comm = world();
  auto sleepy = [](const tune::Trial& t, tune::Reporter&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    return t.get<double>("x");
  };
  const tune::RunOptions options{.n_trials = 12, .seed = 1};
  comm.barrier();
  auto start = std::chrono::steady_clock::now();
  const tune::Results alone = tune::run(sleepy, search_space, options);
  const double one = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  comm.barrier();
  start = std::chrono::steady_clock::now();
  const tune::Results spread = tune::run(sleepy, search_space, options, comm);
  const double many = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(spread.same_outcomes(alone));
  if (comm.rank() == 0) {
    MESSAGE("12 trials of 40 ms: one process ", one, " s, ", comm.size(), " ranks ", many, " s");
  }
}

TEST_CASE("A search with a journal resumes across ranks to the uninterrupted table") {
  // Rank 0 reads and writes the journal; every rank replays the finished batches. Trial 6 runs
  // on rank 0 with 2 or 3 ranks (trial i on group i mod ranks), right after rank 0 wrote the
  // journal of trials 0-5: a copy taken there is the journal of a run killed at that point.
  const auto comm = world();
  const auto dir = std::filesystem::temp_directory_path() / "onelearn_mpi_tune_journal";
  if (comm.rank() == 0) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const auto journal = dir / "search.journal";
  const tune::Space space{{"x", tune::uniform{-2.0, 2.0}}};
  auto train = [&](const tune::Trial& t, tune::Reporter& reporter) -> double {
    if (t.id() == 6) std::filesystem::copy_file(journal, dir / "after6.journal");
    const double x = t.get<double>("x");
    reporter.report(1, -x * x);
    return -(x - 0.5) * (x - 0.5);
  };
  const tune::RunOptions options{.searcher = tune::Search::tpe, .n_trials = 12, .seed = 3,
                                 .tpe = {.n_startup_trials = 3}, .batch_size = 2, .journal = journal};
  const tune::Results straight = tune::run(train, space, options, comm);
  MPI_Barrier(MPI_COMM_WORLD);
  if (comm.rank() == 0) std::filesystem::rename(dir / "after6.journal", journal);
  MPI_Barrier(MPI_COMM_WORLD);
  const tune::Results resumed = tune::run(train, space, options, comm);
  CHECK(resumed.trials().size() == straight.trials().size());
  for (std::size_t i = 0; i < std::min(resumed.trials().size(), straight.trials().size()); ++i) {
    CAPTURE(i);
    CHECK(resumed.trials()[i].params == straight.trials()[i].params);
    CHECK(resumed.trials()[i].score == straight.trials()[i].score);
    if (i < 6) CHECK(resumed.trials()[i].seconds == straight.trials()[i].seconds);
  }
  // Another search's journal: the same error on every rank.
  tune::RunOptions other = options;
  other.n_trials = 13;
  CHECK_THROWS_WITH_AS((void)tune::run(train, space, other, comm),
                       doctest::Contains("expected the journal of this search"), invalid_argument);
  MPI_Barrier(MPI_COMM_WORLD);
  if (comm.rank() == 0) std::filesystem::remove_all(dir);
}
