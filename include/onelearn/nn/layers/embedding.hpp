#pragma once
/**
 * \class onelearn::nn::Embedding
 * \brief A lookup table from token ids to vectors, as Keras's Embedding.
 * \ingroup layers
 *
 * \code
 * #include <onelearn/nn/layers/embedding.hpp>
 *
 * namespace nn = onelearn::nn;
 * // Sequences of 20 token ids in 0..999, stored as T values in the rows of X.
 * nn::Sequential<float> model{nn::Input({20}), nn::Embedding(1000, 16),  // (N, 20, 16)
 *                             nn::Flatten{}, nn::Dense(2)};
 * \endcode
 *
 * nn::Embedding: a lookup table, y[n, ..., :] = W[x[n, ...], :] with W of shape
 * (input_dim x output_dim), as Keras's Embedding and PyTorch's nn.Embedding. The input holds
 * integer indices carried as values of the network's type T (the data flowing between layers
 * is one type; float represents every integer up to 2^24 exactly, double up to 2^53); the
 * output appends an output_dim axis to the input's shape.
 *
 * Method: forward copies rows of W; backward scatter-adds each output row's gradient into the
 * row of W it came from (repeated indices accumulate). The indices are not differentiable:
 * when an input gradient is asked for (Embedding not first in the network) it is zero.
 *
 * \par Parameters (Embedding(input_dim, output_dim, EmbeddingOptions))
 * - `input_dim` (vocabulary size, >= 1), `output_dim` (>= 1).
 * - `embeddings_initializer` (default "uniform": U(-0.05, 0.05), Keras's default; PyTorch draws
 *   N(0, 1)); also glorot_uniform, glorot_normal, he_uniform, he_normal (fan_in = input_dim,
 *   fan_out = output_dim), zeros.
 * - `seed` (optional): as Dense.
 *
 * \par Accessors
 * input_dim(), output_dim(); parameters() const: the table, read-only.
 *
 * \par Differences from Keras
 * - No mask_zero, regularisers or constraints; indices are T values, not an integer tensor.
 *
 * Errors: `invalid_argument` at construction for input_dim or output_dim < 1 or an unknown
 * initializer; in forward, `invalid_argument` for an index that is not an integer in
 * 0..input_dim-1 (the message gives the value and its position in the batch); `shape_error`
 * for input of rank 0 per sample or of the wrong per-sample shape.
 */

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/detail/random.hpp"
#include "onelearn/nn/layer.hpp"

namespace onelearn::nn {

struct EmbeddingOptions {
  std::string embeddings_initializer = "uniform";
  std::optional<std::uint64_t> seed{};
};

template <class T>
class EmbeddingLayer;

/// The spec: nn::Embedding(1000, 16).
struct Embedding {
  index_t input_dim = 1, output_dim = 1;
  EmbeddingOptions options{};

  Embedding(index_t input_dim_, index_t output_dim_, EmbeddingOptions options_ = {})
      : input_dim(input_dim_), output_dim(output_dim_), options(std::move(options_)) {}

  template <class T>
  [[nodiscard]] std::unique_ptr<Layer<T>> make() const {
    return std::make_unique<EmbeddingLayer<T>>(*this);
  }
};

template <class T>
class EmbeddingLayer final : public Layer<T> {
 public:
  explicit EmbeddingLayer(const Embedding& spec)
      : input_dim_(spec.input_dim), output_dim_(spec.output_dim), seed_(spec.options.seed) {
    if (input_dim_ < 1 || output_dim_ < 1) {
      throw invalid_argument("Embedding: expected input_dim >= 1 and output_dim >= 1, found " +
                             std::to_string(input_dim_) + " and " + std::to_string(output_dim_));
    }
    uniform_ = spec.options.embeddings_initializer == "uniform";
    if (!uniform_) {
      initializer_ = detail::parse_initializer("Embedding", spec.options.embeddings_initializer);
    }
  }

  [[nodiscard]] std::string_view class_name() const override { return "Embedding"; }

  [[nodiscard]] Shape output_shape(const Shape& input) const override {
    if (input.rank() < 1 || input.rank() >= Shape::max_rank - 1) {
      throw shape_error("Embedding: expected index input with 1 to " +
                        std::to_string(Shape::max_rank - 2) + " dimensions per sample, found " +
                        input.to_string());
    }
    Shape out = input;
    out.push_back(output_dim_);
    return out;
  }

  [[nodiscard]] index_t parameter_count(const Shape& /*input*/) const override {
    return input_dim_ * output_dim_;
  }

  void build(const Shape& input, std::uint64_t seed) override {
    (void)output_shape(input);
    input_shape_ = input;
    const auto n = static_cast<std::size_t>(input_dim_ * output_dim_);
    params_.assign(n, T(0));
    grads_.assign(n, T(0));
    const std::uint64_t s = seed_.value_or(seed);
    if (uniform_) {
      // Keras's RandomUniform(-0.05, 0.05).
      detail::SplitMix gen(s);
      for (T& v : params_) v = static_cast<T>(0.05 * (2.0 * gen.uniform() - 1.0));
    } else {
      detail::initialize<T>(initializer_, input_dim_, output_dim_, s, std::span<T>(params_));
    }
  }

  TensorView<const T> forward(TensorView<const T> x, bool /*training*/) override {
    if (params_.empty()) {
      throw not_fitted_error("Embedding.forward: expected a built layer, found one not built");
    }
    if (x.shape.rank() < 2 || !(x.shape.without_batch() == input_shape_)) {
      throw shape_error("Embedding.forward: expected a batch of shape " +
                        input_shape_.with_batch(x.batch()).to_string() + ", found " +
                        x.shape.to_string());
    }
    x_shape_ = x.shape;
    const index_t count = x.size();
    indices_.resize(static_cast<std::size_t>(count));
    for (index_t i = 0; i < count; ++i) {
      const T v = x.data[i];
      if (!(v >= T(0) && v < static_cast<T>(input_dim_) && v == std::floor(v))) {
        std::ostringstream value;
        value << v;
        throw invalid_argument("Embedding.forward: expected integer indices in 0.." +
                               std::to_string(input_dim_ - 1) + " (input_dim " +
                               std::to_string(input_dim_) + "), found " + value.str() +
                               " at sample " + std::to_string(i / (count / x.batch())) +
                               ", position " + std::to_string(i % (count / x.batch())));
      }
      indices_[static_cast<std::size_t>(i)] = static_cast<index_t>(v);
    }
    Shape out = x.shape;
    out.push_back(output_dim_);
    y_.reshape(out);
    for (index_t i = 0; i < count; ++i) {
      const T* row = params_.data() + indices_[static_cast<std::size_t>(i)] * output_dim_;
      std::copy(row, row + output_dim_, y_.data() + i * output_dim_);
    }
    return y_.view();
  }

  TensorView<const T> backward(TensorView<const T> grad_output, bool need_input_grad) override {
    std::fill(grads_.begin(), grads_.end(), T(0));
    for (std::size_t i = 0; i < indices_.size(); ++i) {
      T* row = grads_.data() + indices_[i] * output_dim_;
      const T* g = grad_output.data + static_cast<index_t>(i) * output_dim_;
      for (index_t k = 0; k < output_dim_; ++k) row[k] += g[k];
    }
    if (!need_input_grad) return {};
    dx_.reshape(x_shape_);
    std::fill(dx_.data(), dx_.data() + dx_.size(), T(0));
    return dx_.view();
  }

  [[nodiscard]] std::vector<std::span<T>> parameters() override { return split<T>(params_); }
  [[nodiscard]] std::vector<std::span<T>> gradients() override { return split<T>(grads_); }
  /// Read-only parameters(): [the (input_dim x output_dim) table] (empty before build), for
  /// code that holds a const layer (ONNX export).
  [[nodiscard]] std::vector<std::span<const T>> parameters() const {
    return split<const T>(params_);
  }

  [[nodiscard]] index_t input_dim() const noexcept { return input_dim_; }
  [[nodiscard]] index_t output_dim() const noexcept { return output_dim_; }

 private:
  template <class U>
  static std::vector<std::span<U>> split(std::span<U> buffer) {
    if (buffer.empty()) return {};
    return {buffer};
  }

  index_t input_dim_, output_dim_;
  std::optional<std::uint64_t> seed_;
  bool uniform_ = true;
  detail::Initializer initializer_ = detail::Initializer::glorot_uniform;
  Shape input_shape_, x_shape_;
  AlignedVector<T> params_, grads_;  // (input_dim x output_dim), row-major
  std::vector<index_t> indices_;     // of the last forward
  Tensor<T> y_, dx_;
};

}  // namespace onelearn::nn
