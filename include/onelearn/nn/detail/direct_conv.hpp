#pragma once
// Direct kernels of a stride-1 convolution whose output has the input's size (kh - 1 = pad_top +
// pad_bottom and kw - 1 = pad_left + pad_right, dilation included: the "same" 3x3 / pad 1 case),
// used by Conv2D instead of im2col + GEMM for that geometry (nn/layers/conv2d.hpp has the
// measurements).
//
// The trick: each channel is copied once into a zero-bordered plane of width Wp = W + (kw-1)·dw
// (rows of the padded image one after the other, followed by a zero tail). Output position
// (h, w) is then computed at flat position q = h·Wp + w, and kernel tap (c, i, j) reads the
// plane of channel c at q + i·dh·Wp + j·dw: every tap is one shifted, contiguous run of the
// same buffer, so a block of consecutive q is a plain (unaligned) vector load per tap. There is
// no im2col matrix and no packing: the image planes and the kernel stay in L1. The Wp - W
// positions of each row past the image width are computed and thrown away (2 of 16 for a 14
// wide image): cheaper than the copies they avoid.
//
// - correlate: out[o, q] = Σ_t w[o, t] in[q + offset_t] for every q of the padded rows, blocks
//   of 4 outputs x (6 or 3) packets of q held in registers over all taps. Forward is
//   correlate over the padded input; the input gradient is correlate over the padded output
//   gradient with the kernel flipped and its two channel axes swapped (a "full" correlation).
// - weight_gradient: dW[f, t] = Σ_n Σ_q dz_n[f, q] x_n[q + offset_t], the output gradient in
//   the same padded-width layout (zero on the thrown-away positions), blocks of (8 or 4)
//   filters x 3 taps, vector partial sums over all samples of a chunk, reduced at the end.
//
// Vector code through Eigen's packet primitives (pset1, ploadu, pmadd, predux), so the same
// source is AVX-512, AVX2, SSE or NEON code; sums are in a fixed order (deterministic).

#include <Eigen/Core>

#include <algorithm>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/nn/tensor.hpp"

namespace onelearn::nn::detail {

template <class T>
struct DirectConv {
  using Packet = typename Eigen::internal::packet_traits<T>::type;
  static constexpr index_t lanes = Eigen::internal::unpacket_traits<Packet>::size;
  // Register blocking: accumulators + the loaded operands must fit the vector registers.
  static constexpr bool wide = EIGEN_ARCH_DEFAULT_NUMBER_OF_REGISTERS >= 32;
  static constexpr index_t out_block = 4;           ///< correlate: outputs per block
  static constexpr int q_packets = wide ? 6 : 3;    ///< correlate: packets of q per block
  static constexpr index_t filter_block = wide ? 8 : 4;  ///< weight_gradient: filters per block
  static constexpr index_t tap_block = 3;                ///< weight_gradient: taps per block

  /// Padded plane of an H x W image for a kh x kw window with dilation (dh, dw): its width,
  /// and its length (rows + the zero tail the last vector blocks read past the rows).
  static index_t plane_width(index_t W, index_t kw, index_t dw) { return W + (kw - 1) * dw; }
  static index_t plane_size(index_t H, index_t W, index_t kh, index_t kw, index_t dh,
                            index_t dw) {
    const index_t Wp = plane_width(W, kw, dw), Hp = H + (kh - 1) * dh;
    return round_up(Hp * Wp + lanes + (kw - 1) * dw);
  }
  /// Positions computed per plane: H rows of Wp, rounded up to whole packets.
  static index_t positions(index_t H, index_t Wp) { return round_up(H * Wp); }
  static index_t round_up(index_t n) { return (n + lanes - 1) / lanes * lanes; }
};

/// Keeps a loaded packet in a register. Without it GCC folds the load of a packet used by
/// several FMAs into each of them (memory operands): weight_gradient_block then issued 27 loads
/// per 24 FMAs instead of 11 and was load-bound (measured: the cnn workload's second conv's
/// backward took 2,840 µs per batch with it folded, 1,910 µs with this).
template <class Packet>
inline void keep_in_register(Packet& p) {
#if defined(__GNUC__) && defined(EIGEN_VECTORIZE_AVX512)
  __asm__("" : "+v"(p));
#elif defined(__GNUC__) && defined(EIGEN_VECTORIZE_SSE)
  __asm__("" : "+x"(p));
#else
  (void)p;
#endif
}

/// Copies `planes` H x W planes into the image positions of padded planes (width Wp, length S,
/// the image at row `top`, column `left`). The other positions are left zero: callers keep
/// them zero (a buffer that only ever receives images at the same positions stays zero there
/// from its allocation, and zeroing the border here per row was a fifth of this pass).
/// Rows go in whole packets: a row's last packet runs past W, over the border (zeroed again
/// right after: the Wp - W cells between this row's image and the next's) and into the next
/// row's image, which is copied after it; past the last row all the cells it wrote are
/// padding, zeroed again. Rows whose packets would read past the planes are copied as Eigen
/// expressions. (Copying 14- or 28-wide rows as Eigen expressions was mostly scalar: 7% of bench/'s
/// cnn at batch 64.) S must leave a packet after the last row (plane_size does).
template <class T>
void pad_planes(const T* x, index_t planes, index_t H, index_t W, index_t top, index_t left,
                index_t Wp, index_t S, T* out) {
  using namespace Eigen::internal;
  using Packet = typename DirectConv<T>::Packet;
  constexpr index_t L = DirectConv<T>::lanes;
  using Row = Eigen::Array<T, Eigen::Dynamic, 1>;
  const index_t span = (W + L - 1) / L * L;
  const T* const x_end = x + planes * H * W;
  for (index_t p = 0; p < planes; ++p) {
    const T* in = x + p * H * W;
    T* image = out + p * S + top * Wp + left;
    for (index_t h = 0; h < H; ++h) {
      const T* src = in + h * W;
      T* dst = image + h * Wp;
      if (src + span > x_end) {
        Eigen::Map<Row>(dst, W) = Eigen::Map<const Row>(src, W);
      } else {
        for (index_t k = 0; k < span; k += L) pstoreu(dst + k, ploadu<Packet>(src + k));
      }
      // After every row, also a copied one: an earlier row's packets may have reached here
      // (rows narrower than a packet).
      std::fill(dst + W, dst + (h + 1 < H ? std::min(span, Wp) : span), T(0));
    }
  }
}

/// A buffer of `count` padded planes of length S whose non-image positions are zero: grows
/// (zero-filled), never shrinks, and is only written at image positions (pad_planes), so its
/// borders stay zero without being rewritten.
template <class T>
T* padded_buffer(AlignedVector<T>& buffer, index_t count, index_t S) {
  const auto size = static_cast<std::size_t>(count * S);
  if (buffer.size() < size) buffer.resize(size, T(0));
  return buffer.data();
}

/// The kernel (O, taps) row-major, packed for correlate: blocks of 4 outputs, tap-major
/// ([block][tap][4]), zeros for the missing outputs of the last block.
template <class T>
void pack_correlate_weights(const T* w, index_t O, index_t taps, std::vector<T>& packed) {
  constexpr index_t ob = DirectConv<T>::out_block;
  const index_t blocks = (O + ob - 1) / ob;
  packed.assign(static_cast<std::size_t>(blocks * taps * ob), T(0));
  for (index_t o = 0; o < O; ++o) {
    T* dst = packed.data() + (o / ob) * taps * ob + o % ob;
    for (index_t t = 0; t < taps; ++t) dst[t * ob] = w[o * taps + t];
  }
}

template <class T, int QP>
void correlate_block(const T* in, const index_t* offsets, index_t taps, const T* w, T* out,
                     index_t ld) {
  using DC = DirectConv<T>;
  using Packet = typename DC::Packet;
  constexpr index_t L = DC::lanes;
  using namespace Eigen::internal;
  Packet acc[DC::out_block][QP];
  for (auto& row : acc) {
    for (Packet& a : row) a = pset1<Packet>(T(0));
  }
  for (index_t t = 0; t < taps; ++t) {
    const T* src = in + offsets[t];
    Packet x[QP];
    for (int v = 0; v < QP; ++v) x[v] = ploadu<Packet>(src + v * L);
    for (index_t o = 0; o < DC::out_block; ++o) {
      const Packet wv = pset1<Packet>(w[t * DC::out_block + o]);
      for (int v = 0; v < QP; ++v) acc[o][v] = pmadd(wv, x[v], acc[o][v]);
    }
  }
  for (index_t o = 0; o < DC::out_block; ++o) {
    for (int v = 0; v < QP; ++v) pstoreu(out + o * ld + v * L, acc[o][v]);
  }
}

/// out[o, q] = Σ_t w[o, t] in[q + offsets[t]] for q < positions (a multiple of the packet
/// size) and every o of the packed blocks (pack_correlate_weights); out has row stride ld and
/// a row per packed output (the last block's padding rows included).
template <class T>
void correlate(const T* in, const std::vector<index_t>& offsets, const std::vector<T>& packed,
               index_t positions, T* out, index_t ld) {
  using DC = DirectConv<T>;
  constexpr index_t L = DC::lanes, ob = DC::out_block;
  const auto taps = static_cast<index_t>(offsets.size());
  const index_t blocks = static_cast<index_t>(packed.size()) / (taps * ob);
  // The packets split into blocks of nearly equal size (at most q_packets): 14 packets run as
  // 5 + 5 + 4, not 6 + 6 + 2, whose last block would load 6 operands for 8 FMAs.
  const index_t packets = positions / L;
  const index_t block_count = (packets + DC::q_packets - 1) / DC::q_packets;
  for (index_t b = 0; b < blocks; ++b) {
    const T* w = packed.data() + b * taps * ob;
    T* o = out + b * ob * ld;
    index_t q = 0;
    for (index_t k = 0; k < block_count; ++k) {
      const index_t size = packets / block_count + (k < packets % block_count ? 1 : 0);
      switch (size) {
        case 1: correlate_block<T, 1>(in + q, offsets.data(), taps, w, o + q, ld); break;
        case 2: correlate_block<T, 2>(in + q, offsets.data(), taps, w, o + q, ld); break;
        case 3: correlate_block<T, 3>(in + q, offsets.data(), taps, w, o + q, ld); break;
        case 4: correlate_block<T, 4>(in + q, offsets.data(), taps, w, o + q, ld); break;
        case 5: correlate_block<T, 5>(in + q, offsets.data(), taps, w, o + q, ld); break;
        default: correlate_block<T, DC::q_packets>(in + q, offsets.data(), taps, w, o + q, ld);
      }
      q += size * L;
    }
  }
}

/// result[f, t] = Σ_{n < samples} Σ_{q < positions} dz[n·dz_sample + f_off[f] + q]
///                                                  · x[n·x_sample + t_off[t] + q]
/// for one block of filters x taps.
template <class T>
void weight_gradient_block(const T* dz, const index_t* f_off, index_t dz_sample, const T* x,
                           const index_t* t_off, index_t x_sample, index_t samples,
                           index_t positions, T* result) {
  using DC = DirectConv<T>;
  using Packet = typename DC::Packet;
  constexpr index_t L = DC::lanes, FB = DC::filter_block, TB = DC::tap_block;
  using namespace Eigen::internal;
  Packet acc[FB][TB];
  for (auto& row : acc) {
    for (Packet& a : row) a = pset1<Packet>(T(0));
  }
  for (index_t n = 0; n < samples; ++n) {
    const T* d = dz + n * dz_sample;
    const T* xs = x + n * x_sample;
    for (index_t q = 0; q < positions; q += L) {
      Packet xv[TB];
      for (index_t t = 0; t < TB; ++t) xv[t] = ploadu<Packet>(xs + t_off[t] + q);
      for (index_t f = 0; f < FB; ++f) {
        Packet dv = ploadu<Packet>(d + f_off[f] + q);
        keep_in_register(dv);
        for (index_t t = 0; t < TB; ++t) acc[f][t] = pmadd(dv, xv[t], acc[f][t]);
      }
    }
  }
  for (index_t f = 0; f < FB; ++f) {
    for (index_t t = 0; t < TB; ++t) result[f * TB + t] = predux(acc[f][t]);
  }
}

/// dW[f, t] = Σ_n Σ_q dz_n[f, q] x_n[q + offsets[t]] (written, not added), for F filters whose
/// rows start at dz + n·dz_sample + f·dz_row + dz_shift, and x_n = x + n·x_sample.
template <class T>
void weight_gradient(const T* dz, index_t F, index_t dz_row, index_t dz_shift,
                     index_t dz_sample, const T* x, index_t x_sample,
                     const std::vector<index_t>& offsets, index_t samples, index_t positions,
                     T* dW) {
  using DC = DirectConv<T>;
  constexpr index_t FB = DC::filter_block, TB = DC::tap_block;
  const auto taps = static_cast<index_t>(offsets.size());
  index_t f_off[FB], t_off[TB];
  T result[FB * TB];
  // A partial block repeats its last filter / tap (valid memory); those results are dropped.
  for (index_t f0 = 0; f0 < F; f0 += FB) {
    for (index_t f = 0; f < FB; ++f) f_off[f] = std::min(f0 + f, F - 1) * dz_row + dz_shift;
    for (index_t t0 = 0; t0 < taps; t0 += TB) {
      for (index_t t = 0; t < TB; ++t) t_off[t] = offsets[std::min(t0 + t, taps - 1)];
      weight_gradient_block(dz, f_off, dz_sample, x, t_off, x_sample, samples, positions,
                            result);
      for (index_t f = f0; f < std::min(f0 + FB, F); ++f) {
        for (index_t t = t0; t < std::min(t0 + TB, taps); ++t) {
          dW[f * taps + t] = result[(f - f0) * TB + (t - t0)];
        }
      }
    }
  }
}

}  // namespace onelearn::nn::detail
