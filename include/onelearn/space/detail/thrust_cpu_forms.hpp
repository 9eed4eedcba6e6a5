#pragma once
// The CPU systems' forms of three kernels, for space::thrust_omp and space::thrust_tbb.
// Private: space/detail/thrust_kernels.hpp dispatches to them.
//
// The Lloyd assignment (nearest_kernel_cpu) is the device's sums in the device's order, laid
// out and blocked for a CPU's vector registers.
//
// The k-NN search and the logistic loss and gradient run on dense products on the host.
// Thrust has no BLAS. On a GPU these kernels are plain Thrust or cuBLAS; on the CPU systems the
// device's forms (one work item per row: a heap scan of every training row per query, the
// scores of one row at a time) ran 2-6x slower than the host's GEMMs on this project's 2 cores
// (bench/space_bench.cpp, double: knn_search 0.50 s against 0.084 s, logreg_eval 0.97 s against
// 0.57 s). So, as gram() hands the omp and tbb systems to the host's blocked update, here
// Thrust's system runs the work items, one per chunk of rows (or of queries), and each item's
// arithmetic is Eigen's, as a device's is cuBLAS's. The chunks are the host path's
// (core/detail/parallel.hpp's sum_over_chunks for the loss, exact_kbest's query chunks for the
// search) and their partials are added in the same order, so these forms give the host's bits.
// thrust_cpp keeps the device's forms, which every test run thereby checks.
//
// Host code only (no __device__): these functors are instantiated for the CPU systems alone.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>

#include <Eigen/Core>

#include "onelearn/core/detail/exact_neighbours.hpp"
#include "onelearn/core/detail/logistic_terms.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/space/data.hpp"
#include "onelearn/space/host.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace onelearn::space::detail {

/// Eigen's products inside a work item run on the calling thread while this lives. Eigen splits
/// a large product over OpenMP threads of its own unless it is already inside an OpenMP team:
/// under thrust_omp the work items are (serial products, as the host's chunks), but a oneTBB
/// worker is not, and each of its items would start a team of its own. The thread count is an
/// OpenMP setting of the calling thread only, and is put back.
class serial_products_scope {
 public:
  serial_products_scope() {
#ifdef _OPENMP
    if (omp_in_parallel() == 0) {
      restore_ = omp_get_max_threads();
      omp_set_num_threads(1);
    }
#endif
  }
  ~serial_products_scope() {
#ifdef _OPENMP
    if (restore_ > 0) omp_set_num_threads(restore_);
#endif
  }
  serial_products_scope(const serial_products_scope&) = delete;
  serial_products_scope& operator=(const serial_products_scope&) = delete;

 private:
  int restore_ = 0;
};

/// labels[i] = argmin_c ||c||^2 - 2 x_i.c (the first on ties), in T: the device's
/// nearest_kernel, the same dot products summed over the features in the same order, and the
/// same choice, laid out for a CPU. The centres are feature-major (ct[j * k_pad + c], k_pad a
/// whole number of tiles, zero centres past k), so that a tile's centres are whole vectors (the
/// device's layout, a centre per row, kept the loop scalar here: thrust_omp's 30 Lloyd steps on
/// bench/'s kmeans shape, 200k x 32, k = 16, double, 2 threads, took 0.57 s against the host's
/// 0.23 s); and `block` rows go together, because a single row's tile is only 2 (AVX-512) to 8
/// vectors of sums, each waiting on its own previous multiply-add, where a block gives the core
/// independent chains to overlap. A product and a sum, as the device's scalar `dot += x * c`:
/// the compiler fuses both into one multiply-add or neither (-ffp-contract), so both forms give
/// the same sums; Eigen's pmadd would fuse whatever the setting. The choice after each tile runs across the block's rows
/// without branches (a compare and two selects per centre): branching on every comparison cost
/// more than the products. Work item b: rows [b * block, (b + 1) * block).
template <class T>
struct nearest_kernel_cpu {
  using Packet = typename Eigen::internal::packet_traits<T>::type;
  static constexpr index_t lanes = Eigen::internal::unpacket_traits<Packet>::size;
  static constexpr index_t tile = 16;  ///< centres per pass over a row (the device's tile)
  static constexpr index_t packets = tile / lanes;
  /// Rows per block: their sums in 8 vector registers (4 rows of 2 AVX-512 packets in double),
  /// enough independent chains to keep the multiply-adds busy. 8 rows were no faster (their row
  /// pointers no longer fitted in the general registers).
  static constexpr index_t block = std::clamp<index_t>(8 / packets, 1, 8);
  static_assert(tile % lanes == 0);

  matrix_view<const T> X;
  const T* ct;
  index_t k;
  index_t k_pad;
  const T* c_norms;
  std::int64_t* labels;

  void operator()(index_t b) const {
    const index_t begin = b * block;
    assign_rows(begin, std::min(X.rows, begin + block));
  }

  /// The labels of rows [begin, end).
  void assign_rows(index_t begin, index_t end) const {
    index_t i = begin;
    for (; i + block <= end; i += block) assign<block>(i);
    for (; i < end; ++i) assign<1>(i);
  }

 private:
  template <index_t R>
  void assign(index_t first) const {
    using namespace Eigen::internal;
    const T* x[R];
    index_t best[R];
    T best_value[R];
    for (index_t r = 0; r < R; ++r) x[r] = X.row(first + r);
    for (index_t c0 = 0; c0 < k; c0 += tile) {
      Packet sums[R * packets];
      for (index_t u = 0; u < R * packets; ++u) sums[u] = pset1<Packet>(T(0));
      for (index_t j = 0; j < X.cols; ++j) {
        const T* centres = ct + j * k_pad + c0;
        Packet c[packets];
        for (index_t v = 0; v < packets; ++v) c[v] = ploadu<Packet>(centres + v * lanes);
        for (index_t r = 0; r < R; ++r) {
          const Packet xj = pset1<Packet>(x[r][j]);
          for (index_t v = 0; v < packets; ++v)
            sums[r * packets + v] = padd(sums[r * packets + v], pmul(xj, c[v]));
        }
      }
      T dot[R][tile];
      for (index_t r = 0; r < R; ++r) {
        for (index_t v = 0; v < packets; ++v) pstoreu(&dot[r][v * lanes], sums[r * packets + v]);
      }
      // The device's rule: the first centre whatever its value, then a strictly smaller one.
      const index_t m = std::min(tile, k - c0);
      index_t t = 0;
      if (c0 == 0) {
        for (index_t r = 0; r < R; ++r) {
          best_value[r] = c_norms[0] - T(2) * dot[r][0];
          best[r] = 0;
        }
        t = 1;
      }
      for (; t < m; ++t) {
        for (index_t r = 0; r < R; ++r) {
          const T value = c_norms[c0 + t] - T(2) * dot[r][t];
          const bool nearer = value < best_value[r];
          best_value[r] = nearer ? value : best_value[r];
          best[r] = nearer ? c0 + t : best[r];
        }
      }
    }
    for (index_t r = 0; r < R; ++r)
      labels[first + r] = static_cast<std::int64_t>(k > 0 ? best[r] : -1);
  }
};

/// Work item c: the logistic data term and its gradient over chunk c of the rows, in blocks of
/// logistic_block rows (core/detail/logistic_terms.hpp), into partial c as [loss | gradient (k x
/// q, row-major)]. Float rows are converted to double a block at a time (the host converts them
/// all first: the same values).
template <class T>
struct logistic_chunk_cpu {
  static constexpr index_t block = onelearn::detail::logistic_block;

  matrix_view<const T> X;
  vector_view<const index_t> class_of;
  vector_view<const T> weights;
  const double* params;  ///< k x q, row-major
  index_t k;
  index_t q;
  bool binary;
  bool fit_intercept;
  index_t grain;
  double* partials;

  void operator()(index_t chunk) const {
    const serial_products_scope serial;
    const Eigen::Map<const Matrix<double>> coefficients(params, k, q);
    double loss = 0;
    Matrix<double> grad = Matrix<double>::Zero(k, q);
    const index_t begin = chunk * grain;
    const index_t end = std::min(X.rows, begin + grain);
    const auto classes = span(class_of);
    for (index_t b = begin; b < end; b += block) {
      const index_t e = std::min(end, b + block);
      if constexpr (std::is_same_v<T, double>) {
        const Vector<double> none;
        const VectorRef<double> w =
            weights.empty()
                ? VectorRef<double>(none)
                : VectorRef<double>(Eigen::Map<const Vector<double>>(weights.data, weights.size));
        onelearn::detail::add_logistic_terms(eigen(X), b, e, classes, w, binary, fit_intercept,
                                             coefficients, loss, grad);
      } else {
        const Matrix<double> rows = eigen(X).middleRows(b, e - b).template cast<double>();
        const Vector<double> w =
            weights.empty()
                ? Vector<double>()
                : Vector<double>(
                      Eigen::Map<const Vector<T>>(weights.data + b, e - b).template cast<double>());
        onelearn::detail::add_logistic_terms(rows, 0, e - b,
                                             classes.subspan(static_cast<std::size_t>(b)), w,
                                             binary, fit_intercept, coefficients, loss, grad);
      }
    }
    double* out = partials + chunk * (1 + k * q);
    out[0] = loss;
    std::memcpy(out + 1, grad.data(), sizeof(double) * static_cast<std::size_t>(k * q));
  }
};

/// Work item c: the k nearest training rows of chunk c of the queries, by the host's search
/// (exact distances; core/detail/exact_neighbours.hpp), into the query-major output.
template <class T>
struct nearest_k_chunk_cpu {
  matrix_view<const T> X;
  matrix_view<const T> queries;
  const Vector<T>* mean;  ///< of the rows of X (the search centres on it to select)
  index_t k;
  index_t grain;
  double* distances;
  std::int64_t* indices;

  void operator()(index_t chunk) const {
    const serial_products_scope serial;
    const index_t begin = chunk * grain;
    const index_t end = std::min(queries.rows, begin + grain);
    const onelearn::detail::ExactNeighbours part = onelearn::detail::exact_kbest_serial<T>(
        eigen(X), *mean, eigen(queries).middleRows(begin, end - begin), k);
    const auto at = static_cast<std::ptrdiff_t>(begin * part.k);
    std::copy(part.distances.begin(), part.distances.end(), distances + at);
    std::copy(part.indices.begin(), part.indices.end(), indices + at);
  }
};

}  // namespace onelearn::space::detail
