// The compute spaces (onelearn/space/): every kernel of the Thrust spaces against space::host's
// (cuda/space_checks.hpp, shared with the CUDA test cuda/test_spaces_cuda.cu), in double and
// float, on empty, one-row, small and many-chunk data; space::host wired to the estimators' own
// kernels (core/detail: the same code, so the same bits); the same bits on every CPU system
// (gram on omp and tbb: the host's) and thread count; the errors. Runs the systems this build
// has: thrust_cpp whenever Thrust's headers are there, thrust_omp with OpenMP, thrust_tbb with
// onelearn::thrust_tbb (tests/cmake/space_tests.cmake links it when oneTBB is found).
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cuda/space_checks.hpp"
#include "onelearn/core/detail/exact_neighbours.hpp"
#include "onelearn/core/detail/gram_sums.hpp"
#include "onelearn/core/detail/grouped_moments.hpp"
#include "onelearn/core/detail/lloyd_sums.hpp"
#include "onelearn/core/detail/logistic_terms.hpp"

using namespace onelearn;
namespace space = onelearn::space;
using space_test::check_all_shapes;

static_assert(space::ComputeSpace<space::host>);
static_assert(space::host::host_accessible);

template <class S, class T>
struct space_case {
  using space_type = S;
  using value_type = T;
};

#if defined(ONELEARN_SPACE_HAVE_THRUST)
static_assert(space::ComputeSpace<space::thrust_cpp>);
static_assert(space::thrust_cpp::name == "thrust_cpp");
#define ONELEARN_CPP_CASES \
  , space_case<space::thrust_cpp, double>, space_case<space::thrust_cpp, float>
#else
#define ONELEARN_CPP_CASES
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
static_assert(space::ComputeSpace<space::thrust_omp>);
#define ONELEARN_OMP_CASES \
  , space_case<space::thrust_omp, double>, space_case<space::thrust_omp, float>
#else
#define ONELEARN_OMP_CASES
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
static_assert(space::ComputeSpace<space::thrust_tbb>);
#define ONELEARN_TBB_CASES \
  , space_case<space::thrust_tbb, double>, space_case<space::thrust_tbb, float>
#else
#define ONELEARN_TBB_CASES
#endif

TEST_CASE_TEMPLATE(
    "a compute space's kernels equal space::host's", C, space_case<space::host, double>,
    space_case<space::host, float> ONELEARN_CPP_CASES ONELEARN_OMP_CASES ONELEARN_TBB_CASES) {
  using S = typename C::space_type;
  using T = typename C::value_type;
  check_all_shapes<S, T>(S{});
}

TEST_CASE_TEMPLATE("space::host runs the estimators' own kernels", T, double, float) {
  const auto d = space_test::make_data<T>(3001, 4, 3, 5);
  const index_t n = d.X.rows();
  const index_t p = d.X.cols();
  const index_t k = d.k;
  const space::host h;
  const auto X = space::to_space(h, MatrixRef<T>(d.X));
  const space::vector_view<const T> w{d.w.data(), n};
  const space::vector_view<const T> y{d.y.data(), n};
  const space::vector_view<const index_t> classes{d.class_of.data(), n};
  const std::optional<VectorRef<T>> weights(d.w);

  // GaussianNB's grouped sums.
  Vector<double> counts = Vector<double>::Zero(k);
  Matrix<double> sums = Matrix<double>::Zero(k, p);
  detail::grouped_sums<T>(d.X, d.class_of, weights, counts, sums);
  const space::class_moments cm = space::class_sums(h, X.view(), classes, w, k);
  CHECK(cm.counts == counts);
  CHECK(cm.sums == sums);
  const Matrix<double> theta = sums.array().colwise() / counts.array();
  Matrix<double> squares = Matrix<double>::Zero(k, p);
  detail::grouped_square_deviations<T>(d.X, d.class_of, weights, theta, squares);
  CHECK(space::class_square_deviations(h, X.view(), classes, w, theta) == squares);

  // KMeans' plain assignment and sums.
  const Matrix<T> centers = d.X.topRows(k);
  Labels labels(n), previous = Labels::Zero(n), labels_h(n);
  Matrix<double> lsums(k, p);
  Vector<double> lcounts(k);
  const double changed =
      detail::lloyd_assign_and_sum<T>(d.X, centers, labels, previous, lsums, lcounts);
  const space::lloyd_sums step = space::lloyd_step(
      h, X.view(), MatrixRef<T>(centers), space::vector_view<std::int64_t>{labels_h.data(), n},
      space::vector_view<const std::int64_t>{previous.data(), n});
  CHECK(labels_h == labels);
  CHECK(step.sums == lsums);
  CHECK(step.counts == lcounts);
  CHECK(step.changed == changed);

  // The linear models' normal equations.
  const Vector<double> x_mean = d.X.template cast<double>().colwise().mean().transpose();
  const auto eq =
      detail::local_gram_sums<T>(d.X, std::optional<VectorRef<T>>(d.y), weights, 0.5, x_mean, 0.1);
  const space::gram_sums g = space::gram(h, X.view(), y, w, 0.5, x_mean, 0.1);
  CHECK(g.gram == eq.gram);
  CHECK(g.xty == eq.xty);
  CHECK(g.yty == eq.yty);

  // kNN's exact search.
  const Matrix<T> Q = d.X.topRows(50).array() + T(0.125);
  const Vector<T> mean = d.X.colwise().mean().transpose();
  const auto original = detail::exact_kbest<T>(d.X, mean, Q, 5);
  const auto Qv = space::to_space(h, MatrixRef<T>(Q));
  const space::neighbours mine = space::nearest_k(h, X.view(), Qv.view(), 5);
  CHECK(mine.indices == original.indices);
  CHECK(mine.distances == original.distances);

  // LogisticRegression's data term (double only on the estimator's side).
  if constexpr (std::is_same_v<T, double>) {
    std::vector<index_t> binary(d.class_of);
    for (auto& c : binary) c %= 2;
    const Matrix<double> params = Matrix<double>::Constant(1, p + 1, 0.1);
    Matrix<double> grad(1, p + 1), grad_h(1, p + 1);
    const Vector<double> wd = d.w;
    const double loss = detail::logistic_terms(d.X, binary, wd, true, true, params, grad);
    const double loss_h = space::logistic_loss_gradient(
        h, X.view(), space::vector_view<const index_t>{binary.data(), n}, w, true, true, params,
        grad_h);
    CHECK(loss_h == loss);
    CHECK(grad_h == grad);
  }
}

#if defined(ONELEARN_SPACE_HAVE_THRUST)
// The device's forms of three kernels (work items by lanes of a chunk, the k nearest by segments
// of rows) are plain Thrust code, so they run here too: what the GPU runs is checked on every
// machine, against the host's kernels and the CPU systems' own forms.
TEST_CASE_TEMPLATE("the device's forms of the kernels equal the host's (run on the CPU systems)", C,
                   space_case<space::thrust_cpp, double>,
                   space_case<space::thrust_cpp, float> ONELEARN_OMP_CASES) {
  using S = typename C::space_type;
  using T = typename C::value_type;
  const S s;
  const space::host h;
  const double tol = space_test::tolerance<T>();
  for (const index_t n : {index_t{0}, index_t{1}, index_t{37}, index_t{5000}}) {
    for (const index_t p : {index_t{1}, index_t{7}}) {
      INFO("n = ", n, ", p = ", p);
      const index_t k = 4;
      const auto d = space_test::make_data<T>(n, p, k, static_cast<std::uint64_t>(n + 17 * p));
      const auto Xh = space::to_space(h, MatrixRef<T>(d.X));
      const auto Xs = space::to_space(s, MatrixRef<T>(d.X));

      // The Lloyd step by lanes against the host's, on the same labels.
      if (n >= k) {
        Matrix<T> centers = d.X.topRows(k);
        centers.array() += T(0.25);
        Labels previous = Labels::Zero(n);
        for (index_t i = 0; i < n; i += 3) previous(i) = 1;
        const space::vector_view<const std::int64_t> before{previous.data(), n};
        space::vector<space::host, std::int64_t> labels_h(h, n);
        space::vector<S, std::int64_t> labels_s(s, n);
        const space::lloyd_sums on_host =
            space::lloyd_step(h, Xh.view(), centers, labels_h.mutable_view(), before);
        const space::lloyd_sums by_lanes = space::detail::lloyd_step_as(
            s, Xs.view(), centers, labels_s.mutable_view(), before, true);
        REQUIRE(labels_s.to_host() == labels_h.to_host());
        space_test::check_close("lloyd sums by lanes", by_lanes.sums, on_host.sums, tol);
        CHECK(by_lanes.counts == on_host.counts);
        CHECK(by_lanes.changed == on_host.changed);
      }

      // Centring rows in place (KMeans on a device), against Eigen's.
      {
        const Vector<T> shift = Vector<T>::LinSpaced(p, T(0.5), T(3));
        Matrix<T> mine = d.X;
        space::subtract_from_rows(s, space::matrix_view<T>{mine.data(), n, p, p}, shift);
        CHECK(mine == Matrix<T>(d.X.rowwise() - shift.transpose()));
      }

      // The logistic loss and gradient by rows, then lanes.
      for (const bool fit_intercept : {false, true}) {
        for (const bool binary : {true, false}) {
          INFO((binary ? "binary" : "multinomial"), (fit_intercept ? " with intercept" : ""));
          std::vector<index_t> labels(d.class_of);
          for (auto& c : labels) c = binary ? c % 2 : c;
          const space::vector_view<const index_t> y{labels.data(), n};
          const space::vector_view<const T> w{d.w.data(), n};
          Matrix<double> params(binary ? 1 : k, p + (fit_intercept ? 1 : 0));
          for (index_t i = 0; i < params.size(); ++i) params.data()[i] = 0.1 * double(i % 7) - 0.3;
          Matrix<double> grad_h(params.rows(), params.cols());
          Matrix<double> grad_s(params.rows(), params.cols());
          const double loss_h = space::logistic_loss_gradient(h, Xh.view(), y, w, binary,
                                                              fit_intercept, params, grad_h);
          const double loss_s = space::detail::logistic_loss_gradient_as(
              s, Xs.view(), y, w, binary, fit_intercept, params, grad_s, true);
          if (n > 0) space_test::check_close("logistic loss by lanes", loss_s, loss_h, tol);
          space_test::check_close("logistic gradient by lanes", grad_s, grad_h, tol);
        }
      }

      // The k nearest in segments: the same rows and distances, bit for bit, as one pass.
      const auto queries = space_test::make_data<T>(std::min<index_t>(n, 40) + 3, p, k, 5);
      const auto Qs = space::to_space(s, MatrixRef<T>(queries.X));
      for (const index_t kk : {index_t{1}, index_t{3}, index_t{9}}) {
        const space::neighbours whole =
            space::nearest_k(h, Xh.view(), space::to_space(h, MatrixRef<T>(queries.X)).view(), kk);
        for (const index_t segments : {index_t{1}, index_t{2}, index_t{7}, index_t{1000}}) {
          for (const bool feature_major : {false, true}) {
            INFO("k = ", kk, ", segments = ", segments, (feature_major ? ", feature-major" : ""));
            const space::neighbours cut = space::detail::nearest_k_in_segments(
                s, Xs.view(), Qs.view(), kk, segments, feature_major);
            CHECK(cut.indices == whole.indices);
            CHECK(cut.distances == whole.distances);
          }
        }
      }
    }
  }
}
#endif

#if defined(ONELEARN_SPACE_HAVE_OMP)
TEST_CASE("the CPU Thrust systems give the same bits, on any number of threads") {
  // k = 21 clusters: the Lloyd assignment's tiles of 16 centres, a whole one and a part.
  const auto d = space_test::make_data<double>(50'000, 6, 21, 11);
  const index_t n = d.X.rows();
  const space::vector_view<const double> w{d.w.data(), n};
  const space::vector_view<const index_t> classes{d.class_of.data(), n};
  // Centres near the classes' means (make_data: feature values 3 + 2c + noise).
  Matrix<double> centers(d.k, d.X.cols());
  for (index_t c = 0; c < d.k; ++c) centers.row(c).setConstant(3.25 + 2.0 * double(c));
  Matrix<double> params(d.k, d.X.cols() + 1);
  for (index_t i = 0; i < params.size(); ++i) params.data()[i] = 0.01 * double(i % 11) - 0.05;
  const Vector<double> gram_mean = d.X.colwise().mean().transpose();
  const auto run = [&](const auto& s) {
    const auto X = space::to_space(s, MatrixRef<double>(d.X));
    const Vector<double> x_mean = space::column_sums(s, X.view(), w) / d.w.sum();
    const space::class_moments cm = space::class_sums(s, X.view(), classes, w, d.k);
    // About a mean every space is given (their column sums differ in the last bits).
    const space::gram_sums g = space::gram(s, X.view(), {}, w, 1.0, gram_mean, 0.0);
    space::vector<std::decay_t<decltype(s)>, std::int64_t> labels(s, n);
    const space::lloyd_sums step =
        space::lloyd_step(s, X.view(), centers, labels.mutable_view(), {});
    Matrix<double> logistic(d.k, d.X.cols() + 2);
    logistic.col(0).setConstant(space::logistic_loss_gradient(
        s, X.view(), classes, w, false, true, params, logistic.rightCols(d.X.cols() + 1)));
    return std::vector<Matrix<double>>{
        x_mean, cm.sums, g.gram, step.sums, labels.to_host().template cast<double>(), logistic};
  };
  // The Thrust reductions and the Lloyd step give thrust_cpp's bits on omp and tbb; gram and the
  // logistic loss on those two run the host's products (their BLAS, as cuBLAS is CUDA's) in the
  // host's fixed chunks: the host's bits, on any number of threads.
  const auto sequential = run(space::thrust_cpp{});
  const auto host = run(space::host{});
  const auto same_bits = [&](const std::vector<Matrix<double>>& got) {
    CHECK(got[0] == sequential[0]);
    CHECK(got[1] == sequential[1]);
    CHECK(got[2] == host[2]);
    CHECK(got[3] == sequential[3]);
    CHECK(got[4] == sequential[4]);
    CHECK(got[5] == host[5]);
  };
  // Not a degenerate case: the clusters of the step and the classes differ.
  CHECK((sequential[4].array() > 15).count() > 100);
  CHECK(sequential[5].col(0).minCoeff() > 0);
  const int threads = omp_get_max_threads();
  for (const int t : {1, 2, 3}) {
    INFO(t, " OpenMP threads");
    omp_set_num_threads(t);
    same_bits(run(space::thrust_omp{}));
#if defined(ONELEARN_SPACE_HAVE_TBB)
    same_bits(run(space::thrust_tbb{}));
#endif
  }
  omp_set_num_threads(threads);
}
#endif

// AddressSanitizer ends the process on an allocation this large instead of throwing bad_alloc
// (allocation-size-too-big), so the check runs in the builds without it.
#if defined(ONELEARN_SPACE_HAVE_THRUST) && !defined(__SANITIZE_ADDRESS__)
TEST_CASE("a failed allocation in a space is a device_memory_error naming its size") {
  space_test::check_memory_error(space::thrust_cpp{});
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_memory_error(space::thrust_omp{});
#endif
}
#endif

TEST_CASE("to_space borrows the caller's rows in host-accessible spaces") {
  const Matrix<double> X = Matrix<double>::Ones(4, 3);
  const auto Xh = space::to_space(space::host{}, MatrixRef<double>(X));
  CHECK_FALSE(Xh.owns());
  CHECK(Xh.view().data == X.data());
  // A block of columns keeps its stride; to_host packs it.
  const Matrix<double> wide = Matrix<double>::Random(5, 6);
  const auto block = space::to_space(space::host{}, MatrixRef<double>(wide.leftCols(2)));
  CHECK(block.view().stride == 6);
  CHECK(block.to_host() == wide.leftCols(2));
#if defined(ONELEARN_SPACE_HAVE_THRUST)
  const auto Xc = space::to_space(space::thrust_cpp{}, MatrixRef<double>(X));
  CHECK(Xc.view().data == X.data());
  CHECK(space::column_sums(space::thrust_cpp{}, block.view(), {}) ==
        wide.leftCols(2).colwise().sum().transpose());
#endif
}
