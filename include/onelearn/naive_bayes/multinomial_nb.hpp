#pragma once
/**
 * \class onelearn::naive_bayes::MultinomialNB
 * \brief Naive Bayes for counts, as scikit-learn's MultinomialNB.
 * \ingroup estimators
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/naive_bayes/multinomial_nb.hpp>
 *
 * // X: non-negative counts (word counts, pixel intensities), one sample per row.
 * onelearn::naive_bayes::MultinomialNB<double> nb;        // or ({.alpha = 0.5})
 * nb.fit(X_train, y_train);                               // y_train: onelearn::Labels, any values
 * onelearn::Labels predicted = nb.predict(X_test);        // values taken from nb.classes()
 * onelearn::Matrix<double> proba = nb.predict_proba(X_test);  // n x n_classes, rows sum to 1
 * double accuracy = nb.score(X_test, y_test);
 *
 * // Data-parallel: each rank passes its own rows (a rank may lack some classes, or all rows);
 * // every rank ends with the same model.
 * onelearn::exec::mpi policy{comm};  // the application's communicator
 * onelearn::naive_bayes::MultinomialNB<double, onelearn::exec::mpi> dist({}, policy);
 * dist.fit(my_X, my_y);
 * \endcode
 *
 * naive_bayes::MultinomialNB: naive Bayes for multinomially distributed counts, as
 * scikit-learn's MultinomialNB (1.2.1). With N_cj the (weighted) sum of feature j over the
 * samples of class c and N_c = Σ_j N_cj,
 *
 *     log P(x_j | c) = log(N_cj + alpha) - log(N_c + p alpha)      (feature_log_prob)
 *     log P(c)       = log(#c) - log(n)   (fit_prior)   or  -log(k)
 *
 * and predictions maximise log P(c) + Σ_j x_j log P(x_j | c).
 *
 * alpha as scikit-learn 1.2.1 with its default force_alpha="warn": an alpha below 1e-10 is
 * replaced by 1e-10 (so that a feature never seen in a class does not give log 0), unless
 * force_alpha is true.
 *
 * Method: the sorted class labels are gathered from every rank (all-gather of each rank's
 * distinct labels), then one all-reduce in double of [class counts (k) | feature counts (k x p)].
 * Counts, logarithms and probabilities are computed in double; probabilities are normalised with
 * a log-sum-exp.
 *
 * \par Parameters (MultinomialNBParams)
 * - `alpha` (double, default 1.0): additive (Laplace/Lidstone) smoothing, >= 0.
 * - `fit_prior` (bool, default true): learn the class priors; false: uniform priors.
 * - `force_alpha` (bool, default false): keep an alpha below 1e-10 as it is.
 *
 * \par Attributes (after fit)
 * - `classes()` (Labels, k): the distinct labels seen in fit on any rank, sorted ascending.
 * - `class_count()` (Vector<T>, k): weighted number of samples per class.
 * - `feature_count()` (Matrix<T>, k x p): N_cj, the weighted feature sums per class.
 * - `class_log_prior()` (Vector<T>, k): log P(c).
 * - `feature_log_prob()` (Matrix<T>, k x p): log P(x_j | c).
 * - `n_features_in()`: number of features seen in fit.
 *
 * \par A model from given attributes
 * `MultinomialNB::from_fitted(params, feature_log_prob, class_log_prior, classes[, exec])`
 * returns a model that predicts exactly as a fitted one with these attributes: what an imported
 * model (onnx/to_estimator.hpp) becomes. feature_log_prob is k x p, class_log_prior has k
 * entries, classes are k strictly increasing labels; every value finite. It has seen no data:
 * class_count() and feature_count() are a not_fitted_error.
 *
 * \par Differences from scikit-learn
 * - No `class_prior` parameter and no partial_fit; force_alpha is a bool whose default, false,
 *   behaves as 1.2.1's default "warn" (without the warning).
 * - float input: counts and logarithms in double from the float data (scikit-learn keeps its
 *   parameters in float64 too); the attributes are returned in T.
 * - A total sample weight of 0 is an error (scikit-learn produces NaN priors).
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for y or sample_weight of the wrong
 * length, X with other features than in fit, or ranks that disagree on the number of features;
 * `invalid_argument` for negative X in fit (as scikit-learn, predict accepts any finite X),
 * NaN/Inf, negative weights, no samples or no features, a total weight of 0 and alpha < 0 or
 * NaN. Under exec::mpi every error in fit is raised on every rank.
 */

#include <array>
#include <cmath>
#include <numeric>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "onelearn/base/agreement.hpp"
#include "onelearn/base/fit_input.hpp"
#include "onelearn/base/labels.hpp"
#include "onelearn/base/score.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/detail/grouped_moments.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"

namespace onelearn::naive_bayes {

struct MultinomialNBParams {
  double alpha = 1.0;        ///< additive smoothing, >= 0
  bool fit_prior = true;     ///< learn the class priors (false: uniform)
  bool force_alpha = false;  ///< keep alpha < 1e-10 as is (false: raise it to 1e-10)

  static constexpr std::array<std::string_view, 3> names{"alpha", "fit_prior", "force_alpha"};
};

namespace detail {

/// Counts must be non-negative (scikit-learn's check_non_negative): names the first negative
/// entry.
template <class T>
void check_non_negative(std::string_view where, const MatrixRef<T>& X) {
  if (X.size() == 0 || X.minCoeff() >= T(0)) return;
  for (index_t r = 0; r < X.rows(); ++r) {
    for (index_t c = 0; c < X.cols(); ++c) {
      if (X(r, c) < T(0)) {
        std::ostringstream found;
        found << X(r, c);
        throw invalid_argument(std::string(where) + ": expected non-negative X (counts), found " +
                               found.str() + " at row " + std::to_string(r) + ", column " +
                               std::to_string(c));
      }
    }
  }
}

}  // namespace detail

template <class T, exec::ExecutionPolicy Exec = exec::local>
class MultinomialNB : public WithParams<MultinomialNB<T, Exec>, MultinomialNBParams> {
 public:
  using value_type = T;
  using Params = MultinomialNBParams;

  explicit MultinomialNB(const Params& params = {}, Exec exec = {})
      : WithParams<MultinomialNB, Params>(params), exec_(std::move(exec)) {}

  /// A fitted model with these attributes (see "A model from given attributes" above).
  /// shape_error for sizes that disagree; invalid_argument for NaN/Inf or classes that are not
  /// strictly increasing.
  [[nodiscard]] static MultinomialNB from_fitted(const Params& params,
                                                 const MatrixRef<T>& feature_log_prob,
                                                 const VectorRef<T>& class_log_prior,
                                                 const LabelsRef& classes, Exec exec = {}) {
    constexpr std::string_view where = "MultinomialNB.from_fitted";
    const index_t k = feature_log_prob.rows();
    if (class_log_prior.size() != k || feature_log_prob.cols() == 0) {
      throw shape_error(std::string(where) + ": expected feature_log_prob of k x p (p >= 1) and " +
                        "class_log_prior of k entries, found " + std::to_string(k) + " x " +
                        std::to_string(feature_log_prob.cols()) + " and " +
                        std::to_string(class_log_prior.size()));
    }
    onelearn::detail::check_given_classes(where, classes, k);
    validation::check_finite(where, "feature_log_prob", feature_log_prob);
    validation::check_finite(where, "class_log_prior", class_log_prior);
    MultinomialNB model(params, std::move(exec));
    model.classes_ = classes;
    model.feature_log_prob_ = feature_log_prob;
    model.class_log_prior_ = class_log_prior;
    model.feature_log_prob_d_ = feature_log_prob.template cast<double>();
    model.class_log_prior_d_ = class_log_prior.template cast<double>();
    model.from_attributes_ = true;
    model.fitted_ = true;
    return model;
  }

  MultinomialNB& fit(const MatrixRef<T>& X, const LabelsRef& y) {
    return fit_impl(X, y, std::nullopt);
  }

  MultinomialNB& fit(const MatrixRef<T>& X, const LabelsRef& y, const VectorRef<T>& sample_weight) {
    return fit_impl(X, y, sample_weight);
  }

  /// Fits on a Dataset's features and labels, with its sample weights when it has them.
  MultinomialNB& fit(const ClassificationDataset<T>& data) {
    return onelearn::detail::fit_dataset(*this, data);
  }

  /// The most probable class of each row, as a value of classes() (ties: the smaller label).
  [[nodiscard]] Labels predict(const MatrixRef<T>& X) const {
    return onelearn::detail::argmax_labels(classes_,
                                           joint_log_likelihood("MultinomialNB.predict", X));
  }

  /// log P(class | x): n x n_classes, columns in the order of classes().
  [[nodiscard]] Matrix<T> predict_log_proba(const MatrixRef<T>& X) const {
    return log_proba("MultinomialNB.predict_log_proba", X).template cast<T>();
  }

  /// P(class | x): n x n_classes, columns in the order of classes(); each row sums to 1.
  [[nodiscard]] Matrix<T> predict_proba(const MatrixRef<T>& X) const {
    return log_proba("MultinomialNB.predict_proba", X).array().exp().matrix().template cast<T>();
  }

  /// Accuracy of predict(X) against y. With a distributed policy it is collective: each rank
  /// passes its own rows and every rank gets the accuracy over all of them.
  [[nodiscard]] T score(const MatrixRef<T>& X, const LabelsRef& y) const {
    return onelearn::detail::collective_score("MultinomialNB.score", *this, X, y);
  }

  [[nodiscard]] const Labels& classes() const {
    return validation::fitted_attribute("MultinomialNB.classes", fitted_, classes_);
  }
  [[nodiscard]] const Vector<T>& class_count() const {
    check_seen_data("MultinomialNB.class_count");
    return class_count_;
  }
  /// Weighted per-class feature sums, n_classes x n_features (scikit-learn's feature_count_).
  [[nodiscard]] const Matrix<T>& feature_count() const {
    check_seen_data("MultinomialNB.feature_count");
    return feature_count_;
  }
  /// log P(c), n_classes (scikit-learn's class_log_prior_).
  [[nodiscard]] const Vector<T>& class_log_prior() const {
    return validation::fitted_attribute("MultinomialNB.class_log_prior", fitted_, class_log_prior_);
  }
  /// log P(x_j | c), n_classes x n_features (scikit-learn's feature_log_prob_).
  [[nodiscard]] const Matrix<T>& feature_log_prob() const {
    return validation::fitted_attribute("MultinomialNB.feature_log_prob", fitted_,
                                        feature_log_prob_);
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("MultinomialNB.n_features_in", fitted_,
                                        feature_log_prob_d_.cols());
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  /// The counts need a fit on data: a model made by from_fitted has none.
  void check_seen_data(std::string_view where) const {
    validation::check_fitted(where, fitted_);
    if (from_attributes_) {
      throw not_fitted_error(std::string(where) +
                             ": expected a model fitted on data, found one made by from_fitted "
                             "(it holds the log-probabilities, not the counts)");
    }
  }

  MultinomialNB& fit_impl(const MatrixRef<T>& X, const LabelsRef& y,
                          const std::optional<VectorRef<T>>& weights) {
    constexpr std::string_view where = "MultinomialNB.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    from_attributes_ = false;
    const Params& params = this->params_;
    exec_.propagate_errors([&] {
      if (!(params.alpha >= 0) || std::isinf(params.alpha)) {
        std::ostringstream found;
        found << params.alpha;
        throw invalid_argument(std::string(where) + ": expected a finite alpha >= 0, found " +
                               found.str());
      }
      validation::check_same_length(where, "y", X.rows(), y.size());
    });
    onelearn::detail::check_fit_input<T>(where, exec_, X, std::nullopt, weights);
    exec_.propagate_errors([&] { detail::check_non_negative<T>(where, X); });

    const Labels classes = onelearn::detail::gather_classes(exec_, y);
    const index_t k = classes.size();
    const index_t p = X.cols();
    // Every rank has the same classes and number of features: these fail on all ranks alike.
    if (k == 0 || p == 0) {
      throw invalid_argument(std::string(where) + ": expected at least one sample and one " +
                             "feature, found " + (k == 0 ? "no samples" : "no features"));
    }

    // [class counts (k) | feature counts (k x p)], weighted, in double, over every rank.
    Vector<double> counts = Vector<double>::Zero(k + k * p);
    Eigen::Map<Matrix<double>> feature_counts(counts.data() + k, k, p);
    onelearn::detail::grouped_sums<T>(X, onelearn::detail::class_indices(where, classes, y),
                                      weights, counts.head(k), feature_counts);
    exec_.allreduce(std::span(counts.data(), static_cast<std::size_t>(counts.size())),
                    exec::reduce_op::sum);
    const Vector<double> class_counts = counts.head(k);
    // std::accumulate rather than Eigen's sum(): GCC 12 reports a false "may be used
    // uninitialized" in the vectorised sum of this copy.
    const double total = std::accumulate(class_counts.begin(), class_counts.end(), 0.0);
    if (!(total > 0)) {
      throw invalid_argument(std::string(where) + ": expected a positive total sample_weight, " +
                             "found 0");
    }

    // scikit-learn's _check_alpha with force_alpha="warn" (1.2.1's default) or True.
    constexpr double alpha_lower_bound = 1e-10;
    const double alpha = (params.alpha < alpha_lower_bound && !params.force_alpha)
                             ? alpha_lower_bound
                             : params.alpha;
    const Matrix<double> smoothed = feature_counts.array() + alpha;
    const Vector<double> smoothed_total = smoothed.rowwise().sum();
    feature_log_prob_d_ = smoothed.array().log().colwise() - smoothed_total.array().log();
    class_log_prior_d_ = params.fit_prior
                             ? Vector<double>(class_counts.array().log() - std::log(total))
                             : Vector<double>::Constant(k, -std::log(static_cast<double>(k)));

    classes_ = classes;
    class_count_ = class_counts.cast<T>();
    feature_count_ = feature_counts.cast<T>();
    feature_log_prob_ = feature_log_prob_d_.cast<T>();
    class_log_prior_ = class_log_prior_d_.cast<T>();
    fitted_ = true;
    return *this;
  }

  /// log P(x, c) up to a constant: X feature_log_prob^T + class_log_prior, n x n_classes, in
  /// double.
  Matrix<double> joint_log_likelihood(std::string_view where, const MatrixRef<T>& X) const {
    validation::check_fitted(where, fitted_);
    validation::check_n_features(where, feature_log_prob_d_.cols(), X.cols());
    validation::check_finite(where, "X", X);
    Matrix<double> jll = X.template cast<double>() * feature_log_prob_d_.transpose();
    jll.rowwise() += class_log_prior_d_.transpose();
    return jll;
  }

  /// log P(c | x) with a log-sum-exp over the classes (the row maximum subtracted first).
  Matrix<double> log_proba(std::string_view where, const MatrixRef<T>& X) const {
    return onelearn::detail::log_softmax(joint_log_likelihood(where, X));
  }

  Exec exec_;
  Labels classes_;
  Matrix<double> feature_log_prob_d_;  // what predictions use, in double whatever T is
  Vector<double> class_log_prior_d_;
  Matrix<T> feature_count_, feature_log_prob_;
  Vector<T> class_count_, class_log_prior_;
  bool fitted_ = false;
  bool from_attributes_ = false;  // made by from_fitted: no counts
};

}  // namespace onelearn::naive_bayes
