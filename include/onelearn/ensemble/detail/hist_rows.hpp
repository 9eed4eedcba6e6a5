#pragma once
// Rows spread over ranks, for histogram boosting's random choices that must not depend on how
// the rows are split: a row is named by its global index (its position in the concatenation of
// the ranks' rows, rank 0 first), and every random choice about it is a hash of that index.
//   RowLayout        this rank's offset in the concatenation, and the total number of rows
//   row_hash         splitmix64 of (seed, global index): a bijection of the index for one seed
//   uniform_of       that hash as a double in [0, 1)
//   validation_rows  the early-stopping split: ceil(fraction * n) rows over all ranks, per
//                    class in proportion to its count when stratified; in each group the rows
//                    with the smallest hashes (a random sample without replacement)

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::ensemble::detail {

struct RowLayout {
  std::int64_t offset = 0;   ///< global index of this rank's first row
  std::int64_t n_total = 0;  ///< rows over all ranks

  /// Collective: one allgatherv of each rank's row count.
  template <exec::ExecutionPolicy Exec>
  static RowLayout make(const Exec& exec, index_t n_local) {
    const std::int64_t mine = n_local;
    const std::vector<std::int64_t> counts = exec.allgatherv(std::span<const std::int64_t>(&mine, 1));
    RowLayout out;
    for (int r = 0; r < static_cast<int>(counts.size()); ++r) {
      if (r < exec.rank()) out.offset += counts[static_cast<std::size_t>(r)];
      out.n_total += counts[static_cast<std::size_t>(r)];
    }
    return out;
  }

  [[nodiscard]] std::int64_t global_index(index_t local) const noexcept { return offset + local; }
};

/// splitmix64's finaliser of seed-mixed index: distinct indices give distinct hashes.
[[nodiscard]] constexpr std::uint64_t row_hash(std::uint64_t seed, std::int64_t index) noexcept {
  std::uint64_t z = seed * 0xbf58476d1ce4e5b9ULL + static_cast<std::uint64_t>(index) +
                    0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

[[nodiscard]] constexpr double uniform_of(std::uint64_t seed, std::int64_t index) noexcept {
  return static_cast<double>(row_hash(seed, index) >> 11) * 0x1.0p-53;
}

/// How many validation rows each group gets: n_val = ceil(fraction * n) in all; per group
/// floor(n_val * count / n), the rest one each to the groups of largest remainder (the lower
/// group first on ties): the allocation of scikit-learn's _approximate_mode, without its
/// random tie-breaking.
inline std::vector<std::int64_t> validation_counts(const std::vector<std::int64_t>& counts,
                                                   double fraction) {
  std::int64_t n = 0;
  for (std::int64_t c : counts) n += c;
  const auto n_val = static_cast<std::int64_t>(std::ceil(fraction * static_cast<double>(n)));
  std::vector<std::int64_t> out(counts.size(), 0);
  std::vector<double> remainder(counts.size(), 0);
  std::int64_t given = 0;
  for (std::size_t g = 0; g < counts.size(); ++g) {
    const double share = static_cast<double>(n_val) * static_cast<double>(counts[g]) /
                         static_cast<double>(n);
    out[g] = static_cast<std::int64_t>(std::floor(share));
    remainder[g] = share - std::floor(share);
    given += out[g];
  }
  while (given < n_val) {
    std::size_t best = 0;
    for (std::size_t g = 1; g < counts.size(); ++g) {
      if (remainder[g] > remainder[best]) best = g;
    }
    ++out[best];
    remainder[best] = -1;
    ++given;
  }
  return out;
}

/// 1 for the local rows that go to the validation set, 0 for training rows (collective).
/// group[i] in [0, n_groups): the class of row i when stratified, 0 for every row otherwise.
template <exec::ExecutionPolicy Exec>
std::vector<char> validation_rows(const Exec& exec, const RowLayout& layout,
                                  const std::vector<index_t>& group, index_t n_groups,
                                  double fraction, std::uint64_t seed) {
  const auto k = static_cast<std::size_t>(n_groups);
  std::vector<std::int64_t> counts(k, 0);
  for (index_t g : group) ++counts[static_cast<std::size_t>(g)];
  exec.allreduce(std::span<std::int64_t>(counts), exec::reduce_op::sum);
  const std::vector<std::int64_t> wanted = validation_counts(counts, fraction);

  // Each rank offers, per group, its `wanted` smallest hashes; the wanted-th smallest of all
  // offers is the group's cut.
  std::vector<std::vector<std::uint64_t>> keys(k);
  for (std::size_t i = 0; i < group.size(); ++i) {
    keys[static_cast<std::size_t>(group[i])].push_back(
        row_hash(seed, layout.global_index(static_cast<index_t>(i))));
  }
  std::vector<std::int64_t> offer;  // pairs (group, hash as int64)
  for (std::size_t g = 0; g < k; ++g) {
    auto& mine = keys[g];
    const auto take = std::min<std::size_t>(mine.size(), static_cast<std::size_t>(wanted[g]));
    std::partial_sort(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(take), mine.end());
    for (std::size_t j = 0; j < take; ++j) {
      offer.push_back(static_cast<std::int64_t>(g));
      offer.push_back(static_cast<std::int64_t>(mine[j]));
    }
  }
  const std::vector<std::int64_t> all = exec.allgatherv(std::span<const std::int64_t>(offer));
  std::vector<std::vector<std::uint64_t>> offered(k);
  for (std::size_t j = 0; j + 1 < all.size(); j += 2) {
    offered[static_cast<std::size_t>(all[j])].push_back(static_cast<std::uint64_t>(all[j + 1]));
  }
  std::vector<std::uint64_t> cut(k, 0);
  std::vector<char> has_cut(k, 0);
  for (std::size_t g = 0; g < k; ++g) {
    if (wanted[g] == 0) continue;
    auto& o = offered[g];
    const auto at = static_cast<std::ptrdiff_t>(wanted[g] - 1);
    std::nth_element(o.begin(), o.begin() + at, o.end());
    cut[g] = o[static_cast<std::size_t>(at)];
    has_cut[g] = 1;
  }
  std::vector<char> out(group.size(), 0);
  for (std::size_t i = 0; i < group.size(); ++i) {
    const auto g = static_cast<std::size_t>(group[i]);
    out[i] = static_cast<char>(
        has_cut[g] && row_hash(seed, layout.global_index(static_cast<index_t>(i))) <= cut[g]);
  }
  return out;
}

}  // namespace onelearn::ensemble::detail
