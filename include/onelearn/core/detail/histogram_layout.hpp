#pragma once
// Histogram gradient boosting's gradient histogram of a node, as the host's builder and the split
// search (ensemble/detail/hist_split.hpp), a compute space's builder (space/detail/
// thrust_histogram.hpp) and the all-reduce see it: one flat
// buffer of doubles, feature f's bin b at [(f * stride + b) * histogram_slots + slot], stride =
// BinMapper::n_bins() bins a feature (the missing-values bin included).
//
// A bin holds four doubles, one of them unused: {sum of gradients, sum of hessians, count, 0}.
// With four, one row's update of a bin is one 32-byte load, add and store (SIMD), where three
// separate doubles took three of each; building histograms is bound by those stores (bench/'s
// gbdt: 28 bin updates a row, about half of a fit's time). The buffer is 64-byte aligned, so no
// bin straddles two cache lines. scikit-learn's bins are {double, double, uint32}; the sums
// are the same, added in the same order.

#include <vector>

#include "onelearn/core/detail/aligned_allocator.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::detail {

inline constexpr index_t histogram_slots = 4;
inline constexpr index_t gradient_slot = 0;
inline constexpr index_t hessian_slot = 1;
inline constexpr index_t count_slot = 2;

using Histogram = AlignedVector<double>;

}  // namespace onelearn::detail
