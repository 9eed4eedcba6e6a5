#pragma once
// Histogram gradient boosting's two passes over a node's rows, on a Thrust system, in the
// device's forms (ensemble/detail/hist_node_rows.hpp calls them for thrust_cpp and thrust_cuda;
// the host and the threaded CPU systems run the grower's host code on their own threads).
// Private: include space/space.hpp.
//   gradient_histogram  per feature and bin: {sum of gradients, sum of hessians, count} over
//                       the rows rows[0, count), in double, in the histogram layout of
//                       core/detail/histogram_layout.hpp
//   partition_rows      the stable partition of rows[0, count) by the bin of one feature: the
//                       rows that go left first, each side in its former order (the host's)
//
// The histogram is a reduction with one partial per chunk of rows, as the space's other sums
// (thrust_kernels.hpp): work item (chunk c, feature f) adds c's rows, in order, into the bins of
// feature f in c's partial; the partials are then added in chunk order. Deterministic, with no
// atomics: a GPU's shared-memory histograms with atomic adds would be faster, but double atomics
// add in the order the threads arrive, and a split whose gain ties another's to the last bit
// could then go either way from one run to the next. The counts are exact; the gradient sums
// differ from the host's (every row of a bin in row order) by the rounding of the chunking.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "onelearn/core/detail/histogram_layout.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/space/data.hpp"
#include "onelearn/space/detail/thrust_kernels.hpp"
#include "onelearn/space/errors.hpp"
#include "onelearn/space/thrust.hpp"

#if defined(ONELEARN_SPACE_HAVE_THRUST)

#include <thrust/partition.h>
#include <thrust/system_error.h>

namespace onelearn::space {

namespace detail {

/// Work item c * p + f: the histogram of feature f over chunk c's rows, into c's partial (the
/// work items of one chunk read one row's bins from neighbouring bytes).
struct histogram_partial {
  const std::uint8_t* bins;  ///< row-major: bins[row * p + f]
  index_t p;
  const std::uint32_t* rows;
  index_t count;
  index_t grain;
  const float* gradients;
  const float* hessians;  ///< null: constant hessians (the hessian sums stay 0)
  index_t stride;
  double* partials;  ///< chunk c's partial at c * p * stride * histogram_slots

  ONELEARN_SPACE_HD void operator()(index_t item) const {
    namespace layout = onelearn::detail;
    constexpr index_t slots = layout::histogram_slots;
    const index_t chunk = item / p;
    const index_t f = item - chunk * p;
    double* out = partials + (chunk * p + f) * stride * slots;
    for (index_t j = 0; j < stride * slots; ++j) out[j] = 0.0;
    const index_t begin = chunk * grain;
    const index_t end = begin + grain < count ? begin + grain : count;
    for (index_t i = begin; i < end; ++i) {
      const std::uint32_t r = rows[i];
      double* bin = out + static_cast<index_t>(bins[static_cast<index_t>(r) * p + f]) * slots;
      bin[layout::gradient_slot] += static_cast<double>(gradients[r]);
      if (hessians != nullptr) bin[layout::hessian_slot] += static_cast<double>(hessians[r]);
      bin[layout::count_slot] += 1.0;
    }
  }
};

/// True for a row that the split sends left.
struct goes_left_by_bin {
  const std::uint8_t* bins;
  index_t p;
  index_t feature;
  bin_routing route;

  ONELEARN_SPACE_HD bool operator()(std::uint32_t row) const {
    return route.left[bins[static_cast<index_t>(row) * p + feature]] != 0;
  }
};

struct fill_identity {
  std::uint32_t* rows;
  ONELEARN_SPACE_HD void operator()(index_t i) const { rows[i] = static_cast<std::uint32_t>(i); }
};

}  // namespace detail

/// rows[i] = i for every i: a tree's root holds every row, in order.
template <class System>
void fill_row_order(const thrust_space<System>& s, vector_view<std::uint32_t> rows) {
  thrust_space<System>::prepare();
  detail::for_each_index(s, rows.size, detail::fill_identity{rows.data});
}

/// The gradient histogram of the rows `rows` (row numbers into `bins`, n x p, row-major) into
/// `out` on the host (p * stride * histogram_slots doubles). `hessians` empty: constant
/// hessians, whose sums stay 0 (the split search reads the counts instead).
template <class System>
void gradient_histogram(const thrust_space<System>& s, matrix_view<const std::uint8_t> bins,
                        vector_view<const std::uint32_t> rows, vector_view<const float> gradients,
                        vector_view<const float> hessians, index_t stride, std::span<double> out) {
  using S = thrust_space<System>;
  S::prepare();
  std::fill(out.begin(), out.end(), 0.0);
  const index_t p = bins.cols;
  const index_t width = p * stride * onelearn::detail::histogram_slots;
  if (rows.size == 0 || width == 0) return;
  // CPU (thrust_cpp): as the host's reductions, at most max_partials chunks. Device: chunks of
  // at least 1024 rows, the partials under 256 MiB (229 KB each for 28 features and 256 bins).
  const index_t max_chunks =
      S::is_device ? std::max<index_t>((index_t{256} << 20) / (8 * width), 1)
                   : onelearn::detail::max_partials;
  const index_t min_grain = S::is_device ? 1024 : 256;
  const index_t wanted = std::clamp<index_t>(onelearn::detail::chunk_count(rows.size, min_grain),
                                             1, max_chunks);
  const index_t grain = onelearn::detail::chunk_count(rows.size, wanted);
  const index_t chunks = onelearn::detail::chunk_count(rows.size, grain);
  auto partials = s.template allocate_scratch<double>(static_cast<std::size_t>(chunks * width));
  double* partial_data = S::data(partials);
  detail::for_each_index(s, chunks * p,
                         detail::histogram_partial{bins.data, p, rows.data, rows.size, grain,
                                                   gradients.data,
                                                   hessians.empty() ? nullptr : hessians.data,
                                                   stride, partial_data});
  auto totals = s.template allocate_scratch<double>(static_cast<std::size_t>(width));
  detail::add_partials_in_groups(s, partial_data, chunks, width, S::data(totals));
  s.copy_to_host(S::data(totals), static_cast<std::size_t>(width), out.data());
}

/// Reorders `rows` so that the rows whose bin of `feature` the routing sends left come first,
/// each side in its former order; returns how many went left.
template <class System>
index_t partition_rows(const thrust_space<System>& s, matrix_view<const std::uint8_t> bins,
                       index_t feature, const bin_routing& route, vector_view<std::uint32_t> rows) {
  using S = thrust_space<System>;
  S::prepare();
  if (rows.size == 0) return 0;
  try {
    std::uint32_t* middle =
        ::thrust::stable_partition(s.policy(), rows.data, rows.data + rows.size,
                                   detail::goes_left_by_bin{bins.data, bins.cols, feature, route});
    return static_cast<index_t>(middle - rows.data);
  } catch (const ::thrust::system_error& e) {
    throw device_error("onelearn::space::" + std::string(S::name) +
                       ": partitioning a node's rows failed: " + e.what());
  }
}

}  // namespace onelearn::space

#endif  // ONELEARN_SPACE_HAVE_THRUST
