#pragma once
// The flat view of a model's parameters that data-parallel nn::Sequential training plans its
// gradient buckets and its optimizer-state shards on (nn/detail/gradient_sync.hpp), and the
// conversions of an optimizer's state between whole and sharded (ZeRO stage 1).
//
// Flat order: the parameter buffers in layer order (Sequential's params_, a Dense layer's
// kernel-and-bias block being one buffer), gradient buffer j the same size as parameter buffer
// j. A bucket is a run of consecutive layers, so it covers one contiguous flat range; a shard
// is one contiguous flat range per rank, balanced in values (the first total % ranks ranks take
// one more), so a shard's pieces of the buffers are contiguous too. Both plans depend only on
// the buffer sizes, the options and the rank count: the same on every rank.

#include <algorithm>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/nn/optimizers.hpp"

namespace onelearn::nn::detail {

/// What FitOptions passes to the gradient synchronisation.
struct SyncOptions {
  std::size_t bucket_bytes = 0;        ///< FitOptions::bucket_bytes
  bool shard_optimizer_state = false;  ///< FitOptions::shard_optimizer_state
};

/// Rank `rank`'s shard of `total` values: [begin, end).
inline std::pair<std::size_t, std::size_t> shard_of(std::size_t total, int rank, int ranks) {
  const auto r = static_cast<std::size_t>(rank);
  const auto p = static_cast<std::size_t>(ranks);
  const std::size_t base = total / p;
  const std::size_t extra = total % p;
  const std::size_t begin = r * base + std::min(r, extra);
  return {begin, begin + base + (r < extra ? 1 : 0)};
}

/// The buckets and the shard of one fit, over the layers' gradient blocks.
template <class T>
class SyncPlan {
 public:
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

  /// A run of consecutive layers' blocks: buffers [first_buffer, end_buffer), flat values
  /// [begin, end). Its reduction starts when layer `trigger` (its lowest) is done.
  struct Bucket {
    std::size_t first_buffer = 0, end_buffer = 0;
    std::size_t begin = 0, end = 0;
    std::size_t trigger = 0;
  };

  /// layer_grads[i]: layer i's gradient blocks; params: every parameter buffer in layer order
  /// (the same sizes as the blocks, concatenated).
  void plan(std::vector<std::vector<std::span<T>>> layer_grads,
            std::span<const std::span<T>> params, const SyncOptions& options, int rank,
            int ranks) {
    layers_ = std::move(layer_grads);
    grads_.clear();
    layer_first_.clear();
    for (const auto& blocks : layers_) {
      layer_first_.push_back(grads_.size());
      grads_.insert(grads_.end(), blocks.begin(), blocks.end());
    }
    params_.assign(params.begin(), params.end());
    if (params_.size() != grads_.size()) {
      throw invalid_argument("Sequential.fit: expected as many gradient blocks as parameter "
                             "buffers, found " + std::to_string(grads_.size()) + " and " +
                             std::to_string(params_.size()));
    }
    offsets_.assign(1, 0);
    for (std::size_t j = 0; j < grads_.size(); ++j) {
      if (grads_[j].size() != params_[j].size()) {
        throw invalid_argument("Sequential.fit: expected gradient block " + std::to_string(j) +
                               " of the size of its parameter buffer, " +
                               std::to_string(params_[j].size()) + ", found " +
                               std::to_string(grads_[j].size()));
      }
      offsets_.push_back(offsets_.back() + grads_[j].size());
    }

    // Buckets in backward order: layers are added until the bucket holds bucket_bytes (0: every
    // layer with gradients is a bucket of its own), the last one takes what is left.
    buckets_.clear();
    trigger_.assign(layers_.size(), none);
    std::size_t open_high = none;
    std::size_t open_low = none;
    std::size_t bytes = 0;
    auto close_bucket = [&] {
      Bucket b;
      b.first_buffer = layer_first_[open_low];
      b.end_buffer = layer_first_[open_high] + layers_[open_high].size();
      b.begin = offsets_[b.first_buffer];
      b.end = offsets_[b.end_buffer];
      b.trigger = open_low;
      trigger_[open_low] = buckets_.size();
      buckets_.push_back(b);
      open_high = open_low = none;
      bytes = 0;
    };
    for (std::size_t i = layers_.size(); i-- > 0;) {
      if (layers_[i].empty()) continue;
      if (open_high == none) open_high = i;
      open_low = i;
      for (const auto& g : layers_[i]) bytes += g.size() * sizeof(T);
      if (bytes >= options.bucket_bytes) close_bucket();
    }
    if (open_high != none) close_bucket();

    sharded_ = options.shard_optimizer_state && ranks > 1;
    std::tie(shard_begin_, shard_end_) = shard_of(total(), sharded_ ? rank : 0, sharded_ ? ranks : 1);
    piece_params_ = pieces(params_);
  }

  [[nodiscard]] std::size_t total() const noexcept { return offsets_.empty() ? 0 : offsets_.back(); }
  [[nodiscard]] bool sharded() const noexcept { return sharded_; }
  [[nodiscard]] const std::vector<Bucket>& buckets() const noexcept { return buckets_; }

  /// Brings the optimizer's state into this plan's layout: this rank's shard when sharding
  /// (gathering first if it holds another shard), whole otherwise (gathering a shard).
  /// Collective when it gathers; every rank takes the same branch.
  template <exec::ExecutionPolicy Exec>
  void adopt(Optimizer<T>& optimizer, const Exec& exec) const {
    if (!sharded_) {
      unshard(optimizer, exec);
      return;
    }
    if (optimizer.is_sharded() && optimizer.total() == total() &&
        optimizer.shard_range() == std::pair{shard_begin_, shard_end_}) {
      return;
    }
    unshard(optimizer, exec);
    optimizer.shard(shard_begin_, shard_end_);
  }

  /// Gathers a sharded optimizer's whole state on every rank (collective); nothing if whole.
  template <exec::ExecutionPolicy Exec>
  static void unshard(Optimizer<T>& optimizer, const Exec& exec) {
    if (!optimizer.is_sharded()) return;
    optimizer.unshard([&](std::span<const T> mine) { return exec.allgatherv(mine); });
  }

 protected:
  /// The pieces of `buffers` (flat order) inside this rank's shard, in order, empty ones
  /// dropped: the buffers a sharded optimizer steps.
  std::vector<std::span<T>> pieces(const std::vector<std::span<T>>& buffers) const {
    std::vector<std::span<T>> out;
    for (std::size_t j = 0; j < buffers.size(); ++j) {
      const std::size_t lo = std::max(shard_begin_, offsets_[j]);
      const std::size_t hi = std::min(shard_end_, offsets_[j + 1]);
      if (lo < hi) out.push_back(buffers[j].subspan(lo - offsets_[j], hi - lo));
    }
    return out;
  }

  std::vector<std::vector<std::span<T>>> layers_;  // per layer: its gradient blocks
  std::vector<std::span<T>> grads_, params_;       // every buffer, flat order
  std::vector<std::size_t> layer_first_;           // per layer: its first buffer
  std::vector<std::size_t> offsets_;               // buffer j: flat [offsets_[j], offsets_[j+1])
  std::vector<Bucket> buckets_;
  std::vector<std::size_t> trigger_;  // per layer: the bucket it starts, or none
  bool sharded_ = false;
  std::size_t shard_begin_ = 0, shard_end_ = 0;
  std::vector<std::span<T>> piece_params_;
};

/// Runs f with the optimizer's whole state (gathered from the shards when sharded, a collective
/// on every rank, and sharded again afterwards, also when f throws): what save_checkpoint and
/// ModelCheckpoint need, since a checkpoint holds the whole state.
template <class T, exec::ExecutionPolicy Exec, class F>
void with_whole_optimizer_state(Optimizer<T>* optimizer, const Exec& exec, F&& f) {
  if (optimizer == nullptr || !optimizer->is_sharded()) {
    f();
    return;
  }
  const auto [begin, end] = optimizer->shard_range();
  SyncPlan<T>::unshard(*optimizer, exec);
  try {
    f();
  } catch (...) {
    optimizer->shard(begin, end);
    throw;
  }
  optimizer->shard(begin, end);
}

}  // namespace onelearn::nn::detail
