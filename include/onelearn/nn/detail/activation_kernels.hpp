#pragma once
// The activation functions' forward and backward kernels, written once and used both by the
// activation layers (nn/layers/activation.hpp) and by Dense's fused `activation` argument.
// Element-wise kernels are whole-buffer Eigen array expressions (vectorised, no temporaries);
// softmax works row by row along the last axis.

#include <cmath>
#include <numbers>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"
#include "onelearn/nn/tensor.hpp"

namespace onelearn::nn::detail {

enum class Activation { linear, relu, leaky_relu, elu, gelu, sigmoid, tanh, softmax, log_softmax };

/// The Keras activation names, plus "" and "linear" for none.
inline Activation parse_activation(std::string_view where, std::string_view name) {
  if (name.empty() || name == "linear") return Activation::linear;
  if (name == "relu") return Activation::relu;
  if (name == "leaky_relu") return Activation::leaky_relu;
  if (name == "elu") return Activation::elu;
  if (name == "gelu") return Activation::gelu;
  if (name == "sigmoid") return Activation::sigmoid;
  if (name == "tanh") return Activation::tanh;
  if (name == "softmax") return Activation::softmax;
  if (name == "log_softmax") return Activation::log_softmax;
  throw invalid_argument(std::string(where) +
                         ": expected activation one of linear, relu, leaky_relu, elu, gelu, "
                         "sigmoid, tanh, softmax, log_softmax; found '" +
                         std::string(name) + "'");
}

/// y = f(x), element-wise or along the last axis. x and y have the same shape; y may not alias x.
template <class T>
void activation_forward(Activation kind, T alpha, TensorView<const T> x, TensorView<T> y) {
  auto X = x.array();
  auto Y = y.array();
  switch (kind) {
    case Activation::linear:
      Y = X;
      return;
    case Activation::relu:
      Y = X.max(T(0));
      return;
    case Activation::leaky_relu:
      Y = (X > T(0)).select(X, alpha * X);
      return;
    case Activation::elu:
      Y = (X > T(0)).select(X, alpha * (X.exp() - T(1)));
      return;
    case Activation::gelu: {
      // Exact GELU, x Φ(x) with the normal CDF through erf: PyTorch's default
      // (approximate="none") and Keras's gelu(approximate=False).
      const T inv_sqrt2 = T(1) / std::numbers::sqrt2_v<T>;
      for (index_t i = 0; i < X.size(); ++i) {
        Y(i) = T(0.5) * X(i) * (T(1) + std::erf(X(i) * inv_sqrt2));
      }
      return;
    }
    case Activation::sigmoid:
      Y = X.logistic();
      return;
    case Activation::tanh:
      Y = X.tanh();
      return;
    case Activation::softmax:
    case Activation::log_softmax: {
      auto Xm = x.last_axis_matrix();
      auto Ym = y.last_axis_matrix();
      for (index_t r = 0; r < Xm.rows(); ++r) {
        const T top = Xm.row(r).maxCoeff();
        auto out = Ym.row(r).array();
        if (kind == Activation::softmax) {
          out = (Xm.row(r).array() - top).exp();
          out /= out.sum();
        } else {
          const T log_norm = std::log((Xm.row(r).array() - top).exp().sum());
          out = Xm.row(r).array() - top - log_norm;
        }
      }
      return;
    }
  }
}

/// dx = dL/dx from dy = dL/dy, given the forward's input x and output y.
template <class T>
void activation_backward(Activation kind, T alpha, TensorView<const T> x, TensorView<const T> y,
                         TensorView<const T> dy, TensorView<T> dx) {
  auto X = x.array();
  auto Y = y.array();
  auto dY = dy.array();
  auto dX = dx.array();
  switch (kind) {
    case Activation::linear:
      dX = dY;
      return;
    case Activation::relu:
      dX = (X > T(0)).select(dY, T(0));
      return;
    case Activation::leaky_relu:
      dX = (X > T(0)).select(dY, alpha * dY);
      return;
    case Activation::elu:
      dX = (X > T(0)).select(dY, dY * (Y + alpha));
      return;
    case Activation::gelu: {
      // d/dx x Φ(x) = Φ(x) + x φ(x).
      const T inv_sqrt2 = T(1) / std::numbers::sqrt2_v<T>;
      const T inv_sqrt_2pi = std::numbers::inv_sqrtpi_v<T> * inv_sqrt2;
      for (index_t i = 0; i < X.size(); ++i) {
        const T v = X(i);
        const T cdf = T(0.5) * (T(1) + std::erf(v * inv_sqrt2));
        dX(i) = dY(i) * (cdf + v * inv_sqrt_2pi * std::exp(T(-0.5) * v * v));
      }
      return;
    }
    case Activation::sigmoid:
      dX = dY * Y * (T(1) - Y);
      return;
    case Activation::tanh:
      dX = dY * (T(1) - Y.square());
      return;
    case Activation::softmax: {
      // dx = y (dy - <dy, y>) per row.
      auto Ym = y.last_axis_matrix();
      auto dYm = dy.last_axis_matrix();
      auto dXm = dx.last_axis_matrix();
      for (index_t r = 0; r < Ym.rows(); ++r) {
        const T dot = Ym.row(r).dot(dYm.row(r));
        dXm.row(r).array() = Ym.row(r).array() * (dYm.row(r).array() - dot);
      }
      return;
    }
    case Activation::log_softmax: {
      // y = x - logsumexp(x): dx = dy - softmax(x) sum(dy), softmax(x) = exp(y).
      auto Ym = y.last_axis_matrix();
      auto dYm = dy.last_axis_matrix();
      auto dXm = dx.last_axis_matrix();
      for (index_t r = 0; r < Ym.rows(); ++r) {
        const T total = dYm.row(r).sum();
        dXm.row(r).array() = dYm.row(r).array() - Ym.row(r).array().exp() * total;
      }
      return;
    }
  }
}

}  // namespace onelearn::nn::detail
