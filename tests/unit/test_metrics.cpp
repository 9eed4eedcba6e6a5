// Metrics (precision/recall/F, confusion matrix, log loss, ROC AUC, MSE, MAE, silhouette, ARI)
// and MultinomialNB, against scikit-learn 1.2.1 run on the same inputs and against hand-derived
// values.
//
// Unless said otherwise, the expected numbers were printed by scikit-learn 1.2.1
// (`. bench/anchors/skl-env.sh && python3 ...`) with `from sklearn.metrics import *`
// and `import numpy as np`, on the inputs written out next to them.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "onelearn/core/concepts.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/metrics/accuracy_score.hpp"
#include "onelearn/metrics/adjusted_rand_score.hpp"
#include "onelearn/metrics/confusion_matrix.hpp"
#include "onelearn/metrics/log_loss.hpp"
#include "onelearn/metrics/mean_absolute_error.hpp"
#include "onelearn/metrics/mean_squared_error.hpp"
#include "onelearn/metrics/precision_recall_f1.hpp"
#include "onelearn/metrics/roc_auc_score.hpp"
#include "onelearn/metrics/silhouette_score.hpp"
#include "onelearn/naive_bayes/multinomial_nb.hpp"
#include "support.hpp"

using namespace onelearn;
using naive_bayes::MultinomialNB;

static_assert(check_classifier<MultinomialNB<float>>());
static_assert(check_classifier<MultinomialNB<double>>());

namespace {

Labels labels(std::initializer_list<std::int64_t> values) {
  Labels out(static_cast<index_t>(values.size()));
  index_t i = 0;
  for (auto v : values) out(i++) = v;
  return out;
}

template <class T>
Vector<T> vec(std::initializer_list<double> values) {
  Vector<T> out(static_cast<index_t>(values.size()));
  index_t i = 0;
  for (auto v : values) out(i++) = static_cast<T>(v);
  return out;
}

// The multiclass example: label 5 is only true (never predicted), label 7 only predicted.
// yt = np.array([3, 1, 3, 3, 1, 2, 2, 1, 3, 5]); yp = np.array([1, 1, 3, 2, 1, 3, 2, 7, 3, 1])
// w = np.array([1., 2., 0.5, 1., 3., 1., 2., 1., 1.5, 1.])
template <class T>
Matrix<T> mat(index_t rows, index_t cols, std::initializer_list<double> values) {
  Matrix<T> out(rows, cols);
  index_t i = 0;
  for (auto v : values) {
    out(i / cols, i % cols) = static_cast<T>(v);
    ++i;
  }
  return out;
}

const Labels multi_true = labels({3, 1, 3, 3, 1, 2, 2, 1, 3, 5});
const Labels multi_pred = labels({1, 1, 3, 2, 1, 3, 2, 7, 3, 1});
const Vector<double> multi_weights = vec<double>({1, 2, 0.5, 1, 3, 1, 2, 1, 1.5, 1});

constexpr double exact = 1e-15;

}  // namespace

TEST_CASE("precision, recall and F-scores match scikit-learn for every average") {
  namespace m = metrics;
  struct Expected {
    const char* average;
    double precision, recall, f1, f05, f2;            // unweighted
    double w_precision, w_recall, w_f1, w_f05, w_f2;  // sample_weight=w
  };
  // for avg in ['micro','macro','weighted']: for sw in [None, w]:
  //   precision_score(yt, yp, average=avg, sample_weight=sw), recall_score, f1_score,
  //   fbeta_score(..., beta=0.5), fbeta_score(..., beta=2)
  const Expected expected[] = {
      {"micro", 0.5, 0.5, 0.5, 0.5, 0.5, 0.6428571428571429, 0.6428571428571429, 0.6428571428571429,
       0.6428571428571428, 0.6428571428571428},
      {"macro", 0.3333333333333333, 0.3333333333333333, 0.3285714285714286, 0.3302631578947368,
       0.3302631578947368, 0.4095238095238095, 0.4, 0.4014652014652015, 0.4053921568627451,
       0.3998868138087153},
      {"weighted", 0.5166666666666666, 0.5, 0.5, 0.5078947368421053, 0.49802631578947365,
       0.6394557823129252, 0.6428571428571429, 0.6357927786499216, 0.6365546218487396,
       0.638855202522435},
  };
  for (const auto& e : expected) {
    CAPTURE(e.average);
    const m::PrecisionRecallOptions options{.average = e.average};
    CHECK(m::precision_score(multi_true, multi_pred, options) ==
          doctest::Approx(e.precision).epsilon(exact));
    CHECK(m::recall_score(multi_true, multi_pred, options) ==
          doctest::Approx(e.recall).epsilon(exact));
    CHECK(m::f1_score(multi_true, multi_pred, options) == doctest::Approx(e.f1).epsilon(exact));
    CHECK(m::fbeta_score(multi_true, multi_pred, 0.5, options) ==
          doctest::Approx(e.f05).epsilon(exact));
    CHECK(m::fbeta_score(multi_true, multi_pred, 2.0, options) ==
          doctest::Approx(e.f2).epsilon(exact));
    CHECK(m::precision_score<double>(multi_true, multi_pred, multi_weights, options) ==
          doctest::Approx(e.w_precision).epsilon(exact));
    CHECK(m::recall_score<double>(multi_true, multi_pred, multi_weights, options) ==
          doctest::Approx(e.w_recall).epsilon(exact));
    CHECK(m::f1_score<double>(multi_true, multi_pred, multi_weights, options) ==
          doctest::Approx(e.w_f1).epsilon(exact));
    CHECK(m::fbeta_score<double>(multi_true, multi_pred, multi_weights, 0.5, options) ==
          doctest::Approx(e.w_f05).epsilon(exact));
    // float weights give the same counts (the weights are exact in float).
    CHECK(m::fbeta_score<float>(multi_true, multi_pred, multi_weights.cast<float>(), 2.0,
                                options) == doctest::Approx(e.w_f2).epsilon(exact));
    const auto all = m::precision_recall_fscore(multi_true, multi_pred, 2.0, options);
    CHECK(all.precision == doctest::Approx(e.precision).epsilon(exact));
    CHECK(all.recall == doctest::Approx(e.recall).epsilon(exact));
    CHECK(all.fscore == doctest::Approx(e.f2).epsilon(exact));
  }
  // Micro precision is the accuracy (hand: 5 of the 10 samples are right); beta = inf is recall.
  CHECK(m::precision_score(multi_true, multi_pred, {.average = "micro"}) ==
        metrics::accuracy_score(multi_true, multi_pred));
  CHECK(m::fbeta_score(multi_true, multi_pred, std::numeric_limits<double>::infinity(),
                       {.average = "macro"}) ==
        m::recall_score(multi_true, multi_pred, {.average = "macro"}));
}

TEST_CASE("binary precision, recall and F-scores follow pos_label") {
  namespace m = metrics;
  // bt = np.array([-1, 1, 1, -1, 1, 1, -1, -1, 1]); bp = np.array([-1, 1, -1, 1, 1, 1, -1, 1, -1])
  // bw = np.array([1., 2., 1., 0.5, 1., 3., 1., 1., 2.])
  const Labels bt = labels({-1, 1, 1, -1, 1, 1, -1, -1, 1});
  const Labels bp = labels({-1, 1, -1, 1, 1, 1, -1, 1, -1});
  const Vector<double> bw = vec<double>({1, 2, 1, 0.5, 1, 3, 1, 1, 2});
  // pos_label 1, by hand: tp = 3, predicted 5, true 5: 0.6 each.
  CHECK(m::precision_score(bt, bp) == doctest::Approx(0.6).epsilon(exact));
  CHECK(m::recall_score(bt, bp) == doctest::Approx(0.6).epsilon(exact));
  CHECK(m::f1_score(bt, bp) == doctest::Approx(0.6).epsilon(exact));
  CHECK(m::fbeta_score(bt, bp, 2.0) == doctest::Approx(0.6).epsilon(exact));
  // [f(bt, bp, pos_label=1, sample_weight=bw) for f in (precision, recall, f1)],
  // fbeta_score(..., beta=2)
  CHECK(m::precision_score<double>(bt, bp, bw) == doctest::Approx(0.8).epsilon(exact));
  CHECK(m::recall_score<double>(bt, bp, bw) == doctest::Approx(0.6666666666666666).epsilon(exact));
  CHECK(m::f1_score<double>(bt, bp, bw) == doctest::Approx(0.7272727272727272).epsilon(exact));
  CHECK(m::fbeta_score<double>(bt, bp, bw, 2.0) ==
        doctest::Approx(0.689655172413793).epsilon(exact));
  // pos_label=-1: by hand tp = 2, predicted 4, true 4: 0.5 each; weighted from scikit-learn.
  const m::PrecisionRecallOptions negative{.pos_label = -1};
  CHECK(m::precision_score(bt, bp, negative) == doctest::Approx(0.5).epsilon(exact));
  CHECK(m::f1_score(bt, bp, negative) == doctest::Approx(0.5).epsilon(exact));
  CHECK(m::precision_score<double>(bt, bp, bw, negative) == doctest::Approx(0.4).epsilon(exact));
  CHECK(m::recall_score<double>(bt, bp, bw, negative) ==
        doctest::Approx(0.5714285714285714).epsilon(exact));
  CHECK(m::f1_score<double>(bt, bp, bw, negative) ==
        doctest::Approx(0.47058823529411764).epsilon(exact));
  CHECK(m::fbeta_score<double>(bt, bp, bw, 2.0, negative) ==
        doctest::Approx(0.5263157894736841).epsilon(exact));
}

TEST_CASE("precision and recall divide by zero as scikit-learn's default: the score is 0") {
  namespace m = metrics;
  // precision_score([0, 0, 0], [0, 0, 0]) -> 0.0 (pos_label 1 absent: nothing predicted 1).
  const Labels zeros = labels({0, 0, 0});
  CHECK(m::precision_score(zeros, zeros) == 0.0);
  CHECK(m::recall_score(zeros, zeros) == 0.0);
  CHECK(m::f1_score(zeros, zeros) == 0.0);
  // By hand: nothing predicted 1 -> precision 0/0 -> 0; recall 0/2 = 0; F with P = R = 0 -> 0.
  CHECK(m::precision_score(labels({1, 1, 0}), labels({0, 0, 0})) == 0.0);
  CHECK(m::f1_score(labels({1, 1, 0}), labels({0, 0, 0})) == 0.0);
  // Macro over {0, 1, 2}: class 2 only predicted (recall 0/0 -> 0, precision 0/1 = 0), class 0
  // perfect (1, 1), class 1 never predicted (precision 0/0 -> 0, recall 0/1 = 0): P = R = 1/3.
  const Labels t = labels({0, 1}), p = labels({0, 2});
  CHECK(m::precision_score(t, p, {.average = "macro"}) == doctest::Approx(1.0 / 3).epsilon(exact));
  CHECK(m::recall_score(t, p, {.average = "macro"}) == doctest::Approx(1.0 / 3).epsilon(exact));
  // "weighted" with every weight 0: all scores 0 (scikit-learn's zero_division value).
  CHECK(m::precision_score<double>(t, p, Vector<double>::Zero(2), {.average = "weighted"}) == 0.0);
}

TEST_CASE("precision, recall and F-scores reject bad input with typed errors") {
  namespace m = metrics;
  CHECK_THROWS_WITH_AS((void)m::f1_score(multi_true, multi_pred),
                       doctest::Contains("f1_score: expected at most 2 distinct labels with "
                                         "average=\"binary\", found 5"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      (void)m::precision_score(multi_true, multi_pred, {.average = "samples"}),
      doctest::Contains("precision_score: expected average to be one of \"binary\", \"micro\", "
                        "\"macro\", \"weighted\", found \"samples\""),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)m::recall_score(labels({3, 4}), labels({4, 3})),
                       doctest::Contains("recall_score: expected pos_label to be one of the "
                                         "labels 3, 4, found 1"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)m::fbeta_score(multi_true, multi_pred, -1.0, {.average = "micro"}),
                       doctest::Contains("fbeta_score: expected beta >= 0, found -1"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)m::precision_score(multi_true, multi_pred.head(9)),
                       doctest::Contains("precision_score: expected y_pred to have 10 entries"),
                       shape_error);
  CHECK_THROWS_WITH_AS((void)m::f1_score<double>(multi_true, multi_pred, Vector<double>::Ones(3)),
                       doctest::Contains("f1_score: expected sample_weight to have 10 entries"),
                       shape_error);
  Vector<double> negative = multi_weights;
  negative(2) = -1;
  CHECK_THROWS_WITH_AS(
      (void)m::f1_score<double>(multi_true, multi_pred, negative, {.average = "macro"}),
      doctest::Contains("f1_score: expected non-negative sample_weight, found -1"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)m::recall_score(Labels(0), Labels(0), {.average = "macro"}),
                       doctest::Contains("recall_score: expected at least 1 sample, found 0"),
                       onelearn::invalid_argument);
}

TEST_CASE("confusion_matrix counts true x predicted labels") {
  // confusion_matrix(yt, yp): labels 1, 2, 3, 5, 7.
  Matrix<std::int64_t> expected(5, 5);
  expected << 2, 0, 0, 0, 1,  //
      0, 1, 1, 0, 0,          //
      1, 1, 2, 0, 0,          //
      1, 0, 0, 0, 0,          //
      0, 0, 0, 0, 0;
  CHECK(metrics::confusion_matrix(multi_true, multi_pred) == expected);
  // confusion_matrix(yt, yp, labels=[7, 3, 1, 4]): the given order; 2 and 5 are left out.
  Matrix<std::int64_t> some(4, 4);
  some << 0, 0, 0, 0,  //
      0, 2, 1, 0,      //
      1, 0, 2, 0,      //
      0, 0, 0, 0;
  CHECK(metrics::confusion_matrix(multi_true, multi_pred, labels({7, 3, 1, 4})) == some);
  // By hand: every sample is on the diagonal of a perfect prediction.
  const Matrix<std::int64_t> diagonal = metrics::confusion_matrix(multi_true, multi_true);
  CHECK(diagonal.trace() == 10);
  CHECK(diagonal.sum() == 10);

  CHECK_THROWS_WITH_AS((void)metrics::confusion_matrix(multi_true, multi_pred.head(4)),
                       doctest::Contains("confusion_matrix: expected y_pred to have 10 entries"),
                       shape_error);
  CHECK_THROWS_WITH_AS(
      (void)metrics::confusion_matrix(multi_true, multi_pred, labels({7, 42})),
      doctest::Contains(
          "confusion_matrix: expected at least one of labels to occur in y_true, found none"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)metrics::confusion_matrix(multi_true, multi_pred, Labels(0)),
                       doctest::Contains("confusion_matrix: expected at least one label"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)metrics::confusion_matrix(Labels(0), Labels(0)),
                       doctest::Contains("confusion_matrix: expected at least 1 sample, found 0"),
                       onelearn::invalid_argument);
}

TEST_CASE_TEMPLATE("log_loss clips, renormalises and averages as scikit-learn", T, float, double) {
  namespace m = metrics;
  // lt = np.array([2, 0, 1, 1, 2, 0])
  // lp = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0], [0.1, 0.7, 0.1], [0.0, 0.0, 1.0],
  //                [0.3, 0.3, 0.4], [0.6, 0.2, 0.2]])     (rows 3 and 4 do not sum to 1)
  // lw = np.array([1., 2., 0.5, 1., 3., 1.])
  const Labels lt = labels({2, 0, 1, 1, 2, 0});
  const Matrix<T> lp = mat<T>(
      6, 3,
      {0.2, 0.3, 0.5, 1.0, 0.0, 0.0, 0.1, 0.7, 0.1, 0.0, 0.0, 1.0, 0.3, 0.3, 0.4, 0.6, 0.2, 0.2});
  const Vector<T> lw = vec<T>({1, 2, 0.5, 1, 3, 1});
  const bool is_float = std::is_same_v<T, float>;
  // The clipping eps is the epsilon of T, so float and double differ by far more than rounding
  // (the row [0, 0, 1] with true class 1 costs -log(eps)):
  // log_loss(lt, lp) and log_loss(lt, lp.astype(np.float32)).
  const double expected = is_float ? 3.0523272466591167 : 6.402538558933025;
  CHECK(static_cast<double>(m::log_loss<T>(lt, lp)) ==
        doctest::Approx(expected).epsilon(is_float ? 1e-6 : 1e-13));
  if constexpr (!std::is_same_v<T, float>) {
    // log_loss(lt, lp, sample_weight=lw), normalize=False, and both.
    CHECK(m::log_loss<T>(lt, lp, lw) == doctest::Approx(4.720253600377178).epsilon(1e-13));
    CHECK(m::log_loss<T>(lt, lp, {.normalize = false}) ==
          doctest::Approx(38.41523135359815).epsilon(1e-13));
    CHECK(m::log_loss<T>(lt, lp, lw, {.normalize = false}) ==
          doctest::Approx(40.12215560320601).epsilon(1e-13));
    // log_loss(np.array([2, 0, 2, 2]), lp[:4], labels=[0, 1, 2]): class 1 absent from y_true.
    CHECK(m::log_loss<T>(labels({2, 0, 2, 2}), lp.topRows(4), {.labels = {0, 1, 2}}) ==
          doctest::Approx(0.7225929394740414).epsilon(1e-13));
  }
  // Binary, one column = P(larger label): bl = np.array([7, 3, 7, 7, 3]);
  // bpp = np.array([[0.9], [0.2], [1.0], [0.6], [0.0]]); log_loss(bl, bpp) (the same with the
  // two columns [1 - p, p]).
  const Labels bl = labels({7, 3, 7, 7, 3});
  const Matrix<T> bpp = mat<T>(5, 1, {0.9, 0.2, 1.0, 0.6, 0.0});
  Matrix<T> both(5, 2);
  both.col(0) = (T(1) - bpp.array()).matrix();
  both.col(1) = bpp;
  const double tolerance = is_float ? 1e-6 : 1e-13;
  CHECK(static_cast<double>(m::log_loss<T>(bl, bpp)) ==
        doctest::Approx(0.16786593814760545).epsilon(tolerance));
  CHECK(static_cast<double>(m::log_loss<T>(bl, both)) ==
        doctest::Approx(0.16786593814760545).epsilon(tolerance));
  // By hand: perfect predictions cost -log(1 - eps) = eps (to first order) per sample.
  Matrix<T> perfect(3, 2);
  perfect << 0, 1, 1, 0, 0, 1;
  CHECK(static_cast<double>(m::log_loss<T>(labels({1, 0, 1}), perfect)) ==
        doctest::Approx(static_cast<double>(std::numeric_limits<T>::epsilon())).epsilon(1e-6));

  CHECK_THROWS_WITH_AS((void)m::log_loss<T>(lt, lp.leftCols(2)),
                       doctest::Contains("log_loss: expected y_pred with 3 columns (one per "
                                         "class) or 1 (binary), found 2"),
                       shape_error);
  CHECK_THROWS_WITH_AS((void)m::log_loss<T>(lt, lp.leftCols(1)),
                       doctest::Contains("log_loss: expected y_pred with 3 columns"), shape_error);
  CHECK_THROWS_WITH_AS((void)m::log_loss<T>(lt.head(5), lp),
                       doctest::Contains("log_loss: expected y_pred to have 5 entries"),
                       shape_error);
  CHECK_THROWS_WITH_AS((void)m::log_loss<T>(labels({4, 4}), both.topRows(2)),
                       doctest::Contains("log_loss: expected at least 2 classes in y_true (pass "
                                         "the others in options.labels), found 1 (4)"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)m::log_loss<T>(lt, lp, {.labels = {0, 1, 5}}),
                       doctest::Contains("log_loss: expected the labels of y_true among labels, "
                                         "found 2 at row 0"),
                       onelearn::invalid_argument);
  Matrix<T> nan = lp;
  nan(1, 1) = std::numeric_limits<T>::quiet_NaN();
  CHECK_THROWS_WITH_AS((void)m::log_loss<T>(lt, nan),
                       doctest::Contains("log_loss: expected finite values in y_pred"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)m::log_loss<T>(Labels(0), Matrix<T>(0, 2)),
                       doctest::Contains("log_loss: expected at least 1 sample, found 0"),
                       onelearn::invalid_argument);
}

TEST_CASE_TEMPLATE("roc_auc_score handles tied scores as scikit-learn", T, float, double) {
  namespace m = metrics;
  // rt = np.array([0, 0, 1, 1, 0, 1, 1, 0, 1, 0])
  // rs = np.array([0.1, 0.4, 0.35, 0.8, 0.4, 0.4, 0.9, 0.1, 0.1, 0.7])  (ties at 0.1 and 0.4)
  // rw = np.array([1., 2., 0.5, 1., 3., 1., 2., 1., 1.5, 1.])
  // roc_auc_score(rt, rs), roc_auc_score(rt, rs, sample_weight=rw), roc_auc_score(rt*4+3, rs)
  const Labels rt = labels({0, 0, 1, 1, 0, 1, 1, 0, 1, 0});
  const Vector<T> rs = vec<T>({0.1, 0.4, 0.35, 0.8, 0.4, 0.4, 0.9, 0.1, 0.1, 0.7});
  const Vector<T> rw = vec<T>({1, 2, 0.5, 1, 3, 1, 2, 1, 1.5, 1});
  const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  // Mann-Whitney by hand: of the 25 (positive, negative) pairs 14 are ordered and 4 tied, each
  // tie counting half: (14 + 2) / 25.
  CHECK(static_cast<double>(m::roc_auc_score<T>(rt, rs)) ==
        doctest::Approx(0.6400000000000001).epsilon(tolerance));
  CHECK(static_cast<double>(m::roc_auc_score<T>(rt, rs, rw)) ==
        doctest::Approx(0.6458333333333333).epsilon(tolerance));
  CHECK(static_cast<double>(m::roc_auc_score<T>(Labels(rt.array() * 4 + 3), rs)) ==
        doctest::Approx(0.6400000000000001).epsilon(tolerance));
  // roc_auc_score([0, 1, 1, 0], [0.5, 0.5, 0.5, 0.5]) = 0.5: all tied.
  CHECK(m::roc_auc_score<T>(labels({0, 1, 1, 0}), Vector<T>::Constant(4, T(0.5))) == T(0.5));
  // Reversed scores: 7 ordered, the same 4 ties: (7 + 2) / 25 = 1 - 0.64 (by hand).
  CHECK(static_cast<double>(m::roc_auc_score<T>(rt, Vector<T>(-rs))) ==
        doctest::Approx(1 - 0.64).epsilon(tolerance));

  CHECK_THROWS_WITH_AS((void)m::roc_auc_score<T>(Labels::Constant(10, 1), rs),
                       doctest::Contains("roc_auc_score: expected exactly 2 classes in y_true, "
                                         "found 1 (1); ROC AUC is not defined with one class"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)m::roc_auc_score<T>(labels({0, 1, 2}), rs.head(3)),
                       doctest::Contains("found 3; multiclass ROC AUC is not supported"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)m::roc_auc_score<T>(rt, rs.head(9)),
                       doctest::Contains("roc_auc_score: expected y_score to have 10 entries"),
                       shape_error);
  Vector<T> nan = rs;
  nan(4) = std::numeric_limits<T>::quiet_NaN();
  CHECK_THROWS_WITH_AS((void)m::roc_auc_score<T>(rt, nan),
                       doctest::Contains("roc_auc_score: expected finite values in y_score"),
                       onelearn::invalid_argument);
  Vector<T> no_positive = rw;
  for (index_t i = 0; i < rt.size(); ++i) {
    if (rt(i) == 1) no_positive(i) = 0;
  }
  CHECK_THROWS_WITH_AS((void)m::roc_auc_score<T>(rt, rs, no_positive),
                       doctest::Contains("found 0 for class 1"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)m::roc_auc_score<T>(Labels(0), Vector<T>(0)),
                       doctest::Contains("roc_auc_score: expected at least 1 sample, found 0"),
                       onelearn::invalid_argument);
}

TEST_CASE_TEMPLATE("mean_squared_error and mean_absolute_error", T, float, double) {
  namespace m = metrics;
  // at = np.array([3.0, -0.5, 2.0, 7.0, 4.25]); ap = np.array([2.5, 0.0, 2.0, 8.0, 3.0])
  // aw = np.array([1., 2., 0.5, 1., 3.])
  const Vector<T> at = vec<T>({3.0, -0.5, 2.0, 7.0, 4.25});
  const Vector<T> ap = vec<T>({2.5, 0.0, 2.0, 8.0, 3.0});
  const Vector<T> aw = vec<T>({1, 2, 0.5, 1, 3});
  const double tolerance = std::is_same_v<T, float> ? 1e-7 : 1e-15;
  // mean_squared_error(at, ap), squared=False, sample_weight=aw, both.
  CHECK(static_cast<double>(m::mean_squared_error<T>(at, ap)) ==
        doctest::Approx(0.6125).epsilon(tolerance));
  CHECK(static_cast<double>(m::mean_squared_error<T>(at, ap, {.squared = false})) ==
        doctest::Approx(0.7826237921249264).epsilon(tolerance));
  CHECK(static_cast<double>(m::mean_squared_error<T>(at, ap, aw)) ==
        doctest::Approx(0.8583333333333333).epsilon(tolerance));
  CHECK(static_cast<double>(m::mean_squared_error<T>(at, ap, aw, {.squared = false})) ==
        doctest::Approx(0.9264628073124864).epsilon(tolerance));
  // mean_absolute_error(at, ap), sample_weight=aw.
  CHECK(static_cast<double>(m::mean_absolute_error<T>(at, ap)) ==
        doctest::Approx(0.65).epsilon(tolerance));
  CHECK(static_cast<double>(m::mean_absolute_error<T>(at, ap, aw)) ==
        doctest::Approx(0.8333333333333334).epsilon(tolerance));

  CHECK_THROWS_WITH_AS((void)m::mean_squared_error<T>(at, ap.head(4)),
                       doctest::Contains("mean_squared_error: expected y_pred to have 5 entries"),
                       shape_error);
  CHECK_THROWS_WITH_AS((void)m::mean_absolute_error<T>(at, ap, aw.head(2)),
                       doctest::Contains("mean_absolute_error: expected sample_weight to have 5"),
                       shape_error);
  Vector<T> nan = at;
  nan(2) = std::numeric_limits<T>::infinity();
  CHECK_THROWS_WITH_AS((void)m::mean_absolute_error<T>(nan, ap),
                       doctest::Contains("mean_absolute_error: expected finite values in y_true"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)m::mean_squared_error<T>(Vector<T>(0), Vector<T>(0)),
                       doctest::Contains("mean_squared_error: expected at least 1 sample, found 0"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)m::mean_squared_error<T>(at, ap, Vector<T>::Zero(5)),
                       doctest::Contains("expected a positive total sample_weight, found 0"),
                       onelearn::invalid_argument);
}

TEST_CASE_TEMPLATE("silhouette_score, blockwise, matches scikit-learn", T, float, double) {
  // sX = np.array([[0., 0.], [1., 0.], [0., 1.5], [5., 5.], [6., 5.], [5., 7.], [10., 0.]])
  // sl = np.array([4, 4, 4, 9, 9, 9, 2]); silhouette_score(sX, sl)  (label 2 is a singleton)
  const Matrix<T> sX = mat<T>(7, 2, {0, 0, 1, 0, 0, 1.5, 5, 5, 6, 5, 5, 7, 10, 0});
  const Labels sl = labels({4, 4, 4, 9, 9, 9, 2});
  const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-13;
  CHECK(static_cast<double>(metrics::silhouette_score<T>(sX, sl)) ==
        doctest::Approx(0.6652854285775467).epsilon(tolerance));
  // digits X_train (1347 rows: three blocks of 512) with its labels:
  // silhouette_score(X_train, y_train) and with X_train.astype(np.float32) (0.16347146).
  const auto digits = test::load_split<T, std::int64_t>("digits");
  CHECK(static_cast<double>(metrics::silhouette_score<T>(digits.X_train, digits.y_train)) ==
        doctest::Approx(0.1634714646120735).epsilon(std::is_same_v<T, float> ? 1e-6 : 1e-12));
  // By hand: two tight, far-apart pairs: a = 1, b ≈ 100, s = 1 - 1/b on average.
  Matrix<T> pairs(4, 1);
  pairs << 0, 1, 100, 101;
  const double b0 = (100 + 101) / 2.0, b1 = (99 + 100) / 2.0;
  const double by_hand = ((1 - 1 / b0) + (1 - 1 / b1)) / 2;
  CHECK(static_cast<double>(metrics::silhouette_score<T>(pairs, labels({0, 0, 1, 1}))) ==
        doctest::Approx(by_hand).epsilon(tolerance));

  CHECK_THROWS_WITH_AS((void)metrics::silhouette_score<T>(sX, Labels::Zero(7)),
                       doctest::Contains("silhouette_score: expected between 2 and n_samples - 1 "
                                         "= 6 distinct labels, found 1"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)metrics::silhouette_score<T>(sX, labels({0, 1, 2, 3, 4, 5, 6})),
                       doctest::Contains("found 7"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)metrics::silhouette_score<T>(sX, sl.head(6)),
                       doctest::Contains("silhouette_score: expected labels to have 7 entries"),
                       shape_error);
  Matrix<T> nan = sX;
  nan(3, 0) = std::numeric_limits<T>::quiet_NaN();
  CHECK_THROWS_WITH_AS((void)metrics::silhouette_score<T>(nan, sl),
                       doctest::Contains("silhouette_score: expected finite values in X"),
                       onelearn::invalid_argument);
  CHECK_THROWS_AS((void)metrics::silhouette_score<T>(Matrix<T>(0, 2), Labels(0)),
                  onelearn::invalid_argument);
}

TEST_CASE("adjusted_rand_score matches scikit-learn, exactly for large n") {
  namespace m = metrics;
  // adjusted_rand_score([0,0,1,1,2,2], [1,1,0,0,3,3]), ([0,0,1,2,2,2,5], [0,1,1,3,3,4,4]),
  // ([1,1,1], [2,2,2]), ([0,1,2,3], [0,0,0,0])
  CHECK(m::adjusted_rand_score(labels({0, 0, 1, 1, 2, 2}), labels({1, 1, 0, 0, 3, 3})) == 1.0);
  CHECK(m::adjusted_rand_score(labels({0, 0, 1, 2, 2, 2, 5}), labels({0, 1, 1, 3, 3, 4, 4})) ==
        doctest::Approx(0.14634146341463414).epsilon(exact));
  CHECK(m::adjusted_rand_score(labels({0, 0, 1, 2, 2, 2, 5}), labels({0, 1, 1, 3, 3, 4, 4})) ==
        m::adjusted_rand_score(labels({0, 1, 1, 3, 3, 4, 4}), labels({0, 0, 1, 2, 2, 2, 5})));
  CHECK(m::adjusted_rand_score(labels({1, 1, 1}), labels({2, 2, 2})) == 1.0);
  CHECK(m::adjusted_rand_score(labels({0, 1, 2, 3}), labels({0, 0, 0, 0})) == 0.0);
  // i = np.arange(1000): adjusted_rand_score(i % 7, (i*i) % 5 + (i % 3)*10),
  //                      adjusted_rand_score(i % 7, (i % 7 + (i % 50 == 0)) % 7)
  Labels a(1000), b(1000), c(1000);
  for (index_t i = 0; i < 1000; ++i) {
    a(i) = i % 7;
    b(i) = (i * i) % 5 + (i % 3) * 10;
    c(i) = (i % 7 + (i % 50 == 0 ? 1 : 0)) % 7;
  }
  CHECK(m::adjusted_rand_score(a, b) == doctest::Approx(-0.006470115957702729).epsilon(1e-14));
  CHECK(m::adjusted_rand_score(a, c) == doctest::Approx(0.9539905643192028).epsilon(1e-14));
  // i = np.arange(100000): adjusted_rand_score(i % 2, i % 3) (products of pair counts pass
  // 2^63 here: scikit-learn uses Python integers, onelearn 128-bit ones).
  Labels big_a(100000), big_b(100000);
  for (index_t i = 0; i < 100000; ++i) {
    big_a(i) = i % 2;
    big_b(i) = i % 3;
  }
  CHECK(m::adjusted_rand_score(big_a, big_b) ==
        doctest::Approx(-1.3333244445037033e-05).epsilon(1e-13));

  CHECK_THROWS_WITH_AS((void)m::adjusted_rand_score(a, b.head(10)),
                       doctest::Contains("adjusted_rand_score: expected labels_pred to have 1000"),
                       shape_error);
  CHECK_THROWS_WITH_AS(
      (void)m::adjusted_rand_score(Labels(0), Labels(0)),
      doctest::Contains("adjusted_rand_score: expected at least 1 sample, found 0"),
      onelearn::invalid_argument);
}

// ----------------------------------------------------------------------------------------------
// MultinomialNB

TEST_CASE_TEMPLATE("MultinomialNB matches scikit-learn on digits' pixel counts", T, float, double) {
  // d = 'tests/data/digits/'; X, y, Xt, yt = the split's X_train, y_train, X_test, y_test
  // m = MultinomialNB().fit(X, y)
  const auto data = test::load_split<T, std::int64_t>("digits");
  MultinomialNB<T> model;
  CHECK(&model.fit(data.X_train, data.y_train) == &model);
  const bool is_float = std::is_same_v<T, float>;
  // The pixels are integers 0..16, exact in float, and the counts and logs are in double: the
  // float model differs only by the final rounding of its attributes to float.
  const double tolerance = is_float ? 1e-7 : 1e-10;
  // m.score(Xt, yt)
  CHECK(static_cast<double>(model.score(data.X_test, data.y_test)) ==
        doctest::Approx(0.9044444444444445).epsilon(is_float ? 1e-7 : 1e-15));
  CHECK(model.classes() == labels({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  CHECK(model.n_features_in() == 64);
  // m.class_count_, m.feature_count_[3, :8]
  CHECK(model.class_count() == vec<T>({133, 136, 133, 137, 136, 136, 136, 134, 131, 135}));
  CHECK(Vector<T>(model.feature_count().row(3).head(8).transpose()) ==
        vec<T>({0, 95, 1162, 1936, 1925, 961, 108, 1}));
  // m.feature_log_prob_.sum(axis=1), m.feature_log_prob_[:, 0], [:, 20], [3, :8]
  const Matrix<T>& flp = model.feature_log_prob();
  CHECK(flp.rows() == 10);
  CHECK(flp.cols() == 64);
  const Vector<double> row_sums =
      vec<double>({-390.9393220694144, -381.3769327679688, -372.89874282286814, -376.9188417627474,
                   -381.8092149458565, -376.0076755103358, -397.9016270849403, -383.3827588887002,
                   -378.7738543298526, -368.1171325994714});
  CHECK(test::max_relative_error(flp.template cast<double>().rowwise().sum(), row_sums) <
        tolerance);
  const Vector<double> column0 = vec<double>(
      {-10.650791424048029, -10.663849357772266, -10.641799285050446, -10.645662964163428,
       -10.654997976392988, -10.641369064436244, -10.653440306917526, -10.619007583947798,
       -10.674012354117417, -10.647446661645676});
  CHECK(test::max_relative_error(flp.col(0), column0) < tolerance);
  const Vector<double> column20 =
      vec<double>({-4.967211656709347, -3.1105627521718473, -3.2957890751371544, -3.243821385419599,
                   -4.156715826916554, -5.065419961289928, -5.833158741312489, -3.730435124382436,
                   -3.674589886609457, -3.6664409209239457});
  CHECK(test::max_relative_error(flp.col(20), column20) < tolerance);
  const Vector<double> row3 = vec<double>(
      {-10.645662964163428, -6.081314772695592, -3.5869048116447635, -3.0767673007564325,
       -3.0824623718053576, -3.7766485134977215, -5.9543150819342845, -9.952515783603483});
  CHECK(test::max_relative_error(flp.row(3).head(8).transpose(), row3) < tolerance);
  // m.class_log_prior_
  const Vector<double> prior =
      vec<double>({-2.31528604818861, -2.292980290674312, -2.31528604818861, -2.2856542505822386,
                   -2.292980290674312, -2.292980290674312, -2.292980290674312, -2.3077953764594525,
                   -2.3304378532092125, -2.300360397971934});
  CHECK(test::max_relative_error(model.class_log_prior(), prior) < tolerance);
  // m.predict_log_proba(Xt[:1])[0]
  const Vector<double> log_proba0 =
      vec<double>({-49.5346816743579, -42.83583304978333, -38.07141191920141, -4.117135814332414,
                   -234.92338822051488, -145.75387067826978, -157.12582649775982,
                   -290.6106349805823, -70.86294367621417, -0.016425267612703465});
  CHECK(test::max_relative_error(model.predict_log_proba(data.X_test.topRows(1)).transpose(),
                                 log_proba0) < (is_float ? 1e-6 : 1e-10));

  // MultinomialNB(alpha=0.0): raised to 1e-10 (1.2.1's force_alpha="warn"): same accuracy,
  // feature_log_prob_[0, 0] (pixel 0 is never set) = -33.67512555036086.
  MultinomialNB<T> tiny({.alpha = 0.0});
  tiny.fit(data.X_train, data.y_train);
  CHECK(static_cast<double>(tiny.feature_log_prob()(0, 0)) ==
        doctest::Approx(-33.67512555036086).epsilon(is_float ? 1e-7 : 1e-12));
  CHECK(static_cast<double>(tiny.score(data.X_test, data.y_test)) ==
        doctest::Approx(0.9044444444444445).epsilon(1e-7));
  // force_alpha keeps alpha = 0: log(0 / N_c) = -inf (hand).
  MultinomialNB<T> forced({.alpha = 0.0, .force_alpha = true});
  forced.fit(data.X_train, data.y_train);
  CHECK(forced.feature_log_prob()(0, 0) == -std::numeric_limits<T>::infinity());
  // MultinomialNB(alpha=0.5, fit_prior=False): feature_log_prob_[0, 0] = -11.343180490380714,
  // class_log_prior_ = -log(10) = -2.3025850929940455, score 0.9044444444444445.
  MultinomialNB<T> half({.alpha = 0.5, .fit_prior = false});
  half.fit(data.X_train, data.y_train);
  CHECK(static_cast<double>(half.feature_log_prob()(0, 0)) ==
        doctest::Approx(-11.343180490380714).epsilon(is_float ? 1e-7 : 1e-12));
  CHECK(test::max_relative_error(half.class_log_prior(),
                                 Vector<double>::Constant(10, -2.3025850929940455)) < tolerance);
  CHECK(static_cast<double>(half.score(data.X_test, data.y_test)) ==
        doctest::Approx(0.9044444444444445).epsilon(1e-7));
}

TEST_CASE_TEMPLATE("MultinomialNB on a tiny data set, by hand", T, float, double) {
  // Label 5: rows (2, 1, 0), (3, 0, 0): counts (5, 1, 0), smoothed (6, 2, 1) / 9.
  // Label 7: rows (1, 0, 3), (0, 4, 1): counts (1, 4, 4), smoothed (2, 5, 5) / 12.
  Matrix<T> X(4, 3);
  X << 2, 1, 0, 1, 0, 3, 0, 4, 1, 3, 0, 0;
  const Labels y = labels({5, 7, 7, 5});
  MultinomialNB<T> model;
  model.fit(X, y);
  const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  CHECK(model.classes() == labels({5, 7}));
  Matrix<double> counts(2, 3);
  counts << 5, 1, 0, 1, 4, 4;
  CHECK(model.feature_count().template cast<double>() == counts);
  Matrix<double> log_prob(2, 3);
  log_prob << std::log(6.0 / 9), std::log(2.0 / 9), std::log(1.0 / 9), std::log(2.0 / 12),
      std::log(5.0 / 12), std::log(5.0 / 12);
  CHECK(test::max_relative_error(model.feature_log_prob(), log_prob) < tolerance);
  CHECK(test::max_relative_error(model.class_log_prior(),
                                 Vector<double>::Constant(2, std::log(0.5))) < tolerance);
  // P(c | x) ∝ P(c) Π_j P(j | c)^x_j for x = (1, 2, 1).
  Matrix<T> query(1, 3);
  query << 1, 2, 1;
  const double joint5 = 0.5 * (6.0 / 9) * std::pow(2.0 / 9, 2) * (1.0 / 9);
  const double joint7 = 0.5 * (2.0 / 12) * std::pow(5.0 / 12, 2) * (5.0 / 12);
  const Matrix<T> proba = model.predict_proba(query);
  CHECK(static_cast<double>(proba(0, 0)) ==
        doctest::Approx(joint5 / (joint5 + joint7)).epsilon(tolerance));
  CHECK(static_cast<double>(proba(0, 1)) ==
        doctest::Approx(joint7 / (joint5 + joint7)).epsilon(tolerance));
  CHECK(static_cast<double>(model.predict_log_proba(query)(0, 1)) ==
        doctest::Approx(std::log(joint7 / (joint5 + joint7))).epsilon(tolerance));
  CHECK(model.predict(query)(0) == (joint5 > joint7 ? 5 : 7));
  // Predict accepts negative X (scikit-learn checks only in fit).
  Matrix<T> negative(1, 3);
  negative << -1, 0, 2;
  CHECK(model.predict(negative).size() == 1);

  // Sample weights act as repeated rows: weight 2 on row 1 = row 1 twice.
  Matrix<T> repeated(5, 3);
  repeated << X, X.row(1);
  MultinomialNB<T> weighted, reference;
  weighted.fit(X, y, vec<T>({1, 2, 1, 1}));
  reference.fit(repeated, labels({5, 7, 7, 5, 7}));
  CHECK(weighted.class_count() == reference.class_count());
  CHECK(weighted.feature_count() == reference.feature_count());
  CHECK(test::max_relative_error(weighted.feature_log_prob(), reference.feature_log_prob()) <
        tolerance);
  CHECK(test::max_relative_error(weighted.class_log_prior(), reference.class_log_prior()) <
        tolerance);
  // A Dataset fits the same; one class only predicts that class with probability 1.
  MultinomialNB<T> from_dataset;
  from_dataset.fit(ClassificationDataset<T>(X, y));
  CHECK(from_dataset.feature_log_prob() == model.feature_log_prob());
  MultinomialNB<T> single;
  single.fit(X, Labels::Constant(4, 3));
  CHECK(single.predict(query) == labels({3}));
  CHECK(single.predict_proba(query)(0, 0) == T(1));
  // Refitting forgets the old classes.
  model.fit(X, Labels(y.array() * 2));
  CHECK(model.classes() == labels({10, 14}));
}

TEST_CASE_TEMPLATE("MultinomialNB probabilities are normalised and agree with predict", T, float,
                   double) {
  const auto data = test::load_split<T, std::int64_t>("digits");
  MultinomialNB<T> model;
  model.fit(data.X_train, data.y_train);
  const Matrix<T> proba = model.predict_proba(data.X_test);
  const Matrix<T> log_proba = model.predict_log_proba(data.X_test);
  CHECK(proba.rows() == data.X_test.rows());
  CHECK(proba.cols() == 10);
  const Vector<double> row_sums = proba.template cast<double>().rowwise().sum();
  CHECK((row_sums.array() - 1).abs().maxCoeff() < (std::is_same_v<T, float> ? 1e-5 : 1e-12));
  CHECK(log_proba.maxCoeff() <= 0);
  const Labels predicted = model.predict(data.X_test);
  index_t agree = 0;
  for (index_t i = 0; i < proba.rows(); ++i) {
    index_t best = 0;
    log_proba.row(i).maxCoeff(&best);
    agree += predicted(i) == model.classes()(best) ? 1 : 0;
  }
  CHECK(agree == proba.rows());
}

TEST_CASE_TEMPLATE("MultinomialNB rejects bad input with typed errors", T, float, double) {
  Matrix<T> X(4, 3);
  X << 2, 1, 0, 1, 0, 3, 0, 4, 1, 3, 0, 0;
  const Labels y = labels({5, 7, 7, 5});
  MultinomialNB<T> model;
  CHECK_THROWS_WITH_AS((void)model.predict(X),
                       doctest::Contains("MultinomialNB.predict: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS(
      (void)model.predict_proba(X),
      doctest::Contains("MultinomialNB.predict_proba: expected a fitted estimator"),
      not_fitted_error);
  CHECK_THROWS_WITH_AS((void)model.feature_log_prob(),
                       doctest::Contains("MultinomialNB.feature_log_prob: expected a fitted"),
                       not_fitted_error);
  CHECK_THROWS_AS((void)model.classes(), not_fitted_error);

  Matrix<T> negative = X;
  negative(2, 1) = -3;
  CHECK_THROWS_WITH_AS(model.fit(negative, y),
                       doctest::Contains("MultinomialNB.fit: expected non-negative X (counts), "
                                         "found -3 at row 2, column 1"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      MultinomialNB<T>({.alpha = -0.5}).fit(X, y),
      doctest::Contains("MultinomialNB.fit: expected a finite alpha >= 0, found -0.5"),
      onelearn::invalid_argument);
  CHECK_THROWS_AS(MultinomialNB<T>({.alpha = std::numeric_limits<double>::quiet_NaN()}).fit(X, y),
                  onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      model.fit(X, y.head(3)),
      doctest::Contains("MultinomialNB.fit: expected y to have 4 entries (one per row of X)"),
      shape_error);
  CHECK_THROWS_WITH_AS(model.fit(X, y, Vector<T>::Ones(5)),
                       doctest::Contains("MultinomialNB.fit: expected sample_weight to have 4"),
                       shape_error);
  CHECK_THROWS_WITH_AS(model.fit(X, y, Vector<T>::Zero(4)),
                       doctest::Contains("MultinomialNB.fit: expected a positive total "
                                         "sample_weight, found 0"),
                       onelearn::invalid_argument);
  Matrix<T> nan = X;
  nan(0, 0) = std::numeric_limits<T>::quiet_NaN();
  CHECK_THROWS_WITH_AS(model.fit(nan, y),
                       doctest::Contains("MultinomialNB.fit: expected finite values in X"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(model.fit(Matrix<T>(0, 3), Labels(0)),
                       doctest::Contains("MultinomialNB.fit: expected at least one sample"),
                       onelearn::invalid_argument);
  CHECK_FALSE(model.is_fitted());

  model.fit(X, y);
  CHECK_THROWS_WITH_AS(
      (void)model.predict(Matrix<T>::Ones(2, 2)),
      doctest::Contains("MultinomialNB.predict: expected X with 3 features, as in fit, found 2"),
      shape_error);
  CHECK_THROWS_WITH_AS((void)model.score(X, y.head(2)),
                       doctest::Contains("MultinomialNB.score: expected y to have 4 entries"),
                       shape_error);
  // A failed refit leaves the estimator unfitted, not half-fitted.
  CHECK_THROWS_AS(model.fit(negative, y), onelearn::invalid_argument);
  CHECK_FALSE(model.is_fitted());
}

TEST_CASE("the classes of labels are their sorted distinct values, with few classes or many") {
  // sort_unique collects up to 64 distinct values before sorting them, and sorts everything
  // past that: both paths against std::set.
  std::mt19937_64 rng(3);
  for (const std::int64_t classes : {1, 2, 3, 64, 65, 1000}) {
    CAPTURE(classes);
    std::vector<std::int64_t> labels(5000);
    std::set<std::int64_t> want;
    for (auto& label : labels) {
      label = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(classes)) * 7 - 20;
      want.insert(label);
    }
    std::vector<std::int64_t> found = labels;
    onelearn::detail::sort_unique(found);
    CHECK(found == std::vector<std::int64_t>(want.begin(), want.end()));
  }
  std::vector<std::int64_t> none;
  onelearn::detail::sort_unique(none);
  CHECK(none.empty());
}
