// Every rank agrees, or every rank gets the same error: nn::Sequential's part of the table.
// One rank with other FitOptions, another optimizer setting, a ModelCheckpoint that cannot write
// (it writes on rank 0 only), a resume_from file missing on one rank, resume_from checkpoints
// of two fingerprint schemes, a callback that throws on one rank: every rank raises the same
// typed error within seconds. A callback that stops training on one rank stops every rank at
// the same epoch.

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "onelearn/nn/sequential.hpp"
#include "agreement_support.hpp"
#include "nn_support.hpp"

using namespace onelearn;
using onelearn::test::agreement::same_on_every_rank;
using onelearn::test::agreement::world;

namespace {

using Model = nn::Sequential<float, exec::mpi>;

Model make_model(double learning_rate = 1e-2, double beta_1 = 0.9) {
  Model model{world(), nn::Input({4}), nn::Dense(8, "relu"), nn::Dense(3)};
  model.compile(nn::Adam{.learning_rate = learning_rate, .beta_1 = beta_1},
                nn::SparseCategoricalCrossentropy{.from_logits = true});
  return model;
}

struct Rows {
  Matrix<float> X;
  Labels y;
};

Rows make_rows(int rank) {
  Rows r{Matrix<float>(20, 4), Labels(20)};
  for (index_t i = 0; i < 20; ++i) {
    for (index_t j = 0; j < 4; ++j) r.X(i, j) = static_cast<float>(((i + rank) * (j + 1)) % 7) / 7.0F;
    r.y(i) = (i + i / 3) % 3;
  }
  return r;
}

struct Outcome {
  std::string kind;  ///< "invalid_argument", "io_error", "runtime_error" or "" (no error)
  std::string message;
  double seconds = 0;
};

Outcome run(const std::function<void()>& body) {
  Outcome out;
  const auto start = std::chrono::steady_clock::now();
  try {
    body();
  } catch (const invalid_argument& e) {
    out = {"invalid_argument", e.what()};
  } catch (const io_error& e) {
    out = {"io_error", e.what()};
  } catch (const std::runtime_error& e) {
    out = {"runtime_error", e.what()};
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

/// The error every rank must raise: the same kind and message everywhere, within 5 s.
void check_same_error(const exec::mpi& comm, const Outcome& outcome, const std::string& kind,
                      const std::string& message_part) {
  INFO("rank ", comm.rank(), ": ", outcome.kind, ": ", outcome.message);
  CHECK(outcome.kind == kind);
  CHECK(outcome.message.find(message_part) != std::string::npos);
  CHECK(outcome.seconds < 5.0);
  CHECK(same_on_every_rank(comm, outcome.kind + ": " + outcome.message));
}

}  // namespace

TEST_CASE("Sequential.fit: a FitOptions field that differs on one rank is an error on every rank") {
  const exec::mpi comm = world();
  const Rows rows = make_rows(comm.rank());
  const bool odd_one = comm.rank() == 1;
  const nn::FitOptions base{.epochs = 2, .batch_size = 8, .seed = 3};
  struct Case {
    std::string field;
    std::function<void(nn::FitOptions&)> change;
  };
  const std::vector<Case> cases{
      {"epochs", [](nn::FitOptions& o) { o.epochs = 3; }},
      {"batch_size", [](nn::FitOptions& o) { o.batch_size = 4; }},
      {"shuffle", [](nn::FitOptions& o) { o.shuffle = false; }},
      {"seed", [](nn::FitOptions& o) { o.seed = 4; }},
      {"validation_split", [](nn::FitOptions& o) { o.validation_split = 0.25; }},
      {"validation_data", [&](nn::FitOptions& o) { o.validation_data = {rows.X, rows.y}; }},
      {"resume_from", [](nn::FitOptions& o) { o.resume_from = "somewhere.ckpt"; }},
      {"replicated", [](nn::FitOptions& o) { o.replicated = true; }},
      {"shard_optimizer_state", [](nn::FitOptions& o) { o.shard_optimizer_state = true; }},
      {"bucket_bytes", [](nn::FitOptions& o) { o.bucket_bytes = 1024; }},
      {"reproducible_blocks", [](nn::FitOptions& o) { o.reproducible_blocks = 2; }},
  };
  for (const Case& c : cases) {
    Model model = make_model();
    nn::FitOptions options = base;
    if (odd_one) c.change(options);
    const Outcome outcome = run([&] { model.fit(rows.X, rows.y, options); });
    INFO("field ", c.field);
    check_same_error(comm, outcome, "invalid_argument",
                     "Sequential.fit: ranks disagree on " + c.field + ":");
  }
  // verbose may differ (the progress bar prints on rank 0 only): no error.
  Model model = make_model();
  nn::FitOptions quiet_elsewhere = base;
  quiet_elsewhere.verbose = 0;
  const Outcome fine = run([&] { model.fit(rows.X, rows.y, quiet_elsewhere); });
  CHECK(fine.kind.empty());

  // The optimizer's learning rate, and its other hyper-parameters.
  Model other_rate = make_model(odd_one ? 1e-3 : 1e-2);
  check_same_error(comm, run([&] { other_rate.fit(rows.X, rows.y, base); }), "invalid_argument",
                   "Sequential.fit: ranks disagree on learning_rate: 0.01 on rank");
  Model other_beta = make_model(1e-2, odd_one ? 0.8 : 0.9);
  check_same_error(comm, run([&] { other_beta.fit(rows.X, rows.y, base); }), "invalid_argument",
                   "Sequential.fit: ranks disagree on Adam.beta_1: 0.9 on rank");
}

TEST_CASE("Sequential.fit: work done on one rank reports to every rank") {
  const exec::mpi comm = world();
  const Rows rows = make_rows(comm.rank());
  const nn::FitOptions options{.epochs = 3, .batch_size = 8, .seed = 3};
  // One directory for all ranks: rank 0's process id names it.
  std::int64_t id = static_cast<std::int64_t>(::getpid());
  comm.broadcast(std::span<std::int64_t>(&id, 1), 0);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("onelearn_agreement_" + std::to_string(id));

  SUBCASE("ModelCheckpoint (rank 0 writes) into a directory that does not exist") {
    Model model = make_model();
    nn::ModelCheckpoint checkpoint(dir / "missing" / "model.ckpt");
    const Outcome outcome = run([&] { model.fit(rows.X, rows.y, options, checkpoint); });
    check_same_error(comm, outcome, "io_error", "on rank 0: ");
  }
  SUBCASE("CSVLogger (rank 0 writes) into a directory that does not exist") {
    Model model = make_model();
    nn::CSVLogger log(dir / "missing" / "log.csv");
    const Outcome outcome = run([&] { model.fit(rows.X, rows.y, options, log); });
    check_same_error(comm, outcome, "io_error", "on rank 0: CSVLogger: expected to open");
  }
  SUBCASE("a callback that throws on one rank") {
    Model model = make_model();
    auto throws_on_rank_1 = [&](Model&, int epoch, const nn::Logs&) {
      if (comm.rank() == 1 && epoch == 1) throw std::runtime_error("user callback failed");
    };
    const Outcome outcome = run([&] { model.fit(rows.X, rows.y, options, throws_on_rank_1); });
    check_same_error(comm, outcome, "runtime_error", "on rank 1: user callback failed");
  }
  SUBCASE("a callback that stops training on one rank stops every rank") {
    Model model = make_model();
    auto stops_on_rank_0 = [&](Model& m, int epoch, const nn::Logs&) {
      if (comm.rank() == 0 && epoch == 0) m.stop_training();
    };
    const Outcome outcome = run([&] { model.fit(rows.X, rows.y, options, stops_on_rank_0); });
    CHECK(outcome.kind.empty());
    CHECK(model.history().epoch.size() == 1);
  }
  SUBCASE("resume_from a checkpoint missing on one rank") {
    Model model = make_model();
    const std::filesystem::path mine = dir / ("rank" + std::to_string(comm.rank()) + ".ckpt");
    std::filesystem::create_directories(dir);
    model.fit(rows.X, rows.y, {.epochs = 1, .batch_size = 8, .seed = 3});
    if (comm.rank() != 1) model.save_checkpoint(mine);
    Model resumed = make_model();
    nn::FitOptions resume = options;
    resume.resume_from = mine;
    const Outcome outcome = run([&] { resumed.fit(rows.X, rows.y, resume); });
    check_same_error(comm, outcome, "io_error", "on rank 1: ");
  }
  SUBCASE("resume_from checkpoints of two fingerprint schemes") {
    // tests/data/checkpoints/fingerprint_v1.olc: this network, written by a version of
    // onelearn that fingerprinted the training rows in scheme 1 (tests/unit/
    // test_nn_training.cpp); rank 1 resumes from it, the others from one written now (2).
    const test::FingerprintV1Rows rows_v1 = test::fingerprint_v1_rows();
    const auto network = [&] {
      nn::Sequential<float, exec::mpi> model{comm, nn::Input({3}), nn::Dense(8, "relu"),
                                             nn::Dense(3)};
      model.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
      return model;
    };
    const std::filesystem::path mine = dir / ("rank" + std::to_string(comm.rank()) + ".ckpt");
    std::filesystem::create_directories(dir);
    auto written = network();
    written.fit(rows_v1.X, rows_v1.y, {.epochs = 2, .batch_size = 8, .seed = 3});
    written.save_checkpoint(mine);
    auto resumed = network();
    const nn::FitOptions resume{
        .epochs = 4, .batch_size = 8, .seed = 3,
        .resume_from = comm.rank() == 1 ? test::data_path("checkpoints/fingerprint_v1.olc")
                                        : mine.string()};
    const Outcome outcome = run([&] { resumed.fit(rows_v1.X, rows_v1.y, resume); });
    // "2 on rank 0, 1 on rank 1" on 2 ranks, "2 on ranks 0 and 2, 1 on rank 1" on 3.
    check_same_error(comm, outcome, "invalid_argument",
                     "Sequential.fit: ranks disagree on fingerprint scheme of the resume_from "
                     "checkpoint: 2 on rank");
    CHECK(outcome.message.find("1 on rank 1") != std::string::npos);
  }
  comm.barrier();
  if (comm.rank() == 0) std::filesystem::remove_all(dir);
}
