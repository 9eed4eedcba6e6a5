#pragma once
// Gradient synchronisation of data-parallel nn::Sequential training (Exec::is_distributed).
//
// Every rank runs the same step on its local batch. When a layer's backward is done
// (Sequential's gradient-ready hook) its gradient blocks are scaled by local batch rows /
// global batch rows, so that their sum over the ranks is the gradient of the mean loss over
// the global batch (the losses average over their batch) and every rank takes the one-process
// step on the union of the ranks' batches. A layer's regularisation gradient, added in full on
// every rank, comes out once: the weights sum to 1.
//
// Buckets (FitOptions::bucket_bytes; the plan is in nn/detail/sharded_optimizer.hpp): layers
// are grouped in backward order until a bucket holds at least bucket_bytes (0, the default:
// one bucket per layer with gradients); a bucket's reduction starts in the hook of its last
// (lowest) layer, so communication overlaps the backward pass of the layers below, and wait()
// completes them all before the optimizer steps. A bucket of one block is reduced in place; a
// bucket of several is packed into a staging buffer (in flat order) and reduced as one message,
// then unpacked in wait().
//
// Optimizer-state sharding (FitOptions::shard_optimizer_state, ZeRO stage 1): the flat
// parameter vector is split into one contiguous shard per rank; the optimizer keeps the state
// of this rank's shard only (Optimizer::shard) and steps the pieces of the parameter buffers
// in it with the summed gradient's pieces; the global clipping norm sums the shards' squares
// with an all-reduce of one double; the parameters are then all-gathered, so every rank holds
// the whole updated model. step() does this (or the plain optimizer step when not sharded).
//
// GradientSync<T, Exec> is written against the policy's primitives (exec/policy.hpp): each
// bucket's reduction is started in the hook with the non-blocking iallreduce (or, when sharded,
// ireduce_scatter into this rank's shard of the gradient), the requests are tested between
// layers so that they progress, and wait() completes them with the policy's wait_all (under
// its timeout). When sharded, the parameters are all-gathered in place with one
// iallgatherv_in_place per parameter buffer. exec::mpi runs these as MPI_Iallreduce,
// MPI_Ireduce_scatter and MPI_Iallgatherv; exec::ucx completes them when they start (so its
// reductions do not overlap the backward pass); under exec::local nothing is reduced.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/nn/detail/sharded_optimizer.hpp"
#include "onelearn/nn/optimizers.hpp"

namespace onelearn::nn::detail {

/// Layer i's gradient blocks scaled by `weight` (1: untouched, so a batch's rows on one
/// process are not rescaled at all).
template <class T>
void scale_blocks(const std::vector<std::span<T>>& blocks, T weight) {
  if (weight == T(1)) return;
  for (const auto& g : blocks) {
    for (auto& v : g) v *= weight;
  }
}

template <class T, exec::ExecutionPolicy Exec>
class GradientSync : public SyncPlan<T> {
 public:
  GradientSync() = default;
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;
  GradientSync(GradientSync&&) noexcept = default;
  GradientSync& operator=(GradientSync&&) noexcept = default;
  /// A step abandoned by an exception still completes its reductions (a request destroyed
  /// before it completed waits for it): the buffers they write belong to the layers, and the
  /// other ranks are in the same collectives. requests_ is the last member, so it goes first.
  ~GradientSync() = default;

  /// layer_grads[i]: layer i's gradient blocks (the spans Layer::gradients() returns); params:
  /// the parameter buffers in layer order.
  void prepare(const Exec* exec, std::vector<std::vector<std::span<T>>> layer_grads,
               std::span<const std::span<T>> params, const SyncOptions& options = {}) {
    requests_.clear();  // completes what an abandoned step left in flight
    exec_ = exec;
    this->plan(std::move(layer_grads), params, options, exec->rank(), exec->size());
    const int ranks = exec->size();
    bool packs = false;
    for (const auto& b : this->buckets_) packs = packs || b.end_buffer - b.first_buffer > 1;
    // Several blocks in a bucket: one staging buffer in flat order (buckets are disjoint
    // ranges of it). Not needed in one process, where nothing is reduced.
    staging_.assign(packs && Exec::is_distributed ? this->total() : 0, T(0));
    piece_grads_.clear();
    shard_grad_.clear();
    if (this->sharded_) {
      shard_grad_.assign(this->shard_end_ - this->shard_begin_, T(0));
      std::size_t at = 0;
      for (const auto& p : this->piece_params_) {
        piece_grads_.push_back(std::span<T>(shard_grad_).subspan(at, p.size()));
        at += p.size();
      }
      // Each bucket's reduce-scatter: every rank's share of the bucket's range, and where this
      // rank's share lands in its shard of the gradient.
      scatter_counts_.assign(this->buckets_.size(), std::vector<std::int64_t>(static_cast<std::size_t>(ranks)));
      scatter_at_.assign(this->buckets_.size(), 0);
      for (std::size_t k = 0; k < this->buckets_.size(); ++k) {
        const auto& b = this->buckets_[k];
        for (int r = 0; r < ranks; ++r) {
          const auto [lo, hi] = overlap(b.begin, b.end, r, ranks);
          scatter_counts_[k][static_cast<std::size_t>(r)] = static_cast<std::int64_t>(hi - lo);
          if (r == exec->rank() && lo < hi) scatter_at_[k] = lo - this->shard_begin_;
        }
      }
      // Each parameter buffer's in-place all-gather: every rank's piece of it.
      gather_counts_.assign(this->params_.size(), std::vector<std::int64_t>(static_cast<std::size_t>(ranks)));
      for (std::size_t j = 0; j < this->params_.size(); ++j) {
        for (int r = 0; r < ranks; ++r) {
          const auto [lo, hi] = overlap(this->offsets_[j], this->offsets_[j + 1], r, ranks);
          gather_counts_[j][static_cast<std::size_t>(r)] = static_cast<std::int64_t>(hi - lo);
        }
      }
    }
    requests_.reserve(this->buckets_.size() + this->params_.size() + 1);
  }

  /// Starts the sum of the batch statistics (before the backward pass, so it overlaps it).
  void start_stats(std::span<double> stats) {
    if (stats.empty()) return;
    requests_.push_back(exec_->iallreduce(stats, exec::reduce_op::sum));
  }

  /// Layer `layer`'s gradients are final: scale them, and start its bucket's reduction if it
  /// is the bucket's last layer.
  void ready(std::size_t layer, T weight) {
    scale_blocks(this->layers_[layer], weight);
    if constexpr (Exec::is_distributed) {
      const std::size_t k = this->trigger_[layer];
      if (k != SyncPlan<T>::none) start_bucket(k);
      progress();
    }
  }

  /// Completes every reduction started since the last wait (and unpacks the packed buckets).
  void wait() {
    exec_->wait_all(std::span<typename Exec::request>(requests_));
    requests_.clear();
    if (this->sharded_ || staging_.empty()) return;
    for (const auto& b : this->buckets_) {
      if (b.end_buffer - b.first_buffer < 2) continue;
      for (std::size_t j = b.first_buffer; j < b.end_buffer; ++j) {
        std::copy_n(staging_.begin() + static_cast<std::ptrdiff_t>(this->offsets_[j]),
                    this->grads_[j].size(), this->grads_[j].begin());
      }
    }
  }

  /// The optimizer step on the summed gradients (after wait()): whole, or this rank's shard
  /// followed by the in-place all-gather of every parameter buffer.
  void step(Optimizer<T>& optimizer, std::span<const std::span<T>> params,
            std::span<const std::span<T>> grads) {
    if (!this->sharded_) {
      optimizer.step(params, grads);
      return;
    }
    optimizer.step(this->piece_params_, piece_grads_, [&](double squares) {
      exec_->allreduce(std::span<double>(&squares, 1), exec::reduce_op::sum);
      return squares;
    });
    for (std::size_t j = 0; j < this->params_.size(); ++j) {
      if (this->params_[j].empty()) continue;
      requests_.push_back(exec_->iallgatherv_in_place(this->params_[j], std::span<const std::int64_t>(gather_counts_[j])));
    }
    exec_->wait_all(std::span<typename Exec::request>(requests_));
    requests_.clear();
  }

 private:
  /// Rank r's shard intersected with the flat range [begin, end) (empty: lo == hi).
  std::pair<std::size_t, std::size_t> overlap(std::size_t begin, std::size_t end, int r,
                                              int ranks) const {
    const auto [s0, s1] = shard_of(this->total(), r, ranks);
    const std::size_t lo = std::max(begin, s0);
    const std::size_t hi = std::min(end, s1);
    return lo < hi ? std::pair{lo, hi} : std::pair{lo, lo};
  }

  void start_bucket(std::size_t k) {
    const auto& b = this->buckets_[k];
    const std::size_t count = b.end - b.begin;
    if (count == 0) return;
    std::span<T> data = this->grads_[b.first_buffer];
    if (b.end_buffer - b.first_buffer > 1) {
      data = std::span<T>(staging_).subspan(b.begin, count);
      for (std::size_t j = b.first_buffer; j < b.end_buffer; ++j) {
        std::copy(this->grads_[j].begin(), this->grads_[j].end(),
                  staging_.begin() + static_cast<std::ptrdiff_t>(this->offsets_[j]));
      }
    }
    if (this->sharded_) {
      const std::span<const std::int64_t> counts(scatter_counts_[k]);
      const auto mine = static_cast<std::size_t>(counts[static_cast<std::size_t>(exec_->rank())]);
      requests_.push_back(exec_->ireduce_scatter(data, std::span<T>(shard_grad_).subspan(scatter_at_[k], mine),
                                                 counts, exec::reduce_op::sum));
    } else {
      requests_.push_back(exec_->iallreduce(data, exec::reduce_op::sum));
    }
  }

  /// Lets the reductions in flight advance. Open MPI (and MPICH without an async progress
  /// thread) moves a non-blocking collective forward only inside MPI calls, so without this the
  /// buckets started during the backward pass would mostly wait for wait() and overlap nothing.
  /// Testing up to the first incomplete request per layer is cheap and completes the rounds
  /// whose messages have arrived.
  void progress() {
    for (auto& request : requests_) {
      if (!request.test()) return;
    }
  }

  const Exec* exec_ = nullptr;
  std::vector<T> staging_;     // packed buckets of several blocks, flat order
  std::vector<T> shard_grad_;  // sharded: this rank's shard of the summed gradient
  std::vector<std::span<T>> piece_grads_;  // its pieces, one per parameter piece of the shard
  std::vector<std::vector<std::int64_t>> scatter_counts_, gather_counts_;
  std::vector<std::size_t> scatter_at_;
  // Last: destroyed first, so that requests in flight complete while their buffers live.
  std::vector<typename Exec::request> requests_;
};

}  // namespace onelearn::nn::detail
