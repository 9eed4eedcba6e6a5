#pragma once
// Reads the graphs scikit-learn's converter (skl2onnx) writes for GaussianNB and MultinomialNB,
// float32 or float64. Both end alike: the joint log-likelihood jll (N x k) goes to ArgMax
// (axis 1), whose index an ai.onnx.ml ArrayFeatureExtractor looks up in the classes (an int32
// or int64 constant; then Cast, Reshape, Cast to the int64 label), and to ReduceLogSumExp (axis
// 1), Reshape and Sub from jll, Exp: the probabilities (a ZipMap may follow). Before jll:
//   MultinomialNB  MatMul(x, feature_log_prob^T) -> Add(., class_log_prior)
//   GaussianNB     Reshape(x, [-1, 1, p]) -> Sub(., theta) -> Pow(., 2) -> Div(., var)
//                  -> ReduceSum(axis 2, keepdims 0) -> Mul(., 0.5)
//                  -> Sub(-1/2 sum_j log(2 pi var), .) -> Add(log prior, .)
// theta and var are 1 x k x p constants, the others 1 x k (constants on either side of Add and
// Mul). The graph is recognised by that data flow from the features, not by value names.

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/onnx/detail/gaussian_nb_reader.hpp"
#include "onelearn/onnx/detail/plain_graph.hpp"
#include "onelearn/onnx/errors.hpp"

namespace onelearn::onnx::detail {

/// The joint log-likelihood's value and the classes, when the graph ends as skl2onnx's naive
/// Bayes graphs do (see the top of this header).
struct NaiveBayesTail {
  std::string jll;
  std::vector<std::int64_t> classes;
};

inline std::optional<NaiveBayesTail> find_skl2onnx_naive_bayes_tail(const PlainGraph& g) {
  for (const auto* argmax : g.nodes("ArgMax")) {
    if (argmax->input_size() != 1 || !PlainGraph::along_columns(*argmax, 0)) continue;
    const std::string& jll = argmax->input(0);
    const ::onnx::NodeProto* lse = g.consumer(jll, "ReduceLogSumExp");
    if (lse == nullptr) continue;
    for (const auto* lookup : g.nodes("ArrayFeatureExtractor", "ai.onnx.ml")) {
      if (lookup->input_size() != 2 || lookup->input(1) != argmax->output(0)) continue;
      const Tensor* classes = g.constant(lookup->input(0));
      if (classes == nullptr || classes->rank() != 1) continue;
      if (classes->holds<std::int64_t>())
        return NaiveBayesTail{jll, classes->to_vector<std::int64_t>()};
      if (classes->holds<std::int32_t>()) {
        const auto v = classes->to_vector<std::int32_t>();
        return NaiveBayesTail{jll, std::vector<std::int64_t>(v.begin(), v.end())};
      }
      NodeAttributes(*lookup).fail("the classes are not integers (string labels are not read)");
    }
  }
  return std::nullopt;
}

/// Whether `model` ends as skl2onnx's naive Bayes graphs do: an ArgMax and a ReduceLogSumExp of
/// one value, the ArgMax's index looked up by an ArrayFeatureExtractor. Only the op types and
/// the data flow are looked at, so this never throws; the readers below say what is wrong.
inline bool is_skl2onnx_naive_bayes(const ::onnx::ModelProto& model) {
  const auto& nodes = model.graph().node();
  for (const auto& argmax : nodes) {
    // The conditions find_skl2onnx_naive_bayes_tail looks for, so that both agree.
    if (argmax.op_type() != "ArgMax" || argmax.input_size() != 1 || argmax.output_size() < 1 ||
        !PlainGraph::along_columns(argmax, 0)) {
      continue;
    }
    bool lse = false, lookup = false;
    for (const auto& n : nodes) {
      lse = lse || (n.op_type() == "ReduceLogSumExp" && n.input_size() >= 1 &&
                    n.input(0) == argmax.input(0));
      lookup = lookup || (n.op_type() == "ArrayFeatureExtractor" && n.domain() == "ai.onnx.ml" &&
                          n.input_size() == 2 && n.input(1) == argmax.output(0));
    }
    if (lse && lookup) return true;
  }
  return false;
}

namespace skl2onnx_nb {

/// Of an Add or Mul with a constant on one side: the other input, and the constant's values
/// (`size` of them); nullopt when it is not that.
struct ConstantOperand {
  std::string other;
  std::vector<double> values;
};
inline std::optional<ConstantOperand> constant_operand(const PlainGraph& g,
                                                       const ::onnx::NodeProto* n,
                                                       std::int64_t size) {
  if (n == nullptr || n->input_size() != 2) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    if (auto values = g.reals(n->input(side), size)) {
      return ConstantOperand{n->input(1 - side), std::move(*values)};
    }
  }
  return std::nullopt;
}

/// The node producing `value` when it is of op `op`, else null.
inline const ::onnx::NodeProto* made_by(const PlainGraph& g, const std::string& value,
                                        std::string_view op) {
  const ::onnx::NodeProto* n = g.producer(value);
  return n != nullptr && n->op_type() == op ? n : nullptr;
}

[[noreturn]] inline void missing(const PlainGraph& g, const std::string& what) {
  g.fail("not scikit-learn's converter's naive Bayes layout: " + what);
}

/// The class indices in increasing label order (scikit-learn sorts them already; fit would).
inline std::vector<std::size_t> label_order(const std::vector<std::int64_t>& classes) {
  std::vector<std::size_t> order(classes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return classes[a] < classes[b]; });
  return order;
}

/// Whether ReduceSum `n` sums over axis 2 of N x k x p (its axes attribute, or its second
/// input from opset 13).
inline bool sums_last_axis(const PlainGraph& g, const ::onnx::NodeProto& n) {
  const std::optional<std::vector<std::int64_t>> axes = g.reduce_axes(n);
  return axes && axes->size() == 1 && ((*axes)[0] == 2 || (*axes)[0] == -1) &&
         NodeAttributes(n).get_int("keepdims", 1) == 0;
}

/// The classes, and the Add of k constants (class log priors) that makes the joint
/// log-likelihood in both layouts (nullopt when jll is not such an Add: each reader says what
/// it expected).
struct JointSum {
  std::vector<std::int64_t> classes;
  std::optional<ConstantOperand> add;
};
inline JointSum joint_log_likelihood_sum(const PlainGraph& g) {
  const auto tail = find_skl2onnx_naive_bayes_tail(g);
  if (!tail) missing(g, "no ArgMax and ReduceLogSumExp of the joint log-likelihood");
  const auto k = static_cast<std::int64_t>(tail->classes.size());
  return {tail->classes, constant_operand(g, made_by(g, tail->jll, "Add"), k)};
}

}  // namespace skl2onnx_nb

/// MultinomialNB: feature_log_prob (k x p, row-major), class_log_prior and the classes, in
/// increasing label order.
struct ReadMultinomialNB {
  std::vector<double> feature_log_prob, class_log_prior;
  std::vector<std::int64_t> classes;
  std::int64_t k = 0, p = 0;
};

inline ReadMultinomialNB read_skl2onnx_multinomial_nb(const ::onnx::ModelProto& model,
                                                      std::string_view target) {
  using namespace skl2onnx_nb;
  const PlainGraph g(model, target);
  ReadMultinomialNB out;
  const auto [classes, add] = joint_log_likelihood_sum(g);
  out.classes = classes;
  out.k = static_cast<std::int64_t>(out.classes.size());
  const ::onnx::NodeProto* matmul = add ? made_by(g, add->other, "MatMul") : nullptr;
  const Tensor* weights =
      matmul != nullptr && matmul->input_size() == 2 && g.is_features(matmul->input(0))
          ? g.constant(matmul->input(1))
          : nullptr;
  const auto weight_values = weights != nullptr ? g.reals(matmul->input(1)) : std::nullopt;
  if (!weight_values || weights->rank() != 2 || weights->shape()[1] != out.k) {
    missing(g, "the joint log-likelihood is not Add(MatMul(features, a p x " +
                   std::to_string(out.k) + " constant), " + std::to_string(out.k) +
                   " class log priors)");
  }
  out.p = weights->shape()[0];
  const auto k = static_cast<std::size_t>(out.k), p = static_cast<std::size_t>(out.p);
  const std::vector<std::int64_t> file_classes = out.classes;
  out.classes.clear();
  for (const std::size_t c : label_order(file_classes)) {
    out.classes.push_back(file_classes[c]);
    out.class_log_prior.push_back(add->values[c]);
    for (std::size_t j = 0; j < p; ++j) out.feature_log_prob.push_back((*weight_values)[j * k + c]);
  }
  if (g.declared_width() > 0 && g.declared_width() != out.p) {
    throw shape_error("onnx: onnx::to_estimator<" + std::string(target) +
                      ">: " + std::to_string(out.p) +
                      " features in the log probabilities, the graph input has " +
                      std::to_string(g.declared_width()));
  }
  return out;
}

/// GaussianNB: theta, var, log priors and classes, in increasing label order.
inline ReadGaussianNB read_skl2onnx_gaussian_nb(const ::onnx::ModelProto& model,
                                                std::string_view target) {
  using namespace skl2onnx_nb;
  const PlainGraph g(model, target);
  ReadGaussianNB out;
  // jll = Add(log prior, Sub(normalisation, Mul(ReduceSum(Div(Pow(Sub(Reshape(x), theta), 2),
  // var)), 0.5)))
  const auto [classes, add] = joint_log_likelihood_sum(g);
  out.classes = classes;
  out.k = static_cast<std::int64_t>(out.classes.size());
  const ::onnx::NodeProto* part = add ? made_by(g, add->other, "Sub") : nullptr;
  const auto normalisation =
      part != nullptr && part->input_size() == 2 ? g.reals(part->input(0), out.k) : std::nullopt;
  const auto half =
      normalisation ? constant_operand(g, made_by(g, part->input(1), "Mul"), 1) : std::nullopt;
  if (!add || !normalisation || !half || half->values[0] != 0.5) {
    missing(g, "the joint log-likelihood is not Add(" + std::to_string(out.k) +
                   " log priors, Sub(" + std::to_string(out.k) +
                   " normalisations, Mul(the summed squares, 0.5)))");
  }
  const ::onnx::NodeProto* sum = made_by(g, half->other, "ReduceSum");
  const ::onnx::NodeProto* divide =
      sum != nullptr && sums_last_axis(g, *sum) ? made_by(g, sum->input(0), "Div") : nullptr;
  const ::onnx::NodeProto* power = divide != nullptr && divide->input_size() == 2
                                       ? made_by(g, divide->input(0), "Pow")
                                       : nullptr;
  const auto two =
      power != nullptr && power->input_size() == 2 ? g.reals(power->input(1), 1) : std::nullopt;
  const ::onnx::NodeProto* differences =
      two && (*two)[0] == 2.0 ? made_by(g, power->input(0), "Sub") : nullptr;
  const ::onnx::NodeProto* reshape = differences != nullptr && differences->input_size() == 2
                                         ? made_by(g, differences->input(0), "Reshape")
                                         : nullptr;
  if (reshape == nullptr || !g.is_features(reshape->input(0))) {
    missing(g,
            "the summed squares are not ReduceSum(Div(Pow(Sub(Reshape(features), theta), 2), "
            "var))");
  }
  const Tensor* theta = g.constant(differences->input(1));
  const auto theta_values = g.reals(differences->input(1));
  if (theta == nullptr || theta->rank() != 3 || theta->shape()[1] != out.k || !theta_values) {
    NodeAttributes(*differences)
        .fail("theta is not a 1 x " + std::to_string(out.k) + " x p real constant");
  }
  out.p = theta->shape()[2];
  const auto var = g.reals(divide->input(1), out.k * out.p);
  if (!var) {
    NodeAttributes(*divide).fail("var is not a real constant of theta's shape");
  }
  if (g.declared_width() > 0 && g.declared_width() != out.p) {
    throw shape_error("onnx: onnx::to_estimator<" + std::string(target) + ">: means of " +
                      std::to_string(out.p) + " features, the graph input has " +
                      std::to_string(g.declared_width()));
  }
  const auto p = static_cast<std::size_t>(out.p);
  const std::vector<std::int64_t> file_classes = out.classes;
  out.classes.clear();
  for (const std::size_t c : label_order(file_classes)) {
    // The normalisation is a function of var: a file whose two disagree is not a GaussianNB
    // (1e-4: a float32 file rounds both).
    double expected = 0.0;
    for (std::size_t j = 0; j < p; ++j) {
      const double v = (*var)[c * p + j];
      if (!(v > 0.0) || !std::isfinite(v)) {
        NodeAttributes(*divide).fail("a variance is not positive and finite: " + std::to_string(v));
      }
      expected -= 0.5 * std::log(2.0 * std::numbers::pi * v);
    }
    const double given = (*normalisation)[c];
    if (!(std::abs(given - expected) <= 1e-4 * std::max(1.0, std::abs(expected)))) {
      NodeAttributes(*part).fail("the normalisation of class " + std::to_string(c) + " is " +
                                 std::to_string(given) + ", -1/2 sum log(2 pi var) is " +
                                 std::to_string(expected));
    }
    out.classes.push_back(file_classes[c]);
    out.log_prior.push_back(add->values[c]);
    for (std::size_t j = 0; j < p; ++j) {
      out.theta.push_back((*theta_values)[c * p + j]);
      out.var.push_back((*var)[c * p + j]);
    }
  }
  return out;
}

}  // namespace onelearn::onnx::detail
