#pragma once
/**
 * \file
 * \brief KFold, StratifiedKFold and GroupKFold: the k-fold cross-validation splitters.
 * \ingroup model_selection
 *
 * \code
 * #include <onelearn/model_selection/kfold.hpp>
 * using namespace onelearn::model_selection;
 *
 * KFold kf;                                           // 5 contiguous folds, as scikit-learn's
 * for (const Fold& fold : kf.split(X.rows())) {       // fold.train, fold.test: row indices
 *   model.fit(X(fold.train, Eigen::all), y(fold.train));
 *   double s = model.score(X(fold.test, Eigen::all), y(fold.test));
 * }
 * KFold shuffled({.n_splits = 10, .shuffle = true, .random_state = 42});
 *
 * StratifiedKFold skf;                                 // class proportions kept in every fold
 * std::vector<Fold> folds = skf.split(labels);         // labels: onelearn::Labels
 * std::vector<onelearn::index_t> where = skf.test_folds(labels);  // fold of each sample
 *
 * GroupKFold gkf({.n_splits = 3});                     // a group never straddles two folds
 * std::vector<Fold> by_patient = gkf.split(patient_id);
 * \endcode
 *
 * model_selection::KFold, StratifiedKFold, GroupKFold: the k-fold cross-validation splitters
 * of scikit-learn (1.2.1). Each split() returns n_splits Folds; the test sets partition the
 * samples and each fold's train set is every other sample. Both index lists of a fold are
 * ascending, as in scikit-learn.
 *
 * Method:
 * - KFold: the first n % k folds hold ⌈n/k⌉ consecutive samples, the others ⌊n/k⌋; with
 *   shuffle the samples are permuted first.
 * - StratifiedKFold: scikit-learn's _make_test_folds. Classes are numbered in order of first
 *   appearance; the sorted class codes are dealt round-robin to the folds, which fixes how many
 *   samples of each class every fold gets; then each class's samples, in data order, fill
 *   fold 0's share, then fold 1's, ... (with shuffle, that list of fold numbers is permuted
 *   per class). Without shuffle the assignment equals scikit-learn's exactly.
 * - GroupKFold: scikit-learn's greedy assignment: the groups, largest first, each go to the
 *   fold with the fewest samples so far (the first such fold on a tie).
 *
 * \par Parameters
 * - KFoldParams / StratifiedKFoldParams: `n_splits` (default 5, >= 2), `shuffle` (default
 *   false), `random_state` (std::uint64_t seed, default 0; used only with shuffle).
 * - GroupKFoldParams: `n_splits` (default 5, >= 2).
 *
 * \par Differences from scikit-learn
 * - With shuffle the permutation comes from a std::mt19937_64 seeded with random_state and a
 *   portable Fisher-Yates shuffle: a seed gives the same folds on every platform, but not
 *   NumPy's folds (its generator cannot be reproduced); sizes and class counts per fold agree.
 *   There is no "unseeded" state: the default seed is 0. Setting random_state without shuffle
 *   is allowed (scikit-learn raises).
 * - StratifiedKFold: a class with fewer members than n_splits is an error (scikit-learn only
 *   warns, unless every class is that small); such a class would be missing from some test
 *   folds, so per-fold scores would not be comparable.
 * - GroupKFold with equal group sizes: ties are taken in descending order of the group label's
 *   rank, which is what NumPy's argsort gives for up to 16 groups; beyond that NumPy's
 *   (unstable) sort may order ties otherwise.
 * - Groups are integer labels (Labels).
 *
 * Errors (invalid_argument): n_splits < 2 (at construction); more folds than samples; for
 * StratifiedKFold, more folds than the members of the smallest class; for GroupKFold, more
 * folds than distinct groups.
 */

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/model_selection/detail/split_common.hpp"

namespace onelearn::model_selection {

struct KFoldParams {
  std::int64_t n_splits = 5;       ///< number of folds, >= 2
  bool shuffle = false;            ///< permute the samples before cutting the folds
  std::uint64_t random_state = 0;  ///< seed of the permutation (with shuffle)

  static constexpr std::array<std::string_view, 3> names{"n_splits", "shuffle", "random_state"};
};

struct StratifiedKFoldParams {
  std::int64_t n_splits = 5;       ///< number of folds, >= 2
  bool shuffle = false;            ///< permute each class's fold numbers
  std::uint64_t random_state = 0;  ///< seed of the permutations (with shuffle)

  static constexpr std::array<std::string_view, 3> names{"n_splits", "shuffle", "random_state"};
};

struct GroupKFoldParams {
  std::int64_t n_splits = 5;  ///< number of folds, >= 2

  static constexpr std::array<std::string_view, 1> names{"n_splits"};
};

/// K consecutive folds (after an optional seeded shuffle). See the file's documentation.
class KFold {
 public:
  using Params = KFoldParams;

  explicit KFold(const Params& params = {}) : params_(params) {
    detail::check_n_splits("KFold", params_.n_splits);
  }

  [[nodiscard]] const Params& get_params() const noexcept { return params_; }
  [[nodiscard]] index_t get_n_splits() const noexcept { return params_.n_splits; }

  /// test_fold[i]: the fold whose test set holds sample i.
  [[nodiscard]] std::vector<index_t> test_folds(index_t n_samples) const {
    detail::check_splits_vs_samples("KFold.split", params_.n_splits, n_samples);
    std::vector<index_t> order = detail::iota(n_samples);
    if (params_.shuffle) {
      detail::Rng rng(params_.random_state);
      detail::shuffle(order, rng);
    }
    const index_t k = params_.n_splits;
    std::vector<index_t> out(static_cast<std::size_t>(n_samples));
    index_t position = 0;
    for (index_t f = 0; f < k; ++f) {
      const index_t size = n_samples / k + (f < n_samples % k ? 1 : 0);
      for (index_t j = 0; j < size; ++j, ++position) {
        out[static_cast<std::size_t>(order[static_cast<std::size_t>(position)])] = f;
      }
    }
    return out;
  }

  [[nodiscard]] std::vector<Fold> split(index_t n_samples) const {
    return detail::folds_from_assignment(test_folds(n_samples), params_.n_splits);
  }

 private:
  Params params_;
};

/// K folds that keep each class's share of the samples. See the file's documentation.
class StratifiedKFold {
 public:
  using Params = StratifiedKFoldParams;

  explicit StratifiedKFold(const Params& params = {}) : params_(params) {
    detail::check_n_splits("StratifiedKFold", params_.n_splits);
  }

  [[nodiscard]] const Params& get_params() const noexcept { return params_; }
  [[nodiscard]] index_t get_n_splits() const noexcept { return params_.n_splits; }

  /// test_fold[i]: the fold whose test set holds sample i (scikit-learn's _make_test_folds).
  [[nodiscard]] std::vector<index_t> test_folds(const LabelsRef& y) const {
    constexpr std::string_view where = "StratifiedKFold.split";
    const index_t k = params_.n_splits;
    detail::check_splits_vs_samples(where, k, y.size());
    const detail::EncodedLabels enc = detail::encode_by_appearance(y);
    const auto n_classes = static_cast<index_t>(enc.labels.size());
    const auto smallest = std::min_element(enc.counts.begin(), enc.counts.end());
    if (*smallest < k) {
      const auto c = static_cast<std::size_t>(smallest - enc.counts.begin());
      throw invalid_argument(std::string(where) + ": expected every class to have at least " +
                             "n_splits=" + std::to_string(k) + " members, found " +
                             std::to_string(*smallest) + " for class " +
                             std::to_string(enc.labels[c]) + " (the least populated class in y)");
    }

    // allocation(f, c): samples of class c in fold f, from dealing the sorted class codes
    // round-robin (y_order[f::k] in scikit-learn). The sorted codes are runs of counts[c].
    std::vector<index_t> allocation(static_cast<std::size_t>(k * n_classes), 0);
    index_t position = 0;
    for (index_t c = 0; c < n_classes; ++c) {
      for (index_t j = 0; j < enc.counts[static_cast<std::size_t>(c)]; ++j, ++position) {
        ++allocation[static_cast<std::size_t>((position % k) * n_classes + c)];
      }
    }

    detail::Rng rng(params_.random_state);
    std::vector<std::vector<index_t>> folds_for_class(static_cast<std::size_t>(n_classes));
    for (index_t c = 0; c < n_classes; ++c) {
      auto& folds = folds_for_class[static_cast<std::size_t>(c)];
      for (index_t f = 0; f < k; ++f) {
        folds.insert(
            folds.end(),
            static_cast<std::size_t>(allocation[static_cast<std::size_t>(f * n_classes + c)]), f);
      }
      if (params_.shuffle) detail::shuffle(folds, rng);
    }
    std::vector<index_t> out(static_cast<std::size_t>(y.size()));
    std::vector<std::size_t> next(static_cast<std::size_t>(n_classes), 0);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto c = static_cast<std::size_t>(enc.code[i]);
      out[i] = folds_for_class[c][next[c]++];
    }
    return out;
  }

  [[nodiscard]] std::vector<Fold> split(const LabelsRef& y) const {
    return detail::folds_from_assignment(test_folds(y), params_.n_splits);
  }

 private:
  Params params_;
};

/// K folds that never split a group. See the file's documentation.
class GroupKFold {
 public:
  using Params = GroupKFoldParams;

  explicit GroupKFold(const Params& params = {}) : params_(params) {
    detail::check_n_splits("GroupKFold", params_.n_splits);
  }

  [[nodiscard]] const Params& get_params() const noexcept { return params_; }
  [[nodiscard]] index_t get_n_splits() const noexcept { return params_.n_splits; }

  /// test_fold[i]: the fold whose test set holds sample i (all samples of a group share one).
  [[nodiscard]] std::vector<index_t> test_folds(const LabelsRef& groups) const {
    constexpr std::string_view where = "GroupKFold.split";
    const index_t k = params_.n_splits;
    detail::check_splits_vs_samples(where, k, groups.size());
    const detail::EncodedLabels enc = detail::encode_sorted(groups);
    const auto n_groups = static_cast<index_t>(enc.labels.size());
    if (k > n_groups) {
      throw invalid_argument(std::string(where) + ": expected n_splits <= the number of " +
                             "distinct groups, found n_splits=" + std::to_string(k) +
                             " greater than " + std::to_string(n_groups) + " groups");
    }
    // Largest group first; among equal sizes the later group first (the reverse of a stable
    // ascending argsort, as np.argsort(...)[::-1] gives).
    std::vector<index_t> order = detail::iota(n_groups);
    std::stable_sort(order.begin(), order.end(), [&](index_t a, index_t b) {
      return enc.counts[static_cast<std::size_t>(a)] < enc.counts[static_cast<std::size_t>(b)];
    });
    std::reverse(order.begin(), order.end());
    std::vector<index_t> fold_size(static_cast<std::size_t>(k), 0);
    std::vector<index_t> group_fold(static_cast<std::size_t>(n_groups), 0);
    for (const index_t g : order) {
      const auto lightest = std::min_element(fold_size.begin(), fold_size.end());
      *lightest += enc.counts[static_cast<std::size_t>(g)];
      group_fold[static_cast<std::size_t>(g)] = lightest - fold_size.begin();
    }
    std::vector<index_t> out(enc.code.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = group_fold[static_cast<std::size_t>(enc.code[i])];
    }
    return out;
  }

  [[nodiscard]] std::vector<Fold> split(const LabelsRef& groups) const {
    return detail::folds_from_assignment(test_folds(groups), params_.n_splits);
  }

 private:
  Params params_;
};

}  // namespace onelearn::model_selection
