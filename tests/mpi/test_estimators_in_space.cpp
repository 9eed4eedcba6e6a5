// The estimators that take a compute space (KMeans, LogisticRegression, the k-NN models,
// StandardScaler, GaussianNB, Ridge, Lasso, ElasticNet, PCA, HistGradientBoosting*; and
// nn::Sequential, last) in a CPU Thrust space under exec::mpi
// (2 and 3 ranks, uneven shards): each rank fits on its block of rows in the space, and every
// rank must end with the host's one-process fit on all the rows (cuda/estimator_space_checks.hpp
// and cuda/estimator_moments_checks.hpp, shared with the unit and CUDA tests). Checks are CHECKs: a REQUIRE stopping one rank early would leave the others waiting.
#include <doctest/doctest.h>

#include <mpi.h>

#include "cuda/estimator_boosting_checks.hpp"
#include "cuda/estimator_moments_checks.hpp"
#include "cuda/estimator_space_checks.hpp"
#include "cuda/nn_space_checks.hpp"
#include "onelearn/exec/mpi.hpp"

using namespace onelearn;
namespace space = onelearn::space;

TEST_CASE_TEMPLATE("KMeans in a Thrust space under exec::mpi equals one process on the host", T,
                   double, float) {
  const exec::mpi world(MPI_COMM_WORLD);
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_kmeans_in_space<T>(world, space::thrust_omp{});
#elif defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_kmeans_in_space<T>(world, space::thrust_cpp{});
#else
  MESSAGE("no Thrust in this build: KMeans in a space under exec::mpi not checked");
#endif
}

TEST_CASE_TEMPLATE("LogisticRegression in a Thrust space under exec::mpi equals one process on "
                   "the host", T, double, float) {
  const exec::mpi world(MPI_COMM_WORLD);
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_logistic_in_space<T>(world, space::thrust_omp{});
#elif defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_logistic_in_space<T>(world, space::thrust_cpp{});
#else
  MESSAGE("no Thrust in this build: LogisticRegression in a space under exec::mpi not checked");
#endif
}

TEST_CASE_TEMPLATE("the k-NN models in a Thrust space under exec::mpi equal one process on the "
                   "host", T, double, float) {
  const exec::mpi world(MPI_COMM_WORLD);
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_neighbours_in_space<T>(world, space::thrust_omp{});
#elif defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_neighbours_in_space<T>(world, space::thrust_cpp{});
#else
  MESSAGE("no Thrust in this build: the k-NN models in a space under exec::mpi not checked");
#endif
}

TEST_CASE_TEMPLATE("StandardScaler in a Thrust space under exec::mpi equals one process on the host", T, double, float) {
  const exec::mpi world(MPI_COMM_WORLD);
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_scaler_in_space<T>(world, space::thrust_omp{});
#elif defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_scaler_in_space<T>(world, space::thrust_cpp{});
#else
  MESSAGE("no Thrust in this build: StandardScaler in a space under exec::mpi not checked");
#endif
}

TEST_CASE_TEMPLATE("GaussianNB in a Thrust space under exec::mpi equals one process on the host", T, double, float) {
  const exec::mpi world(MPI_COMM_WORLD);
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_gaussian_nb_in_space<T>(world, space::thrust_omp{});
#elif defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_gaussian_nb_in_space<T>(world, space::thrust_cpp{});
#else
  MESSAGE("no Thrust in this build: GaussianNB in a space under exec::mpi not checked");
#endif
}

TEST_CASE_TEMPLATE("Ridge, Lasso and ElasticNet in a Thrust space under exec::mpi equal one process on the host", T, double, float) {
  const exec::mpi world(MPI_COMM_WORLD);
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_linear_models_in_space<T>(world, space::thrust_omp{});
#elif defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_linear_models_in_space<T>(world, space::thrust_cpp{});
#else
  MESSAGE("no Thrust in this build: the linear models in a space under exec::mpi not checked");
#endif
}

TEST_CASE_TEMPLATE("PCA in a Thrust space under exec::mpi equals one process on the host", T, double, float) {
  const exec::mpi world(MPI_COMM_WORLD);
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_pca_in_space<T>(world, space::thrust_omp{});
#elif defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_pca_in_space<T>(world, space::thrust_cpp{});
#else
  MESSAGE("no Thrust in this build: PCA in a space under exec::mpi not checked");
#endif
}

// thrust_cpp, not thrust_omp: under thrust_omp the trees grow with the host's code (whose
// distributed fit tests/mpi/test_hist_gradient_boosting.cpp checks); thrust_cpp runs the
// device's kernels, the path a GPU cluster takes.
TEST_CASE("HistGradientBoosting in a Thrust space under exec::mpi equals one process on the host") {
  const exec::mpi world(MPI_COMM_WORLD);
#if defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_boosting_in_space<double>(world, space::thrust_cpp{});
#else
  MESSAGE("no Thrust in this build: HistGradientBoosting in a space under exec::mpi not checked");
#endif
}

// Data-parallel training in a space against the same data-parallel training on the host (each
// rank its block of rows): the space's kernels inside the distributed step. That data-parallel
// training equals one process is tests/mpi/test_nn_data_parallel.cpp's. thrust_cpp runs the
// device's forms, thrust_omp the CPU form.
TEST_CASE_TEMPLATE("Sequential in a Thrust space under exec::mpi trains the host's network", T,
                   double, float) {
  const exec::mpi world(MPI_COMM_WORLD);
#if defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_network_in_space<T>(world, space::thrust_cpp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_network_in_space<T>(world, space::thrust_omp{});
#endif
#if !defined(ONELEARN_SPACE_HAVE_THRUST)
  MESSAGE("no Thrust in this build: Sequential in a space under exec::mpi not checked");
#endif
}
