#pragma once
// The "same" stride-1 convolution of direct_conv.hpp (the same zero-bordered planes and tap
// offsets), vectorised across filters instead of across positions. The ONNX executor's Conv
// takes it when the filter count is a whole number of packets (onnx/ops/planar.hpp).
//
// Why: direct_conv.hpp's correlate computes whole padded rows, W + kw - 1 positions a row
// rounded up to packets, so for a 14-wide image and a 3x3 kernel 16 positions are computed for
// 14 kept (an eighth of the multiply-adds thrown away), and a second pass then adds the bias,
// applies the Relu and pools the rows it stored (copy_out_pooled: 12% of bench/'s cnn at batch
// 64). Here a block of output positions (ROWS rows x R columns) times FV packets of filters
// stays in registers over all taps: each tap loads FV packets of the kernel (packed tap-major,
// a tap's filters contiguous) and broadcasts one input value per position, so only the image's
// positions are computed; a fused bias, Relu and 2x2 max pool act on the registers, and only
// the block's final values are stored.
//
// Same bits as correlate followed by copy_out_rows or copy_out_pooled: each output is the sum
// over the taps in the same order, one pmadd at a time from zero (x·w and w·x are the same
// product), then + bias (+0 without one, as there: -0 becomes +0 in both), relu_value's rule,
// and max_pool_2x2_row's selects in its order. tests/unit_onnx/test_onnx.cpp compares the two
// paths bit for bit.

#include <Eigen/Core>

#include <algorithm>
#include <cstring>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/nn/detail/direct_conv.hpp"

namespace onelearn::nn::detail {

namespace filter_vector {

/// candidate > kept ? candidate : kept, lane by lane (kept where either is NaN, and on ties):
/// max_pool_2x2_row's select. Written on the compiler's vector type of the packet's size, which
/// GCC compiles to one MAXPS/MAXPD on x86 (exactly this rule, the candidate first); Eigen's
/// pselect of a comparison's mask took four instructions on AVX-512 and, with the Relu, was a
/// third of the first Conv of bench/'s cnn.
template <class T, class Packet>
Packet greater_or_kept(const Packet& candidate, const Packet& kept) {
  if constexpr (sizeof(Packet) == sizeof(T)) {  // no vectorisation: the packet is a T
    return candidate > kept ? candidate : kept;
  } else {
    typedef T Vector __attribute__((vector_size(sizeof(Packet))));
    Vector c, k;
    std::memcpy(&c, &candidate, sizeof c);
    std::memcpy(&k, &kept, sizeof k);
    const Vector m = c > k ? c : k;
    Packet out;
    std::memcpy(&out, &m, sizeof out);
    return out;
  }
}

}  // namespace filter_vector

template <class T>
struct FilterVectorConv {
  using Packet = typename DirectConv<T>::Packet;
  static constexpr index_t lanes = DirectConv<T>::lanes;
  /// Accumulators a block may hold: the rest of the vector registers take the kernel's packets
  /// and the broadcast value.
  static constexpr index_t accumulators = DirectConv<T>::wide ? 24 : 12;
  static constexpr index_t max_columns = 12;  ///< columns a block may hold (instantiations)

  /// Whether `filters` is a whole number of packets (this kernel's case).
  static bool applies(index_t filters) { return filters > 0 && filters % lanes == 0; }
};

/// packed[t * F + f] = w[f * taps + t]: the kernel (F, taps) row-major, tap-major.
template <class T>
void pack_filter_major(const T* w, index_t F, index_t taps, std::vector<T>& packed) {
  packed.resize(static_cast<std::size_t>(F * taps));
  for (index_t f = 0; f < F; ++f) {
    for (index_t t = 0; t < taps; ++t) packed[static_cast<std::size_t>(t * F + f)] = w[f * taps + t];
  }
}

/// Where a sample's outputs go and what happens to the sums first.
template <class T>
struct FilterVectorOutput {
  const T* bias = nullptr;  ///< F values (zeros when the node has no bias: not null)
  bool relu = false;        ///< relu_value(sum + bias)
  bool pool = false;        ///< then the first maximum of each 2x2 / stride 2 window
  index_t filters = 0;      ///< F
  index_t height = 0;       ///< y's rows per filter (H, or H / 2 pooled)
  index_t width = 0;        ///< y's columns per filter (W, or W / 2 pooled)
  T* tile = nullptr;        ///< scratch: height x width x F (a position's filters together)
  T* y = nullptr;           ///< one sample: F x height x width
};

/// One block: output rows h .. h + ROWS - 1, columns w0 .. w0 + R - 1, filters f0 .. f0 + FV
/// packets; `in` points at position (h, w0) of the sample's padded planes (row stride Wp).
/// ROWS = 2 with out.pool (R even): each 2x2 window pooled in registers.
template <class T, int ROWS, int R, int FV>
void filter_vector_block(const T* in, index_t Wp, const index_t* offsets, index_t taps,
                         const T* packed, index_t f0, index_t h, index_t w0,
                         const FilterVectorOutput<T>& out) {
  using namespace Eigen::internal;
  using Packet = typename FilterVectorConv<T>::Packet;
  constexpr index_t L = FilterVectorConv<T>::lanes;
  const index_t F = out.filters;
  Packet acc[ROWS][R][FV];
  for (auto& row : acc) {
    for (auto& column : row) {
      for (Packet& a : column) a = pset1<Packet>(T(0));
    }
  }
  const T* weights = packed + f0;
  for (index_t t = 0; t < taps; ++t) {
    // A pointer per row, so that each broadcast is a load at a constant displacement (indexing
    // src[r * Wp + c] made GCC keep an offset per column in registers, half the loop's
    // instructions in the first Conv of bench/'s cnn).
    const T* row[ROWS];
    row[0] = in + offsets[t];
    for (int r = 1; r < ROWS; ++r) row[r] = row[r - 1] + Wp;
    Packet w[FV];
    for (int v = 0; v < FV; ++v) w[v] = ploadu<Packet>(weights + t * F + v * L);
    for (int r = 0; r < ROWS; ++r) {
      for (int c = 0; c < R; ++c) {
        const Packet x = pset1<Packet>(row[r][c]);
        for (int v = 0; v < FV; ++v) acc[r][c][v] = pmadd(x, w[v], acc[r][c][v]);
      }
    }
  }
  const Packet zero = pset1<Packet>(T(0));
  Packet shift[FV];
  for (int v = 0; v < FV; ++v) shift[v] = ploadu<Packet>(out.bias + f0 + v * L);
  const auto prepare = [&](Packet a, int v) {
    a = padd(a, shift[v]);
    // relu_value's rule, lane by lane: 0 < a ? a : 0 (NaN gives 0, -0 gives +0).
    return out.relu ? filter_vector::greater_or_kept<T>(a, zero) : a;
  };
  // The block's values go to the tile, a position's filters together (one store a packet);
  // filter_vector_conv transposes the tile into y's planes at the end.
  const auto store = [&](const Packet& p, int v, index_t position) {
    pstoreu(out.tile + position * F + f0 + v * L, p);
  };
  if constexpr (ROWS == 2) {
    // max_pool_2x2_row's selects, in its order: first maximum of (top left, top right,
    // bottom left, bottom right); a NaN never replaces the value kept.
    const auto greater_or_kept = [](const Packet& candidate, const Packet& kept) {
      return filter_vector::greater_or_kept<T>(candidate, kept);
    };
    for (int c = 0; c < R / 2; ++c) {
      for (int v = 0; v < FV; ++v) {
        Packet m = greater_or_kept(prepare(acc[0][2 * c + 1][v], v), prepare(acc[0][2 * c][v], v));
        m = greater_or_kept(prepare(acc[1][2 * c][v], v), m);
        m = greater_or_kept(prepare(acc[1][2 * c + 1][v], v), m);
        store(m, v, (h / 2) * out.width + w0 / 2 + c);
      }
    }
  } else {
    for (int c = 0; c < R; ++c) {
      for (int v = 0; v < FV; ++v) store(prepare(acc[0][c][v], v), v, h * out.width + w0 + c);
    }
  }
}

namespace filter_vector {

/// filter_vector_block for a run-time R (1 .. max_columns; even when pooling), instantiating
/// only the blocks whose accumulators fit the registers.
template <class T, int ROWS, int FV, int R = 1>
void block_of(index_t columns, const T* in, index_t Wp, const index_t* offsets, index_t taps,
              const T* packed, index_t f0, index_t h, index_t w0,
              const FilterVectorOutput<T>& out) {
  if constexpr (R <= FilterVectorConv<T>::max_columns &&
                ROWS * R * FV <= FilterVectorConv<T>::accumulators) {
    if (columns == R) {
      if constexpr (ROWS == 1 || R % 2 == 0) {
        filter_vector_block<T, ROWS, R, FV>(in, Wp, offsets, taps, packed, f0, h, w0, out);
      }
      return;
    }
    block_of<T, ROWS, FV, R + 1>(columns, in, Wp, offsets, taps, packed, f0, h, w0, out);
  }
}

/// Every block of rows and columns for filters f0 .. f0 + FV packets. Columns are cut into
/// blocks of nearly equal size (14 columns of two packets of filters: 6 + 4 + 4 pooled).
template <class T, int FV>
void filter_group(const T* planes, index_t Wp, const std::vector<index_t>& offsets,
                  const std::vector<T>& packed, index_t H, index_t W, index_t f0,
                  const FilterVectorOutput<T>& out) {
  // A pooled block holds 2 rows and pairs of columns; the rows and columns no window reads
  // (an odd last one) are not computed.
  const index_t step = out.pool ? 2 : 1;
  const index_t unit = out.pool ? 2 : 1;
  const index_t rows = out.pool ? H / 2 * 2 : H;
  const index_t units = (out.pool ? W / 2 * 2 : W) / unit;
  const index_t widest = std::min(FilterVectorConv<T>::max_columns,
                                  FilterVectorConv<T>::accumulators / (step * FV)) / unit;
  const index_t blocks = (units + widest - 1) / widest;
  const auto taps = static_cast<index_t>(offsets.size());
  for (index_t h = 0; h < rows; h += step) {
    index_t w0 = 0;
    for (index_t b = 0; b < blocks; ++b) {
      const index_t columns = (units / blocks + (b < units % blocks ? 1 : 0)) * unit;
      const T* in = planes + h * Wp + w0;
      if (out.pool) {
        block_of<T, 2, FV>(columns, in, Wp, offsets.data(), taps, packed.data(), f0, h, w0, out);
      } else {
        block_of<T, 1, FV>(columns, in, Wp, offsets.data(), taps, packed.data(), f0, h, w0, out);
      }
      w0 += columns;
    }
  }
}

}  // namespace filter_vector

// GCC warns about Eigen's packet types as template arguments (PacketBlock<Packet16f, 16>: the
// alignment attribute of the intrinsic's type is not part of the template argument), which is
// harmless here; Eigen silences the same warning inside its own headers.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
#endif
/// y[f * positions + p] = tile[p * F + f] (F a whole number of packets): blocks of L positions
/// x L filters transposed in registers, the positions left over one by one.
template <class T>
void tile_to_planes(const T* tile, index_t positions, index_t F, T* y) {
  using namespace Eigen::internal;
  using Packet = typename FilterVectorConv<T>::Packet;
  constexpr index_t L = FilterVectorConv<T>::lanes;
  index_t p = 0;
  for (; p + L <= positions; p += L) {
    for (index_t f = 0; f < F; f += L) {
      PacketBlock<Packet, static_cast<int>(L)> block;
      for (index_t i = 0; i < L; ++i) block.packet[i] = ploadu<Packet>(tile + (p + i) * F + f);
      ptranspose(block);
      for (index_t i = 0; i < L; ++i) pstoreu(y + (f + i) * positions + p, block.packet[i]);
    }
  }
  for (; p < positions; ++p) {
    for (index_t f = 0; f < F; ++f) y[f * positions + p] = tile[p * F + f];
  }
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/// One sample: y = the convolution of its padded planes (width Wp; offsets as correlate's) with
/// the kernel packed by pack_filter_major, then out's bias, Relu and pool, into out.y (through
/// out.tile).
/// Needs FilterVectorConv<T>::applies(out.filters).
template <class T>
void filter_vector_conv(const T* planes, index_t Wp, const std::vector<index_t>& offsets,
                        const std::vector<T>& packed, index_t H, index_t W,
                        const FilterVectorOutput<T>& out) {
  constexpr index_t L = FilterVectorConv<T>::lanes;
  index_t f0 = 0;
  for (; f0 + 2 * L <= out.filters; f0 += 2 * L) {
    filter_vector::filter_group<T, 2>(planes, Wp, offsets, packed, H, W, f0, out);
  }
  if (f0 < out.filters) filter_vector::filter_group<T, 1>(planes, Wp, offsets, packed, H, W, f0, out);
  tile_to_planes(out.tile, out.height * out.width, out.filters, out.y);
}

}  // namespace onelearn::nn::detail
