// MinMaxScaler, MaxAbsScaler, Normalizer, OneHotEncoder, LabelEncoder, PolynomialFeatures and
// SimpleImputer against scikit-learn 1.2.1.
//
// Every expected number below was printed by this script (`. bench/anchors/skl-env.sh &&
// python3 ref.py`), each test naming the line it uses:
//
//   import numpy as np
//   from sklearn.preprocessing import (MinMaxScaler, MaxAbsScaler, Normalizer, OneHotEncoder,
//                                      LabelEncoder, PolynomialFeatures)
//   from sklearn.impute import SimpleImputer
//   r = lambda a: repr(a if isinstance(a, list) else np.asarray(a).tolist())
//   X = np.array([[1., -2, 5], [3, 0, 5], [-1, 4, 5], [2, 2, 5]])
//   m = MinMaxScaler(feature_range=(-1, 2)).fit(X)
//   print("minmax", r(m.data_min_), r(m.data_max_), r(m.data_range_), r(m.scale_), r(m.min_))
//   print("minmax T", r(m.transform(X)))
//   Xt = np.array([[4., -3, 6]])
//   print("minmax test", r(m.transform(Xt)),
//         r(MinMaxScaler(feature_range=(-1, 2), clip=True).fit(X).transform(Xt)))
//   a = MaxAbsScaler().fit(X)
//   print("maxabs", r(a.max_abs_), r(a.scale_), r(a.transform(X)))
//   print("maxabs zero col", r(MaxAbsScaler().fit(np.array([[0., 1], [0, -2]])).scale_))
//   N = np.array([[3., 4, 0], [0, 0, 0], [1, -2, 2], [-6, 1, 1]])
//   for norm in ["l2", "l1", "max"]:
//       print("normalizer", norm, r(Normalizer(norm=norm).fit(N).transform(N)))
//   C = np.array([[3., 10], [1, 20], [3, 10], [2, 10]])
//   o = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(C)
//   print("onehot", r([c.tolist() for c in o.categories_]), r(o.transform(C)),
//         r(o.transform(np.array([[2., 20], [7, 10]]))))
//   print("onehot inv", r(o.inverse_transform(np.array([[0., 0, 0, 1, 0], [0, 1, 0, 0, 1]]))))
//   y = np.array([10, -5, 7, 10, 7])
//   le = LabelEncoder().fit(y)
//   print("label", r(le.classes_), r(le.transform(y)), r(le.inverse_transform([0, 2])))
//   P = np.array([[1., 2, 3], [-1, 0.5, 2]])
//   for kw in [dict(degree=3), dict(degree=3, interaction_only=True),
//              dict(degree=2, include_bias=False)]:
//       pf = PolynomialFeatures(**kw).fit(P)
//       print("poly", kw, pf.n_output_features_, r(pf.powers_), r(pf.transform(P)))
//   nan = np.nan
//   M = np.array([[1, nan, 5, nan], [nan, 4, 5, nan], [3, 8, 7, nan], [5, 4, nan, nan],
//                 [3, nan, 7, nan]])
//   for s in ["mean", "median", "most_frequent"]:
//       im = SimpleImputer(strategy=s).fit(M)
//       print("imputer", s, r(im.statistics_), r(im.transform(M)))
//   im = SimpleImputer(strategy="mean", keep_empty_features=True).fit(M)
//   print("imputer keep", r(im.statistics_), r(im.transform(M)))
//   im = SimpleImputer(strategy="constant", fill_value=9).fit(M)
//   print("imputer constant", r(im.statistics_), r(im.transform(M)))
//   I = np.load("tests/data/iris/X_train.npy"); yi = np.load("tests/data/iris/y_train.npy")
//   m = MinMaxScaler().fit(I)
//   print("iris minmax", r(m.data_min_), r(m.data_max_), r(m.transform(I).sum(axis=0)))
//   a = MaxAbsScaler().fit(I)
//   print("iris maxabs", r(a.max_abs_), r(a.transform(I).sum(axis=0)))
//   for norm in ["l2", "l1", "max"]:
//       print("iris normalizer", norm, r(Normalizer(norm=norm).fit_transform(I).sum(axis=0)))
//   o = OneHotEncoder(sparse_output=False).fit(I)
//   print("iris onehot", r([len(c) for c in o.categories_]),
//         r([c[:3].tolist() for c in o.categories_]), r(o.transform(I).sum(axis=0)[:8]))
//   print("iris label", r(LabelEncoder().fit(yi * 10 - 5).classes_))
//   pf = PolynomialFeatures(degree=2).fit(I)
//   print("iris poly", pf.n_output_features_, r(pf.transform(I).sum(axis=0)))
//   J = I.copy()
//   for i in range(0, J.shape[0], 5): J[i, i % 4] = nan
//   for s in ["mean", "median", "most_frequent"]:
//       print("iris imputer", s, r(SimpleImputer(strategy=s).fit(J).statistics_))
#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "onelearn/core/concepts.hpp"
#include "onelearn/preprocessing/label_encoder.hpp"
#include "onelearn/preprocessing/max_abs_scaler.hpp"
#include "onelearn/preprocessing/min_max_scaler.hpp"
#include "onelearn/preprocessing/normalizer.hpp"
#include "onelearn/preprocessing/one_hot_encoder.hpp"
#include "onelearn/preprocessing/polynomial_features.hpp"
#include "onelearn/preprocessing/simple_imputer.hpp"
#include "support.hpp"

using namespace onelearn;
using namespace onelearn::preprocessing;

static_assert(check_transformer<MinMaxScaler<float>>());
static_assert(check_transformer<MaxAbsScaler<double>>());
static_assert(check_transformer<Normalizer<double>>());
static_assert(check_transformer<OneHotEncoder<float>>());
static_assert(check_transformer<PolynomialFeatures<double>>());
static_assert(check_transformer<SimpleImputer<float>>());

namespace {

constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

/// A matrix written row by row: rows({{1, 2}, {3, 4}}).
template <class T = double>
Matrix<T> rows(std::initializer_list<std::initializer_list<double>> values) {
  Matrix<T> out(static_cast<index_t>(values.size()), static_cast<index_t>(values.begin()->size()));
  index_t i = 0;
  for (const auto& row : values) {
    index_t j = 0;
    for (double v : row) out(i, j++) = static_cast<T>(v);
    ++i;
  }
  return out;
}

template <class T = double>
Vector<T> vec(std::initializer_list<double> values) {
  return rows<T>({values}).row(0).transpose();
}

/// a and b agree to T's tolerance (absolute below 1, relative above).
template <class T, class A, class B>
bool close(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b) {
  return test::max_relative_error(a, b, 1.0) < test::tolerance<T>();
}

template <class T>
Matrix<T> iris() {
  return test::load_split<T, std::int64_t>("iris").X_train;
}

/// The errors every Matrix transformer shares; `name` is its class name.
template <class Estimator>
void check_common_errors(Estimator estimator, const std::string& name, bool nan_allowed = false) {
  using T = typename Estimator::value_type;
  const Matrix<T> X = rows<T>({{1, 2, 3}, {4, 5, 6}, {7, 8, 10}});
  CHECK_FALSE(estimator.is_fitted());
  CHECK_THROWS_WITH_AS(
      (void)estimator.transform(X),
      doctest::Contains((name + ".transform: expected a fitted estimator").c_str()),
      not_fitted_error);
  CHECK_THROWS_WITH_AS((void)estimator.n_features_in(),
                       doctest::Contains((name + ".n_features_in: expected a fitted").c_str()),
                       not_fitted_error);
  Matrix<T> bad = X;
  bad(1, 2) = std::numeric_limits<T>::infinity();
  CHECK_THROWS_WITH_AS(estimator.fit(bad),
                       doctest::Contains((name + ".fit: expected finite").c_str()),
                       onelearn::invalid_argument);
  bad(1, 2) = std::numeric_limits<T>::quiet_NaN();
  if (!nan_allowed) {
    CHECK_THROWS_WITH_AS(
        estimator.fit(bad),
        doctest::Contains(
            (name + ".fit: expected finite values in X, found nan at row 1, column 2").c_str()),
        onelearn::invalid_argument);
  }
  CHECK_THROWS_WITH_AS(
      estimator.fit(Matrix<T>(0, 3)),
      doctest::Contains(
          (name + ".fit: expected at least one sample and one feature, found 0 x 3").c_str()),
      onelearn::invalid_argument);
  CHECK_THROWS_AS(estimator.fit(Matrix<T>(3, 0)), onelearn::invalid_argument);

  CHECK(&estimator.fit(X) == &estimator);
  CHECK(estimator.n_features_in() == 3);
  CHECK_THROWS_WITH_AS(
      (void)estimator.transform(Matrix<T>::Ones(2, 2)),
      doctest::Contains(
          (name + ".transform: expected X with 3 features, as in fit, found 2").c_str()),
      shape_error);
  bad(1, 2) = std::numeric_limits<T>::infinity();
  CHECK_THROWS_AS((void)estimator.transform(bad), onelearn::invalid_argument);
  // A failed refit leaves the estimator unfitted, not half-updated.
  CHECK_THROWS_AS(estimator.fit(Matrix<T>(0, 3)), onelearn::invalid_argument);
  CHECK_FALSE(estimator.is_fitted());
}

}  // namespace

TEST_CASE_TEMPLATE("MinMaxScaler and MaxAbsScaler match scikit-learn", T, float, double) {
  const Matrix<T> X = rows<T>({{1, -2, 5}, {3, 0, 5}, {-1, 4, 5}, {2, 2, 5}});  // column 2 constant
  const Matrix<T> outside = rows<T>({{4, -3, 6}});

  // "minmax", "minmax T", "minmax test"
  MinMaxScaler<T> scaler({.feature_range = {-1, 2}});
  CHECK(&scaler.fit(X) == &scaler);
  CHECK(scaler.data_min() == vec<T>({-1, -2, 5}));
  CHECK(scaler.data_max() == vec<T>({3, 4, 5}));
  CHECK(scaler.data_range() == vec<T>({4, 6, 0}));
  CHECK(close<T>(scaler.scale(), vec({0.75, 0.5, 3.0})));
  CHECK(close<T>(scaler.min(), vec({-0.25, 0.0, -16.0})));
  CHECK(scaler.n_samples_seen() == 4);
  const Matrix<T> Z = scaler.transform(X);
  CHECK(close<T>(Z, rows({{0.5, -1, -1}, {2, 0, -1}, {-1, 2, -1}, {1.25, 1, -1}})));
  CHECK(close<T>(scaler.inverse_transform(Z), X));
  CHECK(close<T>(scaler.transform(outside), rows({{2.75, -1.5, 2.0}})));
  MinMaxScaler<T> clipped({.feature_range = {-1, 2}, .clip = true});
  CHECK(close<T>(clipped.fit(X).transform(outside), rows({{2.0, -1.0, 2.0}})));
  CHECK(close<T>(MinMaxScaler<T>().fit_transform(X).col(0), vec({0.5, 1, 0, 0.75})));

  // "maxabs", "maxabs zero col"
  MaxAbsScaler<T> max_abs;
  const Matrix<T> A = max_abs.fit_transform(X);
  CHECK(max_abs.max_abs() == vec<T>({3, 4, 5}));
  CHECK(max_abs.scale() == vec<T>({3, 4, 5}));
  CHECK(close<T>(A, rows({{1 / 3.0, -0.5, 1}, {1, 0, 1}, {-1 / 3.0, 1, 1}, {2 / 3.0, 0.5, 1}})));
  CHECK(close<T>(max_abs.inverse_transform(A), X));
  CHECK(max_abs.n_samples_seen() == 4);
  CHECK(MaxAbsScaler<T>().fit(rows<T>({{0, 1}, {0, -2}})).scale() == vec<T>({1, 2}));
}

TEST_CASE_TEMPLATE("scalers, Normalizer and PolynomialFeatures match scikit-learn on iris", T,
                   float, double) {
  const Matrix<T> X = iris<T>();
  // "iris minmax"
  MinMaxScaler<T> scaler;
  const Matrix<T> Z = scaler.fit_transform(X);
  CHECK(close<T>(scaler.data_min(), vec({4.3, 2.0, 1.0, 0.1})));
  CHECK(close<T>(scaler.data_max(), vec({7.9, 4.4, 6.9, 2.5})));
  CHECK(close<T>(Z.colwise().sum(), rows({{48.72222222222225, 48.49999999999998, 52.59322033898305,
                                           51.79166666666665}})));
  CHECK(Z.minCoeff() == 0);
  CHECK(close<T>(scaler.inverse_transform(Z), X));
  // "iris maxabs"
  MaxAbsScaler<T> max_abs;
  CHECK(close<T>(
      max_abs.fit_transform(X).colwise().sum(),
      rows({{83.16455696202533, 77.3636363636364, 61.202898550724676, 54.19999999999998}})));
  CHECK(close<T>(max_abs.max_abs(), vec({7.9, 4.4, 6.9, 2.5})));
  // "iris normalizer"
  CHECK(close<T>(
      Normalizer<T>().fit_transform(X).colwise().sum(),
      rows({{84.29117524754832, 45.06774980230051, 50.91095571952064, 15.8966367397432}})));
  CHECK(close<T>(
      Normalizer<T>({.norm = "l1"}).fit_transform(X).colwise().sum(),
      rows({{48.417127585292576, 26.160349325762805, 28.59305136269389, 8.829471726250738}})));
  CHECK(close<T>(Normalizer<T>({.norm = "max"}).fit_transform(X).colwise().sum(),
                 rows({{112.0, 59.41963874996014, 69.04656673748983, 21.78430094475645}})));
  // "iris poly"
  PolynomialFeatures<T> poly;
  const Matrix<T> P = poly.fit_transform(X);
  CHECK(poly.n_output_features() == 15);
  CHECK(close<T>(
      P.colwise().sum(),
      rows({{112.0, 657.0000000000001, 340.3999999999999, 422.2999999999999, 135.5, 3936.2,
             1992.4199999999996, 2628.46, 855.2399999999996, 1057.4399999999996, 1246.3099999999997,
             397.84000000000003, 1949.4900000000007, 657.63, 228.72999999999996}})));
}

TEST_CASE_TEMPLATE("Normalizer matches scikit-learn and leaves zero rows at zero", T, float,
                   double) {
  const Matrix<T> X = rows<T>({{3, 4, 0}, {0, 0, 0}, {1, -2, 2}, {-6, 1, 1}});
  // "normalizer l2", "normalizer l1", "normalizer max"
  Normalizer<T> l2;
  CHECK(close<T>(l2.fit_transform(X),
                 rows({{0.6, 0.8, 0},
                       {0, 0, 0},
                       {1 / 3.0, -2 / 3.0, 2 / 3.0},
                       {-0.9733285267845753, 0.16222142113076254, 0.16222142113076254}})));
  CHECK(close<T>(Normalizer<T>({.norm = "l1"}).fit_transform(X),
                 rows({{0.42857142857142855, 0.5714285714285714, 0},
                       {0, 0, 0},
                       {0.2, -0.4, 0.4},
                       {-0.75, 0.125, 0.125}})));
  CHECK(close<T>(Normalizer<T>({.norm = "max"}).fit_transform(X),
                 rows({{0.75, 1, 0}, {0, 0, 0}, {0.5, -1, 1}, {-1, 1 / 6.0, 1 / 6.0}})));
  CHECK(l2.transform(X).row(1) == Matrix<T>::Zero(1, 3));  // exactly zero, no NaN
  // The norm is read at transform time, like scikit-learn.
  l2.set_params({{"norm", std::string("max")}});
  CHECK(close<T>(l2.transform(X).row(0), rows({{0.75, 1, 0}})));
}

TEST_CASE_TEMPLATE("OneHotEncoder matches scikit-learn", T, float, double) {
  const Matrix<T> C = rows<T>({{3, 10}, {1, 20}, {3, 10}, {2, 10}});
  // "onehot", "onehot inv"
  OneHotEncoder<T> encoder({.handle_unknown = "ignore"});
  const Matrix<T> Z = encoder.fit_transform(C);
  REQUIRE(encoder.categories().size() == 2);
  CHECK(encoder.categories()[0] == vec<T>({1, 2, 3}));
  CHECK(encoder.categories()[1] == vec<T>({10, 20}));
  CHECK(encoder.n_output_features() == 5);
  CHECK(Z == rows<T>({{0, 0, 1, 1, 0}, {1, 0, 0, 0, 1}, {0, 0, 1, 1, 0}, {0, 1, 0, 1, 0}}));
  CHECK(encoder.transform(rows<T>({{2, 20}, {7, 10}})) ==
        rows<T>({{0, 1, 0, 0, 1}, {0, 0, 0, 1, 0}}));  // 7 is unknown: an all-zero block
  CHECK(encoder.inverse_transform(Z) == C);
  const Matrix<T> back = encoder.inverse_transform(rows<T>({{0, 0, 0, 1, 0}, {0, 1, 0, 0, 1}}));
  CHECK(std::isnan(back(0, 0)));  // scikit-learn: None
  CHECK(back(0, 1) == 10);
  CHECK(back.row(1) == rows<T>({{2, 20}}));
  CHECK_THROWS_WITH_AS((void)encoder.inverse_transform(Matrix<T>::Zero(1, 4)),
                       doctest::Contains("OneHotEncoder.inverse_transform: expected 5 columns "
                                         "(one per category seen in fit), found 4"),
                       shape_error);

  // "onehot err": with handle_unknown = "error" an unknown category names column and value.
  OneHotEncoder<T> strict;
  strict.fit(C);
  CHECK_THROWS_WITH_AS((void)strict.transform(rows<T>({{2, 10}, {2, 30}})),
                       doctest::Contains("OneHotEncoder.transform: found unknown category 30 in "
                                         "column 1 at row 1; expected one of the 2 categories"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(OneHotEncoder<T>({.handle_unknown = "skip"}).fit(C),
                       doctest::Contains("OneHotEncoder.fit: expected handle_unknown to be one of "
                                         "\"error\", \"ignore\", found \"skip\""),
                       onelearn::invalid_argument);
}

TEST_CASE_TEMPLATE("OneHotEncoder on iris", T, float, double) {
  // "iris onehot": any finite value is a category, as in scikit-learn.
  const Matrix<T> X = iris<T>();
  OneHotEncoder<T> encoder;
  const Matrix<T> Z = encoder.fit_transform(X);
  const std::vector<index_t> sizes{33, 23, 41, 21};
  const std::vector<std::vector<double>> first{
      {4.3, 4.4, 4.5}, {2.0, 2.2, 2.3}, {1.0, 1.1, 1.2}, {0.1, 0.2, 0.3}};
  for (std::size_t j = 0; j < 4; ++j) {
    CHECK(encoder.categories()[j].size() == sizes[j]);
    CHECK(close<T>(encoder.categories()[j].head(3), vec({first[j][0], first[j][1], first[j][2]})));
  }
  CHECK(Z.cols() == 33 + 23 + 41 + 21);
  CHECK(Z.leftCols(8).colwise().sum() == rows<T>({{1, 3, 1, 2, 2, 3, 5, 10}}));
  CHECK(Z.rowwise().sum() == Vector<T>::Constant(X.rows(), 4));
  CHECK(encoder.inverse_transform(Z) == X);
}

TEST_CASE_TEMPLATE("LabelEncoder matches scikit-learn", T, std::int64_t, double) {
  // "label"
  const Vector<T> y = vec<T>({10, -5, 7, 10, 7});
  LabelEncoder<T> encoder;
  CHECK_THROWS_WITH_AS((void)encoder.transform(y),
                       doctest::Contains("LabelEncoder.transform: expected a fitted"),
                       not_fitted_error);
  CHECK_THROWS_AS((void)encoder.classes(), not_fitted_error);
  CHECK(encoder.fit_transform(y) == (Labels(5) << 2, 0, 1, 2, 1).finished());
  CHECK(encoder.classes() == vec<T>({-5, 7, 10}));
  CHECK(encoder.n_classes() == 3);
  CHECK(encoder.inverse_transform((Labels(2) << 0, 2).finished()) == vec<T>({-5, 10}));
  CHECK_THROWS_WITH_AS(
      (void)encoder.transform(vec<T>({7, 8})),
      doctest::Contains("LabelEncoder.transform: found unseen label 8 at row 1; expected one of "
                        "the 3 labels seen in fit"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)encoder.inverse_transform((Labels(1) << 3).finished()),
                       doctest::Contains("LabelEncoder.inverse_transform: expected codes in [0, "
                                         "2], found 3 at row 0"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(encoder.fit(Vector<T>(0)),
                       doctest::Contains("LabelEncoder.fit: expected at least one label, found 0"),
                       onelearn::invalid_argument);
  CHECK_FALSE(encoder.is_fitted());
  if constexpr (std::is_floating_point_v<T>) {
    CHECK_THROWS_WITH_AS(encoder.fit(vec<T>({1, NaN})),
                         doctest::Contains("LabelEncoder.fit: expected finite values in y"),
                         onelearn::invalid_argument);
  }
  // "iris label"
  const Labels iris_y = test::load_split<double, std::int64_t>("iris").y_train;
  LabelEncoder<> iris_encoder;
  const Labels codes = iris_encoder.fit_transform(Labels(iris_y.array() * 10 - 5));
  CHECK(iris_encoder.classes() == (Labels(3) << -5, 5, 15).finished());
  CHECK(codes == iris_y);  // iris labels are 0, 1, 2 already
}

TEST_CASE_TEMPLATE("PolynomialFeatures matches scikit-learn's order and powers", T, float, double) {
  const Matrix<T> X = rows<T>({{1, 2, 3}, {-1, 0.5, 2}});
  using Powers = typename PolynomialFeatures<T>::Powers;
  auto powers = [](std::initializer_list<std::initializer_list<double>> v) {
    return Powers(rows<double>(v).template cast<std::int64_t>());
  };
  // "poly {'degree': 3}"
  PolynomialFeatures<T> cubic({.degree = 3});
  const Matrix<T> Z = cubic.fit_transform(X);
  CHECK(cubic.n_output_features() == 20);
  CHECK(cubic.powers() ==
        powers({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {2, 0, 0}, {1, 1, 0}, {1, 0, 1},
                {0, 2, 0}, {0, 1, 1}, {0, 0, 2}, {3, 0, 0}, {2, 1, 0}, {2, 0, 1}, {1, 2, 0},
                {1, 1, 1}, {1, 0, 2}, {0, 3, 0}, {0, 2, 1}, {0, 1, 2}, {0, 0, 3}}));
  CHECK(Z == rows<T>({{1, 1, 2, 3, 1, 2, 3, 4, 6, 9, 1, 2, 3, 4, 6, 9, 8, 12, 18, 27},
                      {1,  -1,  0.5, 2,     1,  -0.5, -2,    0.25, 1, 4,
                       -1, 0.5, 2,   -0.25, -1, -4,   0.125, 0.5,  2, 8}}));
  // "poly {'degree': 3, 'interaction_only': True}"
  PolynomialFeatures<T> interactions({.degree = 3, .interaction_only = true});
  CHECK(interactions.fit_transform(X) ==
        rows<T>({{1, 1, 2, 3, 2, 3, 6, 6}, {1, -1, 0.5, 2, -0.5, -2, 1, -1}}));
  CHECK(interactions.powers() == powers({{0, 0, 0},
                                         {1, 0, 0},
                                         {0, 1, 0},
                                         {0, 0, 1},
                                         {1, 1, 0},
                                         {1, 0, 1},
                                         {0, 1, 1},
                                         {1, 1, 1}}));
  // "poly {'degree': 2, 'include_bias': False}"
  PolynomialFeatures<T> no_bias({.degree = 2, .include_bias = false});
  CHECK(no_bias.fit_transform(X) ==
        rows<T>({{1, 2, 3, 1, 2, 3, 4, 6, 9}, {-1, 0.5, 2, 1, -0.5, -2, 0.25, 1, 4}}));
  CHECK(no_bias.n_output_features() == 9);
  // Degree 0 is the bias alone; degree 0 without it has no columns.
  CHECK(PolynomialFeatures<T>({.degree = 0}).fit_transform(X) == Matrix<T>::Ones(2, 1));
  CHECK_THROWS_WITH_AS((PolynomialFeatures<T>({.degree = 0, .include_bias = false}).fit(X)),
                       doctest::Contains("PolynomialFeatures.fit: expected degree >= 1 or "
                                         "include_bias = true, found degree 0"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(PolynomialFeatures<T>({.degree = -1}).fit(X),
                       doctest::Contains("PolynomialFeatures.fit: expected degree >= 0, found -1"),
                       onelearn::invalid_argument);
  CHECK_THROWS_AS((void)PolynomialFeatures<T>().powers(), not_fitted_error);
}

TEST_CASE_TEMPLATE("SimpleImputer matches scikit-learn", T, float, double) {
  const Matrix<T> M = rows<T>(
      {{1, NaN, 5, NaN}, {NaN, 4, 5, NaN}, {3, 8, 7, NaN}, {5, 4, NaN, NaN}, {3, NaN, 7, NaN}});
  // "imputer mean": the all-missing column 3 is dropped, its statistic is NaN.
  SimpleImputer<T> mean;
  const Matrix<T> Z = mean.fit_transform(M);
  CHECK(close<T>(mean.statistics().head(3), vec({3.0, 5.333333333333333, 6.0})));
  CHECK(std::isnan(mean.statistics()(3)));
  CHECK(mean.n_features_in() == 4);
  CHECK(mean.n_features_out() == 3);
  CHECK(close<T>(Z, rows({{1, 5.333333333333333, 5},
                          {3, 4, 5},
                          {3, 8, 7},
                          {5, 4, 6},
                          {3, 5.333333333333333, 7}})));
  // "imputer median", "imputer most_frequent" (column 2 ties 5 and 7: the smaller wins)
  SimpleImputer<T> median({.strategy = "median"});
  CHECK(median.fit_transform(M) ==
        rows<T>({{1, 4, 5}, {3, 4, 5}, {3, 8, 7}, {5, 4, 6}, {3, 4, 7}}));
  CHECK(median.statistics().head(3) == vec<T>({3, 4, 6}));
  SimpleImputer<T> frequent({.strategy = "most_frequent"});
  CHECK(frequent.fit_transform(M) ==
        rows<T>({{1, 4, 5}, {3, 4, 5}, {3, 8, 7}, {5, 4, 5}, {3, 4, 7}}));
  CHECK(std::isnan(frequent.statistics()(3)));
  // "imputer keep", "imputer constant": every column kept.
  SimpleImputer<T> keep({.keep_empty_features = true});
  CHECK(close<T>(keep.fit_transform(M).col(3), Vector<double>::Zero(5)));
  CHECK(close<T>(keep.statistics(), vec({3.0, 5.333333333333333, 6.0, 0.0})));
  SimpleImputer<T> constant({.strategy = "constant", .fill_value = 9});
  CHECK(constant.fit_transform(M) ==
        rows<T>({{1, 9, 5, 9}, {9, 4, 5, 9}, {3, 8, 7, 9}, {5, 4, 9, 9}, {3, 9, 7, 9}}));
  CHECK(constant.statistics() == vec<T>({9, 9, 9, 9}));

  // Medians of an even and an odd count with negative values, zeros and repeats, by hand:
  // column 0 {-3, -1, 0, 2} -> -0.5; column 1 {-2, -2, -2, 5, 9} -> -2.
  const Matrix<T> signs = rows<T>({{0, -2}, {-1, 9}, {2, -2}, {NaN, 5}, {-3, -2}});
  CHECK(SimpleImputer<T>({.strategy = "median"}).fit(signs).statistics() == vec<T>({-0.5, -2}));

  CHECK_THROWS_WITH_AS(SimpleImputer<T>({.strategy = "mode"}).fit(M),
                       doctest::Contains("SimpleImputer.fit: expected strategy to be one of "
                                         "\"mean\", \"median\", \"most_frequent\", \"constant\", "
                                         "found \"mode\""),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      (SimpleImputer<T>({.strategy = "constant", .fill_value = NaN}).fit(M)),
      doctest::Contains("SimpleImputer.fit: expected a finite fill_value, found nan"),
      onelearn::invalid_argument);
  Matrix<T> with_inf = M;
  with_inf(2, 1) = -std::numeric_limits<T>::infinity();
  CHECK_THROWS_WITH_AS(mean.fit(with_inf),
                       doctest::Contains("SimpleImputer.fit: expected finite values or NaN "
                                         "(missing) in X, found -inf at row 2, column 1"),
                       onelearn::invalid_argument);
}

TEST_CASE_TEMPLATE("SimpleImputer on iris with missing values", T, float, double) {
  Matrix<T> X = iris<T>();
  for (index_t i = 0; i < X.rows(); i += 5) X(i, i % 4) = std::numeric_limits<T>::quiet_NaN();
  // "iris imputer"
  SimpleImputer<T> mean;
  const Matrix<T> Z = mean.fit_transform(X);
  CHECK(close<T>(mean.statistics(), vec({5.8471698113207555, 3.0424528301886786, 3.729245283018867,
                                         1.2205607476635514})));
  CHECK_FALSE(Z.hasNaN());
  CHECK(close<T>(SimpleImputer<T>({.strategy = "median"}).fit(X).statistics(),
                 vec({5.8, 3.0, 4.25, 1.3})));
  CHECK(close<T>(SimpleImputer<T>({.strategy = "most_frequent"}).fit(X).statistics(),
                 vec({5.0, 3.0, 1.4, 0.2})));
}

TEST_CASE_TEMPLATE("preprocessing transformers reject bad input with typed errors", T, float,
                   double) {
  check_common_errors(MinMaxScaler<T>(), "MinMaxScaler");
  check_common_errors(MaxAbsScaler<T>(), "MaxAbsScaler");
  check_common_errors(Normalizer<T>(), "Normalizer");
  check_common_errors(OneHotEncoder<T>(), "OneHotEncoder");
  check_common_errors(PolynomialFeatures<T>(), "PolynomialFeatures");
  check_common_errors(SimpleImputer<T>(), "SimpleImputer", /*nan_allowed=*/true);

  const Matrix<T> X = Matrix<T>::Ones(3, 2);
  CHECK_THROWS_WITH_AS((MinMaxScaler<T>({.feature_range = {1, 1}}).fit(X)),
                       doctest::Contains("MinMaxScaler.fit: expected feature_range with finite "
                                         "min < max, found (1, 1)"),
                       onelearn::invalid_argument);
  CHECK_THROWS_AS((MinMaxScaler<T>({.feature_range = {0, NaN}}).fit(X)),
                  onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(Normalizer<T>({.norm = "l3"}).fit(X),
                       doctest::Contains("Normalizer.fit: expected norm to be one of \"l2\", "
                                         "\"l1\", \"max\", found \"l3\""),
                       onelearn::invalid_argument);
  CHECK_THROWS_AS((void)MinMaxScaler<T>().inverse_transform(X), not_fitted_error);
  CHECK_THROWS_AS((void)MaxAbsScaler<T>().max_abs(), not_fitted_error);
  CHECK_THROWS_AS((void)MinMaxScaler<T>().fit(X).inverse_transform(Matrix<T>::Ones(1, 3)),
                  shape_error);
  CHECK_THROWS_AS((void)OneHotEncoder<T>().categories(), not_fitted_error);
}

TEST_CASE("preprocessing Params print, compare and hash") {
  const MinMaxScalerParams a{.feature_range = {-1, 2}};
  CHECK(params::to_string(a) == "feature_range=(-1, 2), clip=false");
  CHECK(params::equal(a, MinMaxScalerParams{.feature_range = {-1, 2}}));
  CHECK(params::hash(a) != params::hash(MinMaxScalerParams{}));
  SimpleImputer<double> imputer;
  imputer.set_params({{"strategy", std::string("median")}, {"fill_value", 3.0}});
  CHECK(std::get<std::string>(imputer.get_param("strategy")) == "median");
  CHECK(params::to_string(PolynomialFeaturesParams{}) ==
        "degree=2, interaction_only=false, include_bias=true");
  CHECK(params::to_string(LabelEncoderParams{}).empty());
}
