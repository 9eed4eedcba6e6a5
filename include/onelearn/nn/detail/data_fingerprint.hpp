#pragma once
// The fingerprint of a fit's training rows, which a checkpoint records and a resumed fit
// compares: a 64-bit hash of the values' bits (X's first `rows` rows, then y's). It tells other
// data from the same data, not an adversary's: a multiply-rotate mix (the finaliser of
// MurmurHash3-style hashes).
//
// Two schemes, both kept: a checkpoint says which one its fingerprint is (FitParams::
// fingerprint_scheme), and a fit resumed from it computes that one.
//   1  (checkpoints written before 2026-11-29) one chain of mixes over X column by column: each
//      mix waits for the previous one, and a row-major X is read with a row's stride: 72 ms for
//      bench/'s mlp rows (20,000 x 784 floats), a quarter of its one-epoch fit.
//   2  eight chains, word k of X (row by row, as stored) then of y going to chain k mod 8,
//      mixed together at the end: the chains' multiplies overlap (4.3 ms for the same rows).

#include <bit>
#include <cstdint>
#include <type_traits>

#include <Eigen/Core>

#include "onelearn/core/types.hpp"

namespace onelearn::nn::detail {

class Fingerprint {
 public:
  void add(std::uint64_t word) noexcept {
    hash_ ^= word * 0x9e3779b97f4a7c15ULL;
    hash_ = std::rotl(hash_, 31) * 0xbf58476d1ce4e5b9ULL;
  }
  template <class S>
  void add_value(S value) noexcept {
    if constexpr (std::is_floating_point_v<S>) {
      add(std::bit_cast<std::uint64_t>(static_cast<double>(value)));  // float: exact as double
    } else {
      add(static_cast<std::uint64_t>(static_cast<std::int64_t>(value)));
    }
  }
  /// Non-zero (0 means "not recorded" in a checkpoint).
  [[nodiscard]] std::uint64_t value() const noexcept { return hash_ == 0 ? 1 : hash_; }

 private:
  std::uint64_t hash_ = 0x243f6a8885a308d3ULL;
};

/// The scheme new fits record.
inline constexpr int current_fingerprint_scheme = 2;

/// The hash of X's and y's first `rows` rows (with their shapes), by `scheme` (1 or 2).
template <class DX, class DY>
std::uint64_t training_fingerprint(const Eigen::MatrixBase<DX>& X, const Eigen::MatrixBase<DY>& y,
                                   index_t rows, int scheme = current_fingerprint_scheme) {
  Fingerprint f;
  f.add(static_cast<std::uint64_t>(rows));
  f.add(static_cast<std::uint64_t>(X.cols()));
  f.add(static_cast<std::uint64_t>(y.cols()));
  if (scheme == 1) {
    for (index_t j = 0; j < X.cols(); ++j) {
      for (index_t i = 0; i < rows; ++i) f.add_value(X(i, j));
    }
    for (index_t j = 0; j < y.cols(); ++j) {
      for (index_t i = 0; i < rows; ++i) f.add_value(y(i, j));
    }
    return f.value();
  }
  constexpr int chains = 8;
  Fingerprint chain[chains];
  int next = 0;
  const auto add = [&](auto value) {
    chain[next].add_value(value);
    next = (next + 1) % chains;
  };
  // Row by row, whatever the storage order (a row-major X, the library's, is read as stored).
  for (index_t i = 0; i < rows; ++i) {
    index_t j = 0;
    for (; next == 0 && j + chains <= X.cols(); j += chains) {
      for (int c = 0; c < chains; ++c) chain[c].add_value(X(i, j + c));
    }
    for (; j < X.cols(); ++j) add(X(i, j));
  }
  for (index_t i = 0; i < rows; ++i) {
    for (index_t j = 0; j < y.cols(); ++j) add(y(i, j));
  }
  for (const Fingerprint& c : chain) f.add(c.value());
  return f.value();
}

}  // namespace onelearn::nn::detail
