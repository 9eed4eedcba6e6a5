#pragma once
/**
 * \file
 * \ingroup nn
 *
 * nn::Shape, nn::TensorView and nn::Tensor: what flows between the layers of a network.
 *
 * A tensor is a row-major buffer and a shape whose first dimension is the batch. Layers of any
 * rank (Dense on (batch, features), Conv2D later on (batch, C, H, W)) share this one type, so
 * the layer interface stays virtual and rank-agnostic, and the matrix kernels see the buffer as
 * a (batch x features) Eigen::Map without a copy. See the design notes in nn/layer.hpp for why
 * this is not xt::xtensor.
 */

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "onelearn/core/detail/aligned_allocator.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::nn {

/// Every buffer of the networks is aligned to 64 bytes, for speed and for reproducibility:
/// Eigen's vectorised reductions (sums along a row) start at the first aligned element, so
/// their rounding depends on the buffer's address modulo the vector width; with every buffer
/// aligned alike, training gives the same bits whatever addresses malloc returns.
template <class T>
using AlignedAllocator = onelearn::detail::AlignedAllocator<T>;
template <class T>
using AlignedVector = onelearn::detail::AlignedVector<T>;

/// Dimensions of a tensor, at most max_rank of them, stored inline: copying a shape never
/// allocates, so passing shapes around in every batch costs nothing.
class Shape {
 public:
  static constexpr int max_rank = 6;

  constexpr Shape() = default;
  Shape(std::initializer_list<index_t> dims) {
    if (dims.size() > static_cast<std::size_t>(max_rank)) {
      throw invalid_argument("nn::Shape: expected at most " + std::to_string(max_rank) +
                             " dimensions, found " + std::to_string(dims.size()));
    }
    for (index_t d : dims) push_back(d);
  }

  [[nodiscard]] constexpr int rank() const noexcept { return rank_; }
  [[nodiscard]] constexpr index_t operator[](int i) const noexcept {
    return dims_[static_cast<std::size_t>(i)];
  }
  [[nodiscard]] constexpr index_t& operator[](int i) noexcept {
    return dims_[static_cast<std::size_t>(i)];
  }
  [[nodiscard]] constexpr index_t back() const noexcept {
    return dims_[static_cast<std::size_t>(rank_ - 1)];
  }

  /// Product of all dimensions (1 for rank 0).
  [[nodiscard]] constexpr index_t size() const noexcept {
    index_t n = 1;
    for (int i = 0; i < rank_; ++i) n *= dims_[static_cast<std::size_t>(i)];
    return n;
  }

  void push_back(index_t d) {
    if (rank_ == max_rank) {
      throw invalid_argument("nn::Shape: expected at most " + std::to_string(max_rank) +
                             " dimensions, found more");
    }
    dims_[static_cast<std::size_t>(rank_++)] = d;
  }

  /// (batch, this...): the shape of a batch of samples of this shape.
  [[nodiscard]] Shape with_batch(index_t batch) const {
    Shape out;
    out.push_back(batch);
    for (int i = 0; i < rank_; ++i) out.push_back((*this)[i]);
    return out;
  }

  /// This shape without its first (batch) dimension.
  [[nodiscard]] Shape without_batch() const {
    Shape out;
    for (int i = 1; i < rank_; ++i) out.push_back((*this)[i]);
    return out;
  }

  friend constexpr bool operator==(const Shape& a, const Shape& b) noexcept {
    if (a.rank_ != b.rank_) return false;
    for (int i = 0; i < a.rank_; ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }

  /// "(64)", "(1, 8, 8)"; with_batch_none gives Keras's "(None, 64)".
  [[nodiscard]] std::string to_string(bool with_batch_none = false) const {
    std::string out = "(";
    if (with_batch_none) out += rank_ > 0 ? "None, " : "None";
    for (int i = 0; i < rank_; ++i) out += (i ? ", " : "") + std::to_string((*this)[i]);
    return out + ")";
  }

 private:
  std::array<index_t, max_rank> dims_{};
  int rank_ = 0;
};

/// A non-owning view: a row-major buffer and a shape whose first dimension is the batch.
/// T may be const. Views are what layers pass to each other; they stay valid while the buffer
/// that owns the data (a layer's output Tensor, a batch buffer, the user's X) is not resized.
template <class T>
struct TensorView {
  using value_type = std::remove_const_t<T>;
  using MatrixMap = std::conditional_t<std::is_const_v<T>, Eigen::Map<const Matrix<value_type>>,
                                       Eigen::Map<Matrix<value_type>>>;
  using ArrayMap = std::conditional_t<std::is_const_v<T>,
                                      Eigen::Map<const Eigen::Array<value_type, Eigen::Dynamic, 1>>,
                                      Eigen::Map<Eigen::Array<value_type, Eigen::Dynamic, 1>>>;

  T* data = nullptr;
  Shape shape;

  [[nodiscard]] index_t size() const noexcept { return shape.size(); }
  [[nodiscard]] index_t batch() const noexcept { return shape.rank() > 0 ? shape[0] : 0; }

  /// (batch x everything else), the view Dense's GEMMs use.
  [[nodiscard]] MatrixMap matrix() const {
    const index_t rows = batch();
    return MatrixMap(data, rows, rows == 0 ? 0 : size() / rows);
  }
  /// (size / last x last): rows along the last axis, for softmax-like operations.
  [[nodiscard]] MatrixMap last_axis_matrix() const {
    const index_t cols = shape.rank() > 0 ? shape.back() : 1;
    return MatrixMap(data, cols == 0 ? 0 : size() / cols, cols);
  }
  /// All entries as one flat array, for element-wise operations.
  [[nodiscard]] ArrayMap array() const { return ArrayMap(data, size()); }

  // clang-format off
  /// A view of T converts to a view of const T. A template, so that TensorView<const T> has no
  /// conversion to its own type, which nvcc's front end warns about (#554) even when a
  /// requires-clause rules it out.
  template <class U = T>
    requires(!std::is_const_v<U>)
  operator TensorView<const U>() const noexcept {  // NOLINT(google-explicit-constructor)
    return {data, shape};
  }
  // clang-format on
};

/// An owning tensor whose buffer only grows: reshaping to a size it has held before does not
/// allocate, so layers that keep their outputs and gradients in Tensors allocate in the first
/// batch and never again (a smaller last batch reuses the same buffer).
template <class T>
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(const Shape& shape) { reshape(shape); }

  /// Sets the shape, growing the buffer when needed. Contents are unspecified afterwards.
  void reshape(const Shape& shape) {
    const auto needed = static_cast<std::size_t>(shape.size());
    if (buffer_.size() < needed) buffer_.resize(needed);
    shape_ = shape;
  }

  [[nodiscard]] const Shape& shape() const noexcept { return shape_; }
  [[nodiscard]] index_t size() const noexcept { return shape_.size(); }
  [[nodiscard]] T* data() noexcept { return buffer_.data(); }
  [[nodiscard]] const T* data() const noexcept { return buffer_.data(); }
  [[nodiscard]] TensorView<T> view() noexcept { return {buffer_.data(), shape_}; }
  [[nodiscard]] TensorView<const T> view() const noexcept { return {buffer_.data(), shape_}; }
  [[nodiscard]] auto matrix() noexcept { return view().matrix(); }
  [[nodiscard]] auto matrix() const noexcept { return view().matrix(); }
  [[nodiscard]] auto array() noexcept { return view().array(); }
  [[nodiscard]] auto array() const noexcept { return view().array(); }

 private:
  AlignedVector<T> buffer_;
  Shape shape_;
};

}  // namespace onelearn::nn
