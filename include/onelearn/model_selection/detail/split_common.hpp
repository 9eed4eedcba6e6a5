#pragma once
// What every splitter shares: the Fold type, a portable seeded shuffle, the checks with
// scikit-learn's wording, and scikit-learn's size arithmetic for the shuffle splitters.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::model_selection {

/// One split: the rows to fit on and the rows to score on, as indices into the data.
struct Fold {
  std::vector<index_t> train;
  std::vector<index_t> test;
};

/// A train or test size as scikit-learn takes it: a fraction in (0, 1) (a double) or a number
/// of samples (an integer); default-constructed, unset (the other size, or the default, decides).
class SplitSize {
 public:
  constexpr SplitSize() = default;
  constexpr SplitSize(double fraction) : set_(true), fraction_(true), value_(fraction) {}  // NOLINT
  template <std::integral I>
  requires(!std::same_as<I, bool>) constexpr SplitSize(
      I count)  // NOLINT(google-explicit-constructor): reads like scikit-learn's
      : set_(true), value_(static_cast<double>(count)) {}

  [[nodiscard]] constexpr bool is_set() const noexcept { return set_; }
  [[nodiscard]] constexpr bool is_fraction() const noexcept { return fraction_; }
  [[nodiscard]] constexpr double value() const noexcept { return value_; }

  /// "None", a fraction ("0.25", exact) or a count ("30"): how params::to_string shows it.
  friend std::ostream& operator<<(std::ostream& os, const SplitSize& size) {
    if (!size.set_) return os << "None";
    if (!size.fraction_) return os << static_cast<long long>(size.value_);
    char buffer[32];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, size.value_).ptr;
    return os << std::string_view(buffer, static_cast<std::size_t>(end - buffer));
  }

 private:
  bool set_ = false;
  bool fraction_ = false;
  double value_ = 0;
};

namespace detail {

/// The generator of every shuffling splitter. Seeded mt19937_64, so a seed gives the same folds
/// on every platform; it cannot reproduce NumPy's stream, so shuffled folds differ from
/// scikit-learn's (only their sizes and proportions agree).
using Rng = std::mt19937_64;

/// Uniform integer in [0, n), by rejection: std::uniform_int_distribution's algorithm differs
/// between standard libraries, which would make a seed give other folds elsewhere.
inline index_t uniform_below(Rng& rng, index_t n) {
  const auto range = static_cast<std::uint64_t>(n);
  const std::uint64_t limit =
      std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % range;
  std::uint64_t draw = rng();
  while (draw >= limit) draw = rng();
  return static_cast<index_t>(draw % range);
}

/// Fisher-Yates, written out for the same reason (std::shuffle is implementation-defined).
template <class V>
void shuffle(V& values, Rng& rng) {
  for (auto i = static_cast<index_t>(values.size()) - 1; i > 0; --i) {
    const index_t j = uniform_below(rng, i + 1);
    std::swap(values[static_cast<std::size_t>(i)], values[static_cast<std::size_t>(j)]);
  }
}

inline std::vector<index_t> iota(index_t n) {
  std::vector<index_t> out(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = i;
  return out;
}

/// The folds of a test-fold assignment (test_fold[i] = fold whose test set holds sample i),
/// both index lists ascending, as scikit-learn's BaseCrossValidator.split gives them.
inline std::vector<Fold> folds_from_assignment(const std::vector<index_t>& test_fold,
                                               index_t n_splits) {
  std::vector<Fold> folds(static_cast<std::size_t>(n_splits));
  for (std::size_t i = 0; i < test_fold.size(); ++i) {
    for (index_t f = 0; f < n_splits; ++f) {
      auto& fold = folds[static_cast<std::size_t>(f)];
      (test_fold[i] == f ? fold.test : fold.train).push_back(static_cast<index_t>(i));
    }
  }
  return folds;
}

inline void check_n_splits(std::string_view where, std::int64_t n_splits) {
  if (n_splits >= 2) return;
  throw invalid_argument(std::string(where) +
                         ": expected n_splits >= 2 (k-fold cross-validation needs at least one "
                         "train/test split), found " +
                         std::to_string(n_splits));
}

inline void check_splits_vs_samples(std::string_view where, std::int64_t n_splits,
                                    index_t n_samples) {
  if (n_splits <= n_samples) return;
  throw invalid_argument(std::string(where) + ": expected n_splits <= the number of samples, " +
                         "found n_splits=" + std::to_string(n_splits) +
                         " greater than n_samples=" + std::to_string(n_samples));
}

/// Distinct labels in order of first appearance and each sample's position among them
/// (StratifiedKFold encodes classes this way), plus the count of each.
struct EncodedLabels {
  std::vector<std::int64_t> labels;  // in order of first appearance
  std::vector<index_t> code;         // per sample
  std::vector<index_t> counts;       // per label
};

inline EncodedLabels encode_by_appearance(const LabelsRef& y) {
  EncodedLabels out;
  std::map<std::int64_t, index_t> position;
  out.code.resize(static_cast<std::size_t>(y.size()));
  for (index_t i = 0; i < y.size(); ++i) {
    const auto [it, inserted] = position.try_emplace(y(i), static_cast<index_t>(out.labels.size()));
    if (inserted) {
      out.labels.push_back(y(i));
      out.counts.push_back(0);
    }
    out.code[static_cast<std::size_t>(i)] = it->second;
    ++out.counts[static_cast<std::size_t>(it->second)];
  }
  return out;
}

/// Distinct labels sorted ascending (np.unique) and each sample's position among them.
inline EncodedLabels encode_sorted(const LabelsRef& y) {
  EncodedLabels out;
  out.labels.assign(y.begin(), y.end());
  std::sort(out.labels.begin(), out.labels.end());
  out.labels.erase(std::unique(out.labels.begin(), out.labels.end()), out.labels.end());
  out.counts.assign(out.labels.size(), 0);
  out.code.resize(static_cast<std::size_t>(y.size()));
  for (index_t i = 0; i < y.size(); ++i) {
    const auto c = static_cast<std::size_t>(
        std::lower_bound(out.labels.begin(), out.labels.end(), y(i)) - out.labels.begin());
    out.code[static_cast<std::size_t>(i)] = static_cast<index_t>(c);
    ++out.counts[c];
  }
  return out;
}

inline std::string size_text(const SplitSize& s) {
  if (!s.is_set()) return "None";
  std::ostringstream os;
  os << s.value();
  return os.str();
}

/// scikit-learn's _validate_shuffle_split: (n_train, n_test) from the two sizes. A fraction
/// rounds the test size up and the train size down; an unset size takes the rest.
inline std::pair<index_t, index_t> validate_shuffle_split(std::string_view where, index_t n_samples,
                                                          SplitSize test_size, SplitSize train_size,
                                                          double default_test_size) {
  if (!test_size.is_set() && !train_size.is_set()) test_size = SplitSize(default_test_size);
  const auto check = [&](const SplitSize& s, std::string_view name) {
    if (!s.is_set()) return;
    const bool bad = s.is_fraction()
                         ? !(s.value() > 0 && s.value() < 1)
                         : !(s.value() > 0 && s.value() < static_cast<double>(n_samples));
    if (bad) {
      throw invalid_argument(std::string(where) + ": expected " + std::string(name) +
                             " to be a number of samples in [1, " + std::to_string(n_samples) +
                             ") or a fraction in (0, 1), found " + size_text(s));
    }
  };
  check(test_size, "test_size");
  check(train_size, "train_size");
  if (test_size.is_fraction() && train_size.is_fraction() &&
      test_size.value() + train_size.value() > 1) {
    throw invalid_argument(std::string(where) + ": expected test_size + train_size <= 1, found " +
                           size_text(test_size) + " + " + size_text(train_size));
  }
  const double n = static_cast<double>(n_samples);
  double n_test = 0, n_train = 0;
  if (test_size.is_set()) {
    n_test = test_size.is_fraction() ? std::ceil(test_size.value() * n) : test_size.value();
  }
  if (train_size.is_set()) {
    n_train = train_size.is_fraction() ? std::floor(train_size.value() * n) : train_size.value();
  }
  if (!train_size.is_set()) n_train = n - n_test;
  if (!test_size.is_set()) n_test = n - n_train;
  if (n_train + n_test > n) {
    throw invalid_argument(std::string(where) + ": expected train and test sizes summing to at " +
                           "most n_samples=" + std::to_string(n_samples) + ", found " +
                           std::to_string(static_cast<index_t>(n_train + n_test)));
  }
  if (n_train < 1) {
    throw invalid_argument(std::string(where) + ": expected a non-empty train set, found 0 " +
                           "samples with n_samples=" + std::to_string(n_samples) + ", test_size=" +
                           size_text(test_size) + ", train_size=" + size_text(train_size));
  }
  return {static_cast<index_t>(n_train), static_cast<index_t>(n_test)};
}

}  // namespace detail
}  // namespace onelearn::model_selection
