// Networks in the CPU Thrust spaces (thrust_cpp, thrust_omp, thrust_tbb, as this build has them)
// against the host's: the network kernels one by one and whole trainings
// (cuda/nn_space_checks.hpp, shared with the MPI test).
#include <doctest/doctest.h>

#include "cuda/nn_space_checks.hpp"
#include "onelearn/exec/local.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

using namespace onelearn;
namespace space = onelearn::space;

TEST_CASE_TEMPLATE("the network kernels of a CPU Thrust space equal the host's", T, double, float) {
#if defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_network_kernels<T>(space::thrust_cpp{});
  space_test::check_optimizer_updates<T>(space::thrust_cpp{});
  space_test::check_losses<T>(space::thrust_cpp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_network_kernels<T>(space::thrust_omp{});
  space_test::check_optimizer_updates<T>(space::thrust_omp{});
  space_test::check_losses<T>(space::thrust_omp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
  space_test::check_network_kernels<T>(space::thrust_tbb{});
  space_test::check_optimizer_updates<T>(space::thrust_tbb{});
  space_test::check_losses<T>(space::thrust_tbb{});
#endif
}

TEST_CASE_TEMPLATE("Sequential in a CPU Thrust space trains the host's network", T, double, float) {
#if defined(ONELEARN_SPACE_HAVE_THRUST)
  space_test::check_network_in_space<T>(exec::local{}, space::thrust_cpp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_OMP)
  space_test::check_network_in_space<T>(exec::local{}, space::thrust_omp{});
#endif
#if defined(ONELEARN_SPACE_HAVE_TBB)
  space_test::check_network_in_space<T>(exec::local{}, space::thrust_tbb{});
#endif
}

#if defined(ONELEARN_SPACE_HAVE_OMP) && defined(ONELEARN_SPACE_HAVE_TBB)
TEST_CASE("thrust_omp and thrust_tbb train a network to the same bits") {
  // Both run the CPU form, whose chunks depend on the sizes only.
  CHECK(space_test::trained_weights<double, space::thrust_omp>() ==
        space_test::trained_weights<double, space::thrust_tbb>());
  CHECK(space_test::trained_weights<float, space::thrust_omp>() ==
        space_test::trained_weights<float, space::thrust_tbb>());
}
#endif

TEST_CASE("Sequential on the host is Sequential<T, exec::local, space::host>, its layers the host's") {
  static_assert(std::is_same_v<nn::Sequential<float>,
                               nn::Sequential<float, exec::local, space::host>>);
  nn::Sequential<float> model{nn::Input({4}), nn::Dense(3, "relu"), nn::Softmax{}};
  CHECK(model.compute_space().name == "host");
  CHECK(dynamic_cast<const nn::DenseLayer<float>&>(model.layer(0)).kernels().space_name() == "host");
  CHECK(dynamic_cast<const nn::ActivationLayer<float>&>(model.layer(1)).kernels().space_name() ==
        "host");
}

#if defined(_OPENMP)
TEST_CASE("a network trains to the same bits on one thread and on two") {
  // The mlp workload's first layer (784 inputs, 256 units, batches of 128): the host once ran
  // its products as Eigen's parallel GEMM, whose blocking followed the thread count (this test
  // failed there); the chunked kernels' chunks follow the sizes.
  const Matrix<float> X = space_test::uniform_matrix<float>(512, 784, 1.0, 31);
  Labels y(512);
  for (index_t i = 0; i < y.size(); ++i) y(i) = i % 10;
  auto train = [&](int threads) {
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    nn::Sequential<float> model{nn::Input({784}), nn::Dense(256, "relu"), nn::Dense(10)};
    model.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
    model.fit(X, y, {.epochs = 2, .batch_size = 128, .seed = 5});
    omp_set_num_threads(before);
    return model.get_weights();
  };
  CHECK(train(1) == train(2));
}
#endif
