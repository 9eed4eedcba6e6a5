#pragma once
/**
 * \file
 * \ingroup core
 *
 * Labels as every classifier (and the label metrics) handles them, as free functions: the
 * estimator-support floor (base/), between exec/ and the estimator families, private (not
 * included by users). Written once here so that a fix reaches GaussianNB, MultinomialNB,
 * LogisticRegression, SGDClassifier, KNeighborsClassifier and metrics/detail/labels.hpp alike.
 * \code{.unparsed}
 *   sort_unique       sorted, without repeats, in place
 *   gather_classes    the sorted distinct labels of every rank (a classifier's classes())
 *   labels_text       "[a, b, c]", for error messages
 *   class_indices     each label's position in the sorted classes (error for a label not in them)
 *   argmax_labels     per-class scores -> the label of the largest (first on ties)
 *   decision_labels   the same, and a single column is a two-class decision (> 0: second class)
 *   log_softmax       per-class scores -> log P(c | x), row by row
 * \endcode
 */

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::detail {

/// Sorted, without repeats, in place. Labels are mostly a few classes over many rows: their
/// distinct values are collected first (a short list searched per value), and only those are
/// sorted; past 64 distinct values, everything is (bench/'s gbdt labels, 500,000 rows of 2
/// classes: 1 ms instead of 25).
inline void sort_unique(std::vector<std::int64_t>& values) {
  constexpr std::size_t few = 64;
  std::vector<std::int64_t> distinct;
  bool many = false;
  for (std::int64_t v : values) {
    if (std::find(distinct.begin(), distinct.end(), v) != distinct.end()) continue;
    if (distinct.size() == few) {
      many = true;
      break;
    }
    distinct.push_back(v);
  }
  if (!many) values = std::move(distinct);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

/// The sorted distinct labels of `a` (and `b`, when given) on every rank. Each rank's distinct
/// labels are all-gathered, so the message is O(distinct labels), not O(samples); a rank may
/// hold no rows or lack some classes. Collective under a distributed policy.
template <exec::ExecutionPolicy Exec>
Labels gather_classes(const Exec& exec, const LabelsRef& a,
                      const std::optional<LabelsRef>& b = std::nullopt) {
  std::vector<std::int64_t> mine(a.begin(), a.end());
  if (b) mine.insert(mine.end(), b->begin(), b->end());
  sort_unique(mine);
  std::vector<std::int64_t> all = exec.allgatherv(std::span<const std::int64_t>(mine));
  sort_unique(all);
  return Eigen::Map<const Labels>(all.data(), static_cast<index_t>(all.size()));
}

/// "[a, b, c]".
inline std::string labels_text(const Labels& labels) {
  std::string out = "[";
  for (index_t i = 0; i < labels.size(); ++i) {
    out += (i == 0 ? "" : ", ") + std::to_string(labels(i));
  }
  return out + "]";
}

/// The classes given to a from_fitted (a model made from attributes, not fitted): `count`
/// of them (the rows of its attributes), at least `at_least`, strictly increasing as fit sorts
/// them. invalid_argument otherwise, naming `where`.
inline void check_given_classes(std::string_view where, const LabelsRef& classes, index_t count,
                                index_t at_least = 1) {
  if (classes.size() != count || count < at_least) {
    throw invalid_argument(std::string(where) + ": expected " + std::to_string(count) +
                           " classes (one per row of the attributes, at least " +
                           std::to_string(at_least) + "), found " +
                           std::to_string(classes.size()));
  }
  for (index_t c = 1; c < classes.size(); ++c) {
    if (!(classes(c - 1) < classes(c))) {
      throw invalid_argument(std::string(where) + ": expected strictly increasing classes, " +
                             "found " + std::to_string(classes(c - 1)) + " before " +
                             std::to_string(classes(c)));
    }
  }
}

/// The position of each y(i) in the sorted `classes` (as Index: the neighbour index stores
/// std::int64_t). A label that is not one of them is an invalid_argument naming `where`; it
/// cannot happen when classes = gather_classes(exec, y).
template <class Index = index_t>
std::vector<Index> class_indices(std::string_view where, const Labels& classes,
                                 const LabelsRef& y) {
  std::vector<Index> out(static_cast<std::size_t>(y.size()));
  for (index_t i = 0; i < y.size(); ++i) {
    const auto* at = std::lower_bound(classes.data(), classes.data() + classes.size(), y(i));
    if (at == classes.data() + classes.size() || *at != y(i)) {
      throw invalid_argument(std::string(where) + ": expected labels from classes (" +
                             labels_text(classes) + "), found " + std::to_string(y(i)) +
                             " at row " + std::to_string(i));
    }
    out[static_cast<std::size_t>(i)] = static_cast<Index>(at - classes.data());
  }
  return out;
}

/// log P(c | x) from per-class scores (joint log-likelihoods, multinomial logits): each row
/// minus its log-sum-exp. The row maximum is subtracted first and never added back: with
/// near-zero variances (GaussianNB on digits) the scores reach -1e9, where adding it back (as
/// scipy's logsumexp does) would round the probabilities at ~1e-7.
inline Matrix<double> log_softmax(Matrix<double> scores) {
  const Vector<double> top = scores.rowwise().maxCoeff();
  scores.colwise() -= top;
  const Vector<double> log_norm = scores.array().exp().rowwise().sum().log();
  scores.colwise() -= log_norm;
  return scores;
}

/// classes(c) for the largest scores(i, c) of each row i (n x k, k = classes.size()); the first
/// (smallest) class on ties. Strict comparison, as Eigen's maxCoeff(&index): a NaN never wins.
inline Labels argmax_labels(const Labels& classes, const Matrix<double>& scores) {
  Labels out(scores.rows());
  for (index_t i = 0; i < scores.rows(); ++i) {
    index_t best = 0;
    for (index_t c = 1; c < scores.cols(); ++c) {
      if (scores(i, c) > scores(i, best)) best = c;
    }
    out(i) = classes(best);
  }
  return out;
}

/// The label each row of a linear decision function picks: with one column (two classes, as
/// scikit-learn's binary coef_) classes(1) where the score is > 0 and classes(0) otherwise;
/// with k columns argmax_labels.
inline Labels decision_labels(const Labels& classes, const Matrix<double>& scores) {
  if (scores.cols() != 1) return argmax_labels(classes, scores);
  Labels out(scores.rows());
  for (index_t i = 0; i < scores.rows(); ++i) out(i) = classes(scores(i, 0) > 0 ? 1 : 0);
  return out;
}

}  // namespace onelearn::detail
