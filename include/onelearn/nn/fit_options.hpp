#pragma once
/**
 * \class onelearn::nn::FitOptions
 * \brief The settings of Sequential::fit (Keras's fit arguments).
 * \ingroup nn
 *
 * <!-- example-context: nn -->
 * \code
 * #include <onelearn/nn/fit_options.hpp>   // nn/sequential.hpp includes it
 *
 * namespace nn = onelearn::nn;
 * model.fit(X, y, nn::FitOptions{.epochs = 30, .batch_size = 32, .seed = 7,
 *                                .validation_data = {X_val, y_val}, .verbose = 1});
 * \endcode
 *
 * nn::FitOptions: the settings of nn::Sequential::fit (Keras's fit arguments), and
 * nn::ValidationData, the held-out rows it evaluates after every epoch.
 *
 * \par FitOptions
 * - `epochs` (default 1), `batch_size` (default 32), `shuffle` (default true).
 * - `seed` (default 0): everything random in fit derives from it: the initial weights (drawn at
 *   the first fit, unless the model was built already or a layer has its own seed), dropout
 *   masks and the epochs' orders. Two fits of equal models with equal seeds give identical
 *   weights (bit for bit, for a given build and number of Eigen threads: a multi-threaded GEMM
 *   splits its sums differently).
 * - `validation_split` (default 0): the last fraction of the rows (before shuffling, as Keras)
 *   is held out; the epoch logs then also hold val_loss (and val_accuracy).
 * - `validation_data` (default none): `{X_val, y_val}` evaluated after every epoch instead of a
 *   split (val_loss, val_accuracy). Giving both it and validation_split is an error (Keras
 *   silently ignores the split).
 * - `verbose` (default 0): 1 adds a ProgressBar on std::cout (nn/progress_bar.hpp: redrawn in
 *   place on a terminal, one line per epoch otherwise); 2 one line per epoch always (Keras's
 *   verbose=2).
 * - `resume_from` (default none): a checkpoint (nn/checkpoint.hpp) to continue from: fit loads
 *   it, checks that seed, batch_size, shuffle, the validation settings and the number of
 *   training rows are the ones it was written with, runs epochs checkpoint-epoch .. epochs-1
 *   and returns the whole History. The result is bit-identical to an uninterrupted fit.
 * - `replicated` (default false), `shard_optimizer_state` (default false), `bucket_bytes`
 *   (default 0), `reproducible_blocks` (default 0): see Data-parallel training.
 *
 * \par Data-parallel training (Exec = exec::mpi)
 * <!-- example-context: nn -->
 * \code
 * nn::Sequential<float, exec::mpi> model{exec::mpi(comm), nn::Input({64}), nn::Dense(128, "relu"),
 *                                        nn::Dense(10)};
 * model.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
 * model.fit(X_mine, y_mine, {.epochs = 10, .batch_size = 32});   // each rank: its own rows
 * model.fit(X_all, y_all, {.batch_size = 128, .replicated = true});  // every rank: all rows
 * \endcode
 * fit broadcasts rank 0's weights (and layer state) first, so the ranks start equal however
 * they were built. Every step each rank runs forward and backward on its part of the global
 * batch; as each layer's backward finishes (the gradient-ready hook), its gradient block is
 * scaled by the rank's rows / the global batch's rows and, when it completes a bucket, the
 * bucket's MPI_Iallreduce starts (nn/detail/gradient_sync.hpp), overlapping the backward pass
 * of the layers below; the optimizer steps once all have completed. Since the losses average
 * over the batch, every rank then takes the step one process takes on the union of the ranks'
 * batches, and all ranks hold the same weights. The logged loss and accuracy (and val_loss,
 * val_accuracy, and evaluate's scores) are over all ranks' rows.
 * - Per-rank mode (default): each rank passes its own rows (any number, 0 included). Global
 *   batch b is the concatenation in rank order of every rank's batch b (its rows
 *   [b * batch_size, (b + 1) * batch_size) when not shuffled). Every rank takes as many steps
 *   as the rank with the most batches; a rank whose rows have run out joins with an empty batch.
 *   shuffle permutes each rank's own rows, with a stream derived from (seed, epoch, rank).
 *   validation_split holds out the last fraction of each rank's rows; validation_data is each
 *   rank's own part.
 * - Replicated mode (`.replicated = true`): every rank passes the same full data (and the same
 *   validation_data); each epoch's order is drawn from the seed as one process draws it, and
 *   each global batch of batch_size rows is split by rank into consecutive parts (the first
 *   rows % ranks ranks take one row more, so nothing is dropped; a rank may get none). The
 *   result equals one process's fit at the same batch_size and seed (up to rounding). The
 *   held-out rows are split by rank the same way. Only the row counts are checked to agree.
 * - Buckets (`bucket_bytes`, default 0): consecutive layers' gradient blocks, in backward
 *   order, are grouped until a bucket holds at least bucket_bytes bytes (0: one bucket per
 *   layer with parameters, so the first reduction starts as early as possible; PyTorch DDP's
 *   default is 25 MiB, which suits models of many small layers). A bucket's reduction starts
 *   when its last (lowest) layer's backward is done; a bucket of several blocks is packed into
 *   a staging buffer and reduced as one message. Every bucket size gives the same weights (up to
 *   the rounding of another reduction order). Distributed policies other than exec::mpi
 *   (exec::ucx) reduce every block with the policy's blocking all-reduce after the backward
 *   pass: bucket_bytes has no effect there.
 * - Optimizer-state sharding (`shard_optimizer_state = true`, ZeRO stage 1): the parameters,
 *   seen as one flat vector in layer order, are split into one contiguous shard per rank
 *   (balanced in values). Each bucket is reduce-scattered (MPI_Ireduce_scatter), so a rank
 *   receives only its shard of the summed gradient; it updates its shard of the parameters with
 *   its shard of the optimizer state (Optimizer::shard: every optimizer is element-wise, and
 *   global_clipnorm sums the shards' squared norms with one all-reduce); then the parameters
 *   are all-gathered in place (MPI_Iallgatherv per parameter buffer). The weights equal
 *   unsharded training's (tested for SGD, Adam, AdamW, RMSprop, Adagrad and global_clipnorm) and
 *   each rank holds 1/ranks of the optimizer state: optimizer_state_bytes() (Adam, float,
 *   784-512-512-10: 5,357,648 bytes on one process; 2,678,824 per rank on 2; 1,785,888 on 3).
 *   The state stays sharded after fit (optimizer().state() is the rank's slice); a later fit
 *   without the option gathers it back (collective), so fits continue across modes. A
 *   checkpoint holds the whole state: save_checkpoint gathers it (so every rank must call it),
 *   fit gathers it around the epoch-end callbacks when one of them is a ModelCheckpoint (which
 *   writes on rank 0), and load_checkpoint (and resume_from) drops the shard and loads the whole
 *   state, which the next sharded fit shards again: a checkpoint resumes with or without
 *   sharding. Other distributed policies (exec::ucx) shard with the policy's blocking
 *   collectives: an all-reduce of the gradients, then allgatherv of the parameters (the same
 *   memory saving, more communication than unsharded). Ignored by local policies.
 * - Reproducible blocks (`reproducible_blocks = B`, replicated mode or one process): the weights
 *   depend on B, not on the number of ranks, bit for bit. Each global batch is cut into B fixed
 *   blocks of consecutive rows (the first rows % B one row longer), dealt to the ranks in
 *   consecutive runs; each rank runs forward and backward on its blocks one at a time, and
 *   every rank adds all the blocks' gradients (and loss sums) in block order
 *   (nn/detail/block_sum.hpp), where an all-reduce adds in an order that changes with the
 *   number of ranks. The held-out rows are evaluated in B blocks the same way. So a fit on 3
 *   ranks, on 2, and on one process (exec::local) with the same B end with the same weights
 *   and History, and a job that lost a rank resumes from its checkpoint on the ranks left
 *   (onelearn-run shrinks the job to the slots left) to the model the uninterrupted job would
 *   have ended with; the checkpoint records B and a resume with another B is refused. The
 *   result equals the unblocked fit up to rounding. The cost: every rank receives every
 *   block's gradient (B x the parameters, one allgatherv a step, against one all-reduce), and
 *   small blocks run the layers on fewer rows at a time; ranks beyond B sit idle. Not with
 *   shard_optimizer_state, the per-rank mode (its rows move with the ranks), or layers with
 *   batch statistics (BatchNormalization: a block's statistics would be its own); those are
 *   invalid_argument. bucket_bytes has no effect.
 * - Layers learn each step's layout through Layer::begin_batch (nn::BatchContext: this rank's
 *   row offset in the global batch, its rows, the global rows, and a sum over the ranks); a
 *   rank without rows in a step calls shadow_forward/shadow_backward instead of the passes.
 *   Dropout keys each row's mask by (seed, step, position in the global batch): the ranks draw
 *   different masks (per-rank streams derived from the seed; fit broadcasts rank 0's seed and
 *   step with the weights), together one process's masks, so a model with Dropout also equals
 *   one process's fit, in both modes. BatchNormalization's statistics are each rank's own by
 *   default (its result then differs from one process's, as PyTorch's BatchNorm under DDP,
 *   and each rank's moving statistics are its own); with `{.synchronized = true}` (Keras 3's
 *   synchronized=True, PyTorch's SyncBatchNorm) they are the global batch's, reduced over the
 *   ranks in the forward and backward passes, and the fit equals one process's.
 * - Files and output: ModelCheckpoint writes on rank 0 only; save_checkpoint, save_weights
 *   and resume_from act on the calling rank's own file (with sharding, save_checkpoint is
 *   collective, see above). predict is per rank (each rank's rows). The progress bar (verbose)
 *   prints on rank 0 only.
 *
 * Errors (raised by fit): `invalid_argument` for epochs < 0, batch_size < 1, validation_split
 * outside [0, 1), validation_split and validation_data both given, verbose outside 0..2, and a
 * resume_from checkpoint written with other settings.
 */

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/callbacks.hpp"

namespace onelearn::nn {

/// Held-out rows fit evaluates after every epoch (Keras's validation_data=(X_val, y_val)):
/// `.validation_data = {X_val, y_val}`. Copied once (float or double features; integer labels
/// or real targets), so the options stay a plain value.
struct ValidationData {
  ValidationData() = default;
  template <class DX, class DY>
  ValidationData(const Eigen::MatrixBase<DX>& X_val,  // NOLINT(google-explicit-constructor)
                 const Eigen::MatrixBase<DY>& y_val) {
    using XS = typename DX::Scalar;
    using YS = typename DY::Scalar;
    static_assert(std::is_same_v<XS, float> || std::is_same_v<XS, double>,
                  "nn::ValidationData: X must hold float or double values");
    X = Matrix<XS>(X_val);
    if constexpr (std::is_integral_v<YS>) {
      y = Matrix<std::int64_t>(y_val.template cast<std::int64_t>());
    } else {
      static_assert(std::is_floating_point_v<YS>,
                    "nn::ValidationData: y must hold integers or reals");
      y = Matrix<double>(y_val.template cast<double>());
    }
  }
  [[nodiscard]] bool empty() const noexcept { return X.index() == 0; }

  std::variant<std::monostate, Matrix<float>, Matrix<double>> X;
  std::variant<std::monostate, Matrix<std::int64_t>, Matrix<double>> y;
};

struct FitOptions {
  int epochs = 1;
  index_t batch_size = 32;
  bool shuffle = true;
  std::uint64_t seed = 0;
  double validation_split = 0;
  ValidationData validation_data{};
  int verbose = 0;
  std::filesystem::path resume_from{};
  /// Distributed policies: every rank passes the same full data (and validation data) and fit
  /// shards it: each global batch of batch_size rows, drawn as one process draws it, is split
  /// by rank. Ignored by local policies.
  bool replicated = false;
  /// Distributed policies: each rank keeps the optimizer state of its shard of the parameters
  /// only (ZeRO stage 1; see Data-parallel training). Ignored by local policies.
  bool shard_optimizer_state = false;
  /// Distributed policies: gradients are all-reduced in buckets of consecutive layers holding
  /// at least this many bytes (0: one bucket per layer; see Data-parallel training).
  std::size_t bucket_bytes = 0;
  /// Replicated mode or one process: each global batch's gradient is summed from this many
  /// fixed blocks in a fixed order, so the weights do not depend on the number of ranks (0:
  /// off; see Data-parallel training).
  index_t reproducible_blocks = 0;
};

namespace detail {

/// The option checks fit runs before touching the model.
inline void check_fit_options(std::string_view where, const FitOptions& o) {
  auto fail = [&](const std::string& what) {
    throw invalid_argument(std::string(where) + ": expected " + what);
  };
  if (o.epochs < 0) fail("epochs >= 0, found " + std::to_string(o.epochs));
  if (o.batch_size < 1) fail("batch_size >= 1, found " + std::to_string(o.batch_size));
  if (!(o.validation_split >= 0 && o.validation_split < 1)) {
    fail("validation_split in [0, 1), found " + std::to_string(o.validation_split));
  }
  if (o.validation_split > 0 && !o.validation_data.empty()) {
    fail("validation_split or validation_data, found both");
  }
  if (o.verbose < 0 || o.verbose > 2) fail("verbose 0, 1 or 2, found " + std::to_string(o.verbose));
  if (o.reproducible_blocks < 0) {
    fail("reproducible_blocks >= 0 (0: off), found " + std::to_string(o.reproducible_blocks));
  }
  if (o.reproducible_blocks > 0 && o.shard_optimizer_state) {
    fail("reproducible_blocks or shard_optimizer_state, found both (the blocked sum gives every "
         "rank the whole gradient; sharding would reduce-scatter it)");
  }
}

/// A resumed fit must cut the same batches as the fit that wrote the checkpoint (`was`).
inline void check_resume(const FitParams& was, const FitParams& now) {
  auto fail = [](const std::string& what, const std::string& expected, const std::string& found) {
    throw invalid_argument("Sequential.fit (resume_from): expected " + what + " " + expected +
                           " (as in the fit that wrote the checkpoint), found " + found +
                           "; other settings would not continue the same run");
  };
  if (was.seed != now.seed) fail("seed", std::to_string(was.seed), std::to_string(now.seed));
  if (was.batch_size != now.batch_size) {
    fail("batch_size", std::to_string(was.batch_size), std::to_string(now.batch_size));
  }
  if (was.shuffle != now.shuffle) {
    fail("shuffle", was.shuffle ? "true" : "false", now.shuffle ? "true" : "false");
  }
  if (!(was.validation_split == now.validation_split) ||
      was.validation_data != now.validation_data) {
    fail("validation_split " + std::to_string(was.validation_split) + " and validation_data",
         was.validation_data ? "given" : "not given",
         std::to_string(now.validation_split) + " and " +
             (now.validation_data ? "given" : "not given"));
  }
  if (was.samples != now.samples) {
    fail("training rows", std::to_string(was.samples), std::to_string(now.samples));
  }
  if (was.reproducible_blocks != now.reproducible_blocks) {
    fail("reproducible_blocks", std::to_string(was.reproducible_blocks),
         std::to_string(now.reproducible_blocks));
  }
  if (was.data_fingerprint != 0 && was.fingerprint_scheme == now.fingerprint_scheme &&
      was.data_fingerprint != now.data_fingerprint) {
    fail("the training rows", "with fingerprint " + std::to_string(was.data_fingerprint),
         "other rows of the same shape (fingerprint " + std::to_string(now.data_fingerprint) + ")");
  }
}

}  // namespace detail
}  // namespace onelearn::nn
