#pragma once
/**
 * \file
 * \brief Data in a compute space: views, and the containers that own or borrow the memory.
 * \ingroup spaces
 *
 * \code
 * #include <onelearn/space/data.hpp>
 * #include <onelearn/space/host.hpp>
 * namespace space = onelearn::space;
 * space::host h;
 * space::matrix<space::host, double> Xh = space::to_space(h, X);   // borrowed: no copy
 * space::matrix_view<const double> v = Xh.view();         // what kernels take
 * space::vector<space::host, double> w(h, X.rows());      // owned: X.rows() zeros
 * space::vector_view<double> wv = w.mutable_view();
 * wv[0] = v(0, 0);
 * auto yh = space::to_space(h, std::span<const double>(y.data(), y.size()));   // a vector
 * onelearn::Vector<double> back = w.to_host();            // one copy from a device
 * std::cout << back(0) << ' ' << yh.size() << ' ' << Xh.to_host().rows() << '\n';
 * \endcode
 *
 * Data in a compute space: views (a pointer and a shape, what kernels take, copyable onto a
 * device) and the containers that own or borrow the memory behind them.
 * - `matrix_view<T>`, `vector_view<T>`: raw views, valid in the space whose memory they point
 *   to;
 * - `space::matrix<S, T>`: samples x features, row-major, in S's memory;
 * - `space::vector<S, T>`: one value per sample (weights, targets, labels);
 * - `to_space(s, X)`: host data into S: borrowed where `S::host_accessible` (no copy: the
 *   result must not outlive X), otherwise copied once;
 * - `m.to_host()`: back to an Eigen Matrix / Vector (one copy from a device).
 */

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

#include "onelearn/core/types.hpp"
#include "onelearn/space/concept.hpp"
#include "onelearn/space/config.hpp"

namespace onelearn::space {

/// Small host matrices a kernel reads (centres): any Eigen matrix converts, and T is taken from
/// the kernel's other arguments (a non-deduced MatrixRef<T>).
template <class T>
using host_rows = std::type_identity_t<MatrixRef<T>>;

/// Rows x cols, row-major, `stride` elements from one row to the next (>= cols).
template <class T>
struct matrix_view {
  T* data = nullptr;
  index_t rows = 0;
  index_t cols = 0;
  index_t stride = 0;

  ONELEARN_SPACE_HD T* row(index_t i) const { return data + i * stride; }
  ONELEARN_SPACE_HD T& operator()(index_t i, index_t j) const { return data[i * stride + j]; }
  // clang-format off
  /// A view of T converts to a view of const T.
  template <class U = T>
    requires(!std::is_const_v<U>)
  ONELEARN_SPACE_HD operator matrix_view<const U>() const {  // NOLINT(google-explicit-constructor)
    return {data, rows, cols, stride};
  }
  // clang-format on
};

/// `size` contiguous values; an empty view (size 0) means "none" where a kernel takes optional
/// values (weights: every weight 1).
template <class T>
struct vector_view {
  T* data = nullptr;
  index_t size = 0;

  ONELEARN_SPACE_HD T& operator[](index_t i) const { return data[i]; }
  [[nodiscard]] ONELEARN_SPACE_HD bool empty() const { return size == 0; }
  // clang-format off
  template <class U = T>
    requires(!std::is_const_v<U>)
  ONELEARN_SPACE_HD operator vector_view<const U>() const {  // NOLINT(google-explicit-constructor)
    return {data, size};
  }
  // clang-format on
};

/// Which way a split of histogram boosting sends each bin of its feature (255 value bins and the
/// missing-values bin): left[b] != 0 sends the rows of bin b left, for numerical and categorical
/// splits alike (space::partition_rows takes it by value onto a device).
struct bin_routing {
  std::uint8_t left[256] = {};
};

/// Samples x features, row-major, in the memory of space S: owned (a device copy, or a kernel's
/// result) or borrowed (the caller's rows, in a host-accessible space).
template <ComputeSpace S, class T>
class matrix {
 public:
  using space_type = S;
  using value_type = T;

  matrix() = default;
  /// Owned, rows x cols zeros.
  matrix(const S& space, index_t rows, index_t cols)
      : space_(space),
        storage_(space.template allocate<T>(static_cast<std::size_t>(rows * cols))),
        rows_(rows),
        cols_(cols),
        stride_(cols),
        owned_(true) {}
  /// Borrowed: `data` is in S's memory and outlives this matrix.
  static matrix borrow(const S& space, const T* data, index_t rows, index_t cols, index_t stride) {
    matrix m;
    m.space_ = space;
    m.borrowed_ = data;
    m.rows_ = rows;
    m.cols_ = cols;
    m.stride_ = std::max(stride, cols);
    return m;
  }

  [[nodiscard]] index_t rows() const noexcept { return rows_; }
  [[nodiscard]] index_t cols() const noexcept { return cols_; }
  [[nodiscard]] bool owns() const noexcept { return owned_; }
  [[nodiscard]] const S& space() const noexcept { return space_; }

  [[nodiscard]] matrix_view<const T> view() const {
    return {owned_ ? S::data(storage_) : borrowed_, rows_, cols_, stride_};
  }
  /// Only an owned matrix can be written.
  [[nodiscard]] matrix_view<T> mutable_view() {
    return {owned_ ? S::data(storage_) : nullptr, rows_, cols_, stride_};
  }

  /// A host copy (one transfer from a device).
  [[nodiscard]] Matrix<T> to_host() const {
    Matrix<T> out(rows_, cols_);
    const matrix_view<const T> v = view();
    if (rows_ == 0 || cols_ == 0) return out;
    if (v.stride == cols_) {
      space_.copy_to_host(v.data, static_cast<std::size_t>(rows_ * cols_), out.data());
    } else {
      for (index_t i = 0; i < rows_; ++i) {
        space_.copy_to_host(v.row(i), static_cast<std::size_t>(cols_), out.row(i).data());
      }
    }
    return out;
  }

 private:
  S space_{};
  typename S::template buffer<T> storage_{};
  const T* borrowed_ = nullptr;
  index_t rows_ = 0;
  index_t cols_ = 0;
  index_t stride_ = 0;
  bool owned_ = false;
};

/// One value per sample in the memory of space S, owned or borrowed like matrix.
template <ComputeSpace S, class T>
class vector {
 public:
  using space_type = S;
  using value_type = T;

  vector() = default;
  /// Owned, n zeros.
  vector(const S& space, index_t n)
      : space_(space),
        storage_(space.template allocate<T>(static_cast<std::size_t>(n))),
        size_(n),
        owned_(true) {}
  static vector borrow(const S& space, const T* data, index_t n) {
    vector v;
    v.space_ = space;
    v.borrowed_ = data;
    v.size_ = n;
    return v;
  }

  [[nodiscard]] index_t size() const noexcept { return size_; }
  [[nodiscard]] bool owns() const noexcept { return owned_; }
  [[nodiscard]] vector_view<const T> view() const {
    return {owned_ ? S::data(storage_) : borrowed_, size_};
  }
  [[nodiscard]] vector_view<T> mutable_view() {
    return {owned_ ? S::data(storage_) : nullptr, size_};
  }
  [[nodiscard]] Vector<T> to_host() const {
    Vector<T> out(size_);
    if (size_ > 0) space_.copy_to_host(view().data, static_cast<std::size_t>(size_), out.data());
    return out;
  }

 private:
  S space_{};
  typename S::template buffer<T> storage_{};
  const T* borrowed_ = nullptr;
  index_t size_ = 0;
  bool owned_ = false;
};

/// The caller's rows in space S: borrowed where S::host_accessible (no copy; the result must not
/// outlive X, nor the Ref if the Ref had to copy), otherwise copied into S's memory once.
template <ComputeSpace S, class T>
matrix<S, T> to_space(const S& space, const MatrixRef<T>& X) {
  if constexpr (S::host_accessible) {
    return matrix<S, T>::borrow(space, X.data(), X.rows(), X.cols(), X.outerStride());
  } else {
    matrix<S, T> out(space, X.rows(), X.cols());
    if (X.size() == 0) return out;
    const auto n = static_cast<std::size_t>(X.size());
    if (X.outerStride() == X.cols()) {
      space.copy_to_space(X.data(), n, out.mutable_view().data);
    } else {
      const Matrix<T> packed = X;  // one host copy first: one transfer, not one per row
      space.copy_to_space(packed.data(), n, out.mutable_view().data);
    }
    return out;
  }
}

/// The same for any Eigen matrix whose rows lie in place, row-major (onelearn::Matrix<T>, a
/// block of its rows, an Eigen::Map over a .npy buffer). Other layouts (column-major, an
/// expression) would be borrowed from a temporary in a host-accessible space: make the
/// onelearn::Matrix<T> first.
template <ComputeSpace S, class Derived>
matrix<S, typename Derived::Scalar> to_space(const S& space, const Eigen::MatrixBase<Derived>& X) {
  using T = typename Derived::Scalar;
  constexpr bool rows_in_place = bool(Derived::Flags & Eigen::RowMajorBit) &&
                                 bool(Derived::Flags & Eigen::DirectAccessBit) &&
                                 Derived::InnerStrideAtCompileTime == 1;
  static_assert(rows_in_place || !S::host_accessible,
                "onelearn::space::to_space: expected rows in place, row-major (onelearn::Matrix<T> "
                "or a block of its rows), found another layout, which would be borrowed from a "
                "temporary copy; make an onelearn::Matrix<T> of it first");
  return to_space<S, T>(space, MatrixRef<T>(X));
}

/// The caller's values in space S, borrowed or copied once as for matrices. For an Eigen
/// vector v: to_space(s, std::span<const T>(v.data(), v.size())).
template <ComputeSpace S, class T>
vector<S, T> to_space(const S& space, std::span<const T> values) {
  const auto n = static_cast<index_t>(values.size());
  if constexpr (S::host_accessible) {
    return vector<S, T>::borrow(space, values.data(), n);
  } else {
    vector<S, T> out(space, n);
    if (n > 0) space.copy_to_space(values.data(), values.size(), out.mutable_view().data);
    return out;
  }
}

}  // namespace onelearn::space
