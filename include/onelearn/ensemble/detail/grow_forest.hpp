#pragma once
// Growing the trees of a forest, as scikit-learn's BaseForest.fit (1.2.1) does, so that the same
// random_state gives the same forest:
// - tree t's random_state is the t-th numpy.random.RandomState(random_state).randint(2^31 - 1);
// - with bootstrap, tree t's rows are RandomState(its random_state).randint(0, n, n), given to
//   the tree as weights (each row's sample weight times the times it was drawn; rows never
//   drawn have weight 0 and are out of bag);
// - each tree then draws its features from its own random_state (tree/detail/sklearn_random.hpp).
//
// The columns are sorted once for all trees; the trees grow on OpenMP threads, one tree per
// thread at a time. Under a distributed policy every rank holds all rows (tree/detail/
// training_rows.hpp); rank r grows the trees t with t mod size == r, and the trees are
// all-gathered, so that every rank ends with the whole forest, equal to the forest one process
// grows.

#include <cstdint>
#include <span>
#include <vector>

#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/tree/detail/builder.hpp"
#include "onelearn/tree/detail/sklearn_random.hpp"
#include "onelearn/tree/detail/splitter.hpp"
#include "onelearn/tree/detail/training_data.hpp"
#include "onelearn/tree/detail/tree_nodes.hpp"

namespace onelearn::ensemble::detail {

using tree::detail::TrainingData;
using tree::detail::TreeNodes;

struct ForestSettings {
  index_t n_estimators = 100;
  bool bootstrap = true;
  bool random_thresholds = false;  ///< ExtraTrees
  std::uint32_t random_state = 0;
};

/// Each tree's random_state, drawn as scikit-learn's _set_random_states does.
inline std::vector<std::uint32_t> tree_seeds(std::uint32_t random_state, index_t n_estimators) {
  tree::detail::NumpyRandomState numpy(random_state);
  std::vector<std::uint32_t> out(static_cast<std::size_t>(n_estimators));
  for (auto& seed : out) {
    seed = static_cast<std::uint32_t>(numpy.randint(0, tree::detail::rand_r_max));
  }
  return out;
}

/// How often each of n rows is drawn into tree `seed`'s bootstrap sample.
inline std::vector<double> bootstrap_counts(std::uint32_t seed, index_t n) {
  tree::detail::NumpyRandomState numpy(seed);
  std::vector<double> counts(static_cast<std::size_t>(n), 0.0);
  for (index_t i = 0; i < n; ++i) counts[static_cast<std::size_t>(numpy.randint(0, n))] += 1;
  return counts;
}

/// The trees of a forest, in order. `grow` is (data, weights, seed) -> settings for one tree,
/// called with the weights the tree sees (min_weight_fraction_leaf depends on their sum).
template <exec::ExecutionPolicy Exec, class SettingsFor>
std::vector<TreeNodes> grow_forest(const Exec& exec, const TrainingData& data,
                                   const ForestSettings& forest, SettingsFor&& settings_for) {
  const std::vector<std::uint32_t> seeds = tree_seeds(forest.random_state, forest.n_estimators);
  const int rank = exec.rank(), size = exec.size();
  // This rank's trees: t = rank, rank + size, ...
  std::vector<index_t> mine;
  for (index_t t = rank; t < forest.n_estimators; t += size) mine.push_back(t);
  std::vector<TreeNodes> grown(mine.size());
  onelearn::detail::for_each_chunk(
      static_cast<index_t>(mine.size()), 1, [&](index_t k, index_t, index_t) {
        const std::uint32_t seed = seeds[static_cast<std::size_t>(mine[static_cast<std::size_t>(k)])];
        std::vector<double> weights = data.weight;
        if (forest.bootstrap) {
          const std::vector<double> counts = bootstrap_counts(seed, data.n_rows);
          for (std::size_t i = 0; i < weights.size(); ++i) weights[i] *= counts[i];
        }
        double total = 0;
        for (double w : weights) total += w;
        const tree::detail::GrowSettings settings = settings_for(total);
        grown[static_cast<std::size_t>(k)] = tree::detail::grow_tree(
            data, std::move(weights), settings, tree::detail::TreeRandom::for_random_state(seed),
            false);
      });
  if (size == 1) return grown;

  std::vector<double> packed;
  for (const TreeNodes& t : grown) {
    const std::vector<double> one = t.pack();
    packed.insert(packed.end(), one.begin(), one.end());
  }
  const std::vector<double> all = exec.allgatherv(std::span<const double>(packed));
  // Rank order: rank 0's trees 0, size, 2 size, ..., then rank 1's 1, size + 1, ...
  std::vector<TreeNodes> trees(static_cast<std::size_t>(forest.n_estimators));
  std::size_t at = 0;
  for (int r = 0; r < size; ++r) {
    for (index_t t = r; t < forest.n_estimators; t += size) {
      trees[static_cast<std::size_t>(t)] = TreeNodes::unpack(all, at);
    }
  }
  return trees;
}

}  // namespace onelearn::ensemble::detail
