// cluster::KMeans in the CPU Thrust spaces (thrust_cpp, thrust_omp, thrust_tbb, as this build
// has them) against the host's fit: cuda/estimator_space_checks.hpp, shared with the CUDA test.
#include <doctest/doctest.h>

#include "cuda/estimator_space_checks.hpp"
#include "onelearn/exec/local.hpp"

using namespace onelearn;
namespace space = onelearn::space;

TEST_CASE_TEMPLATE("KMeans in a CPU Thrust space equals the host's fit", T, double, float) {
#if defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_kmeans_in_space<T>(exec::local{}, space::thrust_cpp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_kmeans_in_space<T>(exec::local{}, space::thrust_omp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
  space_test::check_kmeans_in_space<T>(exec::local{}, space::thrust_tbb{});
#endif
}

TEST_CASE_TEMPLATE("LogisticRegression in a CPU Thrust space equals the host's fit", T, double,
                   float) {
#if defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_logistic_in_space<T>(exec::local{}, space::thrust_cpp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_logistic_in_space<T>(exec::local{}, space::thrust_omp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
  space_test::check_logistic_in_space<T>(exec::local{}, space::thrust_tbb{});
#endif
}

TEST_CASE_TEMPLATE("the k-NN models in a CPU Thrust space equal the host's", T, double, float) {
#if defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_neighbours_in_space<T>(exec::local{}, space::thrust_cpp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_neighbours_in_space<T>(exec::local{}, space::thrust_omp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
  space_test::check_neighbours_in_space<T>(exec::local{}, space::thrust_tbb{});
#endif
}

TEST_CASE("KMeans on the host is KMeans<T, exec::local, space::host>") {
  static_assert(std::is_same_v<cluster::KMeans<double>,
                               cluster::KMeans<double, exec::local, space::host>>);
  const Matrix<double> X = space_test::make_blobs<double>(200, 3, 4, 1);
  cluster::KMeans<double, exec::local, space::host> km({.n_clusters = 4, .random_state = 1});
  CHECK(km.fit(X).compute_space().name == "host");
  CHECK(km.labels().size() == 200);
}
