#pragma once
/**
 * \class onelearn::cluster::KMeans
 * \brief k-means clustering by Lloyd's algorithm, as scikit-learn's KMeans.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/cluster/k_means.hpp>
 * #include <onelearn/space/space.hpp>                       // only for the compute spaces
 * // X: a onelearn::Matrix<double>, samples x features
 * onelearn::cluster::KMeans<double> km({.n_clusters = 3, .random_state = 42});
 * km.fit(X);
 * onelearn::Labels labels = km.predict(X);                 // nearest centre of each row
 * onelearn::Matrix<double> d = km.transform(X);            // distance to every centre
 * double inertia = km.inertia();                           // sum of squared distances
 *
 * // Given initial centres (scikit-learn's init=<array>): set_init sets init = "given".
 * onelearn::cluster::KMeans<double> given({.n_clusters = 3});
 * given.set_init(X.topRows(3)).fit(X);
 *
 * // Distributed: each rank passes its own rows; every rank gets the same centres.
 * onelearn::cluster::KMeans<double, onelearn::exec::mpi> dkm({.n_clusters = 3},
 *                                                            onelearn::exec::mpi{comm});
 * dkm.fit(my_rows);
 *
 * // In a compute space (space/space.hpp): the Lloyd iterations on Thrust's OpenMP system, or on
 * // a GPU from a .cu file compiled by nvcc (space::thrust_cuda: X is copied to the device once).
 * #if defined(ONELEARN_SPACE_HAVE_OMP)
 * onelearn::cluster::KMeans<double, onelearn::exec::local, onelearn::space::thrust_omp> okm(
 *     {.n_clusters = 3, .random_state = 42});
 * okm.fit(X);                                              // the host's result, to rounding
 * #endif
 * \endcode
 *
 * cluster::KMeans: k-means clustering by Lloyd's algorithm, as scikit-learn 1.2's KMeans
 * (algorithm="lloyd").
 *
 * \par Parameters (KMeansParams)
 * - `n_clusters` (int, default 8): the number of clusters, 1 <= n_clusters <= n_samples.
 * - `init` (string, default "k-means++"): "k-means++" (greedy k-means++ seeding) or "given"
 *   (the centres passed to set_init(), which also sets this field; centres are in the units
 *   of X, like scikit-learn's `init=<array>`).
 * - `n_init` (int, default 10): number of seedings with k-means++, each followed by Lloyd
 *   iterations; the run with the lowest inertia is kept. With init = "given" there is one run
 *   whatever n_init says (scikit-learn warns and does the same). scikit-learn 1.2's default is
 *   10 too (it will become "auto", i.e. 1 for k-means++, in 1.4).
 * - `max_iter` (int, default 300): maximum Lloyd iterations per run.
 * - `tol` (double, default 1e-4): convergence tolerance, relative: a run stops when the squared
 *   shift of the centres, summed over clusters, is <= tol * (mean variance of the features of
 *   X), as scikit-learn. A run also stops as soon as no label changes ("strict convergence").
 * - `random_state` (uint64, default 0): seed of the k-means++ draws (std::mt19937_64). The
 *   draws differ from numpy's, so seeded centres differ from scikit-learn's for the same seed.
 * - `verbose` (int, default 0): >= 1 logs (core/log.hpp's sink; rank 0 only) one line per
 *   Lloyd iteration, "KMeans: run 1/10, iteration 3/300: 12 labels changed, centre shift
 *   0.0123; elapsed 0.05s, remaining <= 4.9s" (a bound: every run may use max_iter), and one
 *   per run, "KMeans: run 1/10 done: 7 iterations, inertia 1234.5; elapsed 0.1s, remaining
 *   ~0.9s". Not compared across ranks: `verbose = rank == 0` is fine.
 *
 * \par Attributes (after fit)
 * - `cluster_centers()`: n_clusters x n_features centres (scikit-learn's cluster_centers_).
 * - `labels()`: the cluster of each training row, of this rank's rows (labels_).
 * - `inertia()`: sum of squared distances of the training rows to their centre, over all
 *   ranks (inertia_), consistent with labels() and cluster_centers().
 * - `n_iter()`: Lloyd iterations of the kept run (n_iter_).
 * - `n_features_in()`.
 *
 * \par Algorithm
 * X is centred on its (global) mean first, as scikit-learn does, so the
 * distance expansion ||x||^2 - 2 x.c + ||c||^2 used for the assignments (one GEMM per block of
 * rows, in T) loses little to cancellation; sums are accumulated in double. Per iteration the
 * per-cluster sums, counts and the number of changed labels go in ONE all-reduce. A cluster
 * left empty is re-seeded, as scikit-learn, with the point farthest from its own centre (with
 * several empty clusters, the farthest points in decreasing distance, ties by lower row
 * number). After the last iteration the rows are assigned once more to the final centres
 * (unless no label changed), so labels, centres and inertia agree. Memory: the centred copy of
 * the local rows (in T), plus rows x (2 + log k) distances during k-means++ seeding.
 *
 * \par Distributed (exec::mpi)
 * Rank r's rows are rows [begin_r, end_r) of the concatenation of
 * all shards in rank order. k-means++ draws candidates by that global row number from one
 * random stream that all ranks run in lockstep; the rank holding a drawn row sends it to all
 * with one all-reduce (see detail/kmeans_plusplus.hpp). So all ranks pick the same centres,
 * and these are the centres one process picks on the concatenated data (barring rounding
 * ties). With init = "given", every rank must pass the same centres (checked: a
 * distributed_error on every rank otherwise). predict/transform are local; score is collective.
 *
 * \par Compute spaces
 * The third template argument says where the Lloyd iterations run (space/space.hpp):
 * `space::host` (the default: Eigen + OpenMP, Hamerly's bounds) or a Thrust space
 * (`space::thrust_cpp`, `thrust_omp`, `thrust_tbb`, `thrust_cuda`; include
 * <onelearn/space/space.hpp> and link onelearn::thrust_<system>). In a Thrust space fit copies the
 * centred rows into the space once (borrowed on the CPU systems) and runs each iteration there
 * (space::lloyd_step: assignment, per-cluster sums and counts); only k x p sums come back, for
 * the same one all-reduce, so every policy works with every space. predict runs in the space too
 * (its rows copied in, the labels back). On the host: means and checks (on a device with given
 * centres they run there), k-means++ seeding, empty-cluster relocation. Fits equal the host's
 * to rounding: sums are added in the space's order (1e-12 relative in double), and a label can
 * differ only where two centres are within rounding of each other. A space without a usable
 * device throws space::no_device_error at fit.
 *
 * \par Differences from scikit-learn
 * No sample_weight, no "random" init, no "elkan" algorithm;
 * seeded draws differ from numpy's; a run replaces the best one when its inertia is lower (no
 * same-clustering test); no warnings (fewer distinct points than clusters simply gives
 * duplicate centres).
 */

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "onelearn/base/agreement.hpp"
#include "onelearn/base/fit_input.hpp"
#include "onelearn/base/in_space.hpp"
#include "onelearn/cluster/detail/kmeans_lloyd.hpp"
#include "onelearn/cluster/detail/kmeans_plusplus.hpp"
#include "onelearn/cluster/detail/kmeans_rows.hpp"
#include "onelearn/cluster/detail/kmeans_space.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/detail/distances.hpp"
#include "onelearn/core/detail/huge_pages.hpp"
#include "onelearn/core/detail/moments.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/detail/progress.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/space/host.hpp"

namespace onelearn::cluster {

struct KMeansParams {
  std::int64_t n_clusters = 8;     ///< number of clusters
  std::string init = "k-means++";  ///< "k-means++" or "given" (the centres of set_init)
  std::int64_t n_init = 10;        ///< k-means++ runs; the lowest inertia wins (1 run if "given")
  std::int64_t max_iter = 300;     ///< Lloyd iterations per run, at most
  double tol = 1e-4;               ///< relative to the mean feature variance of X
  std::uint64_t random_state = 0;  ///< seed of the k-means++ draws
  std::int64_t verbose = 0;        ///< >= 1: a progress line per Lloyd iteration (rank 0)

  static constexpr std::array<std::string_view, 7> names{
      "n_clusters", "init", "n_init", "max_iter", "tol", "random_state", "verbose"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local,
          space::ComputeSpace Space = space::host>
class KMeans : public WithParams<KMeans<T, Exec, Space>, KMeansParams> {
 public:
  using value_type = T;
  using Params = KMeansParams;
  using space_type = Space;

  explicit KMeans(const Params& params = {}, Exec exec = {}, Space space = {})
      : WithParams<KMeans, Params>(params), exec_(std::move(exec)), space_(std::move(space)) {}

  /// Initial centres (n_clusters x n_features, in the units of X) for the next fits, like
  /// scikit-learn's `init=<array>`; sets init = "given". Checked in fit. With a distributed
  /// policy every rank passes the same centres.
  KMeans& set_init(const MatrixRef<T>& centers) {
    init_centers_ = centers;
    this->params_.init = "given";
    return *this;
  }
  /// The centres given to set_init (empty when none were given).
  [[nodiscard]] const Matrix<T>& init_centers() const noexcept { return init_centers_; }

  KMeans& fit(const MatrixRef<T>& X) {
    constexpr std::string_view where = "KMeans.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    const Params& params = this->params_;
    const bool given = params.init == "given";
    exec_.propagate_errors([&] { check_params(where, X.cols()); });
    // A device space with given centres copies X there first and takes the column sums (and the
    // tolerance's square sums) and centres there, and the sums stand in for the scan for NaN and
    // infinity: a column holding one has a sum that is not finite, and only then does the host's
    // check_finite run, to raise its error. The host then does not read X at all: on the H100
    // machine the host's scan alone took 6-7 ms of KMeans' 18 ms fit, and the means and
    // centring on the host as much again.
    constexpr bool device_space = !on_host && !Space::host_accessible;
    const bool centre_in_space = device_space && given;
    if (centre_in_space) {
      const std::array<std::int64_t, 1> n_features{X.cols()};
      exec_.check_same_shape("the number of features of X", n_features);
    } else {
      detail::check_fit_input<T>(where, exec_, X, std::nullopt, std::nullopt);
    }
    if (given) check_same_init_everywhere(where);
    space_rows raw{};
    if (centre_in_space) raw = copied_to_space(X);
    const Vector<double> sums_in_space =
        centre_in_space ? column_sums_in_space(raw) : Vector<double>();
    if (centre_in_space) {
      exec_.propagate_errors([&] {
        if (!sums_in_space.allFinite()) validation::check_finite(where, "X", X);
      });
    }
    const auto means =
        centre_in_space
            ? detail::global_means_from_sums<T>(where, exec_, X.rows(), sums_in_space,
                                                std::nullopt, std::nullopt)
            : detail::global_means<T>(where, exec_, X, std::nullopt, std::nullopt);
    if (params.n_clusters > means.n_samples) {
      throw invalid_argument(std::string(where) + ": expected n_clusters <= n_samples, found " +
                             "n_clusters = " + std::to_string(params.n_clusters) + " > " +
                             std::to_string(means.n_samples) + " samples");
    }

    // Centre X (scikit-learn does too): less cancellation in the distance expansion. On the host
    // for its kernels, for a CPU Thrust space (which reads the host's rows) and for k-means++'s
    // seeding; a device space with given centres centres its own copy (below), and X is never
    // copied on the host.
    const Vector<T> mean = means.x.template cast<T>();
    const Matrix<T> Xc = centre_in_space ? Matrix<T>() : centred_rows(X, mean);
    const double tol = centre_in_space ? absolute_tolerance_in_space(raw, means)
                                       : absolute_tolerance(X, means);
    const auto rows = detail::partition_rows(exec_, X.rows());
    const auto k = static_cast<index_t>(params.n_clusters);

    // Outside the host the centred rows go to the space once, for all runs (a device copy;
    // borrowed on the CPU Thrust systems).
    // Inside propagate_errors: a rank whose device is missing or full raises on every rank,
    // instead of leaving the others in the first all-reduce.
    space_rows in_space{};
    if constexpr (!on_host) {
      if (centre_in_space) {
        onelearn::detail::run_in_space(
            exec_, space_, [&] { subtract_from_rows(space_, raw.mutable_view(), mean); });
        in_space = std::move(raw);
      } else {
        in_space = copied_to_space(Xc);
      }
    }

    std::mt19937_64 engine(params.random_state);
    const std::int64_t runs = given ? 1 : params.n_init;
    std::optional<detail::LloydResult<T>> best;
    const onelearn::detail::ProgressLog progress("KMeans", params.verbose, exec_);
    std::int64_t iterations_done = 0;  // over all runs, for the bound on the time left
    for (std::int64_t run = 0; run < runs; ++run) {
      Matrix<T> start = given ? Matrix<T>(init_centers_.rowwise() - mean.transpose())
                              : detail::kmeans_plusplus<T>(exec_, rows, Xc, k, engine);
      const std::string run_text =
          progress.enabled() ? "run " + std::to_string(run + 1) + "/" + std::to_string(runs) : "";
      const auto report = [&](index_t iteration, double changed, double shift) {
        ++iterations_done;
        if (!progress.enabled()) return;
        // A bound: every run may use all of max_iter; convergence usually comes sooner.
        const auto bound = static_cast<double>(iterations_done + (params.max_iter - iteration) +
                                               (runs - run - 1) * params.max_iter);
        progress.step(
            run_text + ", iteration " + std::to_string(iteration) + "/" +
                std::to_string(params.max_iter) + ": " +
                std::to_string(static_cast<std::int64_t>(changed)) +
                " labels changed, centre shift " + onelearn::detail::format_quantity(shift),
            static_cast<double>(iterations_done), bound, onelearn::detail::Remaining::at_most);
      };
      auto result = [&] {
        if constexpr (on_host) {
          return detail::lloyd<T>(exec_, rows, Xc, std::move(start),
                                  static_cast<index_t>(params.max_iter), tol, true, report);
        } else {
          return detail::lloyd_in_space<T>(exec_, space_, rows, X, mean, in_space.view(),
                                           std::move(start),
                                           static_cast<index_t>(params.max_iter), tol, report);
        }
      }();
      if (progress.enabled()) {
        progress.step(run_text + " done: " + std::to_string(result.n_iter) +
                          " iterations, inertia " +
                          onelearn::detail::format_quantity(result.inertia),
                      static_cast<double>(run + 1), static_cast<double>(runs));
      }
      // The inertia is all-reduced, so every rank keeps the same run.
      if (!best || result.inertia < best->inertia) best = std::move(result);
    }

    cluster_centers_ = best->centers.rowwise() + mean.transpose();
    center_norms_ = detail::row_squared_norms<T>(cluster_centers_);
    labels_ = std::move(best->labels);
    inertia_ = static_cast<T>(best->inertia);
    n_iter_ = best->n_iter;
    n_features_ = X.cols();
    fitted_ = true;
    return *this;
  }

  /// Fits on a Dataset's features.
  template <class Y>
  KMeans& fit(const Dataset<T, Y>& data) {
    return fit(data.features());
  }

  /// The nearest centre of each row of X.
  [[nodiscard]] Labels predict(const MatrixRef<T>& X) const {
    check_input("KMeans.predict", X);
    Labels labels(X.rows());
    if constexpr (on_host) {
      detail::nearest_rows<T>(X, cluster_centers_, center_norms_, labels);
    } else {
      // In the space: X goes there (a copy on a device), the labels come back.
      const auto rows = space::to_space(space_, X);
      space::vector<Space, std::int64_t> found(space_, X.rows());
      nearest_rows(space_, rows.view(), cluster_centers_, found.mutable_view());
      labels = found.to_host();
    }
    return labels;
  }

  /// Fits, then returns the labels of this rank's training rows.
  Labels fit_predict(const MatrixRef<T>& X) { return fit(X).labels_; }

  /// Euclidean distance of each row of X to each centre (rows x n_clusters), computed in double
  /// whatever T is (as scikit-learn's euclidean_distances does for float32).
  [[nodiscard]] Matrix<T> transform(const MatrixRef<T>& X) const {
    check_input("KMeans.transform", X);
    const Matrix<double> centers = cluster_centers_.template cast<double>();
    const Vector<double> center_norms = detail::row_squared_norms<double>(centers);
    Matrix<T> out = onelearn::detail::uninitialized_matrix<T>(X.rows(), centers.rows());
    for (index_t begin = 0; begin < X.rows(); begin += detail::block_rows) {
      const index_t m = std::min(detail::block_rows, X.rows() - begin);
      const Matrix<double> block = X.middleRows(begin, m).template cast<double>();
      out.middleRows(begin, m) =
          detail::pairwise_squared_distances<double>(
              block, centers, detail::row_squared_norms<double>(block), center_norms)
              .cwiseSqrt()
              .template cast<T>();
    }
    return out;
  }

  Matrix<T> fit_transform(const MatrixRef<T>& X) { return fit(X).transform(X); }

  /// Minus the k-means objective on X (scikit-learn's score): -sum of squared distances to the
  /// nearest centre. With a distributed policy it is collective: each rank passes its own rows
  /// and every rank gets the score over all of them.
  [[nodiscard]] T score(const MatrixRef<T>& X) const {
    Labels labels;
    exec_.propagate_errors([&] { labels = predict(X); });
    double inertia = detail::paired_squared_distances<T>(X, cluster_centers_, labels).sum();
    exec_.allreduce(std::span<double>(&inertia, 1), exec::reduce_op::sum);
    return static_cast<T>(-inertia);
  }

  [[nodiscard]] const Matrix<T>& cluster_centers() const {
    return validation::fitted_attribute("KMeans.cluster_centers", fitted_, cluster_centers_);
  }
  /// Labels of the training rows this rank passed to fit.
  [[nodiscard]] const Labels& labels() const {
    return validation::fitted_attribute("KMeans.labels", fitted_, labels_);
  }
  /// Sum of squared distances of all training rows (all ranks) to their centre.
  [[nodiscard]] T inertia() const {
    return validation::fitted_attribute("KMeans.inertia", fitted_, inertia_);
  }
  /// Lloyd iterations run by the kept run.
  [[nodiscard]] index_t n_iter() const {
    return validation::fitted_attribute("KMeans.n_iter", fitted_, n_iter_);
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("KMeans.n_features_in", fitted_, n_features_);
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }
  /// Where fit's Lloyd iterations and predict run (space::host by default).
  [[nodiscard]] const Space& compute_space() const noexcept { return space_; }

 private:
  /// X minus the mean, in chunks of rows on threads, into a fresh matrix on huge pages (as
  /// StandardScaler.transform writes its output). Done serially, this copy was 13% of perf's
  /// samples of the thrust_omp fit on bench's kmeans shape (200k x 32 doubles, 2026-11-28), and
  /// the kernel's page-fault path another 12%. Each element is the same subtraction whatever
  /// the threads, so the bits are those of the serial copy.
  static Matrix<T> centred_rows(const MatrixRef<T>& X, const Vector<T>& mean) {
    Matrix<T> out = onelearn::detail::uninitialized_matrix<T>(X.rows(), X.cols());
    onelearn::detail::for_each_chunk(X.rows(), 4096, [&](index_t, index_t begin, index_t end) {
      out.middleRows(begin, end - begin) =
          X.middleRows(begin, end - begin).rowwise() - mean.transpose();
    });
    return out;
  }

  static constexpr bool on_host = std::is_same_v<Space, space::host>;

  /// The rows fit runs Lloyd on in the space: nothing on the host (its kernels read Xc), Xc
  /// borrowed by a CPU Thrust space, and on a device X or Xc copied there.
  using space_rows = std::conditional_t<on_host, int, space::matrix<Space, T>>;

  /// `rows` in the space (borrowed on host memory, a copy on a device), every rank raising if
  /// one rank's device is missing or full.
  space_rows copied_to_space(const MatrixRef<T>& rows) const {
    if constexpr (on_host) {
      return 0;
    } else {
      return onelearn::detail::run_in_space(exec_, space_,
                                            [&] { return space::to_space(space_, rows); });
    }
  }

  /// This rank's column sums of the rows in the space (the raw rows, before centring).
  Vector<double> column_sums_in_space(const space_rows& rows) const {
    if constexpr (on_host) {
      return {};
    } else {
      return onelearn::detail::run_in_space(exec_, space_,
                                            [&] { return column_sums(space_, rows.view(), {}); });
    }
  }

  void check_params(std::string_view where, index_t n_features) const {
    const Params& params = this->params_;
    const auto fail = [&](const std::string& what) {
      throw invalid_argument(std::string(where) + ": expected " + what);
    };
    if (params.n_clusters < 1) {
      fail("n_clusters >= 1, found " + std::to_string(params.n_clusters));
    }
    if (params.init != "k-means++" && params.init != "given") {
      fail(R"(init "k-means++" or "given", found ")" + params.init + "\"");
    }
    if (params.n_init < 1) fail("n_init >= 1, found " + std::to_string(params.n_init));
    if (params.max_iter < 1) fail("max_iter >= 1, found " + std::to_string(params.max_iter));
    if (!(params.tol >= 0) || !std::isfinite(params.tol)) {
      fail("a finite tol >= 0, found " + std::to_string(params.tol));
    }
    if (params.verbose < 0) fail("verbose >= 0, found " + std::to_string(params.verbose));
    if (params.init != "given") return;
    if (init_centers_.size() == 0) {
      fail("initial centers (set_init) with init \"given\", found none");
    }
    if (init_centers_.rows() != params.n_clusters || init_centers_.cols() != n_features) {
      throw shape_error(std::string(where) + ": expected initial centers of shape " +
                        std::to_string(params.n_clusters) + " x " + std::to_string(n_features) +
                        " (n_clusters x n_features), found " +
                        std::to_string(init_centers_.rows()) + " x " +
                        std::to_string(init_centers_.cols()));
    }
    validation::check_finite(where, "the initial centers", init_centers_);
  }

  /// Every rank must start from the same centres: one all-reduce of (c, -c) with max gives the
  /// largest and minus the smallest value of each entry over the ranks.
  void check_same_init_everywhere(std::string_view where) const {
    if constexpr (Exec::is_distributed) {
      const index_t count = init_centers_.size();
      Vector<double> extremes(2 * count);
      const Eigen::Map<const Vector<T>> flat(init_centers_.data(), count);
      extremes.head(count) = flat.template cast<double>();
      extremes.tail(count) = -flat.template cast<double>();
      exec_.allreduce(std::span<double>(extremes.data(), static_cast<std::size_t>(extremes.size())),
                      exec::reduce_op::max);
      if (extremes.head(count) != -extremes.tail(count)) {
        throw distributed_error(std::string(where) +
                                ": expected the same initial centers on every rank, found " +
                                "centers that differ between ranks");
      }
    } else {
      (void)where;
    }
  }

  /// scikit-learn's _tolerance: tol * mean over features of the variance of X (0 if tol is 0).
  double absolute_tolerance(const MatrixRef<T>& X, const detail::GlobalMeans& means) const {
    if (this->params_.tol == 0) return 0;
    return tolerance_from(detail::centered_square_sums<T>(X, means.x, std::nullopt).sum(), means);
  }
  /// The same from the raw rows in the space.
  double absolute_tolerance_in_space(const space_rows& rows,
                                     const detail::GlobalMeans& means) const {
    if constexpr (on_host) {
      return 0;  // never asked for: centre_in_space is false on the host
    } else {
      if (this->params_.tol == 0) return 0;
      return tolerance_from(onelearn::detail::run_in_space(exec_, space_, [&] {
                              return centered_square_sums(space_, rows.view(), means.x, {}).sum();
                            }),
                            means);
    }
  }
  /// tol times the mean variance of the features, from this rank's centred square sum.
  double tolerance_from(double square_sum, const detail::GlobalMeans& means) const {
    exec_.allreduce(std::span<double>(&square_sum, 1), exec::reduce_op::sum);
    return this->params_.tol * square_sum /
           (static_cast<double>(means.n_samples) * static_cast<double>(means.x.size()));
  }

  void check_input(std::string_view where, const MatrixRef<T>& X) const {
    validation::check_fitted(where, fitted_);
    validation::check_n_features(where, n_features_, X.cols());
    validation::check_finite(where, "X", X);
  }

  Exec exec_;
  Space space_;
  Matrix<T> init_centers_;
  Matrix<T> cluster_centers_;
  Vector<T> center_norms_;
  Labels labels_;
  T inertia_{};
  index_t n_iter_ = 0;
  index_t n_features_ = 0;
  bool fitted_ = false;
};

}  // namespace onelearn::cluster
