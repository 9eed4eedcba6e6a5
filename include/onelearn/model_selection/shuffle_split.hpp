#pragma once
/**
 * \file
 * \brief ShuffleSplit, StratifiedShuffleSplit and train_test_split: random train/test splits.
 * \ingroup model_selection
 *
 * \code
 * #include <onelearn/model_selection/shuffle_split.hpp>
 * using namespace onelearn::model_selection;
 *
 * // One random split of X and y (Vector<T> targets or Labels), 25% held out:
 * auto s = train_test_split(X, y, {.test_size = 0.25, .random_state = 7});
 * model.fit(s.X_train, s.y_train);
 * double held_out = model.score(s.X_test, s.y_test);
 * // Stratified by the labels, 30 test samples:
 * auto t = train_test_split(X, labels, {.test_size = 30, .stratify = labels});
 *
 * ShuffleSplit ss({.n_splits = 10, .test_size = 0.2, .random_state = 1});
 * std::vector<Fold> folds = ss.split(X.rows());         // independent random splits
 * StratifiedShuffleSplit sss({.n_splits = 5, .test_size = 0.2});
 * std::vector<Fold> kept = sss.split(labels);          // class proportions kept
 * \endcode
 *
 * model_selection::ShuffleSplit, StratifiedShuffleSplit, train_test_split: random
 * train/test splits, as scikit-learn's (1.2.1).
 *
 * Sizes (scikit-learn's _validate_shuffle_split): a size is a fraction in (0, 1) (a double)
 * or a number of samples (an integer). n_test = ⌈test_size · n⌉, n_train = ⌊train_size · n⌋;
 * an unset size is the rest; both unset: test_size is 0.1 (the splitters) or 0.25
 * (train_test_split).
 *
 * Method:
 * - ShuffleSplit: per split, a random permutation; the test set is its first n_test entries,
 *   the train set the next n_train (both in permutation order, as in scikit-learn).
 * - StratifiedShuffleSplit: per split, scikit-learn's algorithm: the number of train samples of
 *   each class is the approximate mode of the multivariate hypergeometric distribution
 *   (floor of the proportional share, the remaining samples going to the classes with the
 *   largest remainders, ties broken at random), then likewise for the test samples from what
 *   is left; each class's samples are permuted and cut, and the train and test lists are
 *   permuted.
 * - train_test_split: the first split of ShuffleSplit (or StratifiedShuffleSplit when
 *   `stratify` is given) with the computed sizes; without shuffle, the first n_train rows
 *   train and the next n_test test.
 *
 * \par Parameters
 * - ShuffleSplitParams / StratifiedShuffleSplitParams: `n_splits` (default 10, >= 1),
 *   `test_size`, `train_size` (SplitSize: a double fraction or an integer count; unset by
 *   default), `random_state` (std::uint64_t seed, default 0).
 * - TrainTestSplitOptions: `test_size`, `train_size`, `random_state`, `shuffle` (default
 *   true), `stratify` (Labels, one per row; empty for none).
 *
 * \par Differences from scikit-learn
 * - Randomness comes from a std::mt19937_64 seeded with random_state and a portable
 *   Fisher-Yates shuffle, not NumPy's generator: the same seed gives the same splits on every
 *   platform, not scikit-learn's (sizes and per-class counts agree, up to how ties between
 *   classes with equal remainders are broken).
 * - There is no unseeded state (the default seed is 0); split() is repeatable.
 * - train_test_split takes one X and one y (and returns the row indices too).
 *
 * Errors (invalid_argument): n_splits < 1; a size that is neither in (0, 1) nor in
 * [1, n_samples); fractions summing to more than 1; sizes summing to more than n_samples; an
 * empty train set; for the stratified splits, a class with a single member, or fewer train or
 * test samples than classes; stratify without shuffle. shape_error: y or stratify of another
 * length than X's rows.
 */

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/model_selection/detail/split_common.hpp"

namespace onelearn::model_selection {

struct ShuffleSplitParams {
  std::int64_t n_splits = 10;      ///< number of random splits, >= 1
  SplitSize test_size{};           ///< fraction or count; unset: the rest, or 0.1
  SplitSize train_size{};          ///< fraction or count; unset: the rest
  std::uint64_t random_state = 0;  ///< seed

  static constexpr std::array<std::string_view, 4> names{"n_splits", "test_size", "train_size",
                                                         "random_state"};
};

struct StratifiedShuffleSplitParams {
  std::int64_t n_splits = 10;      ///< number of random splits, >= 1
  SplitSize test_size{};           ///< fraction or count; unset: the rest, or 0.1
  SplitSize train_size{};          ///< fraction or count; unset: the rest
  std::uint64_t random_state = 0;  ///< seed

  static constexpr std::array<std::string_view, 4> names{"n_splits", "test_size", "train_size",
                                                         "random_state"};
};

namespace detail {

inline void check_n_shuffle_splits(std::string_view where, std::int64_t n_splits) {
  if (n_splits >= 1) return;
  throw invalid_argument(std::string(where) + ": expected n_splits >= 1, found " +
                         std::to_string(n_splits));
}

/// scikit-learn's _approximate_mode: draws per class summing to n_draws, each the floor of the
/// class's proportional share plus one for the classes with the largest remainders (ties
/// between equal remainders broken at random).
inline std::vector<index_t> approximate_mode(const std::vector<index_t>& class_counts,
                                             index_t n_draws, Rng& rng) {
  double total = 0;
  for (const index_t c : class_counts) total += static_cast<double>(c);
  const std::size_t k = class_counts.size();
  std::vector<double> remainder(k);
  std::vector<index_t> out(k);
  double floored_sum = 0;
  for (std::size_t i = 0; i < k; ++i) {
    // The same expression as NumPy's class_counts / class_counts.sum() * n_draws.
    const double continuous =
        static_cast<double>(class_counts[i]) / total * static_cast<double>(n_draws);
    const double floored = std::floor(continuous);
    out[i] = static_cast<index_t>(floored);
    remainder[i] = continuous - floored;
    floored_sum += floored;
  }
  auto need = static_cast<index_t>(static_cast<double>(n_draws) - floored_sum);
  if (need <= 0) return out;
  std::vector<double> values = remainder;
  std::sort(values.begin(), values.end(), std::greater<>());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  for (const double value : values) {
    std::vector<std::size_t> inds;
    for (std::size_t i = 0; i < k; ++i) {
      if (remainder[i] == value) inds.push_back(i);
    }
    const auto add_now = std::min(static_cast<index_t>(inds.size()), need);
    if (add_now < static_cast<index_t>(inds.size())) shuffle(inds, rng);
    for (index_t j = 0; j < add_now; ++j) ++out[inds[static_cast<std::size_t>(j)]];
    need -= add_now;
    if (need == 0) break;
  }
  return out;
}

/// One stratified random split with the given sizes (StratifiedShuffleSplit's inner loop).
inline Fold stratified_shuffle_fold(const EncodedLabels& enc,
                                    const std::vector<std::vector<index_t>>& class_indices,
                                    index_t n_train, index_t n_test, Rng& rng) {
  const std::vector<index_t> n_i = approximate_mode(enc.counts, n_train, rng);
  std::vector<index_t> remaining(enc.counts.size());
  for (std::size_t c = 0; c < remaining.size(); ++c) remaining[c] = enc.counts[c] - n_i[c];
  const std::vector<index_t> t_i = approximate_mode(remaining, n_test, rng);
  Fold fold;
  for (std::size_t c = 0; c < class_indices.size(); ++c) {
    std::vector<index_t> members = class_indices[c];
    shuffle(members, rng);
    const auto train_end = members.begin() + n_i[c];
    fold.train.insert(fold.train.end(), members.begin(), train_end);
    fold.test.insert(fold.test.end(), train_end, train_end + t_i[c]);
  }
  shuffle(fold.train, rng);
  shuffle(fold.test, rng);
  return fold;
}

/// The checks StratifiedShuffleSplit makes before splitting; returns the classes' members.
inline std::vector<std::vector<index_t>> stratified_class_indices(std::string_view where,
                                                                  const EncodedLabels& enc,
                                                                  index_t n_train, index_t n_test) {
  const auto n_classes = static_cast<index_t>(enc.labels.size());
  for (std::size_t c = 0; c < enc.counts.size(); ++c) {
    if (enc.counts[c] < 2) {
      throw invalid_argument(std::string(where) + ": expected at least 2 members in every " +
                             "class, found 1 for class " + std::to_string(enc.labels[c]));
    }
  }
  if (n_train < n_classes || n_test < n_classes) {
    const bool train = n_train < n_classes;
    throw invalid_argument(std::string(where) + ": expected the " + (train ? "train" : "test") +
                           " size to be at least the number of " + "classes " +
                           std::to_string(n_classes) + ", found " +
                           std::to_string(train ? n_train : n_test));
  }
  std::vector<std::vector<index_t>> out(enc.labels.size());
  for (std::size_t i = 0; i < enc.code.size(); ++i) {
    out[static_cast<std::size_t>(enc.code[i])].push_back(static_cast<index_t>(i));
  }
  return out;
}

}  // namespace detail

/// Independent random train/test splits. See the file's documentation.
class ShuffleSplit {
 public:
  using Params = ShuffleSplitParams;

  explicit ShuffleSplit(const Params& params = {}) : params_(params) {
    detail::check_n_shuffle_splits("ShuffleSplit", params_.n_splits);
  }

  [[nodiscard]] const Params& get_params() const noexcept { return params_; }
  [[nodiscard]] index_t get_n_splits() const noexcept { return params_.n_splits; }

  [[nodiscard]] std::vector<Fold> split(index_t n_samples) const {
    const auto [n_train, n_test] = detail::validate_shuffle_split(
        "ShuffleSplit.split", n_samples, params_.test_size, params_.train_size, 0.1);
    detail::Rng rng(params_.random_state);
    std::vector<Fold> out;
    for (index_t s = 0; s < params_.n_splits; ++s) {
      std::vector<index_t> order = detail::iota(n_samples);
      detail::shuffle(order, rng);
      out.push_back({{order.begin() + n_test, order.begin() + n_test + n_train},
                     {order.begin(), order.begin() + n_test}});
    }
    return out;
  }

 private:
  Params params_;
};

/// Random train/test splits that keep the class proportions. See the file's documentation.
class StratifiedShuffleSplit {
 public:
  using Params = StratifiedShuffleSplitParams;

  explicit StratifiedShuffleSplit(const Params& params = {}) : params_(params) {
    detail::check_n_shuffle_splits("StratifiedShuffleSplit", params_.n_splits);
  }

  [[nodiscard]] const Params& get_params() const noexcept { return params_; }
  [[nodiscard]] index_t get_n_splits() const noexcept { return params_.n_splits; }

  [[nodiscard]] std::vector<Fold> split(const LabelsRef& y) const {
    constexpr std::string_view where = "StratifiedShuffleSplit.split";
    const auto [n_train, n_test] =
        detail::validate_shuffle_split(where, y.size(), params_.test_size, params_.train_size, 0.1);
    const detail::EncodedLabels enc = detail::encode_sorted(y);
    const auto members = detail::stratified_class_indices(where, enc, n_train, n_test);
    detail::Rng rng(params_.random_state);
    std::vector<Fold> out;
    for (index_t s = 0; s < params_.n_splits; ++s) {
      out.push_back(detail::stratified_shuffle_fold(enc, members, n_train, n_test, rng));
    }
    return out;
  }

 private:
  Params params_;
};

/// Keyword arguments of train_test_split (scikit-learn's names).
struct TrainTestSplitOptions {
  SplitSize test_size{};           ///< fraction or count; unset: the rest, or 0.25
  SplitSize train_size{};          ///< fraction or count; unset: the rest
  std::uint64_t random_state = 0;  ///< seed of the shuffle
  bool shuffle = true;             ///< false: the first rows train, the next ones test
  Labels stratify{};               ///< one label per row to stratify by; empty: none
};

/// What train_test_split returns: the four arrays, and the rows each half came from.
template <class T, class Y>
struct TrainTestSplit {
  Matrix<T> X_train, X_test;
  Y y_train, y_test;
  std::vector<index_t> train_indices, test_indices;
};

/// The row indices of train_test_split(X, y, options) for n_samples rows.
inline Fold train_test_split_indices(index_t n_samples, const TrainTestSplitOptions& options = {}) {
  constexpr std::string_view where = "train_test_split";
  const bool stratified = options.stratify.size() > 0;
  if (stratified)
    validation::check_same_length(where, "stratify", n_samples, options.stratify.size());
  const auto [n_train, n_test] =
      detail::validate_shuffle_split(where, n_samples, options.test_size, options.train_size, 0.25);
  if (!options.shuffle) {
    if (stratified) {
      throw invalid_argument(std::string(where) + ": expected shuffle=true with stratify " +
                             "(a stratified split without shuffling is not implemented), found " +
                             "shuffle=false");
    }
    const std::vector<index_t> all = detail::iota(n_train + n_test);
    return {{all.begin(), all.begin() + n_train}, {all.begin() + n_train, all.end()}};
  }
  if (stratified) {
    return StratifiedShuffleSplit({.n_splits = 1,
                                   .test_size = n_test,
                                   .train_size = n_train,
                                   .random_state = options.random_state})
        .split(options.stratify)
        .front();
  }
  return ShuffleSplit({.n_splits = 1,
                       .test_size = n_test,
                       .train_size = n_train,
                       .random_state = options.random_state})
      .split(n_samples)
      .front();
}

/// Splits X and y (Vector<T> targets or Labels) into random train and test parts.
template <class T, class YScalar>
TrainTestSplit<T, Vector<YScalar>> train_test_split(const MatrixRef<T>& X,
                                                    const Eigen::Ref<const Vector<YScalar>>& y,
                                                    const TrainTestSplitOptions& options = {}) {
  validation::check_same_length("train_test_split", "y", X.rows(), y.size());
  Fold fold = train_test_split_indices(X.rows(), options);
  TrainTestSplit<T, Vector<YScalar>> out;
  out.X_train = X(fold.train, Eigen::all);
  out.X_test = X(fold.test, Eigen::all);
  out.y_train = y(fold.train);
  out.y_test = y(fold.test);
  out.train_indices = std::move(fold.train);
  out.test_indices = std::move(fold.test);
  return out;
}

/// Overload for plain Matrix / Vector arguments (deduces T and the target scalar).
template <class T, class YScalar>
TrainTestSplit<T, Vector<YScalar>> train_test_split(const Matrix<T>& X, const Vector<YScalar>& y,
                                                    const TrainTestSplitOptions& options = {}) {
  return train_test_split<T, YScalar>(MatrixRef<T>(X), Eigen::Ref<const Vector<YScalar>>(y),
                                      options);
}

}  // namespace onelearn::model_selection
