#pragma once
// The split search of one tree, as scikit-learn's BestSplitter and RandomSplitter
// (sklearn/tree/_splitter.pyx), on columns sorted once instead of sorted at every node.
//
// Same tree as scikit-learn: the features of a node are drawn with the same Fisher-Yates loop
// (features found constant in a node are skipped in its descendants, and count towards
// max_features when drawn); candidate thresholds lie between consecutive values that differ by
// more than 1e-7, at the midpoint computed in double from the float32 values; a candidate is
// rejected when a child would get fewer than min_samples_leaf rows or less than min_weight_leaf
// weight; the first candidate with the largest proxy wins; the features are drawn from
// scikit-learn's own random numbers (sklearn_random.hpp). So with the same random_state the
// trees are equal node for node, ties between features included (tests/unit/test_trees.cpp).
// One exception: for regression, two candidates that are exactly as good in exact arithmetic
// (tiny nodes, where two features cut off the same rows) can compare the other way round,
// because the node's sums are added in another row order than scikit-learn's.
//
// Cost: scikit-learn sorts each candidate feature's values at every node, O(n log n) per
// feature and level; here each level costs O(n) per feature, to scan the sorted values and to
// split every column stably into the two children. The candidate features of a large node are
// scanned, and the columns split, on OpenMP threads (when `threads`: a forest grows its trees
// on threads instead).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "onelearn/core/detail/no_fma.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/tree/detail/criterion.hpp"
#include "onelearn/tree/detail/sklearn_random.hpp"
#include "onelearn/tree/detail/training_data.hpp"

ONELEARN_BEGIN_NO_FMA  // scikit-learn's roundings (core/detail/no_fma.hpp)
namespace onelearn::tree::detail {

/// Values closer than this are one value (scikit-learn's FEATURE_THRESHOLD).
inline constexpr double feature_threshold = 1e-7;

struct SplitSettings {
  Criterion criterion = Criterion::gini;
  bool random_thresholds = false;  ///< ExtraTrees: one random threshold per feature
  index_t max_features = 0;
  index_t min_samples_leaf = 1;
  double min_weight_leaf = 0;
};

struct Split {
  index_t feature = -1;
  index_t position = 0;  ///< rows [begin, position) go left; == end: no split found
  double threshold = 0;
  double proxy = -std::numeric_limits<double>::infinity();
  double impurity_left = 0, impurity_right = 0, improvement = 0;
  double weight_left = 0, weight_right = 0;
};

/// The weighted sums of a node: class weights (classification) or Σ w y (regression), Σ w y²,
/// and Σ w.
struct NodeTotals {
  std::vector<double> sums;
  double square_sum = 0;
  double weight = 0;
};

class Splitter {
 public:
  Splitter(const TrainingData& data, std::vector<double> weights, const SplitSettings& settings,
           TreeRandom random, bool threads)
      : data_(data),
        weights_(std::move(weights)),
        settings_(settings),
        random_(random),
        threads_(threads),
        columns_(sort_columns_for(data, weights_, threads)),
        goes_left_(static_cast<std::size_t>(data.n_rows), 0),
        features_(static_cast<std::size_t>(data.n_features)),
        constant_features_(static_cast<std::size_t>(data.n_features)) {
    for (index_t f = 0; f < data.n_features; ++f) features_[static_cast<std::size_t>(f)] = f;
  }

  [[nodiscard]] index_t n_rows() const noexcept { return columns_.n_rows; }
  [[nodiscard]] const std::vector<double>& weights() const noexcept { return weights_; }

  /// The weighted sums of the rows [begin, end).
  [[nodiscard]] NodeTotals totals(index_t begin, index_t end) const {
    NodeTotals t;
    t.sums.assign(static_cast<std::size_t>(data_.classification() ? data_.n_classes : 1), 0.0);
    const std::int32_t* rows = columns_.rows_of(0);
    for (index_t j = begin; j < end; ++j) {
      const auto r = static_cast<std::size_t>(rows[j]);
      const double w = weights_[r];
      if (data_.classification()) {
        t.sums[static_cast<std::size_t>(data_.class_of[r])] += w;
      } else {
        t.sums[0] += w * data_.y[r];
        t.square_sum += w * data_.y[r] * data_.y[r];
      }
      t.weight += w;
    }
    return t;
  }

  [[nodiscard]] double impurity(const NodeTotals& t) const {
    return data_.classification() ? class_impurity(settings_.criterion, t.sums, t.weight)
                                  : squared_error_impurity(t.sums[0], t.square_sum, t.weight);
  }

  /// What a node stores as its value: the class weights, or the mean target.
  [[nodiscard]] std::vector<double> node_value(const NodeTotals& t) const {
    if (data_.classification()) return t.sums;
    return {t.sums[0] / t.weight};
  }

  /// The best split of the rows [begin, end), and the rows put in its two children's ranges.
  /// `n_constant` enters as the number of features known constant in an ancestor and leaves as
  /// that number for the children.
  Split split(index_t begin, index_t end, const NodeTotals& totals, double node_impurity,
              double root_weight, index_t& n_constant) {
    const std::vector<Candidate> candidates = draw_features(begin, end, n_constant);
    std::vector<Split> best(candidates.size());
    const bool parallel = threads_ && (end - begin) * static_cast<index_t>(candidates.size()) > 50'000;
    auto scan = [&](index_t i) {
      best[static_cast<std::size_t>(i)] = scan_feature(candidates[static_cast<std::size_t>(i)],
                                                       begin, end, totals);
    };
    const auto n_candidates = static_cast<index_t>(candidates.size());
    if (parallel) {
      onelearn::detail::for_each_chunk(n_candidates, 1, [&](index_t i, index_t, index_t) { scan(i); });
    } else {
      for (index_t i = 0; i < n_candidates; ++i) scan(i);
    }
    Split chosen;
    chosen.position = end;
    for (const Split& s : best) {
      if (s.proxy > chosen.proxy) chosen = s;  // strictly larger: the first drawn wins ties
    }
    if (chosen.position >= end) return chosen;
    children_impurity(chosen, begin, end, totals);
    chosen.improvement = improvement(root_weight, totals.weight, node_impurity,
                                     chosen.weight_left, chosen.impurity_left,
                                     chosen.weight_right, chosen.impurity_right);
    partition(chosen, begin, end);
    return chosen;
  }

 private:
  struct Candidate {
    index_t feature;
    double threshold;  ///< the random splitter's draw; unused by the best splitter
  };

  /// The features this node examines, in the order drawn (scikit-learn's loop, see the top).
  std::vector<Candidate> draw_features(index_t begin, index_t end, index_t& n_constant) {
    const auto n_features = static_cast<index_t>(features_.size());
    const index_t n_known = n_constant;
    index_t f_i = n_features, visited = 0, found = 0, drawn = 0, total = n_known;
    std::vector<Candidate> out;
    auto at = [](std::vector<index_t>& v, index_t i) -> index_t& {
      return v[static_cast<std::size_t>(i)];
    };
    while (f_i > total && (visited < settings_.max_features || visited <= found + drawn)) {
      ++visited;
      index_t f_j = random_.below(drawn, f_i - found);
      if (f_j < n_known) {
        std::swap(at(features_, drawn), at(features_, f_j));
        ++drawn;
        continue;
      }
      f_j += found;
      const index_t feature = at(features_, f_j);
      const float* values = columns_.values_of(feature);
      const double low = values[begin], high = values[end - 1];
      if (high <= low + feature_threshold) {
        std::swap(at(features_, f_j), at(features_, total));
        ++found;
        ++total;
        continue;
      }
      --f_i;
      std::swap(at(features_, f_i), at(features_, f_j));
      double threshold = 0;
      if (settings_.random_thresholds) {
        threshold = random_.uniform(low, high);
        if (threshold == high) threshold = low;
      }
      out.push_back({feature, threshold});
    }
    // Keep the known constants first, in their order, for the sibling and the children.
    std::copy_n(constant_features_.begin(), n_known, features_.begin());
    std::copy_n(features_.begin() + n_known, found, constant_features_.begin() + n_known);
    n_constant = total;
    return out;
  }

  /// Adds row r's weight (and target) to the running left sums.
  void add_left(std::vector<double>& left, double& left_weight, std::int32_t r) const {
    const auto i = static_cast<std::size_t>(r);
    const double w = weights_[i];
    if (data_.classification()) {
      left[static_cast<std::size_t>(data_.class_of[i])] += w;
    } else {
      left[0] += w * data_.y[i];
    }
    left_weight += w;
  }

  [[nodiscard]] double proxy(const std::vector<double>& left, double left_weight,
                             std::vector<double>& right, const NodeTotals& totals) const {
    const double right_weight = totals.weight - left_weight;
    for (std::size_t c = 0; c < left.size(); ++c) right[c] = totals.sums[c] - left[c];
    if (!data_.classification()) {
      return left[0] * left[0] / left_weight + right[0] * right[0] / right_weight;
    }
    return -right_weight * class_impurity(settings_.criterion, right, right_weight) -
           left_weight * class_impurity(settings_.criterion, left, left_weight);
  }

  [[nodiscard]] bool acceptable(index_t begin, index_t end, index_t position,
                                double left_weight, double total_weight) const {
    return position - begin >= settings_.min_samples_leaf &&
           end - position >= settings_.min_samples_leaf &&
           left_weight >= settings_.min_weight_leaf &&
           total_weight - left_weight >= settings_.min_weight_leaf;
  }

  /// The best split of one feature (its first largest proxy), or proxy -inf when none is
  /// acceptable.
  [[nodiscard]] Split scan_feature(const Candidate& candidate, index_t begin, index_t end,
                                   const NodeTotals& totals) const {
    const float* values = columns_.values_of(candidate.feature);
    const std::int32_t* rows = columns_.rows_of(candidate.feature);
    std::vector<double> left(totals.sums.size(), 0.0), right(totals.sums.size());
    double left_weight = 0;
    Split best;
    best.feature = candidate.feature;
    best.position = end;
    if (settings_.random_thresholds) {
      index_t position = begin;
      while (position < end && static_cast<double>(values[position]) <= candidate.threshold) {
        add_left(left, left_weight, rows[position++]);
      }
      if (position < end && acceptable(begin, end, position, left_weight, totals.weight)) {
        best.proxy = proxy(left, left_weight, right, totals);
        best.position = position;
        best.threshold = candidate.threshold;
      }
      return best;
    }
    for (index_t j = begin; j + 1 < end; ++j) {
      add_left(left, left_weight, rows[j]);
      const double here = values[j], next = values[j + 1];
      if (next <= here + feature_threshold) continue;
      const index_t position = j + 1;
      if (!acceptable(begin, end, position, left_weight, totals.weight)) continue;
      const double p = proxy(left, left_weight, right, totals);
      if (p > best.proxy) {
        best.proxy = p;
        best.position = position;
        best.threshold = here / 2.0 + next / 2.0;  // sum of halves: no overflow
        if (best.threshold == next || std::isinf(best.threshold)) best.threshold = here;
      }
    }
    return best;
  }

  /// The children's impurities, from sums over the chosen feature's sorted rows.
  void children_impurity(Split& split, index_t begin, index_t end, const NodeTotals& totals) const {
    const std::int32_t* rows = columns_.rows_of(split.feature);
    std::vector<double> left(totals.sums.size(), 0.0), right(totals.sums.size());
    double left_weight = 0;
    // As scikit-learn's Criterion.update: from the nearer end of the node.
    if (split.position - begin <= end - split.position) {
      for (index_t j = begin; j < split.position; ++j) add_left(left, left_weight, rows[j]);
    } else {
      std::vector<double> tail(totals.sums.size(), 0.0);
      double tail_weight = 0;
      for (index_t j = end - 1; j >= split.position; --j) add_left(tail, tail_weight, rows[j]);
      for (std::size_t c = 0; c < left.size(); ++c) left[c] = totals.sums[c] - tail[c];
      left_weight = totals.weight - tail_weight;
    }
    const double right_weight = totals.weight - left_weight;
    for (std::size_t c = 0; c < left.size(); ++c) right[c] = totals.sums[c] - left[c];
    split.weight_left = left_weight;
    split.weight_right = right_weight;
    if (data_.classification()) {
      split.impurity_left = class_impurity(settings_.criterion, left, left_weight);
      split.impurity_right = class_impurity(settings_.criterion, right, right_weight);
      return;
    }
    double left_squares = 0;
    for (index_t j = begin; j < split.position; ++j) {
      const auto r = static_cast<std::size_t>(rows[j]);
      left_squares += weights_[r] * data_.y[r] * data_.y[r];
    }
    split.impurity_left = squared_error_impurity(left[0], left_squares, left_weight);
    split.impurity_right =
        squared_error_impurity(right[0], totals.square_sum - left_squares, right_weight);
  }

  /// Splits every column's range [begin, end) stably into the left rows, then the right rows.
  void partition(const Split& split, index_t begin, index_t end) {
    const std::int32_t* chosen = columns_.rows_of(split.feature);
    for (index_t j = begin; j < end; ++j) {
      goes_left_[static_cast<std::size_t>(chosen[j])] = j < split.position ? 1 : 0;
    }
    const index_t n_features = columns_.n_features;
    auto split_column = [&](index_t f, std::vector<float>& value_scratch,
                            std::vector<std::int32_t>& row_scratch) {
      if (f == split.feature) return;  // already in order: its left rows come first
      float* values = columns_.values_of(f);
      std::int32_t* rows = columns_.rows_of(f);
      index_t left = begin;
      std::size_t n_right = 0;
      for (index_t j = begin; j < end; ++j) {
        if (goes_left_[static_cast<std::size_t>(rows[j])]) {
          values[left] = values[j];
          rows[left] = rows[j];
          ++left;
        } else {
          value_scratch[n_right] = values[j];
          row_scratch[n_right] = rows[j];
          ++n_right;
        }
      }
      std::copy_n(value_scratch.begin(), n_right, values + left);
      std::copy_n(row_scratch.begin(), n_right, rows + left);
    };
    const auto size = static_cast<std::size_t>(end - begin);
    if (threads_ && (end - begin) * n_features > 50'000) {
      onelearn::detail::for_each_chunk(n_features, 1, [&](index_t f, index_t, index_t) {
        std::vector<float> value_scratch(size);
        std::vector<std::int32_t> row_scratch(size);
        split_column(f, value_scratch, row_scratch);
      });
    } else {
      value_scratch_.resize(std::max(value_scratch_.size(), size));
      row_scratch_.resize(std::max(row_scratch_.size(), size));
      for (index_t f = 0; f < n_features; ++f) split_column(f, value_scratch_, row_scratch_);
    }
  }

  const TrainingData& data_;
  std::vector<double> weights_;
  SplitSettings settings_;
  TreeRandom random_;
  bool threads_;
  SortedColumns columns_;
  std::vector<std::uint8_t> goes_left_;
  std::vector<index_t> features_, constant_features_;
  std::vector<float> value_scratch_;
  std::vector<std::int32_t> row_scratch_;
};

}  // namespace onelearn::tree::detail

ONELEARN_END_NO_FMA
