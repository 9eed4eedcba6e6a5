#pragma once
// The equality checks of the compute spaces, shared by unit/test_spaces.cpp (the CPU Thrust
// systems, with g++ and Debian's Thrust) and cuda/test_spaces_cuda.cu (the CUDA system, with
// nvcc and CUDA's Thrust): every kernel of a space against space::host's on the same data.
//
// Tolerances: double 1e-12, float 1e-5, relative to the largest entry of the host's result
// (norm-wise: an entry that cancels to near zero is compared at the scale of the others, which
// is the accuracy the summation order allows). The k nearest neighbours must be the same rows
// with the same distances, bit for bit. nearest_rows' labels must agree except at near-ties
// (two centres whose values differ by less than the rounding of the expansion), where the
// space's choice must be as near as the host's to within that rounding.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "onelearn/space/space.hpp"

namespace onelearn::space_test {

namespace space = onelearn::space;

inline constexpr std::uint64_t seed = 20240519;

template <class T>
constexpr double tolerance() {
  return std::is_same_v<T, float> ? 1e-5 : 1e-12;
}

/// max |a - b| <= tol * max(max |b|, tiny), with a message naming `what`.
template <class A, class B>
void check_close(const char* what, const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b,
                 double tol) {
  INFO(what);
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  if (a.size() == 0) return;
  const auto ad = a.template cast<double>();
  const auto bd = b.template cast<double>();
  const double scale = std::max(bd.cwiseAbs().maxCoeff(), 1e-300);
  const double error = (ad - bd).cwiseAbs().maxCoeff();
  INFO("max error ", error, " at scale ", scale);
  CHECK(error <= tol * scale);
}

inline void check_close(const char* what, double a, double b, double tol) {
  INFO(what, ": ", a, " against the host's ", b);
  CHECK(std::abs(a - b) <= tol * std::max(std::abs(b), 1e-300));
}

/// Random data for the checks: rows around an offset (so that centring matters), positive
/// weights, k classes, and a few duplicated rows (exact ties for the nearest neighbours).
template <class T>
struct Data {
  Matrix<T> X;
  Vector<T> y;
  Vector<T> w;
  std::vector<index_t> class_of;
  index_t k = 3;
};

template <class T>
Data<T> make_data(index_t n, index_t p, index_t k, std::uint64_t salt) {
  std::mt19937_64 rng(seed + salt);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.1, 2.0);
  Data<T> d;
  d.k = k;
  d.X.resize(n, p);
  d.y.resize(n);
  d.w.resize(n);
  d.class_of.resize(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) {
    const auto c = static_cast<index_t>(rng() % static_cast<std::uint64_t>(k));
    d.class_of[static_cast<std::size_t>(i)] = c;
    for (index_t j = 0; j < p; ++j) {
      d.X(i, j) = static_cast<T>(3.0 + 2.0 * static_cast<double>(c) + normal(rng));
    }
    d.y(i) = static_cast<T>(normal(rng));
    d.w(i) = static_cast<T>(uniform(rng));
  }
  // Every class present once n >= k (classes index rows of results on both sides alike anyway).
  for (index_t c = 0; c < std::min(n, k); ++c) d.class_of[static_cast<std::size_t>(c)] = c;
  // Duplicates: row 2i+1 copies row i for a few rows.
  for (index_t i = 0; 2 * i + 1 < std::min<index_t>(n, 40); ++i) d.X.row(2 * i + 1) = d.X.row(i);
  return d;
}

template <class S, class T>
space::vector<S, T> values_in(const S& s, const Vector<T>& v) {
  return space::to_space(s, std::span<const T>(v.data(), static_cast<std::size_t>(v.size())));
}

template <class S>
space::vector<S, index_t> indices_in(const S& s, const std::vector<index_t>& v) {
  return space::to_space(s, std::span<const index_t>(v));
}

/// Every kernel of space S against space::host's, on n x p data with k classes or clusters.
template <class S, class T>
void check_kernels(const S& s, index_t n, index_t p, index_t k) {
  INFO("space ", S::name, ", ", std::string(sizeof(T) == 4 ? "float" : "double"), ", n = ", n, ", p = ", p,
       ", k = ", k, ", seed ", seed);
  const double tol = tolerance<T>();
  const space::host h;
  const Data<T> d = make_data<T>(n, p, k, static_cast<std::uint64_t>(n * 131 + p * 7 + k));

  const auto Xh = space::to_space(h, MatrixRef<T>(d.X));
  const auto Xs = space::to_space(s, MatrixRef<T>(d.X));
  const auto wh = values_in(h, d.w);
  const auto ws = values_in(s, d.w);
  const auto yh = values_in(h, d.y);
  const auto ys = values_in(s, d.y);
  const auto ch = indices_in(h, d.class_of);
  const auto cs = indices_in(s, d.class_of);
  const space::vector_view<const T> none{};

  // Column moments.
  for (const bool weighted : {false, true}) {
    INFO((weighted ? "weighted" : "unweighted"));
    const Vector<double> sums_h = space::column_sums(h, Xh.view(), weighted ? wh.view() : none);
    const Vector<double> sums_s = space::column_sums(s, Xs.view(), weighted ? ws.view() : none);
    check_close("column_sums", sums_s, sums_h, tol);
    const double total = weighted ? d.w.template cast<double>().sum() : static_cast<double>(n);
    const Vector<double> mean = n > 0 ? Vector<double>(sums_h / total) : Vector<double>::Zero(p);
    check_close("centered_square_sums",
                space::centered_square_sums(s, Xs.view(), mean, weighted ? ws.view() : none),
                space::centered_square_sums(h, Xh.view(), mean, weighted ? wh.view() : none), tol);

    // Class moments.
    const space::class_moments cm_h =
        space::class_sums(h, Xh.view(), ch.view(), weighted ? wh.view() : none, k);
    const space::class_moments cm_s =
        space::class_sums(s, Xs.view(), cs.view(), weighted ? ws.view() : none, k);
    check_close("class_sums counts", cm_s.counts, cm_h.counts, tol);
    check_close("class_sums sums", cm_s.sums, cm_h.sums, tol);
    Matrix<double> theta = cm_h.sums;
    for (index_t c = 0; c < k; ++c) {
      if (cm_h.counts(c) > 0) theta.row(c) /= cm_h.counts(c);
    }
    check_close(
        "class_square_deviations",
        space::class_square_deviations(s, Xs.view(), cs.view(), weighted ? ws.view() : none, theta),
        space::class_square_deviations(h, Xh.view(), ch.view(), weighted ? wh.view() : none, theta),
        tol);

    // Gram and covariance.
    for (const bool with_y : {false, true}) {
      INFO((with_y ? "with y" : "without y"));
      const space::gram_sums g_h = space::gram(h, Xh.view(), with_y ? yh.view() : none,
                                               weighted ? wh.view() : none, 0.7, mean, 0.25);
      const space::gram_sums g_s = space::gram(s, Xs.view(), with_y ? ys.view() : none,
                                               weighted ? ws.view() : none, 0.7, mean, 0.25);
      check_close("gram", g_s.gram, g_h.gram, tol);
      check_close("gram xty", g_s.xty, g_h.xty, tol);
      if (n > 0 && with_y) check_close("gram yty", g_s.yty, g_h.yty, tol);
    }

    // Logistic loss and gradient, binary and multinomial, with and without intercept.
    for (const bool fit_intercept : {false, true}) {
      for (const index_t classes : {index_t{2}, k}) {
        const bool binary = classes == 2;
        const index_t rows = binary ? 1 : classes;
        std::vector<index_t> labels(d.class_of);
        for (auto& c : labels) c = binary ? c % 2 : c;
        const auto lh = indices_in(h, labels);
        const auto ls = indices_in(s, labels);
        std::mt19937_64 rng(seed + 99);
        std::normal_distribution<double> normal(0.0, 0.3);
        Matrix<double> params(rows, p + (fit_intercept ? 1 : 0));
        for (index_t i = 0; i < params.size(); ++i) params.data()[i] = normal(rng);
        Matrix<double> grad_h(params.rows(), params.cols());
        Matrix<double> grad_s(params.rows(), params.cols());
        const double loss_h =
            space::logistic_loss_gradient(h, Xh.view(), lh.view(), weighted ? wh.view() : none,
                                          binary, fit_intercept, params, grad_h);
        const double loss_s =
            space::logistic_loss_gradient(s, Xs.view(), ls.view(), weighted ? ws.view() : none,
                                          binary, fit_intercept, params, grad_s);
        INFO((binary ? "binary" : "multinomial"), (fit_intercept ? " with intercept" : ""));
        if (n > 0) check_close("logistic loss", loss_s, loss_h, tol);
        check_close("logistic gradient", grad_s, grad_h, tol);
      }
    }
  }

  // Distances: the first k rows (or fewer) as centres, shifted off the data points.
  const index_t m = std::min(n, k);
  if (m > 0) {
    Matrix<T> centers = d.X.topRows(m);
    centers.array() += T(0.25);
    const MatrixRef<T> C(centers);

    // nearest_rows and the Lloyd step.
    space::vector<space::host, std::int64_t> labels_h(h, n);
    space::vector<S, std::int64_t> labels_s(s, n);
    Labels previous = Labels::Zero(n);
    for (index_t i = 0; i < n; i += 3) previous(i) = 1;
    const auto prev_h = space::to_space(
        h, std::span<const std::int64_t>(previous.data(), static_cast<std::size_t>(n)));
    const auto prev_s = space::to_space(
        s, std::span<const std::int64_t>(previous.data(), static_cast<std::size_t>(n)));
    const space::lloyd_sums step_h =
        space::lloyd_step(h, Xh.view(), centers, labels_h.mutable_view(), prev_h.view());
    const space::lloyd_sums step_s =
        space::lloyd_step(s, Xs.view(), centers, labels_s.mutable_view(), prev_s.view());
    const Labels lab_h = labels_h.to_host();
    const Labels lab_s = labels_s.to_host();
    index_t differ = 0;
    const Vector<double> c_norms = centers.template cast<double>().rowwise().squaredNorm();
    for (index_t i = 0; i < n; ++i) {
      if (lab_h(i) == lab_s(i)) continue;
      ++differ;
      const auto value = [&](std::int64_t c) {
        return c_norms(c) -
               2.0 * d.X.row(i).template cast<double>().dot(centers.row(c).template cast<double>());
      };
      const double bound = 8.0 * static_cast<double>(p + 2) *
                           static_cast<double>(std::numeric_limits<T>::epsilon()) *
                           (d.X.row(i).template cast<double>().squaredNorm() + c_norms.maxCoeff());
      INFO("row ", i, ": host label ", lab_h(i), ", space label ", lab_s(i));
      CHECK(std::abs(value(lab_s(i)) - value(lab_h(i))) <= bound);
    }
    if (differ > 0) MESSAGE(differ, " near-tie labels differ (", S::name, ")");
    // The sums against the host's grouped sums over the space's own labels (a near-tie moves a
    // row between clusters on one side only).
    std::vector<index_t> own(lab_s.data(), lab_s.data() + n);
    const space::class_moments by_label =
        space::class_sums(h, Xh.view(), indices_in(h, own).view(), none, m);
    check_close("lloyd sums", step_s.sums, by_label.sums, tol);
    CHECK(step_s.counts == by_label.counts);
    CHECK(step_s.changed == static_cast<double>((lab_s.array() != previous.array()).count()));
    if (differ == 0) {
      check_close("lloyd sums against the host step", step_s.sums, step_h.sums, tol);
      CHECK(step_s.changed == step_h.changed);
    }
    // Without previous labels (the first step) every label counts as changed.
    CHECK(space::lloyd_step(s, Xs.view(), centers, labels_s.mutable_view(), {}).changed ==
          static_cast<double>(n));
    CHECK(space::lloyd_step(h, Xh.view(), centers, labels_h.mutable_view(), {}).changed ==
          static_cast<double>(n));
    space::vector<S, std::int64_t> nearest_s(s, n);
    space::nearest_rows(s, Xs.view(), centers, nearest_s.mutable_view());
    CHECK(nearest_s.to_host() == lab_s);

    check_close("paired_squared_distances",
                space::paired_squared_distances(s, Xs.view(), C, labels_s.view()),
                space::paired_squared_distances(
                    h, Xh.view(), C, space::vector_view<const std::int64_t>{lab_s.data(), n}),
                tol);
    // All pairs of (at most) the first 300 rows.
    auto top_h = Xh.view();
    auto top_s = Xs.view();
    top_h.rows = top_s.rows = std::min<index_t>(n, 300);
    const Matrix<T> D_h = space::pairwise_squared_distances(h, top_h, top_h).to_host();
    const Matrix<T> D_s = space::pairwise_squared_distances(s, top_s, top_s).to_host();
    // The expansion's rounding is relative to ||x||^2 + ||y||^2, not to the distance.
    check_close("pairwise_squared_distances", D_s, D_h, std::is_same_v<T, float> ? 1e-5 : 1e-12);
  }

  // The k nearest rows: the same rows and the same distances, bit for bit.
  for (const index_t neighbours : {index_t{1}, index_t{4}, n + 2}) {
    INFO("nearest_k with k = ", neighbours);
    const Data<T> queries = make_data<T>(std::min<index_t>(n, 50) + 3, p, k, 7);
    Matrix<T> Q = queries.X;
    if (n > 1) Q.row(0) = d.X.row(1);  // a query on a duplicated training row: a tie at 0
    const auto Qh = space::to_space(h, MatrixRef<T>(Q));
    const auto Qs = space::to_space(s, MatrixRef<T>(Q));
    const space::neighbours nh = space::nearest_k(h, Xh.view(), Qh.view(), neighbours);
    const space::neighbours ns = space::nearest_k(s, Xs.view(), Qs.view(), neighbours);
    CHECK(ns.k == nh.k);
    CHECK(ns.n_queries == nh.n_queries);
    CHECK(ns.indices == nh.indices);
    CHECK(ns.distances == nh.distances);
  }
}

/// The checks over the shapes that matter: empty, one row, fewer rows than a chunk, many chunks.
template <class S, class T>
void check_all_shapes(const S& s) {
  check_kernels<S, T>(s, 0, 3, 3);
  check_kernels<S, T>(s, 1, 1, 3);
  check_kernels<S, T>(s, 1, 4, 2);
  check_kernels<S, T>(s, 7, 3, 4);
  check_kernels<S, T>(s, 2000, 5, 4);
  check_kernels<S, T>(s, 20011, 3, 3);
  check_kernels<S, T>(s, 999, 5, 21);  // more centres than a tile of the Lloyd assignment
}

/// A failed allocation names its size.
template <class S>
void check_memory_error(const S& s) {
  const std::size_t n = std::size_t{1} << 58;  // 2^61 bytes: more than any machine has
  try {
    (void)s.template allocate<double>(n);
    FAIL("expected device_memory_error");
  } catch (const space::device_memory_error& e) {
    CHECK(e.bytes() == n * sizeof(double));
    CHECK(std::string(e.what()).find(std::to_string(n * sizeof(double)) + " bytes") !=
          std::string::npos);
    CHECK(std::string(e.what()).find(std::string(S::name)) != std::string::npos);
  }
}

}  // namespace onelearn::space_test
