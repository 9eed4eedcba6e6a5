#pragma once
// onelearn::onnx::Tensor: the values that flow through an ONNX graph. An n-d array in row-major
// (C) order whose elements are float32, float64 or int64, the element types the executor
// supports (int64 carries shapes, axes and ArgMax indices).
//
// \code
//   onelearn::onnx::Tensor x({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
//   x.dtype();           // DataType::float32
//   x.shape();           // {2, 3}
//   x.data<float>()[4];  // 5.f: element [1, 1]
// \endcode

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "onelearn/core/errors.hpp"

namespace onelearn::onnx {

using Shape = std::vector<std::int64_t>;

enum class DataType { float32, float64, int64 };

template <class T>
concept tensor_scalar =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int64_t>;

template <tensor_scalar T>
constexpr DataType data_type_of() {
  if constexpr (std::is_same_v<T, float>) return DataType::float32;
  if constexpr (std::is_same_v<T, double>) return DataType::float64;
  if constexpr (std::is_same_v<T, std::int64_t>) return DataType::int64;
}

inline const char* to_string(DataType t) {
  switch (t) {
    case DataType::float32: return "float32";
    case DataType::float64: return "float64";
    case DataType::int64: return "int64";
  }
  return "?";
}

/// "(2, 3)", "(5,)" or "()", as numpy prints shapes.
inline std::string shape_string(const Shape& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

/// Number of elements of `shape`; throws on a negative dimension or an overflow, so that a
/// corrupt shape never becomes a huge allocation.
inline std::size_t element_count(const Shape& shape) {
  std::size_t n = 1;
  for (const std::int64_t d : shape) {
    if (d < 0) throw shape_error("onnx: negative dimension in shape " + shape_string(shape));
    const auto u = static_cast<std::size_t>(d);
    if (u != 0 && n > std::numeric_limits<std::size_t>::max() / 8 / u) {
      throw shape_error("onnx: shape " + shape_string(shape) + " has too many elements");
    }
    n *= u;
  }
  return n;
}

/// Row-major strides (in elements) of `shape`. A product of trailing dimensions can only
/// overflow when another dimension is 0 (element_count refuses the others); such a tensor is
/// empty, nothing is ever addressed, and the overflowing strides are set to 0.
inline Shape strides_of(const Shape& shape) {
  Shape s(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) {
    if (__builtin_mul_overflow(s[i], shape[i], &s[i - 1])) s[i - 1] = 0;
  }
  return s;
}

class Tensor {
 public:
  using Storage = std::variant<std::vector<float>, std::vector<double>, std::vector<std::int64_t>>;

  Tensor() = default;

  /// Takes `values` (row-major) for `shape`; their count must match.
  template <tensor_scalar T>
  Tensor(Shape shape, std::vector<T> values) : shape_(std::move(shape)), data_(std::move(values)) {
    if (element_count(shape_) != size()) {
      throw shape_error("onnx::Tensor: shape " + shape_string(shape_) + " needs " +
                        std::to_string(element_count(shape_)) + " values, found " +
                        std::to_string(size()));
    }
  }

  /// A tensor of `shape` filled with `value`.
  template <tensor_scalar T>
  static Tensor filled(Shape shape, T value) {
    const std::size_t n = element_count(shape);
    return Tensor(std::move(shape), std::vector<T>(n, value));
  }

  [[nodiscard]] DataType dtype() const noexcept { return static_cast<DataType>(data_.index()); }
  [[nodiscard]] const Shape& shape() const noexcept { return shape_; }
  [[nodiscard]] std::size_t rank() const noexcept { return shape_.size(); }
  [[nodiscard]] std::size_t size() const noexcept {
    return std::visit([](const auto& v) { return v.size(); }, data_);
  }
  template <tensor_scalar T>
  [[nodiscard]] bool holds() const noexcept {
    return std::holds_alternative<std::vector<T>>(data_);
  }

  /// The elements as T; T must be the tensor's element type.
  template <tensor_scalar T>
  [[nodiscard]] std::span<const T> data() const {
    check_type<T>();
    return std::get<std::vector<T>>(data_);
  }
  template <tensor_scalar T>
  [[nodiscard]] std::vector<T>& values() {
    check_type<T>();
    return std::get<std::vector<T>>(data_);
  }
  [[nodiscard]] const Storage& storage() const noexcept { return data_; }

  /// The elements converted to T, whatever the element type (shape and axis inputs).
  template <tensor_scalar T>
  [[nodiscard]] std::vector<T> to_vector() const {
    return std::visit(
        [](const auto& v) {
          std::vector<T> out(v.size());
          for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<T>(v[i]);
          return out;
        },
        data_);
  }

  /// The same elements under another shape with the same element count.
  [[nodiscard]] Tensor reshaped(Shape shape) const& {
    Tensor t = *this;
    return std::move(t).reshaped(std::move(shape));
  }
  [[nodiscard]] Tensor reshaped(Shape shape) && {
    if (element_count(shape) != size()) {
      throw shape_error("onnx::Tensor: cannot reshape " + shape_string(shape_) + " (" +
                        std::to_string(size()) + " elements) to " + shape_string(shape));
    }
    shape_ = std::move(shape);
    return std::move(*this);
  }

 private:
  template <class T>
  void check_type() const {
    if (!holds<T>()) {
      throw invalid_argument(std::string("onnx::Tensor: elements are ") + to_string(dtype()) +
                             ", not " + to_string(data_type_of<T>()));
    }
  }

  Shape shape_{0};  // a default tensor is empty: one dimension of size 0
  Storage data_{std::vector<float>{}};
};

}  // namespace onelearn::onnx
