"""Reference fixtures for onelearn's HistGradientBoosting* tests, from scikit-learn 1.2.1.

Run from the repository root with scikit-learn importable:
    . ../shared/anchors/skl-env.sh && python3 tests/data/hgb/make_fixtures.py
Writes into tests/data/hgb/:
  reference.json  bin thresholds (scikit-learn's _BinMapper, as HistGradientBoosting* builds
                  it: n_bins = max_bins + 1) on diabetes, digits and the synthetic sets; test
                  scores with early_stopping=False; predictions on the small synthetic sets
  small_X.npy, small_X_test.npy, small_y_reg.npy, small_y_bin.npy, small_y_multi.npy
                  a small set with few distinct values and NaN (exact agreement of the grower)
  nan_X.npy       a larger set with NaN, many distinct values and ties (binning)
  cat_X.npy, cat_X_test.npy, cat_y_reg.npy, cat_y_bin.npy, cat_y_multi.npy
                  two categorical features and a numerical one (categorical splits)
"""
import json
import os

import numpy as np
import sklearn
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.ensemble._hist_gradient_boosting.binning import _BinMapper

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.dirname(HERE)


def load(name):
    d = os.path.join(DATA, name)
    return [np.load(os.path.join(d, f + ".npy")) for f in ("X_train", "y_train", "X_test", "y_test")]


def thresholds(X, max_bins):
    mapper = _BinMapper(n_bins=max_bins + 1, random_state=0).fit(np.asarray(X, dtype=np.float64))
    return [t.tolist() for t in mapper.bin_thresholds_]


rng = np.random.RandomState(0)
# Small: 3 features of few distinct values (so no percentile binning), NaN in feature 1.
n_small = 400
small_X = np.column_stack([
    rng.randint(0, 12, size=n_small).astype(np.float64),
    rng.randint(0, 7, size=n_small).astype(np.float64) * 0.5,
    np.round(rng.normal(size=n_small), 1),
])
small_X[rng.rand(n_small) < 0.1, 1] = np.nan
small_X_test = np.column_stack([
    rng.randint(-1, 13, size=100).astype(np.float64),
    rng.randint(0, 7, size=100).astype(np.float64) * 0.5,
    np.round(rng.normal(size=100), 1),
])
small_X_test[rng.rand(100) < 0.15, 1] = np.nan
small_X_test[rng.rand(100) < 0.1, 2] = np.nan  # never missing in training: larger child
signal = small_X[:, 0] - 2 * np.nan_to_num(small_X[:, 1], nan=4.0) + small_X[:, 2]
small_y_reg = signal + 0.3 * rng.normal(size=n_small)
small_y_bin = (signal + rng.normal(size=n_small) > np.median(signal)).astype(np.int64)
small_y_multi = np.digitize(signal + rng.normal(size=n_small), np.percentile(signal, [33, 66])).astype(np.int64)

# Larger, for binning: many distinct values (percentiles), ties, NaN, a constant column.
n_nan = 3000
nan_X = np.column_stack([
    rng.normal(size=n_nan),
    np.round(rng.exponential(size=n_nan), 2),
    rng.randint(0, 300, size=n_nan).astype(np.float64),
    np.full(n_nan, 3.5),
    rng.normal(size=n_nan) * 1e6,
])
nan_X[rng.rand(n_nan) < 0.2, 0] = np.nan
nan_X[rng.rand(n_nan) < 0.05, 2] = np.nan
nan_X[:50, 4] = np.nan

for name, arr in [("small_X", small_X), ("small_X_test", small_X_test), ("small_y_reg", small_y_reg),
                  ("small_y_bin", small_y_bin), ("small_y_multi", small_y_multi), ("nan_X", nan_X)]:
    np.save(os.path.join(HERE, name + ".npy"), arr)

ref = {"sklearn_version": sklearn.__version__, "thresholds": {}, "scores": {}, "small": {}}
Xd, yd, Xdt, ydt = load("diabetes")
Xg, yg, Xgt, ygt = load("digits")
Xi, yi, Xit, yit = load("iris")
for name, X in [("diabetes", Xd), ("digits", Xg), ("nan_X", nan_X), ("small_X", small_X)]:
    for max_bins in (255, 16, 2):
        ref["thresholds"][f"{name}_{max_bins}"] = thresholds(X, max_bins)

reg = HistGradientBoostingRegressor(early_stopping=False, random_state=0).fit(Xd, yd)
ref["scores"]["diabetes_r2"] = reg.score(Xdt, ydt)
reg = HistGradientBoostingRegressor(early_stopping=False, max_iter=50, max_depth=3,
                                    l2_regularization=1.0, learning_rate=0.2).fit(Xd, yd)
ref["scores"]["diabetes_r2_depth3_l2"] = reg.score(Xdt, ydt)
for name, X, y, Xt, yt in [("iris", Xi, yi, Xit, yit), ("digits", Xg, yg, Xgt, ygt)]:
    clf = HistGradientBoostingClassifier(early_stopping=False, random_state=0).fit(X, y)
    ref["scores"][f"{name}_accuracy"] = clf.score(Xt, yt)
    ref["scores"][f"{name}_n_iter"] = int(clf.n_iter_)
# Early stopping on (a random split of its own): the score it reaches and when it stopped.
clf = HistGradientBoostingClassifier(early_stopping=True, random_state=0).fit(Xg, yg)
ref["scores"]["digits_accuracy_early_stopping"] = clf.score(Xgt, ygt)
ref["scores"]["digits_n_iter_early_stopping"] = int(clf.n_iter_)

settings = dict(early_stopping=False, max_iter=30, min_samples_leaf=5, max_leaf_nodes=15)
reg = HistGradientBoostingRegressor(**settings).fit(small_X, small_y_reg)
ref["small"]["reg_predict"] = reg.predict(small_X_test).tolist()
reg = HistGradientBoostingRegressor(early_stopping=False, max_iter=20, min_samples_leaf=3,
                                    max_depth=3, max_leaf_nodes=None, l2_regularization=2.0,
                                    max_bins=5).fit(small_X, small_y_reg)
ref["small"]["reg_predict_depth3_bins5"] = reg.predict(small_X_test).tolist()
clf = HistGradientBoostingClassifier(**settings).fit(small_X, small_y_bin)
ref["small"]["bin_decision"] = clf.decision_function(small_X_test).tolist()
clf = HistGradientBoostingClassifier(**settings).fit(small_X, small_y_multi)
ref["small"]["multi_decision"] = clf.decision_function(small_X_test).tolist()

# Categorical: feature 0 has 8 categories and NaN (a category of its own), feature 1 has 30
# categories, several with fewer than 10 rows (never sent left on their own), feature 2 is
# numerical. The test rows hold unknown categories (8, 40), NaN in feature 1 (never missing in
# training: the larger child), and NaN in feature 0.
crng = np.random.RandomState(1)
n_cat = 600
cat_X = np.column_stack([
    crng.randint(0, 8, size=n_cat).astype(np.float64),
    np.minimum(crng.geometric(0.12, size=n_cat) - 1, 29).astype(np.float64),
    np.round(crng.normal(size=n_cat), 2),
])
cat_X[crng.rand(n_cat) < 0.1, 0] = np.nan
effect0 = np.array([0.0, 2.0, -1.0, 0.5, 3.0, -2.0, 1.0, 0.0])
effect1 = crng.normal(size=30)
cat_signal = (np.where(np.isnan(cat_X[:, 0]), 1.5, effect0[np.nan_to_num(cat_X[:, 0]).astype(int)])
              + effect1[cat_X[:, 1].astype(int)] + 0.5 * cat_X[:, 2])
cat_y_reg = cat_signal + 0.3 * crng.normal(size=n_cat)
cat_y_bin = (cat_signal + 0.5 * crng.normal(size=n_cat) > np.median(cat_signal)).astype(np.int64)
cat_y_multi = np.digitize(cat_signal + 0.5 * crng.normal(size=n_cat),
                          np.percentile(cat_signal, [33, 66])).astype(np.int64)
cat_X_test = np.column_stack([
    crng.randint(0, 9, size=120).astype(np.float64),
    np.minimum(crng.geometric(0.12, size=120) - 1, 29).astype(np.float64),
    np.round(crng.normal(size=120), 2),
])
cat_X_test[:10, 1] = 40
cat_X_test[10:20, 1] = np.nan
cat_X_test[20:30, 0] = np.nan
for name, arr in [("cat_X", cat_X), ("cat_X_test", cat_X_test), ("cat_y_reg", cat_y_reg),
                  ("cat_y_bin", cat_y_bin), ("cat_y_multi", cat_y_multi)]:
    np.save(os.path.join(HERE, name + ".npy"), arr)
ref["categorical"] = {}
cat_settings = dict(early_stopping=False, max_iter=20, min_samples_leaf=5, max_leaf_nodes=15,
                    categorical_features=[True, True, False])
reg = HistGradientBoostingRegressor(**cat_settings).fit(cat_X, cat_y_reg)
ref["categorical"]["reg_predict"] = reg.predict(cat_X_test).tolist()
ref["categorical"]["thresholds"] = [t.tolist() for t in reg._bin_mapper.bin_thresholds_]
reg = HistGradientBoostingRegressor(**cat_settings).fit(cat_X, cat_y_reg,
                                                        sample_weight=1 + (cat_X[:, 2] > 0))
ref["categorical"]["reg_predict_weighted"] = reg.predict(cat_X_test).tolist()
clf = HistGradientBoostingClassifier(**cat_settings).fit(cat_X, cat_y_bin)
ref["categorical"]["bin_decision"] = clf.decision_function(cat_X_test).tolist()
clf = HistGradientBoostingClassifier(**cat_settings).fit(cat_X, cat_y_multi)
ref["categorical"]["multi_decision"] = clf.decision_function(cat_X_test).tolist()

with open(os.path.join(HERE, "reference.json"), "w") as f:
    json.dump(ref, f, indent=1)
    f.write("\n")
print(json.dumps(ref["scores"], indent=1))
