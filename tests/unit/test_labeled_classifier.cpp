// compose::LabeledClassifier: a classifier fitted on text labels predicts them. iris with its
// species names (tests/data/iris holds the codes 0, 1, 2 of setosa, versicolor, virginica).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "onelearn/compose/labeled_classifier.hpp"
#include "onelearn/naive_bayes/gaussian_nb.hpp"
#include "onelearn/tree/decision_tree_classifier.hpp"
#include "support.hpp"

using namespace onelearn;

namespace {

std::vector<std::string> names_of(const Labels& codes) {
  static const char* const species[] = {"setosa", "versicolor", "virginica"};
  std::vector<std::string> out;
  for (index_t i = 0; i < codes.size(); ++i) out.emplace_back(species[codes(i)]);
  return out;
}

}  // namespace

TEST_CASE("LabeledClassifier: text labels in, text labels out (iris)") {
  const auto iris = test::load_split<double, std::int64_t>("iris");
  const std::vector<std::string> y_train = names_of(iris.y_train);
  const std::vector<std::string> y_test = names_of(iris.y_test);

  compose::LabeledClassifier<naive_bayes::GaussianNB<double>> clf;
  CHECK_THROWS_AS((void)clf.predict(iris.X_test), not_fitted_error);
  clf.fit(iris.X_train, y_train);
  CHECK(clf.classes() == std::vector<std::string>{"setosa", "versicolor", "virginica"});

  // The same model as the classifier fitted on the codes, its predictions named.
  naive_bayes::GaussianNB<double> plain;
  plain.fit(iris.X_train, iris.y_train);
  CHECK(clf.predict(iris.X_test) == names_of(plain.predict(iris.X_test)));
  CHECK((clf.predict_proba(iris.X_test) - plain.predict_proba(iris.X_test)).cwiseAbs().maxCoeff() == 0);
  CHECK(clf.score(iris.X_test, y_test) == plain.score(iris.X_test, iris.y_test));

  // A label fit never saw counts as wrong, not as an error.
  std::vector<std::string> renamed = y_test;
  renamed[0] = "unknown";
  const double expected = plain.score(iris.X_test, iris.y_test) -
                          (plain.predict(iris.X_test.topRows(1))(0) == iris.y_test(0) ? 1.0 / static_cast<double>(y_test.size()) : 0.0);
  CHECK(clf.score(iris.X_test, renamed) == doctest::Approx(expected));

  // Labels in another order of appearance give the same sorted classes; the classifier's
  // parameters pass through.
  compose::LabeledClassifier<tree::DecisionTreeClassifier<double>> tree({.max_depth = 2});
  tree.fit(iris.X_train, y_train);
  CHECK(tree.get_params().max_depth == 2);
  CHECK(tree.classifier().get_depth() == 2);
  CHECK(tree.score(iris.X_test, y_test) > 0.85);
  CHECK_THROWS_AS(tree.fit(iris.X_train, std::vector<std::string>(iris.X_train.rows(), "one")), invalid_argument);
}
