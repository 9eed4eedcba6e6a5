#pragma once
/**
 * \code
 * #include <onelearn/tune/mpi.hpp>  // needs MPI; the application owns MPI_Init
 * namespace tune = onelearn::tune;
 *
 * // A data-parallel training function: it trains with the trial's communicator.
 * auto train = [&](const tune::Trial& trial, tune::Reporter&) {
 *   const auto policy = trial.exec<onelearn::exec::mpi>();
 *   onelearn::linear_model::Ridge<double, onelearn::exec::mpi> model(
 *       {.alpha = trial.get<double>("alpha")}, policy);
 *   const auto shard = train_data.shard(policy.rank(), policy.size());  // this rank's rows
 *   model.fit(shard.features(), shard.targets());
 *   return model.score(X_val, y_val);
 * };
 * onelearn::exec::mpi world{comm};
 * tune::Results table = tune::run(train, space, {.n_trials = 12, .ranks_per_trial = 2}, world);
 * double one = tune::run_once(train, table.best().params, world);  // one run over all ranks
 * \endcode
 *
 * tune::run and tune::ablation under exec::mpi. The trials are spread over groups of
 * `ranks_per_trial` ranks (MPI_Comm_split of the given communicator by rank / ranks_per_trial,
 * so groups are consecutive ranks and the last one is smaller when the number of ranks is not a
 * multiple); trial i runs on group i mod (number of groups). Every rank of a group calls the
 * training function; Trial::exec<exec::mpi>() is the group's communicator (MPI_COMM_SELF when
 * ranks_per_trial is 1), so a function written against it trains data-parallel inside the
 * search, and alone over a whole communicator through run_once. The group agrees on each
 * reported score (its first rank's, broadcast) so that a scheduler stops the trial on all of
 * its ranks together; the group's first rank contributes the trial's row, and the rows are
 * all-gathered after each batch so that every rank returns the same table.
 *
 * The sub-communicators are created at the start of a search and freed at its end
 * (collectively: every rank of the communicator must call run). The given communicator is
 * never freed or duplicated.
 *
 * \par Differences from Ray Tune
 * - Static placement (trial i on group i mod groups) instead of a scheduler that places trials
 *   on free resources: reproducible, and fine when trials take similar times.
 *
 * Errors: as tune::run and tune::ablation, raised on every rank; ranks_per_trial outside
 * [1, number of ranks] is an `invalid_argument`. With ranks_per_trial > 1 a training function
 * that throws on some ranks of a group but not on the others (e.g. from a check of its local
 * data) can leave the others waiting in a collective: check inside exec.propagate_errors, as
 * onelearn's estimators do, so that the whole group fails together.
 */

#include <mpi.h>

#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "onelearn/exec/mpi.hpp"
#include "onelearn/tune/ablation.hpp"
#include "onelearn/tune/run.hpp"

namespace onelearn::tune {

namespace detail {

/// This rank's trial group: consecutive blocks of `ranks_per_trial` ranks of `world`.
inline Group mpi_groups(const exec::mpi& world, int ranks_per_trial) {
  Group g;
  const int rank = world.rank();
  g.index = static_cast<std::size_t>(rank / ranks_per_trial);
  g.count = static_cast<std::size_t>((world.size() + ranks_per_trial - 1) / ranks_per_trial);
  if (ranks_per_trial == 1) {
    g.policy = exec::mpi(MPI_COMM_SELF);
    return g;
  }
  MPI_Comm sub = MPI_COMM_NULL;
  exec::detail::check_mpi(MPI_Comm_split(world.comm(), rank / ranks_per_trial, rank, &sub),
                          "MPI_Comm_split");
  g.owner = std::shared_ptr<MPI_Comm>(new MPI_Comm(sub), [](MPI_Comm* c) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(c);
    delete c;
  });
  const exec::mpi policy(sub);
  g.leader = policy.rank() == 0;
  g.policy = policy;
  g.agree = [policy](double score) {
    policy.broadcast(std::span<double>(&score, 1), 0);
    return score;
  };
  return g;
}

}  // namespace detail

/// A search whose trials are spread over groups of options.ranks_per_trial ranks of `world`.
template <class TrainFn>
Results run(TrainFn&& train_fn, const Space& space, const RunOptions& options,
            const exec::mpi& world) {
  detail::check_train_fn<TrainFn>();
  return detail::run_search(
      detail::TrainFunction(std::ref(train_fn)), space, options, world,
      [&](int k) { return detail::mpi_groups(world, k); }, true);
}

/// An ablation whose trials are spread over groups of options.ranks_per_trial ranks of `world`.
template <class TrainFn>
AblationResults ablation(TrainFn&& train_fn, const std::vector<Component>& components,
                         const AblationOptions& options, const exec::mpi& world) {
  detail::check_train_fn<TrainFn>();
  return detail::run_ablation(
      detail::TrainFunction(std::ref(train_fn)), components, options, world,
      [&](int k) { return detail::mpi_groups(world, k); }, true);
}

}  // namespace onelearn::tune
