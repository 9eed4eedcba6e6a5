#pragma once
// The kernels of space::host (space/host.hpp), on a Thrust system: the same functions, the same
// results (to rounding; the k nearest neighbours exactly). Private: include space/space.hpp.
//
// Reductions go the way the host path's do (core/detail/parallel.hpp): the rows are cut into
// chunks, each chunk sums its rows in row order into its own partial, and the partials are added
// in chunk order; the chunks depend only on the number of rows and the system, never on the
// thread count, so a result has the same bits on 1 thread or 16. The CPU systems (cpp, omp, tbb)
// cut as the host path does (at most max_partials chunks) and give each other's bits; CUDA cuts
// into many more, smaller chunks to fill the device. Both steps are thrust::for_each_n over
// chunk or column numbers, with __host__ __device__ functors: no algorithm whose summation order
// Thrust leaves open (thrust::reduce), so no result depends on the Thrust version either.
//
// Per-row kernels (nearest centre, distances, the k nearest) run one row per Thrust work item.
//
// Phase 1 is written for correctness on every system; the CUDA kernels are plain (one thread
// per row or chunk, no shared-memory tiling) and the distances use no GEMM: tuning them is the
// next step, behind the same functions.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/space/data.hpp"
#include "onelearn/space/results.hpp"
#include "onelearn/space/thrust.hpp"

#if defined(ONELEARN_SPACE_HAVE_THRUST)

namespace onelearn::space {
namespace detail {

template <class System>
using tspace = thrust_space<System>;

/// How the rows are cut for a reduction whose partial has `width` doubles (and `scratch` more
/// per chunk for the kernel's own use).
struct chunk_plan {
  index_t grain = 1;
  index_t chunks = 0;
};

template <class System>
chunk_plan plan_chunks(index_t n, index_t width, index_t scratch) {
  if (n <= 0) return {1, 0};
  constexpr bool device = tspace<System>::is_device;
  // CPU: as the host path (at most max_partials chunks). CUDA: rows enough for every thread.
  const index_t max_chunks = device ? index_t{1} << 15 : onelearn::detail::max_partials;
  const index_t min_grain = device ? 32 : 256;
  // The partials stay under 256 MiB (p x p Gram partials for large p).
  const index_t per_chunk = 8 * std::max<index_t>(width + scratch, 1);
  const index_t memory_cap = std::max<index_t>((index_t{256} << 20) / per_chunk, 1);
  const index_t chunks = std::max<index_t>(
      std::min({max_chunks, onelearn::detail::chunk_count(n, min_grain), memory_cap}), 1);
  const index_t grain = onelearn::detail::chunk_count(n, chunks);
  return {grain, onelearn::detail::chunk_count(n, grain)};
}

/// One chunk: zero its partial, then body(i, partial, scratch) for each of its rows in order.
template <class Body>
struct chunk_pass {
  Body body;
  index_t n;
  index_t grain;
  index_t width;
  index_t scratch_width;
  double* partials;
  double* scratch;

  ONELEARN_SPACE_HD void operator()(index_t chunk) const {
    double* out = partials + chunk * width;
    for (index_t j = 0; j < width; ++j) out[j] = 0;
    double* own = scratch_width > 0 ? scratch + chunk * scratch_width : nullptr;
    const index_t begin = chunk * grain;
    const index_t end = begin + grain < n ? begin + grain : n;
    for (index_t i = begin; i < end; ++i) body(i, out, own);
  }
};

/// One column of the partials, added in chunk order.
struct add_partials {
  const double* partials;
  double* totals;
  index_t chunks;
  index_t width;

  ONELEARN_SPACE_HD void operator()(index_t j) const {
    double total = 0;
    for (index_t c = 0; c < chunks; ++c) total += partials[c * width + j];
    totals[j] = total;
  }
};

template <class System, class F>
void for_each_index(const tspace<System>& s, index_t n, const F& f) {
  if (n <= 0) return;
  try {
    ::thrust::for_each_n(s.policy(), ::thrust::counting_iterator<index_t>(0), n, f);
  } catch (const ::thrust::system_error& e) {
    throw device_error("onelearn::space::" + std::string(tspace<System>::name) +
                       ": a kernel failed: " + e.what());
  }
}

/// The sum over rows [0, n) of body's per-row contributions (width doubles), to the host.
template <class System, class Body>
Vector<double> chunked_sum(const tspace<System>& s, index_t n, index_t width, index_t scratch,
                           const Body& body) {
  tspace<System>::prepare();
  Vector<double> out = Vector<double>::Zero(width);
  if (n <= 0 || width <= 0) return out;
  const chunk_plan plan = plan_chunks<System>(n, width, scratch);
  auto partials = s.template allocate<double>(static_cast<std::size_t>(plan.chunks * width));
  auto own = s.template allocate<double>(static_cast<std::size_t>(plan.chunks * scratch));
  double* partial_data = tspace<System>::data(partials);
  for_each_index(s, plan.chunks,
                 chunk_pass<Body>{body, n, plan.grain, width, scratch, partial_data,
                                  tspace<System>::data(own)});
  auto totals = s.template allocate<double>(static_cast<std::size_t>(width));
  for_each_index(s, width,
                 add_partials{partial_data, tspace<System>::data(totals), plan.chunks, width});
  s.copy_to_host(tspace<System>::data(totals), static_cast<std::size_t>(width), out.data());
  return out;
}

/// A small host array (centres, means, coefficients) in the space: a copy (cheap next to the
/// rows; on the CPU systems too, so that every system runs the same code).
template <class System, class T>
auto small_copy(const tspace<System>& s, const T* values, index_t n) {
  auto b = s.template allocate<T>(static_cast<std::size_t>(n));
  s.copy_to_space(values, static_cast<std::size_t>(n), tspace<System>::data(b));
  return b;
}

/// A host Eigen matrix, row-major and compact, as a small copy in the space.
template <class System, class T, class Derived>
auto small_matrix(const tspace<System>& s, const Eigen::MatrixBase<Derived>& M) {
  const Matrix<T> compact = M.template cast<T>();
  return small_copy<System, T>(s, compact.data(), compact.size());
}

ONELEARN_SPACE_HD inline double weight_of(vector_view<const double> w, index_t i) {
  return w.empty() ? 1.0 : w[i];
}
template <class T>
ONELEARN_SPACE_HD double weight_of(vector_view<const T> w, index_t i) {
  return w.empty() ? 1.0 : static_cast<double>(w[i]);
}

// --- Bodies of the reductions -----------------------------------------------------------------

template <class T>
struct column_sums_body {
  matrix_view<const T> X;
  vector_view<const T> w;
  ONELEARN_SPACE_HD void operator()(index_t i, double* out, double*) const {
    const T* x = X.row(i);
    if (w.empty()) {
      for (index_t j = 0; j < X.cols; ++j) out[j] += static_cast<double>(x[j]);
    } else {
      const double wi = static_cast<double>(w[i]);
      for (index_t j = 0; j < X.cols; ++j) out[j] += wi * static_cast<double>(x[j]);
    }
  }
};

template <class T>
struct centered_squares_body {
  matrix_view<const T> X;
  const double* center;
  vector_view<const T> w;
  ONELEARN_SPACE_HD void operator()(index_t i, double* out, double*) const {
    const T* x = X.row(i);
    const double wi = weight_of(w, i);
    for (index_t j = 0; j < X.cols; ++j) {
      const double d = static_cast<double>(x[j]) - center[j];
      out[j] += w.empty() ? d * d : wi * (d * d);
    }
  }
};

/// [counts (k) | sums (k x p)].
template <class T>
struct class_sums_body {
  matrix_view<const T> X;
  vector_view<const index_t> class_of;
  vector_view<const T> w;
  index_t k;
  ONELEARN_SPACE_HD void operator()(index_t i, double* out, double*) const {
    const T* x = X.row(i);
    const index_t c = class_of[i];
    const double wi = weight_of(w, i);
    out[c] += wi;
    double* sums = out + k + c * X.cols;
    for (index_t j = 0; j < X.cols; ++j) sums[j] += wi * static_cast<double>(x[j]);
  }
};

template <class T>
struct class_squares_body {
  matrix_view<const T> X;
  vector_view<const index_t> class_of;
  vector_view<const T> w;
  const double* theta;  // k x p
  ONELEARN_SPACE_HD void operator()(index_t i, double* out, double*) const {
    const T* x = X.row(i);
    const index_t c = class_of[i];
    const double wi = weight_of(w, i);
    const double* center = theta + c * X.cols;
    double* squares = out + c * X.cols;
    for (index_t j = 0; j < X.cols; ++j) {
      const double d = static_cast<double>(x[j]) - center[j];
      squares[j] += wi * (d * d);
    }
  }
};

/// [sums (k x p) | counts (k) | changed].
template <class T>
struct lloyd_sums_body {
  matrix_view<const T> X;
  const std::int64_t* labels;
  vector_view<const std::int64_t> previous;
  index_t k;
  ONELEARN_SPACE_HD void operator()(index_t i, double* out, double*) const {
    const T* x = X.row(i);
    const index_t p = X.cols;
    const auto label = static_cast<index_t>(labels[i]);
    double* sums = out + label * p;
    for (index_t j = 0; j < p; ++j) sums[j] += static_cast<double>(x[j]);
    out[k * p + label] += 1;
    if (previous.empty() || previous[i] != labels[i]) out[k * p + k] += 1;
  }
};

/// [lower triangle of G, packed by rows (p(p+1)/2) | x~^T y~ (p) | y~^T y~]; scratch: the
/// centred, weighted row (p).
template <class T>
struct gram_body {
  matrix_view<const T> X;
  vector_view<const T> y;
  vector_view<const T> w;
  double weight_scale;
  const double* x_mean;
  double y_mean;
  ONELEARN_SPACE_HD void operator()(index_t i, double* out, double* a) const {
    const T* x = X.row(i);
    const index_t p = X.cols;
    for (index_t j = 0; j < p; ++j) a[j] = static_cast<double>(x[j]) - x_mean[j];
    double r = y.empty() ? 0.0 : static_cast<double>(y[i]) - y_mean;
    if (!w.empty()) {
      const double root = ::sqrt(static_cast<double>(w[i]) * weight_scale);
      for (index_t j = 0; j < p; ++j) a[j] *= root;
      r *= root;
    }
    double* g = out;
    for (index_t row = 0; row < p; ++row) {
      const double ar = a[row];
      for (index_t col = 0; col <= row; ++col) g[col] += ar * a[col];
      g += row + 1;
    }
    if (!y.empty()) {
      for (index_t j = 0; j < p; ++j) g[j] += a[j] * r;
      g[p] += r * r;
    }
  }
};

ONELEARN_SPACE_HD inline double softplus(double z) {
  return z > 0 ? z + ::log1p(::exp(-z)) : ::log1p(::exp(z));
}
ONELEARN_SPACE_HD inline double sigmoid(double z) {
  if (z >= 0) return 1.0 / (1.0 + ::exp(-z));
  const double e = ::exp(z);
  return e / (1.0 + e);
}

/// [loss | gradient (k x q), q = p + fit_intercept]; scratch: the row's scores z (k).
template <class T>
struct logistic_body {
  matrix_view<const T> X;
  vector_view<const index_t> class_of;
  vector_view<const T> w;
  const double* params;  // k x q
  index_t k;
  bool binary;
  bool fit_intercept;
  ONELEARN_SPACE_HD void operator()(index_t i, double* out, double* z) const {
    const T* x = X.row(i);
    const index_t p = X.cols;
    const index_t q = p + (fit_intercept ? 1 : 0);
    const double wi = weight_of(w, i);
    const index_t y = class_of[i];
    for (index_t c = 0; c < k; ++c) {
      const double* coef = params + c * q;
      double s = 0;
      for (index_t j = 0; j < p; ++j) s += static_cast<double>(x[j]) * coef[j];
      z[c] = fit_intercept ? s + coef[p] : s;
    }
    if (binary) {
      const double zi = z[0];
      const double t = y == 1 ? 1.0 : 0.0;
      out[0] += wi * (softplus(zi) - t * zi);
      z[0] = wi * (sigmoid(zi) - t);
    } else {
      double top = z[0];
      for (index_t c = 1; c < k; ++c) top = z[c] > top ? z[c] : top;
      double sum = 0;
      for (index_t c = 0; c < k; ++c) sum += ::exp(z[c] - top);
      const double lse = top + ::log(sum);
      out[0] += wi * (lse - z[y]);
      for (index_t c = 0; c < k; ++c) z[c] = wi * ::exp(z[c] - lse);
      z[y] -= wi;
    }
    for (index_t c = 0; c < k; ++c) {
      double* g = out + 1 + c * q;
      for (index_t j = 0; j < p; ++j) g[j] += z[c] * static_cast<double>(x[j]);
      if (fit_intercept) g[p] += z[c];
    }
  }
};

// --- Per-row kernels ---------------------------------------------------------------------------

template <class T>
struct squared_norms_kernel {
  matrix_view<const T> X;
  T* norms;
  ONELEARN_SPACE_HD void operator()(index_t i) const {
    const T* x = X.row(i);
    T s = 0;
    for (index_t j = 0; j < X.cols; ++j) s += x[j] * x[j];
    norms[i] = s;
  }
};

/// labels[i] = argmin_j ||c_j||^2 - 2 x_i.c_j (the first on ties), in T.
template <class T>
struct nearest_kernel {
  matrix_view<const T> X;
  matrix_view<const T> C;
  const T* c_norms;
  std::int64_t* labels;
  ONELEARN_SPACE_HD void operator()(index_t i) const {
    const T* x = X.row(i);
    index_t best = C.rows > 0 ? 0 : -1;
    T best_value = 0;
    for (index_t c = 0; c < C.rows; ++c) {
      const T* center = C.row(c);
      T dot = 0;
      for (index_t j = 0; j < X.cols; ++j) dot += x[j] * center[j];
      const T value = c_norms[c] - T(2) * dot;
      if (c == 0 || value < best_value) {
        best_value = value;
        best = c;
      }
    }
    labels[i] = static_cast<std::int64_t>(best);
  }
};

/// D(i, j) = max(0, -2 x_i.y_j + ||x_i||^2 + ||y_j||^2), in T (the host kernel's order).
template <class T>
struct pairwise_kernel {
  matrix_view<const T> X;
  matrix_view<const T> Y;
  const T* x_norms;
  const T* y_norms;
  T* D;
  ONELEARN_SPACE_HD void operator()(index_t e) const {
    const index_t i = e / Y.rows;
    const index_t j = e % Y.rows;
    const T* x = X.row(i);
    const T* y = Y.row(j);
    T dot = 0;
    for (index_t f = 0; f < X.cols; ++f) dot += x[f] * y[f];
    T v = T(-2) * dot;
    v += x_norms[i];
    v += y_norms[j];
    D[e] = v > T(0) ? v : T(0);
  }
};

/// ||a - b||^2, subtracting first, in double, in index order: the host's exact distance
/// (core/detail/exact_neighbours.hpp), with no fused multiply-add on the device either, so the
/// same bits in every space.
template <class T>
ONELEARN_SPACE_HD double exact_squared_distance(const T* a, const T* b, index_t p) {
  double sum = 0;
  for (index_t j = 0; j < p; ++j) {
    const double d = static_cast<double>(a[j]) - static_cast<double>(b[j]);
#if defined(__CUDA_ARCH__)
    sum = __dadd_rn(sum, __dmul_rn(d, d));
#else
    sum += d * d;
#endif
  }
  return sum;
}

template <class T>
struct paired_kernel {
  matrix_view<const T> X;
  matrix_view<const T> Y;
  vector_view<const std::int64_t> index;
  double* d;
  ONELEARN_SPACE_HD void operator()(index_t i) const {
    d[i] = exact_squared_distance(X.row(i), Y.row(static_cast<index_t>(index[i])), X.cols);
  }
};

/// The k nearest rows of X to query q by (exact squared distance, row). The rows are scanned in
/// order through a max-heap of the k best so far (in the output arrays); a row joins only if
/// strictly nearer than the heap's worst, so ties go to the lower row. A heap sort then leaves
/// the list in ascending order. O(n log k) per query.
template <class T>
struct nearest_k_kernel {
  matrix_view<const T> X;
  matrix_view<const T> Q;
  index_t k;
  double* distances;
  std::int64_t* indices;

  /// (d[a], id[a]) after (d[b], id[b]).
  ONELEARN_SPACE_HD static bool after(const double* d, const std::int64_t* id, index_t a,
                                      index_t b) {
    return d[a] > d[b] || (d[a] == d[b] && id[a] > id[b]);
  }
  ONELEARN_SPACE_HD static void swap(double* d, std::int64_t* id, index_t a, index_t b) {
    const double td = d[a];
    d[a] = d[b];
    d[b] = td;
    const std::int64_t ti = id[a];
    id[a] = id[b];
    id[b] = ti;
  }
  /// Restores the max-heap below `at` among the first `size` entries.
  ONELEARN_SPACE_HD static void sift_down(double* d, std::int64_t* id, index_t at, index_t size) {
    for (;;) {
      const index_t left = 2 * at + 1;
      if (left >= size) return;
      index_t top = left;
      if (left + 1 < size && after(d, id, left + 1, left)) top = left + 1;
      if (!after(d, id, top, at)) return;
      swap(d, id, top, at);
      at = top;
    }
  }

  ONELEARN_SPACE_HD void operator()(index_t q) const {
    double* d = distances + q * k;
    std::int64_t* id = indices + q * k;
    const T* query = Q.row(q);
    index_t size = 0;
    for (index_t j = 0; j < X.rows; ++j) {
      const double s = exact_squared_distance(query, X.row(j), X.cols);
      if (size < k) {
        index_t at = size++;
        d[at] = s;
        id[at] = j;
        while (at > 0 && after(d, id, at, (at - 1) / 2)) {
          swap(d, id, at, (at - 1) / 2);
          at = (at - 1) / 2;
        }
      } else if (s < d[0]) {
        d[0] = s;
        id[0] = j;
        sift_down(d, id, 0, k);
      }
    }
    for (index_t last = size - 1; last > 0; --last) {
      swap(d, id, 0, last);
      sift_down(d, id, 0, last);
    }
  }
};

}  // namespace detail

// --- The kernels (the functions of space/host.hpp, on Thrust) ---------------------------------

template <class System, class T>
Vector<double> column_sums(const thrust_space<System>& s, matrix_view<const T> X,
                           vector_view<const T> weights) {
  return detail::chunked_sum(s, X.rows, X.cols, 0, detail::column_sums_body<T>{X, weights});
}

template <class System, class T>
Vector<double> centered_square_sums(const thrust_space<System>& s, matrix_view<const T> X,
                                    const Vector<double>& center, vector_view<const T> weights) {
  thrust_space<System>::prepare();
  const auto c = detail::small_copy(s, center.data(), center.size());
  return detail::chunked_sum(
      s, X.rows, X.cols, 0,
      detail::centered_squares_body<T>{X, thrust_space<System>::data(c), weights});
}

template <class System, class T>
class_moments class_sums(const thrust_space<System>& s, matrix_view<const T> X,
                         vector_view<const index_t> class_of, vector_view<const T> weights,
                         index_t k) {
  const index_t p = X.cols;
  const Vector<double> total = detail::chunked_sum(
      s, X.rows, k + k * p, 0, detail::class_sums_body<T>{X, class_of, weights, k});
  class_moments out{total.head(k), Eigen::Map<const Matrix<double>>(total.data() + k, k, p)};
  return out;
}

template <class System, class T>
Matrix<double> class_square_deviations(const thrust_space<System>& s, matrix_view<const T> X,
                                       vector_view<const index_t> class_of,
                                       vector_view<const T> weights, const Matrix<double>& theta) {
  thrust_space<System>::prepare();
  const index_t k = theta.rows();
  const index_t p = X.cols;
  const auto t = detail::small_matrix<System, double>(s, theta);
  const Vector<double> total = detail::chunked_sum(
      s, X.rows, k * p, 0,
      detail::class_squares_body<T>{X, class_of, weights, thrust_space<System>::data(t)});
  return Eigen::Map<const Matrix<double>>(total.data(), k, p);
}

template <class System, class T>
matrix<thrust_space<System>, T> pairwise_squared_distances(const thrust_space<System>& s,
                                                           matrix_view<const T> X,
                                                           matrix_view<const T> Y) {
  using S = thrust_space<System>;
  matrix<S, T> out(s, X.rows, Y.rows);
  if (X.rows == 0 || Y.rows == 0) return out;
  auto x_norms = s.template allocate<T>(static_cast<std::size_t>(X.rows));
  auto y_norms = s.template allocate<T>(static_cast<std::size_t>(Y.rows));
  detail::for_each_index(s, X.rows, detail::squared_norms_kernel<T>{X, S::data(x_norms)});
  detail::for_each_index(s, Y.rows, detail::squared_norms_kernel<T>{Y, S::data(y_norms)});
  detail::for_each_index(s, X.rows * Y.rows,
                         detail::pairwise_kernel<T>{X, Y, S::data(x_norms), S::data(y_norms),
                                                    out.mutable_view().data});
  return out;
}

template <class System, class T>
void nearest_rows(const thrust_space<System>& s, matrix_view<const T> X,
                  const host_rows<T>& centers, vector_view<std::int64_t> labels) {
  using S = thrust_space<System>;
  S::prepare();
  if (X.rows == 0) return;
  // The centres' norms as the host computes them (Eigen, in T), so both compare the same values.
  const Vector<T> norms = centers.rowwise().squaredNorm();
  const auto c = detail::small_matrix<System, T>(s, centers);
  const auto cn = detail::small_copy(s, norms.data(), norms.size());
  const matrix_view<const T> C{S::data(c), centers.rows(), centers.cols(), centers.cols()};
  detail::for_each_index(s, X.rows, detail::nearest_kernel<T>{X, C, S::data(cn), labels.data});
}

template <class System, class T>
lloyd_sums lloyd_step(const thrust_space<System>& s, matrix_view<const T> X,
                      const host_rows<T>& centers, vector_view<std::int64_t> labels,
                      vector_view<const std::int64_t> previous) {
  const index_t k = centers.rows();
  const index_t p = X.cols;
  nearest_rows(s, X, centers, labels);
  const Vector<double> total = detail::chunked_sum(
      s, X.rows, k * p + k + 1, 0, detail::lloyd_sums_body<T>{X, labels.data, previous, k});
  lloyd_sums out;
  out.sums = Eigen::Map<const Matrix<double>>(total.data(), k, p);
  out.counts = total.segment(k * p, k);
  out.changed = total(k * p + k);
  return out;
}

template <class System, class T>
Vector<double> paired_squared_distances(const thrust_space<System>& s, matrix_view<const T> X,
                                        const host_rows<T>& Y,
                                        vector_view<const std::int64_t> index) {
  using S = thrust_space<System>;
  S::prepare();
  Vector<double> out(X.rows);
  if (X.rows == 0) return out;
  const auto y = detail::small_matrix<System, T>(s, Y);
  const matrix_view<const T> Yv{S::data(y), Y.rows(), Y.cols(), Y.cols()};
  auto d = s.template allocate<double>(static_cast<std::size_t>(X.rows));
  detail::for_each_index(s, X.rows, detail::paired_kernel<T>{X, Yv, index, S::data(d)});
  s.copy_to_host(S::data(d), static_cast<std::size_t>(X.rows), out.data());
  return out;
}

template <class System, class T>
neighbours nearest_k(const thrust_space<System>& s, matrix_view<const T> X,
                     matrix_view<const T> queries, index_t k) {
  using S = thrust_space<System>;
  S::prepare();
  neighbours out;
  const index_t k_local = std::min(k, X.rows);
  out.resize(queries.rows, k_local);
  if (k_local <= 0 || queries.rows == 0) return out;
  const auto size = static_cast<std::size_t>(queries.rows * k_local);
  auto d = s.template allocate<double>(size);
  auto id = s.template allocate<std::int64_t>(size);
  detail::for_each_index(s, queries.rows,
                         detail::nearest_k_kernel<T>{X, queries, k_local, S::data(d), S::data(id)});
  s.copy_to_host(S::data(d), size, out.distances.data());
  s.copy_to_host(S::data(id), size, out.indices.data());
  return out;
}

/// The Gram sums by a Thrust reduction (every system; on CUDA, gram() uses cuBLAS unless
/// ONELEARN_NO_CUBLAS is defined, and this stays callable as the reference).
template <class System, class T>
gram_sums gram_by_reduction(const thrust_space<System>& s, matrix_view<const T> X,
                            vector_view<const T> y, vector_view<const T> weights,
                            double weight_scale, const Vector<double>& x_mean, double y_mean) {
  thrust_space<System>::prepare();
  const index_t p = X.cols;
  const index_t triangle = p * (p + 1) / 2;
  const auto mean = detail::small_copy(s, x_mean.data(), x_mean.size());
  const Vector<double> total = detail::chunked_sum(
      s, X.rows, triangle + p + 1, p,
      detail::gram_body<T>{X, y, weights, weight_scale, thrust_space<System>::data(mean), y_mean});
  gram_sums out{Eigen::MatrixXd::Zero(p, p), Eigen::VectorXd::Zero(p), 0.0};
  index_t at = 0;
  for (index_t row = 0; row < p; ++row) {
    for (index_t col = 0; col <= row; ++col) out.gram(row, col) = total(at++);
  }
  out.xty = total.segment(triangle, p);
  out.yty = total(triangle + p);
  return out;
}

}  // namespace onelearn::space

#if defined(ONELEARN_SPACE_HAVE_CUDA) && !defined(ONELEARN_NO_CUBLAS)
#include "onelearn/space/detail/cublas_gram.hpp"
#endif

namespace onelearn::space {

/// sum_i w_i x~_i x~_i^T (lower triangle), and with y: x~^T y~ and y~^T y~, in double, as the
/// host's gram(). CPU systems: the Thrust reduction; CUDA: cuBLAS (syrk) unless
/// ONELEARN_NO_CUBLAS is defined.
template <class System, class T>
gram_sums gram(const thrust_space<System>& s, matrix_view<const T> X, vector_view<const T> y,
               vector_view<const T> weights, double weight_scale, const Vector<double>& x_mean,
               double y_mean) {
#if defined(ONELEARN_SPACE_HAVE_CUDA) && !defined(ONELEARN_NO_CUBLAS)
  if constexpr (std::is_same_v<System, system::cuda>) {
    return detail::gram_by_cublas(s, X, y, weights, weight_scale, x_mean, y_mean);
  } else {
    return gram_by_reduction(s, X, y, weights, weight_scale, x_mean, y_mean);
  }
#else
  return gram_by_reduction(s, X, y, weights, weight_scale, x_mean, y_mean);
#endif
}

template <class System, class T>
double logistic_loss_gradient(const thrust_space<System>& s, matrix_view<const T> X,
                              vector_view<const index_t> class_of, vector_view<const T> weights,
                              bool binary, bool fit_intercept, const MatrixRef<double>& params,
                              Eigen::Ref<Matrix<double>> grad) {
  thrust_space<System>::prepare();
  const index_t k = params.rows();
  const index_t q = params.cols();
  const auto coef = detail::small_matrix<System, double>(s, params);
  const Vector<double> total = detail::chunked_sum(
      s, X.rows, 1 + k * q, k,
      detail::logistic_body<T>{X, class_of, weights, thrust_space<System>::data(coef), k, binary,
                               fit_intercept});
  grad = Eigen::Map<const Matrix<double>>(total.data() + 1, k, q);
  return total(0);
}

}  // namespace onelearn::space

#endif  // ONELEARN_SPACE_HAVE_THRUST
