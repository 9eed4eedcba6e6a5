// The estimators that take a compute space, in the CPU Thrust spaces (thrust_cpp, thrust_omp,
// thrust_tbb, as this build has them) against the host's fit: cuda/estimator_space_checks.hpp
// cuda/estimator_moments_checks.hpp and cuda/estimator_boosting_checks.hpp, shared with the MPI
// and CUDA tests.
#include <doctest/doctest.h>

#include "cuda/estimator_boosting_checks.hpp"
#include "cuda/estimator_moments_checks.hpp"
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

TEST_CASE_TEMPLATE("StandardScaler in a CPU Thrust space equals the host's fit", T, double, float) {
#if defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_scaler_in_space<T>(exec::local{}, space::thrust_cpp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_scaler_in_space<T>(exec::local{}, space::thrust_omp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
  space_test::check_scaler_in_space<T>(exec::local{}, space::thrust_tbb{});
#endif
}

TEST_CASE_TEMPLATE("GaussianNB in a CPU Thrust space equals the host's fit", T, double, float) {
#if defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_gaussian_nb_in_space<T>(exec::local{}, space::thrust_cpp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_gaussian_nb_in_space<T>(exec::local{}, space::thrust_omp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
  space_test::check_gaussian_nb_in_space<T>(exec::local{}, space::thrust_tbb{});
#endif
}

TEST_CASE_TEMPLATE("Ridge, Lasso and ElasticNet in a CPU Thrust space equal the host's fits", T, double, float) {
#if defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_linear_models_in_space<T>(exec::local{}, space::thrust_cpp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_linear_models_in_space<T>(exec::local{}, space::thrust_omp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
  space_test::check_linear_models_in_space<T>(exec::local{}, space::thrust_tbb{});
#endif
}

TEST_CASE_TEMPLATE("PCA in a CPU Thrust space equals the host's fit", T, double, float) {
#if defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_pca_in_space<T>(exec::local{}, space::thrust_cpp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_pca_in_space<T>(exec::local{}, space::thrust_omp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
  space_test::check_pca_in_space<T>(exec::local{}, space::thrust_tbb{});
#endif
}

TEST_CASE_TEMPLATE("HistGradientBoosting in a CPU Thrust space equals the host's fit", T, double,
                   float) {
#if defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_boosting_in_space<T>(exec::local{}, space::thrust_cpp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_boosting_in_space<T>(exec::local{}, space::thrust_omp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
  space_test::check_boosting_in_space<T>(exec::local{}, space::thrust_tbb{});
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
