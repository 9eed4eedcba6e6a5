#pragma once
// Helpers shared by the tests: paths to tests/data, the scikit-learn reference numbers, and
// relative-error checks.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "onelearn/core/types.hpp"
#include "onelearn/io/io.hpp"

namespace onelearn::test {

inline std::string data_path(std::string_view relative) {
  return std::string(ONELEARN_TEST_DATA_DIR) + "/" + std::string(relative);
}

/// tests/data/<dataset>/sklearn_reference.json: what scikit-learn 1.2.1 computed on the split.
inline nlohmann::json sklearn_reference(std::string_view dataset) {
  std::ifstream in(data_path(std::string(dataset) + "/sklearn_reference.json"));
  REQUIRE_MESSAGE(in.good(), "missing reference file for ", dataset);
  return nlohmann::json::parse(in);
}

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

/// The train/test split of tests/data/<dataset> as T features and Y targets.
template <class T, class Y = T>
Split<T, Y> load_split(std::string_view dataset) {
  const std::string dir = std::string(dataset) + "/";
  return {io::load_npy<Matrix<T>>(data_path(dir + "X_train.npy")),
          io::load_npy<Matrix<T>>(data_path(dir + "X_test.npy")),
          io::load_npy<Vector<Y>>(data_path(dir + "y_train.npy")),
          io::load_npy<Vector<Y>>(data_path(dir + "y_test.npy"))};
}

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
