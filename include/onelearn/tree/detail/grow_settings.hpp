#pragma once
// The tree parameters of scikit-learn (DecisionTree*, RandomForest*, ExtraTrees*), checked and
// turned into what the builder needs. Written once for every Params struct that has the fields
// criterion, max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf,
// max_features, max_leaf_nodes and min_impurity_decrease.
//
// max_features is text, since a parameter holds one type: "" or "none" (every feature),
// "sqrt", "log2", an integer ("5": that many features) or a fraction ("0.3": that share of the
// features, at least one), as scikit-learn's None, "sqrt", "log2", int and float.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/tree/detail/builder.hpp"
#include "onelearn/tree/detail/criterion.hpp"

namespace onelearn::tree::detail {

/// The number of features a node examines, for n_features features.
inline index_t resolve_max_features(std::string_view where, std::string_view text,
                                    index_t n_features) {
  auto bad = [&]() {
    return invalid_argument(std::string(where) +
                            ": expected max_features \"\" (all), \"sqrt\", \"log2\", an integer "
                            "in 1..n_features or a fraction in (0, 1], found \"" +
                            std::string(text) + "\"");
  };
  if (text.empty() || text == "none" || text == "None") return n_features;
  const auto p = static_cast<double>(n_features);
  if (text == "sqrt") return std::max<index_t>(1, static_cast<index_t>(std::sqrt(p)));
  if (text == "log2") return std::max<index_t>(1, static_cast<index_t>(std::log2(p)));
  if (text.find('.') != std::string_view::npos) {
    double fraction = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), fraction);
    if (error != std::errc{} || end != text.data() + text.size() || !(fraction > 0) ||
        fraction > 1) {
      throw bad();
    }
    return std::max<index_t>(1, static_cast<index_t>(fraction * p));
  }
  index_t count = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (error != std::errc{} || end != text.data() + text.size() || count < 1) throw bad();
  if (count > n_features) {
    throw invalid_argument(std::string(where) + ": expected max_features at most the " +
                           std::to_string(n_features) + " features, found " +
                           std::to_string(count));
  }
  return count;
}

/// "best" -> false, "random" -> true; anything else is an error.
inline bool random_splitter(std::string_view where, std::string_view splitter) {
  if (splitter == "best") return false;
  if (splitter == "random") return true;
  throw invalid_argument(std::string(where) + ": expected splitter \"best\" or \"random\", found \"" +
                         std::string(splitter) + "\"");
}

/// Checks the parameters every rank holds alike (so each rank raises the same error).
template <class P>
void check_tree_params(std::string_view where, const P& p, bool classification) {
  auto fail = [&](std::string_view expected, const auto& found) {
    std::ostringstream os;
    os << where << ": expected " << expected << ", found " << found;
    throw invalid_argument(os.str());
  };
  (void)criterion_from_name(where, p.criterion, classification);
  if (p.max_depth < 0) fail("max_depth >= 1, or 0 for no limit", p.max_depth);
  if (p.min_samples_split < 2) fail("min_samples_split >= 2", p.min_samples_split);
  if (p.min_samples_leaf < 1) fail("min_samples_leaf >= 1", p.min_samples_leaf);
  if (!(p.min_weight_fraction_leaf >= 0 && p.min_weight_fraction_leaf <= 0.5)) {
    fail("min_weight_fraction_leaf in [0, 0.5]", p.min_weight_fraction_leaf);
  }
  if (p.max_leaf_nodes < 0 || p.max_leaf_nodes == 1) {
    fail("max_leaf_nodes >= 2, or 0 for no limit", p.max_leaf_nodes);
  }
  if (!(p.min_impurity_decrease >= 0)) fail("min_impurity_decrease >= 0", p.min_impurity_decrease);
  if (p.random_state > 0xFFFFFFFFu) fail("random_state below 2^32", p.random_state);
  (void)resolve_max_features(where, p.max_features, std::numeric_limits<int>::max());
}

/// The builder's settings for data of n_features features and total weight `total_weight`.
template <class P>
GrowSettings grow_settings(std::string_view where, const P& p, bool classification,
                           bool random_thresholds, index_t n_features, double total_weight) {
  GrowSettings g;
  g.split.criterion = criterion_from_name(where, p.criterion, classification);
  g.split.random_thresholds = random_thresholds;
  g.split.max_features = resolve_max_features(where, p.max_features, n_features);
  g.split.min_samples_leaf = p.min_samples_leaf;
  g.split.min_weight_leaf = p.min_weight_fraction_leaf * total_weight;
  g.max_depth = p.max_depth == 0 ? std::numeric_limits<index_t>::max() : p.max_depth;
  g.min_samples_split = std::max<index_t>(p.min_samples_split, 2 * p.min_samples_leaf);
  g.max_leaf_nodes = p.max_leaf_nodes;
  g.min_impurity_decrease = p.min_impurity_decrease;
  return g;
}

}  // namespace onelearn::tree::detail
