#pragma once
// Reads back the feature transformers that onnx/export/preprocessing.hpp writes in plain ONNX
// operators (Normalizer, SimpleImputer, PolynomialFeatures, OneHotEncoder), in float32 or
// float64, and the ai.onnx.ml Normalizer and Imputer nodes that skl2onnx writes for the first
// two. Like neighbors_reader.hpp, a graph is recognised by its data flow from the one graph
// input, not by value names, and a graph without it is a graph_error naming what is missing.
// Each reader returns the numbers that define the fitted transformer; onnx/to_estimator.hpp
// refits the estimator on rows that give them back (these transformers learn a few values per
// column, which a row or two reproduce).

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/onnx/detail/plain_graph.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx::detail {

/// Normalizer: its norm, "l2", "l1" or "max". onelearn's layout: ReduceL2 or ReduceL1 of the
/// features, or ReduceMax of their Abs (keepdims, along axis 1), which the features are divided
/// by; skl2onnx's: one ai.onnx.ml Normalizer (norm "L2", "L1" or "MAX") on the features.
inline std::string read_normalizer_norm(const ::onnx::ModelProto& model, std::string_view target) {
  const PlainGraph g(model, target);
  std::vector<std::string> found;
  for (const auto* n : g.nodes("Normalizer", "ai.onnx.ml")) {
    if (!g.is_features(n->input(0))) continue;
    const std::string norm = NodeAttributes(*n).get_string("norm", "MAX");
    if (norm == "L2")
      found.emplace_back("l2");
    else if (norm == "L1")
      found.emplace_back("l1");
    else if (norm == "MAX")
      found.emplace_back("max");
    else
      NodeAttributes(*n).fail("norm '" + norm + "' is not L2, L1 or MAX");
  }
  bool divided = false;
  for (const auto* n : g.nodes("Div")) divided = divided || g.is_features(n->input(0));
  const auto reduced = [&](const ::onnx::NodeProto& n) {
    // keepdims defaults to 1; axes is an attribute (opsets < 18) or the second input.
    const std::optional<std::vector<std::int64_t>> axes = g.reduce_axes(n);
    const bool per_row = axes && axes->size() == 1 && ((*axes)[0] == 1 || (*axes)[0] == -1);
    return divided && per_row && NodeAttributes(n).get_int("keepdims", 1) == 1;
  };
  for (const auto* n : g.nodes("ReduceL2"))
    if (g.is_features(n->input(0)) && reduced(*n)) found.emplace_back("l2");
  for (const auto* n : g.nodes("ReduceL1"))
    if (g.is_features(n->input(0)) && reduced(*n)) found.emplace_back("l1");
  for (const auto* n : g.nodes("ReduceMax")) {
    const ::onnx::NodeProto* abs = g.producer(n->input(0));
    if (abs != nullptr && abs->op_type() == "Abs" && g.is_features(abs->input(0)) && reduced(*n)) {
      found.emplace_back("max");
    }
  }
  if (found.size() != 1) {
    g.fail(found.empty()
               ? std::string("no norm of the features: expected ReduceL2, ReduceL1 or ReduceMax "
                             "of Abs along axis 1 that the features are divided by (onelearn's "
                             "export), or an ai.onnx.ml Normalizer (skl2onnx's)")
               : "the features are normalised " + std::to_string(found.size()) +
                     " times; expected once");
  }
  return found[0];
}

/// SimpleImputer: its statistics(), NaN for a column the file drops. onelearn's layout:
/// Where(IsNaN(x), statistics, x), then a Gather along axis 1 of the kept columns when some
/// were dropped; skl2onnx's: one ai.onnx.ml Imputer (imputed_value_floats, replaced_value_float
/// NaN) on the features.
inline std::vector<double> read_imputer_statistics(const ::onnx::ModelProto& model,
                                                   std::string_view target) {
  const PlainGraph g(model, target);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::vector<double>> found;
  for (const auto* n : g.nodes("Imputer", "ai.onnx.ml")) {
    if (!g.is_features(n->input(0))) continue;
    const NodeAttributes attrs(*n);
    if (!std::isnan(attrs.get_float("replaced_value_float", 0.0F))) {
      throw unsupported_error(unsupported_kind::attribute, "replaced_value_float",
                              attrs.where() + ": onnx::to_estimator<" + std::string(target) +
                                  ">: replaces values other than NaN, which SimpleImputer "
                                  "cannot express (its missing value is NaN)");
    }
    const std::vector<float> values = attrs.get_floats("imputed_value_floats");
    if (values.empty()) attrs.fail("imputed_value_floats is missing or empty");
    std::vector<double> statistics(values.begin(), values.end());
    if (statistics.size() == 1 && g.declared_width() > 1) {  // one value for every column
      statistics.assign(static_cast<std::size_t>(g.declared_width()), statistics[0]);
    }
    found.push_back(std::move(statistics));
  }
  for (const auto* where : g.nodes("Where")) {
    if (where->input_size() != 3 || !g.is_features(where->input(2))) continue;
    const ::onnx::NodeProto* is_nan = g.producer(where->input(0));
    if (is_nan == nullptr || is_nan->op_type() != "IsNaN" || !g.is_features(is_nan->input(0))) {
      continue;
    }
    auto statistics = g.reals(where->input(1));
    if (!statistics) NodeAttributes(*where).fail("the fill values are not a real constant");
    // The kept columns: a Gather along axis 1 of Where's output, when fit dropped some.
    for (const auto* gather : g.nodes("Gather")) {
      const ::onnx::NodeProto& n = *gather;
      if (n.input_size() != 2 || n.input(0) != where->output(0)) continue;
      const auto kept = g.int64s(n.input(1));
      if (!kept || !PlainGraph::along_columns(n, 0)) {
        NodeAttributes(n).fail("expected a Gather of constant int64 columns along axis 1");
      }
      std::vector<double> with_dropped(statistics->size(), nan);
      std::int64_t previous = -1;
      for (const std::int64_t j : *kept) {
        if (j <= previous || j >= static_cast<std::int64_t>(statistics->size())) {
          NodeAttributes(n).fail("the kept columns are not increasing column indices below " +
                                 std::to_string(statistics->size()));
        }
        with_dropped[static_cast<std::size_t>(j)] = (*statistics)[static_cast<std::size_t>(j)];
        previous = j;
      }
      *statistics = std::move(with_dropped);
    }
    found.push_back(std::move(*statistics));
  }
  if (found.size() != 1) {
    g.fail(found.empty() ? std::string("no imputation of the features: expected Where(IsNaN(x), "
                                       "statistics, x) (onelearn's export) or an ai.onnx.ml "
                                       "Imputer (skl2onnx's)")
                         : "the features are imputed " + std::to_string(found.size()) +
                               " times; expected once");
  }
  if (g.declared_width() > 0 && static_cast<std::int64_t>(found[0].size()) != g.declared_width()) {
    throw shape_error("onnx: onnx::to_estimator<" + std::string(target) +
                      ">: " + std::to_string(found[0].size()) + " fill values for " +
                      std::to_string(g.declared_width()) + " features");
  }
  return found[0];
}

/// PolynomialFeatures: its powers(), one row per output column (n_out x p, row-major). The
/// layout of onelearn's export: the features with a ones column appended (Concat along axis 1),
/// and per factor position a Gather of its columns, multiplied together; no Gather when the
/// output is the ones column alone (degree 0).
inline std::vector<std::vector<std::int64_t>> read_polynomial_powers(
    const ::onnx::ModelProto& model, std::string_view target) {
  const PlainGraph g(model, target);
  const std::int64_t p = g.width();
  std::string padded;
  for (const auto* n : g.nodes("Concat")) {
    if (n->input_size() == 2 && g.is_features(n->input(0)) && PlainGraph::along_columns(*n, 0)) {
      padded = n->output(0);
    }
  }
  std::vector<std::vector<std::int64_t>> powers;
  for (const auto* n : g.nodes("Gather")) {
    if (padded.empty() || n->input_size() != 2 || n->input(0) != padded) continue;
    const auto columns = g.int64s(n->input(1));
    if (!columns || !PlainGraph::along_columns(*n, 0)) {
      NodeAttributes(*n).fail("expected a Gather of constant int64 columns along axis 1");
    }
    if (powers.empty()) {
      powers.assign(columns->size(), std::vector<std::int64_t>(static_cast<std::size_t>(p), 0));
    } else if (columns->size() != powers.size()) {
      NodeAttributes(*n).fail("gathers " + std::to_string(columns->size()) +
                              " columns where the other factors have " +
                              std::to_string(powers.size()));
    }
    for (std::size_t k = 0; k < columns->size(); ++k) {
      const std::int64_t j = (*columns)[k];
      if (j < 0 || j > p) {
        NodeAttributes(*n).fail("column " + std::to_string(j) + " outside 0.." + std::to_string(p) +
                                " (the features and the ones column)");
      }
      if (j < p) ++powers[k][static_cast<std::size_t>(j)];
    }
  }
  if (powers.empty()) {
    // Degree 0: the output is the ones column (Expand of a constant one).
    if (g.nodes("Expand").empty()) {
      g.fail(
          "no products of the features: expected the features and a ones column (Concat "
          "along axis 1) with Gathers of their columns, as onelearn's export writes them");
    }
    powers.assign(1, std::vector<std::int64_t>(static_cast<std::size_t>(p), 0));
  }
  return powers;
}

/// OneHotEncoder: each feature's categories, in feature order. The layout of onelearn's export:
/// per feature j, Equal(Gather(x, [j], axis 1), categories as a 1 x k real constant).
inline std::vector<std::vector<double>> read_one_hot_categories(const ::onnx::ModelProto& model,
                                                                std::string_view target) {
  const PlainGraph g(model, target);
  std::map<std::int64_t, std::vector<double>> by_feature;
  for (const auto* n : g.nodes("Equal")) {
    if (n->input_size() != 2) continue;
    const ::onnx::NodeProto* column = g.producer(n->input(0));
    if (column == nullptr || column->op_type() != "Gather" || column->input_size() != 2 ||
        !g.is_features(column->input(0))) {
      continue;
    }
    const auto feature = g.int64s(column->input(1));
    if (!feature || feature->size() != 1 || !PlainGraph::along_columns(*column, 0)) {
      NodeAttributes(*column).fail("expected a Gather of one constant column along axis 1");
    }
    const std::int64_t j = (*feature)[0];
    auto categories = g.reals(n->input(1));
    if (!categories || categories->empty()) {
      NodeAttributes(*n).fail("the categories are not a non-empty real constant");
    }
    for (std::size_t k = 1; k < categories->size(); ++k) {
      if (!((*categories)[k - 1] < (*categories)[k])) {
        NodeAttributes(*n).fail("the categories of feature " + std::to_string(j) +
                                " are not increasing (as fit sorts them)");
      }
    }
    if (!by_feature.emplace(j, std::move(*categories)).second) {
      NodeAttributes(*n).fail("feature " + std::to_string(j) + " is encoded twice");
    }
  }
  if (by_feature.empty()) {
    g.fail(
        "no category comparisons: expected per feature Equal(Gather(x, [j], axis 1), "
        "categories), as onelearn's export writes them");
  }
  const auto p = static_cast<std::int64_t>(by_feature.size());
  if (g.declared_width() > 0 && g.declared_width() != p) {
    throw shape_error("onnx: onnx::to_estimator<" + std::string(target) +
                      ">: " + std::to_string(p) + " features encoded, the graph input has " +
                      std::to_string(g.declared_width()));
  }
  std::vector<std::vector<double>> out;
  for (std::int64_t j = 0; j < p; ++j) {
    const auto it = by_feature.find(j);
    if (it == by_feature.end()) {
      g.fail("feature " + std::to_string(j) + " of 0.." + std::to_string(p - 1) +
             " is not encoded");
    }
    out.push_back(std::move(it->second));
  }
  return out;
}

/// OneHotEncoder as scikit-learn's converter writes it: per feature j, an ai.onnx.ml
/// OneHotEncoder (cats_int64s, zeros) of Cast(Gather(x, [j], axis 1), int64), the encodings
/// concatenated in feature order and reshaped to N x (number of categories). zeros = 1 is
/// handle_unknown "ignore", 0 "error". A Gather after an encoder (scikit-learn's drop) is not
/// read: onelearn's OneHotEncoder has no drop.
struct ReadOneHot {
  std::vector<std::vector<double>> categories;
  std::string handle_unknown;
};

/// Whether the graph has ai.onnx.ml OneHotEncoder nodes (scikit-learn's converter's layout).
inline bool has_ml_one_hot_encoders(const ::onnx::ModelProto& model) {
  for (const auto& n : model.graph().node()) {
    if (n.op_type() == "OneHotEncoder" && n.domain() == "ai.onnx.ml") return true;
  }
  return false;
}

inline ReadOneHot read_skl2onnx_one_hot(const ::onnx::ModelProto& model, std::string_view target) {
  const PlainGraph g(model, target);
  std::map<std::int64_t, std::vector<double>> by_feature;
  std::map<std::string, std::int64_t> feature_of;  // an encoder's output -> its feature
  std::set<std::int64_t> zeros;
  for (const auto* n : g.nodes("OneHotEncoder", "ai.onnx.ml")) {
    const NodeAttributes attrs(*n);
    const ::onnx::NodeProto* cast = n->input_size() == 1 ? g.producer(n->input(0)) : nullptr;
    const ::onnx::NodeProto* column =
        cast != nullptr && cast->op_type() == "Cast" && cast->input_size() == 1
            ? g.producer(cast->input(0))
            : nullptr;
    if (column == nullptr || column->op_type() != "Gather" || column->input_size() != 2 ||
        !g.is_features(column->input(0))) {
      attrs.fail(
          "expected the encoder of Cast(Gather(x, [j], axis 1)), as scikit-learn's "
          "converter writes it");
    }
    const auto feature = g.int64s(column->input(1));
    if (!feature || feature->size() != 1 || !PlainGraph::along_columns(*column, 0)) {
      NodeAttributes(*column).fail("expected a Gather of one constant column along axis 1");
    }
    if (g.consumer(n->output(0), "Gather") != nullptr) {
      attrs.fail(
          "categories are dropped after the encoder (scikit-learn's drop), which "
          "onelearn's OneHotEncoder does not have");
    }
    const std::int64_t j = (*feature)[0];
    feature_of[n->output(0)] = j;
    const auto ints = attrs.get_ints("cats_int64s");
    if (!ints || ints->empty()) attrs.fail("no cats_int64s (string categories are not read)");
    std::vector<double> categories(ints->begin(), ints->end());
    for (std::size_t k = 1; k < categories.size(); ++k) {
      if (!(categories[k - 1] < categories[k])) {
        attrs.fail("the categories of feature " + std::to_string(j) +
                   " are not increasing (as fit sorts them)");
      }
    }
    zeros.insert(attrs.get_int("zeros", 1));
    if (!by_feature.emplace(j, std::move(categories)).second) {
      attrs.fail("feature " + std::to_string(j) + " is encoded twice");
    }
  }
  if (by_feature.empty()) g.fail("no ai.onnx.ml OneHotEncoder of a feature");
  if (zeros.size() != 1) g.fail("the encoders disagree on zeros (handle_unknown)");
  const auto p = static_cast<std::int64_t>(by_feature.size());
  if (g.declared_width() > 0 && g.declared_width() != p) {
    throw shape_error("onnx: onnx::to_estimator<" + std::string(target) +
                      ">: " + std::to_string(p) + " features encoded, the graph input has " +
                      std::to_string(g.declared_width()));
  }
  // The encodings side by side in feature order (the columns transform writes).
  const ::onnx::NodeProto* concat = g.consumer(feature_of.begin()->first, "Concat");
  bool in_order = concat != nullptr && concat->input_size() == static_cast<int>(p);
  for (int i = 0; in_order && i < concat->input_size(); ++i) {
    const auto it = feature_of.find(concat->input(i));
    in_order = it != feature_of.end() && it->second == i;
  }
  if (!in_order) g.fail("the encodings are not concatenated in feature order, one per feature");
  ReadOneHot out;
  out.handle_unknown = *zeros.begin() == 1 ? "ignore" : "error";
  for (std::int64_t j = 0; j < p; ++j) {
    const auto it = by_feature.find(j);
    if (it == by_feature.end()) {
      g.fail("feature " + std::to_string(j) + " of 0.." + std::to_string(p - 1) +
             " is not encoded");
    }
    out.categories.push_back(std::move(it->second));
  }
  return out;
}

}  // namespace onelearn::onnx::detail
