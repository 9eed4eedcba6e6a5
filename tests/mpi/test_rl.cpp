// rl::PPO, rl::A2C and rl::DQN under exec::mpi, on 2 and 3 ranks: each rank steps its own
// copies of CartPole-v1 (global copies [offset, offset + n), seeded through first_copy),
// minibatches are cut from the global rollout (DQN: drawn from the global replay buffer) and
// gradients summed over the ranks. The reference is one process
// (exec::local) stepping all 6 copies with the same parameters, computed on every rank: the
// weights and the logged History must agree to the rounding of the gradient sums (double).
// Minibatches of 20 rows out of 6 x 10 = 60 spread unevenly over the ranks.
//
// Checks here use CHECK, never REQUIRE: a REQUIRE that stops one rank's test case early would
// leave the other ranks waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "onelearn/exec/mpi.hpp"
#include "onelearn/nn/checkpoint.hpp"
#include "onelearn/rl/agents/a2c.hpp"
#include "onelearn/rl/agents/dqn.hpp"
#include "onelearn/rl/agents/ppo.hpp"
#include "onelearn/rl/envs/cartpole.hpp"
#include "onelearn/rl/envs/cartpole_vector.hpp"
#include "onelearn/rl/envs/pendulum.hpp"
#include "onelearn/rl/evaluate.hpp"
#include "onelearn/rl/vector_env.hpp"

namespace {

namespace rl = onelearn::rl;
using onelearn::index_t;

constexpr index_t global_copies = 6;

/// This rank's share of the copies (uneven for 4 or 5 ranks) and its first global copy.
std::pair<index_t, index_t> my_copies(const onelearn::exec::mpi& world) {
  const index_t r = world.rank(), p = world.size();
  const index_t n = global_copies / p + (r < global_copies % p ? 1 : 0);
  index_t first = 0;
  for (index_t q = 0; q < r; ++q) first += global_copies / p + (q < global_copies % p ? 1 : 0);
  return {n, first};
}

template <class A, class B>
double weight_error(A& a, B& b) {
  const auto wa = a.get_weights();
  const auto wb = b.get_weights();
  double worst = wa.size() == wb.size() ? 0.0 : 1e300;
  for (std::size_t i = 0; i < std::min(wa.size(), wb.size()); ++i) {
    for (std::size_t k = 0; k < std::min(wa[i].size(), wb[i].size()); ++k) {
      worst = std::max(worst, std::abs(wa[i][k] - wb[i][k]));
    }
  }
  return worst;
}

double history_error(const onelearn::nn::History& a, const onelearn::nn::History& b) {
  if (a.epoch != b.epoch || a.history.size() != b.history.size()) return 1e300;
  double worst = 0;
  for (const auto& [key, values] : a.history) {
    const auto it = b.history.find(key);
    if (it == b.history.end() || it->second.size() != values.size()) return 1e300;
    for (std::size_t i = 0; i < values.size(); ++i) {
      worst = std::max(worst, std::abs(values[i] - it->second[i]) / std::max(1.0, std::abs(values[i])));
    }
  }
  return worst;
}

/// Asks the agent to stop after `iterations` iterations (on one rank: learn stops them all).
struct StopAfter {
  int iterations;
  int rank_that_asks;
  template <class Agent, class Logs>
  void on_epoch_end(Agent& agent, int iteration, const Logs& /*logs*/) const {
    if (iteration + 1 >= iterations && agent.execution_policy().rank() == rank_that_asks) agent.stop_training();
  }
};

/// A directory every rank sees (rank 0's random name), removed by rank 0 at the end.
class SharedDir {
 public:
  explicit SharedDir(const onelearn::exec::mpi& world) : world_(world) {
    std::vector<std::int64_t> tag{static_cast<std::int64_t>(std::random_device{}())};
    world.broadcast(std::span<std::int64_t>(tag), 0);
    path_ = std::filesystem::temp_directory_path() /
            ("onelearn_rl_np" + std::to_string(world.size()) + "_" + std::to_string(tag[0]));
    if (world.rank() == 0) std::filesystem::create_directories(path_);
    world.barrier();
  }
  SharedDir(const SharedDir&) = delete;
  SharedDir& operator=(const SharedDir&) = delete;
  ~SharedDir() {
    world_.barrier();
    std::error_code ignored;
    if (world_.rank() == 0) std::filesystem::remove_all(path_, ignored);
  }
  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  const onelearn::exec::mpi& world_;
  std::filesystem::path path_;
};

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

/// A run interrupted after `stop_at` iterations (nn::ModelCheckpoint on rank 0 writing every
/// iteration, the stop asked on the last rank), loaded into a fresh agent and finished, against
/// the same run never interrupted: the same bits (the same ranks sum the same gradients in the
/// same order), the same History. Then a direct, collective save_checkpoint of the finished
/// agent loads back into another fresh agent.
template <class Make>
void check_resume(const onelearn::exec::mpi& world, const SharedDir& dir, const std::string& name,
                  std::int64_t total, int stop_at, Make make) {
  auto whole = make();
  whole.learn(total);

  const auto file = dir / (name + ".olrl");
  {
    auto first = make();
    first.learn(total, onelearn::nn::ModelCheckpoint(file), StopAfter{stop_at, world.size() - 1});
    CHECK(first.iterations_done() == stop_at);
  }
  auto resumed = make();
  resumed.load_checkpoint(file);
  CHECK(resumed.iterations_done() == stop_at);
  resumed.learn(total);
  INFO(name << ", rank " << world.rank() << " of " << world.size());
  CHECK(resumed.steps_done() == whole.steps_done());
  CHECK(resumed.get_weights() == whole.get_weights());
  CHECK(resumed.history() == whole.history());
  CHECK(resumed.episodes_finished() == whole.episodes_finished());

  const auto direct = dir / (name + "_direct.olrl");
  resumed.save_checkpoint(direct);  // collective: every rank calls it
  auto loaded = make();
  loaded.load_checkpoint(direct);
  CHECK(loaded.get_weights() == whole.get_weights());
  CHECK(loaded.steps_done() == whole.steps_done());
}

}  // namespace

TEST_CASE("distributed PPO equals one process stepping every copy") {
  const onelearn::exec::mpi world(MPI_COMM_WORLD);
  const auto [n, first] = my_copies(world);
  const rl::PPOParams p{.n_steps = 10, .batch_size = 20, .n_epochs = 3, .learning_rate = 3e-3,
                        .learning_rate_schedule = "linear", .gamma = 0.98, .gae_lambda = 0.8,
                        .ent_coef = 0.01, .hidden_units = 16, .seed = 21};
  const std::int64_t total = global_copies * 10 * 8;  // 8 iterations

  rl::PPO<rl::CartPoleVectorEnv<double>, onelearn::exec::mpi> distributed(
      rl::CartPoleVectorEnv<double>(n, {}, first), p, world);
  distributed.learn(total);
  rl::PPO reference(rl::CartPoleVectorEnv<double>(global_copies), p);
  reference.learn(total);

  const double w = weight_error(distributed, reference);
  const double h = history_error(distributed.history(), reference.history());
  INFO("rank " << world.rank() << " of " << world.size() << ": weights differ by " << w << ", logs by " << h);
  CHECK(distributed.steps_done() == reference.steps_done());
  CHECK(w < 1e-10);
  CHECK(h < 1e-10);
  CHECK(distributed.episodes_finished() == reference.episodes_finished());
}

TEST_CASE("distributed PPO with a Gaussian policy (Pendulum-v1) equals one process") {
  // Box actions: log_std's gradient joins the step's one reduction of the networks' gradients.
  const onelearn::exec::mpi world(MPI_COMM_WORLD);
  const auto [n, first] = my_copies(world);
  using Envs = rl::VectorEnv<rl::Pendulum<double>>;
  const rl::PPOParams p{.n_steps = 10, .batch_size = 20, .n_epochs = 2, .learning_rate = 1e-3,
                        .gamma = 0.9, .hidden_units = 16, .seed = 13};
  const std::int64_t total = global_copies * 10 * 4;
  rl::PPO<Envs, onelearn::exec::mpi> distributed(Envs(n, rl::Pendulum<double>(), first), p, world);
  distributed.learn(total);
  rl::PPO reference(Envs(global_copies), p);
  reference.learn(total);
  const double w = weight_error(distributed, reference);
  const double h = history_error(distributed.history(), reference.history());
  INFO("rank " << world.rank() << " of " << world.size() << ": weights differ by " << w << ", logs by " << h);
  CHECK(w < 1e-10);
  CHECK(h < 1e-10);
  CHECK(distributed.log_std()(0) != reference.get_params().log_std_init);  // it was trained
}

TEST_CASE("distributed DQN equals one process stepping every copy") {
  // A buffer of 50 rows (not a multiple of the 6 copies) wraps around several times; every
  // rank draws the same minibatch of 16 rows and trains on those its copies wrote.
  const onelearn::exec::mpi world(MPI_COMM_WORLD);
  const auto [n, first] = my_copies(world);
  const rl::DQNParams p{.buffer_size = 50, .learning_starts = 30, .batch_size = 16,
                        .learning_rate = 1e-3, .train_freq = 2, .gradient_steps = 2,
                        .target_update_interval = 24, .exploration_fraction = 0.5,
                        .hidden_units = 16, .seed = 9};
  const std::int64_t total = global_copies * 2 * 30;  // 30 iterations

  rl::DQN<rl::CartPoleVectorEnv<double>, onelearn::exec::mpi> distributed(
      rl::CartPoleVectorEnv<double>(n, {}, first), p, world);
  distributed.learn(total);
  rl::DQN reference(rl::CartPoleVectorEnv<double>(global_copies), p);
  reference.learn(total);

  const double w = weight_error(distributed, reference);
  const double h = history_error(distributed.history(), reference.history());
  INFO("rank " << world.rank() << " of " << world.size() << ": weights differ by " << w << ", logs by " << h);
  CHECK(distributed.steps_done() == reference.steps_done());
  CHECK(reference.replay_buffer().full == 1);
  CHECK(w < 1e-10);
  CHECK(h < 1e-10);
  CHECK(distributed.episodes_finished() == reference.episodes_finished());
}

TEST_CASE("distributed evaluation steps a share of the copies and gives one process's episodes") {
  const onelearn::exec::mpi world(MPI_COMM_WORLD);
  const auto [n, first] = my_copies(world);
  const rl::PPOParams p{.n_steps = 10, .batch_size = 20, .n_epochs = 2, .learning_rate = 3e-3,
                        .hidden_units = 16, .seed = 4};
  // A policy that has learnt a little, so that episodes differ in length; the same weights on
  // every rank and in the reference.
  rl::PPO reference(rl::CartPoleVectorEnv<double>(global_copies), p);
  reference.learn(global_copies * 10 * 6);
  rl::PPO<rl::CartPoleVectorEnv<double>, onelearn::exec::mpi> distributed(
      rl::CartPoleVectorEnv<double>(n, {}, first), p, world);
  distributed.set_weights(reference.get_weights());

  auto check_same = [](const rl::EvaluationResult& mine, const rl::EvaluationResult& whole) {
    CHECK(mine.returns == whole.returns);
    CHECK(mine.lengths == whole.lengths);
    CHECK(mine.mean_return == whole.mean_return);
    CHECK(mine.std_return == whole.std_return);
  };
  // 7 copies (uneven over 2 and 3 ranks) and 23 episodes (uneven over the copies).
  rl::CartPoleVectorEnv<double> copies(7);
  const auto whole = reference.evaluate_episodes(copies, 23, 5);
  CHECK(whole.returns.size() == 23);
  CHECK(std::adjacent_find(whole.lengths.begin(), whole.lengths.end(),
                           std::not_equal_to<>()) != whole.lengths.end());  // not all equal
  check_same(distributed.evaluate_episodes(copies, 23, 5), whole);
  // Fewer copies than ranks: a rank without copies still joins the gather.
  rl::CartPoleVectorEnv<double> two(2);
  check_same(distributed.evaluate_episodes(two, 5, 8), reference.evaluate_episodes(two, 5, 8));
  // The generic VectorEnv slices too; a single environment is evaluated whole on every rank.
  rl::VectorEnv<rl::CartPole<double>> generic(5);
  check_same(distributed.evaluate_episodes(generic, 11, 3),
             reference.evaluate_episodes(generic, 11, 3));
  rl::CartPole<double> single;
  check_same(distributed.evaluate_episodes(single, 4, 3), reference.evaluate_episodes(single, 4, 3));

  // Another number of episodes on one rank: the same error on every rank, not a hang.
  std::string message;
  try {
    (void)distributed.evaluate_episodes(copies, world.rank() == 1 ? 24 : 23, 5);
  } catch (const onelearn::invalid_argument& e) {
    message = e.what();
  }
  CAPTURE(message);
  CHECK(message.find("PPO.evaluate: ranks disagree on episodes") != std::string::npos);
}

TEST_CASE("distributed A2C equals one process; bad parameters fail on every rank") {
  const onelearn::exec::mpi world(MPI_COMM_WORLD);
  const auto [n, first] = my_copies(world);
  const rl::A2CParams p{.n_steps = 5, .learning_rate = 7e-4, .hidden_units = 16, .seed = 5};
  rl::A2C<rl::CartPoleVectorEnv<double>, onelearn::exec::mpi> distributed(
      rl::CartPoleVectorEnv<double>(n, {}, first), p, world);
  distributed.learn(global_copies * 5 * 20);
  rl::A2C reference(rl::CartPoleVectorEnv<double>(global_copies), p);
  reference.learn(global_copies * 5 * 20);
  CHECK(weight_error(distributed, reference) < 1e-10);

  // Another gamma on one rank: a disagreement, named on every rank; out of range on every
  // rank: the range error, on every rank.
  for (const bool everywhere : {false, true}) {
    rl::A2CParams bad = p;
    if (everywhere || world.rank() == 1) bad.gamma = 1.5;
    std::string message;
    try {
      rl::A2C<rl::CartPoleVectorEnv<double>, onelearn::exec::mpi> a(rl::CartPoleVectorEnv<double>(n, {}, first), bad, world);
    } catch (const onelearn::invalid_argument& e) {
      message = e.what();
    }
    CAPTURE(message);
    CHECK(message.find(everywhere ? "gamma must be in [0, 1]; got 1.5" : "A2C.A2C: ranks disagree on gamma") !=
          std::string::npos);
  }
}

TEST_CASE("distributed checkpoints resume learn() to the same bits (PPO, DQN); bad resumes fail on every rank") {
  const onelearn::exec::mpi world(MPI_COMM_WORLD);
  const auto [n, first] = my_copies(world);
  const SharedDir dir(world);
  using PPO = rl::PPO<rl::CartPoleVectorEnv<double>, onelearn::exec::mpi>;
  using DQN = rl::DQN<rl::CartPoleVectorEnv<double>, onelearn::exec::mpi>;
  const rl::PPOParams p{.n_steps = 10, .batch_size = 20, .n_epochs = 2, .learning_rate = 3e-3,
                        .learning_rate_schedule = "linear", .hidden_units = 16, .seed = 4};
  // The DQN buffer (50 rows, not a multiple of the 6 copies) has wrapped by the interruption,
  // and its rows are spread over the ranks' sections.
  const rl::DQNParams d{.buffer_size = 50, .learning_starts = 30, .batch_size = 16, .learning_rate = 1e-3,
                        .train_freq = 2, .gradient_steps = 2, .target_update_interval = 24,
                        .exploration_fraction = 0.5, .hidden_units = 16, .seed = 2};
  const auto make_ppo = [&, n = n, first = first] { return PPO(rl::CartPoleVectorEnv<double>(n, {}, first), p, world); };
  const auto make_dqn = [&, n = n, first = first] { return DQN(rl::CartPoleVectorEnv<double>(n, {}, first), d, world); };
  check_resume(world, dir, "ppo", global_copies * 10 * 8, 3, make_ppo);
  check_resume(world, dir, "dqn", global_copies * 2 * 30, 11, make_dqn);

  // The file read on rank 0 alone reaches every rank: a missing one is an io_error everywhere.
  auto fresh = make_ppo();
  CHECK(message_of([&] { fresh.load_checkpoint(dir / "missing.olrl"); }).find("on rank 0: load_checkpoint") !=
        std::string::npos);
  CHECK_THROWS_AS(fresh.load_checkpoint(dir / "missing.olrl"), onelearn::io_error);
  // Ranks asking for different files: named on every rank, before anything is read or written.
  const auto own = dir / ("rank" + std::to_string(world.rank()) + ".olrl");
  const std::string paths = message_of([&] { fresh.load_checkpoint(own); });
  CAPTURE(paths);
  CHECK(paths.find("PPO.load_checkpoint: ranks disagree on path") != std::string::npos);
  CHECK(message_of([&] { fresh.save_checkpoint(own); }).find("PPO.save_checkpoint: ranks disagree on path") !=
        std::string::npos);
  CHECK(!std::filesystem::exists(own));

  // One process with every copy cannot take a file whose copies are split over the ranks (its
  // environments would lack the other ranks' state); the agent is left as it was.
  rl::PPO<rl::CartPoleVectorEnv<double>> single(rl::CartPoleVectorEnv<double>(global_copies), p);
  const auto before = single.get_weights();
  const std::string split = message_of([&] { single.load_checkpoint(dir / "ppo.olrl"); });
  CAPTURE(split);
  CHECK(split.find("expected the copies split over 1 rank(s) as [0, 6) (this run's), found " +
                   std::to_string(world.size()) + " as [0, ") != std::string::npos);
  CHECK(single.get_weights() == before);
  CHECK(single.steps_done() == 0);

  // And the other way: a one-process checkpoint is refused on every rank, by the same rule.
  const auto local_file = dir / ("local" + std::to_string(world.rank()) + ".olrl");
  single.learn(global_copies * 10);
  single.save_checkpoint(local_file);
  world.barrier();
  const auto rank0_file = dir / "local0.olrl";
  auto distributed = make_ppo();
  const std::string refused = message_of([&] { distributed.load_checkpoint(rank0_file); });
  CAPTURE(refused);
  CHECK(refused.find("found 1 as [0, 6) (the checkpoint's)") != std::string::npos);
  CHECK(distributed.steps_done() == 0);
}
