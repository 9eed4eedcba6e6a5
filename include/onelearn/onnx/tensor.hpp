#pragma once
/**
 * \class onelearn::onnx::Tensor
 * \brief The values that flow through an ONNX graph: an n-d array of one element type.
 * \ingroup onnx
 *
 * \code
 * #include <onelearn/onnx/tensor.hpp>
 * namespace ox = onelearn::onnx;
 * ox::Tensor x({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
 * ox::DataType type = x.dtype();                       // DataType::float32
 * const ox::Shape& shape = x.shape();                  // {2, 3}
 * float e = x.data<float>()[4];                        // 5.f: element [1, 1]
 * double sum = ox::dispatch(x.dtype(), [&](auto tag) {  // the one runtime switch over types
 *   using T = typename decltype(tag)::type;            // here float
 *   double s = 0;
 *   for (const T v : x.data<T>()) s += static_cast<double>(v);
 *   return s;
 * });
 * std::cout << ox::to_string(type) << ' ' << ox::shape_string(shape) << ' ' << e << ' ' << sum;
 * \endcode
 *
 * onnx::Tensor: the values that flow through an ONNX graph. An n-d array in row-major (C) order
 * whose elements have one of the executor's element types, listed once in this header in
 * `ONELEARN_ONNX_ELEMENT_TYPES`: float32, float64, int64, int32, int8, uint8 and bool.
 * Everything else (`DataType`, its names, the ONNX type codes, the `Storage` variant,
 * `dispatch`) is generated from that list, so adding a type is one line there.
 *
 * Operators that only move elements (Gather, Slice, Transpose, Tile, ...) work on `bytes()`
 * whatever the type (one compiled body for all types); arithmetic dispatches over the type.
 *
 * Errors: `onelearn::shape_error` for values whose count does not match the shape, a negative
 * dimension, a shape with too many elements, or a reshape to another element count;
 * `onelearn::invalid_argument` for `data<T>()` or `values<T>()` with a T other than the
 * element type.
 */

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
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

/// ONNX's bool element: one byte (std::vector<bool> packs bits and has no span). Converts to
/// and from bool implicitly, so comparisons and logic read as on bool.
struct boolean {
  bool value = false;
  constexpr boolean() = default;
  constexpr boolean(bool v) : value(v) {}  // NOLINT(google-explicit-constructor)
  constexpr operator bool() const { return value; }  // NOLINT(google-explicit-constructor)
};
static_assert(sizeof(boolean) == 1);

// The element types: X(enumerator, C++ type, ONNX TensorProto code, name). The order is the
// order of DataType and of Tensor::Storage's alternatives.
#define ONELEARN_ONNX_ELEMENT_TYPES(X)      \
  X(float32, float, 1, "float32")          \
  X(float64, double, 11, "float64")        \
  X(int64, std::int64_t, 7, "int64")       \
  X(int32, std::int32_t, 6, "int32")       \
  X(int8, std::int8_t, 3, "int8")          \
  X(uint8, std::uint8_t, 2, "uint8")       \
  X(boolean, ::onelearn::onnx::boolean, 9, "bool")

#define ONELEARN_ONNX_ENUMERATOR(e, T, code, name) e,
enum class DataType { ONELEARN_ONNX_ELEMENT_TYPES(ONELEARN_ONNX_ENUMERATOR) };
#undef ONELEARN_ONNX_ENUMERATOR

#define ONELEARN_ONNX_COUNT(e, T, code, name) +1
inline constexpr std::size_t data_type_count = 0 ONELEARN_ONNX_ELEMENT_TYPES(ONELEARN_ONNX_COUNT);
#undef ONELEARN_ONNX_COUNT

template <class T>
concept tensor_scalar =
#define ONELEARN_ONNX_IS(e, T_, code, name) std::is_same_v<T, T_> ||
    ONELEARN_ONNX_ELEMENT_TYPES(ONELEARN_ONNX_IS) false;
#undef ONELEARN_ONNX_IS

template <tensor_scalar T>
constexpr DataType data_type_of() {
#define ONELEARN_ONNX_OF(e, T_, code, name) \
  if constexpr (std::is_same_v<T, T_>) return DataType::e;
  ONELEARN_ONNX_ELEMENT_TYPES(ONELEARN_ONNX_OF)
#undef ONELEARN_ONNX_OF
}

inline const char* to_string(DataType t) {
  switch (t) {
#define ONELEARN_ONNX_NAME(e, T, code, name) \
  case DataType::e: return name;
    ONELEARN_ONNX_ELEMENT_TYPES(ONELEARN_ONNX_NAME)
#undef ONELEARN_ONNX_NAME
  }
  return "?";
}

/// The ONNX TensorProto element-type code of t (FLOAT = 1, ...).
constexpr std::int32_t onnx_code(DataType t) {
  switch (t) {
#define ONELEARN_ONNX_CODE(e, T, code, name) \
  case DataType::e: return code;
    ONELEARN_ONNX_ELEMENT_TYPES(ONELEARN_ONNX_CODE)
#undef ONELEARN_ONNX_CODE
  }
  return 0;
}

/// The C++ type of a DataType known at compile time: type_of<DataType::int32> is std::int32_t.
template <DataType D>
struct type_of_t;
#define ONELEARN_ONNX_TYPE_OF(e, T_, code, name) \
  template <>                                    \
  struct type_of_t<DataType::e> {                \
    using type = T_;                             \
  };
ONELEARN_ONNX_ELEMENT_TYPES(ONELEARN_ONNX_TYPE_OF)
#undef ONELEARN_ONNX_TYPE_OF
template <DataType D>
using type_of = typename type_of_t<D>::type;

/// Calls f(std::type_identity<T>{}) for the C++ type T of t: the one runtime switch over types.
template <class F>
decltype(auto) dispatch(DataType t, F&& f) {
  switch (t) {
#define ONELEARN_ONNX_CASE(e, T, code, name) \
  case DataType::e: return f(std::type_identity<T>{});
    ONELEARN_ONNX_ELEMENT_TYPES(ONELEARN_ONNX_CASE)
#undef ONELEARN_ONNX_CASE
  }
  return f(std::type_identity<float>{});  // not reached: t is one of the enumerators
}

/// Bytes per element of t.
inline std::size_t element_size(DataType t) {
  return dispatch(t, [](auto tag) { return sizeof(typename decltype(tag)::type); });
}

/// A set of element types (a bit per DataType), for saying which types an operator takes.
struct TypeSet {
  std::uint32_t bits = 0;
  constexpr TypeSet() = default;
  constexpr TypeSet(std::initializer_list<DataType> types) {
    for (const DataType t : types) bits |= 1u << static_cast<unsigned>(t);
  }
  [[nodiscard]] constexpr bool contains(DataType t) const {
    return (bits >> static_cast<unsigned>(t)) & 1u;
  }
  [[nodiscard]] constexpr bool empty() const { return bits == 0; }
  /// The type of the lowest bit (the set must not be empty).
  [[nodiscard]] constexpr DataType first() const {
    unsigned i = 0;
    while (((bits >> i) & 1u) == 0) ++i;
    return static_cast<DataType>(i);
  }
  [[nodiscard]] constexpr TypeSet operator|(TypeSet o) const {
    TypeSet s;
    s.bits = bits | o.bits;
    return s;
  }
  /// "float32, float64"
  [[nodiscard]] std::string names() const {
    std::string s;
    for (std::size_t i = 0; i < data_type_count; ++i) {
      if (!contains(static_cast<DataType>(i))) continue;
      if (!s.empty()) s += ", ";
      s += to_string(static_cast<DataType>(i));
    }
    return s;
  }
};

namespace types {
inline constexpr TypeSet floats{DataType::float32, DataType::float64};
inline constexpr TypeSet signed_ints{DataType::int64, DataType::int32, DataType::int8};
inline constexpr TypeSet ints = signed_ints | TypeSet{DataType::uint8};
inline constexpr TypeSet signed_numbers = floats | signed_ints;
inline constexpr TypeSet numbers = floats | ints;
inline constexpr TypeSet bools{DataType::boolean};
inline constexpr TypeSet all = numbers | bools;
}  // namespace types

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

namespace detail {
template <class Drop, class... Ts>
struct vectors_of {
  using type = std::variant<std::vector<Ts>...>;
};
}  // namespace detail

class Tensor {
 public:
#define ONELEARN_ONNX_COMMA_TYPE(e, T, code, name) , T
  /// std::variant<std::vector<float>, std::vector<double>, ...>: one alternative per type.
  using Storage = detail::vectors_of<void ONELEARN_ONNX_ELEMENT_TYPES(ONELEARN_ONNX_COMMA_TYPE)>::type;
#undef ONELEARN_ONNX_COMMA_TYPE

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

  /// A tensor of `type` and `shape`, every element zero (false). The element count is checked
  /// (element_count) before anything is allocated.
  Tensor(DataType type, Shape shape) : shape_(std::move(shape)) {
    const std::size_t n = element_count(shape_);
    dispatch(type, [&](auto tag) { data_ = std::vector<typename decltype(tag)::type>(n); });
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
  [[nodiscard]] std::size_t element_bytes() const { return element_size(dtype()); }
  /// The elements' bytes, whatever the type (for operators that only move elements).
  [[nodiscard]] const std::byte* bytes() const {
    return dispatch(dtype(), [&](auto tag) {
      return reinterpret_cast<const std::byte*>(data<typename decltype(tag)::type>().data());
    });
  }
  [[nodiscard]] std::byte* mutable_bytes() {
    return dispatch(dtype(), [&](auto tag) {
      return reinterpret_cast<std::byte*>(values<typename decltype(tag)::type>().data());
    });
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
    return dispatch(dtype(), [&](auto tag) {
      const auto& v = std::get<std::vector<typename decltype(tag)::type>>(data_);
      std::vector<T> out(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<T>(v[i]);
      return out;
    });
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
