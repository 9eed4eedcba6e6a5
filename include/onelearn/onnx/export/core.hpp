#pragma once
/**
 * \file
 * \brief The machinery of ONNX export.
 * \ingroup onnx
 *
 * \code
 * #include <onelearn/onnx/export.hpp>
 * onnx::ModelProto proto = onelearn::onnx::to_proto(fitted_model);
 * onelearn::onnx::save(fitted_model, "model.onnx");
 * \endcode
 *
 * The machinery of ONNX export: GraphBuilder (values, initializers, nodes of one GraphProto),
 * the Exported description of a model's outputs, and to_proto/save for any model that has an
 * export_model overload. The overloads live in one header per model family
 * (onnx/export/linear.hpp, preprocessing.hpp, ...); onnx/export.hpp includes them all.
 *
 * (A built nn::Sequential is exported by its own to_proto/save overloads in onnx/export/nn.hpp,
 * one node or a few per layer, on top of GraphBuilder; not through export_model.)
 *
 * Adding an estimator type means one new header declaring, in onelearn::onnx,
 *
 * \code{.unparsed}
 *   Exported export_model(GraphBuilder& b, const MyModel& m, const std::string& input);
 * \endcode
 *
 * which appends nodes reading the real value `input` (N x n_features, of type b.real_type():
 * float32 or float64, see below) and returns its outputs, the one a following pipeline step would read first. The overload is found by
 * argument-dependent lookup through GraphBuilder, so it only has to be declared before to_proto
 * is instantiated; a model with an n_features_in() and a get_params() gets its input
 * declaration and metadata from them, others can provide `export_input_shape(...)` (see below).
 *
 * The model: IR version 8, opsets ai.onnx 17 and ai.onnx.ml 3, one real input "X" of shape
 * ("N", n_features_in), outputs named as skl2onnx names them ("label", "probabilities",
 * "scores", "variable"), metadata_props "estimator", "parameters" (params::to_string of the
 * estimator's parameters, less `verbose`; "step__name=value" for pipelines) and
 * "onelearn_version".
 * The precision is the caller's choice (ExportOptions): float32 by default, as skl2onnx writes
 * models, whatever the estimator's T; or float64, where the input, every initializer and every
 * real-valued output are double. The ONNX-ML operators LinearClassifier, LinearRegressor and
 * Scaler output float32 only, so a float64 export writes their arithmetic in plain operators
 * (MatMul, Add, Sub, Mul, Softmax or Sigmoid, ArgMax and Gather for the labels), as skl2onnx's
 * double converters do; the trees and boosting, whose TreeEnsemble operators output float32,
 * walk their trees in plain operators in float64 (onnx/export/tree_walk.hpp).
 *
 * Errors: not_fitted_error for a model (or pipeline step) that is not fitted; invalid_argument
 * for a fitted model the export cannot express (SGDClassifier with loss "modified_huber");
 * save: io_error when the directory does not exist or the file cannot be written, in which case
 * no file is left (the model is written to a temporary file in the same directory and renamed).
 */

#include <onnx/onnx_pb.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <boost/pfr/core.hpp>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/log.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/version.hpp"
#include "onelearn/io/atomic_file.hpp"
#include "onelearn/onnx/detail/attribute_writers.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/pipeline.hpp"

namespace onelearn::onnx {

inline constexpr std::int64_t export_ir_version = 8;
inline constexpr std::int64_t export_opset = 17;
inline constexpr std::int64_t export_ml_opset = 3;
inline constexpr std::string_view ml_domain = "ai.onnx.ml";
/// The symbolic batch dimension of every exported input and output.
inline constexpr std::string_view batch_dim = "N";

/// The element type of an exported model's input, initializers and real-valued outputs.
enum class Precision { float32, float64 };

/// How to_proto and save write a model: `onnx::save(model, path, {.precision =
/// onnx::Precision::float64})` keeps a double model's numbers whole.
struct ExportOptions {
  Precision precision = Precision::float32;
};

/// One output of an exported model: its role ("label", "probabilities", "scores", "variable"),
/// the value's name in the graph, its ONNX element type, and its dims (-1: the batch "N").
struct ExportedValue {
  std::string role;
  std::string name;
  std::int32_t elem_type = ::onnx::TensorProto::FLOAT;
  std::vector<std::int64_t> dims;
};

/// The outputs of a model, the main one first (what a following pipeline step reads).
using Exported = std::vector<ExportedValue>;

/// Appends values, initializers and nodes to a GraphProto under unique names. Names are
/// prefixed with the current scope (a pipeline step's name) so that chained steps never clash.
class GraphBuilder {
 public:
  explicit GraphBuilder(::onnx::GraphProto& graph, Precision precision = Precision::float32)
      : graph_(&graph), precision_(precision) {}

  [[nodiscard]] Precision precision() const noexcept { return precision_; }
  [[nodiscard]] bool is_float64() const noexcept { return precision_ == Precision::float64; }
  /// The ONNX element type of the model's real values: FLOAT or DOUBLE.
  [[nodiscard]] std::int32_t real_type() const noexcept {
    return is_float64() ? ::onnx::TensorProto::DOUBLE : ::onnx::TensorProto::FLOAT;
  }

  /// Names get "<scope>_" in front until the scope is changed.
  void set_scope(std::string scope) { scope_ = std::move(scope); }

  /// A value name not used before: "<scope>_<base>", with a number if needed.
  std::string fresh(std::string_view base) {
    std::string name = scope_.empty() ? std::string(base) : scope_ + "_" + std::string(base);
    std::string candidate = name;
    for (int i = 1; used(candidate); ++i) candidate = name + "_" + std::to_string(i);
    names_.push_back(candidate);
    return candidate;
  }

  /// A real initializer of shape `dims` in the model's precision (the values rounded once to
  /// float32 in a float32 model); returns its name.
  std::string constant(std::string_view base, const std::vector<std::int64_t>& dims,
                       const std::vector<double>& values) {
    const std::string name = fresh(base);
    ::onnx::TensorProto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(real_type());
    for (const std::int64_t d : dims) t->add_dims(d);
    for (const double v : values) {
      if (is_float64()) {
        t->add_double_data(v);
      } else {
        t->add_float_data(static_cast<float>(v));
      }
    }
    return name;
  }

  /// An int64 initializer (the axes of Squeeze/Unsqueeze).
  std::string constant_int64(std::string_view base, const std::vector<std::int64_t>& dims,
                             const std::vector<std::int64_t>& values) {
    const std::string name = fresh(base);
    ::onnx::TensorProto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::INT64);
    for (const std::int64_t d : dims) t->add_dims(d);
    for (const std::int64_t v : values) t->add_int64_data(v);
    return name;
  }

  /// A bool initializer (stored as ONNX stores bools: one int32 each).
  std::string constant_bool(std::string_view base, const std::vector<std::int64_t>& dims,
                            const std::vector<std::uint8_t>& values) {
    const std::string name = fresh(base);
    ::onnx::TensorProto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::BOOL);
    for (const std::int64_t d : dims) t->add_dims(d);
    for (const std::uint8_t v : values) t->add_int32_data(v != 0 ? 1 : 0);
    return name;
  }

  /// A node named after its first output; `domain` "ai.onnx.ml" for the ONNX-ML operators.
  ::onnx::NodeProto& node(std::string_view op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, std::string_view domain = {}) {
    ::onnx::NodeProto* n = graph_->add_node();
    n->set_op_type(std::string(op));
    if (!domain.empty()) n->set_domain(std::string(domain));
    n->set_name(outputs.empty() ? fresh(op) : fresh(std::string(op) + "_" + outputs[0]));
    for (const std::string& i : inputs) n->add_input(i);
    for (const std::string& o : outputs) n->add_output(o);
    return *n;
  }

  /// One output: a fresh value called `base`.
  std::string apply(std::string_view op, const std::vector<std::string>& inputs,
                    std::string_view base) {
    const std::string out = fresh(base);
    node(op, inputs, {out});
    return out;
  }

  /// Declares the type and shape of an internal value (dims: -1 for the batch). Needed after
  /// the ONNX-ML operators: ONNX 1.12 gives Scaler, LinearRegressor and LinearClassifier no
  /// type inference, and the strict shape inference of a full check rejects a node reading a
  /// value of unknown type.
  void declare(const std::string& name, std::int32_t elem_type,
               const std::vector<std::int64_t>& dims);

  [[nodiscard]] ::onnx::GraphProto& graph() noexcept { return *graph_; }

 private:
  [[nodiscard]] bool used(const std::string& name) const {
    for (const std::string& n : names_)
      if (n == name) return true;
    return false;
  }

  ::onnx::GraphProto* graph_;
  Precision precision_;
  std::string scope_;
  std::vector<std::string> names_;
};

/// The entries of an Eigen vector or matrix (row-major order) as double, for
/// GraphBuilder::constant.
template <class E>
std::vector<double> to_reals(const E& values) {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(values.size()));
  for (Eigen::Index i = 0; i < values.rows(); ++i)
    for (Eigen::Index j = 0; j < values.cols(); ++j)
      out.push_back(static_cast<double>(values(i, j)));
  return out;
}

/// Values rounded to float32: the attributes of the ONNX-ML operators are float32.
inline std::vector<float> to_floats(const std::vector<double>& values) {
  return {values.begin(), values.end()};
}

/// The entries of an Eigen vector or matrix (row-major order) rounded to float32.
template <class E>
std::vector<float> to_floats(const E& values) {
  return to_floats(to_reals(values));
}

// ---- what to_proto needs of a model ----

/// A model export_model can write.
template <class M>
concept Exportable = requires(GraphBuilder& b, const M& m, const std::string& input) {
  { export_model(b, m, input) } -> std::same_as<Exported>;
};

namespace detail {

/// "LogisticRegression": the estimator's type name without namespace or template arguments.
template <class M>
std::string estimator_name() {
  // A class template shared by several estimators (the forests) names each in its Params.
  if constexpr (requires { M::Params::estimator_name; }) {
    return std::string(M::Params::estimator_name);
  } else {
    return pipeline::detail::type_name<M>();
  }
}

inline std::string param_value_string(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using X = std::remove_cvref_t<decltype(x)>;
        if constexpr (std::is_same_v<X, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<X, std::string>) {
          return '"' + x + '"';
        } else {
          std::ostringstream os;
          os << x;
          return os.str();
        }
      },
      v);
}

/// Whether a parameter ("verbose", "logisticregression__verbose") only set what the fit
/// printed: left out of the metadata, which describes the model (an imported model would
/// otherwise come back chatty).
inline bool export_skips_param(std::string_view name) {
  const std::size_t step = name.rfind("__");
  return onelearn::detail::is_logging_param(step == std::string_view::npos ? name
                                                                           : name.substr(step + 2));
}

/// "alpha=0.5, fit_intercept=true" (params::to_string without the logging fields); a
/// pipeline's as "ridge__alpha=0.5, ...".
template <class M>
std::string estimator_parameters(const M& m) {
  if constexpr (requires {
                  m.step_names();
                  m.param_names();
                }) {
    std::string out;
    for (const std::string& name : m.param_names()) {
      if (export_skips_param(name)) continue;
      out += (out.empty() ? "" : ", ") + name + "=" + param_value_string(m.get_param(name));
    }
    return out;
  } else if constexpr (requires { m.get_params(); }) {
    using P = std::remove_cvref_t<decltype(m.get_params())>;
    const auto& names = params::names<P>();
    std::ostringstream out;
    bool first = true;
    // params::print's text, field by field, so that the values print exactly as before.
    boost::pfr::for_each_field(m.get_params(), [&](const auto& field, std::size_t i) {
      if (export_skips_param(names[i])) return;
      out << (first ? "" : ", ") << names[i] << '=';
      params::detail::print_value(out, field);
      first = false;
    });
    return out.str();
  } else {
    return {};
  }
}

template <class M>
void check_fitted_for_export(const M& m) {
  if constexpr (requires {
                  m.step_names();
                  M::n_steps;
                }) {
    // A pipeline: every step, named, before anything reads a step's attributes.
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (
          [&] {
            const auto& step = m.template step<I>();
            if constexpr (requires { step.is_fitted(); }) {
              if (!step.is_fitted()) {
                throw not_fitted_error(
                    "onnx::to_proto: expected every pipeline step fitted, "
                    "found step '" +
                    m.step_names()[I] + "' not fitted; call fit first");
              }
            }
          }(),
          ...);
    }
    (std::make_index_sequence<M::n_steps>{});
  } else if constexpr (requires { m.is_fitted(); }) {
    if (!m.is_fitted()) {
      throw not_fitted_error("onnx::to_proto: expected a fitted " + estimator_name<M>() +
                             ", found one that is not fitted; call fit first");
    }
  }
}

inline void set_value_info(::onnx::ValueInfoProto& v, const std::string& name,
                           std::int32_t elem_type, const std::vector<std::int64_t>& dims) {
  v.set_name(name);
  auto* tensor = v.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (const std::int64_t d : dims) {
    auto* dim = shape->add_dim();
    if (d < 0) {
      dim->set_dim_param(std::string(batch_dim));
    } else {
      dim->set_dim_value(d);
    }
  }
}

/// Renames a value everywhere the graph mentions it.
inline void rename_value(::onnx::GraphProto& g, const std::string& from, const std::string& to) {
  for (auto& v : *g.mutable_value_info())
    if (v.name() == from) v.set_name(to);
  for (auto& n : *g.mutable_node()) {
    for (auto& i : *n.mutable_input())
      if (i == from) i = to;
    for (auto& o : *n.mutable_output())
      if (o == from) o = to;
  }
}

inline void add_metadata(::onnx::ModelProto& model, const std::string& key,
                         const std::string& value) {
  auto* p = model.add_metadata_props();
  p->set_key(key);
  p->set_value(value);
}

}  // namespace detail

inline void GraphBuilder::declare(const std::string& name, std::int32_t elem_type,
                                  const std::vector<std::int64_t>& dims) {
  detail::set_value_info(*graph_->add_value_info(), name, elem_type, dims);
}

namespace detail {

/// sum_j (x_j - c_kj)^2 w_kj for each row and centre (k x p `centres`): N x k, in the direct
/// form that keeps float32 precision (see onnx/export/cluster.hpp). `weights` (k x p) may be
/// empty (all ones). Used by KMeans and GaussianNB.
inline std::string export_squared_differences(GraphBuilder& b, const std::string& x,
                                              const std::vector<double>& centres,
                                              const std::vector<double>& weights, std::int64_t k,
                                              std::int64_t p) {
  const std::string axis1 = b.constant_int64("axis_1", {1}, {1});
  const std::string axis2 = b.constant_int64("axis_2", {1}, {2});
  const std::string c = b.constant("centres", {k, p}, centres);
  const std::string ones =
      b.constant("ones", {p, 1}, std::vector<double>(static_cast<std::size_t>(p), 1.0));
  const std::string x3 = b.apply("Unsqueeze", {x, axis1}, "x_unsqueezed");  // N x 1 x p
  const std::string diff = b.apply("Sub", {x3, c}, "differences");          // N x k x p
  std::string square = b.apply("Mul", {diff, diff}, "squared_differences");
  if (!weights.empty()) {
    const std::string w = b.constant("weights", {k, p}, weights);
    square = b.apply("Mul", {square, w}, "weighted_squares");
  }
  const std::string sum = b.apply("MatMul", {square, ones}, "summed");  // N x k x 1
  return b.apply("Squeeze", {sum, axis2}, "squared_sums");              // N x k
}

}  // namespace detail

/// The number of input features of a fitted model (a pipeline's first step's).
template <class M>
std::int64_t export_input_features(const M& m) {
  if constexpr (requires { m.template step<0>(); }) {
    return export_input_features(m.template step<0>());
  } else {
    return static_cast<std::int64_t>(m.n_features_in());
  }
}

/// The graph input "X" a model reads: its element type and dims.
struct ExportedInput {
  std::int32_t elem_type = ::onnx::TensorProto::FLOAT;
  std::vector<std::int64_t> dims;
};

/// By default the features: real (the export's precision), N x n_features_in(). A model that
/// reads something else declares it with an overload found by argument-dependent lookup, as
/// export_model is (LabelEncoder: a vector of labels).
template <class M>
ExportedInput export_input(const GraphBuilder& b, const M& m) {
  return {b.real_type(), {-1, export_input_features(m)}};
}

/// The fitted `model` as an ONNX ModelProto (see the top of this header), in the precision
/// `options` asks for.
template <Exportable M>
::onnx::ModelProto to_proto(const M& model, const ExportOptions& options = {}) {
  detail::check_fitted_for_export(model);
  ::onnx::ModelProto proto;
  proto.set_ir_version(export_ir_version);
  proto.set_producer_name("onelearn");
  proto.set_producer_version(std::string(version));
  proto.set_model_version(1);
  auto* opset = proto.add_opset_import();
  opset->set_domain("");
  opset->set_version(export_opset);
  auto* ml = proto.add_opset_import();
  ml->set_domain(std::string(ml_domain));
  ml->set_version(export_ml_opset);

  const std::string name = detail::estimator_name<M>();
  ::onnx::GraphProto& graph = *proto.mutable_graph();
  graph.set_name(name);
  GraphBuilder builder(graph, options.precision);
  const ExportedInput input = export_input(builder, model);
  detail::set_value_info(*graph.add_input(), "X", input.elem_type, input.dims);

  // Reserved: no internal value takes the input's name or an output's final name.
  for (const char* reserved : {"X", "label", "probabilities", "scores", "variable"}) {
    builder.fresh(reserved);
  }
  const Exported outputs = export_model(builder, model, std::string("X"));
  for (const ExportedValue& out : outputs) {
    // The final outputs take the names skl2onnx gives them; no other value has those names
    // (they were reserved above, so internal values got "variable_1" and the like).
    std::string final_name = out.role;
    if (out.name != final_name) {
      if (out.name == "X") {
        builder.node("Identity", {"X"}, {final_name});
      } else {
        detail::rename_value(graph, out.name, final_name);
      }
    }
    detail::set_value_info(*graph.add_output(), final_name, out.elem_type, out.dims);
  }
  // A graph output is declared as such, not also as an internal value.
  auto* infos = graph.mutable_value_info();
  for (int i = infos->size() - 1; i >= 0; --i) {
    for (const auto& out : graph.output()) {
      if (infos->Get(i).name() == out.name()) {
        infos->DeleteSubrange(i, 1);
        break;
      }
    }
  }
  detail::add_metadata(proto, "estimator", name);
  detail::add_metadata(proto, "parameters", detail::estimator_parameters(model));
  detail::add_metadata(proto, "onelearn_version", std::string(version));
  proto.set_doc_string("onelearn " + std::string(version) + " export of " + name);
  return proto;
}

/// Serialises `proto` to `path` with io::write_file_atomically (a temporary file in the same
/// directory, fsync'ed and renamed into place), so a reader never sees half a model and a
/// failure leaves no file.
inline void save_proto(const ::onnx::ModelProto& proto, const std::filesystem::path& path) {
  const std::string where = "onnx::save: " + path.string();
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) throw io_error(where + ": protobuf serialisation failed");
  try {
    io::write_file_atomically(path, bytes);
  } catch (const io_error& e) {
    throw io_error("onnx::save: " + std::string(e.what()));
  }
}

/// Exports the fitted `model` (to_proto) and writes it to `path` (save_proto).
template <Exportable M>
void save(const M& model, const std::filesystem::path& path, const ExportOptions& options = {}) {
  save_proto(to_proto(model, options), path);
}

}  // namespace onelearn::onnx
