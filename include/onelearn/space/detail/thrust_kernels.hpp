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
// On CUDA the kernels are plain Thrust (one thread per row, chunk or lane, no shared-memory
// tiling); the Gram sums and the logistic loss of double rows go to cuBLAS (cublas_gram.hpp,
// cublas_logistic.hpp). A call's kernels are queued without waiting (par_nosync) and its
// temporaries come from a stream-ordered pool without a zero fill (cuda_pool.hpp): measured on
// an H100 with ncu, a Lloyd step on 200k x 32 rows, k = 16, is now the kernels' own time
// (nearest_kernel 110 us, the sums by lanes 91 us, the two levels of partials 21 + 24 us).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/space/data.hpp"
#include "onelearn/space/host.hpp"
#include "onelearn/space/results.hpp"
#include "onelearn/space/thrust.hpp"

#if defined(ONELEARN_SPACE_HAVE_THRUST)

#include "onelearn/space/detail/thrust_cpu_forms.hpp"

#if defined(ONELEARN_SPACE_HAVE_TBB)
#include <tbb/task_arena.h>
#endif

namespace onelearn::space {
namespace detail {

template <class System>
using tspace = thrust_space<System>;

/// The threaded CPU systems, which run some kernels in a CPU form of their own (the Lloyd
/// assignment here, the products of thrust_cpu_forms.hpp, gram()); thrust_cpp keeps the
/// device's forms, which every test run thereby checks.
template <class System>
inline constexpr bool threaded_cpu =
    std::is_same_v<System, system::omp> || std::is_same_v<System, system::tbb>;

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

/// One chunk: zero its partial, then body(i, partial, scratch) for each of its rows in order
/// (or body.rows(begin, end, partial, scratch) once, where the body has it).
template <class Body>
struct chunk_pass {
  Body body;
  index_t n;
  index_t grain;
  index_t width;
  index_t scratch_width;
  double* partials;
  double* scratch;

  ONELEARN_SPACE_HD_ANY_BODY
  ONELEARN_SPACE_HD void operator()(index_t chunk) const {
    double* out = partials + chunk * width;
    for (index_t j = 0; j < width; ++j) out[j] = 0;
    double* own = scratch_width > 0 ? scratch + chunk * scratch_width : nullptr;
    const index_t begin = chunk * grain;
    const index_t end = begin + grain < n ? begin + grain : n;
    if constexpr (requires { body.rows(begin, end, out, own); }) {
      body.rows(begin, end, out, own);  // a body that takes its rows as a range
    } else {
      for (index_t i = begin; i < end; ++i) body(i, out, own);
    }
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

/// Groups of `group` partials added in chunk order, work item (group, column): the first level
/// of add_partials_in_groups.
struct add_partial_groups {
  const double* partials;
  double* sums;
  index_t chunks;
  index_t width;
  index_t group;
  ONELEARN_SPACE_HD void operator()(index_t e) const {
    const index_t g = e / width;
    const index_t j = e % width;
    const index_t end = (g + 1) * group < chunks ? (g + 1) * group : chunks;
    double total = 0;
    for (index_t c = g * group; c < end; ++c) total += partials[c * width + j];
    sums[g * width + j] = total;
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

/// core/detail/parallel.hpp's chunk loop (for_each_chunk's contract: body(chunk, begin, end)
/// over the same chunks) with the system's threads running the chunks, one work item each: for
/// the host algorithms a threaded CPU system runs whole (space::chunk_loop). Each item's Eigen
/// products stay on its thread, as inside the host's OpenMP chunks.
template <class System>
requires threaded_cpu<System>
struct system_chunks {
  const tspace<System>* s;

  template <class Body>
  void operator()(index_t n, index_t grain, Body&& body) const {
    // One chunk runs on the calling thread, as for_each_chunk's OpenMP loop does (`if (chunks >
    // 1)`): histogram boosting passes over small nodes thousands of times a fit, and a Thrust
    // call per pass costs more than the pass (TBB: 1.2-1.4x the host's gbdt fit before this).
    if (onelearn::detail::chunk_count(n, grain) <= 1) {
      if (n > 0) body(index_t{0}, index_t{0}, n);
      return;
    }
    const auto item = [&body, n, grain](index_t chunk) {
      const serial_products_scope serial;
      const index_t begin = chunk * grain;
      body(chunk, begin, std::min(n, begin + grain));
    };
    for_each_index(*s, onelearn::detail::chunk_count(n, grain), item);
  }

  /// The threads the system runs work items on: OpenMP's for thrust_omp, oneTBB's arena for
  /// thrust_tbb (which OMP_NUM_THREADS does not limit: cutting a TBB loop by OpenMP's count
  /// left one of two cores idle under OMP_NUM_THREADS=1).
  [[nodiscard]] static index_t width() noexcept {
    if constexpr (std::is_same_v<System, system::tbb>) {
#if defined(ONELEARN_SPACE_HAVE_TBB)
      return static_cast<index_t>(::tbb::this_task_arena::max_concurrency());
#endif
    }
    return onelearn::detail::parallel_width();
  }
};

/// totals[j] = the sum over chunks of partials[c * width + j], in two levels: groups of 64
/// chunks in chunk order (width x groups work items), then the groups in order. One work item
/// per column adding thousands of chunks in a row waits on one load after another; this keeps
/// the device busy. A fixed order, so the same bits on every run.
template <class System>
void add_partials_in_groups(const tspace<System>& s, const double* partials, index_t chunks,
                            index_t width, double* totals) {
  constexpr index_t group = 64;
  const index_t groups = onelearn::detail::chunk_count(chunks, group);
  if (groups <= 1) {
    for_each_index(s, width, add_partials{partials, totals, chunks, width});
    return;
  }
  auto sums = s.template allocate_scratch<double>(static_cast<std::size_t>(groups * width));
  double* sum_data = tspace<System>::data(sums);
  for_each_index(s, groups * width, add_partial_groups{partials, sum_data, chunks, width, group});
  for_each_index(s, width, add_partials{sum_data, totals, groups, width});
}

/// The sum over rows [0, n) of body's per-row contributions (width doubles), to the host.
template <class System, class Body>
Vector<double> chunked_sum(const tspace<System>& s, index_t n, index_t width, index_t scratch,
                           const Body& body) {
  tspace<System>::prepare();
  Vector<double> out = Vector<double>::Zero(width);
  if (n <= 0 || width <= 0) return out;
  const chunk_plan plan = plan_chunks<System>(n, width, scratch);
  // Scratch: every chunk zeroes its own partial, and the totals are written whole.
  auto partials =
      s.template allocate_scratch<double>(static_cast<std::size_t>(plan.chunks * width));
  auto own = s.template allocate_scratch<double>(static_cast<std::size_t>(plan.chunks * scratch));
  double* partial_data = tspace<System>::data(partials);
  for_each_index(s, plan.chunks,
                 chunk_pass<Body>{body, n, plan.grain, width, scratch, partial_data,
                                  tspace<System>::data(own)});
  auto totals = s.template allocate_scratch<double>(static_cast<std::size_t>(width));
  // The CPU systems have at most max_partials (64) chunks: one group, added in chunk order.
  add_partials_in_groups(s, partial_data, plan.chunks, width, tspace<System>::data(totals));
  s.copy_to_host(tspace<System>::data(totals), static_cast<std::size_t>(width), out.data());
  return out;
}

/// The column-parallel form of chunked_sum, for a device's many cheap threads: work item
/// (chunk c, lane l) runs the rows of chunk c in order and adds each row's contributions to the
/// entries of c's partial that lane l owns (body.zero(l, partial), then body.lane(i, l,
/// partial)). Every entry is owned by one lane whatever the row, so each entry is still summed
/// in row order within its chunk, and the partials are added in chunk order: deterministic, with
/// no atomics. Consecutive work items are the lanes of one chunk, so a warp reads a row's
/// columns together (coalesced) instead of one row per thread, and there are chunks x lanes
/// threads instead of chunks.
template <class Body>
struct wide_chunk_pass {
  Body body;
  index_t n;
  index_t grain;
  index_t width;
  index_t lanes;
  double* partials;

  ONELEARN_SPACE_HD void operator()(index_t e) const {
    const index_t chunk = e / lanes;
    const index_t lane = e % lanes;
    double* out = partials + chunk * width;
    body.zero(lane, out);
    const index_t begin = chunk * grain;
    const index_t end = begin + grain < n ? begin + grain : n;
    for (index_t i = begin; i < end; ++i) body.lane(i, lane, out);
  }
};

/// Rows per chunk for wide_chunked_sum: about 2^17 work items, at least 16 rows a chunk, the
/// partials under 64 MiB.
inline index_t wide_grain(index_t n, index_t width, index_t lanes) {
  const index_t target_chunks =
      std::max<index_t>((index_t{1} << 17) / std::max<index_t>(lanes, 1), 1);
  const index_t memory_chunks =
      std::max<index_t>((index_t{64} << 20) / (8 * std::max<index_t>(width, 1)), 1);
  const index_t chunks = std::max<index_t>(std::min(target_chunks, memory_chunks), 1);
  return std::max<index_t>(onelearn::detail::chunk_count(n, chunks), 16);
}

/// The sum over rows [0, n) of body's per-row contributions (width doubles), lane by lane.
template <class System, class Body>
Vector<double> wide_chunked_sum(const tspace<System>& s, index_t n, index_t width, index_t lanes,
                                const Body& body) {
  tspace<System>::prepare();
  Vector<double> out = Vector<double>::Zero(width);
  if (n <= 0 || width <= 0) return out;
  const index_t grain = wide_grain(n, width, lanes);
  const index_t chunks = onelearn::detail::chunk_count(n, grain);
  // Scratch: every lane zeroes the entries it owns (body.zero).
  auto partials = s.template allocate_scratch<double>(static_cast<std::size_t>(chunks * width));
  double* partial_data = tspace<System>::data(partials);
  for_each_index(s, chunks * lanes,
                 wide_chunk_pass<Body>{body, n, grain, width, lanes, partial_data});
  auto totals = s.template allocate_scratch<double>(static_cast<std::size_t>(width));
  add_partials_in_groups(s, partial_data, chunks, width, tspace<System>::data(totals));
  s.copy_to_host(tspace<System>::data(totals), static_cast<std::size_t>(width), out.data());
  return out;
}

/// A small host array (centres, means, coefficients) in the space: a copy (cheap next to the
/// rows; on the CPU systems too, so that every system runs the same code).
template <class System, class T>
auto small_copy(const tspace<System>& s, const T* values, index_t n) {
  auto b = s.template allocate_scratch<T>(static_cast<std::size_t>(n));
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
/// lloyd_sums_body by lanes (wide_chunked_sum): lane j < p owns column j of every cluster's
/// sum, lane p the counts and the changed labels.
template <class T>
struct lloyd_sums_lanes {
  matrix_view<const T> X;
  const std::int64_t* labels;
  vector_view<const std::int64_t> previous;
  index_t k;
  ONELEARN_SPACE_HD void zero(index_t lane, double* out) const {
    const index_t p = X.cols;
    if (lane < p) {
      for (index_t c = 0; c < k; ++c) out[c * p + lane] = 0;
    } else {
      for (index_t c = 0; c <= k; ++c) out[k * p + c] = 0;
    }
  }
  ONELEARN_SPACE_HD void lane(index_t i, index_t lane, double* out) const {
    const index_t p = X.cols;
    const auto label = static_cast<index_t>(labels[i]);
    if (lane < p) {
      out[label * p + lane] += static_cast<double>(X(i, lane));
    } else {
      out[k * p + label] += 1;
      if (previous.empty() || previous[i] != labels[i]) out[k * p + k] += 1;
    }
  }
};

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

/// One row's weighted loss term, returned, and what multiplies x_i in the gradient, written over
/// its k scores z: w (sigmoid(z) - t) for the binary model (k = 1, t = [y == 1]), otherwise
/// w (softmax(z) - onehot(y)), the log-sum-exp taken from the largest score.
ONELEARN_SPACE_HD inline double logistic_residuals(double* z, index_t k, index_t y, double wi,
                                                   bool binary) {
  if (binary) {
    const double zi = z[0];
    const double t = y == 1 ? 1.0 : 0.0;
    z[0] = wi * (sigmoid(zi) - t);
    return wi * (softplus(zi) - t * zi);
  }
  double top = z[0];
  for (index_t c = 1; c < k; ++c) top = z[c] > top ? z[c] : top;
  double sum = 0;
  for (index_t c = 0; c < k; ++c) sum += ::exp(z[c] - top);
  const double lse = top + ::log(sum);
  const double loss = wi * (lse - z[y]);
  for (index_t c = 0; c < k; ++c) z[c] = wi * ::exp(z[c] - lse);
  z[y] -= wi;
  return loss;
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
    out[0] += logistic_residuals(z, k, y, wi, binary);
    for (index_t c = 0; c < k; ++c) {
      double* g = out + 1 + c * q;
      for (index_t j = 0; j < p; ++j) g[j] += z[c] * static_cast<double>(x[j]);
      if (fit_intercept) g[p] += z[c];
    }
  }
};

// --- Per-row kernels ---------------------------------------------------------------------------

/// The per-row half of logistic_body, one work item per row (the device's form): the loss term
/// into loss[i] and the residuals, what multiplies x_i in the gradient, into R[i * k + c]
/// (binary: R[i] = w (sigmoid(z) - t)).
template <class T>
struct logistic_rows_kernel {
  matrix_view<const T> X;
  vector_view<const index_t> class_of;
  vector_view<const T> w;
  const double* params;  // k x q
  index_t k;
  bool binary;
  bool fit_intercept;
  double* loss;
  double* R;
  ONELEARN_SPACE_HD void operator()(index_t i) const {
    const T* x = X.row(i);
    const index_t p = X.cols;
    const index_t q = p + (fit_intercept ? 1 : 0);
    const double wi = weight_of(w, i);
    const index_t y = class_of[i];
    double* z = R + i * k;
    for (index_t c = 0; c < k; ++c) {
      const double* coef = params + c * q;
      double s = 0;
      for (index_t j = 0; j < p; ++j) s += static_cast<double>(x[j]) * coef[j];
      z[c] = fit_intercept ? s + coef[p] : s;
    }
    loss[i] = logistic_residuals(z, k, y, wi, binary);
  }
};

/// The summing half by lanes (wide_chunked_sum) over [loss, gradient (k x q)]: lane j < p owns
/// column j of every class's gradient, lane p the intercepts (with fit_intercept), the last lane
/// the loss.
struct logistic_lanes_base {
  const double* loss;
  const double* R;
  index_t k;
  index_t p;
  bool fit_intercept;
  [[nodiscard]] ONELEARN_SPACE_HD index_t q() const { return p + (fit_intercept ? 1 : 0); }
  ONELEARN_SPACE_HD void zero(index_t lane, double* out) const {
    if (lane == q()) {
      out[0] = 0;
      return;
    }
    for (index_t c = 0; c < k; ++c) out[1 + c * q() + lane] = 0;
  }
};

template <class T>
struct logistic_lanes : logistic_lanes_base {
  matrix_view<const T> X;
  ONELEARN_SPACE_HD void lane(index_t i, index_t lane, double* out) const {
    const index_t width = q();
    if (lane == width) {
      out[0] += loss[i];
      return;
    }
    const double* r = R + i * k;
    if (lane < p) {
      const double xj = static_cast<double>(X(i, lane));
      for (index_t c = 0; c < k; ++c) out[1 + c * width + lane] += r[c] * xj;
    } else {
      for (index_t c = 0; c < k; ++c) out[1 + c * width + lane] += r[c];
    }
  }
};

/// X(i, j) -= values[j], in T: one work item per entry.
template <class T>
struct subtract_row_kernel {
  matrix_view<T> X;
  const T* values;
  ONELEARN_SPACE_HD void operator()(index_t e) const {
    const index_t i = e / X.cols;
    const index_t j = e % X.cols;
    X(i, j) -= values[j];
  }
};

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

/// Centres c0 .. c0 + m - 1, given their dot products with a row: keeps the nearest so far in
/// (best, best_value) by ||c||^2 - 2 x.c, the first on ties (the first centre of all is taken
/// whatever its value).
template <class T>
ONELEARN_SPACE_HD void keep_nearest_of_tile(const T* dot, index_t m, index_t c0, const T* c_norms,
                                            index_t& best, T& best_value) {
  for (index_t t = 0; t < m; ++t) {
    const T value = c_norms[c0 + t] - T(2) * dot[t];
    if (c0 + t == 0 || value < best_value) {
      best_value = value;
      best = c0 + t;
    }
  }
}

/// labels[i] = argmin_j ||c_j||^2 - 2 x_i.c_j (the first on ties), in T.
template <class T>
struct nearest_kernel {
  matrix_view<const T> X;
  matrix_view<const T> C;
  const T* c_norms;
  std::int64_t* labels;
  // Centres a few at a time, each dot product still summed over j in order: one read of x's
  // feature serves `tile` centres (held in registers), instead of one read per centre.
  static constexpr index_t tile = 16;
  ONELEARN_SPACE_HD void operator()(index_t i) const {
    const T* x = X.row(i);
    index_t best = C.rows > 0 ? 0 : -1;
    T best_value = 0;
    for (index_t c0 = 0; c0 < C.rows; c0 += tile) {
      const index_t m = C.rows - c0 < tile ? C.rows - c0 : tile;
      T dot[tile] = {};
      for (index_t j = 0; j < X.cols; ++j) {
        const T xj = x[j];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
        for (index_t t = 0; t < tile; ++t) {
          if (t < m) dot[t] += xj * C(c0 + t, j);
        }
      }
      keep_nearest_of_tile(dot, m, c0, c_norms, best, best_value);
    }
    labels[i] = static_cast<std::int64_t>(best);
  }
};

static_assert(nearest_kernel_cpu<double>::tile == nearest_kernel<double>::tile);

/// lloyd_step's CPU form: the labels of a few rows (nearest_kernel_cpu) computed just before
/// those rows are added to their clusters' sums (lloyd_sums_body), in one pass over the rows,
/// while they are in cache; the same labels and sums as two passes. (A chunk_pass body with
/// rows(): it takes its chunk's rows as ranges.)
template <class T>
struct assign_and_sum_cpu_body {
  nearest_kernel_cpu<T> assign;
  lloyd_sums_body<T> add;
  static constexpr index_t group = 32;
  void rows(index_t begin, index_t end, double* out, double* scratch) const {  // host only
    for (index_t g = begin; g < end; g += group) {
      const index_t g_end = g + group < end ? g + group : end;
      assign.assign_rows(g, g_end);
      for (index_t i = g; i < g_end; ++i) add(i, out, scratch);
    }
  }
};

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
/// sum_j (a_j - b_j)^2 in double, subtracting first, in j order, with no fused multiply-add
/// (the host computes it so too): the same bits in every space. a_j is a[j * a_step].
/// sum + d * d, rounded twice on a device too (no fused multiply-add), as the host computes it.
ONELEARN_SPACE_HD inline double add_square(double sum, double d) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(sum, __dmul_rn(d, d));
#else
  sum += d * d;
  return sum;
#endif
}

template <class T>
ONELEARN_SPACE_HD double exact_squared_distance(const T* a, index_t a_step, const T* b, index_t p) {
  double sum = 0;
  for (index_t j = 0; j < p; ++j) {
    sum = add_square(sum, static_cast<double>(a[j * a_step]) - static_cast<double>(b[j]));
  }
  return sum;
}

template <class T>
ONELEARN_SPACE_HD double exact_squared_distance(const T* a, const T* b, index_t p) {
  return exact_squared_distance(a, 1, b, p);
}

/// out[j * rows + i] = X(i, j): the queries feature-major, so that the work items of a warp (one
/// query each) read a feature of their queries from consecutive addresses.
template <class T>
struct transpose_kernel {
  matrix_view<const T> X;
  T* out;
  ONELEARN_SPACE_HD void operator()(index_t e) const {
    const index_t j = e / X.rows;
    const index_t i = e % X.rows;
    out[j * X.rows + i] = X(i, j);
  }
};

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
/// Ordering of candidate neighbours: by squared distance, then by row.
ONELEARN_SPACE_HD inline bool neighbour_after(const double* d, const std::int64_t* id, index_t a,
                                              index_t b) {
  return d[a] > d[b] || (d[a] == d[b] && id[a] > id[b]);
}
ONELEARN_SPACE_HD inline void neighbour_swap(double* d, std::int64_t* id, index_t a, index_t b) {
  const double td = d[a];
  d[a] = d[b];
  d[b] = td;
  const std::int64_t ti = id[a];
  id[a] = id[b];
  id[b] = ti;
}
/// The max-heap (by neighbour_after) of `size` candidates at d, id: restore it below `at`.
ONELEARN_SPACE_HD inline void neighbour_sift_down(double* d, std::int64_t* id, index_t at,
                                                  index_t size) {
  for (;;) {
    const index_t left = 2 * at + 1;
    if (left >= size) return;
    index_t top = left;
    if (left + 1 < size && neighbour_after(d, id, left + 1, left)) top = left + 1;
    if (!neighbour_after(d, id, top, at)) return;
    neighbour_swap(d, id, top, at);
    at = top;
  }
}
/// Adds (s, j) to the heap of at most k nearest, which holds `size` of them; returns the new size.
ONELEARN_SPACE_HD inline index_t neighbour_offer(double* d, std::int64_t* id, index_t size,
                                                 index_t k, double s, std::int64_t j) {
  if (size < k) {
    index_t at = size++;
    d[at] = s;
    id[at] = j;
    while (at > 0 && neighbour_after(d, id, at, (at - 1) / 2)) {
      neighbour_swap(d, id, at, (at - 1) / 2);
      at = (at - 1) / 2;
    }
  } else if (s < d[0] || (s == d[0] && j < id[0])) {
    d[0] = s;
    id[0] = j;
    neighbour_sift_down(d, id, 0, k);
  }
  return size;
}
/// The heap of `size` candidates sorted in place, nearest first.
ONELEARN_SPACE_HD inline void neighbour_sort(double* d, std::int64_t* id, index_t size) {
  for (index_t last = size - 1; last > 0; --last) {
    neighbour_swap(d, id, 0, last);
    neighbour_sift_down(d, id, 0, last);
  }
}

/// Up to this k, the search keeps a work item's heap in its own (local) memory and writes it out
/// once: in global memory every sift of the heap is a round trip to L2. With the query held in
/// registers (search_in_registers) the search of 5k queries in 20k x 32 went from 4.7 to 2.7 ms
/// on an H100 (ncu). The merge of the segments' candidates (0.37 ms there, on 10 blocks of
/// threads) gained nothing from it and keeps its heap in the output.
inline constexpr index_t local_heap_k = 16;

/// The k nearest rows of segment `s` of X (rows [s * segment_rows, ...)) to query q, work item
/// e = s * queries + q (so that a warp's queries read the same training row together), sorted,
/// at (q * segments + s) * k; slots left over (a segment of fewer than k rows) get row -1. With
/// one segment this is the whole search.
template <class T>
struct nearest_k_kernel {
  matrix_view<const T> X;
  /// Query q's feature f is queries[q * query_step + f * feature_step]: row-major (stride, 1),
  /// or feature-major (1, number of queries) as transpose_kernel writes them.
  const T* queries;
  index_t n_queries;
  index_t query_step;
  index_t feature_step;
  index_t k;
  index_t segments;
  index_t segment_rows;
  double* distances;
  std::int64_t* indices;

  ONELEARN_SPACE_HD void operator()(index_t e) const {
    const index_t q = e % n_queries;
    const index_t segment = e / n_queries;
    double* out_d = distances + (q * segments + segment) * k;
    std::int64_t* out_id = indices + (q * segments + segment) * k;
    // The heap in the work item's own memory while it is built (see local_heap_k).
    double own_d[local_heap_k];
    std::int64_t own_id[local_heap_k];
    double* d = k <= local_heap_k ? own_d : out_d;
    std::int64_t* id = k <= local_heap_k ? own_id : out_id;
    const T* query = queries + q * query_step;
    const index_t begin = segment * segment_rows;
    const index_t end = begin + segment_rows < X.rows ? begin + segment_rows : X.rows;
    index_t size = 0;
    if (X.cols <= 16) {
      size = search_in_registers<16>(query, d, id, begin, end);
    } else if (X.cols <= 32) {
      size = search_in_registers<32>(query, d, id, begin, end);
    } else if (X.cols <= 64) {
      size = search_in_registers<64>(query, d, id, begin, end);
    } else {
      for (index_t j = begin; j < end; ++j) {
        size = neighbour_offer(d, id, size, k,
                               exact_squared_distance(query, feature_step, X.row(j), X.cols), j);
      }
    }
    neighbour_sort(d, id, size);
    for (index_t t = 0; t < k; ++t) {
      out_d[t] = t < size ? d[t] : 0;
      out_id[t] = t < size ? id[t] : -1;
    }
  }

  /// Rows [begin, end) offered to the heap at d/id, with the query's p <= P features read once
  /// into registers (the loops unrolled to P on a device) instead of once per row, a load from L2
  /// per feature and row before (see local_heap_k for the time). The same differences, added in
  /// the same order, as exact_squared_distance.
  template <index_t P>
  ONELEARN_SPACE_HD index_t search_in_registers(const T* query, double* d, std::int64_t* id,
                                                index_t begin, index_t end) const {
    const index_t p = X.cols;
    double held[P];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (index_t f = 0; f < P; ++f) {
      held[f] = f < p ? static_cast<double>(query[f * feature_step]) : 0.0;
    }
    index_t size = 0;
    for (index_t j = begin; j < end; ++j) {
      const T* x = X.row(j);
      double sum = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (index_t f = 0; f < P; ++f) {
        if (f < p) sum = add_square(sum, held[f] - static_cast<double>(x[f]));
      }
      size = neighbour_offer(d, id, size, k, sum, j);
    }
    return size;
  }
};

/// Each query's k nearest among its segments' candidates (nearest_k_kernel's output), sorted,
/// at q * k: the same rows in the same order as one pass over all rows, since (distance, row)
/// orders the candidates totally.
struct merge_neighbours_kernel {
  const double* candidate_distances;
  const std::int64_t* candidate_indices;
  index_t segments;
  index_t k;
  double* distances;
  std::int64_t* indices;

  ONELEARN_SPACE_HD void operator()(index_t q) const {
    double* d = distances + q * k;
    std::int64_t* id = indices + q * k;
    index_t size = 0;
    for (index_t c = q * segments * k; c < (q + 1) * segments * k; ++c) {
      if (candidate_indices[c] >= 0) {
        size = neighbour_offer(d, id, size, k, candidate_distances[c], candidate_indices[c]);
      }
    }
    neighbour_sort(d, id, size);
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
void subtract_from_rows(const thrust_space<System>& s, matrix_view<T> X, const Vector<T>& values) {
  using S = thrust_space<System>;
  S::prepare();
  if (X.rows == 0 || X.cols == 0) return;
  const auto v = detail::small_copy(s, values.data(), values.size());
  detail::for_each_index(s, X.rows * X.cols, detail::subtract_row_kernel<T>{X, S::data(v)});
}

template <class System, class T>
matrix<thrust_space<System>, T> pairwise_squared_distances(const thrust_space<System>& s,
                                                           matrix_view<const T> X,
                                                           matrix_view<const T> Y) {
  using S = thrust_space<System>;
  matrix<S, T> out(s, X.rows, Y.rows);
  if (X.rows == 0 || Y.rows == 0) return out;
  auto x_norms = s.template allocate_scratch<T>(static_cast<std::size_t>(X.rows));
  auto y_norms = s.template allocate_scratch<T>(static_cast<std::size_t>(Y.rows));
  detail::for_each_index(s, X.rows, detail::squared_norms_kernel<T>{X, S::data(x_norms)});
  detail::for_each_index(s, Y.rows, detail::squared_norms_kernel<T>{Y, S::data(y_norms)});
  detail::for_each_index(s, X.rows * Y.rows,
                         detail::pairwise_kernel<T>{X, Y, S::data(x_norms), S::data(y_norms),
                                                    out.mutable_view().data});
  return out;
}

namespace detail {

/// Centres padded to whole tiles of nearest_kernel_cpu.
template <class T>
index_t padded_centres(index_t k) {
  constexpr index_t tile = nearest_kernel_cpu<T>::tile;
  return (k + tile - 1) / tile * tile;
}

/// The centres as nearest_kernel_cpu reads them, in the space: feature-major with
/// padded_centres(k) columns (zero past k), then their squared norms (computed as the host
/// does, by Eigen in T, so that both compare the same values).
template <class System, class T>
auto feature_major_centres(const thrust_space<System>& s, const host_rows<T>& centers) {
  const index_t k = centers.rows();
  const index_t p = centers.cols();
  const index_t k_pad = padded_centres<T>(k);
  Vector<T> packed = Vector<T>::Zero(p * k_pad + k);
  Eigen::Map<Matrix<T>>(packed.data(), p, k_pad).leftCols(k) = centers.transpose();
  packed.tail(k) = centers.rowwise().squaredNorm();
  return small_copy(s, packed.data(), packed.size());
}

/// nearest_kernel_cpu over `packed` (feature_major_centres' copy of `centers`).
template <class T>
nearest_kernel_cpu<T> cpu_assignment(matrix_view<const T> X, const host_rows<T>& centers,
                                     const T* packed, std::int64_t* labels) {
  const index_t k = centers.rows();
  const index_t k_pad = padded_centres<T>(k);
  return {X, packed, k, k_pad, packed + centers.cols() * k_pad, labels};
}

}  // namespace detail

template <class System, class T>
void nearest_rows(const thrust_space<System>& s, matrix_view<const T> X,
                  const host_rows<T>& centers, vector_view<std::int64_t> labels) {
  using S = thrust_space<System>;
  S::prepare();
  if (X.rows == 0) return;
  // The centres' norms as the host computes them (Eigen, in T), so both compare the same values;
  // after the centres in one copy (a Lloyd step asks for this once per iteration).
  const index_t k = centers.rows();
  const index_t p = centers.cols();
  if constexpr (detail::threaded_cpu<System>) {
    const auto c = detail::feature_major_centres<System, T>(s, centers);
    detail::for_each_index(
        s, onelearn::detail::chunk_count(X.rows, detail::nearest_kernel_cpu<T>::block),
        detail::cpu_assignment(X, centers, S::data(c), labels.data));
    return;
  }
  Vector<T> packed(k * p + k);
  Eigen::Map<Matrix<T>>(packed.data(), k, p) = centers;
  packed.tail(k) = centers.rowwise().squaredNorm();
  const auto c = detail::small_copy(s, packed.data(), packed.size());
  const matrix_view<const T> C{S::data(c), k, p, p};
  detail::for_each_index(s, X.rows,
                         detail::nearest_kernel<T>{X, C, S::data(c) + k * p, labels.data});
}

namespace detail {

/// lloyd_step: on the threaded CPU systems the assignment and the sums in one pass
/// (assign_and_sum_cpu_body); otherwise the assignment, then the sums by rows (one work item
/// per chunk, the host's chunks: thrust_cpp) or by lanes (wide_chunked_sum: the device's form).
template <class System, class T>
lloyd_sums lloyd_step_as(const thrust_space<System>& s, matrix_view<const T> X,
                         const host_rows<T>& centers, vector_view<std::int64_t> labels,
                         vector_view<const std::int64_t> previous, bool by_lanes) {
  const index_t k = centers.rows();
  const index_t p = X.cols;
  const index_t width = k * p + k + 1;
  Vector<double> total;
  if constexpr (threaded_cpu<System>) {
    thrust_space<System>::prepare();
    const auto c = feature_major_centres<System, T>(s, centers);
    total = chunked_sum(s, X.rows, width, 0,
                        assign_and_sum_cpu_body<T>{
                            cpu_assignment(X, centers, thrust_space<System>::data(c), labels.data),
                            {X, labels.data, previous, k}});
  } else {
    nearest_rows(s, X, centers, labels);
    total = by_lanes
                ? wide_chunked_sum(s, X.rows, width, p + 1,
                                   lloyd_sums_lanes<T>{X, labels.data, previous, k})
                : chunked_sum(s, X.rows, width, 0, lloyd_sums_body<T>{X, labels.data, previous, k});
  }
  lloyd_sums out;
  out.sums = Eigen::Map<const Matrix<double>>(total.data(), k, p);
  out.counts = total.segment(k * p, k);
  out.changed = total(k * p + k);
  return out;
}

}  // namespace detail

/// The threaded CPU systems' chunk loop for host algorithms that such a system runs whole, on
/// the host's rows (host_accessible): KMeans's Lloyd iterations with Hamerly's bounds
/// (cluster/detail/kmeans_space.hpp), whose row-by-row skipping pays on a CPU. Defined only for
/// thrust_omp and thrust_tbb; a device (and thrust_cpp, which keeps the device's forms) runs
/// the kernels above.
template <class System>
requires detail::threaded_cpu<System> detail::system_chunks<System> chunk_loop(
    const thrust_space<System>& s) {
  return {&s};
}

template <class System, class T>
lloyd_sums lloyd_step(const thrust_space<System>& s, matrix_view<const T> X,
                      const host_rows<T>& centers, vector_view<std::int64_t> labels,
                      vector_view<const std::int64_t> previous) {
  return detail::lloyd_step_as(s, X, centers, labels, previous, thrust_space<System>::is_device);
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

namespace detail {

/// nearest_k with the rows of X cut into `segments` (each searched for every query by its own
/// work item, then one merge per query): the same neighbours as one pass, with segments x queries
/// work items, enough to fill a device when the queries alone are too few. Segments hold at
/// least k rows. With `feature_major` the queries are read from a feature-major copy.
template <class System, class T>
neighbours nearest_k_in_segments(const thrust_space<System>& s, matrix_view<const T> X,
                                 matrix_view<const T> queries, index_t k, index_t segments,
                                 bool feature_major) {
  using S = thrust_space<System>;
  S::prepare();
  neighbours out;
  const index_t k_local = std::min(k, X.rows);
  out.resize(queries.rows, k_local);
  if (k_local <= 0 || queries.rows == 0) return out;
  const index_t segment_rows =
      std::max(k_local, onelearn::detail::chunk_count(X.rows, std::max<index_t>(segments, 1)));
  segments = onelearn::detail::chunk_count(X.rows, segment_rows);
  const auto size = static_cast<std::size_t>(queries.rows * k_local);
  auto d = s.template allocate<double>(size);
  auto id = s.template allocate<std::int64_t>(size);
  // Feature-major queries (a small copy) for a device, whose warps read them together.
  typename S::template buffer<T> transposed;
  nearest_k_kernel<T> search{X,       queries.data, queries.rows, queries.stride, 1,
                             k_local, segments,     segment_rows, S::data(d),     S::data(id)};
  if (feature_major) {
    transposed = s.template allocate<T>(static_cast<std::size_t>(queries.rows * queries.cols));
    for_each_index(s, queries.rows * queries.cols,
                   transpose_kernel<T>{queries, S::data(transposed)});
    search.queries = S::data(transposed);
    search.query_step = 1;
    search.feature_step = queries.rows;
  }
  if (segments == 1) {
    for_each_index(s, queries.rows, search);
  } else {
    const auto candidates = size * static_cast<std::size_t>(segments);
    auto cd = s.template allocate<double>(candidates);
    auto cid = s.template allocate<std::int64_t>(candidates);
    search.distances = S::data(cd);
    search.indices = S::data(cid);
    for_each_index(s, queries.rows * segments, search);
    for_each_index(s, queries.rows,
                   merge_neighbours_kernel{S::data(cd), S::data(cid), segments, k_local, S::data(d),
                                           S::data(id)});
  }
  s.copy_to_host(S::data(d), size, out.distances.data());
  s.copy_to_host(S::data(id), size, out.indices.data());
  return out;
}

}  // namespace detail

namespace detail {

/// nearest_k on the threaded CPU systems: chunks of queries as work items, each searched by the
/// host's GEMM screen (thrust_cpu_forms.hpp).
template <class System, class T>
neighbours nearest_k_by_query_chunks(const thrust_space<System>& s, matrix_view<const T> X,
                                     matrix_view<const T> queries, index_t k) {
  thrust_space<System>::prepare();
  neighbours out;
  const index_t k_local = std::min(k, X.rows);
  out.resize(queries.rows, k_local);
  if (k_local <= 0 || queries.rows == 0) return out;
  const Vector<T> mean = eigen(X).colwise().mean().transpose();
  const index_t grain = onelearn::detail::fixed_chunks(
      queries.rows, onelearn::detail::knn_query_block, onelearn::detail::knn_max_query_chunks);
  for_each_index(s, onelearn::detail::chunk_count(queries.rows, grain),
                 nearest_k_chunk_cpu<T>{X, queries, &mean, k_local, grain, out.distances.data(),
                                        out.indices.data()});
  return out;
}

}  // namespace detail

template <class System, class T>
neighbours nearest_k(const thrust_space<System>& s, matrix_view<const T> X,
                     matrix_view<const T> queries, index_t k) {
  if constexpr (detail::threaded_cpu<System>) {
    return detail::nearest_k_by_query_chunks(s, X, queries, k);
  }
  // A device: about 2^17 work items, segments of at least 64 rows. CPU systems: one pass per
  // query (their threads are few; the queries already fill them).
  index_t segments = 1;
  if constexpr (thrust_space<System>::is_device) {
    const index_t wanted =
        onelearn::detail::chunk_count(index_t{1} << 17, std::max<index_t>(queries.rows, 1));
    segments = std::max<index_t>(1, std::min(wanted, X.rows / std::max<index_t>(k, 64)));
  }
  return detail::nearest_k_in_segments(s, X, queries, k, segments, thrust_space<System>::is_device);
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
#include "onelearn/space/detail/cublas_logistic.hpp"
#endif

namespace onelearn::space {

/// sum_i w_i x~_i x~_i^T (lower triangle), and with y: x~^T y~ and y~^T y~, in double, as the
/// host's gram(). Each system with its BLAS where it has one: CUDA by cuBLAS (syrk) unless
/// ONELEARN_NO_CUBLAS is defined; omp and tbb, on the host's memory, by the host's blocked
/// rank-k update (Eigen, on OpenMP threads). Thrust has no BLAS, and its reduction's rank-1
/// update row by row runs about 5x slower on this project's two cores (Ridge's fit on 500k x 64:
/// 0.74 s against 0.135 s). thrust_cpp keeps the reduction: the device's portable form, which
/// every test run thereby checks.
template <class System, class T>
gram_sums gram(const thrust_space<System>& s, matrix_view<const T> X, vector_view<const T> y,
               vector_view<const T> weights, double weight_scale, const Vector<double>& x_mean,
               double y_mean) {
  if constexpr (detail::threaded_cpu<System>) {
    return gram(host{}, X, y, weights, weight_scale, x_mean, y_mean);
#if defined(ONELEARN_SPACE_HAVE_CUDA) && !defined(ONELEARN_NO_CUBLAS)
  } else if constexpr (std::is_same_v<System, system::cuda>) {
    return detail::gram_by_cublas(s, X, y, weights, weight_scale, x_mean, y_mean);
#endif
  } else {
    return gram_by_reduction(s, X, y, weights, weight_scale, x_mean, y_mean);
  }
}

namespace detail {

/// logistic_loss_gradient in one pass of a work item per chunk (the CPU systems' form), or in
/// two (the device's form): a work item per row for the logits, loss and residuals, then the
/// sums by lanes (wide_chunked_sum).
template <class System, class T>
double logistic_loss_gradient_as(const thrust_space<System>& s, matrix_view<const T> X,
                                 vector_view<const index_t> class_of, vector_view<const T> weights,
                                 bool binary, bool fit_intercept, const MatrixRef<double>& params,
                                 Eigen::Ref<Matrix<double>> grad, bool by_lanes) {
  using S = thrust_space<System>;
  S::prepare();
  const index_t k = params.rows();
  const index_t q = params.cols();
  const auto coef = small_matrix<System, double>(s, params);
  Vector<double> total;
  if (!by_lanes) {
    total = chunked_sum(
        s, X.rows, 1 + k * q, k,
        logistic_body<T>{X, class_of, weights, S::data(coef), k, binary, fit_intercept});
  } else {
    auto loss = s.template allocate_scratch<double>(static_cast<std::size_t>(X.rows));
    auto residuals = s.template allocate_scratch<double>(static_cast<std::size_t>(X.rows * k));
    for_each_index(s, X.rows,
                   logistic_rows_kernel<T>{X, class_of, weights, S::data(coef), k, binary,
                                           fit_intercept, S::data(loss), S::data(residuals)});
    const logistic_lanes<T> lanes{{S::data(loss), S::data(residuals), k, X.cols, fit_intercept}, X};
    total = wide_chunked_sum(s, X.rows, 1 + k * q, q + 1, lanes);
  }
  grad = Eigen::Map<const Matrix<double>>(total.data() + 1, k, q);
  return total(0);
}

/// logistic_loss_gradient on the threaded CPU systems: the host's chunks as work items, each
/// with the host's products (thrust_cpu_forms.hpp), the partials added in chunk order.
template <class System, class T>
double logistic_by_chunks(const thrust_space<System>& s, matrix_view<const T> X,
                          vector_view<const index_t> class_of, vector_view<const T> weights,
                          bool binary, bool fit_intercept, const MatrixRef<double>& params,
                          Eigen::Ref<Matrix<double>> grad) {
  using S = thrust_space<System>;
  S::prepare();
  const index_t k = params.rows();
  const index_t q = params.cols();
  const index_t width = 1 + k * q;
  const Matrix<double> coefficients = params;  // compact, row-major
  const index_t grain = onelearn::detail::fixed_chunks(X.rows, onelearn::detail::logistic_block,
                                                       onelearn::detail::max_partials);
  const index_t chunks = onelearn::detail::chunk_count(X.rows, grain);
  Vector<double> total = Vector<double>::Zero(width);
  if (chunks > 0) {
    auto partials = s.template allocate_scratch<double>(static_cast<std::size_t>(chunks * width));
    for_each_index(s, chunks,
                   logistic_chunk_cpu<T>{X, class_of, weights, coefficients.data(), k, q, binary,
                                         fit_intercept, grain, S::data(partials)});
    auto totals = s.template allocate_scratch<double>(static_cast<std::size_t>(width));
    add_partials_in_groups(s, S::data(partials), chunks, width, S::data(totals));
    s.copy_to_host(S::data(totals), static_cast<std::size_t>(width), total.data());
  }
  grad = Eigen::Map<const Matrix<double>>(total.data() + 1, k, q);
  return total(0);
}

}  // namespace detail

template <class System, class T>
double logistic_loss_gradient(const thrust_space<System>& s, matrix_view<const T> X,
                              vector_view<const index_t> class_of, vector_view<const T> weights,
                              bool binary, bool fit_intercept, const MatrixRef<double>& params,
                              Eigen::Ref<Matrix<double>> grad) {
#if defined(ONELEARN_SPACE_HAVE_CUDA) && !defined(ONELEARN_NO_CUBLAS)
  // Double rows on CUDA: two GEMMs by cuBLAS (detail/cublas_logistic.hpp).
  if constexpr (std::is_same_v<System, system::cuda> && std::is_same_v<T, double>) {
    if (detail::fits_cublas(X.rows, X.cols, params.rows(), X.stride)) {
      return detail::logistic_by_cublas(s, X, class_of, weights, binary, fit_intercept, params,
                                        grad);
    }
  }
#endif
  if constexpr (detail::threaded_cpu<System>) {
    return detail::logistic_by_chunks(s, X, class_of, weights, binary, fit_intercept, params, grad);
  }
  return detail::logistic_loss_gradient_as(s, X, class_of, weights, binary, fit_intercept, params,
                                           grad, thrust_space<System>::is_device);
}

}  // namespace onelearn::space

#endif  // ONELEARN_SPACE_HAVE_THRUST
