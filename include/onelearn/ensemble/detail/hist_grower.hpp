#pragma once
// One tree of histogram gradient boosting, grown leaf-wise as scikit-learn 1.2.1's TreeGrower:
// the splittable node of largest gain is split next (a heap ordered as Python's heapq orders
// it, so that ties break alike), until max_leaf_nodes leaves, max_depth, min_samples_leaf
// (a node of fewer than 2 * min_samples_leaf rows is a leaf) or no split of positive gain.
//
// Data-parallel: each rank holds its rows' bins, gradients and hessians and partitions its own
// row indices in place; the statistics every decision reads are global. The root's gradient
// sums are all-reduced. Each rank owns a block of the features: a histogram built (the
// root's, then per split only the smaller child's, by global count, the larger one being the
// parent's minus it) is reduce-scattered, each rank getting the sums of its features
// (core/detail/histogram_layout.hpp), and each rank's best split of its features is
// all-gathered, every rank taking the best. So every rank grows the same tree with one
// reduce-scatter of p * bins * 4 doubles and one all-gather of a split per rank per split.
//
// The passes over the rows (histograms, partitions) are NodeRows' (hist_node_rows.hpp): the
// host's code, or a compute space's kernels. In a device space they run inside the policy's
// propagate_errors (base/in_space.hpp), so that a device failing on one rank raises on every
// rank instead of leaving the others in the next all-reduce.

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "onelearn/base/in_space.hpp"
#include "onelearn/core/detail/no_fma.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/ensemble/detail/binning.hpp"
#include "onelearn/ensemble/detail/hist_node_rows.hpp"
#include "onelearn/ensemble/detail/hist_split.hpp"
#include "onelearn/ensemble/detail/hist_tree.hpp"
#include "onelearn/exec/policy.hpp"

ONELEARN_BEGIN_NO_FMA  // scikit-learn's roundings (core/detail/no_fma.hpp)
namespace onelearn::ensemble::detail {

struct GrowerSettings {
  std::int64_t max_leaf_nodes = 31;  ///< 0: no limit
  std::int64_t max_depth = 0;        ///< 0: no limit
  double shrinkage = 0.1;            ///< the learning rate, applied to the leaf values
};

/// What a tree's growth needs from the boosting loop: the binned training rows and the split
/// settings; grow() sets the gradients and hessians of the tree it grows.
struct GrowerInput {
  const BinnedMatrix* X = nullptr;
  const BinMapper* mapper = nullptr;
  const float* gradients = nullptr;
  const float* hessians = nullptr;
  std::int64_t n_total = 0;  ///< training rows over all ranks
  SplitSettings split;
};

template <exec::ExecutionPolicy Exec, class NodeRows>
class TreeGrower {
 public:
  TreeGrower(const Exec& exec, const GrowerInput& in, const GrowerSettings& settings,
             NodeRows& rows)
      : exec_(exec), in_(in), settings_(settings), rows_(rows) {
    // This rank's features: the ranks' shares are consecutive blocks, in rank order.
    const index_t p = in_.X->n_features;
    const auto ranks = static_cast<index_t>(exec_.size());
    const auto share = [&](index_t rank) { return p * rank / ranks; };
    first_feature_ = share(exec_.rank());
    last_feature_ = share(exec_.rank() + 1);
    for (index_t r = 0; r < ranks; ++r) {
      share_sizes_.push_back((share(r + 1) - share(r)) * in_.split.stride * histogram_slots);
    }
  }

  /// Grows the tree of these gradients and hessians (per local training row) and adds its
  /// leaf values to raw (this tree's column of raw predictions of the local training rows).
  /// One grower grows every tree of a fit, reusing its buffers.
  HistTree grow(const float* gradients, const float* hessians, double* raw) {
    in_.gradients = gradients;
    in_.hessians = hessians;
    const index_t n_local = in_.X->n_rows;
    in_rows([&] { rows_.start_tree(gradients, hessians, in_.split.hessians_are_constant); });
    nodes_.clear();
    heap_.clear();
    n_finalized_ = 0;

    // In a fixed number of pieces (the same sums on any number of threads), on threads.
    const bool constant = in_.split.hessians_are_constant;
    const auto local_sums = onelearn::detail::sum_over_chunks(
        n_local, 4096, Sums{}, [&](index_t begin, index_t end, Sums& out) {
          for (index_t i = begin; i < end; ++i) {
            out.gradients += static_cast<double>(in_.gradients[i]);
            if (!constant) out.hessians += static_cast<double>(in_.hessians[i]);
          }
        });
    std::array<double, 2> sums{local_sums.gradients, local_sums.hessians};
    exec_.allreduce(std::span<double>(sums), exec::reduce_op::sum);
    const auto n = static_cast<double>(in_.n_total);
    if (in_.split.hessians_are_constant) sums[1] = n;  // hessians[0] * n_samples, hessians = 1
    nodes_.push_back(Node{0, n_local, n, sums[0], sums[1], 0.0, 0});
    if (n < 2 * in_.split.min_samples_leaf || sums[1] < in_.split.min_hessian_to_split) {
      finalize(0);
    } else {
      build(0);
      const std::array<std::size_t, 1> root{0};
      find_splits_and_push(root);
    }
    while (!heap_.empty()) split_next();

    HistTree tree;
    tree.nodes.resize(nodes_.size());
    add_leaf_values(raw);
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const Node& node = nodes_[i];
      HistNode& out = tree.nodes[i];
      out.count = static_cast<std::int64_t>(node.n);
      if (node.is_leaf) {
        out.value = node.value * settings_.shrinkage;
        continue;
      }
      const SplitInfo& s = node.split;
      out.is_leaf = false;
      out.value = node.value;
      out.gain = s.gain;
      out.feature = s.feature;
      out.left = node.left;
      out.right = node.right;
      out.bin_threshold = static_cast<std::uint8_t>(s.bin);
      out.missing_go_to_left = s.missing_go_to_left;
      const auto f = static_cast<std::size_t>(s.feature);
      if (s.is_categorical) {
        out.category_split = static_cast<std::int32_t>(tree.category_splits.size());
        tree.category_splits.push_back(category_split_of(s));
        continue;
      }
      out.threshold = s.bin == in_.mapper->n_bins_non_missing[f] - 1
                          ? std::numeric_limits<double>::infinity()
                          : in_.mapper->thresholds[f][static_cast<std::size_t>(s.bin)];
    }
    return tree;
  }

 private:
  struct Sums {
    double gradients = 0, hessians = 0;
    Sums& operator+=(const Sums& other) {
      gradients += other.gradients;
      hessians += other.hessians;
      return *this;
    }
  };
  struct Node {
    index_t begin = 0, end = 0;  ///< the node's local rows: rows_[begin, end)
    double n = 0;                ///< rows over all ranks
    double sum_g = 0, sum_h = 0, value = 0;
    std::int64_t depth = 0;
    SplitInfo split{};
    Histogram hist{};
    bool is_leaf = false;
    std::int32_t left = -1, right = -1;
  };

  /// Adds each leaf's value (times the learning rate) to the raw predictions of its rows. The
  /// leaves' rows are interleaved in raw, so threads taking leaves would write into the same
  /// cache lines (that took twice one thread's time on 2 threads, bench/'s gbdt); here each
  /// thread owns a range of rows instead. A node's rows are in increasing order (the root's
  /// are, and partitions are stable: hist_node_rows.hpp), so a leaf's rows in a range are one
  /// run, found by two binary searches.
  void add_leaf_values(double* raw) {
    const std::uint32_t* order = in_rows([&] { return rows_.order(); });
    const index_t n_local = in_.X->n_rows;
    const index_t width = rows_.chunks().width();
    const index_t share = std::max<index_t>(1, (n_local + width - 1) / width);
    rows_.chunks()(n_local, share, [&](index_t, index_t first_row, index_t last_row) {
      const auto first = static_cast<std::uint32_t>(first_row);
      const auto last = static_cast<std::uint32_t>(last_row);
      for (const Node& node : nodes_) {
        if (!node.is_leaf) continue;
        const double value = node.value * settings_.shrinkage;
        const std::uint32_t* begin = std::lower_bound(order + node.begin, order + node.end, first);
        const std::uint32_t* end = std::lower_bound(begin, order + node.end, last);
        for (const std::uint32_t* row = begin; row != end; ++row) raw[*row] += value;
      }
    });
  }

  /// The binned and raw category sets of categorical split s (bin b holds category
  /// thresholds[f][b], the feature's b-th known category).
  [[nodiscard]] CategorySplit category_split_of(const SplitInfo& s) const {
    const auto& categories = in_.mapper->thresholds[static_cast<std::size_t>(s.feature)];
    CategorySplit out;
    out.left_bins = s.left_bins;
    for (std::size_t b = 0; b < categories.size(); ++b) {
      const auto category = static_cast<unsigned>(categories[b]);
      out.known_categories.set(category);
      if (s.left_bins.has(static_cast<unsigned>(b))) out.left_categories.set(category);
    }
    return out;
  }

  /// The node's histogram of this rank's features, summed over the ranks. Each rank builds
  /// the histogram of its own rows for every feature, and a reduce-scatter leaves it the sums
  /// of its share of the features only (LightGBM's data-parallel histograms): half the bytes
  /// of an all-reduce on 2 ranks, and the subtractions and the split search of the other
  /// features are the other ranks' work (find_splits_and_push).
  void build(std::size_t at) {
    Node& node = nodes_[at];
    node.hist = spare_histogram();
    Histogram& local = Exec::is_distributed ? local_histogram_ : node.hist;
    in_rows([&] {
      rows_.histogram(node.begin, node.end, in_.split.hessians_are_constant, in_.split.stride,
                      local);
    });
    if constexpr (Exec::is_distributed) {
      node.hist.resize(
          static_cast<std::size_t>(share_sizes_[static_cast<std::size_t>(exec_.rank())]));
      exec_.ireduce_scatter(std::span<double>(local), std::span<double>(node.hist),
                            std::span<const std::int64_t>(share_sizes_), exec::reduce_op::sum)
          .wait();
    }
  }

  void finalize(std::size_t at) {
    nodes_[at].is_leaf = true;
    release(nodes_[at].hist);
    ++n_finalized_;
  }

  // Histograms are recycled: a fresh one (229 KB for 28 features) would be a fresh mapping of
  // zeroed pages from the system, for every node of every tree.
  Histogram spare_histogram() {
    if (spare_.empty()) return {};
    Histogram out = std::move(spare_.back());
    spare_.pop_back();
    return out;
  }
  void release(Histogram& hist) {
    if (hist.capacity() > 0) spare_.push_back(std::move(hist));
    hist = Histogram{};
  }

  /// The best split of each node of `at` (one or both children of a split, or the root), then
  /// each node pushed on the heap or made a leaf, in the order given. Under a distributed
  /// policy every rank searches its own features, and one all-gather brings every rank's
  /// candidates of all the nodes (best_over_ranks).
  void find_splits_and_push(std::span<const std::size_t> at) {
    std::array<SplitInfo, 2> best{};
    for (std::size_t k = 0; k < at.size(); ++k) {
      const Node& node = nodes_[at[k]];
      best[k] = find_best_split(node.hist, in_.split, first_feature_, last_feature_, node.n,
                                node.sum_g, node.sum_h, node.value, rows_.chunks());
    }
    if constexpr (Exec::is_distributed) best_over_ranks(std::span(best).first(at.size()));
    for (std::size_t k = 0; k < at.size(); ++k) {
      nodes_[at[k]].split = best[k];
      if (best[k].gain <= 0) {
        finalize(at[k]);
      } else {
        heap_push(at[k]);
      }
    }
  }

  /// Replaces each of this rank's best splits by the best of every rank's for that node: the
  /// largest gain, the first rank's on ties, which is the first feature's as on one process
  /// (the ranks' feature blocks are in rank order). Every rank gets the same splits, bit for
  /// bit. Every rank's piece has the same known size, so an in-place all-gather without the
  /// count exchange of allgatherv carries them: under exec::mpi one collective for both
  /// children of a split, where an allgatherv per child was four (each MPI_Allgather of the
  /// counts, then MPI_Allgatherv); under exec::ucx, whose iallgatherv_in_place is an
  /// allgatherv, two instead of four.
  void best_over_ranks(std::span<SplitInfo> mine) {
    const std::size_t piece = mine.size() * split_words;
    const auto ranks = static_cast<std::size_t>(exec_.size());
    split_exchange_.assign(ranks * piece, 0);
    std::int64_t* own = split_exchange_.data() + static_cast<std::size_t>(exec_.rank()) * piece;
    for (std::size_t k = 0; k < mine.size(); ++k) pack_split(mine[k], own + k * split_words);
    split_counts_.assign(ranks, static_cast<std::int64_t>(piece));
    exec_.iallgatherv_in_place(std::span<std::int64_t>(split_exchange_),
                               std::span<const std::int64_t>(split_counts_))
        .wait();
    for (std::size_t k = 0; k < mine.size(); ++k) {
      SplitInfo best = unpack_split(split_exchange_.data() + k * split_words);
      for (std::size_t rank = 1; rank < ranks; ++rank) {
        SplitInfo candidate = unpack_split(split_exchange_.data() + rank * piece + k * split_words);
        if (candidate.gain > best.gain) best = candidate;
      }
      mine[k] = best;
    }
  }

  /// work(), where a device failing on one rank raises on every rank (base/in_space.hpp).
  template <class Work>
  decltype(auto) in_rows(Work&& work) {
    return onelearn::detail::run_in_space(exec_, rows_.space(), std::forward<Work>(work));
  }

  void split_next() {
    const std::size_t at = heap_pop();
    const index_t middle = in_rows([&] {
      return rows_.partition(nodes_[at].begin, nodes_[at].end, nodes_[at].split,
                             in_.mapper->missing_bin());
    });
    const std::int64_t depth = nodes_[at].depth + 1;
    const auto n_leaf_nodes = static_cast<std::int64_t>(n_finalized_ + heap_.size() + 2);
    {
      const Node& parent = nodes_[at];
      const SplitInfo& s = parent.split;
      Node left{parent.begin, middle, s.n_samples_left, s.sum_gradient_left, s.sum_hessian_left,
                s.value_left, depth};
      Node right{middle, parent.end, s.n_samples_right, s.sum_gradient_right,
                 s.sum_hessian_right, s.value_right, depth};
      nodes_.push_back(std::move(left));
      nodes_.push_back(std::move(right));
    }
    const std::size_t l = nodes_.size() - 2;
    const std::size_t r = nodes_.size() - 1;
    Node& parent = nodes_[at];
    parent.left = static_cast<std::int32_t>(l);
    parent.right = static_cast<std::int32_t>(r);
    if ((*in_.split.has_missing_values)[static_cast<std::size_t>(parent.split.feature)] == 0) {
      // No missing values in training: at predict time they follow the larger child.
      parent.split.missing_go_to_left = nodes_[l].n > nodes_[r].n;
    }
    if (settings_.max_leaf_nodes > 0 && n_leaf_nodes == settings_.max_leaf_nodes) {
      finalize(l);
      finalize(r);
      while (!heap_.empty()) {  // scikit-learn pops them from the end of its list
        finalize(heap_.back());
        heap_.pop_back();
      }
      release(parent.hist);
      return;
    }
    if (settings_.max_depth > 0 && depth == settings_.max_depth) {
      finalize(l);
      finalize(r);
      release(parent.hist);
      return;
    }
    const double min_split = 2 * in_.split.min_samples_leaf;
    if (nodes_[l].n < min_split) finalize(l);
    if (nodes_[r].n < min_split) finalize(r);
    const bool split_left = !nodes_[l].is_leaf;
    const bool split_right = !nodes_[r].is_leaf;
    if (split_left || split_right) {
      const bool left_smaller = nodes_[l].n < nodes_[r].n;
      const std::size_t small = left_smaller ? l : r;
      const std::size_t large = left_smaller ? r : l;
      build(small);
      nodes_[large].hist = spare_histogram();
      subtract_histogram(nodes_[at].hist, nodes_[small].hist, nodes_[large].hist,
                         rows_.chunks());
      std::array<std::size_t, 2> to_search{};
      std::size_t n_search = 0;
      if (split_left) to_search[n_search++] = l;
      if (split_right) to_search[n_search++] = r;
      find_splits_and_push(std::span(to_search).first(n_search));
      for (std::size_t child : {l, r}) {
        if (nodes_[child].is_leaf) release(nodes_[child].hist);
      }
    }
    release(nodes_[at].hist);
  }

  // Python's heapq (heappush, heappop with _siftdown/_siftup), "smaller" = larger gain.
  [[nodiscard]] bool before(std::size_t a, std::size_t b) const {
    return nodes_[a].split.gain > nodes_[b].split.gain;
  }
  void sift_down(std::size_t start, std::size_t pos) {
    const std::size_t item = heap_[pos];
    while (pos > start) {
      const std::size_t parent = (pos - 1) >> 1;
      if (before(item, heap_[parent])) {
        heap_[pos] = heap_[parent];
        pos = parent;
        continue;
      }
      break;
    }
    heap_[pos] = item;
  }
  void sift_up(std::size_t pos) {
    const std::size_t end = heap_.size();
    const std::size_t start = pos;
    const std::size_t item = heap_[pos];
    std::size_t child = 2 * pos + 1;
    while (child < end) {
      const std::size_t right = child + 1;
      if (right < end && !before(heap_[child], heap_[right])) child = right;
      heap_[pos] = heap_[child];
      pos = child;
      child = 2 * pos + 1;
    }
    heap_[pos] = item;
    sift_down(start, pos);
  }
  void heap_push(std::size_t at) {
    heap_.push_back(at);
    sift_down(0, heap_.size() - 1);
  }
  std::size_t heap_pop() {
    const std::size_t last = heap_.back();
    heap_.pop_back();
    if (heap_.empty()) return last;
    const std::size_t top = heap_[0];
    heap_[0] = last;
    sift_up(0);
    return top;
  }

  const Exec& exec_;
  GrowerInput in_;
  GrowerSettings settings_;
  std::vector<Node> nodes_;
  std::vector<std::size_t> heap_;
  std::size_t n_finalized_ = 0;
  std::vector<Histogram> spare_;  ///< released histograms, for reuse
  /// This rank's features [first_feature_, last_feature_): the nodes' histograms hold theirs
  /// (all of them on one process).
  index_t first_feature_ = 0, last_feature_ = 0;
  std::vector<std::int64_t> share_sizes_;  ///< per rank, its features' histogram size (doubles)
  Histogram local_histogram_;  ///< distributed: this rank's rows' histogram of every feature
  /// distributed: best_over_ranks' buffers (every rank's packed candidates; the pieces' sizes)
  std::vector<std::int64_t> split_exchange_, split_counts_;
  NodeRows& rows_;                ///< the nodes' rows: nodes_[i] holds rows_ [begin, end)
};

}  // namespace onelearn::ensemble::detail
ONELEARN_END_NO_FMA
