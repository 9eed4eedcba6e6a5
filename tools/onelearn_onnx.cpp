// onelearn-onnx: look into, run and conformance-check ONNX models with onelearn's executor.
//
//   onelearn-onnx info MODEL                    inputs, outputs (shapes), opsets, operator counts
//   onelearn-onnx run MODEL IN.npy... -o DIR    runs the model; each output as DIR/<name>.npy
//   onelearn-onnx check DIR...                  runs ONNX backend test folders
//   onelearn-onnx --help | --version
//
// check: a DIR holding model.onnx is one test folder (model.onnx + test_data_set_*/input_*.pb and
// output_*.pb); any other DIR stands for the test folders directly inside it. One line per
// folder: "passed", "failed (max abs err X, max rel err Y)" (or the error), or "skipped (unsupported
// op Foo)" / "skipped (data type bar)"; then "N passed, M failed, K skipped". Outputs must match
// as ONNX's backend tests require: |actual - expected| <= atol + rtol * |expected| with
// rtol 1e-3, atol 1e-7, equal shapes and element types. Exit status 1 if anything failed.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
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
  if (header.descr_is_string && descr == "<f4") return finish(read(float{}));
  if (header.descr_is_string && descr == "<f8") return finish(read(double{}));
  if (header.descr_is_string && descr == "<i8") return finish(read(std::int64_t{}));
  if (header.descr_is_string && descr == "<i4") {
    const auto raw = read(std::int32_t{});
    return finish(std::vector<std::int64_t>(raw.begin(), raw.end()));
  }
  throw onelearn::io_error(in.where() + ": unsupported dtype '" + onelearn::io::detail::escape_bytes(descr) +
                           "' (supported: <f4, <f8, <i8, <i4)");
}

void write_npy(const fs::path& path, const ox::Tensor& t) {
  namespace d = onelearn::io;
  const char* descr = t.dtype() == ox::DataType::float32   ? "<f4"
                      : t.dtype() == ox::DataType::float64 ? "<f8"
                                                           : "<i8";
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

enum class Outcome { passed, failed, skipped };

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

Result skipped(const ox::unsupported_error& e) {
  switch (e.kind()) {
    case ox::unsupported_kind::op: return {Outcome::skipped, "unsupported op " + e.detail()};
    case ox::unsupported_kind::data_type: return {Outcome::skipped, "data type " + e.detail()};
    case ox::unsupported_kind::opset: return {Outcome::skipped, "opset " + e.detail()};
    case ox::unsupported_kind::attribute: break;
  }
  // An attribute value of a supported operator that is not implemented is a gap, not a reason
  // to skip: it counts as a failure.
  return {Outcome::failed, e.what()};
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

Result check_folder(const fs::path& dir) {
  std::optional<ox::Graph> graph;
  try {
    graph.emplace(ox::read_model_proto(dir / "model.onnx"), (dir / "model.onnx").string());
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
  int counts[3] = {0, 0, 0};
  for (const fs::path& f : folders) {
    const Result r = check_folder(f);
    ++counts[static_cast<int>(r.outcome)];
    const std::string name = f.parent_path().filename().string() + "/" + f.filename().string();
    std::cout << name << ": "
              << (r.outcome == Outcome::passed   ? "passed"
                  : r.outcome == Outcome::failed ? "failed (" + r.detail + ")"
                                                 : "skipped (" + r.detail + ")")
              << "\n";
  }
  std::cout << counts[0] << " passed, " << counts[1] << " failed, " << counts[2] << " skipped"
            << std::endl;
  return counts[1] > 0 ? 1 : 0;
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

  CLI11_PARSE(app, argc, argv);
  try {
    if (info_command->parsed()) return info(model);
    if (run_command->parsed()) return run(model, {inputs.begin(), inputs.end()}, out_dir);
    return check({folders.begin(), folders.end()});
  } catch (const std::exception& e) {
    std::cerr << "onelearn-onnx: " << e.what() << "\n";
    return 1;
  }
}
