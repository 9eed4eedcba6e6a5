#pragma once
// The Keras-style loop behind every agent's learn(total_steps, callbacks...): one "epoch" of
// the callbacks is one iteration of the agent (a rollout and its update for PPO/A2C/REINFORCE,
// train_freq steps and their gradient steps for DQN), so nn::EarlyStopping, ModelCheckpoint,
// CSVLogger and lambdas work on agents unchanged, with the agent as their "model". The hooks
// are nn::Sequential::fit's (nn/detail/callback_dispatch.hpp), run inside propagate_errors so
// that a callback failing on one rank fails every rank, and a stop asked on one rank stops all.
//
// The progress bar (Params::verbose = 1) is nn::ProgressBar drawn as ONE epoch whose batches
// are the iterations, so a run shows a single bar with the episode return in it:
//     Epoch 1/1
//     120/391 [=========>.....................] - ETA: 3s - episode_return: 231.0000 - ...
// rather than one "Epoch k/N" line per iteration.
//
// The agent provides: begin_learn(total_steps), iterate(logs), steps_done(), iterations_done(),
// steps_per_iteration(), stop_requested(), record_history(iteration, logs), verbose(),
// execution_policy(), with_gathered_state(hooks).

#include <cstdint>
#include <iostream>
#include <optional>
#include <span>
#include <type_traits>

#include "onelearn/exec/policy.hpp"
#include "onelearn/nn/callbacks.hpp"
#include "onelearn/nn/detail/callback_dispatch.hpp"
#include "onelearn/nn/progress_bar.hpp"

namespace onelearn::nn {
class ModelCheckpoint;  // nn/checkpoint.hpp; only its name is needed here
}  // namespace onelearn::nn

namespace onelearn::rl::detail {

/// What nn::ProgressBar reads of a model: the fit's settings and the policy.
template <class Exec>
struct BarModel {
  nn::FitParams params;
  const Exec* exec = nullptr;
  [[nodiscard]] const nn::FitParams& fit_params() const noexcept { return params; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return *exec; }
};

template <class Agent, class... Callbacks>
void run_learn(Agent& agent, std::int64_t total_steps, Callbacks&... callbacks) {
  static_assert((nn::detail::Callback<Callbacks, Agent> && ...),
                "onelearn::rl learn: every callback needs at least one of on_train_begin(agent), "
                "on_epoch_begin(agent, iteration), on_epoch_end(agent, iteration, logs), "
                "on_train_end(agent, logs), or to be callable as f(agent, iteration, logs)");
  using Exec = std::remove_cvref_t<decltype(agent.execution_policy())>;
  nn::detail::CallbackList<Agent, Callbacks...> hooks(callbacks...);
  const Exec& exec = agent.execution_policy();
  auto on_every_rank = [&](auto&& hook) {
    if constexpr (sizeof...(Callbacks) > 0) exec.propagate_errors(hook);
  };

  agent.begin_learn(total_steps);
  std::optional<nn::ProgressBar> bar;
  BarModel<Exec> view;
  if (agent.verbose() > 0 && exec.rank() == 0) {
    const std::int64_t per = agent.steps_per_iteration();
    const std::int64_t left = total_steps > agent.steps_done() ? total_steps - agent.steps_done() : 0;
    view.params.epochs = 1;
    view.params.steps = agent.iterations_done() + (left + per - 1) / per;
    view.exec = &exec;
    bar.emplace(std::cout);
    bar->on_train_begin(view);
    bar->on_epoch_begin(view, 0);
  }
  nn::Logs logs;
  on_every_rank([&] { hooks.train_begin(agent); });
  while (agent.steps_done() < total_steps && !agent.stop_requested()) {
    const int iteration = agent.iterations_done();
    on_every_rank([&] { hooks.epoch_begin(agent, iteration); });
    agent.iterate(logs);
    agent.record_history(iteration, logs);
    if (bar) bar->on_batch_end(view, iteration, logs);
    // nn::ModelCheckpoint saves on rank 0 only, and a checkpoint holds every rank's part of
    // the state (its environments, DQN's rows): the parts are gathered around the hooks.
    if constexpr (Exec::is_distributed && decltype(hooks)::template holds<nn::ModelCheckpoint>) {
      agent.with_gathered_state([&] { on_every_rank([&] { hooks.epoch_end(agent, iteration, logs); }); });
    } else {
      on_every_rank([&] { hooks.epoch_end(agent, iteration, logs); });
    }
    if constexpr (Exec::is_distributed && sizeof...(Callbacks) > 0) {
      std::int64_t stop = agent.stop_requested() ? 1 : 0;
      exec.allreduce(std::span<std::int64_t>(&stop, 1), onelearn::exec::reduce_op::max);
      if (stop != 0) agent.stop_training();
    }
  }
  on_every_rank([&] { hooks.train_end(agent, logs); });
  if (bar) bar->on_epoch_end(view, 0, logs);
}

}  // namespace onelearn::rl::detail
