#pragma once
// The random numbers of scikit-learn's trees and forests, reproduced so that the same
// random_state gives the same trees as there, ties between features and bootstrap samples
// included:
// - NumpyRandomState: numpy.random.RandomState(seed) (Mersenne Twister seeded with
//   init_genrand, which std::mt19937 also uses) and its legacy randint(low, high) for 64-bit
//   integers below 2^32 (a 32-bit draw masked to the next power of two, redrawn when too large);
// - TreeRandom: sklearn/utils/_random.pxd's our_rand_r (a 32-bit xorshift) and rand_int /
//   rand_uniform on top of it, seeded as scikit-learn's Splitter does:
//   RandomState(random_state).randint(0, 2^31 - 1).

#include <cstdint>
#include <random>

#include "onelearn/core/types.hpp"

namespace onelearn::tree::detail {

class NumpyRandomState {
 public:
  explicit NumpyRandomState(std::uint32_t seed) : engine_(seed) {}

  /// Uniform in [low, high), for high - low <= 2^32.
  std::int64_t randint(std::int64_t low, std::int64_t high) {
    const auto range = static_cast<std::uint32_t>(high - low - 1);
    std::uint32_t mask = range;
    for (int shift = 1; shift < 32; shift *= 2) mask |= mask >> shift;
    std::uint32_t value = 0;
    do {
      value = static_cast<std::uint32_t>(engine_()) & mask;
    } while (value > range);
    return low + value;
  }

 private:
  std::mt19937 engine_;
};

inline constexpr std::uint32_t rand_r_max = 0x7FFFFFFF;  ///< scikit-learn's RAND_R_MAX

class TreeRandom {
 public:
  /// The generator of a tree fitted with this random_state.
  static TreeRandom for_random_state(std::uint32_t random_state) {
    NumpyRandomState numpy(random_state);
    return TreeRandom(static_cast<std::uint32_t>(numpy.randint(0, rand_r_max)));
  }

  explicit TreeRandom(std::uint32_t state) : state_(state) {}

  std::uint32_t next() {
    if (state_ == 0) state_ = 1;
    state_ ^= state_ << 13;
    state_ ^= state_ >> 17;
    state_ ^= state_ << 5;
    return state_ % (rand_r_max + 1u);
  }
  /// Uniform in [low, high).
  index_t below(index_t low, index_t high) {
    return low + static_cast<index_t>(next() % static_cast<std::uint32_t>(high - low));
  }
  /// Uniform in [low, high].
  double uniform(double low, double high) {
    return (high - low) * static_cast<double>(next()) / static_cast<double>(rand_r_max) + low;
  }

 private:
  std::uint32_t state_;
};

}  // namespace onelearn::tree::detail
