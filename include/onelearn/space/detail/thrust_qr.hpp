#pragma once
// LinearRegression's tall-skinny QR on a Thrust system, in the device's form (thrust_cpp and
// thrust_cuda; the threaded CPU systems run the host's Householder QR on chunks of rows, in
// linear_model/linear_regression.hpp). Private: include space/space.hpp.
//   qr_triangles   per chunk of rows, the triangle R of the QR factorisation of its centred,
//                  weighted rows [sqrt(w) (x - x_mean), sqrt(w) (y - y_mean)]: m x m, m = p + 1,
//                  upper; stacked in chunk order, (chunks x m) x m, to the host
// The stack has the least-squares problem of all the rows (each chunk's rows are Q_c R_c), so
// the estimator factorises it once more on the host and goes on as with the host's triangle.
//
// Work item c folds its rows into R_c one at a time by Givens rotations (one row's m values in
// scratch, R_c in place): no chunk-sized buffer, and the same code on a CPU thread and a device
// thread. In double whatever T is. Not cuSOLVER's blocked QR (geqrf), which would use the
// device far better; one thread per chunk is the plain Thrust form of the other kernels.

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/space/data.hpp"
#include "onelearn/space/detail/thrust_kernels.hpp"
#include "onelearn/space/thrust.hpp"

#if defined(ONELEARN_SPACE_HAVE_THRUST)

namespace onelearn::space {
namespace detail {

/// sqrt(a^2 + b^2) without overflow or underflow in the squares.
ONELEARN_SPACE_HD inline double scaled_hypot(double a, double b) {
  const double x = a < 0 ? -a : a;
  const double y = b < 0 ? -b : b;
  const double big = x > y ? x : y;
  if (big == 0) return 0;
  const double small = (x > y ? y : x) / big;
  return big * ::sqrt(1.0 + small * small);
}

/// Folds row v (m values, overwritten) into the upper triangle R (m x m, row-major): afterwards
/// R^T R has grown by v v^T, as for the QR factorisation of the rows seen so far plus v.
ONELEARN_SPACE_HD inline void fold_row(double* R, double* v, index_t m) {
  for (index_t j = 0; j < m; ++j) {
    const double b = v[j];
    if (b == 0) continue;
    double* row = R + j * m;
    const double r = scaled_hypot(row[j], b);
    const double c = row[j] / r;
    const double s = b / r;
    row[j] = r;
    for (index_t k = j + 1; k < m; ++k) {
      const double t = row[k];
      const double u = v[k];
      row[k] = c * t + s * u;
      v[k] = c * u - s * t;
    }
  }
}

template <class T>
struct chunk_triangle {
  matrix_view<const T> X;
  const T* y;
  const T* weights;  ///< null: every weight 1
  const double* x_mean;
  double y_mean;
  index_t grain;
  double* triangles;  ///< chunk c's at c * m * m
  double* rows;       ///< chunk c's row at c * m

  ONELEARN_SPACE_HD void operator()(index_t chunk) const {
    const index_t p = X.cols;
    const index_t m = p + 1;
    double* R = triangles + chunk * m * m;
    double* v = rows + chunk * m;
    for (index_t k = 0; k < m * m; ++k) R[k] = 0.0;
    const index_t begin = chunk * grain;
    const index_t end = begin + grain < X.rows ? begin + grain : X.rows;
    for (index_t i = begin; i < end; ++i) {
      const double scale = weights != nullptr ? ::sqrt(static_cast<double>(weights[i])) : 1.0;
      const T* x = X.row(i);
      for (index_t j = 0; j < p; ++j) v[j] = (static_cast<double>(x[j]) - x_mean[j]) * scale;
      v[p] = (static_cast<double>(y[i]) - y_mean) * scale;
      fold_row(R, v, m);
    }
  }
};

}  // namespace detail

/// The chunks' triangles of the QR factorisation of the centred, weighted rows [X y], stacked
/// in chunk order on the host: (chunks x (p + 1)) x (p + 1), row-major, each upper triangular
/// (rows of zeros where a chunk has fewer rows than p + 1). `weights` empty: every weight 1.
template <class System, class T>
Matrix<double> qr_triangles(const thrust_space<System>& s, matrix_view<const T> X,
                            vector_view<const T> y, vector_view<const T> weights,
                            const Vector<double>& x_mean, double y_mean) {
  using S = thrust_space<System>;
  S::prepare();
  const index_t m = X.cols + 1;
  if (X.rows == 0) return Matrix<double>(0, m);
  // CPU (thrust_cpp): at most max_partials chunks. Device: chunks of at least 4m rows (so the
  // triangles hold far fewer rows than the data), at most 1024 of them, for the host's QR of
  // the stack.
  const index_t max_chunks = S::is_device ? 1024 : onelearn::detail::max_partials;
  const index_t min_grain = std::max<index_t>(S::is_device ? 4 * m : 256, 1);
  const index_t wanted =
      std::clamp<index_t>(onelearn::detail::chunk_count(X.rows, min_grain), 1, max_chunks);
  const index_t grain = onelearn::detail::chunk_count(X.rows, wanted);
  const index_t chunks = onelearn::detail::chunk_count(X.rows, grain);
  const auto mean = detail::small_copy<System, double>(s, x_mean.data(), X.cols);
  auto triangles = s.template allocate_scratch<double>(static_cast<std::size_t>(chunks * m * m));
  auto rows = s.template allocate_scratch<double>(static_cast<std::size_t>(chunks * m));
  detail::for_each_index(
      s, chunks,
      detail::chunk_triangle<T>{X, y.data, weights.empty() ? nullptr : weights.data,
                                S::data(mean), y_mean, grain, S::data(triangles), S::data(rows)});
  Matrix<double> out(chunks * m, m);
  s.copy_to_host(S::data(triangles), static_cast<std::size_t>(chunks * m * m), out.data());
  return out;
}

}  // namespace onelearn::space

#endif  // ONELEARN_SPACE_HAVE_THRUST
