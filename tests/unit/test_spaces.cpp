// The compute spaces (onelearn/space/): every kernel of the Thrust spaces against space::host's
// (cuda/space_checks.hpp, shared with the CUDA test cuda/test_spaces_cuda.cu), in double and
// float, on empty, one-row, small and many-chunk data; space::host wired to the estimators' own
// kernels (core/detail: the same code, so the same bits); the same bits on every CPU system and
// thread count; the errors. Runs the systems this build has: thrust_cpp whenever Thrust's
// headers are there, thrust_omp with OpenMP, thrust_tbb with onelearn::thrust_tbb
// (tests/cmake/space_tests.cmake links it when oneTBB is found).
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
  const auto eq = detail::local_gram_sums<T>(d.X, std::optional<VectorRef<T>>(d.y), weights, 0.5,
                                             x_mean, 0.1);
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
    const double loss =
        detail::logistic_terms(d.X, binary, wd, true, true, params, grad);
    const double loss_h = space::logistic_loss_gradient(
        h, X.view(), space::vector_view<const index_t>{binary.data(), n}, w, true, true, params,
        grad_h);
    CHECK(loss_h == loss);
    CHECK(grad_h == grad);
  }
}

#if defined(ONELEARN_SPACE_HAVE_OMP)
TEST_CASE("the CPU Thrust systems give the same bits, on any number of threads") {
  const auto d = space_test::make_data<double>(50'000, 6, 4, 11);
  const index_t n = d.X.rows();
  const space::vector_view<const double> w{d.w.data(), n};
  const space::vector_view<const index_t> classes{d.class_of.data(), n};
  const auto run = [&](const auto& s) {
    const auto X = space::to_space(s, MatrixRef<double>(d.X));
    const Vector<double> x_mean = space::column_sums(s, X.view(), w) / d.w.sum();
    const space::class_moments cm = space::class_sums(s, X.view(), classes, w, d.k);
    const space::gram_sums g = space::gram(s, X.view(), {}, w, 1.0, x_mean, 0.0);
    return std::vector<Matrix<double>>{x_mean, cm.sums, g.gram};
  };
  const auto sequential = run(space::thrust_cpp{});
  const int threads = omp_get_max_threads();
  for (const int t : {1, 2, 3}) {
    omp_set_num_threads(t);
    CHECK(run(space::thrust_omp{}) == sequential);
#if defined(ONELEARN_SPACE_HAVE_TBB)
    CHECK(run(space::thrust_tbb{}) == sequential);
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
