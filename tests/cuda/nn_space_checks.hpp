#pragma once
// Networks in a compute space against the same networks on the host, shared by
// unit/test_nn_in_space.cpp (the CPU Thrust systems, exec::local) and
// mpi/test_estimators_in_space.cpp (the same under exec::mpi, each rank with its own rows).
//
// The kernels one by one: cuda/nn_kernel_checks.hpp (shared with the CUDA test).
//
// check_network_in_space: two small networks (GELU, tanh with kernel L2, an ELU layer and
// logits, Adam; sigmoid, then a Softmax layer with probabilities, SGD with Nesterov momentum)
// trained for three epochs in the space and on the host from the same seed: every layer and the
// optimizer report the space's kernels, and
// the weights, the history's losses and the predictions agree to the same tolerances. (Measured
// on the 15 steps: thrust_cpp's device forms 1e-15 relative in double and 1.2e-6 in float;
// thrust_omp and thrust_tbb gave the host's bits on these sizes.)

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cuda/nn_kernel_checks.hpp"
#include "cuda/space_checks.hpp"
#include "onelearn/nn/layers/activation.hpp"
#include "onelearn/nn/layers/dense.hpp"
#include "onelearn/nn/losses.hpp"
#include "onelearn/nn/optimizers.hpp"
#include "onelearn/nn/sequential.hpp"
#include "onelearn/nn/space.hpp"

namespace onelearn::space_test {

namespace nn = onelearn::nn;

/// Network `arch` (0 or 1, above) for space S, compiled.
template <class T, class Exec, class S>
nn::Sequential<T, Exec, S> make_network(const Exec& exec, int arch) {
  nn::Sequential<T, Exec, S> model(exec);
  model.add(nn::Input({12}));
  if (arch == 0) {
    model.add(nn::Dense(24, "gelu"));
    model.add(nn::Dense(16, {.activation = "tanh", .kernel_l2 = 1e-3}));
    model.add(nn::ELU{});
    model.add(nn::Dense(3));
    model.compile(nn::Adam{.learning_rate = 1e-2},
                  nn::SparseCategoricalCrossentropy{.from_logits = true}, {"accuracy"});
  } else {
    model.add(nn::Dense(20, "sigmoid"));
    model.add(nn::Dense(3));
    model.add(nn::Softmax{});
    model.compile(nn::SGD{.learning_rate = 0.1, .momentum = 0.9, .nesterov = true},
                  nn::SparseCategoricalCrossentropy{}, {"accuracy"});
  }
  return model;
}

/// This rank's rows of the checks' data: every rank's block of 240 rows (uneven under 7 ranks).
template <class T, class Exec>
std::pair<Matrix<T>, Labels> network_rows(const Exec& exec) {
  const Data<T> d = make_data<T>(240, 12, 3, 41);
  Matrix<T> X = d.X.array() - T(5);  // around 0, as a network's input should be
  Labels y(d.X.rows());
  for (index_t i = 0; i < y.size(); ++i) y(i) = d.class_of[static_cast<std::size_t>(i)];
  index_t begin = 0, end = X.rows();
  if constexpr (Exec::is_distributed) {
    const index_t ranks = exec.size(), rank = exec.rank();
    begin = X.rows() * rank / ranks;
    end = X.rows() * (rank + 1) / ranks;
  }
  return {X.middleRows(begin, end - begin), y.segment(begin, end - begin)};
}

template <class T, class Exec, class S>
void check_network_in_space(const Exec& exec, const S& /*space*/) {
  const auto [X, y] = network_rows<T>(exec);
  const double tol = tolerance<T>();
  for (int arch : {0, 1}) {
    INFO("space ", S::name, ", network ", arch);
    auto host = make_network<T, Exec, space::host>(exec, arch);
    auto model = make_network<T, Exec, S>(exec, arch);
    const nn::FitOptions options{.epochs = 3, .batch_size = 50, .seed = 3};
    const nn::History h_host = host.fit(X, y, options);
    const nn::History h = model.fit(X, y, options);
    CHECK(model.compute_space().name == S::name);
    CHECK(model.optimizer().kernels().space_name() == S::name);
    for (std::size_t i = 0; i < model.size(); ++i) {
      if (const auto* dense = dynamic_cast<const nn::DenseLayer<T>*>(&model.layer(i))) {
        CHECK(dense->kernels().space_name() == S::name);
      }
      if (const auto* act = dynamic_cast<const nn::ActivationLayer<T>*>(&model.layer(i))) {
        CHECK(act->kernels().space_name() == S::name);
      }
    }
    const auto w_host = host.get_weights();
    const auto w = model.get_weights();
    // CHECKs, not REQUIREs: under exec::mpi a rank stopping early would leave the others waiting.
    CHECK(w.size() == w_host.size());
    for (std::size_t i = 0; i < std::min(w.size(), w_host.size()); ++i) {
      const Eigen::Map<const Vector<T>> a(w[i].data(), static_cast<index_t>(w[i].size()));
      const Eigen::Map<const Vector<T>> b(w_host[i].data(), static_cast<index_t>(w_host[i].size()));
      check_close(("weights " + std::to_string(i)).c_str(), a, b, tol);
    }
    const auto& loss = h.history.at("loss");
    const auto& loss_host = h_host.history.at("loss");
    CHECK(loss.size() == loss_host.size());
    for (std::size_t e = 0; e < std::min(loss.size(), loss_host.size()); ++e) check_close("epoch loss", loss[e], loss_host[e], tol);
    check_close("predict", model.predict(X), host.predict(X), tol);
  }
}

/// The weights after the checks' first network's fit: what two spaces of the same CPU form
/// must give bit for bit.
template <class T, class S>
std::vector<std::vector<T>> trained_weights() {
  const auto [X, y] = network_rows<T>(exec::local{});
  auto model = make_network<T, exec::local, S>(exec::local{}, 0);
  model.fit(X, y, {.epochs = 3, .batch_size = 50, .seed = 3});
  return model.get_weights();
}

}  // namespace onelearn::space_test
