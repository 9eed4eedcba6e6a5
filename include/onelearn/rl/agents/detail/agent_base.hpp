#pragma once
// AgentBase: what every agent (PPO, A2C, REINFORCE, DQN) has besides its networks and its
// update: the vectorised environments and the observations in flight, the step and iteration
// counts, the episode statistics, the History, the Keras-style learn() with callbacks, the
// members nn's callbacks call on a "model" (stop_training, get/set_weights, history,
// execution_policy, save_checkpoint, save_weights), evaluate(), and checkpoints (the agent lists
// the state all ranks share in visit_networks / visit_extra and its per-rank state in
// visit_rank_extra; agent_state.hpp writes and reads it).
//
// Distributed: the ranks' copy counts are gathered once; rank r's copies are the global copies
// [offset, offset + n_local), offset the sum of the counts of the ranks before it. Its
// environments must have been made with first_copy = offset for their seed streams to be those
// of one process stepping all copies (VectorEnv / CartPoleVectorEnv's first_copy).

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/nn/callbacks.hpp"
#include "onelearn/rl/agents/detail/agent_state.hpp"
#include "onelearn/rl/detail/episode_stats.hpp"
#include "onelearn/rl/detail/learn_loop.hpp"
#include "onelearn/rl/evaluate.hpp"
#include "onelearn/rl/vector_env.hpp"

namespace onelearn::rl::detail {

/// Throws onelearn::invalid_argument naming the agent, the parameter, its value and the rule.
inline void check_param(std::string_view agent, std::string_view name, double value, bool ok,
                        std::string_view rule) {
  if (ok) return;
  std::string v = std::to_string(value);
  if (value == std::floor(value) && std::abs(value) < 1e15) v = std::to_string(static_cast<long long>(value));
  throw onelearn::invalid_argument(std::string(agent) + ": " + std::string(name) + " must be " +
                                   std::string(rule) + "; got " + v);
}

template <class Derived, class Envs, class Exec, class Params>
class AgentBase {
 public:
  using value_type = typename Envs::value_type;
  using T = value_type;
  using params_type = Params;
  using env_type = Envs;

  /// Trains until `total_steps` environment steps (over all copies and ranks) are done, counting
  /// the steps of earlier learn() calls and of a loaded checkpoint (so learn(N) after an
  /// interruption finishes the same run). The last iteration may pass total_steps. Callbacks:
  /// see rl/detail/learn_loop.hpp. Returns the History (one entry per iteration).
  template <class... Callbacks>
  const nn::History& learn(std::int64_t total_steps, Callbacks&&... callbacks) {
    check_param(Derived::name, "total_steps", static_cast<double>(total_steps), total_steps >= 1, ">= 1");
    run_learn(derived(), total_steps, callbacks...);
    return history_;
  }

  /// The mean return of `episodes` episodes of the deterministic policy on `env` (an
  /// Environment or a vectorised one; rl/evaluate.hpp), the first reset seeded with `seed`.
  template <class Env>
  double evaluate(Env& env, index_t episodes, std::uint64_t seed = 0) {
    return evaluate_episodes(env, episodes, seed).mean_return;
  }
  /// Under a distributed policy a vectorised environment that can be sliced is split over the
  /// ranks (each steps its share of the copies; rl/evaluate.hpp), with one process's result.
  template <class Env>
  EvaluationResult evaluate_episodes(Env& env, index_t episodes, std::uint64_t seed = 0) {
    const auto act = [&](const Matrix<T>& obs) { return derived().act(obs); };
    if constexpr (Exec::is_distributed && requires(const Env& e) { e.slice(index_t{}, index_t{}); }) {
      return evaluate_split(act, env, episodes, seed);
    } else {
      return evaluate_policy(act, env, episodes, seed);
    }
  }

  [[nodiscard]] const Params& get_params() const noexcept { return params_; }
  [[nodiscard]] std::int64_t steps_done() const noexcept { return steps_done_; }
  [[nodiscard]] int iterations_done() const noexcept { return iterations_; }
  [[nodiscard]] std::int64_t episodes_finished() const noexcept { return stats_.episodes(); }
  /// Mean return of the last 100 training episodes (0 before the first ends).
  [[nodiscard]] double mean_episode_return() const { return stats_.mean_return(); }
  [[nodiscard]] const nn::History& history() const noexcept { return history_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }
  [[nodiscard]] Envs& envs() noexcept { return envs_; }

  // What nn's callbacks call on their model.
  void stop_training() noexcept { stop_ = true; }
  [[nodiscard]] bool stop_requested() const noexcept { return stop_; }
  [[nodiscard]] const nn::FitParams& fit_params() const noexcept { return fit_params_; }
  [[nodiscard]] int verbose() const noexcept { return params_.verbose; }

  /// Every trainable buffer, copied (nn::EarlyStopping's restore_best_weights uses these).
  [[nodiscard]] std::vector<std::vector<T>> get_weights() {
    std::vector<std::vector<T>> out;
    for (const auto& s : derived().parameter_spans()) out.emplace_back(s.begin(), s.end());
    return out;
  }
  void set_weights(const std::vector<std::vector<T>>& weights) {
    const auto spans = derived().parameter_spans();
    if (weights.size() != spans.size()) {
      throw shape_error(std::string(Derived::name) + ".set_weights: expected " + std::to_string(spans.size()) +
                        " buffers, found " + std::to_string(weights.size()));
    }
    for (std::size_t i = 0; i < spans.size(); ++i) {
      if (weights[i].size() != spans[i].size()) {
        throw shape_error(std::string(Derived::name) + ".set_weights: expected buffer " + std::to_string(i) +
                          " of " + std::to_string(spans[i].size()) + " values, found " +
                          std::to_string(weights[i].size()));
      }
    }
    for (std::size_t i = 0; i < spans.size(); ++i) std::copy(weights[i].begin(), weights[i].end(), spans[i].begin());
  }

  /// The policy network's weights (nn/weights_io.hpp; load them into a Sequential of the same
  /// layers, e.g. for serving). nn::ModelCheckpoint's save_weights_only writes this.
  void save_weights(const std::filesystem::path& path) { derived().policy().save_weights(path); }

  /// Everything learn() needs to continue exactly (agent_state.hpp). Environments must provide
  /// save_state()/load_state() (CartPoleVectorEnv does).
  /// Under a distributed policy the file holds every rank's part (its copies' environments and
  /// observations, DQN's rows) and is written by one rank. Called directly, save_checkpoint is
  /// collective: every rank calls it with the same path, and rank 0 writes (an error there is
  /// raised on every rank). Inside learn(), nn::ModelCheckpoint's call on rank 0 alone is
  /// enough: the ranks' parts were gathered before the iteration's epoch-end callbacks.
  void save_checkpoint(const std::filesystem::path& path) {
    check_checkpointable("save_checkpoint");
    if constexpr (Exec::is_distributed) {
      if (gathered_) {
        write_checkpoint(path, *gathered_);
        return;
      }
      check_same_path("save_checkpoint", path);
      const std::vector<RankSection> all = gather_sections();
      exec_.propagate_errors([&] {
        if (exec_.rank() == 0) write_checkpoint(path, all);
      });
    } else {
      write_checkpoint(path, {own_section()});
    }
  }
  /// Restores a save_checkpoint file into this agent, constructed with the same Params and
  /// environments (under a distributed policy: on as many ranks, each with the copies it had);
  /// learn(total_steps) then continues the saved run bit for bit. Everything is read and
  /// checked before the agent changes, so a bad file leaves it as it was. Distributed: collective;
  /// rank 0 reads the file and sends it to the others (the file need not be visible to them),
  /// and an error on any rank is raised on every rank.
  void load_checkpoint(const std::filesystem::path& path) {
    check_checkpointable("load_checkpoint");
    std::string body;
    if constexpr (Exec::is_distributed) {
      check_same_path("load_checkpoint", path);
      exec_.propagate_errors([&] {
        if (exec_.rank() == 0) body = read_agent_file<T>(path);
      });
      std::int64_t length = static_cast<std::int64_t>(body.size());
      exec_.broadcast(std::span<std::int64_t>(&length, 1), 0);
      body.resize(static_cast<std::size_t>(length));
      exec_.broadcast(std::span<char>(body.data(), body.size()), 0);
    } else {
      body = read_agent_file<T>(path);
    }
    std::string mine;
    exec_.propagate_errors([&] {
      StateReader dry(body, false);
      visit_shared(dry);
      mine = own_section_of(dry.sections());
      dry.finish();
      StateReader dry_local(mine, false);
      visit_rank(dry_local);
      dry_local.finish();
    });
    StateReader apply(body, true);
    visit_shared(apply);
    StateReader apply_local(mine, true);
    visit_rank(apply_local);
  }

  /// Runs `hooks` (learn's epoch-end callbacks) with every rank's part of the state gathered
  /// on every rank, so that a save_checkpoint inside them (nn::ModelCheckpoint, on rank 0
  /// only) needs no collective. Collective.
  template <class Hooks>
  void with_gathered_state(Hooks&& hooks) {
    gathered_ = gather_sections();
    struct Release {
      std::optional<std::vector<RankSection>>& held;
      ~Release() { held.reset(); }
    } release{gathered_};
    std::forward<Hooks>(hooks)();
  }

  // The learn loop's interface (rl/detail/learn_loop.hpp).
  void begin_learn(std::int64_t total_steps) {
    total_steps_ = total_steps;
    stop_ = false;
    ensure_started();
    fit_params_.epochs = static_cast<int>(iterations_ + (std::max<std::int64_t>(total_steps - steps_done_, 0) +
                                                         derived().steps_per_iteration() - 1) /
                                                            derived().steps_per_iteration());
    fit_params_.steps = 1;
    fit_params_.initial_epoch = iterations_;
    fit_params_.seed = params_.seed;
    fit_params_.verbose = params_.verbose;
  }
  void record_history(int iteration, const nn::Logs& logs) {
    history_.epoch.push_back(iteration);
    for (const auto& [key, value] : logs) history_.history[key].push_back(value);
  }

 protected:
  AgentBase(Envs envs, const Params& params, const Exec& exec)
      : envs_(std::move(envs)), params_(params), exec_(exec) {
    static_assert(params::check_params<Params>());
    // Ranks with another value would train apart and fall out of step in the all-reduces:
    // compared first (verbose aside), so that a disagreement is named before a range error.
    onelearn::detail::check_same_params(std::string(Derived::name) + "." + std::string(Derived::name),
                                        exec_, params);
    exec_.propagate_errors([&] {
      check_param(Derived::name, "gamma", params.gamma, params.gamma >= 0 && params.gamma <= 1, "in [0, 1]");
      check_param(Derived::name, "verbose", params.verbose, params.verbose == 0 || params.verbose == 1, "0 or 1");
      Derived::check_params(params);
    });
    n_local_ = envs_.size();
    const std::int64_t mine = n_local_;
    const std::vector<std::int64_t> counts = exec_.allgatherv(std::span<const std::int64_t>(&mine, 1));
    n_global_ = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      if (static_cast<int>(r) < exec_.rank()) offset_ += counts[r];
      n_global_ += counts[r];
    }
    copy_counts_ = counts;
    episode_starts_.setConstant(n_local_, true);
    obs_.setZero(n_local_, envs_.observation_size());
  }

  Derived& derived() noexcept { return static_cast<Derived&>(*this); }

  void ensure_started() {
    if (started_) return;
    obs_ = envs_.reset(params_.seed);
    episode_starts_.setConstant(n_local_, true);
    started_ = true;
  }

  template <class Actions>
  const auto& step_envs(const Actions& actions) {
    return envs_.step(actions);
  }

  /// After every vectorised step: episodes that ended (keyed for the distributed order), the
  /// next observations, the step count.
  template <class Step>
  void after_step(const Step& result, std::int64_t step) {
    for (index_t i = 0; i < n_local_; ++i) {
      episode_starts_(i) = result.done(i);
      if (result.done(i)) {
        stats_.record(static_cast<double>(step) * static_cast<double>(n_global_) + static_cast<double>(offset_ + i),
                      static_cast<double>(result.episode_returns(i)), static_cast<double>(result.episode_lengths(i)));
      }
    }
    obs_ = result.observations;
    steps_done_ += n_global_;
  }

  /// After an iteration's environment steps: the logs start with the episode statistics (over
  /// all ranks), so that the progress bar shows the return first.
  void log_episodes(nn::Logs& logs) {
    logs.clear();
    stats_.flush(exec_);
    if (!stats_.empty()) {
      logs.set("episode_return", stats_.mean_return());
      logs.set("episode_length", stats_.mean_length());
    }
    logs.set("steps", static_cast<double>(steps_done_));
  }

  /// The end of an iteration.
  void finish_iteration() { ++iterations_; }

  /// Every rank's number of copies, in rank order.
  [[nodiscard]] const std::vector<std::int64_t>& copy_counts() const noexcept { return copy_counts_; }

  void check_observations(std::string_view where, const MatrixRef<T>& X) const {
    if (X.cols() != envs_.observation_size()) {
      throw shape_error(std::string(Derived::name) + "." + std::string(where) + ": expected observations with " +
                        std::to_string(envs_.observation_size()) + " columns, found " + std::to_string(X.cols()));
    }
    for (index_t i = 0; i < X.size(); ++i) {
      if (!std::isfinite(X.data()[i])) {
        throw onelearn::invalid_argument(std::string(Derived::name) + "." + std::string(where) +
                                         ": observations must be finite; found " + std::to_string(X.data()[i]));
      }
    }
  }

  Envs envs_;
  Params params_;
  Exec exec_;
  index_t n_local_ = 0, n_global_ = 0, offset_ = 0;
  Matrix<T> obs_;
  Flags episode_starts_;
  std::int64_t steps_done_ = 0, total_steps_ = 0;
  int iterations_ = 0;
  bool started_ = false, stop_ = false;
  EpisodeStats stats_;
  nn::History history_;
  nn::FitParams fit_params_;

 private:
  std::vector<std::int64_t> copy_counts_;                 // every rank's copies, in rank order
  std::optional<std::vector<RankSection>> gathered_;      // set by with_gathered_state
  void check_checkpointable(const char* where) const {
    if constexpr (!requires(const Envs& e) { e.save_state(); }) {
      throw onelearn::invalid_argument(std::string(Derived::name) + "." + where +
                                       ": the environments must provide save_state() and load_state() "
                                       "for an exact checkpoint (CartPoleVectorEnv does)");
    }
  }

  /// A collective save or load uses rank 0's path: another path on any rank is an error on
  /// every rank rather than a file silently not the one that rank asked for.
  void check_same_path(const char* where, const std::filesystem::path& path) const {
    exec_.check_same_values(std::string(Derived::name) + "." + where,
                            std::array{exec::NamedValue{"path", path.string()}});
  }

  void write_checkpoint(const std::filesystem::path& path, const std::vector<RankSection>& all) {
    StateWriter w(static_cast<T*>(nullptr));
    visit_shared(w);
    w.sections(all);
    w.finish(path);
  }

  /// This rank's part of the state (visit_rank), tagged with its global copies.
  RankSection own_section() {
    StateWriter w;
    visit_rank(w);
    return {static_cast<std::int64_t>(offset_), static_cast<std::int64_t>(n_local_), w.take_bytes()};
  }

  /// Every rank's section, on every rank (one all-gather of the bytes packed into 64-bit words).
  std::vector<RankSection> gather_sections() {
    std::string mine;  // a user environment's save_state may throw: on every rank, not a hang
    exec_.propagate_errors([&] { mine = own_section().bytes; });
    std::vector<std::int64_t> words(1 + (mine.size() + 7) / 8, 0);
    words[0] = static_cast<std::int64_t>(mine.size());
    std::memcpy(words.data() + 1, mine.data(), mine.size());
    const std::vector<std::int64_t> all = exec_.allgatherv(std::span<const std::int64_t>(words));
    std::vector<RankSection> out;
    std::size_t at = 0;
    std::int64_t first = 0;
    for (const std::int64_t copies : copy_counts_) {
      const auto size = static_cast<std::size_t>(all[at]);
      std::string bytes(size, '\0');
      std::memcpy(bytes.data(), all.data() + at + 1, size);
      out.push_back({first, copies, std::move(bytes)});
      at += 1 + (size + 7) / 8;
      first += copies;
    }
    return out;
  }

  /// The bytes of this rank's section. The file's copies must be split over the ranks as this
  /// run's are: a rank's environments hold the state of its own copies only.
  std::string own_section_of(std::vector<RankSection> file) const {
    const auto describe = [](const std::vector<std::pair<std::int64_t, std::int64_t>>& split) {
      std::string text;
      for (const auto& [first, copies] : split) {
        text += (text.empty() ? "" : " ") + std::string("[") + std::to_string(first) + ", " +
                std::to_string(first + copies) + ")";
      }
      return text;
    };
    std::vector<std::pair<std::int64_t, std::int64_t>> found, expected;
    for (const auto& s : file) found.emplace_back(s.first_copy, s.copies);
    std::int64_t first = 0;
    for (const std::int64_t copies : copy_counts_) {
      expected.emplace_back(first, copies);
      first += copies;
    }
    if (found != expected) {
      throw onelearn::invalid_argument(std::string(Derived::name) + ".load_checkpoint: expected the copies split over " +
                                       std::to_string(expected.size()) + " rank(s) as " + describe(expected) +
                                       " (this run's), found " + std::to_string(found.size()) + " as " +
                                       describe(found) + " (the checkpoint's); resume on as many ranks, "
                                       "each with the copies it had");
    }
    return std::move(file[static_cast<std::size_t>(exec_.rank())].bytes);
  }

  /// evaluate_episodes over the ranks: rank r steps its share of env's copies (a slice seeded
  /// as they are), and gather_episodes puts every rank's episodes in the order one process
  /// counts them. The ranks must pass the same episodes, seed and number of copies (checked);
  /// an error on one rank (the policy's, the environment's) is raised on every rank.
  template <class Env, class Act>
  EvaluationResult evaluate_split(const Act& act, const Env& env, index_t episodes, std::uint64_t seed) {
    const std::string where = std::string(Derived::name) + ".evaluate";
    const index_t total = env.size();
    exec_.check_same_values(where, std::array{exec::NamedValue{"episodes", std::to_string(episodes)},
                                              exec::NamedValue{"seed", std::to_string(seed)},
                                              exec::NamedValue{"copies", std::to_string(total)}});
    std::vector<double> mine;
    exec_.propagate_errors([&] {
      check_episodes(episodes);
      const auto [first, end] = Dataset<T>::shard_bounds(total, exec_.rank(), exec_.size());
      if (end == first) return;
      auto part = env.slice(first, end - first);
      std::vector<double> keys;
      const EvaluationResult local = evaluate_copies(act, part, episodes, seed, first, total, &keys);
      for (std::size_t k = 0; k < keys.size(); ++k) {
        mine.insert(mine.end(), {keys[k], local.returns[k], static_cast<double>(local.lengths[k])});
      }
    });
    EvaluationResult result;
    for (const auto& e : gather_episodes(exec_, mine)) {
      result.returns.push_back(e[1]);
      result.lengths.push_back(static_cast<std::int64_t>(e[2]));
    }
    return summarize(std::move(result));
  }

  /// The part of the state every rank holds alike (written once).
  template <class Visitor>
  void visit_shared(Visitor& v) {
    v.text("agent", std::string(Derived::name));
    v.text("parameters", params::to_string(params_));
    std::int64_t copies = n_global_;
    v.i64(copies);
    if (copies != n_global_) {
      throw onelearn::invalid_argument(std::string(Derived::name) + ".load_checkpoint: expected " +
                                       std::to_string(n_global_) + " copies (this agent's), found " +
                                       std::to_string(copies));
    }
    derived().visit_networks(v);
    derived().visit_extra(v);
    std::int64_t iterations = iterations_, started = started_ ? 1 : 0;
    v.i64(steps_done_);
    v.i64(total_steps_);
    v.i64(iterations);
    v.i64(started);
    std::vector<double> returns(stats_.returns().begin(), stats_.returns().end());
    std::vector<double> lengths(stats_.lengths().begin(), stats_.lengths().end());
    std::int64_t episodes = stats_.episodes();
    v.doubles(returns);
    v.doubles(lengths);
    v.i64(episodes);
    v.history(history_);
    if (v.applying()) {
      iterations_ = static_cast<int>(iterations);
      started_ = started != 0;
      stats_.restore(std::move(returns), std::move(lengths), episodes);
    }
  }

  /// This rank's part: its copies' observations, episode starts and environment state, and
  /// what the agent keeps per rank (visit_rank_extra of the derived agent: DQN's buffer rows).
  template <class Visitor>
  void visit_rank(Visitor& v) {
    v.values(std::span<T>(obs_.data(), static_cast<std::size_t>(obs_.size())));
    std::vector<double> starts(episode_starts_.begin(), episode_starts_.end());
    v.doubles(starts);
    if (starts.size() != static_cast<std::size_t>(n_local_)) {
      throw onelearn::invalid_argument(std::string(Derived::name) + ".load_checkpoint: expected " +
                                       std::to_string(n_local_) + " episode starts, found " +
                                       std::to_string(starts.size()));
    }
    if constexpr (requires(const Envs& e) { e.save_state(); }) {
      const std::vector<std::uint64_t> words = envs_.save_state();
      std::vector<double> state(words.size());
      for (std::size_t k = 0; k < words.size(); ++k) state[k] = std::bit_cast<double>(words[k]);
      v.doubles(state);
      if (state.size() != words.size()) {
        throw onelearn::invalid_argument(std::string(Derived::name) + ".load_checkpoint: the environments' state "
                                         "has another size (another number of copies)");
      }
      if (v.applying()) {
        std::vector<std::uint64_t> restored(state.size());
        for (std::size_t k = 0; k < state.size(); ++k) restored[k] = std::bit_cast<std::uint64_t>(state[k]);
        envs_.load_state(restored);
      }
    }
    derived().visit_rank_extra(v);
    if (v.applying()) {
      for (index_t i = 0; i < n_local_; ++i) episode_starts_(i) = starts[static_cast<std::size_t>(i)] != 0;
    }
  }
};

}  // namespace onelearn::rl::detail
