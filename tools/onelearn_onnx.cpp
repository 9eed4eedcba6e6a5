/**
 * \page tool-onelearn-onnx onelearn-onnx
 *
 * \code{.sh}
 * onelearn-onnx info model.onnx                      # inputs, outputs, opsets, operators
 * onelearn-onnx run model.onnx X.npy -o out/         # out/<output name>.npy
 * onelearn-onnx check /usr/share/onnx/testdata/node  # ONNX's backend tests, with a summary
 * onelearn-onnx ops --markdown                       # the operators the executor runs
 * \endcode
 *
 * onelearn-onnx: look into, run and conformance-check ONNX models with onelearn's executor.
 *
 * \code{.unparsed}
 *   onelearn-onnx info MODEL                    inputs, outputs (shapes), opsets, operator counts
 *   onelearn-onnx run MODEL IN.npy... -o DIR    runs the model; each output as DIR/<name>.npy
 *   onelearn-onnx check DIR...                  runs ONNX backend test folders
 *   onelearn-onnx ops [--markdown]              the supported operators (docs/onnx-operators.md)
 *   onelearn-onnx --help | --version
 * \endcode
 *
 * check: a DIR holding model.onnx is one test folder (model.onnx, test_data_set_N/input_I.pb and
 * output_I.pb); any other DIR stands for the test folders directly inside it. Each folder is, in
 * this order:
 * \code{.unparsed}
 *   invalid   the ONNX checker (onnx::checker::check_model) rejects its model: not counted;
 *   excluded  it needs what the executor leaves out on purpose (see exclusion_reason: training
 *             operators, sequence/optional/map values, strings, float16/bfloat16, the other
 *             integer widths, random operators): not counted, listed with the reason;
 *   passed / failed / skipped (an operator or type the executor lacks): counted.
 * \endcode
 * Outputs must match as ONNX's backend tests require: |actual - expected| <= atol + rtol *
 * |expected| with rtol 1e-3, atol 1e-7, equal shapes and element types. The last lines are a
 * table per operator (a test counts for every operator its model uses), the exclusions by reason
 * and the summary line
 * \code{.unparsed}
 *   "N passed, M failed, K skipped, E excluded, I invalid; coverage P% (passed / counted)".
 * \endcode
 * Exit status 1 if anything failed.
 */

#include <CLI/CLI.hpp>
#include <onnx/checker.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "onelearn/core/version.hpp"
#include "onelearn/io/detail/escape_bytes.hpp"
#include "onelearn/io/io.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/graph.hpp"
#include "onelearn/onnx/load.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace fs = std::filesystem;
namespace ox = onelearn::onnx;

namespace {

constexpr double rtol = 1e-3;
constexpr double atol = 1e-7;

// --- .npy of any rank ------------------------------------------------------------------------

/// numpy's dtype string of each element type.
std::string npy_descr(ox::DataType t) {
  return ox::dispatch(t, [](auto tag) -> std::string {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, ox::boolean>) {
      return "|b1";
    } else if constexpr (sizeof(T) == 1) {
      return std::is_signed_v<T> ? "|i1" : "|u1";
    } else {
      return std::string("<") + (std::is_floating_point_v<T> ? "f" : "i") +
             std::to_string(sizeof(T));
    }
  });
}

ox::Tensor read_npy(const fs::path& path) {
  namespace d = onelearn::io;
  d::ByteReader in(path);
  const d::NpyHeader header = d::read_npy_header(in);
  const std::string& descr = header.descr;
  ox::Shape shape;
  for (const std::uint64_t s : header.shape) {
    if (s > static_cast<std::uint64_t>(INT64_MAX)) throw onelearn::io_error(in.where() + ": array too large");
    shape.push_back(static_cast<std::int64_t>(s));
  }
  const std::size_t n = ox::element_count(shape);
  const auto read = [&](auto sample) {
    using S = decltype(sample);
    std::vector<S> raw(n);
    in.read(raw.data(), n * sizeof(S), "array data");
    return raw;
  };
  const auto finish = [&](auto values) {
    using T = typename decltype(values)::value_type;
    if (!header.fortran_order || shape.size() < 2) return ox::Tensor(shape, std::move(values));
    // Fortran order: element [i0, i1, ...] sits at i0 + i1 * d0 + ...
    std::vector<T> c_order(n);
    std::vector<std::int64_t> index(shape.size(), 0);
    for (std::size_t k = 0; k < n; ++k) {
      std::int64_t f = 0, stride = 1;
      for (std::size_t j = 0; j < shape.size(); ++j) {
        f += index[j] * stride;
        stride *= shape[j];
      }
      c_order[k] = values[static_cast<std::size_t>(f)];
      for (std::size_t j = shape.size(); j-- > 0;) {
        if (++index[j] < shape[j]) break;
        index[j] = 0;
      }
    }
    return ox::Tensor(shape, std::move(c_order));
  };
  if (header.descr_is_string) {
    for (std::size_t i = 0; i < ox::data_type_count; ++i) {
      const auto type = static_cast<ox::DataType>(i);
      if (descr != npy_descr(type)) continue;
      return ox::dispatch(type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        return finish(read(T{}));
      });
    }
  }
  std::string supported;
  for (std::size_t i = 0; i < ox::data_type_count; ++i) {
    supported += std::string(i > 0 ? ", " : "") + npy_descr(static_cast<ox::DataType>(i));
  }
  throw onelearn::io_error(in.where() + ": unsupported dtype '" +
                           onelearn::io::detail::escape_bytes(descr) + "' (supported: " +
                           supported + ")");
}

void write_npy(const fs::path& path, const ox::Tensor& t) {
  namespace d = onelearn::io;
  const std::string descr = npy_descr(t.dtype());
  std::vector<std::uint64_t> shape(t.shape().begin(), t.shape().end());
  d::write_file_atomically(path, [&](d::FileSink& out) {
    out.write(d::npy_preamble(descr, shape));
    std::visit([&](const auto& v) { out.write(v.data(), v.size() * sizeof(v[0])); }, t.storage());
  });
}

// --- info ------------------------------------------------------------------------------------

std::string describe_value(const ::onnx::ValueInfoProto& v) {
  if (!v.has_type() || !v.type().has_tensor_type()) return v.name() + ": (not a tensor)";
  const auto& tt = v.type().tensor_type();
  std::string s = v.name() + ": " + ox::onnx_type_name(tt.elem_type());
  if (!tt.has_shape()) return s + " (shape unknown)";
  s += " (";
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& dim = tt.shape().dim(i);
    if (i > 0) s += ", ";
    s += dim.has_dim_value() ? std::to_string(dim.dim_value())
         : dim.has_dim_param() ? dim.dim_param() : std::string("?");
  }
  return s + (tt.shape().dim_size() == 1 ? ",)" : ")");
}

int info(const fs::path& path) {
  const ::onnx::ModelProto model = ox::read_model_proto(path);
  const auto& g = model.graph();
  std::cout << "model: " << path.string() << "\n";
  std::cout << "ir_version: " << model.ir_version() << "\n";
  if (!model.producer_name().empty()) {
    std::cout << "producer: " << model.producer_name() << " " << model.producer_version() << "\n";
  }
  std::cout << "opset imports:";
  for (const auto& imp : model.opset_import()) {
    std::cout << " " << (imp.domain().empty() ? "ai.onnx" : imp.domain()) << " " << imp.version();
  }
  std::cout << "\n";
  std::map<std::string, bool> initialized;
  for (const auto& init : g.initializer()) initialized[init.name()] = true;
  std::cout << "inputs:\n";
  for (const auto& in : g.input()) {
    if (initialized.count(in.name()) == 0) std::cout << "  " << describe_value(in) << "\n";
  }
  std::cout << "outputs:\n";
  for (const auto& out : g.output()) std::cout << "  " << describe_value(out) << "\n";
  std::cout << "initializers: " << g.initializer_size() << "\n";
  std::map<std::string, int> ops;
  for (const auto& node : g.node()) {
    ++ops[(node.domain().empty() || node.domain() == "ai.onnx" ? "" : node.domain() + ":") +
          node.op_type()];
  }
  const auto& table = ox::operator_table();
  std::cout << "operators (" << g.node_size() << " nodes):\n";
  for (const auto& [op, count] : ops) {
    std::cout << "  " << op << " x" << count
              << (table.count(op) != 0 ? "" : "  (not supported by onelearn)") << "\n";
  }
  try {
    const ox::Graph graph(model, path.string());
    std::cout << "onelearn can run this model\n";
  } catch (const std::exception& e) {
    std::cout << "onelearn cannot run this model: " << e.what() << "\n";
  }
  return 0;
}

// --- run -------------------------------------------------------------------------------------

std::string file_stem_for(const std::string& name) {
  std::string s = name.empty() ? "output" : name;
  for (char& c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) c = '_';
  }
  return s;
}

int run(const fs::path& model, const std::vector<fs::path>& inputs, const fs::path& out_dir) {
  const ox::Graph graph = ox::load(model);
  std::vector<ox::Tensor> x;
  for (const auto& p : inputs) x.push_back(read_npy(p));
  const std::vector<ox::Tensor> y = graph.run(x);
  fs::create_directories(out_dir);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const fs::path out = out_dir / (file_stem_for(graph.outputs()[i].name) + ".npy");
    write_npy(out, y[i]);
    std::cout << graph.outputs()[i].name << " " << ox::shape_string(y[i].shape()) << " -> "
              << out.string() << "\n";
  }
  return 0;
}

// --- check -----------------------------------------------------------------------------------

enum class Outcome { passed, failed, skipped, excluded, invalid };

struct Result {
  Outcome outcome;
  std::string detail;
};

std::string number(double v) {
  std::ostringstream s;
  s.precision(3);
  s << v;
  return s.str();
}

/// "" if `actual` matches `expected`, else why not.
std::string compare(const ox::Tensor& actual, const ox::Tensor& expected) {
  if (actual.dtype() != expected.dtype()) {
    return std::string("element type ") + ox::to_string(actual.dtype()) + ", expected " +
           ox::to_string(expected.dtype());
  }
  if (actual.shape() != expected.shape()) {
    return "shape " + ox::shape_string(actual.shape()) + ", expected " +
           ox::shape_string(expected.shape());
  }
  const std::vector<double> a = actual.to_vector<double>(), e = expected.to_vector<double>();
  double max_abs = 0, max_rel = 0;
  bool ok = true;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(e[i])) {
      if (std::isnan(a[i]) != std::isnan(e[i])) ok = false;
      continue;
    }
    if (a[i] == e[i]) continue;  // equal infinities too
    const double err = std::abs(a[i] - e[i]);
    max_abs = std::max(max_abs, err);
    if (e[i] != 0) max_rel = std::max(max_rel, err / std::abs(e[i]));
    if (!(err <= atol + rtol * std::abs(e[i]))) ok = false;
  }
  if (ok) return "";
  return "max abs err " + number(max_abs) + ", max rel err " + number(max_rel);
}

// The exclusion categories, as check reports them and docs/onnx-operators.md lists them.
const char* const excl_training = "training operator (ai.onnx.preview.training)";
const char* const excl_random = "random operator";
const char* const excl_sequence = "sequence/optional/map values (tensors only)";
const char* const excl_string = "strings (no string tensors)";
const char* const excl_half = "float16/bfloat16 (no half-precision element types)";
const char* const excl_widths =
    "int16/uint16/uint32/uint64 (element types outside the executor's set)";
const char* const excl_complex = "complex element types";

Result skipped(const ox::unsupported_error& e) {
  switch (e.kind()) {
    case ox::unsupported_kind::op: return {Outcome::skipped, "unsupported op " + e.detail()};
    case ox::unsupported_kind::data_type: return {Outcome::skipped, "data type " + e.detail()};
    case ox::unsupported_kind::opset: return {Outcome::skipped, "opset " + e.detail()};
    case ox::unsupported_kind::random: return {Outcome::excluded, excl_random};
    case ox::unsupported_kind::attribute: break;
  }
  // An attribute value of a supported operator that is not implemented is a gap, not a reason
  // to skip: it counts as a failure.
  return {Outcome::failed, e.what()};
}

// --- what check leaves out on purpose ---------------------------------------------------------

/// Operators that draw random numbers: their outputs cannot be compared with fixed data.
const std::set<std::string>& random_ops() {
  static const std::set<std::string> ops = {"Bernoulli", "Multinomial", "RandomNormal",
                                            "RandomNormalLike", "RandomUniform",
                                            "RandomUniformLike"};
  return ops;
}

/// Why the executor leaves a model out on purpose ("" when it does not): the categories the
/// summary reports as excluded, each with its reason.
std::string exclusion_reason(const ::onnx::ModelProto& model) {
  std::string type_reason;
  const auto elem = [&](std::int32_t t) {
    using TP = ::onnx::TensorProto;
    if (t == TP::STRING) return std::string(excl_string);
    if (t == TP::FLOAT16 || t == TP::BFLOAT16) return std::string(excl_half);
    if (t == TP::INT16 || t == TP::UINT16 || t == TP::UINT32 || t == TP::UINT64) {
      return std::string(excl_widths);
    }
    if (t == TP::COMPLEX64 || t == TP::COMPLEX128) return std::string(excl_complex);
    return std::string();
  };
  const auto value_reason = [&](const ::onnx::TypeProto& type) -> std::string {
    if (type.has_sequence_type() || type.has_optional_type() || type.has_map_type()) {
      return excl_sequence;
    }
    if (type.has_tensor_type()) return elem(type.tensor_type().elem_type());
    return "";
  };
  const auto& g = model.graph();
  for (const auto& node : g.node()) {
    if (node.domain() == "ai.onnx.preview.training") return excl_training;
    if (random_ops().count(node.op_type()) != 0) return excl_random;
    const std::string& op = node.op_type();
    if (op.rfind("Sequence", 0) == 0 || op.rfind("Optional", 0) == 0 ||
        op == "SplitToSequence" || op == "ConcatFromSequence") {
      return excl_sequence;
    }
    for (const auto& a : node.attribute()) {
      if (a.has_t()) {
        const std::string r = elem(a.t().data_type());
        if (!r.empty()) return r;
      }
      if (a.name() == "to" && a.type() == ::onnx::AttributeProto::INT) {
        const std::string r = elem(static_cast<std::int32_t>(a.i()));
        if (!r.empty()) return r;
      }
    }
  }
  for (const auto& v : g.input())
    if (const std::string r = value_reason(v.type()); !r.empty()) return r;
  for (const auto& v : g.output())
    if (const std::string r = value_reason(v.type()); !r.empty()) return r;
  for (const auto& t : g.initializer())
    if (const std::string r = elem(t.data_type()); !r.empty()) return r;
  return "";
}

std::vector<ox::Tensor> read_numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<ox::Tensor> out;
  for (int i = 0;; ++i) {
    const fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    out.push_back(ox::read_tensor(p));
  }
  return out;
}

Result check_folder(const fs::path& dir, std::set<std::string>& ops_used) {
  ::onnx::ModelProto model;
  try {
    model = ox::read_model_proto(dir / "model.onnx");
  } catch (const std::exception& e) {
    return {Outcome::failed, e.what()};
  }
  for (const auto& node : model.graph().node()) {
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    ops_used.insert(default_domain ? node.op_type() : node.domain() + ":" + node.op_type());
  }
  try {
    ::onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (const auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    return {Outcome::invalid, "ONNX checker: " + what};
  }
  if (const std::string why = exclusion_reason(model); !why.empty()) {
    return {Outcome::excluded, why};
  }
  std::optional<ox::Graph> graph;
  try {
    graph.emplace(std::move(model), (dir / "model.onnx").string());
  } catch (const ox::unsupported_error& e) {
    return skipped(e);
  } catch (const std::exception& e) {
    return {Outcome::failed, e.what()};
  }
  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0) {
      sets.push_back(entry.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {Outcome::failed, "no test_data_set_* folder"};
  for (const fs::path& set : sets) {
    try {
      const std::vector<ox::Tensor> inputs = read_numbered(set, "input_");
      const std::vector<ox::Tensor> expected = read_numbered(set, "output_");
      const std::vector<ox::Tensor> actual = graph->run(inputs);
      if (actual.size() != expected.size()) {
        return {Outcome::failed, std::to_string(actual.size()) + " outputs, expected " +
                                     std::to_string(expected.size())};
      }
      for (std::size_t i = 0; i < actual.size(); ++i) {
        const std::string why = compare(actual[i], expected[i]);
        if (!why.empty()) {
          return {Outcome::failed, set.filename().string() + " output " + std::to_string(i) +
                                       ": " + why};
        }
      }
    } catch (const ox::unsupported_error& e) {
      return skipped(e);
    } catch (const std::exception& e) {
      return {Outcome::failed, set.filename().string() + ": " + e.what()};
    }
  }
  return {Outcome::passed, ""};
}

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::passed: return "passed";
    case Outcome::failed: return "failed";
    case Outcome::skipped: return "skipped";
    case Outcome::excluded: return "excluded";
    case Outcome::invalid: return "invalid";
  }
  return "?";
}

int check(const std::vector<fs::path>& dirs) {
  std::vector<fs::path> folders;
  for (const fs::path& d : dirs) {
    if (fs::exists(d / "model.onnx")) {
      folders.push_back(d);
      continue;
    }
    if (!fs::is_directory(d)) {
      std::cerr << "onelearn-onnx: " << d.string() << ": not a test folder or a directory of them\n";
      return 2;
    }
    std::vector<fs::path> inside;
    for (const auto& entry : fs::directory_iterator(d)) {
      if (entry.is_directory() && fs::exists(entry.path() / "model.onnx")) {
        inside.push_back(entry.path());
      }
    }
    std::sort(inside.begin(), inside.end());
    folders.insert(folders.end(), inside.begin(), inside.end());
  }
  constexpr int n_outcomes = 5;
  int counts[n_outcomes] = {};
  std::map<std::string, std::array<int, n_outcomes>> per_op;
  std::map<std::string, int> exclusions;
  for (const fs::path& f : folders) {
    std::set<std::string> ops;
    const Result r = check_folder(f, ops);
    const auto o = static_cast<std::size_t>(r.outcome);
    ++counts[o];
    for (const std::string& op : ops) ++per_op[op][o];
    if (r.outcome == Outcome::excluded) ++exclusions[r.detail];
    const std::string name = f.parent_path().filename().string() + "/" + f.filename().string();
    std::cout << name << ": " << outcome_name(r.outcome)
              << (r.detail.empty() ? std::string() : " (" + r.detail + ")") << "\n";
  }
  std::cout << "\nper operator (a test counts for every operator in its model):\n";
  std::cout << "  operator                           passed  failed skipped excluded invalid\n";
  for (const auto& [op, c] : per_op) {
    char line[200];
    std::snprintf(line, sizeof line, "  %-32s %7d %7d %7d %8d %7d\n", op.c_str(), c[0], c[1], c[2],
                  c[3], c[4]);
    std::cout << line;
  }
  if (!exclusions.empty()) {
    std::cout << "\nexcluded (not counted), by reason:\n";
    for (const auto& [why, n] : exclusions) std::cout << "  " << n << "  " << why << "\n";
  }
  const int counted = counts[0] + counts[1] + counts[2];
  const double coverage = counted == 0 ? 100.0 : 100.0 * counts[0] / counted;
  std::ostringstream pct;
  pct.setf(std::ios::fixed);
  pct.precision(1);
  pct << coverage;
  std::cout << "\n" << counts[0] << " passed, " << counts[1] << " failed, " << counts[2]
            << " skipped, " << counts[3] << " excluded, " << counts[4]
            << " invalid; coverage " << pct.str() << "% (passed / counted; counted = passed + "
            << "failed + skipped: models the ONNX checker accepts, less the exclusions)"
            << std::endl;
  return counts[1] > 0 ? 1 : 0;
}

// --- ops ---------------------------------------------------------------------------------------

/// The operator table, from the executor's registry (ops/registry.hpp).
int list_ops(bool markdown) {
  // Sorted: the default domain first, then by name.
  std::vector<ox::OperatorInfo> table = ox::operators();
  std::sort(table.begin(), table.end(), [](const ox::OperatorInfo& a, const ox::OperatorInfo& b) {
    const bool ma = a.name.find(':') != std::string_view::npos;
    const bool mb = b.name.find(':') != std::string_view::npos;
    return ma != mb ? mb : a.name < b.name;
  });
  if (!markdown) {
    for (const ox::OperatorInfo& op : table) {
      std::cout << op.name << "  opsets " << op.since << "-"
                << (op.name.find(':') == std::string_view::npos ? ox::max_onnx_opset
                                                                 : ox::max_onnx_ml_opset)
                << "  types " << (op.types.empty() ? "any" : op.types.names())
                << (op.notes.empty() ? "" : "  (" + std::string(op.notes) + ")") << "\n";
    }
    return 0;
  }
  std::cout << "# ONNX operators supported by onelearn's executor\n\n"
            << "<!-- Generated by `onelearn-onnx ops --markdown` from "
               "include/onelearn/onnx/ops/registry.hpp; do not edit. The onnx_operators_doc "
               "test fails when this file and the registry disagree. -->\n\n"
            << "Element types: " << ox::types::all.names()
            << ". \"Types\" are those of the operator's first input, which the executor checks "
               "before the operator runs (any other type is an `unsupported_error` naming the "
               "node); \"any\" means every element type. Opsets run from the one that "
               "introduced the operator to the newest the executor supports ("
            << ox::max_onnx_opset << " for ai.onnx, " << ox::max_onnx_ml_opset
            << " for ai.onnx.ml).\n\n"
            << "| Operator | Domain | Opsets | Types | Notes |\n"
            << "|---|---|---|---|---|\n";
  for (const ox::OperatorInfo& op : table) {
    const auto colon = op.name.find(':');
    const bool ml = colon != std::string_view::npos;
    std::cout << "| " << (ml ? op.name.substr(colon + 1) : op.name) << " | "
              << (ml ? op.name.substr(0, colon) : std::string_view("ai.onnx")) << " | "
              << op.since << "-" << (ml ? ox::max_onnx_ml_opset : ox::max_onnx_opset) << " | "
              << (op.types.empty() ? std::string("any") : op.types.names()) << " | " << op.notes
              << " |\n";
  }
  std::cout << "\n" << table.size() << " operators.\n\n"
            << "## Conformance: how `onelearn-onnx check` counts\n\n"
            << "`onelearn-onnx check /usr/share/libonnx-testdata/data/node` runs ONNX's backend "
               "node tests (ONNX 1.12: opsets up to 17). A test whose model the ONNX checker "
               "(`onnx::checker::check_model`) rejects is *invalid* and not counted. A test that "
               "needs what the executor leaves out on purpose is *excluded*, not counted, and "
               "listed with its reason:\n\n";
  for (const char* why : {excl_training, excl_random, excl_sequence, excl_string, excl_half,
                          excl_widths, excl_complex}) {
    std::cout << "- " << why << "\n";
  }
  std::cout << "\n(random: Bernoulli, Multinomial, RandomNormal(Like), RandomUniform(Like), and "
               "Dropout in training mode with a ratio above 0.) Every other test counts: it "
               "passes, fails, or is skipped for an operator or type the executor lacks. "
               "Coverage is passed / counted; the onnx_conformance test asserts the counts and "
               "that nothing fails. The tool prints the same numbers per operator.\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"onelearn-onnx: look into, run and conformance-check ONNX models with onelearn's executor",
               "onelearn-onnx"};
  app.set_version_flag("--version", std::string("onelearn-onnx ") + std::string(onelearn::version));
  app.require_subcommand(1);

  std::string model;
  auto* info_command = app.add_subcommand("info", "inputs, outputs (shapes), opsets, operator counts");
  info_command->add_option("MODEL", model, "the .onnx file")->required();

  std::vector<std::string> inputs;
  std::string out_dir;
  auto* run_command = app.add_subcommand("run", "runs the model; each output as OUT_DIR/<name>.npy");
  run_command->add_option("MODEL", model, "the .onnx file")->required();
  run_command->add_option("INPUTS", inputs, "one .npy per graph input, in order");
  run_command->add_option("-o,--output-dir", out_dir, "where the outputs go")->required();

  std::vector<std::string> folders;
  auto* check_command = app.add_subcommand(
      "check", "runs ONNX backend test folders (a folder with model.onnx, or one holding such folders)");
  check_command->add_option("DIR", folders, "test folders")->required();

  bool markdown = false;
  auto* ops_command = app.add_subcommand(
      "ops", "the supported operators, from the executor's registry (docs/onnx-operators.md)");
  ops_command->add_flag("--markdown", markdown, "print the Markdown table of docs/onnx-operators.md");

  CLI11_PARSE(app, argc, argv);
  try {
    if (info_command->parsed()) return info(model);
    if (run_command->parsed()) return run(model, {inputs.begin(), inputs.end()}, out_dir);
    if (ops_command->parsed()) return list_ops(markdown);
    return check({folders.begin(), folders.end()});
  } catch (const std::exception& e) {
    std::cerr << "onelearn-onnx: " << e.what() << "\n";
    return 1;
  }
}
