#pragma once
/**
 * \class onelearn::neighbors::KNeighborsRegressor
 * \brief k-nearest-neighbour regression, as scikit-learn's KNeighborsRegressor.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/neighbors/k_neighbors_regressor.hpp>
 *
 * onelearn::neighbors::KNeighborsRegressor<double> knn;  // or ({.n_neighbors = 7})
 * knn.fit(X_train, y_train);                             // y_train: onelearn::Vector<double>
 * onelearn::Vector<double> predicted = knn.predict(X_test);
 * double r2 = knn.score(X_test, y_test);                 // coefficient of determination
 * auto [distances, indices] = knn.kneighbors(X_test);    // as NearestNeighbors
 *
 * // Data-parallel: the training rows stay sharded (a rank may hold no rows); then every rank
 * // passes the SAME queries and gets the same predictions.
 * onelearn::exec::mpi policy{comm};  // the application's communicator
 * onelearn::neighbors::KNeighborsRegressor<double, onelearn::exec::mpi> dist({}, policy);
 * dist.fit(my_X, my_y);
 * onelearn::Vector<double> everywhere = dist.predict(all_queries);
 * \endcode
 *
 * neighbors::KNeighborsRegressor: k-nearest-neighbour regression, as scikit-learn's
 * KNeighborsRegressor (1.2.1) with algorithm="brute" and the Euclidean metric. Each query gets
 * the mean of the targets of its n_neighbors nearest training rows, or their average weighted
 * by 1 / distance; the sums are taken in double, in neighbour order. The neighbour search, its
 * precision (norms and GEMM in T for the selection, exact distances in double for the result)
 * and its distributed merge are NearestNeighbors' (nearest_neighbors.hpp).
 *
 * Distributed (exec::mpi): fit all-gathers the row counts only; the rows and targets stay
 * where they are. predict, score and kneighbors are collective: every rank passes the same
 * queries (checked, see NearestNeighbors), each rank's k best candidates travel with their
 * targets, and every rank gets the one-process answer on the concatenated rows.
 *
 * \par Parameters (KNeighborsRegressorParams)
 * - `n_neighbors` (int, default 5): neighbours averaged, 1 <= n_neighbors <= n_samples_fit.
 * - `weights` (string, default "uniform"): "uniform" (plain mean) or "distance" (weights
 *   1 / distance; a query at distance 0 from some training rows gets the mean of those rows).
 * - `algorithm` (string, default "auto"): "auto" or "brute"; both are the brute-force search.
 * - `p` (double, default 2): Minkowski power; only 2 (Euclidean) is implemented.
 * - `metric` (string, default "minkowski"): "minkowski" (with p = 2), "euclidean" or "l2".
 *
 * \par Attributes (after fit)
 * - `n_samples_fit()`: training rows over all ranks.
 * - `n_features_in()`: number of features seen in fit.
 * - `fit_X()` (Matrix<T>), `fit_y()` (Vector<T>): the training rows this rank stores and their
 *   targets, in fit's order (scikit-learn's private `_fit_X` and `_y`); all of them under
 *   exec::local. What onnx/export/neighbors.hpp writes into the model.
 *
 * \par Compute spaces
 * A third template argument runs the search in a compute space, as NearestNeighbors describes:
 * the same neighbours and predictions as on the host.
 *
 * \par Differences from scikit-learn
 * - Those of NearestNeighbors (brute-force Euclidean only; exact distances; ties by row number).
 * - One output (no multi-output y), no callable weights.
 * - score is not a reduction over ranks: every rank passes the same X and y (checked) and gets
 *   the R² over them.
 * - Weights are computed from the exact double distances, even for float input.
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for y of the wrong length, X with other
 * features than in fit, or ranks that disagree on the number of features or on the shape of
 * the queries; `invalid_argument` for NaN/Inf (in X or y), no samples, no queries, n_neighbors
 * <= 0 or > n_samples_fit, unknown weights or an unsupported algorithm/metric/p;
 * `distributed_error` when ranks pass different queries (or y to score). Under exec::mpi every
 * error is raised on every rank.
 */

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/base/fit_input.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/metrics/r2_score.hpp"
#include "onelearn/neighbors/detail/index.hpp"

namespace onelearn::neighbors {

struct KNeighborsRegressorParams {
  std::int64_t n_neighbors = 5;      ///< neighbours averaged
  std::string weights = "uniform";   ///< "uniform" or "distance"
  std::string algorithm = "auto";    ///< "auto" or "brute" (both brute force)
  double p = 2;                      ///< Minkowski power: only 2
  std::string metric = "minkowski";  ///< "minkowski" (p = 2), "euclidean" or "l2"

  static constexpr std::array<std::string_view, 5> names{"n_neighbors", "weights", "algorithm", "p",
                                                         "metric"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local,
          space::ComputeSpace Space = space::host>
class KNeighborsRegressor
    : public WithParams<KNeighborsRegressor<T, Exec, Space>, KNeighborsRegressorParams> {
 public:
  using value_type = T;
  using Params = KNeighborsRegressorParams;

  using space_type = Space;

  explicit KNeighborsRegressor(const Params& params = {}, Exec exec = {}, Space space = {})
      : WithParams<KNeighborsRegressor, Params>(params),
        exec_(std::move(exec)),
        index_(std::move(space)) {}

  /// Stores this rank's rows and targets.
  KNeighborsRegressor& fit(const MatrixRef<T>& X, const VectorRef<T>& y) {
    constexpr std::string_view where = "KNeighborsRegressor.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    index_ = Index(index_.compute_space());
    const Params& params = this->params_;
    exec_.propagate_errors([&] {
      detail::check_search_params(where, params.n_neighbors, params.algorithm, params.metric,
                                  params.p);
      (void)detail::distance_weights(where, params.weights);
    });
    onelearn::detail::check_fit_input<T>(where, exec_, X, y, std::nullopt);
    std::vector<double> targets(static_cast<std::size_t>(y.size()));
    for (index_t i = 0; i < y.size(); ++i) {
      targets[static_cast<std::size_t>(i)] = static_cast<double>(y(i));
    }
    index_.fit(where, exec_, X, {}, std::move(targets));
    return *this;
  }

  /// Fits on a Dataset's features and targets.
  KNeighborsRegressor& fit(const Dataset<T>& data) { return fit(data.features(), data.targets()); }

  /// The (weighted) mean target of the neighbours of each row.
  [[nodiscard]] Vector<T> predict(const MatrixRef<T>& X) const {
    return predict_impl("KNeighborsRegressor.predict", X, 0);
  }

  /// R² of predict(X) against y. Under a distributed policy every rank passes the same X and y
  /// (checked) and gets the same score.
  [[nodiscard]] T score(const MatrixRef<T>& X, const VectorRef<T>& y) const {
    constexpr std::string_view where = "KNeighborsRegressor.score";
    exec_.propagate_errors([&] { validation::check_same_length(where, "y", X.rows(), y.size()); });
    const Vector<T> predicted =
        predict_impl(where, X, detail::hash_values(y, 0x84222325cbf29ce4ULL));
    return metrics::r2_score<T>(y, predicted);
  }

  /// The n_neighbors nearest training rows of each row of X, as NearestNeighbors::kneighbors.
  [[nodiscard]] KNeighborsResult<T> kneighbors(const MatrixRef<T>& X) const {
    return kneighbors(X, this->params_.n_neighbors);
  }
  [[nodiscard]] KNeighborsResult<T> kneighbors(const MatrixRef<T>& X,
                                               std::int64_t n_neighbors) const {
    return Index::to_result(
        index_.search("KNeighborsRegressor.kneighbors", exec_, X, n_neighbors));
  }

  [[nodiscard]] std::int64_t n_samples_fit() const {
    return validation::fitted_attribute("KNeighborsRegressor.n_samples_fit", index_.fitted(),
                                        index_.n_samples());
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("KNeighborsRegressor.n_features_in", index_.fitted(),
                                        index_.n_features());
  }
  [[nodiscard]] const Matrix<T>& fit_X() const {
    return validation::fitted_attribute("KNeighborsRegressor.fit_X", index_.fitted(),
                                        index_.training_set().X);
  }
  [[nodiscard]] Vector<T> fit_y() const {
    const auto& targets = validation::fitted_attribute("KNeighborsRegressor.fit_y", index_.fitted(),
                                                       index_.training_set().targets);
    Vector<T> out(static_cast<index_t>(targets.size()));
    for (index_t i = 0; i < out.size(); ++i) out(i) = static_cast<T>(targets[static_cast<std::size_t>(i)]);
    return out;
  }
  [[nodiscard]] bool is_fitted() const noexcept { return index_.fitted(); }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }
  /// Where the neighbour search runs (space::host by default; see NearestNeighbors).
  [[nodiscard]] const Space& compute_space() const noexcept { return index_.compute_space(); }

 private:
  Vector<T> predict_impl(std::string_view where, const MatrixRef<T>& X, std::uint64_t extra) const {
    bool by_distance = false;
    exec_.propagate_errors(
        [&] { by_distance = detail::distance_weights(where, this->params_.weights); });
    const detail::Neighbours found =
        index_.search(where, exec_, X, this->params_.n_neighbors, extra);
    const index_t k = found.k;
    Vector<T> out(found.n_queries);
    std::vector<double> weights(static_cast<std::size_t>(k));
    for (index_t i = 0; i < found.n_queries; ++i) {
      const auto first = static_cast<std::size_t>(i * k);
      detail::neighbour_weights(by_distance, found.distances.data() + first, k, weights.data());
      double sum = 0;
      double total = 0;
      for (index_t m = 0; m < k; ++m) {
        const double w = weights[static_cast<std::size_t>(m)];
        sum += w * found.targets[first + static_cast<std::size_t>(m)];
        total += w;
      }
      out(i) = static_cast<T>(sum / total);
    }
    return out;
  }

  Exec exec_;
  using Index = detail::BruteForceIndex<T, Exec, Space>;
  Index index_;
};

}  // namespace onelearn::neighbors
