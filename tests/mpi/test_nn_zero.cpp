// Data-parallel nn::Sequential<T, exec::mpi> with optimizer-state sharding (ZeRO stage 1,
// FitOptions::shard_optimizer_state) and gradient buckets (FitOptions::bucket_bytes), under 2
// and 3 ranks.
//
// References: the unsharded data-parallel fit (itself checked against one process in
// test_nn_data_parallel.cpp) and, in the replicated mode, one process's fit (exec::local) at
// the same global batch and seed, which the data-parallel fit must equal up to rounding. The
// optimizer memory per rank is checked against its hand count: slots x (the rank's share of the
// parameters: n / ranks, the first n % ranks ranks one more) x sizeof(T).
//
// Checks use CHECK, never REQUIRE: a REQUIRE that stops one rank's test case early would leave
// the other ranks waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "onelearn/exec/mpi.hpp"
#include "onelearn/nn/detail/sharded_optimizer.hpp"
#include "onelearn/nn/sequential.hpp"
#include "mpi_support.hpp"
#include "support.hpp"
#include "weights_support.hpp"

using namespace onelearn;
namespace fs = std::filesystem;

namespace {

using onelearn::test::weights_error;

using test::world;

/// exec::mpi whose non-blocking collectives complete when they start, as exec::ucx's do: the
/// same GradientSync then reduces each bucket eagerly in the hook.
struct eager_mpi : exec::mpi {
  using request = exec::ready_request;
  explicit eager_mpi(const exec::mpi& base) : exec::mpi(base) {}

  template <class T, std::size_t N>
  request iallreduce(std::span<T, N> values, exec::reduce_op op) const {
    exec::mpi::iallreduce(values, op).wait();
    return {};
  }
  template <class T>
  request ireduce_scatter(std::span<T> values, std::span<T> mine, std::span<const std::int64_t> counts,
                          exec::reduce_op op) const {
    exec::mpi::ireduce_scatter(values, mine, counts, op).wait();
    return {};
  }
  template <class T>
  request iallgatherv_in_place(std::span<T> buffer, std::span<const std::int64_t> counts) const {
    exec::mpi::iallgatherv_in_place(buffer, counts).wait();
    return {};
  }
  void wait_all(std::span<request> /*requests*/) const noexcept {}
  [[nodiscard]] eager_mpi split(int color, int key) const { return eager_mpi(exec::mpi::split(color, key)); }
};
static_assert(exec::ExecutionPolicy<eager_mpi>);

template <class T>
struct FirstDigits {
  Matrix<T> X;
  Labels y;
};

/// The first 286 training rows of digits, scaled to [0, 1].
template <class T>
FirstDigits<T> load_first_digits() {
  const auto split = test::load_split<T, std::int64_t>("digits");
  return {split.X_train.topRows(286) / T(16), split.y_train.head(286)};
}

/// This rank's expected optimizer bytes: slots x its share of n values x sizeof(T).
template <class T>
std::size_t expected_shard_bytes(index_t n, int slots, int rank, int ranks) {
  const index_t share = n / ranks + (rank < n % ranks ? 1 : 0);
  return static_cast<std::size_t>(slots) * static_cast<std::size_t>(share) * sizeof(T);
}

/// The sum over the ranks of one count.
std::size_t sum_over_ranks(const exec::mpi& comm, std::size_t value) {
  double v = static_cast<double>(value);
  comm.allreduce(std::span<double>(&v, 1), exec::reduce_op::sum);
  return static_cast<std::size_t>(v);
}

using test::identical_on_all_ranks;

template <class T, class Exec, class Spec>
void mlp(nn::Sequential<T, Exec>& model, const Spec& optimizer) {
  model.add(nn::Input({64})).add(nn::Dense(32)).add(nn::ReLU{}).add(nn::Dense(10));
  model.compile(optimizer, nn::SparseCategoricalCrossentropy{.from_logits = true});
}

const nn::FitOptions replicated_options{.epochs = 2, .batch_size = 32, .shuffle = true,
                                            .seed = 5, .replicated = true};

/// One optimizer, replicated data: one process, the unsharded and the sharded data-parallel
/// fits give the same weights; the sharded one holds its share of the state.
template <class T, class Spec>
void check_optimizer(const std::string& what, const Spec& optimizer, int slots, double tol,
                     std::vector<std::vector<T>>* sharded_weights = nullptr) {
  const exec::mpi comm = world();
  const FirstDigits<T> d = load_first_digits<T>();

  nn::Sequential<T> ref;
  mlp(ref, optimizer);
  ref.fit(d.X, d.y, replicated_options);
  const auto w_ref = ref.get_weights();

  nn::Sequential<T, exec::mpi> unsharded(comm);
  mlp(unsharded, optimizer);
  unsharded.fit(d.X, d.y, replicated_options);

  nn::FitOptions options = replicated_options;
  options.shard_optimizer_state = true;
  nn::Sequential<T, exec::mpi> sharded(comm);
  mlp(sharded, optimizer);
  sharded.fit(d.X, d.y, options);
  const auto w_sharded = sharded.get_weights();

  const double vs_unsharded = weights_error(w_sharded, unsharded.get_weights());
  const double vs_one = weights_error(w_sharded, w_ref);
  const std::string type = sizeof(T) == 8 ? " double" : " float";
  INFO(what << type << ", rank " << comm.rank() << " of "
            << comm.size() << ": sharded vs unsharded " << vs_unsharded
            << ", sharded vs one process " << vs_one);
  if (comm.rank() == 0) {
    MESSAGE(what << type << ", " << comm.size()
                 << " ranks: sharded vs unsharded " << vs_unsharded << ", vs one process "
                 << vs_one << "; optimizer bytes " << sharded.optimizer_state_bytes()
                 << " (unsharded " << unsharded.optimizer_state_bytes() << ")");
  }
  CHECK(vs_unsharded < tol);
  CHECK(vs_one < tol);
  CHECK(weights_error(unsharded.get_weights(), w_ref) < tol);
  CHECK(identical_on_all_ranks(comm, w_sharded));
  // The weights moved (a step that never happened would leave them at the initial ones).
  nn::Sequential<T> untrained;
  mlp(untrained, optimizer);
  untrained.build(nn::Shape{64}, replicated_options.seed);
  CHECK(weights_error(w_sharded, untrained.get_weights()) > 1e-2);

  // Optimizer memory: the whole state unsharded, this rank's share sharded; they add up.
  const index_t n = ref.count_params();  // 64*32+32 + 32*10+10 = 2410
  CHECK(n == 2410);
  CHECK(unsharded.optimizer_state_bytes() ==
        static_cast<std::size_t>(slots) * static_cast<std::size_t>(n) * sizeof(T));
  CHECK(sharded.optimizer_state_bytes() ==
        expected_shard_bytes<T>(n, slots, comm.rank(), comm.size()));
  CHECK(sum_over_ranks(comm, sharded.optimizer_state_bytes()) ==
        unsharded.optimizer_state_bytes());
  CHECK(sharded.optimizer().is_sharded());
  CHECK(!unsharded.optimizer().is_sharded());
  if (sharded_weights != nullptr) *sharded_weights = w_sharded;
}

template <class T>
void check_optimizers(double tol) {
  check_optimizer<T>("SGD(momentum, nesterov, weight_decay)",
                     nn::SGD{.learning_rate = 0.05, .momentum = 0.9, .nesterov = true,
                             .weight_decay = 1e-3},
                     1, tol);
  check_optimizer<T>("Adam(weight_decay)", nn::Adam{.learning_rate = 1e-2, .weight_decay = 1e-3},
                     2, tol);
  check_optimizer<T>("AdamW", nn::AdamW{.learning_rate = 1e-2, .weight_decay = 0.01}, 2, tol);
  check_optimizer<T>("RMSprop(centered, momentum)",
                     nn::RMSprop{.learning_rate = 1e-3, .momentum = 0.5, .centered = true}, 3,
                     tol);
  check_optimizer<T>("Adagrad", nn::Adagrad{.learning_rate = 0.05}, 1, tol);
  // Clipping by the global norm: every shard must clip by the norm of the whole gradient (a
  // shard clipping by its own part's norm would scale differently and fail the comparisons).
  std::vector<std::vector<T>> clipped, plain;
  check_optimizer<T>("Adam(global_clipnorm 0.05)",
                     nn::Adam{.learning_rate = 1e-2, .global_clipnorm = 0.05}, 2, tol, &clipped);
  check_optimizer<T>("Adam", nn::Adam{.learning_rate = 1e-2}, 2, tol, &plain);
  // The clipping was active: without it the weights differ.
  CHECK(weights_error(clipped, plain) > 1e-3);
}

}  // namespace

TEST_CASE("nn ZeRO-1<double>: sharded optimizer state gives the unsharded and one-process weights") {
  check_optimizers<double>(1e-11);
}

TEST_CASE("nn ZeRO-1<float>: sharded optimizer state gives the unsharded and one-process weights") {
  check_optimizers<float>(1e-5);
}

TEST_CASE("nn gradient buckets: the plan groups consecutive layers in backward order") {
  // Layers (as a Dense-ReLU-Dense-ReLU-Dense model): blocks of 2080, -, 528, -, 170 doubles.
  std::vector<double> a(2080), b(528), c(170);
  const std::vector<std::vector<std::span<double>>> layers{
      {std::span<double>(a)}, {}, {std::span<double>(b)}, {}, {std::span<double>(c)}};
  const std::vector<std::span<double>> params{std::span<double>(a), std::span<double>(b),
                                              std::span<double>(c)};
  using Plan = nn::detail::SyncPlan<double>;
  struct Expected {
    std::size_t first_buffer, end_buffer, begin, end;
  };
  auto check = [&](std::size_t bucket_bytes, const std::vector<Expected>& expected) {
    Plan plan;
    plan.plan(layers, params, {.bucket_bytes = bucket_bytes}, 0, 1);
    INFO("bucket_bytes " << bucket_bytes);
    CHECK(plan.buckets().size() == expected.size());
    for (std::size_t k = 0; k < expected.size() && k < plan.buckets().size(); ++k) {
      const auto& got = plan.buckets()[k];
      CHECK(got.first_buffer == expected[k].first_buffer);
      CHECK(got.end_buffer == expected[k].end_buffer);
      CHECK(got.begin == expected[k].begin);
      CHECK(got.end == expected[k].end);
    }
  };
  // 0: one bucket per layer with gradients, last layer first (flat offsets 0, 2080, 2608).
  check(0, {{2, 3, 2608, 2778}, {1, 2, 2080, 2608}, {0, 1, 0, 2080}});
  // 2000 bytes: 170*8 = 1360 < 2000, then +528*8 = 5584 >= 2000 closes; the first layer alone.
  check(2000, {{1, 3, 2080, 2778}, {0, 1, 0, 2080}});
  // Exactly the last layer's 1360 bytes: it closes on its own.
  check(1360, {{2, 3, 2608, 2778}, {1, 2, 2080, 2608}, {0, 1, 0, 2080}});
  // Larger than the model: one bucket.
  check(std::size_t{1} << 30, {{0, 3, 0, 2778}});
  // The shards of 2778 values over 3 ranks: 926 each; over 4: 695, 695, 694, 694.
  CHECK(nn::detail::shard_of(2778, 2, 3) == std::pair<std::size_t, std::size_t>{1852, 2778});
  CHECK(nn::detail::shard_of(2778, 1, 4) == std::pair<std::size_t, std::size_t>{695, 1390});
  CHECK(nn::detail::shard_of(2778, 3, 4) == std::pair<std::size_t, std::size_t>{2084, 2778});
}

namespace {

/// Per-rank mode (uneven shards of 40 + 13 r rows, shuffled per rank) on a three-Dense model:
/// every bucket size, sharded or not, gives the weights of the unsharded per-layer-bucket fit.
template <class T>
void check_buckets(double tol) {
  const exec::mpi comm = world();
  const int rank = comm.rank();
  const FirstDigits<T> d = load_first_digits<T>();
  index_t begin = 0;
  for (int r = 0; r < rank; ++r) begin += 40 + 13 * r;
  const Matrix<T> X = d.X.middleRows(begin, 40 + 13 * rank);
  const Labels y = d.y.segment(begin, 40 + 13 * rank);

  auto fit = [&](std::size_t bucket_bytes, bool shard) {
    nn::Sequential<T, exec::mpi> model(comm, nn::Input({64}), nn::Dense(32), nn::ReLU{},
                                       nn::Dense(16), nn::ReLU{}, nn::Dense(10));
    model.compile(nn::Adam{.learning_rate = 1e-2, .global_clipnorm = 0.5},
                  nn::SparseCategoricalCrossentropy{.from_logits = true});
    model.fit(X, y,
              {.epochs = 3, .batch_size = 16, .shuffle = true, .seed = 3,
               .shard_optimizer_state = shard, .bucket_bytes = bucket_bytes});
    return model.get_weights();
  };
  const auto baseline = fit(0, false);
  nn::Sequential<T> untrained{nn::Input({64}), nn::Dense(32), nn::ReLU{}, nn::Dense(16),
                              nn::ReLU{}, nn::Dense(10)};
  untrained.build(nn::Shape{64}, 3);
  CHECK(weights_error(baseline, untrained.get_weights()) > 1e-2);
  // 0 and 1 byte: one bucket per layer; 2000 (float: 1000) bytes: the last two Dense layers in
  // one packed bucket; 1 GiB: the whole model in one.
  const std::size_t two_layers = 250 * sizeof(T);
  for (const std::size_t bytes : {std::size_t{0}, std::size_t{1}, two_layers, std::size_t{1} << 30}) {
    for (const bool shard : {false, true}) {
      if (bytes == 0 && !shard) continue;
      const auto w = fit(bytes, shard);
      const double error = weights_error(w, baseline);
      INFO("rank " << rank << ", bucket_bytes " << bytes << ", sharded " << shard << ": error "
                   << error);
      CHECK(error < tol);
      CHECK(identical_on_all_ranks(comm, w));
    }
  }
}

}  // namespace

TEST_CASE("nn gradient buckets: every bucket size gives the same weights (per-rank shards)") {
  check_buckets<double>(1e-11);
  check_buckets<float>(1e-5);
}

TEST_CASE("nn ZeRO-1 on a policy whose non-blocking collectives complete at once (as exec::ucx's)") {
  const exec::mpi comm = world();
  const FirstDigits<double> d = load_first_digits<double>();
  const nn::Adam adam{.learning_rate = 1e-2, .global_clipnorm = 0.1};
  nn::Sequential<double, exec::mpi> unsharded(comm);
  mlp(unsharded, adam);
  unsharded.fit(d.X, d.y, replicated_options);

  nn::FitOptions options = replicated_options;
  options.shard_optimizer_state = true;
  nn::Sequential<double, eager_mpi> sharded{eager_mpi(comm)};
  mlp(sharded, adam);
  sharded.fit(d.X, d.y, options);
  const double error = weights_error(sharded.get_weights(), unsharded.get_weights());
  INFO("rank " << comm.rank() << ": " << error);
  CHECK(error < 1e-11);
  CHECK(identical_on_all_ranks(comm, sharded.get_weights()));
  CHECK(sharded.optimizer_state_bytes() ==
        expected_shard_bytes<double>(2410, 2, comm.rank(), comm.size()));
}

TEST_CASE("nn ZeRO-1: fits continue across modes; checkpoints hold the whole state and resume") {
  const exec::mpi comm = world();
  const int ranks = comm.size();
  const FirstDigits<double> d = load_first_digits<double>();
  const nn::Adam adam{.learning_rate = 1e-2};
  nn::FitOptions sharded_options = replicated_options;
  sharded_options.shard_optimizer_state = true;
  nn::FitOptions one_epoch = replicated_options;
  one_epoch.epochs = 1;
  nn::FitOptions one_epoch_sharded = sharded_options;
  one_epoch_sharded.epochs = 1;

  // A directory common to the ranks (rank 0's random name).
  std::vector<std::int64_t> tag{static_cast<std::int64_t>(std::random_device{}())};
  comm.broadcast(std::span<std::int64_t>(tag), 0);
  const fs::path dir = fs::temp_directory_path() / ("onelearn_nn_zero_np" + std::to_string(ranks) +
                                                    "_" + std::to_string(tag[0]));
  if (comm.rank() == 0) fs::create_directories(dir);
  comm.barrier();

  // The unsharded reference: 2 epochs; its optimizer state after them.
  nn::Sequential<double, exec::mpi> reference(comm);
  mlp(reference, adam);
  reference.fit(d.X, d.y, replicated_options);
  const auto w_ref = reference.get_weights();
  std::vector<std::vector<double>> state_ref;
  for (const auto& s : reference.optimizer().state()) state_ref.emplace_back(s.begin(), s.end());

  SUBCASE("sharded, then unsharded, then sharded again: the optimizer state carries over") {
    nn::Sequential<double, exec::mpi> a(comm), b(comm);
    mlp(a, adam);
    mlp(b, adam);
    a.fit(d.X, d.y, one_epoch_sharded);
    a.fit(d.X, d.y, one_epoch);  // gathers the shards
    CHECK(!a.optimizer().is_sharded());
    a.fit(d.X, d.y, one_epoch_sharded);
    for (int i = 0; i < 3; ++i) b.fit(d.X, d.y, one_epoch);
    const double error = weights_error(a.get_weights(), b.get_weights());
    INFO("rank " << comm.rank() << ": " << error);
    CHECK(error < 1e-11);
    CHECK(a.optimizer().iterations() == b.optimizer().iterations());
    CHECK(a.optimizer().iterations() == 27);  // 3 epochs of ceil(286 / 32) = 9 steps
  }

  SUBCASE("ModelCheckpoint (rank 0 writes) during a sharded fit; resume sharded or not") {
    nn::Sequential<double, exec::mpi> a(comm);
    mlp(a, adam);
    const std::string pattern = (dir / "epoch{epoch}.olc").string();
    a.fit(d.X, d.y, sharded_options, nn::ModelCheckpoint(pattern));
    comm.barrier();  // rank 0 wrote the last file inside fit, after the others' last collective
    CHECK(a.optimizer().is_sharded());
    const double straight = weights_error(a.get_weights(), w_ref);
    INFO("rank " << comm.rank() << ": sharded with checkpoints vs unsharded " << straight);
    CHECK(straight < 1e-11);

    const std::string epoch1 = (dir / "epoch1.olc").string();
    nn::Sequential<double, exec::mpi> resumed_sharded(comm);
    mlp(resumed_sharded, adam);
    nn::FitOptions resume = sharded_options;
    resume.resume_from = epoch1;
    resumed_sharded.fit(d.X, d.y, resume);
    const double e1 = weights_error(resumed_sharded.get_weights(), a.get_weights());
    nn::Sequential<double, exec::mpi> resumed_whole(comm);
    mlp(resumed_whole, adam);
    resume = replicated_options;
    resume.resume_from = epoch1;
    resumed_whole.fit(d.X, d.y, resume);
    const double e2 = weights_error(resumed_whole.get_weights(), w_ref);
    INFO("resumed sharded vs straight " << e1 << ", resumed unsharded vs unsharded " << e2);
    CHECK(e1 < 1e-11);
    CHECK(e2 < 1e-11);
    CHECK(resumed_sharded.optimizer().is_sharded());
    CHECK(resumed_sharded.optimizer().iterations() == 18);

    // The epoch-2 file holds the whole optimizer state: that of the unsharded fit.
    nn::Sequential<double, exec::mpi> loaded(comm);
    mlp(loaded, adam);
    loaded.load_checkpoint((dir / "epoch2.olc").string());
    std::vector<std::vector<double>> state;
    for (const auto& s : loaded.optimizer().state()) state.emplace_back(s.begin(), s.end());
    const double state_error = weights_error(state, state_ref);
    INFO("checkpointed state vs unsharded " << state_error);
    CHECK(state_error < 1e-9);
  }

  SUBCASE("save_checkpoint on every rank gathers the state; loading drops a model's shard") {
    nn::Sequential<double, exec::mpi> a(comm);
    mlp(a, adam);
    a.fit(d.X, d.y, sharded_options);
    const std::size_t shard_bytes = a.optimizer_state_bytes();
    const std::string mine = (dir / ("rank" + std::to_string(comm.rank()) + ".olc")).string();
    a.save_checkpoint(mine);  // collective under sharding
    CHECK(a.optimizer().is_sharded());
    CHECK(a.optimizer_state_bytes() == shard_bytes);
    // Loaded into a model whose optimizer is sharded: the whole state replaces the shard.
    a.load_checkpoint(mine);
    CHECK(!a.optimizer().is_sharded());
    std::vector<std::vector<double>> state;
    for (const auto& s : a.optimizer().state()) state.emplace_back(s.begin(), s.end());
    const double state_error = weights_error(state, state_ref);
    INFO("rank " << comm.rank() << ": saved state vs unsharded " << state_error);
    CHECK(state_error < 1e-9);
    CHECK(a.optimizer_state_bytes() == 2 * 2410 * sizeof(double));
  }

  comm.barrier();
  if (comm.rank() == 0) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
}

TEST_CASE("nn ZeRO-1 and buckets under exec::local: no effect") {
  const FirstDigits<double> d = load_first_digits<double>();
  nn::FitOptions options{.epochs = 2, .batch_size = 32, .seed = 5};
  nn::Sequential<double> plain, marked;
  mlp(plain, nn::Adam{.learning_rate = 1e-2});
  mlp(marked, nn::Adam{.learning_rate = 1e-2});
  plain.fit(d.X, d.y, options);
  options.shard_optimizer_state = true;
  options.bucket_bytes = 1;
  marked.fit(d.X, d.y, options);
  CHECK(marked.get_weights() == plain.get_weights());
  CHECK(!marked.optimizer().is_sharded());
  CHECK(marked.optimizer_state_bytes() == 2 * 2410 * sizeof(double));
}

TEST_CASE("nn ZeRO-1: optimizer memory per rank of the benchmark MLP (784-512-512-10, Adam)") {
  const exec::mpi comm = world();
  const int ranks = comm.size();
  // 64 rows of 784 values in [0, 1) and labels 0..9, the same on every rank.
  Matrix<float> X(64, 784);
  Labels y(64);
  for (index_t i = 0; i < X.rows(); ++i) {
    for (index_t j = 0; j < X.cols(); ++j) {
      X(i, j) = static_cast<float>((i * 31 + j * 17) % 101) / 101.0f;
    }
    y(i) = i % 10;
  }
  auto make = [&] {
    nn::Sequential<float, exec::mpi> model(comm, nn::Input({784}), nn::Dense(512, "relu"),
                                           nn::Dense(512, "relu"), nn::Dense(10));
    model.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
    return model;
  };
  auto unsharded = make();
  unsharded.fit(X, y, {.epochs = 1, .batch_size = 32, .replicated = true});
  auto sharded = make();
  sharded.fit(X, y, {.epochs = 1, .batch_size = 32, .replicated = true,
                     .shard_optimizer_state = true});
  // 784*512+512 + 512*512+512 + 512*10+10 parameters, two Adam moments of 4 bytes each.
  constexpr index_t n = 401920 + 262656 + 5130;
  CHECK(sharded.count_params() == n);
  CHECK(unsharded.optimizer_state_bytes() == std::size_t{2 * 4 * n});
  CHECK(sharded.optimizer_state_bytes() == expected_shard_bytes<float>(n, 2, comm.rank(), ranks));
  CHECK(weights_error(sharded.get_weights(), unsharded.get_weights()) < 1e-5);
  const std::vector<double> bytes =
      comm.allgatherv(std::span<const double>(std::vector<double>{
          static_cast<double>(sharded.optimizer_state_bytes())}));
  if (comm.rank() == 0) {
    std::string per_rank;
    for (const double b : bytes) per_rank += " " + std::to_string(static_cast<std::size_t>(b));
    MESSAGE("784-512-512-10 float Adam, " << ranks << " ranks: optimizer bytes per rank"
                                          << per_rank << " (unsharded "
                                          << unsharded.optimizer_state_bytes() << ")");
  }
}
