#pragma once
// The parameters the two HistGradientBoosting estimators share: their checks (with messages
// saying what was expected and found) and their translation into the boosting loop's settings.
// A Params here is any struct with scikit-learn's fields (HistGradientBoosting{Classifier,
// Regressor}Params).

#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/ensemble/detail/hist_booster.hpp"
#include "onelearn/ensemble/detail/hist_categories.hpp"

namespace onelearn::ensemble::detail {

template <class N>
std::string text_of(const N& value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

/// Throws invalid_argument for the first parameter out of its range (and for a categorical
/// mask of the wrong length: shape_error).
template <class P>
void check_hist_params(std::string_view where, const P& p, index_t n_features) {
  const std::string at(where);
  auto fail = [&](std::string_view name, std::string_view expected, const std::string& found) {
    throw invalid_argument(at + ": expected " + std::string(name) + " " + std::string(expected) +
                           ", found " + found);
  };
  if (!(p.learning_rate > 0)) fail("learning_rate", "> 0", text_of(p.learning_rate));
  if (p.max_iter < 1) fail("max_iter", ">= 1", text_of(p.max_iter));
  if (p.max_leaf_nodes != 0 && p.max_leaf_nodes < 2) {
    fail("max_leaf_nodes", ">= 2 (or 0 for no limit)", text_of(p.max_leaf_nodes));
  }
  if (p.max_depth < 0) fail("max_depth", ">= 1 (or 0 for no limit)", text_of(p.max_depth));
  if (p.min_samples_leaf < 1) fail("min_samples_leaf", ">= 1", text_of(p.min_samples_leaf));
  if (!(p.l2_regularization >= 0)) {
    fail("l2_regularization", ">= 0", text_of(p.l2_regularization));
  }
  if (p.max_bins < 2 || p.max_bins > 255) fail("max_bins", "in [2, 255]", text_of(p.max_bins));
  if (p.early_stopping != "auto" && p.early_stopping != "true" && p.early_stopping != "false") {
    fail("early_stopping", "\"auto\", \"true\" or \"false\"", "\"" + p.early_stopping + "\"");
  }
  if (p.scoring != "loss") fail("scoring", "\"loss\" (the only scoring supported)", "\"" + p.scoring + "\"");
  if (!(p.validation_fraction >= 0 && p.validation_fraction < 1)) {
    fail("validation_fraction", "in [0, 1) (0: score the training rows)",
         text_of(p.validation_fraction));
  }
  if (p.n_iter_no_change < 1) fail("n_iter_no_change", ">= 1", text_of(p.n_iter_no_change));
  if (!(p.tol >= 0)) fail("tol", ">= 0", text_of(p.tol));
  const std::string& mask = p.categorical_features;
  if (!mask.empty()) {
    if (static_cast<index_t>(mask.size()) != n_features) {
      throw shape_error(at + ": expected categorical_features to be a mask of " +
                        std::to_string(n_features) + " characters (one per feature of X), found " +
                        std::to_string(mask.size()));
    }
    for (std::size_t f = 0; f < mask.size(); ++f) {
      if (mask[f] != '0' && mask[f] != '1') {
        fail("categorical_features", "a mask of '0' and '1'",
             "'" + std::string(1, mask[f]) + "' at feature " + std::to_string(f));
      }
    }
  }
}

/// The loop's settings; early_stopping "auto" is on above 10000 rows over all ranks.
template <class P>
BoostingSettings hist_settings(const P& p, const HistLoss& loss, std::int64_t n_total) {
  BoostingSettings s;
  s.loss = loss;
  s.learning_rate = p.learning_rate;
  s.max_iter = p.max_iter;
  s.max_leaf_nodes = p.max_leaf_nodes;
  s.max_depth = p.max_depth;
  s.min_samples_leaf = p.min_samples_leaf;
  s.l2_regularization = p.l2_regularization;
  s.max_bins = static_cast<int>(p.max_bins);
  s.early_stopping = p.early_stopping == "auto" ? n_total > 10000 : p.early_stopping == "true";
  s.validation_fraction = p.validation_fraction;
  s.n_iter_no_change = p.n_iter_no_change;
  s.tol = p.tol;
  s.seed = p.random_state;
  if (p.categorical_features.find('1') != std::string::npos) {
    s.is_categorical = categorical_mask(p.categorical_features,
                                        static_cast<index_t>(p.categorical_features.size()));
  }
  return s;
}

}  // namespace onelearn::ensemble::detail
