#pragma once
// How nn::Sequential::fit cuts its global batches from every rank's rows (Data-parallel
// training in nn/fit_options.hpp); plain arithmetic on the gathered row counts, the same on
// every rank. One process (exec::local) is the one rank of one: its global batch is its batch.
//
// Per-rank mode: global batch b is the concatenation in rank order of every rank's batch b;
// every rank takes as many steps as the rank with the most batches, a rank whose rows have run
// out joining with an empty batch. Replicated mode: one copy of the rows (every rank holds the
// same), each global batch of batch_size rows split by rank into consecutive parts, the first
// rows % ranks ranks taking one row more, so nothing is dropped.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::nn::detail {

/// Where one rank's rows of a global batch are.
struct BatchShare {
  index_t start = 0;   ///< first position in the epoch's order of this rank's rows
  index_t rows = 0;    ///< this rank's rows (possibly 0)
  index_t offset = 0;  ///< where they sit in the global batch (Dropout keys its masks by it)
};

class BatchPlan {
 public:
  BatchPlan() = default;

  /// rank_rows: every rank's (training rows, held-out rows) in rank order, as gathered.
  /// Replicated: the counts must agree (shape_error otherwise, on every rank alike) and one
  /// copy of them is kept: the batches of one process.
  BatchPlan(std::string_view where, std::vector<std::int64_t> rank_rows, bool replicated,
            index_t batch_size, int rank, int ranks)
      : rank_rows_(std::move(rank_rows)),
        replicated_(replicated),
        batch_size_(batch_size),
        rank_(rank),
        ranks_(ranks) {
    if (replicated_) {
      for (std::size_t r = 2; r < rank_rows_.size(); r += 2) {
        if (rank_rows_[r] != rank_rows_[0] || rank_rows_[r + 1] != rank_rows_[1]) {
          throw shape_error(std::string(where) +
                            " (replicated): expected the same rows on every rank, found " +
                            std::to_string(rank_rows_[0] + rank_rows_[1]) + " on rank 0 and " +
                            std::to_string(rank_rows_[r] + rank_rows_[r + 1]) + " on rank " +
                            std::to_string(r / 2));
        }
      }
      rank_rows_.resize(2);
    }
    for (std::size_t r = 0; r < rank_rows_.size(); r += 2) {
      train_rows_ += rank_rows_[r];
      held_rows_ += rank_rows_[r + 1];
      // Every rank takes the steps of the rank with the most batches.
      steps_ = std::max(steps_, (rank_rows_[r] + batch_size_ - 1) / batch_size_);
    }
  }

  [[nodiscard]] bool replicated() const noexcept { return replicated_; }
  /// Training and held-out rows over all ranks (one copy when replicated).
  [[nodiscard]] std::int64_t train_rows() const noexcept { return train_rows_; }
  [[nodiscard]] std::int64_t held_rows() const noexcept { return held_rows_; }
  /// Steps per epoch.
  [[nodiscard]] index_t steps() const noexcept { return steps_; }

  /// Global batch b's rows: the sum of every rank's share of it.
  [[nodiscard]] index_t global_rows(index_t b) const {
    index_t rows = 0;
    for (std::size_t r = 0; r < rank_rows_.size(); r += 2) {
      rows += std::clamp<index_t>(rank_rows_[r] - b * batch_size_, 0, batch_size_);
    }
    return rows;
  }

  /// This rank's part of global batch b, of global_m rows (global_rows(b)), among its
  /// training rows: replicated, a consecutive share of the global batch; per rank, its own
  /// batch b, after the rows of the ranks before it.
  [[nodiscard]] BatchShare share(index_t b, index_t global_m) const {
    const index_t start = b * batch_size_;
    if (replicated_) {
      const auto [my_start, my_m] = rank_share(start, global_m);
      return {my_start, my_m, my_start - start};
    }
    index_t offset = 0;
    for (std::size_t r = 0; r < 2 * static_cast<std::size_t>(rank_); r += 2) {
      offset += std::clamp<index_t>(rank_rows_[r] - start, 0, batch_size_);
    }
    const index_t mine = rank_rows_[2 * static_cast<std::size_t>(rank_)];
    return {start, std::clamp<index_t>(mine - start, 0, batch_size_), offset};
  }

  /// Rows [begin, begin + count) this rank evaluates, as [first, end): replicated, its share
  /// of them; per rank, all (they are its own).
  [[nodiscard]] std::pair<index_t, index_t> held_out(index_t begin, index_t count) const {
    const auto [first, rows] =
        replicated_ ? rank_share(begin, count) : std::pair<index_t, index_t>{begin, count};
    return {first, first + rows};
  }

 private:
  /// This rank's part of `count` rows from `begin` split by rank in order: (first row, rows),
  /// the first count % ranks ranks taking one row more, so no row is dropped.
  [[nodiscard]] std::pair<index_t, index_t> rank_share(index_t begin, index_t count) const {
    const index_t base = count / ranks_;
    const index_t extra = count % ranks_;
    return {begin + rank_ * base + std::min<index_t>(rank_, extra), base + (rank_ < extra ? 1 : 0)};
  }

  std::vector<std::int64_t> rank_rows_;
  bool replicated_ = false;
  index_t batch_size_ = 1;
  index_t rank_ = 0;
  index_t ranks_ = 1;
  std::int64_t train_rows_ = 0;
  std::int64_t held_rows_ = 0;
  index_t steps_ = 0;
};

}  // namespace onelearn::nn::detail
