#pragma once
// One fitted tree of histogram gradient boosting, as scikit-learn's TreePredictor: nodes in an
// array (the root first), a split sending x to the left when x <= threshold (raw values) or
// bin <= bin_threshold (binned values), and missing values (NaN, or the missing-values bin) to
// the side learned in fit. Leaf values already include the learning rate.

#include <cmath>
#include <cstdint>
#include <vector>

#include "onelearn/core/types.hpp"

namespace onelearn::ensemble::detail {

struct HistNode {
  double value = 0;              ///< the leaf's contribution (learning rate included)
  double threshold = 0;          ///< raw-value threshold (+inf: every non-missing value left)
  double gain = -1;              ///< the split's gain (-1 for a leaf)
  std::int64_t count = 0;        ///< training rows that reached the node (all ranks)
  std::int32_t feature = -1;
  std::int32_t left = -1;
  std::int32_t right = -1;
  std::uint8_t bin_threshold = 0;
  bool missing_go_to_left = false;
  bool is_leaf = true;
};

struct HistTree {
  std::vector<HistNode> nodes;

  /// The leaf value reached by row x (raw feature values, NaN as missing).
  template <class Row>
  [[nodiscard]] double predict(const Row& x) const {
    std::size_t at = 0;
    while (!nodes[at].is_leaf) {
      const HistNode& node = nodes[at];
      const double v = static_cast<double>(x(node.feature));
      const bool left = std::isnan(v) ? node.missing_go_to_left : v <= node.threshold;
      at = static_cast<std::size_t>(left ? node.left : node.right);
    }
    return nodes[at].value;
  }

  /// The leaf value reached by binned row `row` of feature-major bins (column f at f * n).
  [[nodiscard]] double predict_binned(const std::uint8_t* bins, index_t n, index_t row,
                                      int missing_bin) const {
    std::size_t at = 0;
    while (!nodes[at].is_leaf) {
      const HistNode& node = nodes[at];
      const int b = bins[node.feature * n + row];
      const bool left = b == missing_bin ? node.missing_go_to_left : b <= node.bin_threshold;
      at = static_cast<std::size_t>(left ? node.left : node.right);
    }
    return nodes[at].value;
  }

  [[nodiscard]] index_t n_leaves() const {
    index_t n = 0;
    for (const HistNode& node : nodes) n += node.is_leaf ? 1 : 0;
    return n;
  }
};

}  // namespace onelearn::ensemble::detail
