#pragma once
// Histogram gradient boosting's gradient histogram of a node, as the host's builder and the
// split search (ensemble/detail/hist_split.hpp), a compute space's builder (space/detail/
// thrust_histogram.hpp) and the all-reduce see it: one flat buffer of doubles, feature f's bin
// b at [(f * stride + b) * histogram_slots + slot], stride = BinMapper::n_bins() bins a feature
// (the missing-values bin included). Here, below both, because both floors write it.
//
// A bin holds four doubles, one of them unused: {sum of gradients, sum of hessians, count, 0}.
// With four, one row's update of a bin is one 32-byte load, add and store (SIMD; two 16-byte
// ones of each without AVX), where three separate doubles took three of each: the host's kernel
// went from 1.45 to 1.12 ns a bin update (bench/'s gbdt bins, one thread, -march=native on
// AVX-512, 2026-11-29; docs/bench/gbdt-bin-layout-2026-11-29.txt), about the cost of one
// dependent load-add-store on that machine. The buffer is 64-byte aligned, so no bin straddles
// two cache lines. scikit-learn's bins are {double, double, uint32}; the sums are the same,
// added in the same order. The cost: a third more bytes in each histogram's all-reduce and
// subtraction.

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
