#pragma once
/**
 * \class onelearn::naive_bayes::GaussianNB
 * \brief Gaussian naive Bayes, as scikit-learn's GaussianNB.
 * \ingroup estimators
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/naive_bayes/gaussian_nb.hpp>
 *
 * onelearn::naive_bayes::GaussianNB<double> nb;          // or ({.var_smoothing = 1e-8})
 * nb.fit(X_train, y_train);                              // y_train: onelearn::Labels, any values
 * onelearn::Labels predicted = nb.predict(X_test);       // values taken from nb.classes()
 * onelearn::Matrix<double> proba = nb.predict_proba(X_test);  // n x n_classes, rows sum to 1
 * double accuracy = nb.score(X_test, y_test);
 *
 * // Data-parallel: each rank passes its own rows (a rank may lack some classes, or all rows);
 * // every rank ends with the same model.
 * onelearn::exec::mpi policy{comm};  // the application's communicator
 * onelearn::naive_bayes::GaussianNB<double, onelearn::exec::mpi> dist({}, policy);
 * dist.fit(my_X, my_y);
 *
 * // In a compute space (space/space.hpp): fit's passes over the rows run there.
 * onelearn::naive_bayes::GaussianNB<double, onelearn::exec::local, onelearn::space::thrust_omp>
 *     omp_nb;
 * \endcode
 *
 * naive_bayes::GaussianNB: Gaussian naive Bayes, as scikit-learn's GaussianNB (1.2.1). Each
 * feature is modelled, within each class, as an independent normal distribution with the
 * class's (weighted) mean and population variance; predictions maximise
 *
 *     log P(c) - ½ Σ_j log(2π var_cj) - ½ Σ_j (x_j - theta_cj)² / var_cj
 *
 * Every variance is increased by epsilon = var_smoothing · max_j Var(X_j), the largest
 * (unweighted) feature variance of all of X, exactly as scikit-learn does, so that features
 * that are constant within a class do not divide by zero.
 *
 * Method: the sorted class labels are gathered from every rank (all-gather of each rank's
 * distinct labels), then two all-reduces in double: per-class weighted counts and sums (the
 * means), then per-class weighted squared deviations about those means together with the
 * squared deviations of X about its global mean (two passes: one-pass sums of squares cancel
 * badly for features with a large mean). Each all-reduce carries k·p + O(k + p) doubles.
 * Probabilities are normalised with a log-sum-exp in double.
 *
 * \par Compute spaces
 * The third template argument says where fit's passes over the rows run (space/space.hpp):
 * `space::host` (the default) or a Thrust space (`thrust_cpp`, `thrust_omp`, `thrust_tbb`,
 * `thrust_cuda`; include <onelearn/space/space.hpp> and link onelearn::thrust_<system>). fit
 * brings the rows, their class indices and the weights into the space once (a device copy;
 * borrowed on the CPU systems); only the k x p sums come back to be all-reduced. The
 * attributes are the host's to 1e-12 relative in double, 1e-5 in float. Predictions run on the
 * host.
 *
 * \par Parameters (GaussianNBParams)
 * - `var_smoothing` (double, default 1e-9): share of the largest feature variance added to
 *   every variance, >= 0.
 *
 * \par Attributes (after fit)
 * - `classes()` (Labels, k): the distinct labels seen in fit on any rank, sorted ascending.
 * - `class_count()` (Vector<T>, k): weighted number of samples per class.
 * - `class_prior()` (Vector<T>, k): class_count / its sum.
 * - `theta()` (Matrix<T>, k x p): per-class feature means.
 * - `var()` (Matrix<T>, k x p): per-class feature variances, epsilon included.
 * - `epsilon()` (T): the amount added to every variance.
 * - `n_features_in()`: number of features seen in fit.
 *
 * \par A model from given attributes
 * `GaussianNB::from_fitted(params, theta, var, class_prior, classes[, exec[, space]])` returns
 * a model that predicts exactly as a fitted one with these attributes: what an imported model
 * (onnx/to_estimator.hpp) becomes. theta and var are k x p (var > 0, epsilon included),
 * class_prior has k entries > 0, classes are k strictly increasing labels. It has seen no data:
 * class_count() and epsilon() are a not_fitted_error.
 *
 * \par Differences from scikit-learn
 * - No `priors` parameter and no partial_fit.
 * - float input: the moments and the log-likelihoods are computed in double from the float
 *   data (scikit-learn also keeps its parameters in float64); the attributes are returned in T.
 * - A class whose samples all have weight 0 is an error (scikit-learn fails with a
 *   ZeroDivisionError).
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for y or sample_weight of the wrong
 * length, X with other features than in fit, or ranks that disagree on the number of features;
 * `invalid_argument` for NaN/Inf, negative weights, no samples, a class of zero total weight and
 * var_smoothing < 0. Under exec::mpi every error in fit is raised on every rank.
 */

#include <array>
#include <cmath>
#include <numbers>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/base/fit_input.hpp"
#include "onelearn/base/in_space.hpp"
#include "onelearn/base/labels.hpp"
#include "onelearn/base/score.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/space/data.hpp"
#include "onelearn/space/host.hpp"

namespace onelearn::naive_bayes {

struct GaussianNBParams {
  double var_smoothing = 1e-9;  ///< share of the largest feature variance added to every variance

  static constexpr std::array<std::string_view, 1> names{"var_smoothing"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local,
          space::ComputeSpace Space = space::host>
class GaussianNB : public WithParams<GaussianNB<T, Exec, Space>, GaussianNBParams> {
 public:
  using value_type = T;
  using Params = GaussianNBParams;
  using space_type = Space;

  explicit GaussianNB(const Params& params = {}, Exec exec = {}, Space space = {})
      : WithParams<GaussianNB, Params>(params),
        exec_(std::move(exec)),
        space_(std::move(space)) {}

  /// A fitted model with these attributes (see "A model from given attributes" above).
  /// shape_error for sizes that disagree; invalid_argument for NaN/Inf, a variance or prior
  /// <= 0, or classes that are not strictly increasing.
  [[nodiscard]] static GaussianNB from_fitted(const Params& params, const MatrixRef<T>& theta,
                                              const MatrixRef<T>& var,
                                              const VectorRef<T>& class_prior,
                                              const LabelsRef& classes, Exec exec = {},
                                              Space space = {}) {
    constexpr std::string_view where = "GaussianNB.from_fitted";
    const index_t k = theta.rows();
    if (var.rows() != k || var.cols() != theta.cols() || class_prior.size() != k ||
        theta.cols() == 0) {
      throw shape_error(std::string(where) + ": expected theta and var of k x p (p >= 1) and " +
                        "class_prior of k entries, found " + std::to_string(k) + " x " +
                        std::to_string(theta.cols()) + ", " + std::to_string(var.rows()) +
                        " x " + std::to_string(var.cols()) + " and " +
                        std::to_string(class_prior.size()));
    }
    onelearn::detail::check_given_classes(where, classes, k);
    validation::check_finite(where, "theta", theta);
    validation::check_finite(where, "var", var);
    validation::check_finite(where, "class_prior", class_prior);
    if (!(var.array() > T(0)).all() || !(class_prior.array() > T(0)).all()) {
      throw invalid_argument(std::string(where) +
                             ": expected var > 0 and class_prior > 0, found a value <= 0");
    }
    GaussianNB model(params, std::move(exec), std::move(space));
    model.classes_ = classes;
    model.theta_ = theta;
    model.var_ = var;
    model.class_prior_ = class_prior;
    model.theta_d_ = theta.template cast<double>();
    model.var_d_ = var.template cast<double>();
    model.log_prior_d_ = class_prior.template cast<double>().array().log();
    model.from_attributes_ = true;
    model.fitted_ = true;
    return model;
  }

  GaussianNB& fit(const MatrixRef<T>& X, const LabelsRef& y) {
    return fit_impl(X, y, std::nullopt);
  }

  GaussianNB& fit(const MatrixRef<T>& X, const LabelsRef& y, const VectorRef<T>& sample_weight) {
    return fit_impl(X, y, sample_weight);
  }

  /// Fits on a Dataset's features and labels, with its sample weights when it has them.
  GaussianNB& fit(const ClassificationDataset<T>& data) {
    return onelearn::detail::fit_dataset(*this, data);
  }

  /// The most probable class of each row, as a value of classes() (ties: the smaller label).
  [[nodiscard]] Labels predict(const MatrixRef<T>& X) const {
    return onelearn::detail::argmax_labels(classes_, joint_log_likelihood("GaussianNB.predict", X));
  }

  /// log P(class | x): n x n_classes, columns in the order of classes().
  [[nodiscard]] Matrix<T> predict_log_proba(const MatrixRef<T>& X) const {
    return log_proba("GaussianNB.predict_log_proba", X).template cast<T>();
  }

  /// P(class | x): n x n_classes, columns in the order of classes(); each row sums to 1.
  [[nodiscard]] Matrix<T> predict_proba(const MatrixRef<T>& X) const {
    return log_proba("GaussianNB.predict_proba", X).array().exp().matrix().template cast<T>();
  }

  /// Accuracy of predict(X) against y. With a distributed policy it is collective: each rank
  /// passes its own rows and every rank gets the accuracy over all of them.
  [[nodiscard]] T score(const MatrixRef<T>& X, const LabelsRef& y) const {
    return onelearn::detail::collective_score("GaussianNB.score", *this, X, y);
  }

  [[nodiscard]] const Labels& classes() const {
    return validation::fitted_attribute("GaussianNB.classes", fitted_, classes_);
  }
  [[nodiscard]] const Vector<T>& class_count() const {
    check_seen_data("GaussianNB.class_count");
    return class_count_;
  }
  [[nodiscard]] const Vector<T>& class_prior() const {
    return validation::fitted_attribute("GaussianNB.class_prior", fitted_, class_prior_);
  }
  /// Per-class means, n_classes x n_features (scikit-learn's theta_).
  [[nodiscard]] const Matrix<T>& theta() const {
    return validation::fitted_attribute("GaussianNB.theta", fitted_, theta_);
  }
  /// Per-class variances plus epsilon, n_classes x n_features (scikit-learn's var_).
  [[nodiscard]] const Matrix<T>& var() const {
    return validation::fitted_attribute("GaussianNB.var", fitted_, var_);
  }
  /// var_smoothing times the largest feature variance of X (scikit-learn's epsilon_).
  [[nodiscard]] T epsilon() const {
    check_seen_data("GaussianNB.epsilon");
    return epsilon_;
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("GaussianNB.n_features_in", fitted_, theta_.cols());
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }
  /// Where fit's passes over the rows run (space::host by default).
  [[nodiscard]] const Space& compute_space() const noexcept { return space_; }

 private:
  /// The counts and epsilon need a fit on data: a model made by from_fitted has none.
  void check_seen_data(std::string_view where) const {
    validation::check_fitted(where, fitted_);
    if (from_attributes_) {
      throw not_fitted_error(std::string(where) +
                             ": expected a model fitted on data, found one made by from_fitted "
                             "(it holds theta, var and the priors, not the counts)");
    }
  }

  GaussianNB& fit_impl(const MatrixRef<T>& X, const LabelsRef& y,
                       const std::optional<VectorRef<T>>& weights) {
    constexpr std::string_view where = "GaussianNB.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    from_attributes_ = false;
    const double var_smoothing = this->params_.var_smoothing;
    exec_.propagate_errors([&] {
      if (!(var_smoothing >= 0)) {
        std::ostringstream found;
        found << var_smoothing;
        throw invalid_argument(std::string(where) + ": expected var_smoothing >= 0, found " +
                               found.str());
      }
      validation::check_same_length(where, "y", X.rows(), y.size());
    });
    onelearn::detail::check_fit_input<T>(where, exec_, X, std::nullopt, weights);

    // The rows and weights in the space: borrowed on the host and the CPU Thrust systems, copied
    // once to a device. run_in_space: on a device, a rank whose allocation fails raises on every
    // rank instead of leaving the others in the next all-reduce. The kernels below are found by
    // argument-dependent lookup on the space (space/host.hpp lists them).
    using onelearn::detail::run_in_space;
    space::matrix<Space, T> rows;
    space::vector<Space, T> weights_in_space;
    run_in_space(exec_, space_, [&] {
      rows = space::to_space(space_, X);
      if (weights) {
        weights_in_space = space::to_space(
            space_, std::span<const T>(weights->data(), static_cast<std::size_t>(weights->size())));
      }
    });

    // Unweighted, as scikit-learn's np.var(X, axis=0); also fails alike on every rank when
    // there are no samples at all.
    const auto x_stats = onelearn::detail::global_means_from_sums<T>(
        where, exec_, X.rows(),
        run_in_space(exec_, space_, [&] { return column_sums(space_, rows.view(), {}); }),
        std::nullopt, std::nullopt);

    const Labels classes = onelearn::detail::gather_classes(exec_, y);
    const index_t k = classes.size();
    const index_t p = X.cols();
    const std::vector<index_t> class_of = onelearn::detail::class_indices(where, classes, y);
    space::vector<Space, index_t> class_of_in_space;

    // Pass 1: [class weights (k) | per-class weighted sums (k x p)].
    Vector<double> first(k + k * p);
    Eigen::Map<Matrix<double>> sums(first.data() + k, k, p);
    run_in_space(exec_, space_, [&] {
      class_of_in_space = space::to_space(space_, std::span<const index_t>(class_of));
      const space::class_moments local = class_sums(
          space_, rows.view(), class_of_in_space.view(), weights_in_space.view(), k);
      first.head(k) = local.counts;
      sums = local.sums;
    });
    exec_.allreduce(std::span(first.data(), static_cast<std::size_t>(first.size())),
                    exec::reduce_op::sum);
    const Vector<double> counts = first.head(k);
    for (index_t c = 0; c < k; ++c) {
      if (!(counts(c) > 0)) {
        throw invalid_argument(std::string(where) + ": expected a positive total sample_weight " +
                               "in every class, found 0 for class " + std::to_string(classes(c)));
      }
    }
    const Matrix<double> theta = sums.array().colwise() / counts.array();

    // Pass 2: [per-class weighted squared deviations (k x p) | squared deviations of X (p)].
    Vector<double> second(k * p + p);
    Eigen::Map<Matrix<double>> squares(second.data(), k, p);
    run_in_space(exec_, space_, [&] {
      squares = class_square_deviations(space_, rows.view(), class_of_in_space.view(),
                                        weights_in_space.view(), theta);
      second.tail(p) = centered_square_sums(space_, rows.view(), x_stats.x, {});
    });
    exec_.allreduce(std::span(second.data(), static_cast<std::size_t>(second.size())),
                    exec::reduce_op::sum);
    const double epsilon =
        var_smoothing * (second.tail(p) / static_cast<double>(x_stats.n_samples)).maxCoeff();

    classes_ = classes;
    theta_d_ = theta;
    var_d_ = (squares.array().colwise() / counts.array()) + epsilon;
    const Vector<double> prior = counts / counts.sum();
    log_prior_d_ = prior.array().log();
    theta_ = theta_d_.cast<T>();
    var_ = var_d_.cast<T>();
    class_count_ = counts.cast<T>();
    class_prior_ = prior.cast<T>();
    epsilon_ = static_cast<T>(epsilon);
    fitted_ = true;
    return *this;
  }

  /// log P(x, c) up to a constant: n x n_classes, in double.
  Matrix<double> joint_log_likelihood(std::string_view where, const MatrixRef<T>& X) const {
    validation::check_fitted(where, fitted_);
    validation::check_n_features(where, theta_d_.cols(), X.cols());
    validation::check_finite(where, "X", X);
    const Matrix<double> x = X.template cast<double>();
    Matrix<double> jll(X.rows(), classes_.size());
    for (index_t c = 0; c < classes_.size(); ++c) {
      const double constant =
          log_prior_d_(c) - 0.5 * (2.0 * std::numbers::pi * var_d_.row(c).array()).log().sum();
      jll.col(c) = constant - 0.5 * ((x.rowwise() - theta_d_.row(c)).array().square().rowwise() /
                                     var_d_.row(c).array())
                                        .rowwise()
                                        .sum();
    }
    return jll;
  }

  /// log P(c | x) with a log-sum-exp over the classes (see onelearn::detail::log_softmax on why
  /// the row maximum is not added back).
  Matrix<double> log_proba(std::string_view where, const MatrixRef<T>& X) const {
    return onelearn::detail::log_softmax(joint_log_likelihood(where, X));
  }

  Exec exec_;
  Space space_;
  Labels classes_;
  Matrix<double> theta_d_, var_d_;  // what predictions use, in double whatever T is
  Vector<double> log_prior_d_;
  Matrix<T> theta_, var_;
  Vector<T> class_count_, class_prior_;
  T epsilon_{};
  bool fitted_ = false;
  bool from_attributes_ = false;  // made by from_fitted: no counts, no epsilon
};

}  // namespace onelearn::naive_bayes
