#pragma once
/**
 * \file
 * \brief What the kernels of a compute space return to the host: small, model-sized results.
 * \ingroup spaces
 *
 * \code
 * #include <onelearn/exec/local.hpp>
 * #include <onelearn/space/space.hpp>
 * namespace space = onelearn::space;
 * space::host h;
 * auto Xh = space::to_space(h, my_rows);                  // this rank's rows
 * space::vector<space::host, std::int64_t> labels(h, my_rows.rows());
 * onelearn::Matrix<double> centers = X.topRows(3);        // k x p, the same on every rank
 * space::lloyd_sums step = space::lloyd_step(h, Xh.view(), centers, labels.mutable_view(), {});
 * onelearn::exec::local policy;                           // exec::mpi{comm}: over the ranks
 * policy.allreduce(std::span(step.sums.data(), step.sums.size()), onelearn::exec::reduce_op::sum);
 * policy.allreduce(std::span(step.counts.data(), step.counts.size()),
 *                  onelearn::exec::reduce_op::sum);
 * \endcode
 *
 * What the kernels of a compute space return to the host: small, model-sized results (a few
 * vectors, k x p or p x p matrices), which the caller all-reduces through its execution policy.
 */

#include <cstdint>
#include <vector>

#include "onelearn/core/detail/exact_neighbours.hpp"
#include "onelearn/core/detail/gram_sums.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::space {

/// Per-class weighted counts (k) and feature sums (k x p), in double.
struct class_moments {
  Vector<double> counts;
  Matrix<double> sums;
};

/// One Lloyd step's sums: per cluster the sum of its rows (k x p) and their number (k), in
/// double, and how many labels changed.
struct lloyd_sums {
  Matrix<double> sums;
  Vector<double> counts;
  double changed = 0;
};

/// gram (p x p, lower triangle filled), xty (p) and yty: see core/detail/gram_sums.hpp.
using gram_sums = onelearn::detail::GramSums;

/// The exact k nearest rows of each query, query-major, sorted by (squared distance, row).
using neighbours = onelearn::detail::ExactNeighbours;

}  // namespace onelearn::space
