#pragma once
// The bin mapper of histogram gradient boosting, as scikit-learn 1.2.1's _BinMapper and
// _find_binning_thresholds (ensemble/_hist_gradient_boosting/binning.py):
//   find_binning_thresholds  one feature's thresholds from its non-missing values
//   BinMapper::fit           every feature's thresholds from all ranks' rows (one alltoallv)
//   BinMapper::transform     X -> uint8 bins, row-major and feature-major
//
// Thresholds are computed in double, as scikit-learn converts X to float64 first. A feature
// with at most max_bins distinct values gets the midpoints between consecutive values; one with
// more gets np.percentile(values, linspace(0, 100, max_bins + 1)[1:-1], method="midpoint"),
// replicated operation by operation (numpy 1.24's linspace, virtual index and _lerp), so the
// thresholds are equal to the bit. Value x goes to bin searchsorted(thresholds, x, "left"),
// NaN to the missing-values bin (always reserved, as in scikit-learn). A categorical
// feature's thresholds are its known categories (hist_categories.hpp), so that category c goes
// to the bin of its rank among them; it has as many non-missing bins as categories.
//
// The missing-values bin is the first bin no feature uses, not max_bins as in scikit-learn:
// the histograms have that many bins + 1 per feature, so data with few distinct values per
// feature (digits: at most 17) has histograms 14 times smaller to build, scan and all-reduce
// than with 256 bins. Splits and predictions do not depend on the bin's index.
//
// Subsampling: with more than 200000 rows over all ranks, scikit-learn draws exactly 200000 of
// them with numpy's RNG. Here each row is kept when a hash of (random_state, its global row
// index) falls below 200000 / n: about 200000 rows, the same whatever the number of ranks, but
// not scikit-learn's rows, so above 200000 rows the thresholds are close to, not equal to, its.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "onelearn/core/detail/no_fma.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/ensemble/detail/hist_rows.hpp"
#include "onelearn/exec/policy.hpp"

ONELEARN_BEGIN_NO_FMA  // scikit-learn's roundings (core/detail/no_fma.hpp)
namespace onelearn::ensemble::detail {

/// scikit-learn's ALMOST_INF: thresholds are clipped to it so that +inf stays in the last bin.
inline constexpr double almost_inf = 1e300;
/// The number of rows above which the thresholds come from a subsample (scikit-learn's 2e5).
inline constexpr std::int64_t binning_subsample = 200000;

/// Where numpy.percentile(values, percent, method="midpoint") reads a sorted array of n values
/// without NaN: the mean of sorted[previous] and sorted[next] (next = previous + 1, or both the
/// same element at the ends), weighted by gamma (0 or 0.5).
struct PercentilePositions {
  std::size_t previous = 0, next = 0;
  double gamma = 0;
};

inline PercentilePositions percentile_positions(std::size_t n, double percent) {
  const double q = percent / 100.0;
  const auto count = static_cast<double>(n);
  const double position = (count - 1) * q;
  const double virtual_index = 0.5 * (std::floor(position) + std::ceil(position));
  std::int64_t previous = static_cast<std::int64_t>(std::floor(virtual_index));
  std::int64_t next = previous + 1;
  const auto last = static_cast<std::int64_t>(n) - 1;
  if (virtual_index >= count - 1) previous = next = last;
  if (virtual_index < 0) previous = next = 0;
  return {static_cast<std::size_t>(previous), static_cast<std::size_t>(next),
          std::fmod(virtual_index, 1.0) == 0 ? 0.0 : 0.5};
}

/// numpy.percentile(values, q, method="midpoint") of n values without NaN, sorted_value(i)
/// giving the i-th in sorted order (read at the two positions percentile_positions names).
template <class SortedValue>
double percentile_midpoint(SortedValue&& sorted_value, std::size_t n, double percent) {
  const PercentilePositions at = percentile_positions(n, percent);
  const double a = sorted_value(at.previous);
  const double b = sorted_value(at.next);
  const double diff = b - a;
  return at.gamma >= 0.5 ? b - diff * (1 - at.gamma) : a + diff * at.gamma;  // numpy's _lerp
}

namespace binning_detail {

/// The distinct values of `values` (-0.0 and 0.0 as one, as == has them) if there are at most
/// `limit`, else nothing: an open-addressing set that gives up at the limit, so a feature of
/// continuous values costs a few hundred lookups, not a sort.
inline std::optional<std::vector<double>> few_distinct(const std::vector<double>& values,
                                                       std::size_t limit) {
  std::size_t slots = 16;
  while (slots < 4 * limit) slots *= 2;
  std::vector<double> table(slots);
  std::vector<char> used(slots, 0);
  std::vector<double> distinct;
  for (double v : values) {
    const double key = v == 0 ? 0.0 : v;
    std::uint64_t bits = 0;
    std::memcpy(&bits, &key, sizeof bits);
    std::size_t at = static_cast<std::size_t>((bits * 0x9e3779b97f4a7c15ULL) >> 32) & (slots - 1);
    while (used[at] != 0 && table[at] != key) at = (at + 1) & (slots - 1);
    if (used[at] != 0) continue;
    if (distinct.size() == limit) return std::nullopt;
    used[at] = 1;
    table[at] = key;
    distinct.push_back(key);
  }
  return distinct;
}

/// The elements of sorted order at `positions` (increasing, below values.size()), without
/// sorting everything: the values are counted into 2048 buckets between splitters drawn from
/// them (a branch-free binary search per value), and only the buckets holding a wanted
/// position are gathered and sorted, about 100 values each. On 200,000 normal values and the
/// 508 positions of 255 bins: 2-3 ms, where std::sort took 15.6 and nth_element position by
/// position (recursively) 10. Equal values share a bucket, and a bucket the splitters cut
/// badly is only a larger sort: the result never depends on the splitters.
inline std::vector<double> order_statistics(const std::vector<double>& values,
                                            const std::vector<std::size_t>& positions) {
  const std::size_t n = values.size();
  std::vector<double> out;
  out.reserve(positions.size());
  constexpr std::size_t buckets = 2048;
  constexpr std::size_t sample_per_bucket = 4;
  if (n < 4 * buckets * sample_per_bucket) {
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t p : positions) out.push_back(sorted[p]);
    return out;
  }
  // buckets - 1 splitters from a sorted sample, padded with +inf: value v goes to bucket
  // "splitters below v", found in log2(buckets) halvings, the same for every value.
  std::vector<double> sample(buckets * sample_per_bucket);
  for (std::size_t i = 0; i < sample.size(); ++i) sample[i] = values[i * n / sample.size()];
  std::sort(sample.begin(), sample.end());
  std::vector<double> splitters(buckets, std::numeric_limits<double>::infinity());
  for (std::size_t b = 1; b < buckets; ++b) splitters[b - 1] = sample[b * sample_per_bucket];
  std::vector<std::uint16_t> bucket_of(n);
  std::vector<std::size_t> count(buckets + 1, 0);
  // `lanes` values searched in lockstep, their loads overlapping (as BinMapper::transform).
  // The lanes' counters are std::size_t: with std::uint32_t here, nvcc 13's front end rejected
  // every later std::array<std::uint32_t, 8> of the translation unit (transform's,
  // CategoryBitset's) as "template argument 2 is invalid".
  constexpr std::size_t lanes = 8;
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    std::array<std::size_t, lanes> below{};
    for (std::uint32_t step = buckets / 2; step > 0; step >>= 1) {
      for (std::size_t k = 0; k < lanes; ++k) {
        below[k] += splitters[below[k] + step - 1] < values[i + k] ? step : 0;
      }
    }
    for (std::size_t k = 0; k < lanes; ++k) {
      bucket_of[i + k] = static_cast<std::uint16_t>(below[k]);
      ++count[below[k]];
    }
  }
  for (; i < n; ++i) {
    const auto b = static_cast<std::size_t>(
        std::lower_bound(splitters.begin(), splitters.end(), values[i]) - splitters.begin());
    bucket_of[i] = static_cast<std::uint16_t>(b);
    ++count[b];
  }
  // start[b]: the sorted position of bucket b's first value; a wanted bucket gets a place in
  // `gathered` (wanted_at[b], or none).
  std::vector<std::size_t> start(buckets + 1, 0);
  for (std::size_t b = 0; b < buckets; ++b) start[b + 1] = start[b] + count[b];
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> wanted_at(buckets, none);
  std::size_t gathered_size = 0;
  for (std::size_t p : positions) {
    const auto b = static_cast<std::size_t>(
        std::upper_bound(start.begin(), start.end(), p) - start.begin() - 1);
    if (wanted_at[b] == none) {
      wanted_at[b] = gathered_size;
      gathered_size += count[b];
    }
  }
  std::vector<double> gathered(gathered_size);
  std::vector<std::size_t> fill = wanted_at;
  for (std::size_t v = 0; v < n; ++v) {
    const std::size_t at = fill[bucket_of[v]];
    if (at != none) {
      gathered[at] = values[v];
      ++fill[bucket_of[v]];
    }
  }
  for (std::size_t b = 0; b < buckets; ++b) {
    if (wanted_at[b] == none) continue;
    const auto first = gathered.begin() + static_cast<std::ptrdiff_t>(wanted_at[b]);
    std::sort(first, first + static_cast<std::ptrdiff_t>(count[b]));
  }
  for (std::size_t p : positions) {
    const auto b = static_cast<std::size_t>(
        std::upper_bound(start.begin(), start.end(), p) - start.begin() - 1);
    out.push_back(gathered[wanted_at[b] + (p - start[b])]);
  }
  return out;
}

}  // namespace binning_detail

/// One feature's bin thresholds from its non-missing values, at most max_bins - 1 of them
/// (max_bins non-missing bins): scikit-learn's midpoints between distinct values when there
/// are at most max_bins of them, its percentiles otherwise. Only the distinct values (in the
/// first case) or the percentiles' elements of sorted order (in the second) are put in order:
/// the same thresholds as sorting everything, in a fraction of the time.
inline std::vector<double> find_binning_thresholds(const std::vector<double>& values,
                                                   int max_bins) {
  std::vector<double> thresholds;
  if (auto distinct = binning_detail::few_distinct(values, static_cast<std::size_t>(max_bins))) {
    std::sort(distinct->begin(), distinct->end());
    for (std::size_t i = 0; i + 1 < distinct->size(); ++i) {
      thresholds.push_back(((*distinct)[i] + (*distinct)[i + 1]) * 0.5);
    }
  } else {
    // np.linspace(0, 100, max_bins + 1)[1:-1]: i * step, step = 100 / max_bins.
    const double step = 100.0 / static_cast<double>(max_bins);
    std::vector<std::size_t> positions;
    for (int i = 1; i < max_bins; ++i) {
      const PercentilePositions at =
          percentile_positions(values.size(), static_cast<double>(i) * step);
      positions.push_back(at.previous);
      positions.push_back(at.next);
    }
    std::sort(positions.begin(), positions.end());
    positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
    const std::vector<double> at = binning_detail::order_statistics(values, positions);
    auto sorted_value = [&](std::size_t position) {
      return at[static_cast<std::size_t>(
          std::lower_bound(positions.begin(), positions.end(), position) - positions.begin())];
    };
    for (int i = 1; i < max_bins; ++i) {
      thresholds.push_back(percentile_midpoint(sorted_value, values.size(),
                                               static_cast<double>(i) * step));
    }
  }
  for (double& t : thresholds) t = std::min(t, almost_inf);
  return thresholds;
}

/// The bins of X, in two layouts: a node's histogram reads all of a row's features, for rows
/// scattered over X, and one cache line of the row-major copy brings all of them (a
/// feature-major layout costs a scattered read per feature); splitting a node reads one
/// feature of its rows, which the feature-major copy keeps in one dense column.
struct BinnedMatrix {
  index_t n_rows = 0;
  index_t n_features = 0;
  std::vector<std::uint8_t> rows;     ///< rows[i * n_features + f]
  std::vector<std::uint8_t> columns;  ///< columns[f * n_rows + i]

  [[nodiscard]] const std::uint8_t* row(index_t i) const { return rows.data() + i * n_features; }
  [[nodiscard]] const std::uint8_t* column(index_t f) const {
    return columns.data() + f * n_rows;
  }
};

struct BinMapper {
  int max_bins = 255;  ///< at most this many non-missing bins per feature (the parameter)
  std::vector<std::vector<double>> thresholds;  ///< per feature, increasing
  std::vector<int> n_bins_non_missing;          ///< thresholds[f].size() (+ 1 if numerical)
  std::vector<char> is_categorical;             ///< per feature; empty: none
  int missing = 255;  ///< the missing-values bin: the most non-missing bins of any feature

  [[nodiscard]] int missing_bin() const noexcept { return missing; }
  /// Bins per feature in a histogram, the missing-values bin included.
  [[nodiscard]] int n_bins() const noexcept { return missing + 1; }

  /// Fits the thresholds of every feature on the rows `local_rows` of X of every rank
  /// (collective; n_total of them over all ranks). A row's global index (layout) decides
  /// whether the subsample keeps it. categories: per feature, empty for a numerical one, the
  /// sorted known categories of a categorical one (flagged in categorical).
  template <class T, exec::ExecutionPolicy Exec>
  void fit(const Exec& exec, const MatrixRef<T>& X, const std::vector<index_t>& local_rows,
           std::int64_t n_total, const RowLayout& layout, int bins, std::uint64_t seed,
           const std::vector<char>& categorical = {},
           const std::vector<std::vector<double>>& categories = {}) {
    max_bins = bins;
    is_categorical = categorical;
    const index_t p = X.cols();
    const auto features = static_cast<std::size_t>(p);
    // A row is kept with probability subsample / n, decided by a hash of its global index.
    const bool subsample = n_total > binning_subsample;
    const double keep = static_cast<double>(binning_subsample) / static_cast<double>(n_total);
    std::vector<index_t> kept_rows;
    kept_rows.reserve(local_rows.size());
    for (index_t i : local_rows) {
      if (!subsample || uniform_of(seed ^ 0x9e3779b97f4a7c15ULL, layout.global_index(i)) < keep) {
        kept_rows.push_back(i);
      }
    }
    // Each rank finds the thresholds of its share of the numerical features (feature f on rank
    // f % size), one feature per chunk on threads; then every rank gets every feature's.
    const auto ranks = static_cast<index_t>(exec.size());
    const auto rank = static_cast<index_t>(exec.rank());
    auto owned_by = [&](index_t r) { return p <= r ? index_t{0} : (p - r + ranks - 1) / ranks; };
    const index_t mine_count = owned_by(rank);
    // One process reads each feature straight from X when its turn comes. Ranks first send
    // each feature's kept values to the rank that owns it (alltoallv): rank q gets, from every
    // rank in rank order, the columns of q's features over that rank's kept rows, feature-major,
    // so a feature is one contiguous run per sender. An allgatherv of every kept row to every
    // rank moved `size` times as much: 45 MB into each of 2 ranks on bench/'s gbdt, where this
    // receives 22 MB (the mapper's fit on 2 ranks: 0.14-0.18 s against 0.16-0.18 s, 2026-12-07),
    // and `size` times the data into each of `size` ranks as they grow. (One process copying
    // the rows too paid for the copy's 45 MB of fresh pages, and the copy's time: 0.13 s of a
    // 3 s fit.)
    const std::size_t kept = kept_rows.size();
    std::vector<std::int64_t> kept_per_rank{static_cast<std::int64_t>(kept)};
    std::vector<double> received;
    if constexpr (Exec::is_distributed) {
      // Where feature f's column starts in the send buffer: after the pieces of the ranks
      // before its owner, then after the owner's features before f.
      std::vector<std::int64_t> send_counts(static_cast<std::size_t>(ranks));
      std::vector<std::size_t> piece_start(static_cast<std::size_t>(ranks) + 1, 0);
      for (index_t q = 0; q < ranks; ++q) {
        const auto q_features = static_cast<std::size_t>(owned_by(q));
        send_counts[static_cast<std::size_t>(q)] = static_cast<std::int64_t>(q_features * kept);
        piece_start[static_cast<std::size_t>(q) + 1] =
            piece_start[static_cast<std::size_t>(q)] + q_features * kept;
      }
      std::vector<double> outgoing(features * kept);
      onelearn::detail::for_each_chunk(
          static_cast<index_t>(kept), 512, [&](index_t, index_t begin, index_t end) {
            // A block of rows stays in cache while its features are written.
            for (std::size_t f = 0; f < features; ++f) {
              const auto owner = f % static_cast<std::size_t>(ranks);
              double* column = outgoing.data() + piece_start[owner] +
                               (f / static_cast<std::size_t>(ranks)) * kept;
              for (auto j = static_cast<std::size_t>(begin); j < static_cast<std::size_t>(end);
                   ++j) {
                column[j] = static_cast<double>(X(kept_rows[j], static_cast<index_t>(f)));
              }
            }
          });
      const std::int64_t kept_here = kept_per_rank[0];
      kept_per_rank = exec.allgatherv(std::span<const std::int64_t>(&kept_here, 1));
      received = exec.alltoallv(std::span<const double>(outgoing),
                                std::span<const std::int64_t>(send_counts));
    }
    std::size_t n_rows = 0;
    for (std::int64_t count : kept_per_rank) n_rows += static_cast<std::size_t>(count);
    // Feature f's non-missing values over all ranks, appended to column.
    auto collect = [&](index_t f, std::vector<double>& column) {
      if constexpr (Exec::is_distributed) {
        const auto index_among_mine = static_cast<std::size_t>(f / ranks);
        const double* block = received.data();
        for (std::int64_t count : kept_per_rank) {
          const auto rows_of_rank = static_cast<std::size_t>(count);
          const double* values = block + index_among_mine * rows_of_rank;
          for (std::size_t r = 0; r < rows_of_rank; ++r) {
            if (!std::isnan(values[r])) column.push_back(values[r]);
          }
          block += rows_of_rank * static_cast<std::size_t>(mine_count);
        }
      } else {
        for (index_t i : kept_rows) {
          const auto v = static_cast<double>(X(i, f));
          if (!std::isnan(v)) column.push_back(v);
        }
      }
    };
    thresholds.assign(features, {});
    n_bins_non_missing.assign(features, 1);
    auto numerical = [&](index_t f) {
      return is_categorical.empty() || is_categorical[static_cast<std::size_t>(f)] == 0;
    };
    onelearn::detail::for_each_chunk(mine_count, 1, [&](index_t j, index_t, index_t) {
      const index_t f = rank + j * ranks;
      if (!numerical(f)) return;
      std::vector<double> column;
      column.reserve(n_rows);
      collect(f, column);
      thresholds[static_cast<std::size_t>(f)] = find_binning_thresholds(column, max_bins);
    });
    if constexpr (Exec::is_distributed) {
      // Per rank, its features in increasing order, each as [count, thresholds...].
      std::vector<double> packed;
      for (index_t f = rank; f < p; f += ranks) {
        const auto& t = thresholds[static_cast<std::size_t>(f)];
        packed.push_back(static_cast<double>(t.size()));
        packed.insert(packed.end(), t.begin(), t.end());
      }
      const std::vector<double> every = exec.allgatherv(std::span<const double>(packed));
      std::size_t at = 0;
      for (index_t from = 0; from < ranks; ++from) {
        for (index_t f = from; f < p; f += ranks) {
          const auto count = static_cast<std::size_t>(every[at++]);
          const auto first = every.begin() + static_cast<std::ptrdiff_t>(at);
          thresholds[static_cast<std::size_t>(f)].assign(
              first, first + static_cast<std::ptrdiff_t>(count));
          at += count;
        }
      }
    }
    for (index_t f = 0; f < p; ++f) {
      const auto feature = static_cast<std::size_t>(f);
      if (numerical(f)) {
        n_bins_non_missing[feature] = static_cast<int>(thresholds[feature].size()) + 1;
      } else {
        thresholds[feature] = categories[feature];
        n_bins_non_missing[feature] = static_cast<int>(categories[feature].size());
      }
    }
    missing = n_bins_non_missing.empty()
                  ? 0
                  : *std::max_element(n_bins_non_missing.begin(), n_bins_non_missing.end());
  }

  /// The bin of value x of feature f: searchsorted(thresholds, x, side="left"); NaN -> missing.
  [[nodiscard]] std::uint8_t bin_of(index_t f, double x) const {
    if (std::isnan(x)) return static_cast<std::uint8_t>(missing);
    const auto& t = thresholds[static_cast<std::size_t>(f)];
    return static_cast<std::uint8_t>(std::lower_bound(t.begin(), t.end(), x) - t.begin());
  }

  /// The rows `rows` of X, binned, in blocks of rows on threads. A search is 8 dependent
  /// loads, so one search after the other waits on memory latency: `lanes` values of a
  /// feature are searched in lockstep instead, their loads overlapping (6.7x faster than
  /// std::lower_bound value by value on 500k x 28 normal values, 254 thresholds).
  template <class T>
  [[nodiscard]] BinnedMatrix transform(const MatrixRef<T>& X,
                                       const std::vector<index_t>& rows) const {
    BinnedMatrix out;
    out.n_rows = static_cast<index_t>(rows.size());
    out.n_features = X.cols();
    out.rows.resize(static_cast<std::size_t>(out.n_rows * out.n_features));
    out.columns.resize(out.rows.size());
    // Every feature's thresholds padded with +inf to 256 entries: every search is the same 8
    // halvings, and counts the thresholds below x (x = +inf counts them all, as it should).
    constexpr std::uint32_t table = 256;
    const auto p = static_cast<std::size_t>(X.cols());
    std::vector<double> padded(p * table, std::numeric_limits<double>::infinity());
    for (std::size_t f = 0; f < p; ++f) {
      std::copy(thresholds[f].begin(), thresholds[f].end(),
                padded.begin() + static_cast<std::ptrdiff_t>(f * table));
    }
    auto store = [&](index_t r, index_t f, std::uint8_t bin) {
      out.rows[static_cast<std::size_t>(r * out.n_features + f)] = bin;
      out.columns[static_cast<std::size_t>(f * out.n_rows + r)] = bin;
    };
    constexpr std::size_t lanes = 8;
    onelearn::detail::for_each_chunk(out.n_rows, 1024, [&](index_t, index_t begin, index_t end) {
      for (index_t f = 0; f < out.n_features; ++f) {
        const double* t = padded.data() + static_cast<std::size_t>(f) * table;
        auto value = [&](index_t r) {
          return static_cast<double>(X(rows[static_cast<std::size_t>(r)], f));
        };
        index_t r = begin;
        for (; r + static_cast<index_t>(lanes) <= end; r += static_cast<index_t>(lanes)) {
          std::array<double, lanes> x{};
          std::array<std::uint32_t, lanes> below{};
          for (std::size_t k = 0; k < lanes; ++k) x[k] = value(r + static_cast<index_t>(k));
          for (std::uint32_t step = table / 2; step > 0; step >>= 1) {
            for (std::size_t k = 0; k < lanes; ++k) {
              below[k] += t[below[k] + step - 1] < x[k] ? step : 0;
            }
          }
          for (std::size_t k = 0; k < lanes; ++k) {
            store(r + static_cast<index_t>(k), f,
                  std::isnan(x[k]) ? static_cast<std::uint8_t>(missing)
                                   : static_cast<std::uint8_t>(below[k]));
          }
        }
        for (; r < end; ++r) store(r, f, bin_of(f, value(r)));
      }
    });
    return out;
  }
};

}  // namespace onelearn::ensemble::detail
ONELEARN_END_NO_FMA
