#pragma once
/**
 * \file
 * \brief ONNX export of KNeighborsClassifier and KNeighborsRegressor in plain ONNX operators.
 * \ingroup onnx
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/onnx/export/neighbors.hpp>
 * onelearn::neighbors::KNeighborsClassifier<double> knn({.n_neighbors = 3});
 * onelearn::onnx::save(knn.fit(X, y), "knn.onnx");   // outputs "label", "probabilities"
 * \endcode
 *
 * ONNX export of the k-nearest-neighbour models: the training rows travel in the model (an
 * n_samples_fit x n_features initializer), as they do in scikit-learn's pickle and in skl2onnx's
 * conversion. Outputs as skl2onnx names them: "label" (int64, N) and "probabilities" (float,
 * N x n_classes) for KNeighborsClassifier, "variable" (float, N x 1) for KNeighborsRegressor.
 *
 * The graph, in the order predict works:
 * - squared distances to every training row in the direct form sum((x - t)^2) (Unsqueeze, Sub,
 *   Mul, MatMul with ones, Squeeze; see onnx/export/cluster.hpp for why not |x|^2 - 2 x.t +
 *   |t|^2): N x n_samples_fit, through an N x n_samples_fit x n_features intermediate;
 * - TopK (largest 0, sorted): the n_neighbors nearest rows, ties to the lower row number as
 *   onelearn's search breaks them;
 * - weights "distance": 1 / Sqrt of those, and for a query at distance 0 from some rows 1 for
 *   those rows and 0 for the others (Equal, Cast, ReduceMax, Greater, Where), as predict;
 * - classifier: Gather of each neighbour's class index, OneHot, times the weights, ReduceSum
 *   over the neighbours (the votes), Div by their total ("probabilities"), ArgMax (ties: the
 *   smaller class) and Gather of classes() ("label");
 * - regressor: Gather of each neighbour's target, then ReduceMean ("uniform") or
 *   ReduceSum(w y) / ReduceSum(w) ("distance").
 *
 * \par Precision
 * Float32 like every export (onnx/export/core.hpp): rows and targets of a double model are
 * rounded to float. Where float32 squared distances tie but the exact ones do not (or the
 * reverse) the neighbours may come in another order; for data whose squared distances float32
 * holds exactly (small integers, as digits' pixels) the export picks the same neighbours.
 *
 * Only a model fitted under exec::local exports: under a distributed policy each rank stores
 * just its own rows (a compile-time error says so). onnx::to_estimator reads the model back
 * (under exec::mpi each rank then keeps its block of the rows).
 */

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/neighbors/k_neighbors_classifier.hpp"
#include "onelearn/neighbors/k_neighbors_regressor.hpp"
#include "onelearn/onnx/export/core.hpp"
#include "onelearn/onnx/export/scores.hpp"

namespace onelearn::onnx {

namespace detail {

template <class Exec>
constexpr bool exports_neighbours = !Exec::is_distributed;

/// The n_neighbors nearest training rows of each row of `x`: their squared distances and row
/// numbers (both N x k).
struct ExportedNeighbours {
  std::string squared_distances;
  std::string indices;
};

template <class T>
ExportedNeighbours export_neighbour_search(GraphBuilder& b, const std::string& x,
                                           const Matrix<T>& rows, std::int64_t k) {
  const auto n = static_cast<std::int64_t>(rows.rows());
  const auto p = static_cast<std::int64_t>(rows.cols());
  const std::string d2 = export_squared_differences(b, x, to_reals(rows), {}, n, p);
  const std::string k_value = b.constant_int64("n_neighbors", {1}, {k});
  ExportedNeighbours out{b.fresh("neighbour_squared_distances"), b.fresh("neighbour_indices")};
  auto& top = b.node("TopK", {d2, k_value}, {out.squared_distances, out.indices});
  set_attribute(top, "axis", std::int64_t{1});
  set_attribute(top, "largest", std::int64_t{0});
  set_attribute(top, "sorted", std::int64_t{1});
  return out;
}

/// weights = "distance": 1 / distance (N x k), except that a query at distance 0 from some
/// rows weighs those rows 1 and the others 0 (scikit-learn's _get_weights).
inline std::string export_distance_weights(GraphBuilder& b, const ExportedNeighbours& found) {
  const std::string distances = b.apply("Sqrt", {found.squared_distances}, "neighbour_distances");
  const std::string zero = b.constant("zero", {}, {0.0});
  const std::string at_zero = b.apply("Equal", {distances, zero}, "at_zero_distance");
  const std::string at_zero_weight = b.fresh("at_zero_weight");
  auto& cast = b.node("Cast", {at_zero}, {at_zero_weight});
  set_attribute(cast, "to", std::int64_t{b.real_type()});
  const std::string any_zero = b.fresh("any_at_zero");
  auto& any = b.node("ReduceMax", {at_zero_weight}, {any_zero});
  set_attribute(any, "axes", std::vector<std::int64_t>{1});
  set_attribute(any, "keepdims", std::int64_t{1});
  const std::string has_zero = b.apply("Greater", {any_zero, zero}, "has_zero_distance");
  // Infinite where the distance is 0; Where then takes the 0/1 weights for those queries.
  const std::string inverse = b.apply("Reciprocal", {distances}, "inverse_distances");
  return b.apply("Where", {has_zero, at_zero_weight, inverse}, "neighbour_weights");
}

/// The sum over the neighbours (axis 1) of `values`, N x k (x C) -> N (x C), or N x 1 kept.
inline std::string export_sum_over_neighbours(GraphBuilder& b, const std::string& values,
                                              bool keepdims, std::string_view base) {
  const std::string axis = b.constant_int64("axis_1", {1}, {1});
  const std::string out = b.fresh(base);
  auto& sum = b.node("ReduceSum", {values, axis}, {out});
  set_attribute(sum, "keepdims", std::int64_t{keepdims ? 1 : 0});
  return out;
}

}  // namespace detail

template <class T, class E, class S>
Exported export_model(GraphBuilder& b, const neighbors::KNeighborsClassifier<T, E, S>& m,
                      const std::string& x) {
  static_assert(detail::exports_neighbours<E>,
                "onnx export of KNeighborsClassifier: fitted under a distributed policy, each rank "
                "holds only its own training rows; fit a KNeighborsClassifier<T, exec::local> on "
                "all rows to export it");
  const Labels& classes = m.classes();
  const Labels labels = m.fit_y();
  const auto n_classes = static_cast<std::int64_t>(classes.size());
  std::vector<std::int64_t> class_index;
  class_index.reserve(static_cast<std::size_t>(labels.size()));
  for (const std::int64_t label : labels) {
    class_index.push_back(std::lower_bound(classes.begin(), classes.end(), label) - classes.begin());
  }
  const detail::ExportedNeighbours found =
      detail::export_neighbour_search(b, x, m.fit_X(), m.get_params().n_neighbors);

  const std::string row_classes =
      b.constant_int64("row_class_index", {static_cast<std::int64_t>(class_index.size())}, class_index);
  const std::string neighbour_classes =
      b.apply("Gather", {row_classes, found.indices}, "neighbour_class_index");  // N x k
  std::string ballots;  // N x k x C: 1 where the neighbour is of the class
  if (b.is_float64()) {
    // onnxruntime's OneHot has no double output: the neighbours' class numbers compared with
    // 0..C-1 (Equal, broadcast over a new last axis), cast to double.
    std::vector<std::int64_t> class_numbers(static_cast<std::size_t>(n_classes));
    for (std::int64_t c = 0; c < n_classes; ++c) class_numbers[static_cast<std::size_t>(c)] = c;
    const std::string column = b.apply(
        "Unsqueeze", {neighbour_classes, b.constant_int64("axis_2", {1}, {2})}, "neighbour_class_column");
    const std::string matches = b.apply(
        "Equal", {column, b.constant_int64("class_numbers", {n_classes}, class_numbers)}, "is_class");
    ballots = b.fresh("ballots");
    set_attribute(b.node("Cast", {matches}, {ballots}), "to", std::int64_t{b.real_type()});
  } else {
    const std::string depth = b.constant_int64("n_classes", {1}, {n_classes});
    const std::string off_on = b.constant("off_on", {2}, {0.0, 1.0});
    ballots = b.apply("OneHot", {neighbour_classes, depth, off_on}, "ballots");
  }
  if (m.get_params().weights == "distance") {
    const std::string weights = detail::export_distance_weights(b, found);
    const std::string axis2 = b.constant_int64("axis_2", {1}, {2});
    const std::string column = b.apply("Unsqueeze", {weights, axis2}, "weights_column");
    ballots = b.apply("Mul", {ballots, column}, "weighted_ballots");
  }
  const std::string votes = detail::export_sum_over_neighbours(b, ballots, false, "votes");
  const std::string totals = detail::export_sum_over_neighbours(b, votes, true, "vote_totals");
  const std::string proba = b.apply("Div", {votes, totals}, "probabilities");
  const std::string label = detail::export_labels_of_argmax(b, votes, classes);
  return {{"label", label, ::onnx::TensorProto::INT64, {-1}},
          {"probabilities", proba, b.real_type(), {-1, n_classes}}};
}

template <class T, class E, class S>
Exported export_model(GraphBuilder& b, const neighbors::KNeighborsRegressor<T, E, S>& m,
                      const std::string& x) {
  static_assert(detail::exports_neighbours<E>,
                "onnx export of KNeighborsRegressor: fitted under a distributed policy, each rank "
                "holds only its own training rows; fit a KNeighborsRegressor<T, exec::local> on "
                "all rows to export it");
  const Vector<T> targets = m.fit_y();
  const detail::ExportedNeighbours found =
      detail::export_neighbour_search(b, x, m.fit_X(), m.get_params().n_neighbors);
  const std::string row_targets =
      b.constant("row_targets", {static_cast<std::int64_t>(targets.size())}, to_reals(targets));
  const std::string neighbour_targets =
      b.apply("Gather", {row_targets, found.indices}, "neighbour_targets");  // N x k
  std::string prediction;
  if (m.get_params().weights == "distance") {
    const std::string weights = detail::export_distance_weights(b, found);
    const std::string weighted = b.apply("Mul", {weights, neighbour_targets}, "weighted_targets");
    const std::string sum = detail::export_sum_over_neighbours(b, weighted, true, "weighted_sum");
    const std::string total = detail::export_sum_over_neighbours(b, weights, true, "weight_total");
    prediction = b.apply("Div", {sum, total}, "variable");
  } else {
    prediction = b.fresh("variable");
    auto& mean = b.node("ReduceMean", {neighbour_targets}, {prediction});
    set_attribute(mean, "axes", std::vector<std::int64_t>{1});
    set_attribute(mean, "keepdims", std::int64_t{1});
  }
  return {{"variable", prediction, b.real_type(), {-1, 1}}};
}

}  // namespace onelearn::onnx
