#pragma once
/**
 * \file
 * \brief tune::run and tune::ablation under exec::mpi, in one include.
 * \ingroup tuning
 *
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
 * tune::AblationResults ablated = tune::ablation(train, components, {.ranks_per_trial = 2}, world);
 * \endcode
 *
 * tune::run and tune::ablation under exec::mpi, in one include (exec/mpi.hpp, tune/run.hpp,
 * tune/ablation.hpp). Both work on any policy: their trial groups are made with the policy's
 * split, so exec::ucx has them too. Trials are spread over groups of
 * `ranks_per_trial` ranks (exec::mpi::split of the given communicator by rank /
 * ranks_per_trial: consecutive ranks, the last group smaller when the number of ranks is not a
 * multiple); trial i runs on group i mod (number of groups). Every rank of a group calls the
 * training function; Trial::exec<exec::mpi>() is the group's policy (one rank when
 * ranks_per_trial is 1), so a function written against it trains data-parallel inside the
 * search, and alone over a whole communicator through run_once. The group agrees on each
 * reported score (its first rank's, broadcast) so that a scheduler stops the trial on all of
 * its ranks together; the group's first rank contributes the trial's row, and the rows are
 * all-gathered after each batch so that every rank returns the same table.
 *
 * The sub-communicators are created at the start of a search (collectively: every rank of the
 * communicator must call run or ablation) and freed when the last copy of their policy goes,
 * normally at the end of the search: a training function that keeps a copy of its trial's
 * policy must let it go before MPI_Finalize. The given communicator is never freed or
 * duplicated.
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

#include "onelearn/exec/mpi.hpp"
#include "onelearn/tune/ablation.hpp"
#include "onelearn/tune/run.hpp"

