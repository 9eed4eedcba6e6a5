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
// GradientSync<T, Exec> (any distributed policy, e.g. exec::ucx) reduces with the policy's
// blocking collectives in wait(): every block all-reduced (bucket_bytes has no effect), and
// when sharded each rank reads its shard of the summed gradients from the blocks and the
// parameters are all-gathered with the policy's allgatherv (optimizer memory is divided by the
// ranks; communication is an all-reduce plus an all-gather, more than unsharded). The
// exec::mpi specialisation (when <mpi.h> is reachable) starts each bucket's MPI_Iallreduce, or
// when sharded its MPI_Ireduce_scatter into this rank's shard of the gradient, in the hook, and
// all-gathers the parameters in place with one MPI_Iallgatherv per parameter buffer; requests
// complete through the policy's wait_all (its timeout) when the policy has one.

#include <cstddef>
#include <span>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/nn/detail/sharded_optimizer.hpp"
#include "onelearn/nn/optimizers.hpp"

#if __has_include(<mpi.h>)
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <string>

#include "onelearn/core/errors.hpp"
#include "onelearn/exec/mpi.hpp"
#endif

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
  /// layer_grads[i]: layer i's gradient blocks (the spans Layer::gradients() returns); params:
  /// the parameter buffers in layer order.
  void prepare(const Exec* exec, std::vector<std::vector<std::span<T>>> layer_grads,
               std::span<const std::span<T>> params, const SyncOptions& options = {}) {
    exec_ = exec;
    this->plan(std::move(layer_grads), params, options, exec->rank(), exec->size());
    piece_grads_ = this->pieces(this->grads_);
    if (this->sharded_) mine_.resize(this->shard_end_ - this->shard_begin_);
  }

  /// Batch statistics (sums over the rows) to reduce along with the gradients.
  void start_stats(std::span<double> stats) { stats_ = stats; }

  void ready(std::size_t layer, T weight) { scale_blocks(this->layers_[layer], weight); }

  void wait() {
    if (!stats_.empty()) exec_->allreduce(stats_, exec::reduce_op::sum);
    stats_ = {};
    for (std::size_t i = this->layers_.size(); i-- > 0;) {
      for (const auto& g : this->layers_[i]) exec_->allreduce(g, exec::reduce_op::sum);
    }
  }

  /// The optimizer step on the summed gradients (after wait()): whole, or this rank's shard
  /// followed by the all-gather of the parameters.
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
    std::size_t at = 0;
    for (const auto& p : this->piece_params_) {
      std::copy(p.begin(), p.end(), mine_.begin() + static_cast<std::ptrdiff_t>(at));
      at += p.size();
    }
    const std::vector<T> all = exec_->allgatherv(std::span<const T>(mine_));
    if (all.size() != this->total()) {
      throw distributed_error("Sequential.fit: expected the parameter shards to gather to " +
                              std::to_string(this->total()) + " values, found " +
                              std::to_string(all.size()));
    }
    for (std::size_t j = 0; j < this->params_.size(); ++j) {
      std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(this->offsets_[j]),
                  this->params_[j].size(), this->params_[j].begin());
    }
  }

 private:
  const Exec* exec_ = nullptr;
  std::span<double> stats_;
  std::vector<std::span<T>> piece_grads_;  // this rank's shard of the summed blocks
  std::vector<T> mine_;                    // this rank's shard of the parameters, packed
};

#if __has_include(<mpi.h>)
template <class T>
class GradientSync<T, exec::mpi> : public SyncPlan<T> {
 public:
  GradientSync() = default;
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;
  GradientSync(GradientSync&&) noexcept = default;
  GradientSync& operator=(GradientSync&&) noexcept = default;
  /// A step abandoned by an exception still completes its reductions: the buffers they write
  /// belong to the layers, and the other ranks are in the same collectives.
  ~GradientSync() { complete(); }

  void prepare(const exec::mpi* exec, std::vector<std::vector<std::span<T>>> layer_grads,
               std::span<const std::span<T>> params, const SyncOptions& options = {}) {
    complete();
    exec_ = exec;
    this->plan(std::move(layer_grads), params, options, exec->rank(), exec->size());
    const int ranks = exec->size();
    bool packs = false;
    for (const auto& b : this->buckets_) {
      if (b.end - b.begin > static_cast<std::size_t>(INT_MAX)) {
        throw invalid_argument(
            "Sequential.fit: expected gradient buckets of at most INT_MAX values for "
            "MPI_Iallreduce, found " + std::to_string(b.end - b.begin) +
            " (lower bucket_bytes)");
      }
      packs = packs || b.end_buffer - b.first_buffer > 1;
    }
    // Several blocks in a bucket: one staging buffer in flat order (buckets are disjoint
    // ranges of it).
    staging_.assign(packs ? this->total() : 0, T(0));
    if (this->sharded_) {
      shard_grad_.assign(this->shard_end_ - this->shard_begin_, T(0));
      piece_grads_.clear();
      std::size_t at = 0;
      for (const auto& p : this->piece_params_) {
        piece_grads_.push_back(std::span<T>(shard_grad_).subspan(at, p.size()));
        at += p.size();
      }
      // Each bucket's reduce-scatter: every rank's share of the bucket's range, and where this
      // rank's share lands in its shard of the gradient.
      recv_counts_.assign(this->buckets_.size(), std::vector<int>(static_cast<std::size_t>(ranks)));
      recv_at_.assign(this->buckets_.size(), 0);
      for (std::size_t k = 0; k < this->buckets_.size(); ++k) {
        const auto& b = this->buckets_[k];
        for (int r = 0; r < ranks; ++r) {
          const auto [lo, hi] = overlap(b.begin, b.end, r, ranks);
          recv_counts_[k][static_cast<std::size_t>(r)] = static_cast<int>(hi - lo);
          if (r == exec->rank() && lo < hi) recv_at_[k] = lo - this->shard_begin_;
        }
      }
      // Each parameter buffer's in-place all-gather: every rank's piece of it.
      gather_counts_.assign(this->params_.size(), std::vector<int>(static_cast<std::size_t>(ranks)));
      gather_displs_.assign(this->params_.size(), std::vector<int>(static_cast<std::size_t>(ranks)));
      for (std::size_t j = 0; j < this->params_.size(); ++j) {
        for (int r = 0; r < ranks; ++r) {
          const auto [lo, hi] = overlap(this->offsets_[j], this->offsets_[j + 1], r, ranks);
          gather_counts_[j][static_cast<std::size_t>(r)] = static_cast<int>(hi - lo);
          gather_displs_[j][static_cast<std::size_t>(r)] =
              static_cast<int>(lo < hi ? lo - this->offsets_[j] : 0);
        }
      }
    }
    requests_.reserve(this->buckets_.size() + this->params_.size() + 1);
  }

  /// Starts the sum of the batch statistics (before the backward pass, so it overlaps it).
  void start_stats(std::span<double> stats) {
    if (stats.empty()) return;
    MPI_Request request = MPI_REQUEST_NULL;
    exec::detail::check_mpi(MPI_Iallreduce(MPI_IN_PLACE, stats.data(),
                                           static_cast<int>(stats.size()), MPI_DOUBLE, MPI_SUM,
                                           exec_->comm(), &request),
                            "MPI_Iallreduce");
    requests_.push_back(request);
  }

  /// Layer `layer`'s gradients are final: scale them, and start its bucket's reduction if it
  /// is the bucket's last layer.
  void ready(std::size_t layer, T weight) {
    scale_blocks(this->layers_[layer], weight);
    const std::size_t k = this->trigger_[layer];
    if (k != SyncPlan<T>::none) start_bucket(k);
    progress();
  }

  /// Completes every reduction started since the last wait (and unpacks the packed buckets).
  void wait() {
    wait_requests("MPI_Iallreduce (gradient buckets)");
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
      MPI_Request request = MPI_REQUEST_NULL;
      exec::detail::check_mpi(
          MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, this->params_[j].data(),
                          gather_counts_[j].data(), gather_displs_[j].data(),
                          exec::detail::mpi_type<T>(), exec_->comm(), &request),
          "MPI_Iallgatherv");
      requests_.push_back(request);
    }
    wait_requests("MPI_Iallgatherv (parameter shards)");
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
    T* data = this->grads_[b.first_buffer].data();
    if (b.end_buffer - b.first_buffer > 1) {
      data = staging_.data() + b.begin;
      for (std::size_t j = b.first_buffer; j < b.end_buffer; ++j) {
        std::copy(this->grads_[j].begin(), this->grads_[j].end(),
                  staging_.begin() + static_cast<std::ptrdiff_t>(this->offsets_[j]));
      }
    }
    MPI_Request request = MPI_REQUEST_NULL;
    if (this->sharded_) {
      T* recv = shard_grad_.empty() ? &unused_ : shard_grad_.data() + recv_at_[k];
      exec::detail::check_mpi(
          MPI_Ireduce_scatter(data, recv, recv_counts_[k].data(), exec::detail::mpi_type<T>(),
                              MPI_SUM, exec_->comm(), &request),
          "MPI_Ireduce_scatter");
    } else {
      exec::detail::check_mpi(
          MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count),
                         exec::detail::mpi_type<T>(), MPI_SUM, exec_->comm(), &request),
          "MPI_Iallreduce");
    }
    requests_.push_back(request);
  }

  /// Completes the requests under the policy's timeout when it offers one (wait_all), else
  /// with MPI_Waitall.
  void wait_requests(const char* operation) {
    if (requests_.empty()) return;
    if constexpr (requires(const exec::mpi& e, std::span<MPI_Request> r) {
                    e.wait_all(r, "");
                  }) {
      exec_->wait_all(std::span<MPI_Request>(requests_), operation);
      requests_.clear();
    } else {
      const int rc = MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(),
                                 MPI_STATUSES_IGNORE);
      requests_.clear();
      exec::detail::check_mpi(rc, operation);
    }
  }

  /// Lets the reductions in flight advance. Open MPI (and MPICH without an async progress
  /// thread) moves a non-blocking collective forward only inside MPI calls, so without this the
  /// buckets started during the backward pass would mostly wait for wait() and overlap nothing.
  /// One MPI_Testall per layer is cheap and completes the rounds whose messages have arrived.
  void progress() {
    if (requests_.empty()) return;
    int done = 0;
    exec::detail::check_mpi(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(),
                                        &done, MPI_STATUSES_IGNORE),
                            "MPI_Testall");
  }

  void complete() noexcept {
    if (!requests_.empty()) {
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
      requests_.clear();
    }
  }

  const exec::mpi* exec_ = nullptr;
  std::vector<MPI_Request> requests_;
  std::vector<T> staging_;     // packed buckets of several blocks, flat order
  std::vector<T> shard_grad_;  // sharded: this rank's shard of the summed gradient
  std::vector<std::span<T>> piece_grads_;
  std::vector<std::vector<int>> recv_counts_, gather_counts_, gather_displs_;
  std::vector<std::size_t> recv_at_;
  T unused_{};  // a valid address for a reduce-scatter that brings this rank nothing
};
#endif

}  // namespace onelearn::nn::detail
