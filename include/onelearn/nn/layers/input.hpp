#pragma once
/**
 * \class onelearn::nn::Input
 * \brief Declares the per-sample input shape of a Sequential model, as Keras's Input.
 * \ingroup layers
 *
 * \code
 * #include <onelearn/nn/layers/input.hpp>
 *
 * onelearn::nn::Sequential<float> model{onelearn::nn::Input({64}), onelearn::nn::Dense(10)};
 * const std::string table = model.summary();  // shapes and parameter counts, known before fit
 * \endcode
 *
 * nn::Input: declares the per-sample input shape of a Sequential model (without the batch
 * dimension), as Keras's Input(shape=...). It must come first and is not a layer of its own:
 * it adds nothing to summary() (as in Keras). Without it the input shape is taken from the data
 * at the first fit. Input data of another shape is then a shape_error.
 */

#include <utility>

#include "onelearn/nn/tensor.hpp"

namespace onelearn::nn {

struct Input {
  Input() = default;
  // A constructor rather than an aggregate, so that `Input({64})` compiles everywhere: aggregate
  // initialisation with parentheses (C++20's P0960) is in GCC 10 but only in clang 16, and
  // Debian 12's clang is 14.
  explicit Input(Shape per_sample) : shape(std::move(per_sample)) {}

  Shape shape{};
};

}  // namespace onelearn::nn
