#pragma once
// Gradient histograms and the best split of a node, as scikit-learn 1.2.1's histogram.pyx and
// splitting.pyx (no monotonic or interaction constraints):
//   build_histogram     per feature and bin: {sum of gradients, sum of hessians, count} over
//                       the node's rows (features in parallel); one flat buffer of doubles
//                       (core/detail/histogram_layout.hpp), so that one all-reduce sums it
//                       over the ranks
//   subtract_histogram  the sibling's histogram: parent minus the child that was built
//   find_best_split     per feature of a range, scan the bins left to right (missing values to
//                       the right) and, when the feature has missing values, right to left
//                       (missing values to the left); for a categorical feature,
//                       best_category_split; the best gain over features, the first on ties
// The gain of a split is loss(node) - loss(left) - loss(right) with loss = sum_gradients *
// value and value = -G / (H + l2 + 1e-15), where the node's own value is the one its parent's
// split gave it (0 at the root), exactly as scikit-learn computes it. With a constant hessian
// (squared error, no weights) the hessian sums are the counts.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "onelearn/core/detail/histogram_layout.hpp"
#include "onelearn/core/detail/no_fma.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/ensemble/detail/binning.hpp"
#include "onelearn/ensemble/detail/hist_categories.hpp"

ONELEARN_BEGIN_NO_FMA  // scikit-learn's roundings (core/detail/no_fma.hpp)
namespace onelearn::ensemble::detail {

using onelearn::detail::count_slot;
using onelearn::detail::gradient_slot;
using onelearn::detail::hessian_slot;
using onelearn::detail::Histogram;
using onelearn::detail::histogram_slots;

struct SplitInfo {
  double gain = -1;
  std::int32_t feature = 0;
  std::int32_t bin = 0;
  bool missing_go_to_left = false;
  bool is_categorical = false;
  CategoryBitset left_bins{};  ///< categorical: the bins (missing bin included) sent left
  double sum_gradient_left = 0, sum_hessian_left = 0;
  double sum_gradient_right = 0, sum_hessian_right = 0;
  double n_samples_left = 0, n_samples_right = 0;
  double value_left = 0, value_right = 0;
};

struct SplitSettings {
  double min_samples_leaf = 20;
  double l2_regularization = 0;
  double min_hessian_to_split = 1e-3;  ///< scikit-learn's default, not a parameter there
  bool hessians_are_constant = true;
  index_t stride = 256;                   ///< bins per feature, the missing bin included
  const std::vector<int>* n_bins_non_missing = nullptr;
  const std::vector<char>* has_missing_values = nullptr;
  const std::vector<char>* is_categorical = nullptr;  ///< null: no categorical feature
  int missing_bin = 255;
};

[[nodiscard]] inline double node_value(double sum_gradient, double sum_hessian, double l2) {
  return -sum_gradient / (sum_hessian + l2 + 1e-15);
}

/// One bin's statistics as one SIMD value (core/detail/histogram_layout.hpp): a row's update of
/// a bin is one load, add and store. GCC's and Clang's vector extension: 32 bytes, one AVX
/// register, or two SSE2 registers where AVX is not enabled.
using BinStatistics = double __attribute__((vector_size(histogram_slots * sizeof(double))));
static_assert(sizeof(BinStatistics) == histogram_slots * sizeof(double));

/// The histogram of the rows rows[0, count) (local row indices into X's bins). Each row's
/// gradient and hessian are read once and added to the bins of all its features (row-major
/// bins, binning.hpp). The features are cut into one block per thread of `chunks` (its width(): a
/// TBB arena is not OpenMP's thread count); every bin still adds
/// its rows in row order, so the histogram is the same on any number of threads. `chunks` runs
/// the feature blocks (host_chunks: OpenMP's threads; thrust_omp and thrust_tbb pass their own).
template <class Chunks = onelearn::detail::host_chunks>
void build_histogram(const BinnedMatrix& X, const std::uint32_t* rows, std::size_t count,
                     const float* gradients, const float* hessians, bool constant_hessian,
                     index_t stride, Histogram& out, const Chunks& chunks = {}) {
  const index_t p = X.n_features;
  // Zeroed by the threads, each its own features' bins: a serial memset (229 KB for bench/'s
  // gbdt) would hold the other thread up at every node large enough to use both.
  out.resize(static_cast<std::size_t>(p * stride * histogram_slots));
  // Small nodes (most of a tree's) stay on one thread: starting threads would cost more.
  constexpr std::size_t min_parallel_updates = std::size_t{1} << 14;
  const index_t width =
      count * static_cast<std::size_t>(p) < min_parallel_updates ? 1 : chunks.width();
  const index_t block = std::max<index_t>(1, (p + width - 1) / width);
  constexpr std::size_t prefetch_distance = 32;  // rows ahead
  auto accumulate = [&](auto constant, index_t first, index_t last) {
    // Locals, not the captures: the stores into the histogram are raw memory (memcpy) to the
    // compiler, which would otherwise reload the inner loop's pointers after each of them.
    const std::uint8_t* const all_bins = X.rows.data();
    const auto row_width = static_cast<std::size_t>(p);
    double* const histogram = out.data();
    const index_t bin_stride = stride;
    std::fill(histogram + first * bin_stride * histogram_slots,
              histogram + last * bin_stride * histogram_slots, 0.0);
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t r = rows[i];
      if (i + prefetch_distance < count) {
        // The rows of a node are scattered: ask for a later row's bins and gradients early.
        const std::uint32_t later = rows[i + prefetch_distance];
        // This block's bins of that row, its first and its last byte: a row (28 bytes for
        // bench/'s gbdt) straddles two cache lines one time in two, and prefetching the row's
        // start alone left the other line to a miss (bench/'s gbdt on 2 threads: 4.83-5.23 s
        // against 5.16-5.58 s before, seven interleaved pairs, 2026-11-29).
        const std::uint8_t* later_bins = all_bins + later * row_width;
        __builtin_prefetch(later_bins + first);
        __builtin_prefetch(later_bins + last - 1);
        __builtin_prefetch(gradients + later);
        if constexpr (!decltype(constant)::value) __builtin_prefetch(hessians + later);
      }
      const std::uint8_t* bins = all_bins + r * row_width;
      // {gradient, hessian (0 when constant: the split search reads the counts), 1, 0}
      const BinStatistics row_statistics{
          static_cast<double>(gradients[r]),
          decltype(constant)::value ? 0.0 : static_cast<double>(hessians[r]), 1.0, 0.0};
      for (index_t f = first; f < last; ++f) {
        double* bin = histogram + (f * bin_stride + bins[f]) * histogram_slots;
        BinStatistics sums;  // memcpy: no aliasing of double by the vector type
        std::memcpy(&sums, bin, sizeof sums);
        sums += row_statistics;
        std::memcpy(bin, &sums, sizeof sums);
      }
    }
  };
  chunks(p, block, [&](index_t, index_t first, index_t last) {
    if (constant_hessian) {
      accumulate(std::true_type{}, first, last);
    } else {
      accumulate(std::false_type{}, first, last);
    }
  });
}

/// out = parent - child, bin by bin, in pieces on `chunks`' threads.
template <class Chunks = onelearn::detail::host_chunks>
void subtract_histogram(const Histogram& parent, const Histogram& child, Histogram& out,
                        const Chunks& chunks = {}) {
  out.resize(parent.size());
  constexpr index_t grain = index_t{1} << 13;  // doubles: 64 KB of each histogram a piece
  chunks(static_cast<index_t>(parent.size()), grain, [&](index_t, index_t first, index_t last) {
    for (auto i = static_cast<std::size_t>(first); i < static_cast<std::size_t>(last); ++i) {
      out[i] = parent[i] - child[i];
    }
  });
}

namespace split_detail {

// Bin b's sums in one feature's histogram (core/detail/histogram_layout.hpp).
inline double gradients_in(const double* hist, int b) {
  return hist[histogram_slots * b + gradient_slot];
}
inline double hessians_in(const double* hist, int b) {
  return hist[histogram_slots * b + hessian_slot];
}
inline double count_in(const double* hist, int b) { return hist[histogram_slots * b + count_slot]; }

inline double split_gain(double g_left, double h_left, double g_right, double h_right,
                         double loss_current_node, double l2) {
  const double value_left = node_value(g_left, h_left, l2);
  const double value_right = node_value(g_right, h_right, l2);
  return loss_current_node - g_left * value_left - g_right * value_right;
}

inline void record(SplitInfo& s, double gain, int bin, bool missing_left, double g_left,
                   double h_left, double n_left, double sum_g, double sum_h, double n,
                   double l2) {
  s.gain = gain;
  s.bin = bin;
  s.missing_go_to_left = missing_left;
  s.sum_gradient_left = g_left;
  s.sum_gradient_right = sum_g - g_left;
  s.sum_hessian_left = h_left;
  s.sum_hessian_right = sum_h - h_left;
  s.n_samples_left = n_left;
  s.n_samples_right = n - n_left;
  s.value_left = node_value(s.sum_gradient_left, s.sum_hessian_left, l2);
  s.value_right = node_value(s.sum_gradient_right, s.sum_hessian_right, l2);
}

/// The candidate splits of one scan over a feature's bins, in scan order: each child's count,
/// hessian sum and gradient sum, as the scan computes them (running sums on the side it adds
/// bins to, node minus those on the other), then every candidate's gain (lowest() where a
/// child is too small) at once, in SIMD lanes: the same expression on the same values as
/// scikit-learn's scan, hence the same gains. Its scan stops at the first child too small on
/// the far side; scoring the rest changes nothing, as that child's count and hessian sum only
/// shrink along a scan (hessians are not negative).
struct ScanCandidates {
  static constexpr std::size_t capacity = 256;
  std::array<double, capacity> n_left, h_left, g_left, n_right, h_right, g_right, gain;
  std::size_t size = 0;

  void add(double nl, double hl, double gl, double nr, double hr, double gr) {
    n_left[size] = nl;
    h_left[size] = hl;
    g_left[size] = gl;
    n_right[size] = nr;
    h_right[size] = hr;
    g_right[size] = gr;
    ++size;
  }

  void score(const SplitSettings& s, double loss_current_node) {
    const double l2 = s.l2_regularization;
    const double min_leaf = s.min_samples_leaf;
    const double min_hessian = s.min_hessian_to_split;
    for (std::size_t i = 0; i < size; ++i) {
      const bool valid = n_left[i] >= min_leaf && n_right[i] >= min_leaf &&
                         h_left[i] >= min_hessian && h_right[i] >= min_hessian;
      const double candidate =
          split_gain(g_left[i], h_left[i], g_right[i], h_right[i], loss_current_node, l2);
      gain[i] = valid ? candidate : std::numeric_limits<double>::lowest();
    }
  }

  /// The first candidate of largest gain above both `to_beat` and 0, or -1.
  [[nodiscard]] int best(double to_beat) const {
    int at = -1;
    double top = std::max(to_beat, 0.0);
    for (std::size_t i = 0; i < size; ++i) {
      if (gain[i] > top) {
        top = gain[i];
        at = static_cast<int>(i);
      }
    }
    return at;
  }
};

/// scikit-learn's _find_best_bin_to_split_left_to_right and _right_to_left for feature f.
inline void best_bin(const double* hist, const SplitSettings& s, int n_bins_non_missing,
                     bool has_missing, double n, double sum_g, double sum_h, double value,
                     SplitInfo& out) {
  const double loss_current_node = sum_g * value;
  const double l2 = s.l2_regularization;
  auto hess = [&](int b) {
    return s.hessians_are_constant ? count_in(hist, b) : hessians_in(hist, b);
  };
  ScanCandidates scan;
  {
    // Left to right, missing values to the right: the split after bin b, b in [0, end).
    double g_left = 0, h_left = 0, n_left = 0;
    const int end = n_bins_non_missing - 1 + (has_missing ? 1 : 0);
    for (int b = 0; b < end; ++b) {
      n_left += count_in(hist, b);
      h_left += hess(b);
      g_left += gradients_in(hist, b);
      scan.add(n_left, h_left, g_left, n - n_left, sum_h - h_left, sum_g - g_left);
    }
    scan.score(s, loss_current_node);
    if (const int i = scan.best(out.gain); i >= 0) {
      const auto at = static_cast<std::size_t>(i);
      record(out, scan.gain[at], i, false, scan.g_left[at], scan.h_left[at], scan.n_left[at],
             sum_g, sum_h, n, l2);
    }
  }
  if (!has_missing) return;
  // Right to left, missing values to the left: the split after bin b, b from
  // n_bins_non_missing - 2 down to 0, the right child's bins summed.
  scan.size = 0;
  double g_right = 0, h_right = 0, n_right = 0;
  for (int b = n_bins_non_missing - 2; b >= 0; --b) {
    n_right += count_in(hist, b + 1);
    h_right += hess(b + 1);
    g_right += gradients_in(hist, b + 1);
    scan.add(n - n_right, sum_h - h_right, sum_g - g_right, n_right, h_right, g_right);
  }
  scan.score(s, loss_current_node);
  if (const int i = scan.best(out.gain); i >= 0) {
    const auto at = static_cast<std::size_t>(i);
    record(out, scan.gain[at], n_bins_non_missing - 2 - i, true, scan.g_left[at],
           scan.h_left[at], scan.n_left[at], sum_g, sum_h, n, l2);
  }
}

/// scikit-learn's _find_best_bin_to_split_category for feature f: the categories (bins, the
/// missing-values bin as one more) with a hessian sum of at least 10 (LightGBM's cat_smooth)
/// are sorted by G / (H + 10); the split sends a prefix of that order (scanned from the left
/// up to the middle) or a suffix (from the right) to the left child; the rest, low-support
/// categories included, go right.
inline void best_category_split(const double* hist, const SplitSettings& s,
                                int n_bins_non_missing, bool has_missing, double n, double sum_g,
                                double sum_h, double value, SplitInfo& out) {
  constexpr double min_category_support = 10;
  struct Category {
    int bin;
    double value;
  };
  auto hess = [&](int b) {
    return s.hessians_are_constant ? count_in(hist, b) : hessians_in(hist, b);
  };
  const double support_factor = n / sum_h;  // 1 with constant hessians
  std::vector<Category> used;
  auto consider = [&](int b) {
    const double h = hess(b);
    if (h * support_factor >= min_category_support) {
      used.push_back({b, gradients_in(hist, b) / (h + min_category_support)});
    }
  };
  for (int b = 0; b < n_bins_non_missing; ++b) consider(b);
  if (has_missing) consider(s.missing_bin);
  if (used.size() <= 1) return;
  std::vector<Category> scratch;
  sort_like_glibc_qsort(std::span<Category>(used), scratch,
                        [](const Category& a, const Category& b) { return a.value < b.value; });

  const double loss_current_node = sum_g * value;
  const auto n_used = static_cast<int>(used.size());
  double best_gain = -1;
  int best_at = -1, best_direction = 0;
  double best_g_left = 0, best_h_left = 0, best_n_left = 0;
  for (int direction : {1, -1}) {
    const int middle = direction == 1 ? (n_used + 1) / 2 : (n_used + 1) / 2 - 1;
    double g_left = 0, h_left = 0, n_left = 0;
    for (int i = 0; i < middle; ++i) {
      const int at = direction == 1 ? i : n_used - 1 - i;
      const int b = used[static_cast<std::size_t>(at)].bin;
      n_left += count_in(hist, b);
      const double n_right = n - n_left;
      h_left += hess(b);
      const double h_right = sum_h - h_left;
      g_left += gradients_in(hist, b);
      const double g_right = sum_g - g_left;
      if (n_left < s.min_samples_leaf || h_left < s.min_hessian_to_split) continue;
      if (n_right < s.min_samples_leaf || h_right < s.min_hessian_to_split) break;
      const double gain = split_gain(g_left, h_left, g_right, h_right, loss_current_node,
                                     s.l2_regularization);
      if (gain > best_gain && gain > 0) {
        best_gain = gain;
        best_at = at;
        best_direction = direction;
        best_g_left = g_left;
        best_h_left = h_left;
        best_n_left = n_left;
      }
    }
  }
  if (best_at < 0 || !(best_gain > out.gain)) return;
  record(out, best_gain, 0, false, best_g_left, best_h_left, best_n_left, sum_g, sum_h, n,
         s.l2_regularization);
  out.is_categorical = true;
  out.left_bins = CategoryBitset{};
  if (best_direction == 1) {
    for (int i = 0; i <= best_at; ++i) out.left_bins.set(static_cast<unsigned>(used[static_cast<std::size_t>(i)].bin));
  } else {
    for (int i = n_used - 1; i >= best_at; --i) out.left_bins.set(static_cast<unsigned>(used[static_cast<std::size_t>(i)].bin));
  }
  if (has_missing) out.missing_go_to_left = out.left_bins.has(static_cast<unsigned>(s.missing_bin));
}

}  // namespace split_detail

/// The best split of a node over features [first, last) (all of them: 0 and p), `hist`
/// holding those features' bins (summed over all ranks), from feature `first` on; n rows,
/// gradient and hessian sums and value (as its parent's split computed it). gain <= 0: no
/// valid split. `chunks` runs the features (host_chunks: OpenMP's threads).
template <class Chunks = onelearn::detail::host_chunks>
SplitInfo find_best_split(const Histogram& hist, const SplitSettings& s, index_t first,
                          index_t last, double n, double sum_g, double sum_h, double value,
                          const Chunks& chunks = {}) {
  std::vector<SplitInfo> per_feature(static_cast<std::size_t>(last - first));
  chunks(last - first, 1, [&](index_t j, index_t, index_t) {
    const index_t f = first + j;
    SplitInfo& out = per_feature[static_cast<std::size_t>(j)];
    out.feature = static_cast<std::int32_t>(f);
    const auto at = static_cast<std::size_t>(f);
    const bool categorical = s.is_categorical != nullptr && (*s.is_categorical)[at] != 0;
    (categorical ? split_detail::best_category_split : split_detail::best_bin)(
        hist.data() + j * s.stride * histogram_slots, s, (*s.n_bins_non_missing)[at],
        (*s.has_missing_values)[at] != 0, n, sum_g, sum_h, value, out);
  });
  std::size_t best = 0;
  for (std::size_t f = 1; f < per_feature.size(); ++f) {
    if (per_feature[f].gain > per_feature[best].gain) best = f;
  }
  return per_feature.empty() ? SplitInfo{} : per_feature[best];
}

/// A SplitInfo as 64-bit words and back, bit for bit: what ranks that searched different
/// features send each other (hist_grower.hpp).
inline constexpr std::size_t split_words = 21;

inline void pack_split(const SplitInfo& s, std::int64_t* out) {
  const double reals[] = {s.gain,           s.sum_gradient_left, s.sum_hessian_left,
                          s.sum_gradient_right, s.sum_hessian_right, s.n_samples_left,
                          s.n_samples_right, s.value_left,        s.value_right};
  std::memcpy(out, reals, sizeof reals);
  out[9] = s.feature;
  out[10] = s.bin;
  out[11] = s.missing_go_to_left ? 1 : 0;
  out[12] = s.is_categorical ? 1 : 0;
  for (std::size_t w = 0; w < s.left_bins.words.size(); ++w) out[13 + w] = s.left_bins.words[w];
}

inline SplitInfo unpack_split(const std::int64_t* in) {
  SplitInfo s;
  double reals[9];
  std::memcpy(reals, in, sizeof reals);
  s.gain = reals[0];
  s.sum_gradient_left = reals[1];
  s.sum_hessian_left = reals[2];
  s.sum_gradient_right = reals[3];
  s.sum_hessian_right = reals[4];
  s.n_samples_left = reals[5];
  s.n_samples_right = reals[6];
  s.value_left = reals[7];
  s.value_right = reals[8];
  s.feature = static_cast<std::int32_t>(in[9]);
  s.bin = static_cast<std::int32_t>(in[10]);
  s.missing_go_to_left = in[11] != 0;
  s.is_categorical = in[12] != 0;
  for (std::size_t w = 0; w < s.left_bins.words.size(); ++w) {
    s.left_bins.words[w] = static_cast<std::uint32_t>(in[13 + w]);
  }
  return s;
}
static_assert(split_words == 9 + 4 + 8);

}  // namespace onelearn::ensemble::detail
ONELEARN_END_NO_FMA
