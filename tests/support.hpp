#pragma once
// Helpers shared by the tests: paths to tests/data, the scikit-learn reference numbers, and
// relative-error checks. What reads files is compiled once, in support.cpp (the library
// onelearn_test_helpers), instead of in every test file: the .npy reader for each target type
// (with a conversion from each of the four dtypes) and nlohmann's parser cost a test file
// about 11 CPU s under the sanitizers (tests/build-cost.md, 2026-12-08).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "onelearn/core/types.hpp"
#include "onelearn/io/io.hpp"

namespace onelearn::test {

/// tests/data/<relative>.
std::string data_path(std::string_view relative);

/// tests/data/<dataset>/sklearn_reference.json: what scikit-learn 1.2.1 computed on the split.
nlohmann::json sklearn_reference(std::string_view dataset);

template <class T>
Vector<T> to_vector(const nlohmann::json& values) {
  Vector<T> out(static_cast<index_t>(values.size()));
  for (index_t i = 0; i < out.size(); ++i) out(i) = values[static_cast<std::size_t>(i)].get<T>();
  return out;
}

template <class T, class Y = T>
struct Split {
  Matrix<T> X_train, X_test;
  Vector<Y> y_train, y_test;
};

/// The train/test split of tests/data/<dataset> as T features and Y targets: T float or double,
/// Y float, double or std::int64_t (the instantiations in support.cpp; another pair is an
/// undefined reference at link time, to be added there).
template <class T, class Y = T>
Split<T, Y> load_split(std::string_view dataset);

// One list for the declarations here (extern) and the definitions in support.cpp (no extern).
#define ONELEARN_TEST_LOAD_SPLIT(extern_, T, Y) \
  extern_ template Split<T, Y> load_split<T, Y>(std::string_view);
#define ONELEARN_TEST_LOAD_SPLITS(extern_)                \
  ONELEARN_TEST_LOAD_SPLIT(extern_, double, double)       \
  ONELEARN_TEST_LOAD_SPLIT(extern_, double, float)        \
  ONELEARN_TEST_LOAD_SPLIT(extern_, double, std::int64_t) \
  ONELEARN_TEST_LOAD_SPLIT(extern_, float, double)        \
  ONELEARN_TEST_LOAD_SPLIT(extern_, float, float)         \
  ONELEARN_TEST_LOAD_SPLIT(extern_, float, std::int64_t)
ONELEARN_TEST_LOAD_SPLITS(extern)

/// Largest |a - b| / max(|b|, floor) over the entries: relative error, with an absolute floor
/// for entries of b near zero.
template <class A, class B>
double max_relative_error(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b,
                          double floor = 1e-12) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  const auto ad = a.template cast<double>().array();
  const auto bd = b.template cast<double>().array();
  return ((ad - bd).abs() / bd.abs().max(floor)).maxCoeff();
}

/// Tolerance for comparing a T computation with a float64 reference.
template <class T>
constexpr double tolerance() {
  return std::is_same_v<T, float> ? 2e-5 : 1e-10;
}

}  // namespace onelearn::test

// The tests' load_npy calls (test_io.cpp's included) use the instantiations of support.cpp.
namespace onelearn::io {
#define ONELEARN_TEST_LOAD_NPY(extern_, M) \
  extern_ template M load_npy<M>(const std::filesystem::path&, const NpyLoadOptions&);
#define ONELEARN_TEST_LOAD_NPY_TYPES(extern_)           \
  ONELEARN_TEST_LOAD_NPY(extern_, Matrix<float>)        \
  ONELEARN_TEST_LOAD_NPY(extern_, Matrix<double>)       \
  ONELEARN_TEST_LOAD_NPY(extern_, Matrix<std::int32_t>) \
  ONELEARN_TEST_LOAD_NPY(extern_, Matrix<std::int64_t>) \
  ONELEARN_TEST_LOAD_NPY(extern_, Vector<float>)        \
  ONELEARN_TEST_LOAD_NPY(extern_, Vector<double>)       \
  ONELEARN_TEST_LOAD_NPY(extern_, Vector<std::int32_t>) \
  ONELEARN_TEST_LOAD_NPY(extern_, Vector<std::int64_t>)
ONELEARN_TEST_LOAD_NPY_TYPES(extern)
}  // namespace onelearn::io
