#pragma once
// What the forest classifiers and regressors share: their parameters' checks, growing the trees
// from a Params (tree parameters plus n_estimators, bootstrap, oob_score, random_state), the
// out-of-bag sums and the feature importances, as scikit-learn's BaseForest (1.2.1).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/ensemble/detail/grow_forest.hpp"
#include "onelearn/tree/detail/fitted_tree.hpp"
#include "onelearn/tree/detail/grow_settings.hpp"

namespace onelearn::ensemble::detail {

template <class P>
void check_forest_params(std::string_view where, const P& p, bool classification) {
  tree::detail::check_tree_params(where, p, classification);
  if (p.n_estimators < 1) {
    throw invalid_argument(std::string(where) + ": expected n_estimators >= 1, found " +
                           std::to_string(p.n_estimators));
  }
  if (p.oob_score && !p.bootstrap) {
    throw invalid_argument(std::string(where) + ": expected bootstrap = true with oob_score = " +
                           "true (out-of-bag rows exist only with bootstrap samples), found " +
                           "bootstrap = false");
  }
}

/// The forest's trees, grown from `data` with the tree parameters in `p`.
template <class P, exec::ExecutionPolicy Exec>
std::vector<TreeNodes> grow_forest_from(std::string_view where, const Exec& exec,
                                        const TrainingData& data, const P& p,
                                        bool random_thresholds) {
  ForestSettings forest;
  forest.n_estimators = p.n_estimators;
  forest.bootstrap = p.bootstrap;
  forest.random_thresholds = random_thresholds;
  forest.random_state = static_cast<std::uint32_t>(p.random_state);
  return grow_forest(exec, data, forest, [&](double total_weight) {
    return tree::detail::grow_settings(where, p, data.classification(), random_thresholds,
                                       data.n_features, total_weight);
  });
}

/// Out of bag: for every row, the sum of the predictions (n_values each) of the trees whose
/// bootstrap sample missed it, divided by their number (rows that every tree drew: divided by
/// 1, as scikit-learn does after its warning). `predict_rows(tree, rows)` gives a tree's
/// predictions for data rows, row-major.
template <class PredictLeaf>
Matrix<double> out_of_bag(const TrainingData& data, const std::vector<TreeNodes>& trees,
                          std::uint32_t random_state, index_t n_values, PredictLeaf&& leaf_values) {
  const std::vector<std::uint32_t> seeds =
      tree_seeds(random_state, static_cast<index_t>(trees.size()));
  Matrix<double> sums = Matrix<double>::Zero(data.n_rows, n_values);
  std::vector<double> seen(static_cast<std::size_t>(data.n_rows), 0.0);
  for (std::size_t t = 0; t < trees.size(); ++t) {
    const std::vector<double> counts = bootstrap_counts(seeds[t], data.n_rows);
    for (index_t i = 0; i < data.n_rows; ++i) {
      if (counts[static_cast<std::size_t>(i)] > 0) continue;
      const index_t leaf = trees[t].leaf_of([&](index_t f) { return data.value(f, i); });
      leaf_values(trees[t], leaf, sums.row(i));
      seen[static_cast<std::size_t>(i)] += 1;
    }
  }
  for (index_t i = 0; i < data.n_rows; ++i) {
    sums.row(i) /= std::max(1.0, seen[static_cast<std::size_t>(i)]);
  }
  return sums;
}

/// The mean of the trees' normalised importances (trees that are one leaf left out), normalised.
inline Vector<double> forest_importances(const std::vector<TreeNodes>& trees, index_t n_features) {
  Vector<double> total = Vector<double>::Zero(n_features);
  index_t counted = 0;
  for (const TreeNodes& t : trees) {
    if (t.node_count() <= 1) continue;
    total += tree::detail::normalized_importances(t.raw_feature_importances(n_features));
    ++counted;
  }
  if (counted == 0) return total;
  total /= static_cast<double>(counted);
  return total / total.sum();
}

/// The first row of this rank within the rows of all ranks (rank order).
template <exec::ExecutionPolicy Exec>
index_t first_row_of_rank(const Exec& exec, index_t local_rows) {
  const std::vector<std::int64_t> mine{local_rows};
  const std::vector<std::int64_t> all = exec.allgatherv(std::span<const std::int64_t>(mine));
  index_t offset = 0;
  for (int r = 0; r < exec.rank(); ++r) offset += all[static_cast<std::size_t>(r)];
  return offset;
}

}  // namespace onelearn::ensemble::detail
