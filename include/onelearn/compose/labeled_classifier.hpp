#pragma once
/**
 * \class onelearn::compose::LabeledClassifier
 * \brief Any onelearn classifier, fitted on and predicting the labels of a user's table (strings).
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/compose/labeled_classifier.hpp>
 *
 * const onelearn::io::Table table = onelearn::io::read_table("iris.csv");
 * const onelearn::Matrix<double> X =
 *     table.to_matrix<double>(table.columns(onelearn::io::ColumnType::number));
 * const std::vector<std::string>& species = table.text("species");
 *
 * onelearn::compose::LabeledClassifier<onelearn::linear_model::LogisticRegression<double>>
 *     clf({.C = 10.0});                                   // the classifier's own Params
 * clf.fit(X, species);
 * std::vector<std::string> predicted = clf.predict(X);   // "setosa", "virginica", ...
 * onelearn::Matrix<double> proba = clf.predict_proba(X);  // columns in the order of classes()
 * double accuracy = clf.score(X, species);
 * std::cout << predicted[0] << ' ' << proba(0, 0) << ' ' << accuracy << '\n';
 * \endcode
 *
 * `compose::LabeledClassifier<C, Label>`: any onelearn classifier C, fitted on labels of type
 * Label (`std::string` by default, or any type `LabelEncoder<Label>` takes) and predicting them:
 * the labels a user's table holds, in and out. scikit-learn's classifiers take string labels
 * themselves; onelearn's take onelearn::Labels (int64), so this wrapper encodes the labels with
 * `preprocessing::LabelEncoder<Label>` (sorted, as scikit-learn sorts classes_), fits C on the
 * codes and decodes what C predicts.
 *
 * \par Attributes (after fit)
 * - `classes()`: the sorted labels of every rank (`std::vector<Label>`); predict_proba's columns
 *   follow them.
 * - `classifier()`: the fitted C (its classes() are the codes 0..k-1); `encoder()`.
 *
 * \par Distributed
 * With C on exec::mpi (or exec::ucx), each rank passes its own rows and labels; the encoder
 * gathers every rank's labels (a rank may lack some, or hold none), so that the codes, and then
 * C, are the same on every rank.
 *
 * Errors: C's own (bad X, parameters, fewer than 2 classes); `not_fitted_error` before fit;
 * `invalid_argument` for no labels at all. score counts a label fit never saw as a wrong
 * prediction (C never predicts it), as scikit-learn's accuracy does.
 */

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/preprocessing/label_encoder.hpp"

namespace onelearn::compose {

template <class C, class Label = std::string>
class LabeledClassifier {
 public:
  using classifier_type = C;
  using value_type = typename C::value_type;
  using Params = typename C::Params;
  using exec_type = std::remove_cvref_t<decltype(std::declval<const C&>().execution_policy())>;
  using Encoder = preprocessing::LabelEncoder<Label, exec_type>;
  using LabelVector = typename Encoder::LabelVector;
  using LabelVectorRef = typename Encoder::LabelVectorRef;

  explicit LabeledClassifier(const Params& params = {}, exec_type exec = {})
      : classifier_(params, exec), encoder_({}, std::move(exec)) {}
  explicit LabeledClassifier(C classifier)
      : classifier_(std::move(classifier)), encoder_({}, classifier_.execution_policy()) {}

  /// Encodes y (collective under a distributed policy) and fits the classifier on the codes.
  LabeledClassifier& fit(const MatrixRef<value_type>& X, LabelVectorRef y) {
    fitted_ = false;
    const Labels codes = encoder_.fit_transform(y);
    classifier_.fit(X, codes);
    fitted_ = true;
    return *this;
  }

  [[nodiscard]] LabelVector predict(const MatrixRef<value_type>& X) const {
    validation::check_fitted("LabeledClassifier.predict", fitted_);
    return encoder_.inverse_transform(classifier_.predict(X));
  }

  /// P(class | x): columns in the order of classes().
  [[nodiscard]] Matrix<value_type> predict_proba(const MatrixRef<value_type>& X) const {
    validation::check_fitted("LabeledClassifier.predict_proba", fitted_);
    return classifier_.predict_proba(X);
  }

  /// Accuracy against y, over every rank's rows under a distributed policy; a label fit never
  /// saw is a wrong prediction.
  [[nodiscard]] value_type score(const MatrixRef<value_type>& X, LabelVectorRef y) const {
    validation::check_fitted("LabeledClassifier.score", fitted_);
    const LabelVector& known = encoder_.classes();
    Labels codes(static_cast<index_t>(y.size()));
    for (std::size_t i = 0; i < y.size(); ++i) {
      const auto at = std::lower_bound(known.begin(), known.end(), y[i]);
      codes(static_cast<index_t>(i)) =
          at != known.end() && *at == y[i] ? static_cast<std::int64_t>(at - known.begin()) : -1;
    }
    return classifier_.score(X, codes);
  }

  [[nodiscard]] const LabelVector& classes() const {
    validation::check_fitted("LabeledClassifier.classes", fitted_);
    return encoder_.classes();
  }
  [[nodiscard]] const C& classifier() const noexcept { return classifier_; }
  [[nodiscard]] const Encoder& encoder() const noexcept { return encoder_; }
  [[nodiscard]] const Params& get_params() const { return classifier_.get_params(); }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const exec_type& execution_policy() const noexcept {
    return classifier_.execution_policy();
  }

 private:
  C classifier_;
  Encoder encoder_;
  bool fitted_ = false;
};

}  // namespace onelearn::compose
