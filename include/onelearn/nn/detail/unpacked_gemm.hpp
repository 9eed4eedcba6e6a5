#pragma once
// C += A B for row-major A (m x k), B (k x n) and C (m x n), without packing: a register
// block of MR rows of C by NP packets of columns is summed over the whole depth, each step
// loading NP packets of one row of B and broadcasting MR values of A's column. Used by the
// ONNX executor's Gemm and MatMul (a layer's weights B, a batch of rows A), where B is read
// as stored.
//
// Why not Eigen's GEMM (nn/detail/gemm.hpp): its kernel packs both operands and blocks C in
// 48 x 4 (AVX-512) tiles, which is ~130 GFLOP/s on bench/'s mlp layers on one core of this
// repository's machine (a Zen 5, 217 GFLOP/s FMA peak); this kernel's 8 x 3-packet tile runs
// the same products at ~200 (measured: 64 x 784 x 256, 198 us against 117 us; 64 x 256 x 256,
// 61 us against 39 us). With inference batches B is far bigger than A, so packing it, once per
// product, cost more than the kernel's strided loads (onnxruntime packs constant weights once
// when it loads a model; the executor has no per-model cache of that kind yet).
//
// Sums: each element of C is its value plus one sum over k in order, whatever the threads and
// the tile it falls in, so the result does not depend on the thread count.

#include <Eigen/Core>

#include <algorithm>
#include <type_traits>

#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::nn::detail {

template <class T>
struct UnpackedGemm {
  using Packet = typename Eigen::internal::packet_traits<T>::type;
  static constexpr index_t lanes = Eigen::internal::unpacket_traits<Packet>::size;
  // MR x NP accumulators plus NP loaded packets and a broadcast must fit the registers: 8 x 3
  // with 32 of them (AVX-512), 4 x 3 with 16 (AVX2, SSE, NEON).
  static constexpr int rows = EIGEN_ARCH_DEFAULT_NUMBER_OF_REGISTERS >= 32 ? 8 : 4;
  static constexpr int packets = 3;

  /// The MR x NP tile at (a, b, c): c[r, :NP*L] += sum over d < depth of a[r, d] b[d, :NP*L].
  template <int MR, int NP>
  static void tile(const T* a, index_t lda, const T* b, index_t ldb, index_t depth, T* c,
                   index_t ldc) {
    using namespace Eigen::internal;
    Packet acc[MR][NP];
    for (auto& row : acc) {
      for (Packet& p : row) p = pset1<Packet>(T(0));
    }
    for (index_t d = 0; d < depth; ++d) {
      Packet bp[NP];
      for (int p = 0; p < NP; ++p) bp[p] = ploadu<Packet>(b + d * ldb + p * lanes);
      for (int r = 0; r < MR; ++r) {
        const Packet ap = pset1<Packet>(a[r * lda + d]);
        for (int p = 0; p < NP; ++p) acc[r][p] = pmadd(ap, bp[p], acc[r][p]);
      }
    }
    for (int r = 0; r < MR; ++r) {
      for (int p = 0; p < NP; ++p) {
        T* out = c + r * ldc + p * lanes;
        pstoreu(out, padd(ploadu<Packet>(out), acc[r][p]));
      }
    }
  }

  /// Rows [r0, r1) of C, columns [0, n / lanes * lanes): tiles of `rows` rows (single rows
  /// at the end) by `packets` packets, then single packets.
  static void row_range(index_t r0, index_t r1, index_t n, index_t k, const T* a, index_t lda,
                        const T* b, index_t ldb, T* c, index_t ldc) {
    constexpr index_t panel = packets * lanes;
    const auto columns = [&](auto tile_rows, index_t r) {
      constexpr int MR = decltype(tile_rows)::value;
      const T* ar = a + r * lda;
      T* cr = c + r * ldc;
      index_t j = 0;
      for (; j + panel <= n; j += panel) tile<MR, packets>(ar, lda, b + j, ldb, k, cr + j, ldc);
      for (; j + lanes <= n; j += lanes) tile<MR, 1>(ar, lda, b + j, ldb, k, cr + j, ldc);
    };
    index_t r = r0;
    for (; r + rows <= r1; r += rows) columns(std::integral_constant<int, rows>{}, r);
    for (; r < r1; ++r) columns(std::integral_constant<int, 1>{}, r);
  }

  /// Where this kernel beats Eigen's (measured with -O3 -march=native, one and two threads):
  /// at least a tile's width of columns (narrower products, a classifier's 10 outputs, ran at
  /// 4 GFLOP/s here against Eigen's 59), and a depth up to 1024, for which a tile's rows of A
  /// stay in L1 and a panel of B in L2 (at 4096 it ran at 50 GFLOP/s against Eigen's 89).
  static bool suits(index_t m, index_t n, index_t k) {
    return m >= 2 && n >= packets * lanes && k <= 1024;
  }
};

/// C (m x n, row stride ldc) += A (m x k, row stride lda) B (k x n, row stride ldb), all
/// row-major. Row tiles are cut over OpenMP threads when the product is large enough to pay
/// for waking them; the columns past the last whole packet (fewer than a packet) are one
/// Eigen product. For UnpackedGemm<T>::suits(m, n, k); any shape gives the right result.
template <class T>
void unpacked_gemm_accumulate(index_t m, index_t n, index_t k, const T* a, index_t lda,
                              const T* b, index_t ldb, T* c, index_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  using G = UnpackedGemm<T>;
  // Multiply-adds below which a product stays on one thread.
  constexpr double parallel_threshold = 1 << 20;
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const index_t tiles = (m + G::rows - 1) / G::rows;
  const index_t threads = work >= parallel_threshold ? onelearn::detail::parallel_width() : 1;
  const index_t grain = std::max<index_t>(1, (tiles + threads - 1) / threads) * G::rows;
  onelearn::detail::for_each_chunk(m, grain, [&](index_t, index_t begin, index_t end) {
    G::row_range(begin, end, n, k, a, lda, b, ldb, c, ldc);
  });
  const index_t covered = n / G::lanes * G::lanes;
  if (covered < n) {
    using Rows = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using Stride = Eigen::OuterStride<>;
    const Eigen::Map<const Rows, 0, Stride> A(a, m, k, Stride(lda));
    const Eigen::Map<const Rows, 0, Stride> B(b + covered, k, n - covered, Stride(ldb));
    Eigen::Map<Rows, 0, Stride> C(c + covered, m, n - covered, Stride(ldc));
    C.noalias() += A * B;
  }
}

}  // namespace onelearn::nn::detail
