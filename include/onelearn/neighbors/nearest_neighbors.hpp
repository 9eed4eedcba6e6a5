#pragma once
/**
 * \class onelearn::neighbors::NearestNeighbors
 * \brief Unsupervised k-nearest-neighbour search, as scikit-learn's NearestNeighbors.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/neighbors/nearest_neighbors.hpp>
 *
 * onelearn::neighbors::NearestNeighbors<double> nn({.n_neighbors = 3});
 * nn.fit(X_train);
 * auto [distances, indices] = nn.kneighbors(X_query);  // n_query x 3, nearest first
 * auto five = nn.kneighbors(X_query, 5);               // another k for this call
 *
 * // Data-parallel: the training rows stay sharded, each rank passes its own; then every rank
 * // passes the SAME queries and gets the same answer, with indices into the concatenation of
 * // all ranks' rows (rank order).
 * onelearn::exec::mpi policy{comm};  // the application's communicator
 * onelearn::neighbors::NearestNeighbors<double, onelearn::exec::mpi> dist({}, policy);
 * dist.fit(my_rows);
 * auto [d, i] = dist.kneighbors(all_queries);
 * \endcode
 *
 * neighbors::NearestNeighbors: unsupervised k-nearest-neighbour search, as scikit-learn's
 * NearestNeighbors (1.2.1) with algorithm="brute" and the Euclidean metric.
 *
 * Method (detail/brute_force.hpp): training rows x queries in blocks (512 x 128); both sides
 * are centred on the (rank-local) training mean, and per block one GEMM in T gives the
 * expansion e = ||q||² - 2 q·x + ||x||² of the squared distances. The squared norms are
 * accumulated in T too: float data gives float norms and a float GEMM. That expansion only
 * *selects*: its rounding error is bounded by w = 4 (p + 4) eps_T (||q||² + ||x||²), and every
 * row whose lower bound e - w is not above the k-th smallest upper bound e + w is kept as a
 * candidate (a bounded heap per query, one vectorised scan). The candidates' squared distances
 * are then recomputed exactly, by subtracting first, in double, and the k best by (distance,
 * row number) are returned; the distances returned are the square roots of those, rounded to
 * T (not the square root of the clamped expansion). So the neighbours are the exact ones even
 * where the expansion cancels (float data, queries far from the data, near-ties), ties go to
 * the lower row number, and the answer does not depend on the blocking or the sharding: the
 * exact distance of a pair is the same double on every rank. Cost: one GEMM of n_train x
 * n_query x p in T, plus O((k + a few) p) per query (more only where many rows are within the
 * rounding bound of the k-th distance, e.g. exact duplicates). Memory: a copy of the training
 * rows (fit); per search, a centred copy of the queries, a 512 x p and a 128 x 512 block, and
 * per query its k bounds and its candidates.
 *
 * Distributed (exec::mpi): fit stores each rank's rows and all-gathers the row counts (rank r's
 * rows have global indices offset_r + local row, offset_r = rows of ranks before r). kneighbors
 * is collective and every rank must pass the same queries and n_neighbors: this is checked with
 * one all-reduce of a 64-bit hash of the queries' bits and shape (bits: 0.0 and -0.0 differ),
 * and raises on every rank if they differ. Each rank finds its local k best (exact distance,
 * global index), one all-gather of k candidates per query and rank follows, and every rank
 * keeps the global k best with the same key: the one-process answer on the concatenated rows,
 * bit for bit. A rank may hold no rows (its shard must still have the right number of columns).
 *
 * \par Compute spaces
 * The third template argument says where the search runs (space/space.hpp): `space::host` (the
 * default) or a Thrust space (`space::thrust_cpp`, `thrust_omp`, `thrust_tbb`, or `thrust_cuda`
 * from a .cu file compiled by nvcc; include <onelearn/space/space.hpp> and link
 * onelearn::thrust_<system>). fit copies this rank's rows to a device once (the CPU systems read
 * them where they are); each search copies its queries there and space::nearest_k finds this
 * rank's k nearest with the host's exact distances and tie order, so the neighbours, distances
 * and every prediction are the host's exactly. The merge over ranks, the roots and the votes stay
 * on the host; fit_X() is still the host's copy. The same holds for KNeighborsClassifier and
 * KNeighborsRegressor.
 *
 * \par Parameters (NearestNeighborsParams)
 * - `n_neighbors` (int, default 5): neighbours per query when kneighbors is not given a number.
 * - `algorithm` (string, default "auto"): "auto" or "brute"; both are the brute-force search.
 * - `p` (double, default 2): Minkowski power; only 2 (Euclidean) is implemented.
 * - `metric` (string, default "minkowski"): "minkowski" (with p = 2), "euclidean" or "l2".
 *
 * \par Attributes (after fit)
 * - `n_samples_fit()`: training rows over all ranks.
 * - `n_features_in()`: number of features seen in fit.
 *
 * \par Differences from scikit-learn
 * - Only the brute-force Euclidean search: no kd_tree/ball_tree (they would return the same
 *   neighbours), no other metrics, no radius_neighbors, no kneighbors_graph, no sparse input.
 * - kneighbors needs X: scikit-learn's kneighbors() without X (each training row's neighbours
 *   other than itself) is not provided.
 * - Distances are exact (recomputed in double by subtracting first); scikit-learn returns the
 *   square root of the clamped expansion, which can differ in the last digits or, for nearly
 *   coincident points far from the origin, by more. Exact ties are ordered by row number;
 *   scikit-learn does not specify the order of exact ties.
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for X with other features than in fit,
 * ranks that disagree on the number of features or pass queries of different shapes;
 * `invalid_argument` for NaN/Inf, rows whose squared distance to the training mean overflows T,
 * no samples, no queries, n_neighbors <= 0 or > n_samples_fit, an unsupported
 * algorithm/metric/p; `distributed_error` when ranks pass different queries or
 * n_neighbors to kneighbors. Under exec::mpi every error is raised on every rank.
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
#include "onelearn/neighbors/detail/index.hpp"

namespace onelearn::neighbors {

struct NearestNeighborsParams {
  std::int64_t n_neighbors = 5;      ///< neighbours per query by default
  std::string algorithm = "auto";    ///< "auto" or "brute" (both brute force)
  double p = 2;                      ///< Minkowski power: only 2
  std::string metric = "minkowski";  ///< "minkowski" (p = 2), "euclidean" or "l2"

  static constexpr std::array<std::string_view, 4> names{"n_neighbors", "algorithm", "p", "metric"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local,
          space::ComputeSpace Space = space::host>
class NearestNeighbors : public WithParams<NearestNeighbors<T, Exec, Space>, NearestNeighborsParams> {
 public:
  using value_type = T;
  using Params = NearestNeighborsParams;

  using space_type = Space;

  explicit NearestNeighbors(const Params& params = {}, Exec exec = {}, Space space = {})
      : WithParams<NearestNeighbors, Params>(params),
        exec_(std::move(exec)),
        index_(std::move(space)) {}

  /// Stores this rank's rows (a copy) and their squared norms.
  NearestNeighbors& fit(const MatrixRef<T>& X) {
    constexpr std::string_view where = "NearestNeighbors.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    index_ = Index(index_.compute_space());
    const Params& params = this->params_;
    exec_.propagate_errors([&] {
      detail::check_search_params(where, params.n_neighbors, params.algorithm, params.metric,
                                  params.p);
    });
    onelearn::detail::check_fit_input<T>(where, exec_, X, std::nullopt, std::nullopt);
    index_.fit(where, exec_, X, {}, {});
    return *this;
  }

  /// Fits on a Dataset's features (its targets, if any, are ignored).
  template <class Y>
  NearestNeighbors& fit(const Dataset<T, Y>& data) {
    return fit(data.features());
  }

  /// The n_neighbors() nearest training rows of each row of X (over all ranks).
  [[nodiscard]] KNeighborsResult<T> kneighbors(const MatrixRef<T>& X) const {
    return kneighbors(X, this->params_.n_neighbors);
  }

  /// The `n_neighbors` nearest training rows of each row of X (over all ranks).
  [[nodiscard]] KNeighborsResult<T> kneighbors(const MatrixRef<T>& X,
                                               std::int64_t n_neighbors) const {
    return Index::to_result(
        index_.search("NearestNeighbors.kneighbors", exec_, X, n_neighbors));
  }

  /// Training rows over all ranks (scikit-learn's n_samples_fit_).
  [[nodiscard]] std::int64_t n_samples_fit() const {
    return validation::fitted_attribute("NearestNeighbors.n_samples_fit", index_.fitted(),
                                        index_.n_samples());
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("NearestNeighbors.n_features_in", index_.fitted(),
                                        index_.n_features());
  }
  [[nodiscard]] bool is_fitted() const noexcept { return index_.fitted(); }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }
  /// Where the neighbour search runs (space::host by default; see NearestNeighbors).
  [[nodiscard]] const Space& compute_space() const noexcept { return index_.compute_space(); }

 private:
  Exec exec_;
  using Index = detail::BruteForceIndex<T, Exec, Space>;
  Index index_;
};

}  // namespace onelearn::neighbors
