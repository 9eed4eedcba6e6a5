#pragma once
/**
 * \file
 * \brief The fitted onelearn estimator that an ONNX-ML model describes (skl2onnx's or onelearn's).
 * \ingroup onnx
 *
 * \code
 * #include <onelearn/onnx/to_estimator.hpp>
 * namespace lm = onelearn::linear_model;
 * namespace pp = onelearn::preprocessing;
 *
 * ::onnx::ModelProto proto = onelearn::onnx::read_model_proto("logreg.onnx");  // skl2onnx's
 * auto clf = onelearn::onnx::to_estimator<lm::LogisticRegression<double>>(proto);
 * onelearn::Matrix<double> proba = clf.predict_proba(X);   // as scikit-learn's predict_proba
 *
 * auto scaler = onelearn::onnx::to_estimator<pp::StandardScaler<float>>("scaler.onnx");
 * auto pipe = onelearn::onnx::to_estimator<
 *     onelearn::pipeline::Pipeline<pp::StandardScaler<double>, lm::LogisticRegression<double>>>(
 *     "pipe.onnx");
 * \endcode
 *
 * onnx::to_estimator<E>(model): the fitted onelearn estimator E that an ONNX-ML model
 * (a ModelProto, a file, or an onnx::Graph) describes, as scikit-learn's converters (skl2onnx)
 * and onelearn's exporter (onnx/export.hpp) write them. The result is an ordinary fitted
 * estimator (made with E::from_fitted): predict, predict_proba, transform, score, refit.
 *
 * \par Which graphs
 * One chain from the single graph input through the model nodes (ai.onnx.ml), each reading the
 * previous one's first output, possibly through Identity or Cast (to float32/float64) nodes:
 * - `linear_model::LinearRegression<T>`, `Ridge<T>`: one LinearRegressor, targets = 1,
 *   post_transform NONE; coef = coefficients, intercept = intercepts[0] (0 when absent).
 * - `linear_model::LogisticRegression<T>`: one LinearClassifier with classlabels_ints, k >= 2:
 *   - k > 2: k coefficient rows, post_transform SOFTMAX (the multinomial model);
 *   - k = 2, one row: post_transform LOGISTIC (ONNX-ML's binary case);
 *   - k = 2, two rows: LOGISTIC with rows (-w, w) and intercepts (-b, b), as skl2onnx and
 *     onelearn write a binary LogisticRegression (coef = w), or SOFTMAX of any two rows
 *     (coef = w1 - w0, which gives the same probabilities).
 *   Labels in any order (rows are reordered to the sorted classes() that fit would give). The
 *   multi_class attribute is ignored (skl2onnx writes 1 for multinomial, onelearn 0; runtimes
 *   do not read it).
 * - `preprocessing::StandardScaler<T>`: one Scaler; mean = offset, scale = 1 / scale (in
 *   double); with_mean is set when some offset is nonzero, with_std when some scale is not 1
 *   (the transform is the same either way); a single offset or scale value applies to every
 *   feature (the number of features then comes from the other attribute or the graph input).
 * - `tree::DecisionTreeClassifier<T>`, `DecisionTreeRegressor<T>`, `ensemble::RandomForest*`,
 *   `ExtraTrees*`: one TreeEnsembleClassifier (classlabels_int64s) or TreeEnsembleRegressor,
 *   BRANCH_LEQ splits, post_transform NONE, no base values, as skl2onnx and onelearn write them
 *   (layouts in onnx/detail/tree_ensemble_reader.hpp); one tree for a DecisionTree*. The
 *   impurities and sample counts are not in the file: feature_importances() are all 0.
 *   Float64 files (the trees walked in plain operators, onnx/export/tree_walk.hpp) are folded
 *   back into that node first (onnx/detail/tree_walk_fold.hpp): thresholds and leaf values
 *   come back in double.
 * - `ensemble::HistGradientBoostingClassifier<T>`, `HistGradientBoostingRegressor<T>`: one
 *   TreeEnsembleClassifier (post_transform LOGISTIC for two classes, SOFTMAX for more) or
 *   TreeEnsembleRegressor (SUM) with base_values, as skl2onnx and onelearn write them (layouts
 *   in onnx/detail/boosting_reader.hpp). Leaf values and thresholds come back as float
 *   (float64 files, the trees walked in plain operators: in double, and the baseline too);
 *   bin_thresholds(), train_score() and validation_score() are empty.
 * - `neighbors::KNeighborsClassifier<T>`, `KNeighborsRegressor<T>`: the plain-operator graph
 *   onnx/export/neighbors.hpp writes (read in onnx/detail/neighbors_reader.hpp): its training
 *   rows, the TopK's K as n_neighbors, weights "distance" when the TopK's distances are used,
 *   and each row's label or target; refitted on those rows (under exec::mpi each rank keeps
 *   its block of them, in order). skl2onnx's k-NN layouts (a Scan
 *   loop, or com.microsoft's CDist) are not read.
 * - `preprocessing::MinMaxScaler<T>`, `MaxAbsScaler<T>`: one Scaler (MaxAbsScaler: offset 0);
 *   the file holds the transform only, so the scaler is refitted on the rows that give it
 *   (MaxAbsScaler: one row of 1 / scale; MinMaxScaler: data_min and data_max, from the
 *   metadata's feature_range or (0, 1)); n_samples_seen() is that fit's. A MinMaxScaler
 *   exported with clip = true (a Clip node follows) is not read.
 * - `preprocessing::LabelEncoder<T>` (int64 or real labels): one LabelEncoder, keys_int64s (or
 *   keys_floats) the classes in increasing order, values_int64s their codes 0..k-1 (onelearn's
 *   and skl2onnx's layout); the encoder is refitted on those classes (collective under
 *   exec::mpi, as fit is).
 * - `preprocessing::Normalizer<T>`, `SimpleImputer<T>`, `PolynomialFeatures<T>`,
 *   `OneHotEncoder<T>` (numeric): the plain-operator graphs onnx/export/preprocessing.hpp writes,
 *   float32 or float64, and skl2onnx's ai.onnx.ml Normalizer, Imputer and per-feature
 *   OneHotEncoder nodes (read in onnx/detail/transform_reader.hpp): the norm; the statistics
 *   (a column the file drops is a dropped column); the products, whose degree, include_bias
 *   and interaction_only must give them in the file's order; each feature's categories. Each
 *   is refitted on rows that give those values back (under exec::mpi rank 0 holds the rows and
 *   a rank whose graph is refused raises that error on every rank). The parameters the graph
 *   cannot show come from the metadata: SimpleImputer's strategy ("constant" when the values
 *   are one fill_value), OneHotEncoder's handle_unknown in onelearn's layout (whose graph
 *   always ignores unknown values; skl2onnx's encoders say it with zeros).
 * - `cluster::KMeans<T>`: the plain-operator graph onnx/export/cluster.hpp writes (float32 or
 *   float64; read in onnx/detail/k_means_reader.hpp): the centres, given as the initial
 *   centres of a fit on those rows, which ends where it starts; the metadata's parameters.
 *   inertia() (0), n_iter() (1) and labels() (0..k-1) are that fit's.
 * - `naive_bayes::MultinomialNB<T>`: one LinearClassifier (float64 files: its plain-operator
 *   form, folded as the linear models') with one coefficient row per class (feature_log_prob,
 *   also for two classes), intercepts class_log_prior and SOFTMAX, as onelearn writes it; made
 *   with MultinomialNB::from_fitted (class_count() and feature_count() are not in the file: a
 *   not_fitted_error). Also scikit-learn's converter's graph (MatMul, Add, then ArgMax and
 *   ReduceLogSumExp; onnx/detail/skl2onnx_naive_bayes_reader.hpp), read whole.
 * - `naive_bayes::GaussianNB<T>`: the graph onnx/export/naive_bayes.hpp writes (float32 or
 *   float64; read in onnx/detail/gaussian_nb_reader.hpp): theta from the differences, var from
 *   the weights -1 / (2 var), the priors from the constants that add log prior and the
 *   normalisation, the classes from the identity LinearClassifier; made with
 *   GaussianNB::from_fitted (class_count() and epsilon() are not in the file). Also scikit-learn's
 *   converter's graph (Reshape, Sub theta, Pow, Div var, ReduceSum, then ArgMax and
 *   ReduceLogSumExp; onnx/detail/skl2onnx_naive_bayes_reader.hpp), whose normalisation
 *   constants must agree with its variances.
 * - `decomposition::PCA<T>`: the plain-operator graph onnx/export/decomposition.hpp writes
 *   (float32 or float64; read in onnx/detail/pca_reader.hpp): Sub of the mean, MatMul with the
 *   components transposed, with whiten a Div by sqrt(explained_variance), or the whitening
 *   folded into the matrix (columns of norm 1 / sqrt(explained_variance)), made with
 *   PCA::from_fitted. What the file does not carry, a fit on data's attributes
 *   (explained_variance_ratio(), singular_values(), noise_variance(), n_samples(), and
 *   explained_variance() without whiten), is a not_fitted_error.
 * - `pipeline::Pipeline<S...>` of any of the above, each step read as it is read alone. When
 *   every step is one model node, the chain of those nodes, one per step, in order (e.g.
 *   skl2onnx's or onelearn's StandardScaler + LogisticRegression). When a step is a graph of
 *   its own (PCA, GaussianNB, KMeans, the k-NN models, the plain-operator transformers; or a
 *   node type written as a graph, as skl2onnx writes MultinomialNB, when the chain does not
 *   read), the graph is cut where one value carries everything after it (onnx/detail/graph_segments.hpp)
 *   and each step is read from the pieces between two cuts, its input declared as wide as the
 *   previous step's output; the boundaries are those for which every step reads, each step
 *   taking the shortest span it reads (so a whitened PCA keeps its Div, a Normalizer that
 *   follows keeps its own). When no split reads, the error of the step that got furthest,
 *   restated with the pipeline's context. Step names and parameters: the metadata's
 *   "<step>__<param>" entries (a pipeline exported with names of its own comes back with them);
 *   without them, make_pipeline's names and default parameters.
 * Float64 files: ONNX-ML's Scaler, LinearRegressor and LinearClassifier compute in float32, so
 * a float64 export writes them in plain operators (Sub and Mul; MatMul and Add, then Sigmoid or
 * Softmax, and ArgMax and Gather for the label). Those are folded back into the ai.onnx.ml
 * nodes, their values in double, before the chain is read (onnx/detail/float64_layouts.hpp), so
 * the linear models, the three scalers and their pipelines read from either precision, and
 * scikit-learn's float64 linear layouts (MatMul, Add) too.
 * After the last model node, parameter-free nodes on its outputs are accepted: Identity, Cast
 * (the label to int64, scores to float32/float64), and for a classifier the Normalizer (norm
 * L1: its probabilities already sum to 1) and ZipMap (classlabels_int64s equal to the
 * classifier's labels) that skl2onnx appends.
 *
 * Parameters: a model exported by onelearn carries its parameters in metadata_props
 * ("estimator", "parameters"); when "estimator" names E (or "Pipeline" for a pipeline), they are
 * restored (numbers as printed there: 6 significant digits); a value that does not parse or set
 * is left at its default. Otherwise E's default Params, with fit_intercept true.
 *
 * \par Differences from scikit-learn
 * - (No scikit-learn counterpart: skl2onnx converts one way.) Attributes that the file does not
 *   carry are not restored: LinearRegression's rank() and singular() (a not_fitted_error),
 *   LogisticRegression's n_iter() (0; converged() is true), StandardScaler's var() (scale²)
 *   and n_samples_seen() (0).
 * - The coefficients of an ONNX-ML node are float32: a double model exported in float32 comes
 *   back with its attributes rounded to float32; exported in float64 it comes back whole
 *   (StandardScaler's scale to rounding: the file holds its reciprocal).
 *
 * Errors (onnx/errors.hpp), each naming the node, the op and the problem:
 *   unsupported_error  an operator other than those above (kind op), a model node of another
 *                      op than E needs (kind op), string class labels (kind data_type), a
 *                      post_transform, targets count, Normalizer norm or Scaler scale that E
 *                      cannot express (kind attribute)
 *   graph_error        a node with more or fewer inputs or outputs than its operator's
 *                      schema allows, not one chain (several graph inputs, branches, a node
 *                      reading neither the input nor a model output), a wrong number of
 *                      model nodes, a missing classlabels_ints, an attribute of the wrong type,
 *                      ZipMap labels that differ from the classifier's, values E rejects (NaN,
 *                      duplicate labels)
 *   onelearn::shape_error  coefficient, intercept, offset or scale counts that disagree with
 *                      each other, with the number of classes, with the graph input's declared
 *                      width or with the previous step
 *   format_error, io_error  (from a path) a file that cannot be read or parsed
 *   invalid_argument   (with an execution policy) ranks given different models, on every rank
 *
 * Needs ONNX_ML=1 and ONNX_NAMESPACE=onnx and links onnx_proto and protobuf (the target
 * onelearn::onnx).
 */

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/onnx/detail/boosting_reader.hpp"
#include "onelearn/onnx/detail/float64_layouts.hpp"
#include "onelearn/onnx/detail/gaussian_nb_reader.hpp"
#include "onelearn/onnx/detail/graph_segments.hpp"
#include "onelearn/onnx/detail/k_means_reader.hpp"
#include "onelearn/onnx/detail/neighbors_reader.hpp"
#include "onelearn/onnx/detail/node_arity.hpp"
#include "onelearn/onnx/detail/pca_reader.hpp"
#include "onelearn/onnx/detail/skl2onnx_naive_bayes_reader.hpp"
#include "onelearn/onnx/detail/transform_reader.hpp"
#include "onelearn/onnx/detail/tree_ensemble_reader.hpp"
#include "onelearn/onnx/detail/tree_walk_fold.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/graph.hpp"
#include "onelearn/onnx/load.hpp"
// standard_scaler.hpp before any other preprocessing header (see onnx/export/preprocessing.hpp).
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "onelearn/preprocessing/label_encoder.hpp"
#include "onelearn/preprocessing/max_abs_scaler.hpp"
#include "onelearn/preprocessing/min_max_scaler.hpp"
#include "onelearn/preprocessing/normalizer.hpp"
#include "onelearn/preprocessing/one_hot_encoder.hpp"
#include "onelearn/preprocessing/polynomial_features.hpp"
#include "onelearn/preprocessing/simple_imputer.hpp"
// (keep the order)
#include "onelearn/linear_model/linear_regression.hpp"
#include "onelearn/linear_model/logistic_regression.hpp"
#include "onelearn/linear_model/ridge.hpp"
#include "onelearn/pipeline.hpp"
#include "onelearn/cluster/k_means.hpp"
#include "onelearn/decomposition/pca.hpp"
#include "onelearn/naive_bayes/gaussian_nb.hpp"
#include "onelearn/naive_bayes/multinomial_nb.hpp"
#include "onelearn/ensemble/forest_classifier.hpp"
#include "onelearn/ensemble/forest_regressor.hpp"
#include "onelearn/ensemble/hist_gradient_boosting.hpp"
#include "onelearn/neighbors/k_neighbors_classifier.hpp"
#include "onelearn/neighbors/k_neighbors_regressor.hpp"
#include "onelearn/tree/decision_tree_classifier.hpp"
#include "onelearn/tree/decision_tree_regressor.hpp"

namespace onelearn::onnx {

namespace detail {

/// The model nodes of a graph in data-flow order and what follows the last one.
struct ImportChain {
  std::vector<const ::onnx::NodeProto*> steps;  ///< Scaler / LinearRegressor / LinearClassifier
  std::int64_t input_features = -1;             ///< the graph input's declared width, or -1
  /// Nodes reading the last step's outputs, with the index of that output they derive from.
  std::vector<std::pair<const ::onnx::NodeProto*, int>> trailing;
  std::map<std::string, std::string> metadata;  ///< metadata_props
};

inline bool import_is_ml(const ::onnx::NodeProto& n) { return n.domain() == "ai.onnx.ml"; }
inline bool import_is_default(const ::onnx::NodeProto& n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}
inline bool import_is_model_node(const ::onnx::NodeProto& n) {
  return import_is_ml(n) && (n.op_type() == "Scaler" || n.op_type() == "LinearRegressor" ||
                             n.op_type() == "LinearClassifier" || n.op_type() == "LabelEncoder" ||
                             n.op_type() == "TreeEnsembleClassifier" ||
                             n.op_type() == "TreeEnsembleRegressor");
}
/// Identity, Cast, Normalizer, ZipMap: nodes without parameters that the import may skip.
inline bool import_is_passthrough(const ::onnx::NodeProto& n) {
  return (import_is_default(n) && (n.op_type() == "Identity" || n.op_type() == "Cast")) ||
         (import_is_ml(n) && (n.op_type() == "Normalizer" || n.op_type() == "ZipMap"));
}

/// The node's attributes, read by onnx's one attribute reader (onnx/detail/attributes.hpp).
inline NodeAttributes import_context(const ::onnx::NodeProto& n) { return NodeAttributes(n); }

inline std::string import_problem(const ::onnx::NodeProto& n, std::string_view target,
                                  const std::string& problem) {
  return NodeAttributes::describe(n) + ": onnx::to_estimator<" + std::string(target) + ">: " + problem;
}

[[noreturn]] inline void import_fail(const ::onnx::NodeProto& n, std::string_view target,
                                     const std::string& problem) {
  throw graph_error(import_problem(n, target, problem));
}
[[noreturn]] inline void import_fail_shape(const ::onnx::NodeProto& n, std::string_view target,
                                           const std::string& problem) {
  throw shape_error(import_problem(n, target, problem));
}
[[noreturn]] inline void import_unsupported(const ::onnx::NodeProto& n, std::string_view target,
                                            unsupported_kind kind, const std::string& what,
                                            const std::string& problem) {
  throw unsupported_error(kind, what, import_problem(n, target, problem));
}

/// Finds the chain (see the top of this header) or says why the graph is not one.
inline ImportChain import_chain(const ::onnx::ModelProto& model, std::string_view target) {
  const auto& g = model.graph();
  const std::string whole = "onnx: onnx::to_estimator<" + std::string(target) + ">: ";
  ImportChain chain;
  for (const auto& kv : model.metadata_props()) chain.metadata[kv.key()] = kv.value();

  // Every node a model node or a parameter-free one.
  for (const auto& n : g.node()) {
    if (import_is_model_node(n) || import_is_passthrough(n)) continue;
    const std::string domain = n.domain().empty() ? std::string("ai.onnx") : n.domain();
    import_unsupported(n, target, unsupported_kind::op, n.op_type(),
                       "unsupported operator " + n.op_type() + " (domain " + domain +
                           "); expected the ai.onnx.ml Scaler, LinearRegressor, "
                           "LinearClassifier, LabelEncoder, TreeEnsembleClassifier or "
                           "TreeEnsembleRegressor "
                           "and the parameter-free Identity, Cast, Normalizer, ZipMap");
  }
  // The one graph input (the features).
  std::set<std::string> initializers;
  for (const auto& init : g.initializer()) initializers.insert(init.name());
  const ::onnx::ValueInfoProto* input = nullptr;
  int input_count = 0;
  for (const auto& in : g.input()) {
    if (initializers.count(in.name()) != 0) continue;
    ++input_count;
    input = &in;
  }
  if (input_count != 1) {
    throw graph_error(whole + "expected one graph input (the features), found " +
                      std::to_string(input_count));
  }
  if (input->type().has_tensor_type() && input->type().tensor_type().has_shape()) {
    const auto& shape = input->type().tensor_type().shape();
    if (shape.dim_size() == 2 && shape.dim(1).has_dim_value()) {
      chain.input_features = shape.dim(1).dim_value();
    }
  }
  // Who produces each value.
  std::map<std::string, const ::onnx::NodeProto*> producer;
  for (const auto& n : g.node())
    for (const auto& out : n.output())
      if (!out.empty()) producer[out] = &n;
  // Where a value comes from, following parameter-free nodes back: the graph input (nullptr,
  // -1), a model node's output k (node, k), or nothing the import understands (nullptr, -2).
  // `path` collects the nodes passed through.
  const auto origin =
      [&](std::string value,
          std::vector<const ::onnx::NodeProto*>* path) -> std::pair<const ::onnx::NodeProto*, int> {
    for (int hops = 0; hops <= g.node_size(); ++hops) {
      if (value == input->name()) return {nullptr, -1};
      const auto it = producer.find(value);
      if (it == producer.end()) return {nullptr, -2};
      const ::onnx::NodeProto& n = *it->second;
      if (import_is_model_node(n)) {
        for (int k = 0; k < n.output_size(); ++k)
          if (n.output(k) == value) return {&n, k};
      }
      if (path != nullptr) path->push_back(&n);
      if (n.input_size() != 1) {
        import_fail(n, target, "expected one input, found " + std::to_string(n.input_size()));
      }
      value = n.input(0);
    }
    return {nullptr, -2};  // a cycle
  };
  // Each model node reads the graph input or the previous model node's first output, through
  // Identity or Cast to float only (a Cast to an integer type would change the data).
  std::set<const ::onnx::NodeProto*> on_path;
  std::map<const ::onnx::NodeProto*, const ::onnx::NodeProto*> next;  // predecessor -> node
  const ::onnx::NodeProto* first = nullptr;
  for (const auto& n : g.node()) {
    if (!import_is_model_node(n)) continue;
    if (n.input_size() != 1) {
      import_fail(n, target, "expected one input, found " + std::to_string(n.input_size()));
    }
    std::vector<const ::onnx::NodeProto*> path;
    const auto [from, k] = origin(n.input(0), &path);
    for (const ::onnx::NodeProto* p : path) {
      const bool float_cast = p->op_type() == "Cast" && import_is_default(*p) &&
                              (import_context(*p).get_int("to", 0) == ::onnx::TensorProto::FLOAT ||
                               import_context(*p).get_int("to", 0) == ::onnx::TensorProto::DOUBLE);
      if (!(p->op_type() == "Identity" && import_is_default(*p)) && !float_cast) {
        import_fail(*p, target,
                    "between the features and the model nodes only Identity and Cast to "
                    "float32/float64 are accepted");
      }
      on_path.insert(p);
    }
    if (k == -2 || (from != nullptr && k != 0)) {
      import_fail(n, target,
                  "input '" + n.input(0) +
                      "' is neither the graph input nor the first output of another "
                      "model node");
    }
    if (from == nullptr) {
      if (first != nullptr) {
        import_fail(n, target,
                    "a second model node reading the graph input (first: '" + first->name() +
                        "'); expected one chain");
      }
      first = &n;
    } else {
      if (next.count(from) != 0) {
        import_fail(
            n, target,
            "a second model node reading the output of '" + from->name() + "'; expected one chain");
      }
      next[from] = &n;
    }
  }
  if (first == nullptr) {
    throw graph_error(whole +
                      "expected an ai.onnx.ml Scaler, LinearRegressor or "
                      "LinearClassifier node, found none");
  }
  for (const ::onnx::NodeProto* n = first; n != nullptr;) {
    chain.steps.push_back(n);
    const auto it = next.find(n);
    n = it == next.end() ? nullptr : it->second;
  }
  // (Every model node has one predecessor and each predecessor one successor, so the chain
  // from `first` reaches all of them unless some form a cycle among themselves.)
  std::size_t model_nodes = 0;
  for (const auto& n : g.node()) model_nodes += import_is_model_node(n) ? 1 : 0;
  if (chain.steps.size() != model_nodes) {
    throw graph_error(whole + "the model nodes do not form one chain from the graph input");
  }
  // The remaining nodes follow the last model node.
  const ::onnx::NodeProto* last = chain.steps.back();
  for (const auto& n : g.node()) {
    if (import_is_model_node(n) || on_path.count(&n) != 0) continue;
    if (n.input_size() != 1) {
      import_fail(n, target, "expected one input, found " + std::to_string(n.input_size()));
    }
    const auto [from, k] = origin(n.input(0), nullptr);
    if (from != last) {
      import_fail(n, target,
                  "reads '" + n.input(0) + "', which is not an output of the last model node '" +
                      last->name() + "'; expected one chain");
    }
    chain.trailing.emplace_back(&n, k);
  }
  return chain;
}

/// Checks the nodes after the last model node: Identity anywhere; Cast to float32/float64, or
/// to int64 on a classifier's label; Normalizer (L1) and ZipMap on a classifier's scores only.
/// Returns the ZipMap nodes, whose labels the classifier checks.
inline std::vector<const ::onnx::NodeProto*> import_check_trailing(const ImportChain& chain,
                                                                   std::string_view target,
                                                                   bool classifier) {
  std::vector<const ::onnx::NodeProto*> zipmaps;
  for (const auto& [n, k] : chain.trailing) {
    const NodeAttributes ctx = import_context(*n);
    const std::string& op = n->op_type();
    if (op == "Identity") continue;
    if (op == "Cast") {
      const std::int64_t to = ctx.get_int("to", 0);
      if (to == ::onnx::TensorProto::FLOAT || to == ::onnx::TensorProto::DOUBLE) continue;
      if (classifier && k == 0 && to == ::onnx::TensorProto::INT64) continue;
      import_unsupported(*n, target, unsupported_kind::attribute,
                         "Cast to " + onnx_type_name(static_cast<std::int32_t>(to)),
                         "a Cast to " + onnx_type_name(static_cast<std::int32_t>(to)) +
                             " changes the model's outputs");
    }
    if (!classifier || k != 1) {
      import_unsupported(*n, target, unsupported_kind::op, op,
                         op + " is accepted only on a classifier's probabilities");
    }
    if (op == "Normalizer") {
      const std::string norm = ctx.get_string("norm", "MAX");
      if (norm != "L1") {
        import_unsupported(
            *n, target, unsupported_kind::attribute, "norm " + norm,
            "unsupported norm " + norm + " (expected L1, which leaves probabilities unchanged)");
      }
    } else {
      zipmaps.push_back(n);
    }
  }
  return zipmaps;
}

// ---- parameters from onelearn's metadata ----

inline std::optional<ParamValue> import_parse_param(std::string_view text) {
  if (text == "true") return ParamValue(true);
  if (text == "false") return ParamValue(false);
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    return ParamValue(std::string(text.substr(1, text.size() - 2)));
  }
  const std::string s(text);
  if (s.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    if (s.find_first_of(".eEin") == std::string::npos) {
      const long long v = std::stoll(s, &used);
      if (used == s.size()) return ParamValue(static_cast<std::int64_t>(v));
    }
    const double d = std::stod(s, &used);
    if (used == s.size()) return ParamValue(d);
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

/// "C=1, fit_intercept=true" (params::to_string) as (name, text) pairs, in order.
inline std::vector<std::pair<std::string, std::string>> import_param_items(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find(", ", begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(begin, end - begin);
    const std::size_t eq = item.find('=');
    if (eq != std::string::npos) out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    begin = end + 2;
  }
  return out;
}

/// The same as name -> text.
inline std::map<std::string, std::string> import_split_params(const std::string& text) {
  std::map<std::string, std::string> out;
  for (auto& [name, value] : import_param_items(text)) out[name] = std::move(value);
  return out;
}

/// A model's metadata_props as key -> value.
inline std::map<std::string, std::string> import_metadata(const ::onnx::ModelProto& model) {
  std::map<std::string, std::string> out;
  for (const auto& kv : model.metadata_props()) out[kv.key()] = kv.value();
  return out;
}

/// Params with the values named `prefix` + name in `values` that parse and set; the rest at
/// their defaults (the metadata is informative, never a reason to refuse a model).
template <class P>
P import_params(const std::map<std::string, std::string>& values, const std::string& prefix) {
  P p{};
  for (const std::string_view name : params::names<P>()) {
    const auto it = values.find(prefix + std::string(name));
    if (it == values.end()) continue;
    const std::optional<ParamValue> v = import_parse_param(it->second);
    if (!v) continue;
    P trial = p;
    try {
      params::set(trial, name, *v);
      p = trial;
    } catch (const std::exception&) {
    }
  }
  return p;
}

/// What a reader needs besides its node.
struct ImportStep {
  const ::onnx::NodeProto& node;
  std::int64_t features;  ///< the width of the node's input, -1 when not declared
  const ImportChain& chain;
  bool last;           ///< the last model node: the trailing nodes are its
  std::string target;  ///< for messages: "LogisticRegression", "Pipeline step 'ridge' (Ridge)"
  const std::map<std::string, std::string>* params;  ///< metadata parameters, or nullptr
  std::string prefix;                                ///< of this step's names in `params`
};

inline void import_expect_op(const ImportStep& s, std::string_view op) {
  if (import_is_ml(s.node) && s.node.op_type() == op) return;
  import_unsupported(
      s.node, s.target, unsupported_kind::op, s.node.op_type(),
      "expected an ai.onnx.ml " + std::string(op) + " node, found " + s.node.op_type());
}

template <class P>
P import_step_params(const ImportStep& s) {
  return s.params != nullptr ? import_params<P>(*s.params, s.prefix) : P{};
}

/// E::from_fitted(...), its errors restated as the node's: shape_error stays one, anything
/// else it rejects (NaN, duplicate labels) is a graph_error.
template <class F>
auto import_make(const ImportStep& s, F&& make) {
  try {
    return make();
  } catch (const shape_error& e) {
    import_fail_shape(s.node, s.target, e.what());
  } catch (const onelearn::invalid_argument& e) {
    import_fail(s.node, s.target, e.what());
  }
}

/// LinearRegression, Ridge: one LinearRegressor.
template <class E, class T, exec::ExecutionPolicy Exec>
E import_regressor(const ImportStep& s, Exec exec) {
  import_expect_op(s, "LinearRegressor");
  if (s.last) (void)import_check_trailing(s.chain, s.target, false);
  const NodeAttributes ctx = import_context(s.node);
  const std::int64_t targets = ctx.get_int("targets", 1);
  if (targets != 1) {
    import_unsupported(s.node, s.target, unsupported_kind::attribute,
                       "targets " + std::to_string(targets),
                       "targets = " + std::to_string(targets) + ": the estimator has one target");
  }
  const std::string post = ctx.get_string("post_transform", "NONE");
  if (post != "NONE") {
    import_unsupported(s.node, s.target, unsupported_kind::attribute, "post_transform " + post,
                       "unsupported post_transform " + post + " (expected NONE)");
  }
  const std::vector<double> coef = ctx.get_reals("coefficients");
  const std::vector<double> intercepts = ctx.get_reals("intercepts");
  if (coef.empty()) import_fail_shape(s.node, s.target, "attribute 'coefficients' is empty");
  if (s.features >= 0 && static_cast<std::int64_t>(coef.size()) != s.features) {
    import_fail_shape(s.node, s.target,
                      "coefficients has " + std::to_string(coef.size()) +
                          " values, the input has " + std::to_string(s.features) + " features");
  }
  if (intercepts.size() > 1) {
    import_fail_shape(
        s.node, s.target,
        "intercepts has " + std::to_string(intercepts.size()) + " values, expected 1 (one target)");
  }
  Vector<T> c(static_cast<index_t>(coef.size()));
  for (index_t j = 0; j < c.size(); ++j) c(j) = static_cast<T>(coef[static_cast<std::size_t>(j)]);
  const T b = intercepts.empty() ? T(0) : static_cast<T>(intercepts[0]);
  auto params = import_step_params<typename E::Params>(s);
  if (b != T(0)) params.fit_intercept = true;
  return import_make(s, [&] { return E::from_fitted(params, c, b, std::move(exec)); });
}

/// A LinearClassifier's scores as the file gives them: its labels (in the file's order and
/// sorted), one score row per intercept (W, b; p columns), the post_transform. The node's
/// labels and coefficient counts are checked, and the ZipMap labels after it (when it is the
/// last step) against the classifier's.
struct LinearScores {
  std::vector<std::int64_t> labels, sorted;
  Matrix<double> W;
  Vector<double> b;
  std::string post;
  /// The score row of `label` (the position of label in the file's labels).
  [[nodiscard]] index_t index_of(std::int64_t label) const {
    return static_cast<index_t>(std::find(labels.begin(), labels.end(), label) - labels.begin());
  }
};

inline LinearScores import_linear_scores(const ImportStep& s) {
  import_expect_op(s, "LinearClassifier");
  const std::vector<const ::onnx::NodeProto*> zipmaps =
      s.last ? import_check_trailing(s.chain, s.target, true)
             : std::vector<const ::onnx::NodeProto*>{};
  const NodeAttributes ctx = import_context(s.node);
  if (ctx.has("classlabels_strings")) {
    import_unsupported(s.node, s.target, unsupported_kind::data_type, "string",
                       "unsupported data type string (class labels): onelearn's labels are "
                       "integers (classlabels_ints)");
  }
  LinearScores out;
  out.labels = ctx.get_ints("classlabels_ints").value_or(std::vector<std::int64_t>{});
  const auto k = static_cast<index_t>(out.labels.size());
  if (k < 2) {
    import_fail(
        s.node, s.target,
        "attribute 'classlabels_ints' must list at least 2 labels, found " + std::to_string(k));
  }
  const std::vector<double> coef = ctx.get_reals("coefficients");
  const std::vector<double> intercepts = ctx.get_reals("intercepts");
  // Score rows: one per intercept; without intercepts, from the input's width, else k.
  std::size_t rows = intercepts.size();
  if (rows == 0) {
    rows = s.features > 0 ? coef.size() / static_cast<std::size_t>(s.features)
                          : static_cast<std::size_t>(k);
  }
  if (rows == 0 || coef.empty() || coef.size() % rows != 0) {
    import_fail_shape(s.node, s.target,
                      "coefficients has " + std::to_string(coef.size()) +
                          " values, not a whole number of rows for " + std::to_string(rows) +
                          " score rows (intercepts has " + std::to_string(intercepts.size()) +
                          " values)");
  }
  const auto p = static_cast<index_t>(coef.size() / rows);
  if (s.features >= 0 && p != s.features) {
    import_fail_shape(s.node, s.target,
                      "coefficients has " + std::to_string(coef.size()) +
                          " values: " + std::to_string(rows) + " rows of " + std::to_string(p) +
                          ", the input has " + std::to_string(s.features) + " features");
  }
  const auto n_rows = static_cast<index_t>(rows);
  out.W.resize(n_rows, p);
  out.b = Vector<double>::Zero(n_rows);
  for (index_t r = 0; r < n_rows; ++r) {
    for (index_t j = 0; j < p; ++j) out.W(r, j) = coef[static_cast<std::size_t>(r * p + j)];
    if (!intercepts.empty()) out.b(r) = intercepts[static_cast<std::size_t>(r)];
  }
  out.sorted = out.labels;
  std::sort(out.sorted.begin(), out.sorted.end());
  if (std::adjacent_find(out.sorted.begin(), out.sorted.end()) != out.sorted.end()) {
    import_fail(s.node, s.target, "attribute 'classlabels_ints' lists a label twice");
  }
  for (const ::onnx::NodeProto* z : zipmaps) {
    const NodeAttributes zc = import_context(*z);
    if (zc.has("classlabels_strings")) {
      import_unsupported(*z, s.target, unsupported_kind::data_type, "string",
                         "unsupported data type string (ZipMap class labels)");
    }
    if (zc.get_ints("classlabels_int64s").value_or(std::vector<std::int64_t>{}) != out.labels) {
      import_fail(*z, s.target, "classlabels_int64s differ from the classifier's classlabels_ints");
    }
  }
  out.post = ctx.get_string("post_transform", "NONE");
  return out;
}

/// LogisticRegression: one LinearClassifier (see the top of this header for the layouts).
template <class E, class T, exec::ExecutionPolicy Exec>
E import_classifier(const ImportStep& s, Exec exec) {
  const LinearScores scores = import_linear_scores(s);
  const std::vector<std::int64_t>& sorted = scores.sorted;
  const Matrix<double>& W = scores.W;
  const Vector<double>& b = scores.b;
  const auto k = static_cast<index_t>(sorted.size());
  const index_t p = W.cols();
  const index_t E_rows = W.rows();
  const auto index_of = [&](std::int64_t label) { return scores.index_of(label); };
  const std::string& post = scores.post;
  const auto refuse_post = [&](const std::string& expected) {
    import_unsupported(s.node, s.target, unsupported_kind::attribute, "post_transform " + post,
                       "unsupported post_transform " + post + " with " + std::to_string(E_rows) +
                           " score rows for " + std::to_string(k) + " classes (expected " +
                           expected + ")");
  };
  Matrix<double> C;
  Vector<double> c0;
  if (k > 2) {
    if (E_rows != k) {
      import_fail_shape(
          s.node, s.target,
          std::to_string(E_rows) + " score rows for " + std::to_string(k) + " class labels");
    }
    if (post == "LOGISTIC") {
      refuse_post(
          "SOFTMAX: LOGISTIC gives one-vs-rest probabilities, LogisticRegression is "
          "multinomial");
    }
    if (post != "SOFTMAX") refuse_post("SOFTMAX");
    C.resize(k, p);
    c0.resize(k);
    for (index_t c = 0; c < k; ++c) {
      const index_t from = index_of(sorted[static_cast<std::size_t>(c)]);
      C.row(c) = W.row(from);
      c0(c) = b(from);
    }
  } else {
    // Scores favouring the larger label, sorted[1]: the one row of classes()[1].
    const index_t hi = index_of(sorted[1]);
    if (E_rows == 1) {
      if (post != "LOGISTIC") refuse_post("LOGISTIC");
      // ONNX-ML's binary case: a positive score means labels[1].
      const double sign = hi == 1 ? 1.0 : -1.0;
      C = sign * W;
      c0 = sign * b;
    } else if (E_rows == 2) {
      const index_t lo = 1 - hi;
      if (post == "LOGISTIC") {
        // sigmoid of (-s, s) is (1 - p, p); two other rows are two independent sigmoids.
        if (W.row(0) != -W.row(1) || b(0) != -b(1)) {
          import_unsupported(s.node, s.target, unsupported_kind::attribute,
                             "post_transform LOGISTIC",
                             "post_transform LOGISTIC of two score rows that are not (-w, w) "
                             "with intercepts (-b, b): the probabilities do not sum to 1");
        }
        C = W.row(hi);
        c0 = b.segment(hi, 1);
      } else if (post == "SOFTMAX") {
        // softmax(z_lo, z_hi)[hi] = sigmoid(z_hi - z_lo).
        C = W.row(hi) - W.row(lo);
        c0 = Vector<double>::Constant(1, b(hi) - b(lo));
      } else {
        refuse_post("LOGISTIC or SOFTMAX");
      }
    } else {
      import_fail_shape(
          s.node, s.target,
          std::to_string(E_rows) + " score rows for 2 class labels (expected 1 or 2)");
    }
  }
  auto params = import_step_params<typename E::Params>(s);
  if (!c0.isZero(0)) params.fit_intercept = true;
  const Labels classes = Eigen::Map<const Labels>(sorted.data(), k);
  const Matrix<T> coef_t = C.template cast<T>();
  const Vector<T> intercept_t = c0.template cast<T>();
  return import_make(
      s, [&] { return E::from_fitted(params, coef_t, intercept_t, classes, std::move(exec)); });
}

/// MultinomialNB: one LinearClassifier whose coefficients are feature_log_prob (one row per
/// class, also for two classes), intercepts class_log_prior, SOFTMAX: its scores are the joint
/// log-likelihood. Rows are reordered to the sorted labels.
template <class E, class T, exec::ExecutionPolicy Exec>
E import_multinomial_nb(const ImportStep& s, Exec exec) {
  const LinearScores scores = import_linear_scores(s);
  const auto k = static_cast<index_t>(scores.sorted.size());
  if (scores.W.rows() != k) {
    import_fail_shape(s.node, s.target,
                      std::to_string(scores.W.rows()) + " score rows for " + std::to_string(k) +
                          " class labels (MultinomialNB has one per class)");
  }
  if (scores.post != "SOFTMAX") {
    import_unsupported(s.node, s.target, unsupported_kind::attribute,
                       "post_transform " + scores.post,
                       "unsupported post_transform " + scores.post +
                           " (expected SOFTMAX: MultinomialNB's probabilities are the softmax "
                           "of its joint log-likelihood)");
  }
  Matrix<T> log_prob(k, scores.W.cols());
  Vector<T> log_prior(k);
  for (index_t c = 0; c < k; ++c) {
    const index_t from = scores.index_of(scores.sorted[static_cast<std::size_t>(c)]);
    log_prob.row(c) = scores.W.row(from).template cast<T>();
    log_prior(c) = static_cast<T>(scores.b(from));
  }
  const Labels classes = Eigen::Map<const Labels>(scores.sorted.data(), k);
  const auto params = import_step_params<typename E::Params>(s);
  return import_make(
      s, [&] { return E::from_fitted(params, log_prob, log_prior, classes, std::move(exec)); });
}

/// A Scaler's transform, (x - offset) * scale, one value per feature (a single offset or scale
/// value applies to every feature; absent: 0 and 1).
struct ScalerValues {
  std::vector<double> offset, scale;
};

inline ScalerValues import_scaler_values(const ImportStep& s) {
  import_expect_op(s, "Scaler");
  const NodeAttributes ctx = import_context(s.node);
  const std::vector<double> offset = ctx.get_reals("offset");
  const std::vector<double> scale = ctx.get_reals("scale");
  if (offset.size() > 1 && scale.size() > 1 && offset.size() != scale.size()) {
    import_fail_shape(s.node, s.target,
                      "offset has " + std::to_string(offset.size()) + " values, scale " +
                          std::to_string(scale.size()));
  }
  std::int64_t p = static_cast<std::int64_t>(std::max(offset.size(), scale.size()));
  if (p <= 1) {
    if (s.features < 0) {
      import_fail(s.node, s.target,
                  "offset and scale have at most one value and the input's width is not "
                  "declared: the number of features is unknown");
    }
    p = s.features;
  }
  if (s.features >= 0 && p != s.features) {
    import_fail_shape(s.node, s.target,
                      "offset/scale have " + std::to_string(p) + " values, the input has " +
                          std::to_string(s.features) + " features");
  }
  const auto value = [](const std::vector<double>& v, std::int64_t j, double fallback) {
    if (v.empty()) return fallback;
    return v[v.size() == 1 ? 0 : static_cast<std::size_t>(j)];
  };
  ScalerValues out;
  for (std::int64_t j = 0; j < p; ++j) {
    out.offset.push_back(value(offset, j, 0.0));
    out.scale.push_back(value(scale, j, 1.0));
  }
  return out;
}

/// StandardScaler: one Scaler.
template <class E, class T, exec::ExecutionPolicy Exec>
E import_scaler(const ImportStep& s, Exec exec) {
  const ScalerValues values = import_scaler_values(s);
  if (s.last) (void)import_check_trailing(s.chain, s.target, false);
  const auto p = static_cast<std::int64_t>(values.offset.size());
  Vector<T> mean(p), divisor(p);
  bool centred = false, scaled = false;
  for (std::int64_t j = 0; j < p; ++j) {
    const double o = values.offset[static_cast<std::size_t>(j)];
    const double m = values.scale[static_cast<std::size_t>(j)];
    if (!std::isfinite(m) || !(m > 0)) {
      import_unsupported(s.node, s.target, unsupported_kind::attribute, "scale <= 0",
                         "scale[" + std::to_string(j) + "] = " + std::to_string(m) +
                             ": a StandardScaler multiplies by 1 / std > 0");
    }
    centred = centred || o != 0;
    scaled = scaled || m != 1;
    mean(static_cast<index_t>(j)) = static_cast<T>(o);
    divisor(static_cast<index_t>(j)) = static_cast<T>(1.0 / m);
  }
  typename E::Params params{.with_mean = centred, .with_std = scaled};
  if (s.params != nullptr) {
    params = import_step_params<typename E::Params>(s);
    params.with_mean = params.with_mean || centred;
    params.with_std = params.with_std || scaled;
  }
  if (!params.with_std) divisor.setOnes();
  return import_make(
      s, [&] { return E::from_fitted(params, mean, divisor, Vector<T>(), std::move(exec)); });
}

/// MinMaxScaler and MaxAbsScaler: one Scaler, as onelearn and skl2onnx write them. The file
/// holds the transform only, so the estimator is refitted on the rows that give it: for
/// MaxAbsScaler one row of the largest magnitudes 1 / scale (offset must be 0); for
/// MinMaxScaler the two rows data_min = a / scale + offset and data_max = data_min + (b - a) /
/// scale that its feature_range (a, b) (the metadata's, else (0, 1)) maps onto the file's
/// transform. What the file does not carry is that fit's (n_samples_seen(): 1 or 2).
template <class E, class T, exec::ExecutionPolicy Exec>
E import_range_scaler(const ImportStep& s, Exec exec) {
  constexpr bool min_max = requires(const typename E::Params& p) { p.feature_range; };
  const ScalerValues values = import_scaler_values(s);
  if (s.last) (void)import_check_trailing(s.chain, s.target, false);
  typename E::Params params{};
  if (s.params != nullptr) params = import_step_params<typename E::Params>(s);
  if constexpr (min_max) {
    // A FeatureRange cannot be set by name (set_params), and its printed value "(a, b)" holds
    // the comma that separates the parameters: read it from the metadata text itself.
    const auto text = s.chain.metadata.find("parameters");
    if (s.params != nullptr && text != s.chain.metadata.end()) {
      const std::string key = s.prefix + "feature_range=";
      const std::string& all = text->second;
      for (auto at = all.find(key); at != std::string::npos; at = all.find(key, at + 1)) {
        if (at != 0 && all.compare(at - 2, 2, ", ") != 0) continue;  // the end of another name
        double a = 0, b = 0;
        if (std::sscanf(all.c_str() + at + key.size(), "(%lf, %lf)", &a, &b) == 2 && a < b) {
          params.feature_range = {a, b};
        }
        break;
      }
    }
  }
  const auto p = static_cast<index_t>(values.scale.size());
  Matrix<T> rows(min_max ? 2 : 1, p);
  for (index_t j = 0; j < p; ++j) {
    const double offset = values.offset[static_cast<std::size_t>(j)];
    const double scale = values.scale[static_cast<std::size_t>(j)];
    if (!std::isfinite(scale) || !(scale > 0) || !std::isfinite(offset)) {
      import_unsupported(s.node, s.target, unsupported_kind::attribute, "scale <= 0",
                         "scale[" + std::to_string(j) + "] = " + std::to_string(scale) +
                             ", offset " + std::to_string(offset) +
                             ": expected a finite offset and a positive scale");
    }
    if constexpr (min_max) {
      const double a = params.feature_range.min, b = params.feature_range.max;
      rows(0, j) = static_cast<T>(a / scale + offset);
      rows(1, j) = static_cast<T>(a / scale + offset + (b - a) / scale);
    } else {
      if (offset != 0) {
        import_unsupported(s.node, s.target, unsupported_kind::attribute, "offset",
                           "offset[" + std::to_string(j) + "] = " + std::to_string(offset) +
                               ": a MaxAbsScaler does not shift");
      }
      rows(0, j) = static_cast<T>(1.0 / scale);
    }
  }
  return import_make(s, [&] {
    E scaler(params, std::move(exec));
    scaler.fit(rows);
    return scaler;
  });
}

/// LabelEncoder: one LabelEncoder whose keys are the classes in increasing order and whose
/// values their codes 0..k-1 (onelearn's and skl2onnx's layout); refitted on those classes.
template <class E, class T, exec::ExecutionPolicy Exec>
E import_label_encoder(const ImportStep& s, Exec exec) {
  import_expect_op(s, "LabelEncoder");
  if (s.last) (void)import_check_trailing(s.chain, s.target, false);
  const NodeAttributes ctx = import_context(s.node);
  std::vector<T> keys;
  if constexpr (std::is_integral_v<T>) {
    const auto ints = ctx.get_ints("keys_int64s").value_or(std::vector<std::int64_t>{});
    keys.assign(ints.begin(), ints.end());
  } else {
    for (const float v : ctx.get_floats("keys_floats")) keys.push_back(static_cast<T>(v));
  }
  const auto values = ctx.get_ints("values_int64s").value_or(std::vector<std::int64_t>{});
  if (keys.empty()) {
    import_fail(s.node, s.target,
                std::string("expected the classes in ") +
                    (std::is_integral_v<T> ? "keys_int64s" : "keys_floats") + ", found none");
  }
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const bool increasing = k == 0 || keys[k - 1] < keys[k];
    if (!increasing || k >= values.size() || values[k] != static_cast<std::int64_t>(k) ||
        values.size() != keys.size()) {
      import_unsupported(s.node, s.target, unsupported_kind::attribute, "keys and values",
                         "expected keys in increasing order mapped to 0, 1, ..., " +
                             std::to_string(keys.size() - 1) +
                             " (a LabelEncoder's classes and codes), found another mapping at "
                             "key " + std::to_string(k));
    }
  }
  const Vector<T> classes = Eigen::Map<const Vector<T>>(keys.data(), static_cast<index_t>(keys.size()));
  return import_make(s, [&] {
    E encoder(typename E::Params{}, std::move(exec));
    encoder.fit(classes);  // the classes are their own sorted, unique labels
    return encoder;
  });
}

// ---- the estimator types ----

template <class E>
struct importer {
  static constexpr bool supported = false;
};

template <class T, exec::ExecutionPolicy Exec>
struct importer<linear_model::LinearRegression<T, Exec>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "LinearRegression";
  static auto read(const ImportStep& s, Exec exec) {
    return import_regressor<linear_model::LinearRegression<T, Exec>, T>(s, std::move(exec));
  }
};

template <class T, exec::ExecutionPolicy Exec>
struct importer<linear_model::Ridge<T, Exec>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "Ridge";
  static auto read(const ImportStep& s, Exec exec) {
    return import_regressor<linear_model::Ridge<T, Exec>, T>(s, std::move(exec));
  }
};

template <class T, exec::ExecutionPolicy Exec>
struct importer<linear_model::LogisticRegression<T, Exec>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "LogisticRegression";
  static auto read(const ImportStep& s, Exec exec) {
    return import_classifier<linear_model::LogisticRegression<T, Exec>, T>(s, std::move(exec));
  }
};

template <class T, exec::ExecutionPolicy Exec>
struct importer<preprocessing::MinMaxScaler<T, Exec>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "MinMaxScaler";
  static auto read(const ImportStep& s, Exec exec) {
    return import_range_scaler<preprocessing::MinMaxScaler<T, Exec>, T>(s, std::move(exec));
  }
};

template <class T, exec::ExecutionPolicy Exec>
struct importer<preprocessing::MaxAbsScaler<T, Exec>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "MaxAbsScaler";
  static auto read(const ImportStep& s, Exec exec) {
    return import_range_scaler<preprocessing::MaxAbsScaler<T, Exec>, T>(s, std::move(exec));
  }
};

template <class T, exec::ExecutionPolicy Exec>
  requires(!std::is_same_v<T, std::string>)
struct importer<preprocessing::LabelEncoder<T, Exec>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "LabelEncoder";
  static auto read(const ImportStep& s, Exec exec) {
    return import_label_encoder<preprocessing::LabelEncoder<T, Exec>, T>(s, std::move(exec));
  }
};

template <class T, exec::ExecutionPolicy Exec>
struct importer<preprocessing::StandardScaler<T, Exec>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "StandardScaler";
  static auto read(const ImportStep& s, Exec exec) {
    return import_scaler<preprocessing::StandardScaler<T, Exec>, T>(s, std::move(exec));
  }
};

/// Trees and forests: one TreeEnsembleClassifier (classifiers) or TreeEnsembleRegressor
/// (regressors), post_transform NONE, no base values (detail/tree_ensemble_reader.hpp).
template <class E, bool Classifier, exec::ExecutionPolicy Exec, class Make>
E import_trees(const ImportStep& s, Exec exec, Make&& make) {
  import_expect_op(s, Classifier ? "TreeEnsembleClassifier" : "TreeEnsembleRegressor");
  if (s.last) (void)import_check_trailing(s.chain, s.target, Classifier);
  const NodeAttributes ctx = import_context(s.node);
  const std::string post = ctx.get_string("post_transform", "NONE");
  if (post != "NONE" || !ctx.get_floats("base_values").empty()) {
    import_unsupported(s.node, s.target, unsupported_kind::attribute, "post_transform " + post,
                       "post_transform " + post + " or base_values: a boosted ensemble, not "
                       "trees or a forest (expected NONE and no base values)");
  }
  if (ctx.has("classlabels_strings")) {
    import_unsupported(s.node, s.target, unsupported_kind::data_type, "string",
                       "string class labels (expected classlabels_int64s)");
  }
  auto params = import_step_params<typename E::Params>(s);
  return import_make(s, [&] {
    detail::ReadEnsemble read = detail::read_tree_ensemble(s.node, Classifier, s.features);
    std::int64_t features = s.features;
    if (features < 0) {
      for (const auto& t : read.trees) {
        for (const std::int64_t f : t.feature) features = std::max(features, f + 1);
      }
    }
    return make(params, std::move(read), static_cast<index_t>(features), std::move(exec));
  });
}

template <class T, exec::ExecutionPolicy Exec>
struct importer<tree::DecisionTreeClassifier<T, Exec>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  using E = tree::DecisionTreeClassifier<T, Exec>;
  static constexpr std::string_view name = "DecisionTreeClassifier";
  static auto read(const ImportStep& s, Exec exec) {
    return import_trees<E, true>(s, std::move(exec), [&](auto& p, detail::ReadEnsemble r, index_t f, Exec e) {
      if (r.trees.size() != 1) {
        throw onelearn::invalid_argument("expected one tree, found " + std::to_string(r.trees.size()) +
                                         " (a forest: RandomForestClassifier)");
      }
      return E::from_fitted(p, std::move(r.trees[0]), r.classes, f, std::move(e));
    });
  }
};

template <class T, exec::ExecutionPolicy Exec>
struct importer<tree::DecisionTreeRegressor<T, Exec>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  using E = tree::DecisionTreeRegressor<T, Exec>;
  static constexpr std::string_view name = "DecisionTreeRegressor";
  static auto read(const ImportStep& s, Exec exec) {
    return import_trees<E, false>(s, std::move(exec), [&](auto& p, detail::ReadEnsemble r, index_t f, Exec e) {
      if (r.trees.size() != 1) {
        throw onelearn::invalid_argument("expected one tree, found " + std::to_string(r.trees.size()) +
                                         " (a forest: RandomForestRegressor)");
      }
      return E::from_fitted(p, std::move(r.trees[0]), f, std::move(e));
    });
  }
};

template <class T, exec::ExecutionPolicy Exec, class P>
struct importer<ensemble::ForestClassifier<T, Exec, P>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  using E = ensemble::ForestClassifier<T, Exec, P>;
  static constexpr std::string_view name = P::estimator_name;
  static auto read(const ImportStep& s, Exec exec) {
    return import_trees<E, true>(s, std::move(exec), [&](auto& p, detail::ReadEnsemble r, index_t f, Exec e) {
      return E::from_fitted(p, std::move(r.trees), r.classes, f, std::move(e));
    });
  }
};

template <class T, exec::ExecutionPolicy Exec, class P>
struct importer<ensemble::ForestRegressor<T, Exec, P>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  using E = ensemble::ForestRegressor<T, Exec, P>;
  static constexpr std::string_view name = P::estimator_name;
  static auto read(const ImportStep& s, Exec exec) {
    return import_trees<E, false>(s, std::move(exec), [&](auto& p, detail::ReadEnsemble r, index_t f, Exec e) {
      return E::from_fitted(p, std::move(r.trees), f, std::move(e));
    });
  }
};

/// Histogram gradient boosting: one TreeEnsembleClassifier (LOGISTIC or SOFTMAX) or
/// TreeEnsembleRegressor (SUM) with base values (detail/boosting_reader.hpp).
template <class E, bool Classifier, exec::ExecutionPolicy Exec>
E import_boosting(const ImportStep& s, Exec exec) {
  import_expect_op(s, Classifier ? "TreeEnsembleClassifier" : "TreeEnsembleRegressor");
  if (s.last) (void)import_check_trailing(s.chain, s.target, Classifier);
  if (import_context(s.node).has("classlabels_strings")) {
    import_unsupported(s.node, s.target, unsupported_kind::data_type, "string",
                       "string class labels (expected classlabels_int64s)");
  }
  auto params = import_step_params<typename E::Params>(s);
  return import_make(s, [&] {
    detail::ReadBoosting r = detail::read_boosted_ensemble(s.node, Classifier, s.features);
    const auto features = static_cast<index_t>(r.n_features);
    if constexpr (Classifier) {
      return E::from_fitted(params, std::move(r.trees), std::move(r.baseline), r.classes, features,
                            std::move(exec));
    } else {
      return E::from_fitted(params, std::move(r.trees), std::move(r.baseline), features,
                            std::move(exec));
    }
  });
}

template <class T, exec::ExecutionPolicy Exec>
struct importer<ensemble::HistGradientBoostingClassifier<T, Exec>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  using E = ensemble::HistGradientBoostingClassifier<T, Exec>;
  static constexpr std::string_view name = "HistGradientBoostingClassifier";
  static auto read(const ImportStep& s, Exec exec) { return import_boosting<E, true>(s, std::move(exec)); }
};

template <class T, exec::ExecutionPolicy Exec>
struct importer<ensemble::HistGradientBoostingRegressor<T, Exec>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  using E = ensemble::HistGradientBoostingRegressor<T, Exec>;
  static constexpr std::string_view name = "HistGradientBoostingRegressor";
  static auto read(const ImportStep& s, Exec exec) { return import_boosting<E, false>(s, std::move(exec)); }
};

/// KNeighborsClassifier, KNeighborsRegressor: not a chain of ONNX-ML nodes but the whole
/// plain-operator graph of onnx/export/neighbors.hpp (onnx/detail/neighbors_reader.hpp),
/// refitted on the rows it holds. Under a distributed policy each rank keeps its block of the
/// rows, in order, so that the sharded model searches the same rows.
/// What `read` (a reader of the graph) returns, read on every rank; a rank whose file it
/// refuses (another file, a damaged copy) raises that error on every rank before the refit's
/// collectives, so that the others do not wait in them.
template <exec::ExecutionPolicy Exec, class F>
auto import_read(const Exec& exec, F&& read) {
  std::optional<decltype(read())> out;
  exec.propagate_errors([&] { out.emplace(read()); });
  return std::move(*out);
}

/// The parameters in the model's metadata when its "estimator" is `name`, else P's defaults.
template <class P>
P import_model_params(const ::onnx::ModelProto& model, std::string_view name) {
  std::map<std::string, std::string> metadata = import_metadata(model);
  return metadata["estimator"] == name
             ? import_params<P>(import_split_params(metadata["parameters"]), "")
             : P{};
}

template <class E, bool Classifier, exec::ExecutionPolicy Exec>
E import_neighbours(const ::onnx::ModelProto& model, std::string_view name, Exec exec) {
  using T = typename E::value_type;
  const ReadNeighbours read =
      import_read(exec, [&] { return read_neighbours(model, Classifier, name); });
  auto params = import_model_params<typename E::Params>(model, name);
  // The graph decides these two; the metadata only describes it.
  params.n_neighbors = read.n_neighbors;
  params.weights = read.by_distance ? "distance" : "uniform";
  const std::int64_t ranks = exec.size(), rank = exec.rank();
  const std::int64_t begin = read.n_rows * rank / ranks, end = read.n_rows * (rank + 1) / ranks;
  Matrix<T> X(end - begin, read.n_features);
  for (index_t i = 0; i < X.rows(); ++i) {
    for (index_t j = 0; j < X.cols(); ++j) {
      X(i, j) = static_cast<T>(read.rows[static_cast<std::size_t>((begin + i) * read.n_features + j)]);
    }
  }
  E estimator(params, std::move(exec));
  try {
    if constexpr (Classifier) {
      Labels y(X.rows());
      for (index_t i = 0; i < y.size(); ++i) y(i) = read.labels[static_cast<std::size_t>(begin + i)];
      estimator.fit(X, y);
    } else {
      Vector<T> y(X.rows());
      for (index_t i = 0; i < y.size(); ++i) {
        y(i) = static_cast<T>(read.targets[static_cast<std::size_t>(begin + i)]);
      }
      estimator.fit(X, y);
    }
  } catch (const onelearn::invalid_argument& e) {
    throw graph_error("onnx: onnx::to_estimator<" + std::string(name) +
                      ">: the model's rows do not fit: " + e.what());
  }
  return estimator;
}

template <class T, exec::ExecutionPolicy Exec>
struct importer<neighbors::KNeighborsClassifier<T, Exec>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "KNeighborsClassifier";
  static auto read_model(const ::onnx::ModelProto& model, Exec exec) {
    return import_neighbours<neighbors::KNeighborsClassifier<T, Exec>, true>(model, name,
                                                                             std::move(exec));
  }
};

template <class T, exec::ExecutionPolicy Exec>
struct importer<neighbors::KNeighborsRegressor<T, Exec>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "KNeighborsRegressor";
  static auto read_model(const ::onnx::ModelProto& model, Exec exec) {
    return import_neighbours<neighbors::KNeighborsRegressor<T, Exec>, false>(model, name,
                                                                             std::move(exec));
  }
};

/// `estimator` fitted on the rows X that give back the file's values; under a distributed
/// policy rank 0 holds them and the other ranks none (copies on every rank would change a mean
/// by its rounding). What fit refuses is the file's fault, restated as a graph_error.
template <class E>
E import_refit(E estimator, const Matrix<typename E::value_type>& X, std::int64_t rank,
               std::string_view name) {
  try {
    estimator.fit(rank == 0 ? X : Matrix<typename E::value_type>(0, X.cols()));
  } catch (const onelearn::invalid_argument& e) {
    throw graph_error("onnx: onnx::to_estimator<" + std::string(name) +
                      ">: the model's values do not fit: " + e.what());
  }
  return estimator;
}

/// Normalizer: the norm its graph computes (onnx/detail/transform_reader.hpp), fitted on one
/// row of zeros of the graph input's width (fit learns only the width).
template <class T, exec::ExecutionPolicy Exec>
struct importer<preprocessing::Normalizer<T, Exec>> {
  using E = preprocessing::Normalizer<T, Exec>;
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "Normalizer";
  static E read_model(const ::onnx::ModelProto& model, Exec exec) {
    typename E::Params params;
    std::int64_t p = 0;
    params.norm = import_read(exec, [&] {
      p = PlainGraph(model, name).width();
      return read_normalizer_norm(model, name);
    });
    const std::int64_t rank = exec.rank();
    return import_refit(E(params, std::move(exec)), Matrix<T>::Zero(1, p), rank, name);
  }
};

/// SimpleImputer: refitted on one row holding the statistics (NaN for a dropped column), under
/// the metadata's strategy when it is "mean", "median" or "most_frequent" (for one row they all
/// give that row); "constant" when the metadata says so and the statistics are one value, which
/// becomes fill_value; otherwise "mean". keep_empty_features comes from the metadata (the file's
/// dropped columns show whether fit had it).
template <class T, exec::ExecutionPolicy Exec>
struct importer<preprocessing::SimpleImputer<T, Exec>> {
  using E = preprocessing::SimpleImputer<T, Exec>;
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "SimpleImputer";
  static E read_model(const ::onnx::ModelProto& model, Exec exec) {
    const std::vector<double> statistics =
        import_read(exec, [&] { return read_imputer_statistics(model, name); });
    auto params = import_model_params<typename E::Params>(model, name);
    const bool one_value =
        std::all_of(statistics.begin(), statistics.end(),
                    [&](double s) { return s == statistics.front(); });
    const bool dropped = std::any_of(statistics.begin(), statistics.end(),
                                     [](double s) { return std::isnan(s); });
    const auto p = static_cast<index_t>(statistics.size());
    Matrix<T> row(1, p);
    for (index_t j = 0; j < p; ++j) {
      row(0, j) = static_cast<T>(statistics[static_cast<std::size_t>(j)]);
    }
    if (params.strategy == "constant" && one_value) {
      params.fill_value = statistics.front();
    } else {
      if (params.strategy != "median" && params.strategy != "most_frequent") {
        params.strategy = "mean";
      }
      if (dropped) params.keep_empty_features = false;
    }
    const std::int64_t rank = exec.rank();
    return import_refit(E(params, std::move(exec)), row, rank, name);
  }
};

/// PolynomialFeatures: the parameters that give the file's products (degree: the largest total
/// power; include_bias: a constant column; interaction_only: no power above 1, from degree 2),
/// checked by refitting on one row of zeros and comparing powers().
template <class T, exec::ExecutionPolicy Exec>
struct importer<preprocessing::PolynomialFeatures<T, Exec>> {
  using E = preprocessing::PolynomialFeatures<T, Exec>;
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "PolynomialFeatures";
  static E read_model(const ::onnx::ModelProto& model, Exec exec) {
    const auto powers = import_read(exec, [&] { return read_polynomial_powers(model, name); });
    auto params = import_model_params<typename E::Params>(model, name);
    std::int64_t degree = 0, largest_power = 0;
    bool bias = false;
    for (const auto& row : powers) {
      const std::int64_t total = std::accumulate(row.begin(), row.end(), std::int64_t{0});
      degree = std::max(degree, total);
      bias = bias || total == 0;
      largest_power = std::max(largest_power, *std::max_element(row.begin(), row.end()));
    }
    params.degree = static_cast<int>(degree);
    params.include_bias = bias;
    if (degree >= 2) params.interaction_only = largest_power == 1;
    const auto p = static_cast<index_t>(powers.front().size());
    const std::int64_t rank = exec.rank();
    E estimator = import_refit(E(params, std::move(exec)), Matrix<T>::Zero(1, p), rank, name);
    bool same = estimator.powers().rows() == static_cast<index_t>(powers.size());
    for (index_t k = 0; same && k < estimator.powers().rows(); ++k) {
      for (index_t j = 0; j < p; ++j) {
        same = same && estimator.powers()(k, j) ==
                           powers[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)];
      }
    }
    if (!same) {
      throw graph_error("onnx: onnx::to_estimator<PolynomialFeatures>: the graph's " +
                        std::to_string(powers.size()) +
                        " products are not those of PolynomialFeatures(" +
                        onelearn::params::to_string(params) + ") on " + std::to_string(p) +
                        " features, in that order");
    }
    return estimator;
  }
};

/// OneHotEncoder (numeric): refitted on rows that hold each feature's categories (a shorter list
/// repeats its last category). onelearn's graph ignores unknown values whatever handle_unknown
/// was, so handle_unknown comes from the metadata ("error", the default, otherwise);
/// scikit-learn's converter's encoders say it (zeros).
template <std::floating_point T, exec::ExecutionPolicy Exec>
struct importer<preprocessing::OneHotEncoder<T, Exec>> {
  using E = preprocessing::OneHotEncoder<T, Exec>;
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "OneHotEncoder";
  static E read_model(const ::onnx::ModelProto& model, Exec exec) {
    auto params = import_model_params<typename E::Params>(model, name);
    // onelearn's layout (Equal per category), or scikit-learn's converter's (an ai.onnx.ml
    // OneHotEncoder per feature, whose zeros attribute is handle_unknown).
    const auto categories = import_read(exec, [&] {
      if (!has_ml_one_hot_encoders(model)) return read_one_hot_categories(model, name);
      ReadOneHot read = read_skl2onnx_one_hot(model, name);
      params.handle_unknown = read.handle_unknown;
      return std::move(read.categories);
    });
    std::size_t rows = 0;
    for (const auto& c : categories) rows = std::max(rows, c.size());
    Matrix<T> X(static_cast<index_t>(rows), static_cast<index_t>(categories.size()));
    for (index_t j = 0; j < X.cols(); ++j) {
      const auto& c = categories[static_cast<std::size_t>(j)];
      for (index_t i = 0; i < X.rows(); ++i) {
        X(i, j) = static_cast<T>(c[std::min(static_cast<std::size_t>(i), c.size() - 1)]);
      }
    }
    const std::int64_t rank = exec.rank();
    return import_refit(E(params, std::move(exec)), X, rank, name);
  }
};

/// KMeans: the centres of its squared distances (onnx/detail/k_means_reader.hpp), given as the
/// initial centres of a fit on those k rows, which assigns each row to its own centre and
/// ends where it starts; then the metadata's parameters (init as the original had it). What
/// the file does not carry is that fit's: inertia() 0, n_iter() 1, labels() 0..k-1.
template <class T, exec::ExecutionPolicy Exec>
struct importer<cluster::KMeans<T, Exec>> {
  using E = cluster::KMeans<T, Exec>;
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "KMeans";
  static E read_model(const ::onnx::ModelProto& model, Exec exec) {
    const ReadCentres read = import_read(exec, [&] { return read_k_means_centres(model, name); });
    Matrix<T> centres(read.k, read.p);
    for (index_t c = 0; c < read.k; ++c) {
      for (index_t j = 0; j < read.p; ++j) {
        centres(c, j) = static_cast<T>(read.centres[static_cast<std::size_t>(c * read.p + j)]);
      }
    }
    auto params = import_model_params<typename E::Params>(model, name);
    params.n_clusters = read.k;
    params.max_iter = std::max<std::int64_t>(params.max_iter, 1);
    const std::int64_t rank = exec.rank();
    E fitting(params, std::move(exec));
    fitting.set_init(centres);
    E estimator = import_refit(std::move(fitting), centres, rank, name);
    // Lloyd's step centres the rows on their mean and adds it back, which may move a centre by
    // an ulp or two of the rows' magnitude; more than that means two centres met.
    const T magnitude = T(1) + centres.cwiseAbs().maxCoeff();
    if ((estimator.cluster_centers() - centres).cwiseAbs().maxCoeff() >
        T(16) * std::numeric_limits<T>::epsilon() * magnitude) {
      throw graph_error("onnx: onnx::to_estimator<KMeans>: the " + std::to_string(read.k) +
                        " centres do not come back from a fit on themselves (two of them are "
                        "equal or nearly so, which a KMeans' centres are not)");
    }
    return estimator.set_params(params);
  }
};

/// A reader's row-major doubles as T's matrix (rows x cols) or vector.
template <class T>
Matrix<T> import_matrix(const std::vector<double>& values, std::int64_t rows, std::int64_t cols) {
  return Eigen::Map<const Matrix<double>>(values.data(), rows, cols).template cast<T>();
}
template <class T>
Vector<T> import_vector(const std::vector<double>& values) {
  return Eigen::Map<const Vector<double>>(values.data(), static_cast<index_t>(values.size()))
      .template cast<T>();
}

/// A whole-graph reader's E::from_fitted(...), its errors restated as the file's: a
/// shape_error stays one, anything else it rejects (NaN, a variance <= 0) is a graph_error.
template <class F>
auto import_from_attributes(std::string_view name, F&& make) {
  const std::string where = "onnx: onnx::to_estimator<" + std::string(name) + ">: ";
  try {
    return make();
  } catch (const shape_error& e) {
    throw shape_error(where + e.what());
  } catch (const onelearn::invalid_argument& e) {
    throw graph_error(where + "the model's values are not a " + std::string(name) +
                      "'s: " + e.what());
  }
}

/// PCA: the mean, the components and (whiten) the explained variance of its projection
/// (onnx/detail/pca_reader.hpp), made into a PCA by from_fitted; the metadata's parameters, with
/// n_components and whiten as the graph shows them. Read and made on every rank inside
/// import_read, so that a file one rank refuses is an error on every rank.
template <class T, exec::ExecutionPolicy Exec>
struct importer<decomposition::PCA<T, Exec>> {
  using E = decomposition::PCA<T, Exec>;
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "PCA";
  static E read_model(const ::onnx::ModelProto& model, Exec exec) {
    return import_read(exec, [&] {
      const ReadPCA read = read_pca(model, name);
      const Matrix<T> components = import_matrix<T>(read.components, read.k, read.p);
      const Vector<T> mean = import_vector<T>(read.mean);
      const Vector<T> variance = import_vector<T>(read.explained_variance);
      auto params = import_model_params<typename E::Params>(model, name);
      params.n_components = read.k;
      params.whiten = read.whiten;
      return import_from_attributes(
          name, [&] { return E::from_fitted(params, components, mean, variance, exec); });
    });
  }
};

/// GaussianNB: its means, variances, log priors and classes from the joint log-likelihood's
/// graph (onnx/detail/gaussian_nb_reader.hpp), made into a GaussianNB by from_fitted with the
/// metadata's parameters; read and made on every rank inside import_read, as PCA.
template <class T, exec::ExecutionPolicy Exec>
struct importer<naive_bayes::GaussianNB<T, Exec>> {
  using E = naive_bayes::GaussianNB<T, Exec>;
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "GaussianNB";
  static E read_model(const ::onnx::ModelProto& model, Exec exec) {
    return import_read(exec, [&] {
      // onelearn's layout, or scikit-learn's converter's (skl2onnx_naive_bayes_reader.hpp).
      const ReadGaussianNB read = is_skl2onnx_naive_bayes(model)
                                      ? read_skl2onnx_gaussian_nb(model, name)
                                      : read_gaussian_nb(model, name);
      const Matrix<T> theta = import_matrix<T>(read.theta, read.k, read.p);
      const Matrix<T> var = import_matrix<T>(read.var, read.k, read.p);
      const Vector<T> prior =
          import_vector<double>(read.log_prior).array().exp().matrix().template cast<T>();
      const Labels classes = Eigen::Map<const Labels>(read.classes.data(), read.k);
      const auto params = import_model_params<typename E::Params>(model, name);
      return import_from_attributes(
          name, [&] { return E::from_fitted(params, theta, var, prior, classes, exec); });
    });
  }
};

/// MultinomialNB: one LinearClassifier of a chain (import_multinomial_nb), or read whole.
template <class T, exec::ExecutionPolicy Exec>
struct importer<naive_bayes::MultinomialNB<T, Exec>> {
  static constexpr bool supported = true;
  using exec_type = Exec;
  static constexpr std::string_view name = "MultinomialNB";
  static auto read(const ImportStep& s, Exec exec) {
    return import_multinomial_nb<naive_bayes::MultinomialNB<T, Exec>, T>(s, std::move(exec));
  }
  /// scikit-learn's converter writes no LinearClassifier but a graph of its own
  /// (onnx/detail/skl2onnx_naive_bayes_reader.hpp), read whole.
  static bool reads_whole_graph(const ::onnx::ModelProto& model) {
    return is_skl2onnx_naive_bayes(model);
  }
  static auto read_model(const ::onnx::ModelProto& model, Exec exec) {
    using E = naive_bayes::MultinomialNB<T, Exec>;
    return import_read(exec, [&] {
      const ReadMultinomialNB read = read_skl2onnx_multinomial_nb(model, name);
      const Matrix<T> log_prob = import_matrix<T>(read.feature_log_prob, read.k, read.p);
      const Vector<T> log_prior = import_vector<T>(read.class_log_prior);
      const Labels classes = Eigen::Map<const Labels>(read.classes.data(), read.k);
      const auto params = import_model_params<typename E::Params>(model, name);
      return import_from_attributes(
          name, [&] { return E::from_fitted(params, log_prob, log_prior, classes, exec); });
    });
  }
};

/// Whether E is read as one node of a chain (not from the whole graph, as the k-NN models).
template <class E>
concept ChainImportable = requires(const ImportStep& s, typename importer<E>::exec_type exec) {
  importer<E>::read(s, exec);
};

inline std::string import_ops(const ImportChain& chain) {
  std::string out;
  for (const ::onnx::NodeProto* n : chain.steps) out += (out.empty() ? "" : ", ") + n->op_type();
  return out;
}

inline const std::map<std::string, std::string>* import_metadata_params(
    const ImportChain& chain, std::string_view name, std::map<std::string, std::string>& store) {
  const auto est = chain.metadata.find("estimator");
  const auto par = chain.metadata.find("parameters");
  if (est == chain.metadata.end() || par == chain.metadata.end() || est->second != name) {
    return nullptr;
  }
  store = import_split_params(par->second);
  return &store;
}

/// A single estimator from a chain of one model node.
template <class E>
E import_chain_single(const ::onnx::ModelProto& model, typename importer<E>::exec_type exec) {
  constexpr std::string_view name = importer<E>::name;
  // (float64 files: their plain-operator layouts and tree walks folded into the ai.onnx.ml
  // nodes first)
  const ::onnx::ModelProto folded = fold_float64_layouts(fold_tree_walks(model));
  const ImportChain chain = import_chain(folded, name);
  if (chain.steps.size() != 1) {
    throw graph_error("onnx: onnx::to_estimator<" + std::string(name) +
                      ">: expected one model node, found " + std::to_string(chain.steps.size()) +
                      " (" + import_ops(chain) +
                      "); a chain of several converts to a pipeline::Pipeline");
  }
  std::map<std::string, std::string> store;
  const ImportStep step{*chain.steps[0],
                        chain.input_features,
                        chain,
                        true,
                        std::string(name),
                        import_metadata_params(chain, name, store),
                        ""};
  return importer<E>::read(step, std::move(exec));
}

/// A single estimator from a chain of one model node, or (the k-NN models, and a chain model
/// in another converter's whole-graph layout) from the whole graph.
template <class E>
E import_single(const ::onnx::ModelProto& model, typename importer<E>::exec_type exec) {
  if constexpr (!ChainImportable<E>) {
    return importer<E>::read_model(model, std::move(exec));
  } else {
    if constexpr (requires { importer<E>::reads_whole_graph(model); }) {
      if (importer<E>::reads_whole_graph(model)) {
        return importer<E>::read_model(model, std::move(exec));
      }
    }
    return import_chain_single<E>(model, std::move(exec));
  }
}

/// The width of what a fitted step hands the next one: its transform's columns (-1 for a
/// predictor, which has no transform).
template <class S>
std::int64_t import_output_width(const S& step) {
  if constexpr (requires { step.n_output_features(); }) {  // PolynomialFeatures, OneHotEncoder
    return static_cast<std::int64_t>(step.n_output_features());
  } else if constexpr (requires { step.n_features_out(); }) {  // SimpleImputer
    return static_cast<std::int64_t>(step.n_features_out());
  } else if constexpr (requires { step.components(); }) {  // PCA
    return static_cast<std::int64_t>(step.components().rows());
  } else if constexpr (requires { step.cluster_centers(); }) {  // KMeans: distances to centres
    return static_cast<std::int64_t>(step.cluster_centers().rows());
  } else if constexpr (requires {
                         step.transform(std::declval<const Matrix<typename S::value_type>&>());
                       }) {
    return static_cast<std::int64_t>(step.n_features_in());
  } else {
    return -1;
  }
}

/// The metadata a pipeline step would carry exported alone: "estimator" its name, "parameters"
/// the pipeline's "<step>__<param>" entries without the prefix (none when the file has no
/// pipeline parameters).
inline std::map<std::string, std::string> import_step_metadata(
    const std::map<std::string, std::string>* pipeline_params, const std::string& prefix,
    std::string_view estimator) {
  std::map<std::string, std::string> out;
  if (pipeline_params == nullptr) return out;
  std::string text;
  for (const auto& [key, value] : *pipeline_params) {
    if (key.rfind(prefix, 0) != 0) continue;
    text += (text.empty() ? "" : ", ") + key.substr(prefix.size()) + "=" + value;
  }
  out["estimator"] = std::string(estimator);
  out["parameters"] = text;
  return out;
}

template <class... S>
struct importer<pipeline::Pipeline<S...>> {
  static constexpr bool supported = (importer<S>::supported && ...);
  static constexpr std::string_view name = "Pipeline";
  static constexpr std::size_t N = sizeof...(S);

  static pipeline::Pipeline<S...> read(const ::onnx::ModelProto& model) {
    const std::array<std::string, N> names = step_names(model);
    std::tuple<std::optional<S>...> parts;
    if constexpr ((ChainImportable<S> && ...)) {
      try {
        read_chain(model, names, parts);
      } catch (const onelearn::error&) {
        // A step in a whole-graph layout of another converter (scikit-learn's naive Bayes
        // graphs) is read from the pieces. When they do not read either, the chain's error,
        // which names the node at fault, is the one to report, unless the graph has such a
        // layout: then the pieces' error says what in it is not read.
        const std::exception_ptr chain_error = std::current_exception();
        try {
          read_pieces(model, names, parts);
        } catch (const onelearn::error&) {
          if (is_skl2onnx_naive_bayes(model)) throw;
          std::rethrow_exception(chain_error);
        }
      }
    } else {
      read_pieces(model, names, parts);
    }
    return std::apply(
        [&](auto&... part) { return pipeline::Pipeline<S...>(names, std::move(*part)...); }, parts);
  }

 private:
  using Parts = std::tuple<std::optional<S>...>;

  /// The steps' names: those of the metadata's "<step>__<param>" entries (onelearn's export
  /// lists every step's parameters, in order) when they name N steps, so that a pipeline
  /// exported with names of its own comes back with them and its parameters; else the names
  /// make_pipeline gives.
  static std::array<std::string, N> step_names(const ::onnx::ModelProto& model) {
    std::map<std::string, std::string> metadata = import_metadata(model);
    std::vector<std::string> found;
    if (metadata["estimator"] == name) {
      for (const auto& [key, value] : import_param_items(metadata["parameters"])) {
        const std::size_t step = key.find("__");
        if (step == std::string::npos || step == 0) continue;
        std::string step_name = key.substr(0, step);
        if (std::find(found.begin(), found.end(), step_name) == found.end()) {
          found.push_back(std::move(step_name));
        }
      }
    }
    if (found.size() == N) {
      std::array<std::string, N> out;
      std::copy(found.begin(), found.end(), out.begin());
      return out;
    }
    return pipeline::detail::default_names<N>({pipeline::detail::type_name<S>()...});
  }

  /// Every step one ai.onnx.ml node: the chain of model nodes, one per step.
  static void read_chain(const ::onnx::ModelProto& model, const std::array<std::string, N>& names,
                         Parts& parts) {
    const ::onnx::ModelProto folded = fold_float64_layouts(fold_tree_walks(model));
    const ImportChain chain = import_chain(folded, name);
    if (chain.steps.size() != N) {
      throw graph_error("onnx: onnx::to_estimator<Pipeline>: expected " + std::to_string(N) +
                        " model nodes (one per step), found " + std::to_string(chain.steps.size()) +
                        " (" + import_ops(chain) + ")");
    }
    std::map<std::string, std::string> store;
    const auto* params = import_metadata_params(chain, name, store);
    std::int64_t features = chain.input_features;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (
          [&] {
            using Step = std::tuple_element_t<I, std::tuple<S...>>;
            const ImportStep step{
                *chain.steps[I],
                features,
                chain,
                I + 1 == N,
                "Pipeline step '" + names[I] + "' (" + std::string(importer<Step>::name) + ")",
                params,
                names[I] + "__"};
            std::get<I>(parts).emplace(
                importer<Step>::read(step, typename importer<Step>::exec_type{}));
            features = import_output_width(*std::get<I>(parts));
          }(),
          ...);
    }
    (std::index_sequence_for<S...>{});
  }

  /// A step read from a whole graph (PCA, GaussianNB, the k-NN models, ...): the graph is cut
  /// where one value carries everything after (onnx/detail/graph_segments.hpp), and each step
  /// read from the model of the pieces it spans, as exported alone. Which cuts are the steps'
  /// boundaries is searched: for each step the shortest span that it reads and after which the
  /// remaining steps read the rest. (A reader finds its layout by data flow from its input, so
  /// a span cut too short for one step leaves the next step nodes it refuses.)
  static void read_pieces(const ::onnx::ModelProto& model, const std::array<std::string, N>& names,
                          Parts& parts) {
    const GraphSegments segments(model);
    const auto& cuts = segments.cuts();
    if (cuts.size() < N + 1) {
      throw graph_error("onnx: onnx::to_estimator<Pipeline>: expected " + std::to_string(N) +
                        " steps, one after the other from the graph input; the graph has " +
                        std::to_string(cuts.size() < 2 ? 0 : cuts.size() - 1) +
                        " piece(s) that follow one another");
    }
    std::map<std::string, std::string> metadata = import_metadata(model), pipeline_params;
    const bool has_params = metadata["estimator"] == name;
    if (has_params) pipeline_params = import_split_params(metadata["parameters"]);

    // Step I read from the pieces between cuts `from` and `to`, its input `width` wide; its
    // output's width, or the error that refused it.
    using Reader = std::function<std::int64_t(std::size_t, std::size_t, std::int64_t)>;
    std::array<Reader, N> readers;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((readers[I] =
            [&](std::size_t from, std::size_t to, std::int64_t width) {
              using Step = std::tuple_element_t<I, std::tuple<S...>>;
              const ::onnx::ModelProto piece =
                  segments.piece(from, to, width,
                                 import_step_metadata(has_params ? &pipeline_params : nullptr,
                                                      names[I] + "__", importer<Step>::name));
              std::get<I>(parts).emplace(
                  import_single<Step>(piece, typename importer<Step>::exec_type{}));
              return import_output_width(*std::get<I>(parts));
            }),
       ...);
    }
    (std::index_sequence_for<S...>{});

    // Depth-first over the boundaries. The refusal reported when no split works is the first
    // one of the step that got furthest (its most natural span, the shortest). A step starting
    // at a cut with a given width that could not be placed is remembered: the readers of
    // plain-operator steps accept spans longer than their own, so without that a failing last
    // step would be retried from the same place along every way of reaching it.
    std::size_t furthest = 0;
    std::exception_ptr refusal;
    std::set<std::tuple<std::size_t, std::size_t, std::int64_t>> dead_ends;
    const std::function<bool(std::size_t, std::size_t, std::int64_t)> place =
        [&](std::size_t step, std::size_t from, std::int64_t width) -> bool {
      if (dead_ends.count({step, from, width}) != 0) return false;
      const std::size_t last = cuts.size() - 1;
      // Room for the steps after this one: each spans at least one piece.
      const std::size_t first_end = step + 1 == N ? last : from + 1;
      const std::size_t last_end = step + 1 == N ? last : last - (N - 1 - step);
      for (std::size_t to = first_end; to <= last_end; ++to) {
        std::int64_t out = -1;
        try {
          out = readers[step](from, to, width);
        } catch (const onelearn::error&) {
          if (step > furthest || !refusal) {
            furthest = step;
            refusal = std::current_exception();
          }
          continue;
        }
        if (step + 1 == N || place(step + 1, to, out)) return true;
      }
      dead_ends.insert({step, from, width});
      return false;
    };
    if (place(0, 0, segments.declared_width())) return;
    constexpr std::array<std::string_view, N> kinds{importer<S>::name...};
    const std::string where =
        "onnx: onnx::to_estimator<Pipeline>: no split of the graph into its " + std::to_string(N) +
        " steps reads; step '" + names[furthest] + "' (" + std::string(kinds[furthest]) +
        "), the furthest read, refused every span: ";
    try {
      std::rethrow_exception(refusal);
    } catch (const shape_error& e) {
      throw shape_error(where + e.what());
    } catch (const unsupported_error& e) {
      throw unsupported_error(e.kind(), e.detail(), where + e.what());
    } catch (const std::exception& e) {
      throw graph_error(where + e.what());
    }
  }
};

}  // namespace detail

/// An estimator type to_estimator can make (the list at the top of this header), or a Pipeline
/// of those.
template <class E>
concept Importable = detail::importer<E>::supported;

/// The fitted estimator E that `model` describes (see the top of this header).
template <Importable E>
E to_estimator(const ::onnx::ModelProto& model) {
  detail::check_node_arity(model);
  if constexpr (requires { E::n_steps; }) {
    return detail::importer<E>::read(model);
  } else {
    return detail::import_single<E>(model, typename detail::importer<E>::exec_type{});
  }
}

namespace detail {

/// Every rank holds the same model (its bytes' digest and size), or invalid_argument on every
/// rank naming each rank's: the one collective before an import whose errors then arise alike
/// on every rank.
template <exec::ExecutionPolicy Exec>
void check_same_model(const Exec& exec, const ::onnx::ModelProto& model) {
  const std::string bytes = model.SerializeAsString();
  std::uint64_t digest = 14695981039346656037ULL;  // FNV-1a
  for (const char c : bytes) {
    digest = (digest ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(digest));
  exec.check_same_values("onnx::to_estimator",
                         std::array{exec::NamedValue{"model", std::to_string(bytes.size()) +
                                                                  " bytes, digest " + hex}});
}

}  // namespace detail

/// The same with an execution policy (exec::mpi{comm}): every rank reads the same file and
/// holds the same model. The ranks first check that they were given the same model: a rank
/// with another file or a damaged copy is an invalid_argument on every rank (naming each
/// rank's model by size and digest), so that no rank imports while another waits; the
/// import's own errors then arise alike on every rank.
template <Importable E, exec::ExecutionPolicy Exec>
requires(!requires { E::n_steps; }) E to_estimator(const ::onnx::ModelProto& model, Exec exec) {
  detail::check_same_model(exec, model);
  detail::check_node_arity(model);
  return detail::import_single<E>(model, std::move(exec));
}

/// From a model onnx::load prepared (only graphs the executor runs: no Normalizer or ZipMap).
template <Importable E>
E to_estimator(const Graph& graph) {
  return to_estimator<E>(graph.proto());
}

/// From a file: io_error when it cannot be read, format_error when it does not parse.
template <Importable E>
E to_estimator(const std::filesystem::path& path) {
  return to_estimator<E>(read_model_proto(path));
}

}  // namespace onelearn::onnx
