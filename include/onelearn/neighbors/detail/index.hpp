#pragma once
// The fitted state and the checks shared by NearestNeighbors, KNeighborsClassifier and
// KNeighborsRegressor: parameter validation, fit (store the rows, all-gather the row counts),
// the validated and (under MPI) merged kneighbors search, and the neighbour weights.

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/core/detail/distances.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/neighbors/detail/brute_force.hpp"
#include "onelearn/space/concept.hpp"
#include "onelearn/space/data.hpp"
#include "onelearn/space/host.hpp"

namespace onelearn::neighbors {

/// What kneighbors returns: n_queries x n_neighbors, each row sorted by increasing distance
/// (ties: lower index first). `auto [distances, indices] = nn.kneighbors(X);`
template <class T>
struct KNeighborsResult {
  Matrix<T> distances;           ///< Euclidean distances to the neighbours
  Matrix<std::int64_t> indices;  ///< the neighbours' row numbers in the (concatenated) fit data
};

namespace detail {

/// A double as a short string ("2", "1.5") for messages.
inline std::string short_number(double v) {
  std::string s = std::to_string(v);
  // std::to_string prints 6 decimals; trim the zeros for a readable "1.5" or "3".
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s;
}

/// The algorithm / metric / p parameters this implementation supports, as scikit-learn names
/// them: a brute-force search with the Euclidean metric.
inline void check_search_params(std::string_view where, std::int64_t n_neighbors,
                                const std::string& algorithm, const std::string& metric, double p) {
  const auto fail = [&](const std::string& what) {
    throw invalid_argument(std::string(where) + ": expected " + what);
  };
  if (n_neighbors < 1) fail("n_neighbors > 0, found " + std::to_string(n_neighbors));
  if (algorithm != "auto" && algorithm != "brute") {
    fail("algorithm \"auto\" or \"brute\" (only the brute-force search is implemented), found \"" +
         algorithm + "\"");
  }
  if (metric == "minkowski") {
    if (p != 2) {
      fail("p = 2 with metric \"minkowski\" (only the Euclidean metric is implemented), found " +
           short_number(p));
    }
  } else if (metric != "euclidean" && metric != "l2") {
    fail(
        "metric \"minkowski\" (with p = 2), \"euclidean\" or \"l2\" (only the Euclidean metric "
        "is implemented), found \"" +
        metric + "\"");
  }
}

inline bool distance_weights(std::string_view where, const std::string& weights) {
  if (weights == "uniform") return false;
  if (weights == "distance") return true;
  throw invalid_argument(std::string(where) + ": expected weights \"uniform\" or \"distance\", " +
                         "found \"" + weights + "\"");
}

/// The vote/average weight of each of the k neighbours of one query, as scikit-learn's
/// _get_weights: 1 each ("uniform"), or 1 / distance ("distance"), except that a query at
/// distance 0 from some neighbours gives those weight 1 and the others 0.
inline void neighbour_weights(bool by_distance, const double* distances, index_t k,
                              double* weights) {
  bool exact_match = false;
  for (index_t m = 0; m < k; ++m) exact_match = exact_match || distances[m] == 0;
  for (index_t m = 0; m < k; ++m) {
    weights[m] = !by_distance  ? 1.0
                 : exact_match ? (distances[m] == 0 ? 1.0 : 0.0)
                               : 1.0 / distances[m];
  }
}

/// One rank's training rows plus the search over all ranks' rows.
/// The stored rows and the search, on the host or in a compute space (Space): there the rows
/// are kept in the space too (a device copy made at fit; the CPU Thrust systems read the host's)
/// and each search's queries go to the space, which finds this rank's k nearest
/// (space::nearest_k: the host's rows and distances exactly); the merge over ranks, the roots
/// and the votes stay on the host.
template <class T, exec::ExecutionPolicy Exec, space::ComputeSpace Space = space::host>
class BruteForceIndex {
 public:
  BruteForceIndex() = default;
  explicit BruteForceIndex(Space s) : space_(std::move(s)) {}

  /// Stores X (this rank's rows), with per-row labels (class indices) or targets for the
  /// supervised estimators, and all-gathers every rank's row count. X must have been validated
  /// with check_fit_input (finite, same features on every rank).
  void fit(std::string_view where, const Exec& exec, const MatrixRef<T>& X,
           std::vector<std::int64_t> labels, std::vector<double> targets) {
    fitted_ = false;
    // The local mean the search centres on (rank-local: the selection is per rank, and the
    // exact distances do not depend on it). Computed in double.
    Vector<T> mean = Vector<T>::Zero(X.cols());
    if (X.rows() > 0)
      mean = X.template cast<double>().colwise().mean().transpose().template cast<T>();
    exec.propagate_errors([&] { check_norms(where, centred_norms(X, mean)); });
    const std::array<std::int64_t, 1> mine{X.rows()};
    std::vector<std::int64_t> rows = exec.allgatherv(std::span<const std::int64_t>(mine));
    std::int64_t total = 0;
    std::int64_t offset = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (static_cast<int>(r) == exec.rank()) offset = total;
      total += rows[r];
    }
    // The same totals on every rank: these throw on every rank alike.
    if (total == 0 || X.cols() == 0) {
      throw invalid_argument(std::string(where) + ": expected at least one sample and one " +
                             "feature, found " + std::to_string(total) + " x " +
                             std::to_string(X.cols()));
    }
    train_.X = X;
    // Inside propagate_errors: a rank whose device is missing or full raises on every rank.
    if constexpr (!Space::host_accessible) {
      exec.propagate_errors([&] { rows_in_space_ = space::to_space(space_, train_.X); });
    }
    train_.mean = std::move(mean);
    train_.labels = std::move(labels);
    train_.targets = std::move(targets);
    train_.rows_per_rank = std::move(rows);
    train_.offset = offset;
    train_.n_samples = total;
    fitted_ = true;
  }

  /// The k nearest fitted rows of each row of Q, over all ranks. Collective under a
  /// distributed policy: every rank passes the same Q and k (checked: `extra` is folded into
  /// the check, e.g. a hash of y for score) and gets the same answer.
  Neighbours search(std::string_view where, const Exec& exec, const MatrixRef<T>& Q, std::int64_t k,
                    std::uint64_t extra = 0) const {
    exec.propagate_errors([&] {
      validation::check_fitted(where, fitted_);
      validation::check_n_features(where, train_.X.cols(), Q.cols());
      validation::check_finite(where, "X", Q);
      if (Q.rows() == 0) {
        throw invalid_argument(std::string(where) + ": expected at least one query row, found 0");
      }
      check_norms(where, centred_norms(Q, train_.mean));
      if (k < 1) {
        throw invalid_argument(std::string(where) + ": expected n_neighbors > 0, found " +
                               std::to_string(k));
      }
      if (k > train_.n_samples) {
        throw invalid_argument(std::string(where) + ": expected n_neighbors <= n_samples_fit = " +
                               std::to_string(train_.n_samples) +
                               ", found n_neighbors = " + std::to_string(k));
      }
    });
    check_same_queries(
        where, exec, Q,
        std::bit_cast<std::int64_t>(extra * 0x9e3779b97f4a7c15ULL ^ static_cast<std::uint64_t>(k)));
    Neighbours found;
    if constexpr (on_host) {
      found = local_search(Q, k);
    } else {
      // A rank whose device fails raises on every rank, not only its own.
      exec.propagate_errors([&] { found = local_search(Q, k); });
    }
    if constexpr (Exec::is_distributed) found = merge(exec, found, k, train_.rows_per_rank);
    for (double& d : found.distances) d = std::sqrt(d);
    return found;
  }

  static KNeighborsResult<T> to_result(const Neighbours& found) {
    KNeighborsResult<T> out{Matrix<T>(found.n_queries, found.k),
                            Matrix<std::int64_t>(found.n_queries, found.k)};
    for (index_t i = 0; i < found.n_queries; ++i) {
      for (index_t m = 0; m < found.k; ++m) {
        const auto at = static_cast<std::size_t>(i * found.k + m);
        out.distances(i, m) = static_cast<T>(found.distances[at]);
        out.indices(i, m) = found.indices[at];
      }
    }
    return out;
  }

  [[nodiscard]] bool fitted() const noexcept { return fitted_; }
  /// This rank's stored rows and their labels or targets (the estimators' fit_X / fit_y).
  [[nodiscard]] const TrainingSet<T>& training_set() const noexcept { return train_; }
  [[nodiscard]] index_t n_features() const noexcept { return train_.X.cols(); }
  [[nodiscard]] std::int64_t n_samples() const noexcept { return train_.n_samples; }

  [[nodiscard]] const Space& compute_space() const noexcept { return space_; }

 private:
  static constexpr bool on_host = std::is_same_v<Space, space::host>;

  /// This rank's k nearest to each query: the host's search, or the space's.
  Neighbours local_search(const MatrixRef<T>& Q, std::int64_t k) const {
    if constexpr (on_host) {
      return local_kbest<T>(train_, Q, k);
    } else {
      // The CPU Thrust systems read the stored rows where they are (a view made here, so that a
      // copied index never reads another's rows); a device keeps its copy from fit.
      space::matrix<Space, T> borrowed;
      if constexpr (Space::host_accessible) borrowed = space::to_space(space_, train_.X);
      const space::matrix_view<const T> rows =
          Space::host_accessible ? borrowed.view() : rows_in_space_.view();
      const auto queries = space::to_space(space_, Q);
      return with_training_rows(train_, nearest_k(space_, rows, queries.view(), k));
    }
  }

  /// The search bounds its rounding with the squared norms in T of the rows centred on the
  /// training mean, so they must not overflow (|x - mean| above ~1e19 in float, ~1e154 in
  /// double).
  static Vector<T> centred_norms(const MatrixRef<T>& X, const Vector<T>& mean) {
    return (X.rowwise() - mean.transpose()).rowwise().squaredNorm();
  }

  static void check_norms(std::string_view where, const Vector<T>& norms) {
    if (norms.allFinite()) return;
    index_t row = 0;
    while (std::isfinite(static_cast<double>(norms(row)))) ++row;
    throw invalid_argument(std::string(where) + ": expected rows whose squared norm is finite " +
                           "in the data's precision, found one that overflows at row " +
                           std::to_string(row));
  }

  TrainingSet<T> train_;
  Space space_{};
  space::matrix<Space, T> rows_in_space_;  ///< a device's copy of train_.X (else empty)
  bool fitted_ = false;
};

}  // namespace detail
}  // namespace onelearn::neighbors
