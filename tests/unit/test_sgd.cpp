// SGDClassifier and SGDRegressor against scikit-learn 1.2.1.
//
// With shuffle=false the sample order is scikit-learn's, so the coefficients must agree to
// rounding; that is the strongest check and it covers every loss, penalty and learning rate.
// Shuffled fits use another random order than scikit-learn's, so they are compared on what
// does not depend on it: test accuracy / R² averaged over ten seeds of each.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "onelearn/core/concepts.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/linear_model/sgd_classifier.hpp"
#include "onelearn/linear_model/sgd_regressor.hpp"
#include "onelearn/metrics/accuracy_score.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "support.hpp"

using namespace onelearn;
using linear_model::SGDClassifier;
using linear_model::SGDClassifierParams;
using linear_model::SGDRegressor;
using linear_model::SGDRegressorParams;

static_assert(check_classifier<SGDClassifier<float>>());
static_assert(check_classifier<SGDClassifier<double>>());
static_assert(check_regressor<SGDRegressor<float>>());
static_assert(check_regressor<SGDRegressor<double>>());

namespace {

constexpr double none = -std::numeric_limits<double>::infinity();  // scikit-learn's tol=None

/// tests/data/<name> with X standardised by a scaler fitted (in double) on the training rows,
/// as sklearn.preprocessing.StandardScaler in the Python that produced the references.
template <class T, class Y>
test::Split<T, Y> scaled(const char* name) {
  const auto data = test::load_split<double, Y>(name);
  preprocessing::StandardScaler<double> scaler;
  scaler.fit(data.X_train);
  return {scaler.transform(data.X_train).template cast<T>(),
          scaler.transform(data.X_test).template cast<T>(), data.y_train, data.y_test};
}

Vector<double> vec(const std::vector<double>& v) {
  return Eigen::Map<const Vector<double>>(v.data(), static_cast<index_t>(v.size()));
}

/// Relative agreement with scikit-learn's float64 numbers (rounding only).
constexpr double parity_tolerance = 1e-10;

}  // namespace

// Produced by (scaled iris as above; shuffle=False so the order is the same as ours):
//   for c in cases: m = SGDClassifier(shuffle=False, **c).fit(X, y)
//   print(m.n_iter_, m.t_, m.coef_.ravel(), m.intercept_)
// with cases
//   dict(loss="hinge", penalty="l2", learning_rate="constant", eta0=0.01, max_iter=5, tol=None)
//   dict(loss="log_loss", penalty="l2", learning_rate="constant", eta0=0.01, max_iter=5, tol=None)
//   dict(loss="modified_huber", penalty="elasticnet", alpha=0.01, learning_rate="optimal",
//        max_iter=5, tol=None)
//   dict(loss="squared_hinge", penalty="l1", alpha=0.01, learning_rate="invscaling", eta0=0.05,
//        max_iter=5, tol=None)
//   dict(loss="perceptron", penalty=None, learning_rate="constant", eta0=1.0, max_iter=5,
//        tol=None)
//   dict(loss="hinge")                        # every default: optimal rate, tol stopping
TEST_CASE_TEMPLATE("SGDClassifier without shuffling matches scikit-learn's coefficients", T, float,
                   double) {
  struct Case {
    SGDClassifierParams params;
    std::int64_t n_iter;
    std::vector<double> coef, intercept;
  };
  const std::vector<Case> cases{
      {{.loss = "hinge",
        .max_iter = 5,
        .tol = none,
        .shuffle = false,
        .learning_rate = "constant",
        .eta0 = 0.01},
       5,
       {-0.25094830211464086, 0.6103074079162731, -0.6105949391077246, -0.5690403547513767,
        -0.1203391827247407, -0.9485081572327185, 0.17201890980915385, -0.12543775488079778,
        0.3782813667301082, 0.3049981400882066, 0.487843032017573, 0.7733343144286562},
       {-0.7100000000000004, -0.7700000000000005, -0.7600000000000005}},
      {{.loss = "log_loss",
        .max_iter = 5,
        .tol = none,
        .shuffle = false,
        .learning_rate = "constant",
        .eta0 = 0.01},
       5,
       {-0.5342134404837101, 0.6799319624483771, -0.8298912674752226, -0.7932309467228698,
        -0.0784406629663947, -0.7148791279445126, 0.16257419223373445, -0.011026157308468308,
        0.5598738720225952, 0.08846869498106144, 0.625698882734251, 0.7650305167374606},
       {-0.5754023870228807, -0.5498749604607907, -0.6054649650278303}},
      {{.loss = "modified_huber",
        .penalty = "elasticnet",
        .alpha = 0.01,
        .max_iter = 5,
        .tol = none,
        .shuffle = false},
       5,
       {-2.91244378664179, 1.4883513270338777, -4.588368911687016, -3.68188780700697,
        -1.768166766192345, -1.200132404136309, 1.5544349041938696, -1.819462122581882,
        -1.0668026686048375, -0.683481780230001, 5.23640604831572, 6.014360104775053},
       {-12.448467969218072, -1.166230886365114, -7.5684677701341725}},
      {{.loss = "squared_hinge",
        .penalty = "l1",
        .alpha = 0.01,
        .max_iter = 5,
        .tol = none,
        .shuffle = false,
        .learning_rate = "invscaling",
        .eta0 = 0.05},
       5,
       {-0.18555984766719597, 0.4653066700153158, -0.4490414071653151, -0.3989000096485268,
        -0.007696282372598168, -0.5231779653162857, 0.10286607738131398, -0.1178448019904331,
        0.18783041761849714, 0.14160356920677736, 0.36832971683771354, 0.5871385270107997},
       {-0.4329764188969363, -0.36927205817594405, -0.5283600916093599}},
      {{.loss = "perceptron",
        .penalty = "none",
        .max_iter = 5,
        .tol = none,
        .shuffle = false,
        .learning_rate = "constant",
        .eta0 = 1.0},
       5,
       {-1.1298165962205726, 1.9443754753788398, -2.552821627820417, -2.077683758711324,
        -2.647356230996561, -2.26053408926159, 2.5428223264971823, -3.918253325750508,
        -0.1209028829903892, 0.07903965347067365, 3.596748685965542, 5.336243145255186},
       {-2.0, -2.0, -6.0}},
      {{.shuffle = false},
       64,
       {-11.57424083397692, 8.42262151398204, -14.945674720362147, -11.65274121543081,
        -4.954178419551526, -3.900205748584209, 7.973607183485812, -4.362167305304599,
        -4.813924927703025, -0.29282983687819253, 28.8402201178163, 31.819235904025167},
       {-19.60823087342647, -4.182451101976705, -37.88406699350009}},
  };
  const auto data = scaled<T, std::int64_t>("iris");
  for (const auto& c : cases) {
    CAPTURE(c.params.loss);
    CAPTURE(c.params.penalty);
    SGDClassifier<T> model(c.params);
    CHECK(&model.fit(data.X_train, data.y_train) == &model);
    CHECK(model.classes() == (Labels(3) << 0, 1, 2).finished());
    CHECK(model.coef().rows() == 3);
    CHECK(model.coef().cols() == 4);
    if constexpr (std::is_same_v<T, double>) {
      const Vector<T> coef =
          Eigen::Map<const Vector<T>>(model.coef().data(), model.coef().size());  // row by row
      CHECK(test::max_relative_error(coef, vec(c.coef), 1e-2) < parity_tolerance);
      CHECK(test::max_relative_error(model.intercept(), vec(c.intercept), 1e-2) < parity_tolerance);
      CHECK(model.n_iter() == c.n_iter);
      CHECK(model.t() == static_cast<double>(c.n_iter * 112 + 1));
    } else {
      // float data is fitted in double: exactly the double fit of the float-rounded data.
      // (Not scikit-learn's numbers: the optimal rate's first steps are large enough that the
      // rounding of the inputs alone moves the modified_huber coefficients by 5%.)
      SGDClassifier<double> reference(c.params);
      reference.fit(data.X_train.template cast<double>(), data.y_train);
      CHECK(model.coef() == reference.coef().template cast<float>());
      CHECK(model.intercept() == reference.intercept().template cast<float>());
      CHECK(model.n_iter() == reference.n_iter());
    }
  }
}

// Produced by: yb = np.where(y == 2, 4, -3); w = 1.0 + np.arange(len(y)) % 3
//   m = SGDClassifier(shuffle=False, loss="log_loss", alpha=0.001, max_iter=5, tol=None)
//   m.fit(X, yb, sample_weight=w); print(m.classes_, m.coef_, m.intercept_)
TEST_CASE_TEMPLATE("SGDClassifier binary, weighted, with arbitrary labels matches scikit-learn", T,
                   float, double) {
  const auto data = scaled<T, std::int64_t>("iris");
  const Labels y = (data.y_train.array() == 2)
                       .select(Labels::Constant(data.y_train.size(), 4),
                               Labels::Constant(data.y_train.size(), -3));
  Vector<T> weights(y.size());
  for (index_t i = 0; i < y.size(); ++i) weights(i) = static_cast<T>(1 + i % 3);
  SGDClassifier<T> model(
      {.loss = "log_loss", .alpha = 0.001, .max_iter = 5, .tol = none, .shuffle = false});
  model.fit(data.X_train, y, weights);
  CHECK(model.classes() == (Labels(2) << -3, 4).finished());
  CHECK(model.coef().rows() == 1);
  const Vector<double> expected =
      vec({-2.951724420847297, -0.8488615951833145, 15.602088480364909, 19.341530327414297});
  // float: the inputs are rounded to 6e-8, which the steps carry along.
  const double tolerance = std::is_same_v<T, float> ? 1e-3 : parity_tolerance;
  CHECK(test::max_relative_error(model.coef().row(0).transpose(), expected, 1e-2) < tolerance);
  CHECK(static_cast<double>(model.intercept()(0)) ==
        doctest::Approx(-22.8193563421734).epsilon(tolerance));

  // Binary predictions and probabilities from the one score column, by definition.
  const Matrix<T> scores = model.decision_function(data.X_test);
  REQUIRE(scores.cols() == 1);
  const Vector<double> by_hand = (data.X_test.template cast<double>() *
                                  model.coef().row(0).transpose().template cast<double>())
                                     .array() +
                                 static_cast<double>(model.intercept()(0));
  CHECK(test::max_relative_error(scores.col(0), by_hand, 1.0) <
        (std::is_same_v<T, float> ? 1e-5 : 1e-12));
  const Labels predicted = model.predict(data.X_test);
  const Matrix<T> proba = model.predict_proba(data.X_test);
  REQUIRE(proba.cols() == 2);
  for (index_t i = 0; i < scores.rows(); ++i) {
    CHECK(predicted(i) == (scores(i, 0) > 0 ? 4 : -3));
    const double p = 1.0 / (1.0 + std::exp(-static_cast<double>(scores(i, 0))));
    CHECK(static_cast<double>(proba(i, 1)) == doctest::Approx(p).epsilon(1e-6));
    CHECK(static_cast<double>(proba(i, 0)) == doctest::Approx(1 - p).epsilon(1e-6));
  }
  // Iris' third class is almost separable: the model separates it on the test rows.
  CHECK(model.score(data.X_test, (data.y_test.array() == 2)
                                     .select(Labels::Constant(data.y_test.size(), 4),
                                             Labels::Constant(data.y_test.size(), -3))) >= 0.9);
}

// Produced by (diabetes, X scaled as above, y raw):
//   for c in cases: m = SGDRegressor(shuffle=False, **c).fit(X, y)
//   print(m.n_iter_, m.t_, m.coef_, m.intercept_)
// with cases
//   dict(loss="squared_error", penalty="l2", learning_rate="constant", eta0=0.01, max_iter=5,
//        tol=None)
//   dict(loss="huber", penalty="elasticnet", epsilon=20.0, max_iter=5, tol=None)
//   dict(loss="epsilon_insensitive", penalty="l1", alpha=0.1, epsilon=5.0,
//        learning_rate="adaptive", eta0=0.02)   # stops after 331 epochs, eta divided by 5
//   dict()                                    # every default: invscaling, 1000 epochs
TEST_CASE_TEMPLATE("SGDRegressor without shuffling matches scikit-learn's coefficients", T, float,
                   double) {
  struct Case {
    SGDRegressorParams params;
    std::int64_t n_iter;
    std::vector<double> coef;
    double intercept;
  };
  const std::vector<Case> cases{
      {{.max_iter = 5, .tol = none, .shuffle = false, .learning_rate = "constant"},
       5,
       {-0.19169383374988527, -12.229777282071582, 32.26838199285688, 15.247207967852592,
        -3.192615873544598, -2.2671222717614214, -12.558195011932304, 4.589210361720441,
        30.15836301250853, 1.09786633031368},
       152.733976120525},
      {{.loss = "huber",
        .penalty = "elasticnet",
        .max_iter = 5,
        .tol = none,
        .shuffle = false,
        .epsilon = 20.0},
       5,
       {1.0978573575805772, -0.4264340536491953, 2.3151436879205964, 0.6659766008915065,
        1.602504181297326, 1.4812757876363563, -2.445845888726941, 2.4805136077735894,
        3.4826260252131553, 1.331032325291482},
       65.15169650303102},
      {{.loss = "epsilon_insensitive",
        .penalty = "l1",
        .alpha = 0.1,
        .shuffle = false,
        .epsilon = 5.0,
        .learning_rate = "adaptive",
        .eta0 = 0.02},
       331,
       {0.0, -1.7937971473181966, 28.055986564394225, 9.230874369411508, 0.0, 0.0,
        -9.102883447632365, 0.0, 23.734555044433144, 0.0},
       150.29404032000323},
      {{.shuffle = false},
       1000,
       {-1.9558210170519157, -10.021286429936474, 29.009888233818725, 14.37310243376073,
        -21.939276061528403, 8.967434264150837, -2.5750856101659454, 5.9028001951756135,
        32.969773017615545, 1.429088185930223},
       152.01033124976382},
  };
  const auto data = scaled<T, T>("diabetes");
  for (const auto& c : cases) {
    CAPTURE(c.params.loss);
    SGDRegressor<T> model(c.params);
    CHECK(&model.fit(data.X_train, data.y_train) == &model);
    if constexpr (std::is_same_v<T, double>) {
      CHECK(test::max_relative_error(model.coef(), vec(c.coef), 1e-2) < parity_tolerance);
      CHECK(model.intercept() == doctest::Approx(c.intercept).epsilon(parity_tolerance));
      CHECK(model.n_iter() == c.n_iter);
      CHECK(model.t() == static_cast<double>(c.n_iter * 331 + 1));
    } else {
      // float data is fitted in double: exactly the double fit of the float-rounded data...
      SGDRegressor<double> reference(c.params);
      reference.fit(data.X_train.template cast<double>(), data.y_train.template cast<double>());
      CHECK(model.coef() == reference.coef().template cast<float>());
      CHECK(model.intercept() == static_cast<float>(reference.intercept()));
      CHECK(model.n_iter() == reference.n_iter());
      // ...which is close to scikit-learn's on these well-conditioned runs.
      CHECK(test::max_relative_error(model.coef(), vec(c.coef), 1.0) < 1e-3);
    }
  }
}

// Produced by (scaled as above; ten seeds of scikit-learn's own shuffling):
//   for loss in ["hinge", "log_loss"]:
//     a = [SGDClassifier(loss=loss, random_state=s).fit(X, y).score(Xt, yt) for s in range(n)]
//     print(np.mean(a), np.std(a), np.min(a), np.max(a))
// iris, n = 50: hinge 0.919474 (std 0.050, 0.816 .. 1.0), log_loss 0.929474 (std 0.061,
// 0.763 .. 1.0): the mean of 50 has a standard error of 0.008, hence the margin 0.04.
// digits hinge 0.95089 (0.947 .. 0.956), digits log_loss 0.95133 (0.947 .. 0.958).
TEST_CASE_TEMPLATE("SGDClassifier shuffled test accuracy matches scikit-learn's over many seeds", T,
                   float, double) {
  struct Case {
    std::string dataset;
    std::string loss;
    std::uint64_t seeds;
    double sklearn_mean;
    double margin;  // iris scatters by 0.2 between seeds; digits by 0.01
  };
  for (const Case& c : {Case{"iris", "hinge", 50, 0.9194736842105263, 0.04},
                        Case{"iris", "log_loss", 50, 0.9294736842105265, 0.04},
                        Case{"digits", "hinge", 10, 0.9508888888888887, 0.015},
                        Case{"digits", "log_loss", 10, 0.9513333333333331, 0.015}}) {
    CAPTURE(c.dataset);
    CAPTURE(c.loss);
    const auto data = scaled<T, std::int64_t>(c.dataset.c_str());
    double sum = 0;
    for (std::uint64_t seed = 0; seed < c.seeds; ++seed) {
      SGDClassifier<T> model({.loss = c.loss, .random_state = seed});
      model.fit(data.X_train, data.y_train);
      sum += static_cast<double>(model.score(data.X_test, data.y_test));
      CHECK(model.n_iter() < 1000);  // stopped on the training loss
    }
    const double mean = sum / static_cast<double>(c.seeds);
    MESSAGE(c.dataset, " ", c.loss, ": mean test accuracy ", mean, " (scikit-learn ",
            c.sklearn_mean, ")");
    CHECK(std::abs(mean - c.sklearn_mean) < c.margin);
  }
}

// Produced by: a = [SGDRegressor(random_state=s).fit(X, y).score(Xt, yt) for s in range(10)]
// squared_error 0.350608 (0.34945 .. 0.35150); huber with epsilon=10: 0.338196 (0.33804 ..
// 0.33843).
TEST_CASE_TEMPLATE("SGDRegressor shuffled test R2 matches scikit-learn's over ten seeds", T, float,
                   double) {
  const auto data = scaled<T, T>("diabetes");
  for (const auto& [loss, expected] :
       {std::pair<std::string, double>{"squared_error", 0.35060801066048675},
        std::pair<std::string, double>{"huber", 0.3381964460521865}}) {
    CAPTURE(loss);
    double sum = 0;
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      SGDRegressor<T> model({.loss = loss, .epsilon = 10.0, .random_state = seed});
      model.fit(data.X_train, data.y_train);
      sum += static_cast<double>(model.score(data.X_test, data.y_test));
    }
    MESSAGE(loss, ": mean test R2 ", sum / 10, " (scikit-learn ", expected, ")");
    CHECK(std::abs(sum / 10 - expected) < 0.01);
  }
}

TEST_CASE_TEMPLATE("partial_fit n times equals fit with max_iter=n and tol=None", T, float,
                   double) {
  const auto iris = scaled<T, std::int64_t>("iris");
  for (const std::string rate : {"optimal", "invscaling", "adaptive"}) {
    CAPTURE(rate);
    const SGDClassifierParams params{.loss = "log_loss",
                                     .max_iter = 4,
                                     .tol = none,
                                     .random_state = 11,
                                     .learning_rate = rate,
                                     .eta0 = 0.1};
    SGDClassifier<T> full(params);
    full.fit(iris.X_train, iris.y_train);
    SGDClassifier<T> online(params);
    online.partial_fit(iris.X_train, iris.y_train, Labels((Labels(3) << 2, 0, 1).finished()));
    CHECK(online.n_iter() == 1);
    CHECK(online.t() == 113);
    online.partial_fit(iris.X_train, iris.y_train, Labels((Labels(3) << 0, 1, 2).finished()));
    online.partial_fit(iris.X_train, iris.y_train);
    online.partial_fit(iris.X_train, iris.y_train);
    // Bit for bit: the same updates in the same order from the same shuffling stream.
    CHECK(online.coef() == full.coef());
    CHECK(online.intercept() == full.intercept());
    CHECK(online.t() == full.t());
    CHECK(full.t() == 4 * 112 + 1);
    // and not what fewer epochs give.
    SGDClassifierParams three = params;
    three.max_iter = 3;
    SGDClassifier<T> shorter(three);
    shorter.fit(iris.X_train, iris.y_train);
    CHECK(shorter.coef() != full.coef());
  }

  const auto diabetes = scaled<T, T>("diabetes");
  const SGDRegressorParams params{.max_iter = 3, .tol = none, .random_state = 5};
  SGDRegressor<T> full(params);
  full.fit(diabetes.X_train, diabetes.y_train);
  SGDRegressor<T> online(params);
  for (int i = 0; i < 3; ++i) online.partial_fit(diabetes.X_train, diabetes.y_train);
  CHECK(online.coef() == full.coef());
  CHECK(online.intercept() == full.intercept());
  CHECK(online.t() == full.t());
  CHECK(online.n_iter() == 1);
  CHECK(full.n_iter() == 3);
  SGDRegressor<T> two(params);
  two.partial_fit(diabetes.X_train, diabetes.y_train);
  two.partial_fit(diabetes.X_train, diabetes.y_train);
  CHECK(two.coef() != full.coef());
  // fit starts again from zeros.
  online.fit(diabetes.X_train, diabetes.y_train);
  CHECK(online.coef() == full.coef());
  CHECK(online.t() == full.t());
}

TEST_CASE_TEMPLATE("SGDClassifier probabilities", T, float, double) {
  const auto data = scaled<T, std::int64_t>("iris");
  for (const std::string loss : {"log_loss", "modified_huber"}) {
    CAPTURE(loss);
    SGDClassifier<T> model({.loss = loss, .random_state = 2});
    model.fit(data.X_train, data.y_train);
    const Matrix<T> proba = model.predict_proba(data.X_test);
    const Matrix<T> log_proba = model.predict_log_proba(data.X_test);
    const Matrix<T> scores = model.decision_function(data.X_test);
    const Labels predicted = model.predict(data.X_test);
    REQUIRE(proba.cols() == 3);
    REQUIRE(scores.cols() == 3);
    for (index_t i = 0; i < proba.rows(); ++i) {
      // One-vs-rest probabilities normalised (Zadrozny and Elkan), by definition.
      Vector<double> expected(3);
      for (index_t c = 0; c < 3; ++c) {
        const double s = static_cast<double>(scores(i, c));
        expected(c) =
            loss == "log_loss" ? 1 / (1 + std::exp(-s)) : (std::clamp(s, -1.0, 1.0) + 1) / 2;
      }
      expected = expected.sum() == 0 ? Vector<double>::Constant(3, 1.0 / 3)
                                     : Vector<double>(expected / expected.sum());
      CHECK(test::max_relative_error(proba.row(i).transpose(), expected, 1e-3) < 1e-5);
      CHECK(static_cast<double>(proba.row(i).sum()) == doctest::Approx(1).epsilon(1e-6));
      index_t best = 0;
      scores.row(i).maxCoeff(&best);
      CHECK(predicted(i) == model.classes()(best));
      for (index_t c = 0; c < 3; ++c) {
        if (proba(i, c) > 0) {
          CHECK(static_cast<double>(log_proba(i, c)) ==
                doctest::Approx(std::log(static_cast<double>(proba(i, c)))).epsilon(1e-5));
        }
      }
    }
  }
  // Fitting again with other labels forgets the old ones; a Dataset fits the same.
  SGDClassifier<T> model({.random_state = 4});
  model.fit(data.X_train, Labels(data.y_train.array() * 10 - 7));
  CHECK(model.classes() == (Labels(3) << -7, 3, 13).finished());
  SGDClassifier<T> from_dataset({.random_state = 4});
  from_dataset.fit(ClassificationDataset<T>(data.X_train, Labels(data.y_train.array() * 10 - 7)));
  CHECK(from_dataset.coef() == model.coef());
  model.fit(data.X_train, data.y_train);
  CHECK(model.classes() == (Labels(3) << 0, 1, 2).finished());
}

TEST_CASE_TEMPLATE("SGDClassifier and SGDRegressor reject bad input with typed errors", T, float,
                   double) {
  const auto data = scaled<T, std::int64_t>("iris");
  const Matrix<T>& X = data.X_train;
  const Labels& y = data.y_train;
  const Vector<T> yr = y.template cast<T>();
  SGDClassifier<T> model;
  CHECK_THROWS_WITH_AS((void)model.predict(X),
                       doctest::Contains("SGDClassifier.predict: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)model.decision_function(X),
                       doctest::Contains("SGDClassifier.decision_function: expected a fitted"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)model.coef(),
                       doctest::Contains("SGDClassifier.coef: expected a fitted"),
                       not_fitted_error);
  CHECK_THROWS_AS((void)model.t(), not_fitted_error);
  SGDRegressor<T> regressor;
  CHECK_THROWS_WITH_AS((void)regressor.predict(X),
                       doctest::Contains("SGDRegressor.predict: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_AS((void)regressor.n_iter(), not_fitted_error);

  // Parameters.
  CHECK_THROWS_WITH_AS(
      SGDClassifier<T>({.loss = "squared_error"}).fit(X, y),
      doctest::Contains("SGDClassifier.fit: expected loss 'hinge', 'log_loss', 'modified_huber', "
                        "'squared_hinge' or 'perceptron', found 'squared_error'"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(SGDRegressor<T>({.loss = "hinge"}).fit(X, yr),
                       doctest::Contains("SGDRegressor.fit: expected loss 'squared_error', "
                                         "'huber' or 'epsilon_insensitive', found 'hinge'"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(SGDClassifier<T>({.alpha = -1e-4}).fit(X, y),
                       doctest::Contains("SGDClassifier.fit: expected alpha >= 0, found -0.0001"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(SGDRegressor<T>({.alpha = -1}).fit(X, yr),
                       doctest::Contains("SGDRegressor.fit: expected alpha >= 0, found -1"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(SGDClassifier<T>({.penalty = "l3"}).fit(X, y),
                       doctest::Contains("expected penalty 'l2', 'l1', 'elasticnet' or 'none', "
                                         "found 'l3'"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(SGDClassifier<T>({.learning_rate = "fast"}).fit(X, y),
                       doctest::Contains("expected learning_rate 'constant', 'optimal', "
                                         "'invscaling' or 'adaptive', found 'fast'"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      SGDClassifier<T>({.learning_rate = "constant"}).fit(X, y),
      doctest::Contains("expected eta0 > 0 with learning_rate 'constant', found 0"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(SGDClassifier<T>({.alpha = 0}).fit(X, y),
                       doctest::Contains("expected alpha > 0 with learning_rate 'optimal'"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(SGDClassifier<T>({.l1_ratio = 1.5}).fit(X, y),
                       doctest::Contains("expected l1_ratio in [0, 1], found 1.5"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(SGDClassifier<T>({.max_iter = 0}).fit(X, y),
                       doctest::Contains("expected max_iter >= 1, found 0"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(SGDClassifier<T>({.tol = -1}).fit(X, y),
                       doctest::Contains("expected tol >= 0, or -inf for no early stopping, "
                                         "found -1"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(SGDRegressor<T>({.epsilon = -0.5}).fit(X, yr),
                       doctest::Contains("expected epsilon >= 0, found -0.5"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(SGDRegressor<T>({.n_iter_no_change = 0}).fit(X, yr),
                       doctest::Contains("expected n_iter_no_change >= 1, found 0"),
                       onelearn::invalid_argument);

  // Data.
  Matrix<T> bad_X = X;
  bad_X(5, 2) = std::numeric_limits<T>::quiet_NaN();
  CHECK_THROWS_WITH_AS(
      model.fit(bad_X, y),
      doctest::Contains("SGDClassifier.fit: expected finite values in X, found nan at row 5, "
                        "column 2"),
      onelearn::invalid_argument);
  Vector<T> bad_y = yr;
  bad_y(7) = std::numeric_limits<T>::infinity();
  CHECK_THROWS_WITH_AS(regressor.fit(X, bad_y),
                       doctest::Contains("SGDRegressor.fit: expected finite values in y, found "
                                         "inf at row 7"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      model.fit(X, Labels(y.head(100))),
      doctest::Contains("SGDClassifier.fit: expected y to have 112 entries (one per row of X), "
                        "found 100"),
      shape_error);
  CHECK_THROWS_WITH_AS(regressor.fit(X, Vector<T>(yr.head(3))),
                       doctest::Contains("SGDRegressor.fit: expected y to have 112 entries"),
                       shape_error);
  CHECK_THROWS_WITH_AS(model.fit(X, y, Vector<T>::Ones(3)),
                       doctest::Contains("SGDClassifier.fit: expected sample_weight to have 112"),
                       shape_error);
  CHECK_THROWS_WITH_AS(model.fit(X, Labels::Constant(112, 3)),
                       doctest::Contains("SGDClassifier.fit: expected at least 2 classes, found 1"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(model.fit(Matrix<T>(0, 4), Labels(0)),
                       doctest::Contains("SGDClassifier.fit: expected at least one sample"),
                       onelearn::invalid_argument);
  // Weights that blow up are an error, as scikit-learn's ValueError.
  // (scikit-learn clips dloss at 1e12, so it takes a huge rate.)
  CHECK_THROWS_WITH_AS(
      SGDRegressor<T>({.learning_rate = "constant", .eta0 = 1e300}).fit(X, yr),
      doctest::Contains("SGDRegressor.fit: floating-point under-/overflow occurred at epoch #1"),
      onelearn::invalid_argument);
  CHECK_FALSE(model.is_fitted());
  CHECK_FALSE(regressor.is_fitted());

  // partial_fit.
  SGDClassifier<T> online;
  CHECK_THROWS_WITH_AS(online.partial_fit(X, y),
                       doctest::Contains("SGDClassifier.partial_fit: expected the list of all "
                                         "classes on the first call to partial_fit, found none"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(online.partial_fit(X, y, Labels((Labels(2) << 0, 1).finished())),
                       doctest::Contains("SGDClassifier.partial_fit: expected labels from classes "
                                         "([0, 1]), found 2 at row"),
                       onelearn::invalid_argument);
  CHECK_FALSE(online.is_fitted());
  online.partial_fit(X, y, Labels((Labels(4) << 0, 1, 2, 9).finished()));
  CHECK(online.classes() == (Labels(4) << 0, 1, 2, 9).finished());
  CHECK(online.coef().rows() == 4);
  CHECK_THROWS_WITH_AS(online.partial_fit(X, y, Labels((Labels(3) << 0, 1, 2).finished())),
                       doctest::Contains("expected the same classes as on the first call "
                                         "([0, 1, 2, 9]), found [0, 1, 2]"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(online.partial_fit(Matrix<T>(X.leftCols(3)), y),
                       doctest::Contains("SGDClassifier.partial_fit: expected X with 4 features, "
                                         "as in fit, found 3"),
                       shape_error);
  CHECK_THROWS_WITH_AS(online.partial_fit(X, Labels::Constant(112, 5)),
                       doctest::Contains("expected labels from classes ([0, 1, 2, 9]), found 5 "
                                         "at row 0"),
                       onelearn::invalid_argument);
  regressor.partial_fit(X, yr);
  CHECK_THROWS_WITH_AS(regressor.partial_fit(Matrix<T>(X.leftCols(2)), yr),
                       doctest::Contains("SGDRegressor.partial_fit: expected X with 4 features"),
                       shape_error);

  // Prediction-time checks.
  model.fit(X, y);
  CHECK_THROWS_WITH_AS(
      (void)model.predict_proba(X),
      doctest::Contains("SGDClassifier.predict_proba: expected loss 'log_loss' or "
                        "'modified_huber' (probability estimates need one of them), found 'hinge'"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)model.predict(Matrix<T>::Ones(2, 5)),
                       doctest::Contains("SGDClassifier.predict: expected X with 4 features, as "
                                         "in fit, found 5"),
                       shape_error);
  CHECK_THROWS_WITH_AS((void)model.predict(bad_X),
                       doctest::Contains("SGDClassifier.predict: expected finite values in X"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)model.score(X, Labels::Zero(4)),
                       doctest::Contains("SGDClassifier.score: expected y to have 112 entries"),
                       shape_error);
  CHECK_THROWS_WITH_AS((void)regressor.predict(Matrix<T>::Ones(2, 3)),
                       doctest::Contains("SGDRegressor.predict: expected X with 4 features"),
                       shape_error);
}
