#pragma once
// Global row numbering for the distributed k-means: rank r holds the global rows
// [begin[r], begin[r+1]) (the shards concatenated in rank order, as Dataset::shard makes them),
// and a row chosen by one rank can be copied to every rank with one all-reduce.

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::detail {

struct RowPartition {
  std::vector<std::int64_t> begin;  ///< ranks + 1 entries; begin.back() is the number of rows
  int rank = 0;

  [[nodiscard]] int n_ranks() const noexcept { return static_cast<int>(begin.size()) - 1; }
  [[nodiscard]] index_t n_total() const noexcept { return begin.back(); }
  [[nodiscard]] index_t first() const noexcept { return begin[static_cast<std::size_t>(rank)]; }
  [[nodiscard]] index_t rows_of(int r) const noexcept {
    return begin[static_cast<std::size_t>(r) + 1] - begin[static_cast<std::size_t>(r)];
  }
  /// The local index of global row `g` on this rank, or -1 if another rank holds it.
  [[nodiscard]] index_t local_index(index_t g) const noexcept {
    const index_t local = g - first();
    return local >= 0 && local < rows_of(rank) ? local : -1;
  }
};

/// Every rank's number of rows, gathered (one all-gather of one value per rank).
template <exec::ExecutionPolicy Exec>
RowPartition partition_rows(const Exec& exec, index_t local_rows) {
  const std::int64_t mine = local_rows;
  const std::vector<std::int64_t> counts = exec.allgatherv(std::span<const std::int64_t>(&mine, 1));
  RowPartition out;
  out.rank = exec.rank();
  out.begin.assign(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) out.begin[r + 1] = out.begin[r] + counts[r];
  return out;
}

/// Row s of the result is row local_index[s] of this rank's X, taken from the one rank whose
/// local_index[s] is not -1 (exactly one rank must hold each selected row). Every rank gets the
/// same matrix: the holder writes the row, the others zeros, and one all-reduce sums them
/// (exact, since all but one term is zero). U is the element type of the result.
template <class U, class T, exec::ExecutionPolicy Exec>
Matrix<U> selected_rows(const Exec& exec, const MatrixRef<T>& X,
                        const std::vector<index_t>& local_index) {
  Matrix<U> rows = Matrix<U>::Zero(static_cast<index_t>(local_index.size()), X.cols());
  for (std::size_t s = 0; s < local_index.size(); ++s) {
    if (local_index[s] >= 0) {
      rows.row(static_cast<index_t>(s)) = X.row(local_index[s]).template cast<U>();
    }
  }
  exec.allreduce(std::span<U>(rows.data(), static_cast<std::size_t>(rows.size())),
                 exec::reduce_op::sum);
  return rows;
}

}  // namespace onelearn::detail
