#pragma once
// The boosting loop of histogram gradient boosting, shared by the classifier and the
// regressor, as scikit-learn 1.2.1's BaseHistGradientBoosting.fit: the early-stopping split
// (hist_rows.hpp), the known categories of categorical features from all rows and bin
// thresholds on the training rows (binning.hpp), the baseline, then per
// iteration the loss's gradients and one tree per raw-prediction column (hist_grower.hpp),
// and, when early stopping is on with scoring "loss", the training and validation losses after
// the baseline and after every iteration, stopping when none of the last n_iter_no_change
// scores beats the one before them by more than tol.
//
// Collective under a distributed policy: every rank calls fit with its own rows and ends with
// the same trees. The caller has validated the input and the parameters.

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/base/in_space.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/ensemble/detail/binning.hpp"
#include "onelearn/ensemble/detail/hist_categories.hpp"
#include "onelearn/ensemble/detail/hist_grower.hpp"
#include "onelearn/ensemble/detail/hist_losses.hpp"
#include "onelearn/ensemble/detail/hist_node_rows.hpp"
#include "onelearn/ensemble/detail/hist_rows.hpp"
#include "onelearn/ensemble/detail/hist_tree.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/space/concept.hpp"

namespace onelearn::ensemble::detail {

struct BoostingSettings {
  HistLoss loss;
  double learning_rate = 0.1;
  std::int64_t max_iter = 100;
  std::int64_t max_leaf_nodes = 31;  ///< 0: no limit
  std::int64_t max_depth = 0;        ///< 0: no limit
  std::int64_t min_samples_leaf = 20;
  double l2_regularization = 0;
  int max_bins = 255;
  bool early_stopping = false;
  double validation_fraction = 0.1;  ///< 0: score the training rows (scikit-learn's None)
  std::int64_t n_iter_no_change = 10;
  double tol = 1e-7;
  std::uint64_t seed = 0;
  std::vector<char> is_categorical;  ///< per feature, or empty: no categorical feature
};

/// The rows of one set (training or validation), on this rank.
struct RowSet {
  BinnedMatrix X;
  std::vector<double> y, weights, raw;
};

struct Booster {
  BinMapper mapper;
  std::vector<double> baseline;
  std::vector<std::vector<HistTree>> trees;  ///< [iteration][tree of the iteration]
  std::vector<double> train_score, validation_score;
  index_t n_features = 0;

  /// y: per local row the target or class index; weights: empty or per row; group: per row
  /// the stratum of the validation split (class index, or 0) with n_groups strata.
  /// The node rows' passes (histograms, partitions) run in `space` (hist_node_rows.hpp); the
  /// binning, the losses and the split search on the host.
  template <class T, exec::ExecutionPolicy Exec, space::ComputeSpace Space>
  void fit(const Exec& exec, const Space& space, const MatrixRef<T>& X, const std::vector<double>& y,
           const std::vector<double>& weights, const std::vector<index_t>& group,
           index_t n_groups, const BoostingSettings& s) {
    n_features = X.cols();
    trees.clear();
    train_score.clear();
    validation_score.clear();
    const RowLayout layout = RowLayout::make(exec, X.rows());
    const bool use_validation = s.early_stopping && s.validation_fraction > 0;
    std::vector<char> is_validation(static_cast<std::size_t>(X.rows()), 0);
    if (use_validation) {
      is_validation = validation_rows(exec, layout, group, n_groups, s.validation_fraction, s.seed);
    }
    std::vector<index_t> train_rows, valid_rows;
    for (index_t i = 0; i < X.rows(); ++i) {
      (is_validation[static_cast<std::size_t>(i)] ? valid_rows : train_rows).push_back(i);
    }
    std::array<std::int64_t, 2> counts{static_cast<std::int64_t>(train_rows.size()),
                                       static_cast<std::int64_t>(valid_rows.size())};
    exec.allreduce(std::span<std::int64_t>(counts), exec::reduce_op::sum);
    if (counts[0] == 0) {
      throw invalid_argument("HistGradientBoosting.fit: expected training rows left after the "
                             "validation split, found none; lower validation_fraction");
    }

    // Known categories from every row, validation rows included (scikit-learn's
    // _check_categories runs before the split), so that every validation category has a bin.
    std::vector<std::vector<double>> categories;
    if (!s.is_categorical.empty()) categories = known_categories(exec, X, s.is_categorical);
    mapper.fit(exec, X, train_rows, counts[0], layout, s.max_bins, s.seed, s.is_categorical,
               categories);
    RowSet train = take(X, y, weights, train_rows);
    RowSet valid = take(X, y, weights, valid_rows);

    // Which features have missing values in training, over all ranks.
    const index_t p = n_features;
    std::vector<std::int64_t> missing(static_cast<std::size_t>(p), 0);
    for (index_t i = 0; i < train.X.n_rows; ++i) {
      const std::uint8_t* row = train.X.row(i);
      for (index_t f = 0; f < p; ++f) {
        if (row[f] == mapper.missing_bin()) missing[static_cast<std::size_t>(f)] = 1;
      }
    }
    exec.allreduce(std::span<std::int64_t>(missing), exec::reduce_op::max);
    std::vector<char> has_missing(missing.begin(), missing.end());

    baseline = s.loss.baseline(exec, train.y, train.weights);
    const auto k = static_cast<std::size_t>(s.loss.n_trees);
    for (RowSet* set : {&train, &valid}) {
      const auto n = static_cast<std::size_t>(set->X.n_rows);
      set->raw.assign(k * n, 0.0);
      for (std::size_t c = 0; c < k; ++c) {
        std::fill(set->raw.begin() + static_cast<std::ptrdiff_t>(c * n),
                  set->raw.begin() + static_cast<std::ptrdiff_t>((c + 1) * n), baseline[c]);
      }
    }

    const bool constant = s.loss.constant_hessian(!weights.empty());
    GrowerInput input;
    input.X = &train.X;
    input.mapper = &mapper;
    input.n_total = counts[0];
    input.split.min_samples_leaf = static_cast<double>(s.min_samples_leaf);
    input.split.l2_regularization = s.l2_regularization;
    input.split.hessians_are_constant = constant;
    input.split.stride = mapper.n_bins();
    input.split.n_bins_non_missing = &mapper.n_bins_non_missing;
    input.split.has_missing_values = &has_missing;
    input.split.is_categorical = s.is_categorical.empty() ? nullptr : &s.is_categorical;
    input.split.missing_bin = mapper.missing_bin();
    const GrowerSettings grower_settings{s.max_leaf_nodes, s.max_depth, s.learning_rate};

    const auto n_train = static_cast<std::size_t>(train.X.n_rows);
    std::vector<float> gradient(k * n_train, 0.0F), hessian(k * n_train, 1.0F);
    if (s.early_stopping) record_scores(exec, s, train, valid, use_validation);
    auto node_rows = onelearn::detail::run_in_space(exec, space,
                                                    [&] { return make_node_rows(space, train.X); });
    TreeGrower<Exec, decltype(node_rows)> grower(exec, input, grower_settings, node_rows);
    for (std::int64_t iteration = 0; iteration < s.max_iter; ++iteration) {
      s.loss.gradients(train.y, train.raw, train.weights, gradient, hessian, node_rows.chunks());
      trees.emplace_back();
      for (std::size_t c = 0; c < k; ++c) {
        trees.back().push_back(grower.grow(gradient.data() + c * n_train,
                                           hessian.data() + c * n_train,
                                           train.raw.data() + c * n_train));
        if (use_validation) {
          const auto n_valid = valid.X.n_rows;
          for (index_t i = 0; i < n_valid; ++i) {
            valid.raw[c * static_cast<std::size_t>(n_valid) + static_cast<std::size_t>(i)] +=
                trees.back().back().predict_binned(valid.X.row(i), mapper.missing_bin());
          }
        }
      }
      if (s.early_stopping && record_scores(exec, s, train, valid, use_validation)) break;
    }
  }

  /// A fitted booster from its parts (a model read back from ONNX): every iteration has one
  /// tree per baseline value, every tree passes HistTree::check_structure. No bin mapper: the
  /// trees split raw values. Throws invalid_argument prefixed by `where`.
  static Booster from_trees(const std::string& where, std::vector<std::vector<HistTree>> trees,
                            std::vector<double> baseline, index_t n_features) {
    if (baseline.empty()) {
      throw invalid_argument(where + ": expected a baseline of one value per tree of an " +
                             "iteration, found none");
    }
    for (std::size_t i = 0; i < trees.size(); ++i) {
      if (trees[i].size() != baseline.size()) {
        throw invalid_argument(where + ": expected " + std::to_string(baseline.size()) +
                               " trees in every iteration (one per baseline value), found " +
                               std::to_string(trees[i].size()) + " in iteration " +
                               std::to_string(i));
      }
      for (const HistTree& tree : trees[i]) {
        tree.check_structure(where + ", iteration " + std::to_string(i), n_features);
      }
    }
    Booster out;
    out.trees = std::move(trees);
    out.baseline = std::move(baseline);
    out.n_features = n_features;
    return out;
  }

  /// Raw predictions, n x n_trees: the baseline plus every tree's leaf value, added in tree
  /// order. Walking a tree is a chain of dependent loads (a node, then the row's value of its
  /// feature), so `lanes` rows walk each tree together and their loads overlap; a tree without
  /// categorical splits walks its WalkTable (hist_tree.hpp), the others their nodes.
  template <class T>
  [[nodiscard]] Matrix<double> raw_predict(const MatrixRef<T>& X) const {
    const auto k = static_cast<index_t>(baseline.size());
    Matrix<double> out(X.rows(), k);
    std::vector<std::vector<WalkTable>> tables(trees.size());
    for (std::size_t i = 0; i < trees.size(); ++i) {
      for (const HistTree& tree : trees[i]) tables[i].push_back(WalkTable::of(tree));
    }
    constexpr index_t lanes = 32;
    onelearn::detail::for_each_chunk(X.rows(), 256, [&](index_t, index_t begin, index_t end) {
      for (index_t first = begin; first < end; first += lanes) {
        const auto n = static_cast<std::size_t>(std::min(lanes, end - first));
        for (index_t c = 0; c < k; ++c) {
          std::array<double, lanes> sum{};
          sum.fill(baseline[static_cast<std::size_t>(c)]);
          for (std::size_t i = 0; i < trees.size(); ++i) {
            const HistTree& tree = trees[i][static_cast<std::size_t>(c)];
            const WalkTable& table = tables[i][static_cast<std::size_t>(c)];
            std::array<std::int32_t, lanes> at{};
            if (!table.steps.empty() && X.cols() > 0) {  // a leaf reads column 0
              for (bool moved = true; moved;) {
                moved = false;
                for (std::size_t l = 0; l < n; ++l) {
                  const WalkTable::Step& step = table.steps[static_cast<std::size_t>(at[l])];
                  const std::int32_t next = WalkTable::next(
                      step, static_cast<double>(X(first + static_cast<index_t>(l), step.feature)));
                  moved |= next != at[l];
                  at[l] = next;
                }
              }
            } else {
              for (bool walking = true; walking;) {
                walking = false;
                for (std::size_t l = 0; l < n; ++l) {
                  const HistNode& node = tree.nodes[static_cast<std::size_t>(at[l])];
                  if (node.is_leaf) continue;
                  const auto row = first + static_cast<index_t>(l);
                  at[l] = tree.child(node, static_cast<double>(X(row, node.feature)));
                  walking = true;
                }
              }
            }
            for (std::size_t l = 0; l < n; ++l) {
              sum[l] += tree.nodes[static_cast<std::size_t>(at[l])].value;
            }
          }
          for (std::size_t l = 0; l < n; ++l) out(first + static_cast<index_t>(l), c) = sum[l];
        }
      }
    });
    return out;
  }

 private:
  template <class T>
  RowSet take(const MatrixRef<T>& X, const std::vector<double>& y,
              const std::vector<double>& weights, const std::vector<index_t>& rows) const {
    RowSet out;
    out.X = mapper.transform(X, rows);
    for (index_t i : rows) {
      out.y.push_back(y[static_cast<std::size_t>(i)]);
      if (!weights.empty()) out.weights.push_back(weights[static_cast<std::size_t>(i)]);
    }
    return out;
  }

  /// Appends -mean loss of the training (and validation) rows to the scores; true when the
  /// scores say to stop (scikit-learn's _should_stop).
  template <exec::ExecutionPolicy Exec>
  bool record_scores(const Exec& exec, const BoostingSettings& s, const RowSet& train,
                     const RowSet& valid, bool use_validation) {
    const auto a = s.loss.loss_sums(train.y, train.raw, train.weights);
    const auto b = s.loss.loss_sums(valid.y, valid.raw, valid.weights);
    std::array<double, 4> sums{a[0], a[1], b[0], b[1]};
    exec.allreduce(std::span<double>(sums), exec::reduce_op::sum);
    train_score.push_back(-sums[0] / sums[1]);
    if (use_validation) validation_score.push_back(-sums[2] / sums[3]);
    const std::vector<double>& scores = use_validation ? validation_score : train_score;
    const auto reference_position = static_cast<std::size_t>(s.n_iter_no_change + 1);
    if (scores.size() < reference_position) return false;
    const double reference = scores[scores.size() - reference_position] + s.tol;
    for (std::size_t j = scores.size() - reference_position + 1; j < scores.size(); ++j) {
      if (scores[j] > reference) return false;
    }
    return true;
  }
};

}  // namespace onelearn::ensemble::detail
