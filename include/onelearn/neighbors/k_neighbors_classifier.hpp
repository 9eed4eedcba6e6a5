#pragma once
/**
 * \class onelearn::neighbors::KNeighborsClassifier
 * \brief k-nearest-neighbour vote, as scikit-learn's KNeighborsClassifier.
 * \ingroup estimators
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/neighbors/k_neighbors_classifier.hpp>
 *
 * onelearn::neighbors::KNeighborsClassifier<double> knn;  // or ({.weights = "distance"})
 * knn.fit(X_train, y_train);                        // y_train: onelearn::Labels, any values
 * onelearn::Labels predicted = knn.predict(X_test);  // values taken from knn.classes()
 * onelearn::Matrix<double> proba = knn.predict_proba(X_test);  // n x n_classes
 * double accuracy = knn.score(X_test, y_test);
 * auto [distances, indices] = knn.kneighbors(X_test);  // as NearestNeighbors
 *
 * // Data-parallel: the training rows stay sharded (a rank may hold no rows); then every rank
 * // passes the SAME queries and gets the same predictions.
 * onelearn::exec::mpi policy{comm};  // the application's communicator
 * onelearn::neighbors::KNeighborsClassifier<double, onelearn::exec::mpi> dist({}, policy);
 * dist.fit(my_X, my_y);
 * onelearn::Labels everywhere = dist.predict(all_queries);
 * \endcode
 *
 * neighbors::KNeighborsClassifier: k-nearest-neighbour vote, as scikit-learn's
 * KNeighborsClassifier (1.2.1) with algorithm="brute" and the Euclidean metric. Each query gets
 * the class with the largest total weight among its n_neighbors nearest training rows (weight
 * 1 each, or 1 / distance); ties go to the smallest class, like scikit-learn's mode over sorted
 * classes. The neighbour search, its precision (norms and GEMM in T for the selection, exact
 * distances in double for the result) and its distributed merge are NearestNeighbors'
 * (nearest_neighbors.hpp).
 *
 * Distributed (exec::mpi): fit all-gathers the distinct labels and the row counts only; the
 * rows stay where they are. predict, predict_proba, score and kneighbors are collective: every
 * rank passes the same queries (checked, see NearestNeighbors), each rank's k best candidates
 * travel with their labels, and every rank gets the one-process answer on the concatenated rows.
 *
 * \par Parameters (KNeighborsClassifierParams)
 * - `n_neighbors` (int, default 5): neighbours that vote, 1 <= n_neighbors <= n_samples_fit.
 * - `weights` (string, default "uniform"): "uniform" (one vote each) or "distance" (1 / distance;
 *   a query at distance 0 from some training rows gets the votes of those rows only).
 * - `algorithm` (string, default "auto"): "auto" or "brute"; both are the brute-force search.
 * - `p` (double, default 2): Minkowski power; only 2 (Euclidean) is implemented.
 * - `metric` (string, default "minkowski"): "minkowski" (with p = 2), "euclidean" or "l2".
 *
 * \par Attributes (after fit)
 * - `classes()` (Labels): the distinct labels seen in fit on any rank, sorted ascending.
 * - `n_samples_fit()`: training rows over all ranks.
 * - `n_features_in()`: number of features seen in fit.
 * - `fit_X()` (Matrix<T>), `fit_y()` (Labels): the training rows this rank stores and their
 *   labels, in fit's order (scikit-learn's private `_fit_X` and `classes_[_y]`); all of them
 *   under exec::local. What onnx/export/neighbors.hpp writes into the model.
 *
 * \par Compute spaces
 * A third template argument runs the search in a compute space, as NearestNeighbors describes:
 * the same neighbours and predictions as on the host.
 *
 * \par Differences from scikit-learn
 * - Those of NearestNeighbors (brute-force Euclidean only; exact distances; ties by row number).
 * - One output (no multi-output y), no callable weights.
 * - score is not a reduction over ranks (unlike GaussianNB's): every rank passes the same X and
 *   y (checked) and gets the accuracy over them.
 * - Weights are computed from the exact double distances, even for float input.
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for y of the wrong length, X with other
 * features than in fit, or ranks that disagree on the number of features or on the shape of
 * the queries; `invalid_argument` for NaN/Inf, no samples, no queries, n_neighbors <= 0 or >
 * n_samples_fit, unknown weights or an unsupported algorithm/metric/p; `distributed_error` when
 * ranks pass different queries (or y to score). Under exec::mpi every error is raised on every
 * rank.
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
#include "onelearn/base/labels.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/metrics/accuracy_score.hpp"
#include "onelearn/neighbors/detail/index.hpp"

namespace onelearn::neighbors {

struct KNeighborsClassifierParams {
  std::int64_t n_neighbors = 5;      ///< neighbours that vote
  std::string weights = "uniform";   ///< "uniform" or "distance"
  std::string algorithm = "auto";    ///< "auto" or "brute" (both brute force)
  double p = 2;                      ///< Minkowski power: only 2
  std::string metric = "minkowski";  ///< "minkowski" (p = 2), "euclidean" or "l2"

  static constexpr std::array<std::string_view, 5> names{"n_neighbors", "weights", "algorithm", "p",
                                                         "metric"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local,
          space::ComputeSpace Space = space::host>
class KNeighborsClassifier
    : public WithParams<KNeighborsClassifier<T, Exec, Space>, KNeighborsClassifierParams> {
 public:
  using value_type = T;
  using Params = KNeighborsClassifierParams;

  using space_type = Space;

  explicit KNeighborsClassifier(const Params& params = {}, Exec exec = {}, Space space = {})
      : WithParams<KNeighborsClassifier, Params>(params),
        exec_(std::move(exec)),
        index_(std::move(space)) {}

  /// Stores this rank's rows and labels; gathers the classes of every rank.
  KNeighborsClassifier& fit(const MatrixRef<T>& X, const LabelsRef& y) {
    constexpr std::string_view where = "KNeighborsClassifier.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    index_ = Index(index_.compute_space());
    classes_ = Labels();
    const Params& params = this->params_;
    exec_.propagate_errors([&] {
      detail::check_search_params(where, params.n_neighbors, params.algorithm, params.metric,
                                  params.p);
      (void)detail::distance_weights(where, params.weights);
      validation::check_same_length(where, "y", X.rows(), y.size());
    });
    onelearn::detail::check_fit_input<T>(where, exec_, X, std::nullopt, std::nullopt);
    Labels classes = onelearn::detail::gather_classes(exec_, y);
    index_.fit(where, exec_, X, onelearn::detail::class_indices<std::int64_t>(where, classes, y),
               {});
    classes_ = std::move(classes);
    return *this;
  }

  /// Fits on a Dataset's features and labels.
  KNeighborsClassifier& fit(const ClassificationDataset<T>& data) {
    return fit(data.features(), data.targets());
  }

  /// The class with the largest vote among the neighbours of each row (ties: the smaller label).
  [[nodiscard]] Labels predict(const MatrixRef<T>& X) const {
    return onelearn::detail::argmax_labels(classes_, votes("KNeighborsClassifier.predict", X, 0));
  }

  /// The share of the (weighted) vote of each class: n x n_classes, columns in the order of
  /// classes(); each row sums to 1.
  [[nodiscard]] Matrix<T> predict_proba(const MatrixRef<T>& X) const {
    Matrix<double> v = votes("KNeighborsClassifier.predict_proba", X, 0);
    const Vector<double> totals = v.rowwise().sum();
    for (index_t i = 0; i < v.rows(); ++i) {
      if (totals(i) != 0) v.row(i) /= totals(i);
    }
    return v.template cast<T>();
  }

  /// Accuracy of predict(X) against y. Under a distributed policy every rank passes the same X
  /// and y (checked) and gets the same accuracy.
  [[nodiscard]] T score(const MatrixRef<T>& X, const LabelsRef& y) const {
    constexpr std::string_view where = "KNeighborsClassifier.score";
    exec_.propagate_errors([&] { validation::check_same_length(where, "y", X.rows(), y.size()); });
    const Labels predicted = onelearn::detail::argmax_labels(
        classes_, votes(where, X, detail::hash_values(y, 0x84222325cbf29ce4ULL)));
    return static_cast<T>(metrics::accuracy_score(y, predicted));
  }

  /// The n_neighbors nearest training rows of each row of X, as NearestNeighbors::kneighbors.
  [[nodiscard]] KNeighborsResult<T> kneighbors(const MatrixRef<T>& X) const {
    return kneighbors(X, this->params_.n_neighbors);
  }
  [[nodiscard]] KNeighborsResult<T> kneighbors(const MatrixRef<T>& X,
                                               std::int64_t n_neighbors) const {
    return Index::to_result(
        index_.search("KNeighborsClassifier.kneighbors", exec_, X, n_neighbors));
  }

  [[nodiscard]] const Labels& classes() const {
    return validation::fitted_attribute("KNeighborsClassifier.classes", index_.fitted(), classes_);
  }
  [[nodiscard]] std::int64_t n_samples_fit() const {
    return validation::fitted_attribute("KNeighborsClassifier.n_samples_fit", index_.fitted(),
                                        index_.n_samples());
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("KNeighborsClassifier.n_features_in", index_.fitted(),
                                        index_.n_features());
  }
  [[nodiscard]] const Matrix<T>& fit_X() const {
    return validation::fitted_attribute("KNeighborsClassifier.fit_X", index_.fitted(),
                                        index_.training_set().X);
  }
  [[nodiscard]] Labels fit_y() const {
    const auto& labels = validation::fitted_attribute("KNeighborsClassifier.fit_y", index_.fitted(),
                                                      index_.training_set().labels);
    Labels out(static_cast<index_t>(labels.size()));
    for (index_t i = 0; i < out.size(); ++i) out(i) = classes_(labels[static_cast<std::size_t>(i)]);
    return out;
  }
  [[nodiscard]] bool is_fitted() const noexcept { return index_.fitted(); }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }
  /// Where the neighbour search runs (space::host by default; see NearestNeighbors).
  [[nodiscard]] const Space& compute_space() const noexcept { return index_.compute_space(); }

 private:
  /// Total weight of each class among the neighbours of each query: n x n_classes, in double,
  /// summed in neighbour order (nearest first).
  Matrix<double> votes(std::string_view where, const MatrixRef<T>& X, std::uint64_t extra) const {
    bool by_distance = false;
    exec_.propagate_errors(
        [&] { by_distance = detail::distance_weights(where, this->params_.weights); });
    const detail::Neighbours found =
        index_.search(where, exec_, X, this->params_.n_neighbors, extra);
    const index_t k = found.k;
    Matrix<double> out = Matrix<double>::Zero(found.n_queries, classes_.size());
    std::vector<double> weights(static_cast<std::size_t>(k));
    for (index_t i = 0; i < found.n_queries; ++i) {
      const auto first = static_cast<std::size_t>(i * k);
      detail::neighbour_weights(by_distance, found.distances.data() + first, k, weights.data());
      for (index_t m = 0; m < k; ++m) {
        out(i, found.labels[first + static_cast<std::size_t>(m)]) +=
            weights[static_cast<std::size_t>(m)];
      }
    }
    return out;
  }

  Exec exec_;
  using Index = detail::BruteForceIndex<T, Exec, Space>;
  Index index_;
  Labels classes_;
};

}  // namespace onelearn::neighbors
