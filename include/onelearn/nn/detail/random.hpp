#pragma once
// Random numbers for the networks: initial weights, dropout masks and shuffling.
//
// Everything is derived from splitmix64 (Steele, Lea and Flood 2014) with explicit formulas for
// the uniform, normal and bounded-integer draws, instead of <random>'s distributions, whose
// algorithms the standard leaves to each library: the same seed gives the same weights, masks
// and batch order with libstdc++, libc++ and MSVC, and on every MPI rank. Streams are keyed by
// (seed, stream index), so a layer's dropout mask for its n-th call, or epoch e's permutation,
// can be recomputed from the seed alone (what a checkpoint needs to resume exactly).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::nn::detail {

constexpr std::uint64_t golden_gamma = 0x9E3779B97F4A7C15ULL;

/// splitmix64's output function: a bijective 64-bit mixer.
constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// A seed for stream `stream` of `seed` (layer i of a model, epoch e of a fit, ...).
constexpr std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream) noexcept {
  return mix64(mix64(seed + golden_gamma) ^ (stream * 0xD1B54A32D192ED03ULL + golden_gamma));
}

/// splitmix64 as a sequential generator.
class SplitMix {
 public:
  explicit constexpr SplitMix(std::uint64_t seed) noexcept : state_(seed) {}

  constexpr std::uint64_t next() noexcept {
    state_ += golden_gamma;
    return mix64(state_);
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Standard normal by Box-Muller (one value per call; the second is discarded for simplicity).
  double normal() noexcept {
    const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  /// Standard normal truncated to [-2, 2] by rejection, as Keras's truncated_normal.
  double truncated_normal() noexcept {
    for (;;) {
      const double z = normal();
      if (std::abs(z) <= 2.0) return z;
    }
  }
  /// Uniform integer in [0, n), n > 0 (modulo bias below 2^-40 for n < 2^24: negligible).
  std::uint64_t below(std::uint64_t n) noexcept { return next() % n; }

 private:
  std::uint64_t state_;
};

/// A permutation of 0..n-1 by Fisher-Yates, written into `out` (no allocation).
inline void permutation(std::uint64_t seed, std::span<index_t> out) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<index_t>(i);
  SplitMix gen(seed);
  for (std::size_t i = out.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(gen.below(i));
    std::swap(out[i - 1], out[j]);
  }
}

/// Keras's kernel initializers (VarianceScaling): fan_in/fan_out of a Dense kernel are its
/// input and output widths.
enum class Initializer { glorot_uniform, glorot_normal, he_uniform, he_normal, zeros };

inline Initializer parse_initializer(std::string_view where, std::string_view name) {
  if (name == "glorot_uniform") return Initializer::glorot_uniform;
  if (name == "glorot_normal") return Initializer::glorot_normal;
  if (name == "he_uniform") return Initializer::he_uniform;
  if (name == "he_normal") return Initializer::he_normal;
  if (name == "zeros") return Initializer::zeros;
  throw invalid_argument(std::string(where) +
                         ": expected kernel_initializer one of glorot_uniform, glorot_normal, "
                         "he_uniform, he_normal, zeros; found '" +
                         std::string(name) + "'");
}

/// Fills `out` as Keras does: uniform on [-limit, limit] with limit = sqrt(3 scale / n), or a
/// normal truncated at two standard deviations with stddev sqrt(scale / n) / 0.8796 (the
/// truncation's correction), where scale is 1 (Glorot) or 2 (He) and n is (fan_in + fan_out)/2
/// (Glorot) or fan_in (He).
template <class T>
void initialize(Initializer kind, index_t fan_in, index_t fan_out, std::uint64_t seed,
                std::span<T> out) {
  if (kind == Initializer::zeros) {
    for (T& v : out) v = T(0);
    return;
  }
  const bool glorot = kind == Initializer::glorot_uniform || kind == Initializer::glorot_normal;
  const double n =
      glorot ? 0.5 * static_cast<double>(fan_in + fan_out) : static_cast<double>(fan_in);
  const double scale = (glorot ? 1.0 : 2.0) / std::max(n, 1.0);
  SplitMix gen(seed);
  if (kind == Initializer::glorot_uniform || kind == Initializer::he_uniform) {
    const double limit = std::sqrt(3.0 * scale);
    for (T& v : out) v = static_cast<T>(limit * (2.0 * gen.uniform() - 1.0));
  } else {
    const double stddev = std::sqrt(scale) / 0.87962566103423978;
    for (T& v : out) v = static_cast<T>(stddev * gen.truncated_normal());
  }
}

}  // namespace onelearn::nn::detail
