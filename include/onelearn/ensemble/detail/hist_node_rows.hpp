#pragma once
// The rows of a tree's nodes, and the two passes histogram boosting makes over them, in a
// compute space. The grower (hist_grower.hpp) keeps every node's rows as a range [begin, end)
// of one row order, which a split partitions in place; what touches the rows is here:
//   start_tree(g, h, constant)   a new tree: the root holds every row, in order; g and h are the
//                                tree's gradients and hessians (host memory, one per row; h
//                                unread when the hessians are constant)
//   histogram(begin, end, ...)   the gradient histogram of a node's rows
//                                (core/detail/histogram_layout.hpp), on the host
//   partition(begin, end, ...)   a split's stable partition of its node's rows: left child first
//   order()                      after the tree, the row order on the host (the leaves' rows)
//
// HostNodeRows: the host's memory and code, with `Chunks` running the parallel loops: OpenMP's
// threads for space::host, the system's threads for thrust_omp and thrust_tbb (space::
// chunk_loop), which thereby grow the host's trees bit for bit. chunks() hands the same runner
// to the fit's other loops on the host.
// SpaceNodeRows: the binned rows, the gradients and the row order in the space's memory, the
// passes as the space's kernels (space/detail/thrust_histogram.hpp): thrust_cuda, and
// thrust_cpp, which runs the device's forms on one CPU thread so that every test run checks
// them. The binned rows go to the device once per fit, the gradients once per tree, the row
// order comes back once per tree; the histograms (p x bins x 4 doubles) come back
// once per node built, which is what the distributed fit all-reduces anyway.
//
// `node_rows_for<Space>` names the one a space uses; make_node_rows builds it.

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <type_traits>
#include <vector>

#include "onelearn/core/detail/histogram_layout.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/ensemble/detail/binning.hpp"
#include "onelearn/ensemble/detail/hist_split.hpp"
#include "onelearn/space/concept.hpp"
#include "onelearn/space/data.hpp"
#include "onelearn/space/host_space.hpp"

namespace onelearn::ensemble::detail {

template <class Chunks = onelearn::detail::host_chunks>
class HostNodeRows {
 public:
  explicit HostNodeRows(const BinnedMatrix& X, Chunks chunks = {})
      : X_(&X), chunks_(std::move(chunks)) {}

  /// The node rows' memory is the host's: nothing here can fail on one rank only.
  [[nodiscard]] static space::host space() { return {}; }
  /// What runs the fit's other parallel loops on the host (the split search, the leaf values,
  /// the gradients): the same threads as the passes here, so that a thrust_tbb fit does not
  /// alternate between TBB's threads and OpenMP's (whose spinning after each loop took the
  /// cores from TBB's: 1.2-1.5x the host's gbdt fit, measured).
  [[nodiscard]] const Chunks& chunks() const { return chunks_; }

  void start_tree(const float* gradients, const float* hessians, bool /*constant_hessian*/) {
    gradients_ = gradients;
    hessians_ = hessians;
    rows_.resize(static_cast<std::size_t>(X_->n_rows));
    std::iota(rows_.begin(), rows_.end(), std::uint32_t{0});
  }

  void histogram(index_t begin, index_t end, bool constant_hessian, index_t stride,
                 Histogram& out) const {
    build_histogram(*X_, rows_.data() + begin, static_cast<std::size_t>(end - begin), gradients_,
                    hessians_, constant_hessian, stride, out, chunks_);
  }

  /// Stable in-place partition of rows [begin, end) by split s: left child first; returns the
  /// first row of the right child. The rows are cut into blocks on threads, in two passes:
  /// each block sends its rows to two scratch lists, left and right (every row is written to
  /// both lists, and only the list it belongs to moves on: no branch, where half the rows go
  /// either way and a mispredicted branch per row would cost more than the stores); then each
  /// block copies its lists back after those of the blocks before it, so the order is the
  /// serial one.
  index_t partition(index_t begin, index_t end, const SplitInfo& s, int missing) {
    const std::uint8_t* column = X_->column(s.feature);
    std::uint32_t* r = rows_.data() + begin;
    const index_t count = end - begin;
    scratch_left_.resize(static_cast<std::size_t>(count));
    scratch_right_.resize(static_cast<std::size_t>(count));
    constexpr index_t grain = index_t{1} << 13;
    left_counts_.assign(static_cast<std::size_t>(onelearn::detail::chunk_count(count, grain)), 0);
    auto split_block = [&](auto goes_left, index_t block, index_t first, index_t last) {
      std::uint32_t* left = scratch_left_.data() + first;
      std::uint32_t* right = scratch_right_.data() + first;
      index_t n_left = 0, n_right = 0;
      for (index_t i = first; i < last; ++i) {
        const std::uint32_t row = r[i];
        const index_t to_left = goes_left(column[row]) ? 1 : 0;
        left[n_left] = row;
        right[n_right] = row;
        n_left += to_left;
        n_right += 1 - to_left;
      }
      left_counts_[static_cast<std::size_t>(block)] = n_left;
    };
    chunks_(count, grain, [&](index_t block, index_t first, index_t last) {
      if (s.is_categorical) {
        // The bitset holds the missing-values bin when missing values go left.
        split_block([&](int b) { return s.left_bins.has(static_cast<unsigned>(b)); }, block,
                    first, last);
      } else {
        const int missing_left = s.missing_go_to_left ? 1 : 0;
        const int bin = s.bin;
        auto goes_left = [=](int b) {
          return (int{b <= bin} | (missing_left & int{b == missing})) != 0;
        };
        split_block(goes_left, block, first, last);
      }
    });
    index_t total_left = 0;
    for (index_t n_left : left_counts_) total_left += n_left;
    chunks_(count, grain, [&](index_t block, index_t first, index_t last) {
      index_t left_before = 0;
      for (index_t b = 0; b < block; ++b) left_before += left_counts_[static_cast<std::size_t>(b)];
      const index_t n_left = left_counts_[static_cast<std::size_t>(block)];
      const index_t right_before = first - left_before;
      std::copy_n(scratch_left_.data() + first, n_left, r + left_before);
      std::copy_n(scratch_right_.data() + first, (last - first) - n_left,
                  r + total_left + right_before);
    });
    return begin + total_left;
  }

  [[nodiscard]] const std::uint32_t* order() const { return rows_.data(); }

 private:
  const BinnedMatrix* X_;
  Chunks chunks_;
  const float* gradients_ = nullptr;
  const float* hessians_ = nullptr;
  std::vector<std::uint32_t> rows_;
  /// partition: per block of rows, at the block's offset, the block's rows that go left, and
  /// those that go right
  std::vector<std::uint32_t> scratch_left_, scratch_right_;
  std::vector<index_t> left_counts_;  ///< partition: per block, its rows that go left
};

/// Which way split s sends each bin (missing: the missing-values bin).
inline space::bin_routing routing_of(const SplitInfo& s, int missing) {
  space::bin_routing out;
  for (int b = 0; b < 256; ++b) {
    const bool left = s.is_categorical
                          ? s.left_bins.has(static_cast<unsigned>(b))
                          : (b <= s.bin || (s.missing_go_to_left && b == missing));
    out.left[b] = left ? 1 : 0;
  }
  return out;
}

/// The node rows in a Thrust space's memory, the passes as its kernels (found by
/// argument-dependent lookup in space/space.hpp, which a program choosing a Thrust space
/// includes).
template <space::ComputeSpace Space>
class SpaceNodeRows {
 public:
  SpaceNodeRows(const Space& s, const BinnedMatrix& X)
      : space_(s),
        bins_(space::to_space(s, std::span<const std::uint8_t>(X.rows))),
        n_rows_(X.n_rows),
        n_features_(X.n_features),
        rows_(s, X.n_rows),
        host_rows_(static_cast<std::size_t>(X.n_rows)) {}

  [[nodiscard]] const Space& space() const { return space_; }
  /// The fit's host loops (split search, leaf values, gradients): OpenMP's threads.
  [[nodiscard]] static onelearn::detail::host_chunks chunks() { return {}; }

  void start_tree(const float* gradients, const float* hessians, bool constant_hessian) {
    const auto n = static_cast<std::size_t>(n_rows_);
    gradients_ = space::to_space(space_, std::span<const float>(gradients, n));
    hessians_ = constant_hessian ? space::vector<Space, float>()
                                 : space::to_space(space_, std::span<const float>(hessians, n));
    fill_row_order(space_, rows_.mutable_view());
  }

  void histogram(index_t begin, index_t end, bool constant_hessian, index_t stride,
                 Histogram& out) const {
    out.resize(static_cast<std::size_t>(n_features_ * stride * histogram_slots));
    const space::vector_view<const std::uint32_t> node{rows_.view().data + begin, end - begin};
    gradient_histogram(space_, bins(), node, gradients_.view(),
                       constant_hessian ? space::vector_view<const float>{} : hessians_.view(),
                       stride, std::span<double>(out));
  }

  index_t partition(index_t begin, index_t end, const SplitInfo& s, int missing) {
    const space::vector_view<std::uint32_t> node{rows_.mutable_view().data + begin, end - begin};
    return begin + partition_rows(space_, bins(), s.feature, routing_of(s, missing), node);
  }

  [[nodiscard]] const std::uint32_t* order() {
    space_.copy_to_host(rows_.view().data, host_rows_.size(), host_rows_.data());
    return host_rows_.data();
  }

 private:
  [[nodiscard]] space::matrix_view<const std::uint8_t> bins() const {
    return {bins_.view().data, n_rows_, n_features_, n_features_};
  }

  Space space_;
  space::vector<Space, std::uint8_t> bins_;  ///< row-major: [row * n_features + feature]
  index_t n_rows_, n_features_;
  space::vector<Space, std::uint32_t> rows_;
  space::vector<Space, float> gradients_, hessians_;
  std::vector<std::uint32_t> host_rows_;
};

/// The node rows of space S: the host's code on the host and on the threaded CPU systems (with
/// their own threads), the space's kernels elsewhere.
template <space::ComputeSpace S>
auto make_node_rows(const S& s, const BinnedMatrix& X) {
  if constexpr (std::is_same_v<S, space::host>) {
    return HostNodeRows<>(X);
  } else if constexpr (requires { chunk_loop(s); }) {
    return HostNodeRows<decltype(chunk_loop(s))>(X, chunk_loop(s));
  } else {
    return SpaceNodeRows<S>(s, X);
  }
}

}  // namespace onelearn::ensemble::detail
