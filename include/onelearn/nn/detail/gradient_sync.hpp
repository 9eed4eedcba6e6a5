#pragma once
// Gradient synchronisation of data-parallel nn::Sequential training (Exec::is_distributed).
//
// Every rank runs the same step on its local batch. Each layer's gradients are a contiguous
// block (nn/layer.hpp), the all-reduce bucket: when the layer's backward is done (Sequential's
// gradient-ready hook) the block is scaled by local batch rows / global batch rows and its
// sum over the ranks is started, so communication overlaps the backward pass of the layers
// below; wait() completes every bucket before the optimizer steps. The scaling makes the sum
// the gradient of the mean loss over the global batch (the losses average over their batch),
// so every rank takes the one-process step on the union of the ranks' batches. A layer's
// regularisation gradient, added in full on every rank, comes out once: the weights sum to 1.
//
// GradientSync<T, Exec> (any policy) reduces the buckets with the policy's blocking allreduce
// in wait(); the exec::mpi specialisation (when <mpi.h> is reachable) uses MPI_Iallreduce on
// the policy's communicator, started in ready().

#include <cstddef>
#include <span>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"

#if __has_include(<mpi.h>)
#include <mpi.h>

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

template <class T, class Exec>
class GradientSync {
 public:
  /// layer_grads[i]: layer i's gradient blocks (the spans Layer::gradients() returns).
  void prepare(const Exec* exec, std::vector<std::vector<std::span<T>>> layer_grads) {
    exec_ = exec;
    layers_ = std::move(layer_grads);
  }

  /// Batch statistics (sums over the rows) to reduce along with the gradients.
  void start_stats(std::span<double> stats) { stats_ = stats; }

  void ready(std::size_t layer, T weight) { scale_blocks(layers_[layer], weight); }

  void wait() {
    if (!stats_.empty()) exec_->allreduce(stats_, exec::reduce_op::sum);
    stats_ = {};
    for (std::size_t i = layers_.size(); i-- > 0;) {
      for (const auto& g : layers_[i]) exec_->allreduce(g, exec::reduce_op::sum);
    }
  }

 private:
  const Exec* exec_ = nullptr;
  std::vector<std::vector<std::span<T>>> layers_;
  std::span<double> stats_;
};

#if __has_include(<mpi.h>)
template <class T>
class GradientSync<T, exec::mpi> {
 public:
  GradientSync() = default;
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;
  GradientSync(GradientSync&&) noexcept = default;
  GradientSync& operator=(GradientSync&&) noexcept = default;
  /// A step abandoned by an exception still completes its reductions: the buffers they write
  /// belong to the layers, and the other ranks are in the same collectives.
  ~GradientSync() { complete(); }

  void prepare(const exec::mpi* exec, std::vector<std::vector<std::span<T>>> layer_grads) {
    complete();
    exec_ = exec;
    layers_ = std::move(layer_grads);
    for (const auto& blocks : layers_) {
      for (const auto& g : blocks) {
        if (g.size() > static_cast<std::size_t>(INT_MAX)) {
          throw invalid_argument(
              "Sequential.fit: expected gradient blocks of at most INT_MAX values for "
              "MPI_Iallreduce, found " +
              std::to_string(g.size()));
        }
      }
    }
    requests_.reserve(64);
  }

  /// Starts the sum of the batch statistics (before the backward pass, so it overlaps it).
  void start_stats(std::span<double> stats) {
    start(stats.data(), stats.size(), MPI_DOUBLE);
  }

  /// Layer `layer`'s gradients are final: scale them and start their sum over the ranks.
  void ready(std::size_t layer, T weight) {
    scale_blocks(layers_[layer], weight);
    for (const auto& g : layers_[layer]) start(g.data(), g.size(), exec::detail::mpi_type<T>());
  }

  /// Completes every reduction started since the last wait.
  void wait() {
    if (requests_.empty()) return;
    const int rc = MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(),
                               MPI_STATUSES_IGNORE);
    requests_.clear();
    exec::detail::check_mpi(rc, "MPI_Waitall");
  }

 private:
  void start(void* data, std::size_t count, MPI_Datatype type) {
    if (count == 0) return;
    MPI_Request request = MPI_REQUEST_NULL;
    exec::detail::check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count), type,
                                           MPI_SUM, exec_->comm(), &request),
                            "MPI_Iallreduce");
    requests_.push_back(request);
  }

  void complete() noexcept {
    if (!requests_.empty()) {
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
      requests_.clear();
    }
  }

  const exec::mpi* exec_ = nullptr;
  std::vector<std::vector<std::span<T>>> layers_;
  std::vector<MPI_Request> requests_;
};
#endif

}  // namespace onelearn::nn::detail
