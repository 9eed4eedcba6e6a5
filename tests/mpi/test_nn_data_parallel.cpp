// nn::Sequential<T, exec::mpi>: data-parallel training in the per-rank (SPMD) mode, under 2 and
// 3 ranks. Each rank fits its own uneven shard of digits (so the ranks have different numbers
// of batches and the short ones contribute empty batches); the reference is one process
// (exec::local) stepping once on each global batch, the concatenation of the ranks' batch b in
// rank order, computed on every rank from the full data. Also: a rank without rows, bad input
// on one rank raising on all, and the replicated mode (every rank passes the same data; the
// reference is one process's fit at the same global batch size and seed). The same checks run
// on models with Dropout (masks keyed by the row's position in the global batch) and with
// BatchNormalization(synchronized = true) (statistics over all ranks' rows), which must equal
// one process too; Dropout's per-rank masks are checked against one process's directly, and
// default (local-statistics) BatchNormalization is checked to train, agree across ranks, and
// differ from one process (as PyTorch's BatchNorm under DDP).
//
// Checks here use CHECK, never REQUIRE: a REQUIRE that stops one rank's test case early would
// leave the other ranks waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "onelearn/exec/mpi.hpp"
#include "onelearn/nn/layers/batch_normalization.hpp"
#include "onelearn/nn/sequential.hpp"
#include "mpi_support.hpp"
#include "support.hpp"
#include "weights_support.hpp"

using namespace onelearn;

namespace {

using onelearn::test::weights_error;

using test::world;

constexpr index_t batch_size = 16;
constexpr int epochs = 3;
constexpr std::uint64_t seed = 11;

/// Rows held by rank r: 40 + 13 r (40, 53, 66: 3, 4 and 5 batches of 16; the last ones
/// partial), taken consecutively from row 0 of the training set.
index_t shard_rows(int r) { return 40 + 13 * static_cast<index_t>(r); }
index_t shard_begin(int r) {
  index_t begin = 0;
  for (int q = 0; q < r; ++q) begin += shard_rows(q);
  return begin;
}

template <class T>
struct Digits {
  Matrix<T> X_train, X_test;
  Labels y_train, y_test;
};

template <class T>
Digits<T> load_digits() {
  const auto split = test::load_split<T, std::int64_t>("digits");
  return {split.X_train / T(16), split.X_test / T(16), split.y_train, split.y_test};
}

/// Dense-ReLU-Dense, compiled the same way for both policies.
template <class T, class Exec>
void compile(nn::Sequential<T, Exec>& model) {
  model.compile(nn::Adam{.learning_rate = 1e-2},
                nn::SparseCategoricalCrossentropy{.from_logits = true}, {"accuracy"});
}

/// The architectures trained here: Dense(32)-ReLU-Dense(10), optionally with Dropout(0.3) after
/// the ReLU, or BatchNormalization (synchronized or local) between the first Dense (then
/// without bias) and the ReLU.
enum class Arch { mlp, dropout, sync_bn, local_bn };

std::string arch_name(Arch arch) {
  switch (arch) {
    case Arch::dropout: return "Dropout";
    case Arch::sync_bn: return "BatchNormalization(synchronized)";
    case Arch::local_bn: return "BatchNormalization(local)";
    case Arch::mlp: break;
  }
  return "MLP";
}

template <class T, class Exec>
void add_layers(nn::Sequential<T, Exec>& model, Arch arch) {
  model.add(nn::Input({64}));
  // Before BatchNormalization the Dense has no bias (as Keras advises): the normalisation
  // cancels it, so its gradient is rounding noise that Adam's normalised steps would amplify
  // into a meaningless (and rank-count dependent) walk of the bias.
  const bool bn = arch == Arch::sync_bn || arch == Arch::local_bn;
  model.add(nn::Dense(32, {.use_bias = !bn}));
  if (arch == Arch::sync_bn) model.add(nn::BatchNormalization{{.synchronized = true}});
  if (arch == Arch::local_bn) model.add(nn::BatchNormalization{});
  model.add(nn::ReLU{});
  if (arch == Arch::dropout) model.add(nn::Dropout{0.3});
  model.add(nn::Dense(10));
}

/// Every layer's state (BatchNormalization's moving statistics), in layer order.
template <class T, class Exec>
std::vector<std::vector<T>> layer_states(nn::Sequential<T, Exec>& model) {
  std::vector<std::vector<T>> out;
  for (std::size_t i = 0; i < model.size(); ++i) {
    for (const auto& s : model.layer(i).state()) out.emplace_back(s.begin(), s.end());
  }
  return out;
}

nn::Sequential<double, exec::mpi> mpi_mlp_double() {
  return nn::Sequential<double, exec::mpi>(world(), nn::Input({64}), nn::Dense(32),
                                           nn::ReLU{}, nn::Dense(10));
}

double relative(double a, double b) { return std::abs(a - b) / std::abs(b); }

/// What the one-process reference records per epoch.
struct Reference {
  std::vector<double> loss, accuracy, val_loss, val_accuracy;
};

using test::identical_on_all_ranks;

/// A data-parallel fit that trained (finite, falling loss) and left every rank with the same
/// weights.
template <class T>
void check_trains_and_agrees(const exec::mpi& comm, nn::Sequential<T, exec::mpi>& model,
                             const nn::History& history) {
  CHECK(identical_on_all_ranks(comm, model.get_weights()));
  const auto& loss = history.history.at("loss");
  CHECK(loss.size() == static_cast<std::size_t>(epochs));
  CHECK(std::isfinite(loss.back()));
  CHECK(loss.back() < loss.front());
}

/// last_rank_empty: the last rank holds no training rows at all (it joins every step with an
/// empty batch). Arch::local_bn is not expected to equal one process: there the weights must
/// differ from the reference (and still agree across ranks, and train).
template <class T>
void check_per_rank_mode(double tol, bool last_rank_empty = false, Arch arch = Arch::mlp) {
  const bool equal_to_reference = arch != Arch::local_bn;
  const exec::mpi comm = world();
  const int ranks = comm.size();
  const int rank = comm.rank();
  const Digits<T> d = load_digits<T>();
  auto rows_of = [&](int r) { return last_rank_empty && r == ranks - 1 ? 0 : shard_rows(r); };

  // This rank's shard of the training rows, and of the test rows (validation_data).
  const Matrix<T> X_mine = d.X_train.middleRows(shard_begin(rank), rows_of(rank));
  const Labels y_mine = d.y_train.segment(shard_begin(rank), rows_of(rank));
  const index_t val_rows = d.X_test.rows() / ranks;
  const index_t val_begin = rank * val_rows;
  const index_t val_count = rank == ranks - 1 ? d.X_test.rows() - val_begin : val_rows;
  const Matrix<T> Xv_mine = d.X_test.middleRows(val_begin, val_count);
  const Labels yv_mine = d.y_test.segment(val_begin, val_count);

  nn::Sequential<T, exec::mpi> model(comm);
  add_layers(model, arch);
  // Different initial weights (and Dropout seeds) on every rank: fit must broadcast rank 0's.
  model.build(nn::Shape{64}, seed + static_cast<std::uint64_t>(rank));
  compile(model);
  const nn::History history = model.fit(
      X_mine, y_mine,
      {.epochs = epochs, .batch_size = batch_size, .shuffle = false,
       .validation_data = {Xv_mine, yv_mine}});

  // One process, one fit (one step) per global batch, built from rank 0's seed.
  nn::Sequential<T> ref;
  add_layers(ref, arch);
  ref.build(nn::Shape{64}, seed);
  compile(ref);
  index_t steps = 0;
  for (int r = 0; r < ranks; ++r) {
    steps = std::max(steps, (rows_of(r) + batch_size - 1) / batch_size);
  }
  Reference expected;
  for (int e = 0; e < epochs; ++e) {
    double loss_sum = 0;
    double correct = 0;
    double seen = 0;
    for (index_t b = 0; b < steps; ++b) {
      std::vector<index_t> rows;  // rank 0's batch b, then rank 1's, ...
      for (int r = 0; r < ranks; ++r) {
        const index_t first = b * batch_size;
        const index_t last = std::min(first + batch_size, rows_of(r));
        for (index_t i = first; i < last; ++i) rows.push_back(shard_begin(r) + i);
      }
      const auto m = static_cast<index_t>(rows.size());
      Matrix<T> Xb(m, 64);
      Labels yb(m);
      for (index_t i = 0; i < m; ++i) {
        Xb.row(i) = d.X_train.row(rows[static_cast<std::size_t>(i)]);
        yb(i) = d.y_train(rows[static_cast<std::size_t>(i)]);
      }
      const nn::History h = ref.fit(Xb, yb, {.epochs = 1, .batch_size = m, .shuffle = false});
      loss_sum += h.history.at("loss")[0] * static_cast<double>(m);
      correct += h.history.at("accuracy")[0] * static_cast<double>(m);
      seen += static_cast<double>(m);
    }
    expected.loss.push_back(loss_sum / seen);
    expected.accuracy.push_back(correct / seen);
    const auto scores = ref.evaluate(d.X_test, d.y_test);
    expected.val_loss.push_back(scores.at("loss"));
    expected.val_accuracy.push_back(scores.at("accuracy"));
  }

  // (a) the weights of the one-process run on the union of the batches.
  const auto weights = model.get_weights();
  const double error = weights_error(weights, ref.get_weights());
  const double state_error = weights_error(layer_states(model), layer_states(ref));
  INFO("rank " << rank << " of " << ranks << ", " << arch_name(arch)
               << ": weights relative error " << error << ", state relative error "
               << state_error);
  if (rank == 0) {
    double loss_error = 0;
    for (std::size_t e = 0; e < expected.loss.size() && e < history.history.at("loss").size();
         ++e) {
      loss_error = std::max(loss_error, relative(history.history.at("loss")[e], expected.loss[e]));
    }
    MESSAGE(ranks << " ranks, " << std::string(sizeof(T) == 8 ? "double" : "float") << ", "
                  << arch_name(arch) << std::string(last_rank_empty ? ", last rank empty" : "")
                  << ": weights relative error " << error << ", state relative error "
                  << state_error << ", History loss relative error " << loss_error
                  << ", final loss " << history.history.at("loss").back());
  }
  if (!equal_to_reference) {
    // Local statistics: each rank normalises by its own 16 rows, not the global batch's, so
    // the fit is not one process's (by far more than rounding).
    CHECK(error > 1e-4);
    check_trains_and_agrees(comm, model, history);
    return;
  }
  CHECK(error < tol);
  // Synchronized BatchNormalization's moving statistics are the global batches' too.
  CHECK(state_error < tol);
  // The weights moved: a broken all-reduce that left them untouched would fail above anyway,
  // but so would a test whose reference never trained.
  nn::Sequential<T> untrained;
  add_layers(untrained, arch);
  untrained.build(nn::Shape{64}, seed);
  CHECK(weights_error(weights, untrained.get_weights()) > 1e-2);

  // (b) every rank holds bit-identical weights (and layer state): rank 0's, broadcast,
  // compared exactly.
  CHECK(identical_on_all_ranks(comm, weights));
  CHECK(identical_on_all_ranks(comm, layer_states(model)));

  // (c) History: global loss, accuracy, val_loss and val_accuracy, every epoch.
  const auto& hist = history.history;
  CHECK(hist.at("loss").size() == static_cast<std::size_t>(epochs));
  CHECK(hist.at("val_loss").size() == static_cast<std::size_t>(epochs));
  for (std::size_t e = 0; e < static_cast<std::size_t>(epochs) && e < hist.at("loss").size() &&
                      e < hist.at("val_loss").size();
       ++e) {
    INFO("epoch " << e << ": loss " << hist.at("loss")[e] << " vs " << expected.loss[e]
                  << ", val_loss " << hist.at("val_loss")[e] << " vs " << expected.val_loss[e]);
    CHECK(relative(hist.at("loss")[e], expected.loss[e]) < tol);
    CHECK(std::abs(hist.at("accuracy")[e] - expected.accuracy[e]) < 1e-12);
    CHECK(relative(hist.at("val_loss")[e], expected.val_loss[e]) < tol);
    CHECK(std::abs(hist.at("val_accuracy")[e] - expected.val_accuracy[e]) < 1e-12);
  }
  // The loss fell: the steps are real training steps.
  CHECK(hist.at("loss").back() < hist.at("loss").front());

  // evaluate is global too: each rank's test shard gives the loss on the whole test set.
  const auto scores = model.evaluate(Xv_mine, yv_mine);
  const auto ref_scores = ref.evaluate(d.X_test, d.y_test);
  CHECK(relative(scores.at("loss"), ref_scores.at("loss")) < tol);
  CHECK(std::abs(scores.at("accuracy") - ref_scores.at("accuracy")) < 1e-12);
}

}  // namespace

TEST_CASE("nn Sequential<double, exec::mpi>: per-rank shards train as one process on the union") {
  check_per_rank_mode<double>(1e-11);
}

TEST_CASE("nn Sequential<double, exec::mpi>: a rank without rows joins every step") {
  check_per_rank_mode<double>(1e-11, true);
}

TEST_CASE("nn Sequential<float, exec::mpi>: per-rank shards train as one process on the union") {
  check_per_rank_mode<float>(1e-5);
}

TEST_CASE("nn Sequential<double, exec::mpi>: bad input on one rank raises on every rank") {
  const exec::mpi comm = world();
  const int rank = comm.rank();
  const int last = comm.size() - 1;
  const Digits<double> d = load_digits<double>();
  const Matrix<double> X = d.X_train.middleRows(shard_begin(rank), shard_rows(rank));
  const Labels y = d.y_train.segment(shard_begin(rank), shard_rows(rank));
  const nn::FitOptions options{.epochs = 1, .batch_size = batch_size, .shuffle = false};

  SUBCASE("NaN in X on the last rank") {
    auto model = mpi_mlp_double();
    compile(model);
    Matrix<double> X_bad = X;
    if (rank == last) X_bad(3, 5) = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_AS(model.fit(X_bad, y, options), invalid_argument);
  }
  SUBCASE("wrong width on the last rank, model with an Input") {
    auto model = mpi_mlp_double();
    compile(model);
    const Matrix<double> X_bad = rank == last ? Matrix<double>(X.leftCols(63)) : X;
    CHECK_THROWS_AS(model.fit(X_bad, y, options), shape_error);
  }
  SUBCASE("wrong width on the last rank, model built by fit") {
    nn::Sequential<double, exec::mpi> model(comm, nn::Dense(32), nn::ReLU{}, nn::Dense(10));
    compile(model);
    const Matrix<double> X_bad = rank == last ? Matrix<double>(X.leftCols(63)) : X;
    CHECK_THROWS_AS(model.fit(X_bad, y, options), shape_error);
  }
  SUBCASE("a label outside 0..9 on rank 0") {
    auto model = mpi_mlp_double();
    compile(model);
    Labels y_bad = y;
    if (rank == 0) y_bad(0) = 10;
    CHECK_THROWS_AS(model.fit(X, y_bad, options), invalid_argument);
  }
  SUBCASE("y of another length on the last rank") {
    auto model = mpi_mlp_double();
    compile(model);
    const Labels y_bad = rank == last ? Labels(y.head(y.size() - 1)) : y;
    CHECK_THROWS_AS(model.fit(X, y_bad, options), shape_error);
  }
  SUBCASE("a diverging loss on one rank stops every rank with training_error") {
    auto model = mpi_mlp_double();
    compile(model);
    Matrix<double> X_big = X;
    // Finite input whose activations overflow.
    if (rank == last) X_big.setConstant(std::numeric_limits<double>::max());
    CHECK_THROWS_AS(model.fit(X_big, y, options), nn::training_error);
  }
  SUBCASE("no training rows on any rank") {
    auto model = mpi_mlp_double();
    compile(model);
    CHECK_THROWS_AS(model.fit(Matrix<double>(X.topRows(0)), Labels(y.head(0)), options),
                    invalid_argument);
  }
  // After any of these, the ranks still agree: a good fit completes everywhere.
  auto model = mpi_mlp_double();
  compile(model);
  CHECK_NOTHROW(model.fit(X, y, options));
}

namespace {

/// Replicated mode: every rank passes the same 286 rows (validation_split 0.1 leaves 257
/// training rows: 8 global batches of 32 and a last one of 1 row, which leaves every rank but
/// rank 0 an empty share); the reference is one process fitting them with the same options.
template <class T>
void check_replicated_mode(double tol, Arch arch = Arch::mlp) {
  const exec::mpi comm = world();
  const Digits<T> d = load_digits<T>();
  const Matrix<T> X = d.X_train.topRows(286);
  const Labels y = d.y_train.head(286);
  nn::FitOptions options{.epochs = 3, .batch_size = 32, .shuffle = true, .seed = 5,
                         .validation_split = 0.1};
  nn::Sequential<T> ref;
  add_layers(ref, arch);
  compile(ref);
  const nn::History expected = ref.fit(X, y, options);

  options.replicated = true;
  nn::Sequential<T, exec::mpi> model(comm);
  add_layers(model, arch);
  compile(model);
  const nn::History history = model.fit(X, y, options);

  const double error = weights_error(model.get_weights(), ref.get_weights());
  const double state_error = weights_error(layer_states(model), layer_states(ref));
  if (comm.rank() == 0) {
    MESSAGE(comm.size() << " ranks, replicated, " << std::string(sizeof(T) == 8 ? "double" : "float")
                        << ", " << arch_name(arch) << ": weights relative error " << error
                        << ", state relative error " << state_error);
  }
  CHECK(error < tol);
  CHECK(state_error < tol);
  CHECK(identical_on_all_ranks(comm, model.get_weights()));
  CHECK(identical_on_all_ranks(comm, layer_states(model)));
  for (const char* key : {"loss", "accuracy", "val_loss", "val_accuracy"}) {
    const auto& got = history.history.at(key);
    const auto& want = expected.history.at(key);
    CHECK(got.size() == want.size());
    for (std::size_t e = 0; e < got.size() && e < want.size(); ++e) {
      INFO(key << " epoch " << e << ": " << got[e] << " vs " << want[e]);
      CHECK(std::abs(got[e] - want[e]) <= tol * std::abs(want[e]) + 1e-12);
    }
  }
  CHECK(expected.history.at("loss").back() < expected.history.at("loss").front());
}

}  // namespace

TEST_CASE("nn Sequential<T, exec::mpi>: replicated data at global batch B equals one process") {
  check_replicated_mode<double>(1e-11);
  check_replicated_mode<float>(1e-5);
}

namespace {

/// reproducible_blocks: the replicated fit on this many ranks ends, bit for bit, where one
/// process's fit with the same blocks does (weights, History), on every rank; with 2 blocks
/// on 3 ranks one rank has none. 286 rows, validation_split 0.1: the held-out rows are
/// evaluated in blocks too, and the last global batch (1 row) leaves 5 of 6 blocks empty.
template <class T>
void check_reproducible_blocks(index_t blocks, Arch arch) {
  const exec::mpi comm = world();
  const Digits<T> d = load_digits<T>();
  const Matrix<T> X = d.X_train.topRows(286);
  const Labels y = d.y_train.head(286);
  nn::FitOptions options{.epochs = 3, .batch_size = 32, .shuffle = true, .seed = 5,
                         .validation_split = 0.1, .reproducible_blocks = blocks};
  nn::Sequential<T> ref;
  add_layers(ref, arch);
  compile(ref);
  const nn::History expected = ref.fit(X, y, options);

  options.replicated = true;
  nn::Sequential<T, exec::mpi> model(comm);
  add_layers(model, arch);
  compile(model);
  const nn::History history = model.fit(X, y, options);
  INFO(comm.size() << " ranks, " << blocks << " blocks, " << arch_name(arch) << ", "
                   << std::string(sizeof(T) == 8 ? "double" : "float"));
  CHECK(model.get_weights() == ref.get_weights());
  CHECK(history == expected);
  CHECK(model.fit_params().reproducible_blocks == blocks);
  CHECK(identical_on_all_ranks(comm, model.get_weights()));
  CHECK(expected.history.at("loss").back() < expected.history.at("loss").front());
}

}  // namespace

TEST_CASE("nn Sequential<T, exec::mpi>: reproducible_blocks gives one process's bits on any "
          "number of ranks") {
  for (const index_t blocks : {6, 2}) {
    check_reproducible_blocks<double>(blocks, Arch::mlp);
    check_reproducible_blocks<float>(blocks, Arch::dropout);
  }
}

TEST_CASE("nn Sequential<double, exec::mpi>: reproducible_blocks outside the replicated mode, "
          "or with BatchNormalization, raises on every rank") {
  const exec::mpi comm = world();
  const Digits<double> d = load_digits<double>();
  const Matrix<double> X = d.X_train.topRows(64);
  const Labels y = d.y_train.head(64);
  auto model = mpi_mlp_double();
  compile(model);
  CHECK_THROWS_WITH_AS(model.fit(X, y, {.epochs = 1, .reproducible_blocks = 4}),
                       doctest::Contains("expected replicated = true"), invalid_argument);
  nn::Sequential<double, exec::mpi> bn(comm);
  add_layers(bn, Arch::local_bn);
  compile(bn);
  CHECK_THROWS_WITH_AS(bn.fit(X, y, {.epochs = 1, .replicated = true, .reproducible_blocks = 4}),
                       doctest::Contains("BatchNormalization (layer 1)"), invalid_argument);
  // The ranks still train together afterwards (no one left inside a collective).
  const nn::History h = model.fit(X, y, {.epochs = 1, .replicated = true, .reproducible_blocks = 4});
  CHECK(h.epoch.size() == 1);
}

TEST_CASE("nn Sequential<double, exec::mpi>: replicated data of different lengths raises") {
  const exec::mpi comm = world();
  const Digits<double> d = load_digits<double>();
  const index_t n = comm.rank() == comm.size() - 1 ? 100 : 101;
  auto model = mpi_mlp_double();
  compile(model);
  CHECK_THROWS_AS(model.fit(Matrix<double>(d.X_train.topRows(n)), Labels(d.y_train.head(n)),
                            {.epochs = 1, .replicated = true}),
                  shape_error);
}

// ---- Dropout and BatchNormalization under data-parallel training.

TEST_CASE("nn Dropout under exec::mpi: each rank draws its own rows' masks of the global batch") {
  // Rank r holds 3 + r rows of the global batch, after the 3 + q rows of every rank q < r; all
  // rows are equal (ones), so any difference between the ranks' outputs is the masks'.
  const exec::mpi comm = world();
  const int ranks = comm.size();
  const int rank = comm.rank();
  constexpr index_t width = 50;
  auto rows_of = [](int r) { return 3 + static_cast<index_t>(r); };
  index_t offset = 0;
  index_t global = 0;
  for (int r = 0; r < ranks; ++r) {
    if (r < rank) offset += rows_of(r);
    global += rows_of(r);
  }
  const index_t mine = rows_of(rank);
  const std::vector<double> ones(static_cast<std::size_t>(global * width), 1.0);

  // Built with a different seed on every rank, but an explicit layer seed wins: the same masks'
  // seed everywhere (what fit's broadcast of rng_state() ensures for derived seeds).
  nn::DropoutLayer<double> layer(0.5, 21);
  layer.build(nn::Shape{width}, static_cast<std::uint64_t>(rank));
  layer.begin_batch({.offset = offset, .rows = mine, .global_rows = global});
  const auto y = layer.forward({ones.data(), nn::Shape{mine, width}}, true);
  const std::vector<double> y_mine(y.data, y.data + y.size());
  const std::vector<double> all = comm.allgatherv(std::span<const double>(y_mine));

  // (a) Together the ranks' masks are one process's masks for the whole global batch.
  nn::DropoutLayer<double> one(0.5, 21);
  one.build(nn::Shape{width}, 0);
  const auto y_one = one.forward({ones.data(), nn::Shape{global, width}}, true);
  CHECK(all.size() == static_cast<std::size_t>(y_one.size()));
  CHECK(std::equal(all.begin(), all.end(), y_one.data, y_one.data + y_one.size()));

  // (b) The ranks' masks differ: rank r's first 3 rows against rank 0's first 3 rows (the old
  // behaviour, one stream per call, gave every rank the same masks).
  bool differs_from_rank0 = false;
  for (std::size_t i = 0; i < static_cast<std::size_t>(3 * width); ++i) {
    differs_from_rank0 = differs_from_rank0 || all[i] != y_mine[i];
  }
  if (rank > 0) CHECK(differs_from_rank0);
  // Both values occur, scaled by 1 / (1 - 0.5): a real mask, not all-kept or all-dropped.
  CHECK(std::count(y_mine.begin(), y_mine.end(), 0.0) > 0);
  CHECK(std::count(y_mine.begin(), y_mine.end(), 2.0) > 0);
  CHECK(static_cast<index_t>(std::count(y_mine.begin(), y_mine.end(), 0.0) +
                             std::count(y_mine.begin(), y_mine.end(), 2.0)) == mine * width);

  // (c) The gradient goes through the same mask.
  const auto dx = layer.backward({ones.data(), nn::Shape{mine, width}}, true);
  CHECK(std::equal(y_mine.begin(), y_mine.end(), dx.data, dx.data + dx.size()));

  // (d) The next call (the next step) draws new masks, the step count advancing on every rank;
  // a rank without rows advances it by shadow_forward.
  layer.begin_batch({.offset = offset, .rows = mine, .global_rows = global});
  const auto y2 = layer.forward({ones.data(), nn::Shape{mine, width}}, true);
  CHECK(!std::equal(y_mine.begin(), y_mine.end(), y2.data, y2.data + y2.size()));
  CHECK(layer.calls() == 2);
  nn::DropoutLayer<double> idle(0.5, 21);
  idle.build(nn::Shape{width}, 0);
  idle.shadow_forward();
  CHECK(idle.calls() == 1);
  CHECK(idle.rng_state().size() == 2);
  CHECK(idle.rng_state()[0] == 21);
  CHECK(idle.rng_state()[1] == 1);
}

TEST_CASE("nn Sequential<T, exec::mpi> with Dropout: per-rank shards train as one process") {
  check_per_rank_mode<double>(1e-11, false, Arch::dropout);
  check_per_rank_mode<double>(1e-11, true, Arch::dropout);
  check_per_rank_mode<float>(1e-5, false, Arch::dropout);
}

TEST_CASE("nn Sequential<T, exec::mpi> with Dropout: replicated data equals one process") {
  check_replicated_mode<double>(1e-11, Arch::dropout);
  check_replicated_mode<float>(1e-5, Arch::dropout);
}

TEST_CASE("nn Sequential<T, exec::mpi> with synchronized BatchNormalization: per-rank shards "
          "train as one process") {
  check_per_rank_mode<double>(1e-11, false, Arch::sync_bn);
  check_per_rank_mode<double>(1e-11, true, Arch::sync_bn);
  check_per_rank_mode<float>(1e-5, false, Arch::sync_bn);
}

TEST_CASE("nn Sequential<T, exec::mpi> with synchronized BatchNormalization: replicated data "
          "equals one process") {
  check_replicated_mode<double>(1e-11, Arch::sync_bn);
  check_replicated_mode<float>(1e-5, Arch::sync_bn);
}

TEST_CASE("nn Sequential<double, exec::mpi> with local BatchNormalization: trains, the ranks "
          "agree, and it is not one process's fit") {
  // (Not with the last rank empty: under 2 ranks rank 0's statistics would then be the global
  // batch's, and the fit one process's.)
  check_per_rank_mode<double>(1e-11, false, Arch::local_bn);
}
