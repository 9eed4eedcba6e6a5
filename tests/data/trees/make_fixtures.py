"""Reference trees from scikit-learn 1.2.1 for tests/unit/test_trees.cpp.

Run from the repository root with scikit-learn importable
(`. ../shared/anchors/skl-env.sh && python3 tests/data/trees/make_fixtures.py`).
The features are continuous (drawn in float32, so no two values tie), which makes the best
split of every node unique: onelearn's tree must then be scikit-learn's, node for node.
"""
import json
import os

import numpy as np
from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier,
                              RandomForestRegressor)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.RandomState(7)

n, p = 400, 6
X = rng.normal(size=(n, p)).astype(np.float32).astype(np.float64)
score = X[:, 0] + 0.8 * X[:, 1] * X[:, 2] - 0.5 * X[:, 3] + 0.3 * rng.normal(size=n)
y_class = np.digitize(score, [-0.5, 0.6]).astype(np.int64) * 3 + 1   # labels 1, 4, 7
y_reg = np.sin(X[:, 0]) * 2 + X[:, 1] ** 2 - X[:, 4] + 0.1 * rng.normal(size=n)
weights = rng.randint(1, 4, size=n).astype(np.float64)
np.save(os.path.join(HERE, "X.npy"), X)
np.save(os.path.join(HERE, "y_class.npy"), y_class)
np.save(os.path.join(HERE, "y_reg.npy"), y_reg)
np.save(os.path.join(HERE, "weights.npy"), weights)


def tree_json(estimator, **extra):
    t = estimator.tree_
    out = {
        "children_left": t.children_left.tolist(),
        "children_right": t.children_right.tolist(),
        "feature": t.feature.tolist(),
        "threshold": t.threshold.tolist(),
        "impurity": t.impurity.tolist(),
        "n_node_samples": t.n_node_samples.tolist(),
        "weighted_n_node_samples": t.weighted_n_node_samples.tolist(),
        "value": t.value[:, 0, :].tolist(),
        "feature_importances": estimator.feature_importances_.tolist(),
        "predict_first10": estimator.predict(X[:10]).tolist(),
    }
    if hasattr(estimator, "predict_proba"):
        out["proba_first10"] = estimator.predict_proba(X[:10]).tolist()
    out.update(extra)
    return out


cases = {}
settings = {
    "gini_depth5": dict(criterion="gini", max_depth=5),
    "entropy_leaf5": dict(criterion="entropy", min_samples_leaf=5, max_depth=8),
    "gini_full": dict(criterion="gini"),
    "gini_best_first": dict(criterion="gini", max_leaf_nodes=12),
    "gini_min_split_decrease": dict(criterion="gini", min_samples_split=30,
                                    min_impurity_decrease=0.002),
}
for name, kw in settings.items():
    cases["classifier_" + name] = tree_json(
        DecisionTreeClassifier(random_state=0, **kw).fit(X, y_class), params=kw)
cases["classifier_gini_weighted"] = tree_json(
    DecisionTreeClassifier(random_state=0, max_depth=6).fit(X, y_class, sample_weight=weights),
    params=dict(criterion="gini", max_depth=6), weighted=True)

reg_settings = {
    "mse_depth4": dict(max_depth=4),
    "mse_leaf3_depth7": dict(max_depth=7, min_samples_leaf=3),
    "mse_best_first": dict(max_leaf_nodes=20),
}
for name, kw in reg_settings.items():
    cases["regressor_" + name] = tree_json(
        DecisionTreeRegressor(random_state=0, **kw).fit(X, y_reg), params=kw)
cases["regressor_mse_weighted"] = tree_json(
    DecisionTreeRegressor(random_state=0, max_depth=5).fit(X, y_reg, sample_weight=weights),
    params=dict(max_depth=5), weighted=True)



def forest_json(forest, oob, **extra):
    out = {
        "trees": [tree_json(t) for t in forest.estimators_[:3]],
        "feature_importances": forest.feature_importances_.tolist(),
        "predict_first10": forest.predict(X[:10]).tolist(),
    }
    if hasattr(forest, "predict_proba"):
        out["proba_first10"] = forest.predict_proba(X[:10]).tolist()
    if oob:
        out["oob_score"] = forest.oob_score_
    out.update(extra)
    return out


forests = {
    "random_forest_classifier": (RandomForestClassifier, y_class, dict(
        n_estimators=12, max_depth=6, oob_score=True, random_state=3)),
    "extra_trees_classifier": (ExtraTreesClassifier, y_class, dict(
        n_estimators=8, min_samples_leaf=3, random_state=11)),
    "random_forest_regressor": (RandomForestRegressor, y_reg, dict(
        n_estimators=10, max_depth=5, min_samples_leaf=5, max_features=0.5, oob_score=True,
        random_state=5)),
    "extra_trees_regressor": (ExtraTreesRegressor, y_reg, dict(
        n_estimators=6, max_depth=6, min_samples_leaf=5, random_state=2)),
}
for name, (cls, target, kw) in forests.items():
    params = {k: v for k, v in kw.items()}
    if "max_features" in params:
        params["max_features"] = str(params["max_features"])
    cases[name] = forest_json(cls(**kw).fit(X, target), kw.get("oob_score", False), params=params)

# Held-out scores on the real data sets (ties between features possible there: scores only).
real = {}
for name in ["iris", "digits"]:
    d = os.path.join(HERE, "..", name)
    Xtr, ytr = np.load(os.path.join(d, "X_train.npy")), np.load(os.path.join(d, "y_train.npy"))
    Xte, yte = np.load(os.path.join(d, "X_test.npy")), np.load(os.path.join(d, "y_test.npy"))
    real[name + "_tree_depth6_test_accuracy"] = DecisionTreeClassifier(
        max_depth=6, random_state=0).fit(Xtr, ytr).score(Xte, yte)
    real[name + "_forest_test_accuracy"] = RandomForestClassifier(
        n_estimators=50, random_state=0).fit(Xtr, ytr).score(Xte, yte)
d = os.path.join(HERE, "..", "diabetes")
Xtr, ytr = np.load(os.path.join(d, "X_train.npy")), np.load(os.path.join(d, "y_train.npy"))
Xte, yte = np.load(os.path.join(d, "X_test.npy")), np.load(os.path.join(d, "y_test.npy"))
real["diabetes_tree_depth4_test_r2"] = DecisionTreeRegressor(
    max_depth=4, random_state=0).fit(Xtr, ytr).score(Xte, yte)
real["diabetes_forest_test_r2"] = RandomForestRegressor(
    n_estimators=50, max_depth=8, random_state=0).fit(Xtr, ytr).score(Xte, yte)
cases["real"] = real

with open(os.path.join(HERE, "sklearn_trees.json"), "w") as f:
    json.dump(cases, f, indent=1)
print({k: len(v.get("feature", [])) for k, v in cases.items()}, real)
