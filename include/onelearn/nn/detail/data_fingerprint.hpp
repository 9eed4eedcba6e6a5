#pragma once
// The fingerprint of a fit's training rows, which a checkpoint records and a resumed fit
// compares: a 64-bit hash of the values' bits (X's first `rows` rows, then y's), word by word.
// It tells other data from the same data, not an adversary's: a multiply-rotate mix (the
// finaliser of MurmurHash3-style hashes) at several GB/s, so hashing costs far less than an
// epoch.

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

/// The hash of X's and y's first `rows` rows (with their shapes).
template <class DX, class DY>
std::uint64_t training_fingerprint(const Eigen::MatrixBase<DX>& X, const Eigen::MatrixBase<DY>& y,
                                   index_t rows) {
  Fingerprint f;
  f.add(static_cast<std::uint64_t>(rows));
  f.add(static_cast<std::uint64_t>(X.cols()));
  f.add(static_cast<std::uint64_t>(y.cols()));
  for (index_t j = 0; j < X.cols(); ++j) {
    for (index_t i = 0; i < rows; ++i) f.add_value(X(i, j));
  }
  for (index_t j = 0; j < y.cols(); ++j) {
    for (index_t i = 0; i < rows; ++i) f.add_value(y(i, j));
  }
  return f.value();
}

}  // namespace onelearn::nn::detail
