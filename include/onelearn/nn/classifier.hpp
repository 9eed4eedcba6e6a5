#pragma once
/**
 * \class onelearn::nn::KerasClassifier
 * \brief A Keras-style network as a scikit-learn classifier, for pipelines and searches.
 * \ingroup estimators
 *
 * <!-- example-context: nn -->
 * \code
 * #include <onelearn/nn/classifier.hpp>
 *
 * namespace nn = onelearn::nn;
 * // The network for n_features inputs and n_classes classes (logits out).
 * nn::KerasClassifier<float> clf(
 *     [](onelearn::index_t n_features, onelearn::index_t n_classes, const auto& params) {
 *       return nn::Sequential<float>{nn::Input({n_features}), nn::Dense(64, "relu"),
 *                                    nn::Dense(n_classes)};
 *     },
 *     {.epochs = 50, .batch_size = 16, .learning_rate = 1e-2, .seed = 3});
 * clf.fit(X_train, y_train);                  // y_train: onelearn::Labels, any values
 * onelearn::Labels predicted = clf.predict(X_test);     // values from clf.classes()
 * onelearn::Matrix<float> proba = clf.predict_proba(X_test);
 * double accuracy = clf.score(X_test, y_test);
 * clf.set_params({{"epochs", 100}});          // and into cross_val_score, GridSearchCV, ...
 * \endcode
 *
 * nn::KerasClassifier: a Keras network as a scikit-learn classifier (scikeras's
 * KerasClassifier), so it satisfies onelearn's Classifier concept (core/concepts.hpp) and drops
 * into pipelines, cross-validation and search. Sequential itself keeps Keras's semantics
 * (predict returns the raw outputs, labels must be 0..k-1); this wrapper adds the estimator
 * ones.
 *
 * Method: fit finds the sorted distinct labels (classes()), maps y onto 0..k-1, calls the
 * model-building function with (n_features, k, params) for a new network, compiles it (unless
 * the function returned it compiled) with the optimizer named by `optimizer` at
 * `learning_rate` and SparseCategoricalCrossentropy (from_logits as the Params say) with the
 * accuracy metric, and fits it with the Params' epochs, batch size, shuffle, seed and
 * validation split. Every fit starts from a new network (refit resets). predict is the class
 * of the largest output, predict_proba the model's class probabilities (softmax of the logits).
 * Copies share the fitted network (read-only: predict does not change it, but a network is
 * not safe to use from two threads at once); fitting a copy gives it its own.
 *
 * \par Parameters (KerasClassifierParams)
 * - `epochs` (int, default 10), `batch_size` (default 32), `shuffle` (default true), `seed`
 *   (default 0: initial weights, dropout and batch order derive from it), `validation_split`
 *   (default 0), `verbose` (default 0): as FitOptions.
 * - `optimizer` (string, default "adam"): "adam", "adamw", "sgd", "rmsprop" or "adagrad",
 *   with Keras's defaults and `learning_rate` (default 1e-3).
 * - `from_logits` (bool, default true): whether the network ends without a softmax.
 *
 * \par Attributes (after fit)
 * - `classes()` (Labels, k): the sorted distinct labels of the last fit.
 * - `model()`: the fitted nn::Sequential; `history()`: its fit's History.
 * - `n_features_in()`.
 *
 * \par Differences from scikeras
 * - The build function receives (n_features, n_classes, params) instead of scikeras's
 *   meta/compile kwargs dictionaries; no warm_start, partial_fit, class weights or callbacks.
 * - One class is an error (scikeras fits a degenerate model).
 *
 * Errors: `not_fitted_error` before fit; `invalid_argument` for fewer than two classes, an
 * unknown optimizer name, a build function whose network does not have k outputs (shape_error)
 * and everything nn::Sequential::fit rejects (NaN, bad options); `shape_error` for y of another
 * length than X, or X of another width than in fit.
 */

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/nn/sequential.hpp"

namespace onelearn::nn {

struct KerasClassifierParams {
  int epochs = 10;
  index_t batch_size = 32;
  double learning_rate = 1e-3;
  std::string optimizer = "adam";
  bool from_logits = true;
  bool shuffle = true;
  std::uint64_t seed = 0;
  double validation_split = 0;
  int verbose = 0;

  static constexpr std::array<std::string_view, 9> names{
      "epochs",  "batch_size", "learning_rate",    "optimizer", "from_logits",
      "shuffle", "seed",       "validation_split", "verbose"};
};

template <class T>
class KerasClassifier : public WithParams<KerasClassifier<T>, KerasClassifierParams> {
 public:
  using value_type = T;
  using Params = KerasClassifierParams;
  /// Makes the (uncompiled, or compiled) network for n_features inputs and n_classes outputs.
  using BuildFunction = std::function<Sequential<T>(index_t, index_t, const Params&)>;

  explicit KerasClassifier(BuildFunction build, const Params& params = {})
      : WithParams<KerasClassifier, Params>(params), build_(std::move(build)) {
    if (!build_) {
      throw invalid_argument("KerasClassifier: expected a model-building function, found none");
    }
  }

  KerasClassifier& fit(const MatrixRef<T>& X, const LabelsRef& y) {
    constexpr std::string_view where = "KerasClassifier.fit";
    validation::check_same_length(where, "y", X.rows(), y.size());
    if (X.rows() == 0) {
      throw invalid_argument(std::string(where) + ": expected at least one sample, found 0");
    }
    Labels classes = y;
    std::sort(classes.begin(), classes.end());
    const auto k =
        static_cast<index_t>(std::unique(classes.begin(), classes.end()) - classes.begin());
    if (k < 2) {
      throw invalid_argument(std::string(where) + ": expected at least 2 classes, found " +
                             std::to_string(k));
    }
    classes.conservativeResize(k);
    Labels encoded(y.size());
    for (index_t i = 0; i < y.size(); ++i) {
      encoded(i) = std::lower_bound(classes.begin(), classes.end(), y(i)) - classes.begin();
    }

    const Params& p = this->params_;
    auto model = std::make_shared<Sequential<T>>(build_(X.cols(), k, p));
    if (!model->is_compiled()) compile(*model, p);
    // Built here (as fit would, with the same seed) to check the outputs before training.
    if (!model->is_built()) model->build(Shape{X.cols()}, p.seed);
    if (model->output_shape().size() != k) {
      throw shape_error(std::string(where) + ": expected the built network to have " +
                        std::to_string(k) + " outputs (one per class), found " +
                        std::to_string(model->output_shape().size()));
    }
    history_ = model->fit(X, encoded,
                          FitOptions{.epochs = p.epochs,
                                     .batch_size = p.batch_size,
                                     .shuffle = p.shuffle,
                                     .seed = p.seed,
                                     .validation_split = p.validation_split,
                                     .verbose = p.verbose});
    model_ = std::move(model);
    classes_ = std::move(classes);
    n_features_ = X.cols();
    return *this;
  }

  /// The class of the largest output of each row, as a value of classes().
  [[nodiscard]] Labels predict(const MatrixRef<T>& X) const {
    const Labels index = fitted("KerasClassifier.predict", X).predict_classes(X);
    Labels out(index.size());
    for (index_t i = 0; i < index.size(); ++i) out(i) = classes_(index(i));
    return out;
  }

  /// Class probabilities, n x k, columns in the order of classes().
  [[nodiscard]] Matrix<T> predict_proba(const MatrixRef<T>& X) const {
    return fitted("KerasClassifier.predict_proba", X).predict_proba(X);
  }

  /// Accuracy of predict(X) against y.
  [[nodiscard]] T score(const MatrixRef<T>& X, const LabelsRef& y) const {
    validation::check_same_length("KerasClassifier.score", "y", X.rows(), y.size());
    const Labels predicted = predict(X);
    index_t hits = 0;
    for (index_t i = 0; i < y.size(); ++i) hits += predicted(i) == y(i) ? 1 : 0;
    return static_cast<T>(static_cast<double>(hits) / static_cast<double>(y.size()));
  }

  [[nodiscard]] const Labels& classes() const {
    return validation::fitted_attribute("KerasClassifier.classes", model_ != nullptr, classes_);
  }
  [[nodiscard]] const Sequential<T>& model() const {
    check_fitted("KerasClassifier.model");
    return *model_;
  }
  [[nodiscard]] const History& history() const {
    return validation::fitted_attribute("KerasClassifier.history", model_ != nullptr, history_);
  }
  [[nodiscard]] index_t n_features_in() const {
    check_fitted("KerasClassifier.n_features_in");
    return n_features_;
  }

 private:
  static void compile(Sequential<T>& model, const Params& p) {
    const SparseCategoricalCrossentropy loss{.from_logits = p.from_logits};
    const std::vector<std::string> metrics{"accuracy"};
    const LearningRate lr = p.learning_rate;
    if (p.optimizer == "adam") {
      model.compile(Adam{.learning_rate = lr}, loss, metrics);
    } else if (p.optimizer == "adamw") {
      model.compile(AdamW{.learning_rate = lr}, loss, metrics);
    } else if (p.optimizer == "sgd") {
      model.compile(SGD{.learning_rate = lr}, loss, metrics);
    } else if (p.optimizer == "rmsprop") {
      model.compile(RMSprop{.learning_rate = lr}, loss, metrics);
    } else if (p.optimizer == "adagrad") {
      model.compile(Adagrad{.learning_rate = lr}, loss, metrics);
    } else {
      throw invalid_argument(
          "KerasClassifier.fit: expected optimizer adam, adamw, sgd, rmsprop or adagrad, found '" +
          p.optimizer + "'");
    }
  }

  void check_fitted(std::string_view where) const {
    if (model_ != nullptr) return;
    throw not_fitted_error(std::string(where) +
                           ": expected a fitted KerasClassifier, found one that is not "
                           "fitted; call fit first");
  }

  const Sequential<T>& fitted(std::string_view where, const MatrixRef<T>& X) const {
    check_fitted(where);
    if (X.cols() != n_features_) {
      throw shape_error(std::string(where) + ": expected X with " + std::to_string(n_features_) +
                        " features (as in fit), found " + std::to_string(X.cols()));
    }
    return *model_;
  }

  BuildFunction build_;
  std::shared_ptr<const Sequential<T>> model_;
  Labels classes_;
  History history_;
  index_t n_features_ = 0;
};

}  // namespace onelearn::nn
