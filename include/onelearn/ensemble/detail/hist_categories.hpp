#pragma once
// Categorical features of histogram gradient boosting, as scikit-learn 1.2.1 treats them:
//   CategoryBitset        256 bits, one per bin or per raw category value (_bitset.pyx)
//   categorical_mask      the '0'/'1' mask parameter as one flag per feature
//   check_category_values a categorical column holds NaN or integers in [0, max_bins)
//   known_categories      each categorical feature's sorted categories over all ranks' rows
//                         (collective), which are also its bin thresholds: category c goes to
//                         bin searchsorted(categories, c), its rank
//   sort_like_glibc_qsort the order in which scikit-learn's qsort sorts the categories of a
//                         node before scanning them (see below)
//
// Why the categories are validated where scikit-learn does not: there a negative or
// fractional category is binned, but its raw bitset cast truncates it, so the tree the bins
// grow and the tree predict walks disagree. Here such a value is a typed error in fit, and at
// predict time a value that is not a known category goes where missing values go (scikit-learn
// does so for unknown integer categories).

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::ensemble::detail {

/// One bit per value 0..255: a bin index, or a raw category value.
struct CategoryBitset {
  std::array<std::uint32_t, 8> words{};

  void set(unsigned value) noexcept { words[value / 32] |= 1U << (value % 32); }
  [[nodiscard]] bool has(unsigned value) const noexcept {
    return ((words[value / 32] >> (value % 32)) & 1U) != 0;
  }
  friend bool operator==(const CategoryBitset&, const CategoryBitset&) = default;
};

/// The raw value x as a category index, or -1 when it cannot be one (NaN, negative,
/// fractional, 256 or more).
[[nodiscard]] inline int category_index(double x) noexcept {
  if (!(x >= 0 && x < 256) || x != std::floor(x)) return -1;
  return static_cast<int>(x);
}

/// One flag per feature from the "" / '0'-'1' mask (checked by check_hist_params).
[[nodiscard]] inline std::vector<char> categorical_mask(const std::string& mask, index_t p) {
  std::vector<char> out(static_cast<std::size_t>(p), 0);
  for (std::size_t f = 0; f < mask.size() && f < out.size(); ++f) out[f] = mask[f] == '1' ? 1 : 0;
  return out;
}

/// Throws invalid_argument naming the first value of a categorical column of X that is not
/// NaN nor an integer in [0, max_bins).
template <class T>
void check_category_values(std::string_view where, const MatrixRef<T>& X,
                           const std::vector<char>& is_categorical, int max_bins) {
  for (index_t f = 0; f < X.cols(); ++f) {
    if (is_categorical[static_cast<std::size_t>(f)] == 0) continue;
    for (index_t r = 0; r < X.rows(); ++r) {
      const auto x = static_cast<double>(X(r, f));
      if (std::isnan(x)) continue;
      const int c = category_index(x);
      if (c < 0 || c >= max_bins) {
        throw invalid_argument(std::string(where) + ": expected categorical feature " +
                               std::to_string(f) + " to hold integer categories in [0, " +
                               std::to_string(max_bins) + ") (max_bins) or NaN, found " +
                               std::to_string(x) + " at row " + std::to_string(r));
      }
    }
  }
}

/// Per feature, the sorted categories seen in X on any rank (empty for a numerical feature).
/// Collective: one all-reduce of 256 flags per categorical feature. X has been checked by
/// check_category_values.
template <class T, exec::ExecutionPolicy Exec>
std::vector<std::vector<double>> known_categories(const Exec& exec, const MatrixRef<T>& X,
                                                  const std::vector<char>& is_categorical) {
  std::vector<index_t> features;
  for (index_t f = 0; f < X.cols(); ++f) {
    if (is_categorical[static_cast<std::size_t>(f)] != 0) features.push_back(f);
  }
  std::vector<std::int64_t> seen(features.size() * 256, 0);
  for (std::size_t j = 0; j < features.size(); ++j) {
    for (index_t r = 0; r < X.rows(); ++r) {
      const int c = category_index(static_cast<double>(X(r, features[j])));
      if (c >= 0) seen[j * 256 + static_cast<std::size_t>(c)] = 1;
    }
  }
  exec.allreduce(std::span<std::int64_t>(seen), exec::reduce_op::max);
  std::vector<std::vector<double>> out(static_cast<std::size_t>(X.cols()));
  for (std::size_t j = 0; j < features.size(); ++j) {
    auto& categories = out[static_cast<std::size_t>(features[j])];
    for (int c = 0; c < 256; ++c) {
      if (seen[j * 256 + static_cast<std::size_t>(c)] != 0) categories.push_back(c);
    }
  }
  return out;
}

/// Sorts items by `less` in the order glibc's qsort leaves them for a comparator that never
/// answers "equal" (scikit-learn's compare_cat_infos returns -1 or 1): glibc sorts with a
/// top-down merge sort that halves at n / 2 and, on a tie, takes the right run's element first
/// (its comparator said "greater"). Categories of equal value then come out in the order
/// scikit-learn scans them, so that ties split alike. Without ties any sort agrees.
template <class Item, class Less>
void sort_like_glibc_qsort(std::span<Item> items, std::vector<Item>& scratch, Less less) {
  const std::size_t n = items.size();
  if (n <= 1) return;
  const std::size_t n1 = n / 2;
  sort_like_glibc_qsort(items.first(n1), scratch, less);
  sort_like_glibc_qsort(items.subspan(n1), scratch, less);
  scratch.assign(items.begin(), items.end());
  std::size_t a = 0, b = n1, out = 0;
  while (a < n1 && b < n) {
    // glibc takes the left element when cmp(left, right) <= 0, i.e. when left < right here.
    items[out++] = less(scratch[a], scratch[b]) ? scratch[a++] : scratch[b++];
  }
  while (a < n1) items[out++] = scratch[a++];
  while (b < n) items[out++] = scratch[b++];
}

}  // namespace onelearn::ensemble::detail
