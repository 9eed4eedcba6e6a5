#pragma once
// FitOptions::reproducible_blocks: a step's gradient as a sum that does not depend on how many
// ranks computed it. Each global batch is cut into `blocks` fixed blocks of consecutive rows
// (the first rows % blocks blocks one row longer), the blocks are dealt to the ranks in order
// (consecutive runs, the first blocks % ranks ranks one block more), each rank computes its
// blocks' gradients one block at a time, and every rank then adds all the blocks' gradients in
// block order, 0 first. A block's gradient depends on its rows alone and the order of the
// additions is fixed, so the sum is the same bits on 1, 2 or `blocks` ranks: a job that lost a
// rank resumes on the ranks left to the model it would have ended with.
//
// Why gathered and not all-reduced: an all-reduce adds in an order of its own (a tree or ring
// over the ranks, which changes with their number). Every rank receives every block's
// gradient (one allgatherv: blocks x parameters values), so this costs `blocks` times the
// traffic of an all-reduce; it is meant for the models whose checkpoints must resume anywhere,
// not for the largest ones.

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "onelearn/core/types.hpp"

namespace onelearn::nn::detail {

/// Where a part of a whole sits when `whole` is cut into `parts` consecutive runs, the first
/// whole % parts runs one longer: (first, length) of run `k`.
[[nodiscard]] inline std::pair<index_t, index_t> even_run(index_t whole, index_t parts,
                                                          index_t k) {
  const index_t base = whole / parts;
  const index_t extra = whole % parts;
  return {k * base + std::min(k, extra), base + (k < extra ? 1 : 0)};
}

/// The sums one step of a blocked fit gathers: each of this rank's blocks' gradient (scaled by
/// its share of the global batch) and its (loss sum, correct predictions), kept until sum().
template <class T>
class BlockSum {
 public:
  /// This rank's blocks of `blocks`, dealt over `ranks` ranks; `values`: the gradient values.
  void plan(index_t blocks, int rank, int ranks, std::size_t values) {
    blocks_ = blocks;
    const auto [first, count] = even_run(blocks, ranks, rank);
    first_ = first;
    end_ = first + count;
    values_ = values;
    gradients_.assign(static_cast<std::size_t>(count) * values, T(0));
    stats_.assign(2 * static_cast<std::size_t>(count), 0.0);
  }

  [[nodiscard]] index_t blocks() const noexcept { return blocks_; }
  /// This rank's blocks: [first(), end()), possibly none (more ranks than blocks).
  [[nodiscard]] index_t first() const noexcept { return first_; }
  [[nodiscard]] index_t end() const noexcept { return end_; }

  /// Block k's rows in a global batch of `rows`: (offset in the batch, rows), possibly 0 rows.
  [[nodiscard]] std::pair<index_t, index_t> rows_of(index_t k, index_t rows) const {
    return even_run(rows, blocks_, k);
  }

  /// Keeps block k's gradients (the layers' buffers, in parameter order) times `weight`, and
  /// its loss sum and correct predictions.
  void keep(index_t k, std::span<const std::span<T>> gradients, T weight,
            std::array<double, 2> stats) {
    T* out = block(k);
    for (const auto& g : gradients) {
      for (const T v : g) *out++ = v * weight;
    }
    std::copy(stats.begin(), stats.end(), stats_.begin() + 2 * (k - first_));
  }

  /// Block k had no rows: it adds zeros.
  void keep_empty(index_t k) {
    std::fill_n(block(k), values_, T(0));
    stats_[2 * static_cast<std::size_t>(k - first_)] = 0;
    stats_[2 * static_cast<std::size_t>(k - first_) + 1] = 0;
  }

  /// Every rank's blocks gathered (in rank order, which is block order) and added in block
  /// order into `gradients`; returns the global batch's (loss sum, correct predictions), added
  /// the same way. Collective: every rank calls it once a step.
  template <class Exec>
  std::array<double, 2> sum(const Exec& exec, std::span<const std::span<T>> gradients) const {
    const std::vector<T> all = exec.allgatherv(std::span<const T>(gradients_));
    for (index_t k = 0; k < blocks_; ++k) {
      const T* block_k = all.data() + static_cast<std::size_t>(k) * values_;
      for (const auto& g : gradients) {
        if (k == 0) {
          std::copy_n(block_k, g.size(), g.begin());
        } else {
          for (std::size_t j = 0; j < g.size(); ++j) g[j] += block_k[j];
        }
        block_k += g.size();
      }
    }
    return sum_stats(exec, stats_);
  }

  /// Every rank's (loss sum, correct) pairs, one per block of its run, gathered and added in
  /// block order. Collective.
  template <class Exec>
  static std::array<double, 2> sum_stats(const Exec& exec, std::span<const double> mine) {
    const std::vector<double> all = exec.allgatherv(mine);
    std::array<double, 2> stats{0, 0};
    for (std::size_t at = 0; at + 1 < all.size(); at += 2) {
      stats[0] += all[at];
      stats[1] += all[at + 1];
    }
    return stats;
  }

 private:
  T* block(index_t k) { return gradients_.data() + static_cast<std::size_t>(k - first_) * values_; }

  index_t blocks_ = 1;
  index_t first_ = 0;
  index_t end_ = 0;
  std::size_t values_ = 0;
  std::vector<T> gradients_;    // (end - first) blocks of `values_` values
  std::vector<double> stats_;   // (loss sum, correct) per block
};

}  // namespace onelearn::nn::detail
