#pragma once
/**
 * \class onelearn::exec::local onelearn/exec/local.hpp
 * \brief The one-process execution policy, the default: every collective compiles away.
 * \ingroup policies
 *
 * \code
 * #include <onelearn/exec/local.hpp>
 *
 * onelearn::linear_model::Ridge<double> ridge({.alpha = 1.0});  // exec::local is the default
 * onelearn::exec::local policy;
 * policy.allreduce(std::span(values), onelearn::exec::reduce_op::sum);  // leaves values as they are
 * \endcode
 *
 * exec::local: one process. Every collective is an inline no-op (or a copy), so code written
 * for the distributed policies (exec::mpi, exec::ucx) costs nothing here: rank() is 0, size()
 * is 1, a non-blocking collective is complete when it returns, split() returns exec::local,
 * check_same_shape and check_same_values never throw, and propagate_errors runs its checks
 * and lets their error through unchanged (no "on rank 0:" prefix). The class is in
 * exec/local/policy.hpp.
 */

#include "onelearn/exec/local/policy.hpp"
