// The CUDA compute space (space::thrust_cuda) against space::host: the checks of
// cuda/space_checks.hpp (every kernel, double and float, empty to many-chunk data), run on the
// device; cuBLAS's Gram against the Thrust reduction; every estimator that takes a space fitted on
// the device against the host's fit (cuda/estimator_space_checks.hpp: KMeans, LogisticRegression,
// the k-NN models; cuda/estimator_moments_checks.hpp: StandardScaler, GaussianNB, Ridge, Lasso,
// ElasticNet; cuda/estimator_boosting_checks.hpp: HistGradientBoosting*); the networks' layer
// kernels (cuda/nn_kernel_checks.hpp: Dense's products by cuBLAS, the activations, the
// losses, the optimizers' updates); the typed errors. Built by nvcc when
// ONELEARN_CUDA=ON (tests/cmake/space_tests.cmake) and run by scripts/test-gpu.sh.
//
// Without a usable device only the no-device test runs (every space function must throw
// space::no_device_error at its first use); with ONELEARN_REQUIRE_GPU=1 in the environment a
// missing device fails the run instead (scripts/test-gpu.sh sets it).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <thrust/version.h>

#include "cuda/estimator_boosting_checks.hpp"
#include "cuda/estimator_moments_checks.hpp"
#include "cuda/estimator_space_checks.hpp"
#include "cuda/nn_kernel_checks.hpp"
#include "cuda/space_checks.hpp"

using namespace onelearn;
namespace space = onelearn::space;

static_assert(space::ComputeSpace<space::thrust_cuda>);
static_assert(!space::thrust_cuda::host_accessible);
static_assert(space::thrust_cuda::is_device);

namespace {

bool has_device() {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  (void)cudaGetLastError();
  return ok;
}

}  // namespace

TEST_CASE_TEMPLATE("space::thrust_cuda's kernels equal space::host's", T, double, float) {
  if (!has_device()) return;
  space_test::check_all_shapes<space::thrust_cuda, T>(space::thrust_cuda{});
}

TEST_CASE_TEMPLATE("cuBLAS's Gram equals the Thrust reduction and the host's", T, double, float) {
  if (!has_device()) return;
  const space::thrust_cuda gpu;
  const space::host h;
  for (const index_t p : {index_t{1}, index_t{7}, index_t{64}}) {
    const auto d = space_test::make_data<T>(30'000, p, 3, static_cast<std::uint64_t>(p));
    const index_t n = d.X.rows();
    const auto Xd = space::to_space(gpu, MatrixRef<T>(d.X));
    const auto yd = space_test::values_in(gpu, d.y);
    const auto wd = space_test::values_in(gpu, d.w);
    const auto Xh = space::to_space(h, MatrixRef<T>(d.X));
    const Vector<double> mean = d.X.template cast<double>().colwise().mean().transpose();
    const space::gram_sums by_blas =
        space::gram(gpu, Xd.view(), yd.view(), wd.view(), 2.0, mean, 0.5);
    const space::gram_sums by_reduction =
        space::gram_by_reduction(gpu, Xd.view(), yd.view(), wd.view(), 2.0, mean, 0.5);
    const space::gram_sums on_host =
        space::gram(h, Xh.view(), space::vector_view<const T>{d.y.data(), n},
                    space::vector_view<const T>{d.w.data(), n}, 2.0, mean, 0.5);
    const double tol = space_test::tolerance<T>();
    space_test::check_close("cuBLAS gram", by_blas.gram, on_host.gram, tol);
    space_test::check_close("reduction gram", by_reduction.gram, on_host.gram, tol);
    space_test::check_close("cuBLAS xty", by_blas.xty, on_host.xty, tol);
    space_test::check_close("cuBLAS yty", by_blas.yty, on_host.yty, tol);
  }
}

TEST_CASE("cuBLAS's logistic loss and gradient equal the Thrust form and the host's") {
  if (!has_device()) return;
  const space::thrust_cuda gpu;
  const space::host h;
  const space::vector_view<const double> none{};
  for (const index_t p : {index_t{1}, index_t{7}, index_t{64}}) {
    const auto d = space_test::make_data<double>(30'000, p, 4, static_cast<std::uint64_t>(p) + 5);
    const auto Xd = space::to_space(gpu, MatrixRef<double>(d.X));
    const auto Xh = space::to_space(h, MatrixRef<double>(d.X));
    const auto wd = space_test::values_in(gpu, d.w);
    const auto wh = space_test::values_in(h, d.w);
    for (const bool binary : {true, false}) {
      for (const bool fit_intercept : {false, true}) {
        for (const bool weighted : {false, true}) {
          INFO("p = ", p, (binary ? ", binary" : ", 4 classes"),
               (fit_intercept ? ", intercept" : ""), (weighted ? ", weighted" : ""));
          std::vector<index_t> labels(d.class_of);
          for (auto& c : labels) c = binary ? c % 2 : c;
          const auto ld = space_test::indices_in(gpu, labels);
          const auto lh = space_test::indices_in(h, labels);
          Matrix<double> params(binary ? 1 : 4, p + (fit_intercept ? 1 : 0));
          for (index_t i = 0; i < params.size(); ++i) {
            params.data()[i] = 0.05 * std::sin(static_cast<double>(3 * i + p));
          }
          Matrix<double> by_blas(params.rows(), params.cols());
          Matrix<double> by_thrust(params.rows(), params.cols());
          Matrix<double> on_host(params.rows(), params.cols());
          const double loss_blas = space::logistic_loss_gradient(
              gpu, Xd.view(), ld.view(), weighted ? wd.view() : none, binary, fit_intercept,
              params, by_blas);
          const double loss_thrust = space::detail::logistic_loss_gradient_as(
              gpu, Xd.view(), ld.view(), weighted ? wd.view() : none, binary, fit_intercept,
              params, by_thrust, true);
          const double loss_host = space::logistic_loss_gradient(
              h, Xh.view(), lh.view(), weighted ? wh.view() : none, binary, fit_intercept, params,
              on_host);
          space_test::check_close("cuBLAS logistic loss", loss_blas, loss_host, 1e-12);
          space_test::check_close("Thrust logistic loss", loss_thrust, loss_host, 1e-12);
          space_test::check_close("cuBLAS logistic gradient", by_blas, on_host, 1e-12);
          space_test::check_close("Thrust logistic gradient", by_thrust, on_host, 1e-12);
        }
      }
    }
  }
}

TEST_CASE("a pooled device block handed out again starts as zeros; the cache can be released") {
  if (!has_device()) return;
  const space::thrust_cuda gpu;
  const index_t n = 1 << 20;
  for (int round = 0; round < 3; ++round) {
    {
      const Matrix<double> sevens = Matrix<double>::Constant(n, 1, 7.0);
      const auto written = space::to_space(gpu, MatrixRef<double>(sevens));  // then freed
      CHECK(written.to_host().isApprox(sevens));
    }
    const space::vector<space::thrust_cuda, double> fresh(gpu, n);
    CHECK(fresh.to_host().cwiseAbs().maxCoeff() == 0.0);
    if (round == 1) space::release_cached_device_memory();
  }
}

TEST_CASE_TEMPLATE("KMeans on the GPU equals the host's fit", T, double, float) {
  if (!has_device()) return;
  space_test::check_kmeans_in_space<T>(exec::local{}, space::thrust_cuda{});
}

TEST_CASE_TEMPLATE("LogisticRegression on the GPU equals the host's fit", T, double, float) {
  if (!has_device()) return;
  space_test::check_logistic_in_space<T>(exec::local{}, space::thrust_cuda{});
}

TEST_CASE_TEMPLATE("the k-NN models on the GPU equal the host's", T, double, float) {
  if (!has_device()) return;
  space_test::check_neighbours_in_space<T>(exec::local{}, space::thrust_cuda{});
}

TEST_CASE_TEMPLATE("StandardScaler on the GPU equals the host's fit", T, double, float) {
  if (!has_device()) return;
  space_test::check_scaler_in_space<T>(exec::local{}, space::thrust_cuda{});
}

TEST_CASE_TEMPLATE("GaussianNB on the GPU equals the host's fit", T, double, float) {
  if (!has_device()) return;
  space_test::check_gaussian_nb_in_space<T>(exec::local{}, space::thrust_cuda{});
}

TEST_CASE_TEMPLATE("Ridge, Lasso and ElasticNet on the GPU equal the host's fits", T, double, float) {
  if (!has_device()) return;
  space_test::check_linear_models_in_space<T>(exec::local{}, space::thrust_cuda{});
}

TEST_CASE_TEMPLATE("PCA on the GPU equals the host's fit", T, double, float) {
  if (!has_device()) return;
  space_test::check_pca_in_space<T>(exec::local{}, space::thrust_cuda{});
}

TEST_CASE_TEMPLATE("HistGradientBoosting on the GPU equals the host's fit", T, double, float) {
  if (!has_device()) return;
  space_test::check_boosting_in_space<T>(exec::local{}, space::thrust_cuda{});
}

TEST_CASE_TEMPLATE("the network kernels on the GPU equal the host's", T, double, float) {
  if (!has_device()) return;
  space_test::check_network_kernels<T>(space::thrust_cuda{});
  space_test::check_optimizer_updates<T>(space::thrust_cuda{});
  space_test::check_losses<T>(space::thrust_cuda{});
}

TEST_CASE("KMeans on a machine without a device: no_device_error at fit") {
  if (has_device()) return;
  cluster::KMeans<double, exec::local, space::thrust_cuda> km({.n_clusters = 2});
  CHECK_THROWS_AS(km.fit(Matrix<double>::Ones(4, 2)), space::no_device_error);
}

TEST_CASE("a device allocation that fails is a device_memory_error naming its size") {
  if (!has_device()) return;
  space_test::check_memory_error(space::thrust_cuda{});
}

TEST_CASE("without a device, a CUDA space says so at its first use") {
  if (has_device()) return;
  const Matrix<double> X = Matrix<double>::Ones(3, 2);
  const space::thrust_cuda gpu;  // constructing the space is not a use
  CHECK_THROWS_AS(space::to_space(gpu, MatrixRef<double>(X)), space::no_device_error);
  CHECK_THROWS_AS((space::vector<space::thrust_cuda, double>(gpu, 4)), space::no_device_error);
  try {
    (void)space::column_sums(gpu, space::matrix_view<const double>{}, {});
    FAIL("expected no_device_error");
  } catch (const space::no_device_error& e) {
    CHECK(std::string(e.what()).find("expected a CUDA device") != std::string::npos);
  }
}

int main(int argc, char** argv) {
  std::printf("onelearn test_spaces_cuda: Thrust %d.%d.%d, CUDA runtime %d\n", THRUST_MAJOR_VERSION,
              THRUST_MINOR_VERSION, THRUST_SUBMINOR_VERSION, CUDART_VERSION);
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaSuccess && count > 0) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
      std::printf("onelearn test_spaces_cuda: device 0: %s (compute capability %d.%d, %.1f GiB)\n",
                  prop.name, prop.major, prop.minor,
                  static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
    }
  } else {
    std::printf(
        "onelearn test_spaces_cuda: no usable CUDA device (%s): only the no-device test "
        "runs\n",
        cudaGetErrorString(status));
    const char* require = std::getenv("ONELEARN_REQUIRE_GPU");
    if (require != nullptr && std::string(require) == "1") {
      std::printf("ONELEARN_REQUIRE_GPU=1: failing\n");
      return 1;
    }
  }
  (void)cudaGetLastError();
  doctest::Context context(argc, argv);
  return context.run();
}
