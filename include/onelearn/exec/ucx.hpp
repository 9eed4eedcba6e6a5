#pragma once
/**
 * \class onelearn::exec::ucx onelearn/exec/ucx.hpp
 * \brief exec::mpi's interface with the data moved by UCX (shared memory on one host, RDMA across
 * hosts).
 * \ingroup policies
 *
 * \code
 * #include <onelearn/exec/ucx.hpp>   // link with -lucp -lucs (and MPI)
 *
 * MPI_Init(&argc, &argv);            // the application owns MPI
 * {
 *   onelearn::exec::ucx policy{comm};     // collective: all ranks of comm (required)
 *   // or: onelearn::exec::ucx policy{comm, {.timeout = std::chrono::seconds(30)}};
 *   onelearn::linear_model::Ridge<double, onelearn::exec::ucx> ridge({.alpha = 1.0}, policy);
 *   ridge.fit(my_X, my_y);                                         // each rank its own rows
 *   std::vector<float> gradient(1000);
 *   policy.allreduce(std::span(gradient), onelearn::exec::reduce_op::sum);
 * }                                  // every copy of the policy gone before MPI_Finalize
 * MPI_Finalize();
 * \endcode
 *
 * exec::ucx: the execution policy of exec::mpi (same collectives, same agreement checks, usable
 * wherever exec::mpi is) with the data moved by UCX's ucp API instead of the MPI library: shared
 * memory (posix/sysv, cma single-copy) on one host, RDMA on InfiniBand/RoCE, TCP elsewhere.
 *
 * Method: the constructor, collective over `comm`, creates a UCP context and one worker, all-
 * gathers the worker addresses with MPI (the only MPI calls; none on the data path) and creates
 * an endpoint to every rank. When every rank is on one host it also maps a shared-memory
 * segment per rank (ucp_mem_map allocates it in posix/sysv shared memory; the peers map it
 * with ucp_rkey_ptr). Copies share that worker (a shared_ptr), so the policy is cheap to copy;
 * the last copy closes the endpoints. Every collective call takes the next sequence number,
 * which goes into the tags of its messages, so back-to-back collectives never match each other's
 * messages.
 * - allreduce, ranks on one host: through the shared-memory segments (exec/ucx/
 *   shared_memory.hpp), in rounds of `shared_memory_bytes`. Each rank stages the parts of
 *   its data the others reduce, reduces its own part reading the peers' staged copies in place,
 *   and copies the others' reduced parts out of their segments; the steps are ordered by
 *   counters in the segments (release/acquire), not by messages. No system call and no copy
 *   through a FIFO: about two passes over the data per rank.
 * - allreduce, otherwise (several hosts, `shared_memory_bytes = 0`, or `detect_peer_failure`):
 *   recursive doubling below `small_message_bytes` (256 KiB; log2 p exchanges), else a ring
 *   reduce-scatter + all-gather in chunks of `chunk_bytes` (512 KiB): the receive of the next
 *   step is posted before the current chunk is reduced, and each reduced chunk is sent on at
 *   once.
 * - Any size works for both (0, fewer elements than ranks, not divisible by the number of
 *   ranks). The result is bit-identical on every rank (each part or ring segment is reduced on
 *   one rank and then copied; recursive-doubling partners combine in rank order), though not
 *   necessarily equal to the bits MPI_Allreduce produces, whose summation order differs.
 * - broadcast: binomial tree, chunked so inner ranks forward while receiving.
 * - allgatherv, alltoallv, check_same_shape: counts then data exchanged directly between all
 *   pairs.
 * - barrier: dissemination (ceil(log2 p) rounds of empty messages).
 * - check_same_shape, propagate_errors, check_same_values: exec::collectives
 *   (exec/collectives.hpp), as exec::mpi's.
 * - Non-blocking collectives (iallreduce, ireduce_scatter, iallgatherv_in_place) are completed
 *   eagerly, when they are started: a UCX collective progresses only while this thread polls
 *   its worker, so there is nothing to overlap without a progress thread. Their request is an
 *   exec::ready_request; wait_all does nothing. ireduce_scatter is an all-reduce of the whole
 *   buffer (in place, so `values` holds the full sum afterwards) from which this rank copies
 *   its piece; iallgatherv_in_place an allgatherv of this rank's piece.
 * - split(color, key): MPI_Comm_split of a duplicate of `comm` kept by the policy (MPI_Comm_dup
 *   in the constructor, freed with the last copy), then a new exec::ucx on the
 *   sub-communicator, which it owns the same way.
 *
 * \par Options (ucx_options)
 * - `timeout` (default 10 minutes): a collective still incomplete after this long throws.
 * - `shared_memory_bytes` (default 512 KiB; 0 = off, else >= 64): the segment each rank maps,
 *   and so the round size of the shared-memory all-reduce. Measured on 2 ranks (4 MiB; 16 MiB):
 *   256 KiB 209 us, 1.17 ms; 512 KiB 171 us, 0.94 ms; 1 MiB 279 us, 1.43 ms. Rounds that fit
 *   the core's cache beat fewer, larger rounds. uses_shared_memory() says whether it is used.
 * - `small_message_bytes` (default 256 KiB): the message algorithms' switch. Below it one
 *   exchange of the whole buffer (2 ranks) beats the ring's two rendezvous steps: measured on 2
 *   ranks, 16 KiB 1.3 us instead of 2.3 us, 256 KiB 12.6 us instead of 35 us.
 * - `chunk_bytes` (default 512 KiB, >= 64): pipeline granularity of the ring and of broadcast.
 * - `detect_peer_failure` (default false): endpoints in UCP_ERR_HANDLING_MODE_PEER, so a peer
 *   that dies fails the collective at once (measured: within milliseconds) instead of at the
 *   timeout. UCX 1.13's shared-memory transports do not support that mode, so ranks on one host
 *   then talk over TCP loopback (several times slower), and the shared-memory all-reduce is off
 *   (a dead peer cannot fail a load from its segment); between hosts the network transports
 *   support it (not measured here).
 * All ranks pass the same options. UCX itself is configured by its environment variables
 * (UCX_TLS, UCX_RNDV_THRESH, ...); unless UCX_PROTO_ENABLE is set, exec::ucx turns on UCX
 * 1.13's newer protocol selection, which on one host uses single-copy (cma) rendezvous far
 * better than the default selection does.
 *
 * \par Performance (2 ranks, one host, float sum; onelearn-bench --policy ucx allreduce)
 * Against raw MPI_Allreduce (Open MPI 4.1, bench/anchors/allreduce.c) in the same session on a
 * quiet 2-core host, time per call, shared memory: 1 KiB 0.2 us (MPI 0.44), 16 KiB 1.1 (2.1-7.3), 64 KiB
 * 3.6 (13.9), 1 MiB 39-50 (116), 4 MiB 171-209 (551: 2.6-3.2x), 16 MiB 0.94-1.17 ms (5.0: 4-5x),
 * 64 MiB 5.4-5.6 ms (31.8: 6x). The message path (shared_memory_bytes = 0) in the same run:
 * 4 MiB 299 us, 16 MiB 2.1 ms, 64 MiB 12.4 ms. Both spin while they wait for a peer (yielding
 * after about a millisecond), so on a host with more busy threads than cores they slow down
 * like every spinning MPI: runs on a busy host vary by 2-4x. Over 11 back-to-back pairs with
 * the anchor on the (virtual) reference host, 4 MiB was a median 2.9x MPI's bus bandwidth, but
 * in the host's slow phases (when a 1 KiB all-reduce takes ~1 us for MPI too) the shared-memory
 * path lost more than MPI did: 4 MiB 600-660 us, against MPI's 530-800 in such phases.
 *
 * \par Differences from exec::mpi
 * - The ranks are those of `comm` at construction; `comm` itself is not used afterwards (it
 *   may be freed): the policy keeps a duplicate (for split only), and does not interfere with
 *   the application's MPI traffic. Like the UCX objects, that duplicate is released by the
 *   last copy of the policy, which must be gone before MPI_Finalize.
 * - Construction costs a UCP context and worker (milliseconds): create one policy and copy it.
 * - One thread per policy object (UCS_THREAD_MODE_SINGLE).
 *
 * Errors: `distributed_error` naming the rank, the operation and its sequence number when a
 * collective times out, a UCX call fails (with ucs_status_string), a peer's connection fails
 * (at once with `detect_peer_failure`, else a vanished peer shows as the timeout), or ranks pass
 * different sizes to a collective (the receiver checks every message's length). After such a failure the policy object
 * and its copies are unusable: every later collective throws at once (create a new one).
 * `shape_error` from check_same_shape and the errors of propagate_errors, on every rank, as with
 * exec::mpi; `invalid_argument` for a bad root, bad options, counts of ireduce_scatter/
 * iallgatherv_in_place that are not one per rank summing to the buffer, and a negative split
 * color (on every rank); alltoallv refuses such counts on every rank.
 */

#include "onelearn/exec/ucx/policy.hpp"
