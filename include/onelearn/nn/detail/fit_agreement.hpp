#pragma once
// What a distributed Sequential.fit agrees on before its first step, written apart from the fit
// loop:
//   agree_on_fit_settings      FitOptions (all but verbose), the optimizer (name, learning rate,
//                              hyper-parameters) and the loss, compared across the ranks in one
//                              small all-reduce (exec's check_same_values);
//   fingerprint_training_rows  FitParams::data_fingerprint: the hash of the training rows a
//                              checkpoint records and a resumed fit compares.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <Eigen/Core>

#include "onelearn/base/agreement.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/nn/detail/data_fingerprint.hpp"
#include "onelearn/nn/fit_options.hpp"
#include "onelearn/nn/losses.hpp"
#include "onelearn/nn/optimizers.hpp"

namespace onelearn::nn::detail {

/// The options every rank must pass alike, which a distributed fit compares first (a rank with
/// more epochs would wait in the next all-reduce for ranks that have returned). verbose is left
/// out on purpose: the progress bar prints on rank 0 only, so `verbose = rank == 0` is fine.
/// validation_data and resume_from are each rank's own rows and files: only whether they are
/// given must agree (the resumed checkpoints are compared once read).
inline onelearn::detail::NamedValues fit_agreement(const FitOptions& o) {
  onelearn::detail::NamedValues v;
  v.add("epochs", o.epochs);
  v.add("batch_size", o.batch_size);
  v.add("shuffle", o.shuffle);
  v.add("seed", o.seed);
  v.add("validation_split", o.validation_split);
  v.add("validation_data", o.validation_data.empty() ? "not given" : "given");
  v.add("resume_from", o.resume_from.empty() ? "not given" : "given");
  v.add("replicated", o.replicated);
  v.add("shard_optimizer_state", o.shard_optimizer_state);
  v.add("bucket_bytes", o.bucket_bytes);
  v.add("reproducible_blocks", o.reproducible_blocks);
  return v;
}

/// Raises invalid_argument on every rank, naming the first setting that differs, unless every
/// rank passes the same options, optimizer and loss (a rank with more epochs or another
/// momentum would otherwise wait in an all-reduce, or train another model).
template <exec::ExecutionPolicy Exec, class T>
void agree_on_fit_settings(std::string_view where, const Exec& exec, const FitOptions& options,
                           const Optimizer<T>& optimizer, const Loss<T>& loss) {
  onelearn::detail::NamedValues values = fit_agreement(options);
  values.add("optimizer", std::string(optimizer.name()));
  values.add("learning_rate", optimizer.learning_rate());
  for (const auto& [name, value] : optimizer.hyperparameters()) {
    values.add(std::string(optimizer.name()) + "." + std::string(name), value);
  }
  values.add("loss", std::string(loss.name()));
  exec.check_same_values(where, values.values());
}

/// The fingerprint of the training rows (X's and y's first `rows`): this rank's under a local
/// policy; every rank's, combined in rank order, per-rank; and under `replicated`, the one
/// copy, which every rank must then hold alike (compared: ranks given different "replicated"
/// data would otherwise train on a mixture without a word).
template <exec::ExecutionPolicy Exec, class T, class DY>
std::uint64_t fingerprint_training_rows(std::string_view where, const Exec& exec,
                                        const MatrixRef<T>& X, const Eigen::MatrixBase<DY>& y,
                                        index_t rows, bool replicated, int scheme) {
  const std::uint64_t mine = training_fingerprint(X, y, rows, scheme);
  if constexpr (!Exec::is_distributed) {
    return mine;
  } else {
    if (replicated) {
      onelearn::detail::NamedValues fingerprint;
      fingerprint.add("the replicated training rows (their fingerprint)", mine);
      exec.check_same_values(where, fingerprint.values());
      return mine;
    }
    const auto word = static_cast<std::int64_t>(mine);
    Fingerprint all;
    for (const std::int64_t h : exec.allgatherv(std::span<const std::int64_t>(&word, 1))) {
      all.add(static_cast<std::uint64_t>(h));
    }
    return all.value();
  }
}

}  // namespace onelearn::nn::detail
