#pragma once
/**
 * \class onelearn::exec::mpi onelearn/exec/mpi.hpp
 * \brief Data-parallel execution across the ranks of an MPI communicator the application owns.
 * \ingroup policies
 *
 * \code
 * #include <onelearn/exec/mpi.hpp>   // link with MPI
 *
 * MPI_Init(&argc, &argv);            // the application owns MPI
 * onelearn::exec::mpi policy{comm};  // the application's communicator (required)
 * // or: onelearn::exec::mpi policy{comm, {.timeout = std::chrono::seconds(30)}};
 * onelearn::linear_model::Ridge<double, onelearn::exec::mpi> ridge({.alpha = 1.0}, policy);
 * ridge.fit(my_X, my_y);             // each rank its own rows; all ranks end with the same model
 *
 * policy.set_step("epoch", 3, "batch", 17);    // named in the message if a collective hangs
 * std::vector<float> gradient(1000);
 * policy.allreduce(std::span(gradient), onelearn::exec::reduce_op::sum);
 * \endcode
 *
 * exec::mpi: data-parallel across the ranks of an MPI communicator the application owns.
 *
 * onelearn never calls MPI_Init or MPI_Finalize and never assumes MPI_COMM_WORLD: an HPC code
 * passes the communicator its ranks already train on. The communicator is used as given, not
 * duplicated: duplicating is collective and the duplicate would have to be freed before
 * MPI_Finalize, which a library object cannot guarantee. Only collectives are issued, so they
 * cannot be confused with the application's point-to-point messages.
 *
 * Method: no collective may hang silently: a rank that never joins (a skipped or reordered
 * collective, a crashed or stuck peer) becomes an error naming the rank, the operation and the
 * step. By default (on_timeout = abort) the collectives are the MPI library's blocking ones,
 * watched by a thread (exec/mpi/watchdog.hpp) that prints that message and ends the
 * process when one overruns the timeout; the launcher then ends the job. PyTorch does the same
 * with NCCL collectives. With on_timeout = throw_error every collective is issued non-blocking
 * (MPI_Iallreduce, MPI_Ibcast, MPI_Iallgather, MPI_Iallgatherv, MPI_Ialltoall(v),
 * MPI_Ibarrier) and completed by a loop of MPI_Test with a deadline, which can throw instead.
 * The loop spins for 200 us (the common case: the peers are there), then also yields the core
 * every 64 tests until 10 ms,
 * then sleeps between tests, 50 us doubling to 1 ms, so a long wait does not burn a core.
 * `wait_all` applies the same loop and timeout (or the watchdog) to requests an algorithm
 * started itself: the policy's own non-blocking collectives (iallreduce, ireduce_scatter,
 * iallgatherv_in_place: MPI_Iallreduce, MPI_Ireduce_scatter, MPI_Iallgatherv; e.g. gradient
 * buckets reduced while the backward pass runs), or raw MPI_Requests started on comm(). Copies
 * of a policy share their state (step label, call counter, failure) through a shared_ptr.
 *
 * Sub-groups: `split(color, key)` (MPI_Comm_split) returns an exec::mpi over the ranks of the
 * same color with the same options, which owns the new communicator and frees it when its
 * last copy goes: every copy of a split policy must be gone before MPI_Finalize.
 * check_same_shape, propagate_errors and check_same_values come from exec::collectives
 * (exec/collectives.hpp).
 *
 * Why abort is the default: Open MPI 4.1's non-blocking collectives are slower than its blocking
 * ones, about 2x for all-reduces from 4 KiB up (2 ranks of one host, float sums, MPI_Allreduce
 * against MPI_Iallreduce + MPI_Test: 1 KiB 0.5 us / 1.0, 4 KiB 1.0 / 6.8, 64 KiB 14 / 22, 1 MiB
 * 121 / 247, 4 MiB 512 / 1347, 64 MiB 31 / 60 ms), and after a timeout the communicator is
 * unusable either way (an MPI collective cannot be cancelled).
 *
 * Ranks that disagree on the number of steps should find out before the steps:
 * `check_same_shape("the number of steps", {n})` throws shape_error on every rank. Left to the
 * steps, the rank with more steps times out in its extra collective, unless the others' next
 * collective matches it wrongly (Open MPI then aborts, e.g. MPI_ERR_TRUNCATE).
 *
 * \par Options (mpi_options)
 * - `timeout` (default 10 minutes, > 0): a collective still incomplete after this long fails.
 *   It bounds every wait in a collective, including a wait for a rank that is busy on purpose
 *   (a longer trial of tune::run before its results are gathered, one rank writing a file):
 *   such codes need a timeout above their longest imbalance. The watchdog checks every 20 ms,
 *   so with abort the process ends up to 20 ms after the deadline.
 *   `mpi_options::no_timeout` (milliseconds::max()): the blocking MPI calls and no detection.
 * - `on_timeout` (default timeout_action::abort): print the message to stderr and end the
 *   process (exit status 1; blocking collectives, full speed), or timeout_action::throw_error:
 *   throw distributed_error on the ranks that waited (as exec::ucx does; non-blocking
 *   collectives, see above for their cost), for codes that can do something useful after a
 *   failed collective, such as writing a checkpoint.
 * All ranks pass the same options: in particular the same on_timeout and all or none
 * no_timeout, since MPI never matches a blocking collective with a non-blocking one.
 *
 * \par Step label
 * `set_step(what, n)` or `set_step(what, n, sub, m)` (noexcept, a few bytes copied, no
 * allocation) records where the algorithm is, e.g. "epoch 3, batch 17"; the timeout message
 * names it. Shared by the copies of the policy; a policy and its copies are used from one
 * thread at a time (as its collectives).
 *
 * Errors: `distributed_error` when an MPI call fails (on communicators set to MPI_ERRORS_RETURN;
 * with MPI's default handler MPI aborts first), or when a collective times out with
 * on_timeout = throw_error (with abort, the same text goes to stderr before the process ends):
 * "exec::mpi: rank 1: MPI_Allreduce #42 (step: epoch 3, batch 17): timed out after 600000 ms
 * (...)". An MPI collective cannot be cancelled or freed: the timed-out request stays pending
 * (kept by the policy), and MPI may still write into the buffer it was given if the missing
 * ranks join it later. So after a timeout the policy, its copies and the communicator are
 * unusable: every later collective of the policy throws at once; end the process (or keep that
 * buffer alive). `shape_error` on every rank from check_same_shape; the errors of
 * propagate_errors on every rank; `invalid_argument` for bad options, a broadcast root
 * outside 0..size-1, counts of ireduce_scatter/iallgatherv_in_place that are not one per rank
 * summing to the buffer (at most INT_MAX values), and a negative split color (on every rank);
 * alltoallv refuses such counts on every rank (invalid_argument), and a rank that would receive
 * more than INT_MAX values too (distributed_error).
 */

#include "onelearn/exec/mpi/policy.hpp"
