// The ONNX executor (onelearn/onnx/graph.hpp) on small graphs built here with the protobuf API:
// values derived by hand or printed by scikit-learn 1.2.1, and each typed error. The conformance
// over ONNX's own backend test data is the CTest test onnx_conformance (tests/cmake/
// onnx_tests.cmake); these tests pin what that data does not reach (ONNX-ML operators, error
// messages, opset-dependent attributes in both forms).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/graph.hpp"
#include "onelearn/onnx/load.hpp"
#include "onelearn/onnx/ops/planar.hpp"
#include "onelearn/onnx/tensor.hpp"
#include "onnxruntime_support.hpp"

namespace ox = onelearn::onnx;
using ox::Shape;
using ox::Tensor;

namespace {

/// Builds a ModelProto node by node.
class ModelBuilder {
 public:
  explicit ModelBuilder(std::int64_t opset = 13, std::int64_t ml_opset = 0) {
    model_.set_ir_version(8);
    auto* imp = model_.add_opset_import();
    imp->set_domain("");
    imp->set_version(opset);
    if (ml_opset > 0) {
      auto* ml = model_.add_opset_import();
      ml->set_domain("ai.onnx.ml");
      ml->set_version(ml_opset);
    }
  }
  ::onnx::NodeProto& node(const std::string& op, std::initializer_list<std::string> inputs,
                          std::initializer_list<std::string> outputs, const std::string& name = "",
                          const std::string& domain = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    n->set_domain(domain);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  /// dims: -1 is the symbolic dimension "N".
  void input(const std::string& name, std::vector<std::int64_t> dims,
             int elem = ::onnx::TensorProto::FLOAT) {
    value(model_.mutable_graph()->add_input(), name, dims, elem);
  }
  void output(const std::string& name, int elem = ::onnx::TensorProto::FLOAT) {
    auto* v = model_.mutable_graph()->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  }
  void initializer(const std::string& name, const Tensor& t) {
    *model_.mutable_graph()->add_initializer() = ox::tensor_to_proto(t, name);
  }
  [[nodiscard]] ox::Graph graph() const { return ox::Graph(model_); }
  [[nodiscard]] const ::onnx::ModelProto& proto() const { return model_; }

 private:
  static void value(::onnx::ValueInfoProto* v, const std::string& name,
                    const std::vector<std::int64_t>& dims, int elem) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (const std::int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d < 0) dim->set_dim_param("N");
      else dim->set_dim_value(d);
    }
  }

  ::onnx::ModelProto model_;
};

void set_int(::onnx::NodeProto& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}
void set_float(::onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
void set_ints(::onnx::NodeProto& n, const std::string& name, std::vector<std::int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (const auto x : v) a->add_ints(x);
}
void set_floats(::onnx::NodeProto& n, const std::string& name, std::vector<double> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOATS);
  for (const auto x : v) a->add_floats(static_cast<float>(x));
}
void set_string(::onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(v);
}

Tensor f32(Shape shape, std::vector<float> v) { return Tensor(std::move(shape), std::move(v)); }
Tensor i64(Shape shape, std::vector<std::int64_t> v) { return Tensor(std::move(shape), std::move(v)); }

void check_values(const Tensor& t, const Shape& shape, const std::vector<double>& expected,
                  double tolerance = 1e-6) {
  REQUIRE(t.shape() == shape);
  const std::vector<double> v = t.to_vector<double>();
  REQUIRE(v.size() == expected.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    CAPTURE(i);
    CHECK(v[i] == doctest::Approx(expected[i]).epsilon(tolerance));
  }
}

/// The message of the exception E that f throws.
template <class E, class F>
std::string message_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("expected an exception");
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("Tensor: shape and values must agree; reshape keeps the element count") {
  CHECK_THROWS_AS(f32({2, 3}, {1, 2, 3}), onelearn::shape_error);
  const Tensor t = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(t.dtype() == ox::DataType::float32);
  CHECK(t.reshaped({3, 2}).shape() == Shape{3, 2});
  CHECK_THROWS_AS((void)t.reshaped({4, 2}), onelearn::shape_error);
  CHECK_THROWS_AS((void)t.data<double>(), onelearn::invalid_argument);
  CHECK(ox::shape_string({5}) == "(5,)");
}

TEST_CASE("A two-layer MLP (Gemm, Relu, Gemm, Softmax) by hand") {
  // h = relu(x W1' + b1), W1 = [[1, -1], [2, 1]], b1 = [0, -1]; y = softmax(h W2 + b2),
  // W2 = [[1, 0], [0, 1]] (not transposed), b2 = [0, 0].
  // x = [1, 2]: x W1' = [1 - 2, 2 + 2] = [-1, 4] -> + b1 = [-1, 3] -> relu [0, 3]
  // softmax([0, 3]) = [1, e^3] / (1 + e^3).
  ModelBuilder b;
  b.input("x", {-1, 2});
  b.initializer("W1", f32({2, 2}, {1, -1, 2, 1}));
  b.initializer("b1", f32({2}, {0, -1}));
  b.initializer("W2", f32({2, 2}, {1, 0, 0, 1}));
  b.initializer("b2", f32({2}, {0, 0}));
  set_int(b.node("Gemm", {"x", "W1", "b1"}, {"z1"}, "fc1"), "transB", 1);
  b.node("Relu", {"z1"}, {"h"});
  b.node("Gemm", {"h", "W2", "b2"}, {"z2"}, "fc2");
  b.node("Softmax", {"z2"}, {"y"});
  b.output("y");
  const ox::Graph g = b.graph();
  REQUIRE(g.inputs().size() == 1);
  CHECK(g.inputs()[0].describe() == "float32 (N, 2)");
  const auto y = g.run({f32({2, 2}, {1, 2, 0, 0})});
  const double e3 = std::exp(3.0);
  // Second row: x = 0 -> z1 = b1 = [0, -1] -> relu [0, 0] -> softmax [0.5, 0.5].
  check_values(y[0], {2, 2}, {1 / (1 + e3), e3 / (1 + e3), 0.5, 0.5});
}

TEST_CASE("Any DAG: nodes listed out of order, two inputs, two outputs, broadcasting") {
  // s = a + b (b of shape (3,) broadcast over (2, 3)); p = s * a; d = p - s; outputs d and s.
  ModelBuilder b;
  b.input("a", {2, 3});
  b.input("b", {3});
  b.node("Sub", {"p", "s"}, {"d"}, "last");
  b.node("Mul", {"s", "a"}, {"p"});
  b.node("Add", {"a", "b"}, {"s"}, "first");
  b.output("d");
  b.output("s");
  const ox::Graph g = b.graph();
  const auto out = g.run({f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {10, 20, 30})});
  // s = [[11, 22, 33], [14, 25, 36]]; p = [[11, 44, 99], [56, 125, 216]]; d = p - s.
  check_values(out[1], {2, 3}, {11, 22, 33, 14, 25, 36});
  check_values(out[0], {2, 3}, {0, 22, 66, 42, 100, 180});
  // The same by name.
  const auto named = g.run_named(std::map<std::string, Tensor>{
      {"a", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", f32({3}, {10, 20, 30})}});
  check_values(named.at("d"), {2, 3}, {0, 22, 66, 42, 100, 180});
}

TEST_CASE("Opset differences: Squeeze/Unsqueeze axes, Clip bounds, Softmax axis") {
  SUBCASE("Squeeze axes as attribute (opset 11) and as input (opset 13)") {
    ModelBuilder old_style(11);
    old_style.input("x", {1, 3, 1});
    set_ints(old_style.node("Squeeze", {"x"}, {"y"}), "axes", {0});
    old_style.output("y");
    CHECK(old_style.graph().run({f32({1, 3, 1}, {1, 2, 3})})[0].shape() == Shape{3, 1});

    ModelBuilder new_style(13);
    new_style.input("x", {1, 3, 1});
    new_style.initializer("axes", i64({1}, {-1}));
    new_style.node("Squeeze", {"x", "axes"}, {"y"});
    new_style.node("Unsqueeze", {"y", "axes"}, {"z"});
    new_style.output("z");
    CHECK(new_style.graph().run({f32({1, 3, 1}, {1, 2, 3})})[0].shape() == Shape{1, 3, 1});
  }
  SUBCASE("Clip bounds as attributes (opset 6) and as inputs (opset 13)") {
    ModelBuilder old_style(6);
    old_style.input("x", {4});
    auto& n = old_style.node("Clip", {"x"}, {"y"});
    set_float(n, "min", -1.f);
    set_float(n, "max", 2.f);
    old_style.output("y");
    check_values(old_style.graph().run({f32({4}, {-3, 0, 1.5f, 7})})[0], {4}, {-1, 0, 1.5, 2});

    ModelBuilder new_style(13);
    new_style.input("x", {4});
    new_style.initializer("hi", f32({}, {2}));
    new_style.node("Clip", {"x", "", "hi"}, {"y"});  // no lower bound
    new_style.output("y");
    check_values(new_style.graph().run({f32({4}, {-3, 0, 1.5f, 7})})[0], {4}, {-3, 0, 1.5, 2});
  }
  SUBCASE("Softmax axis=1 on (1, 2, 2): rows of 4 before opset 13, along axis 1 from 13") {
    const Tensor x = f32({1, 2, 2}, {0, 0, 0, std::log(3.f)});
    for (const std::int64_t opset : {11, 13}) {
      CAPTURE(opset);
      ModelBuilder b(opset);
      b.input("x", {1, 2, 2});
      set_int(b.node("Softmax", {"x"}, {"y"}), "axis", 1);
      b.output("y");
      const Tensor y = b.graph().run({x})[0];
      if (opset == 11) {
        // One row [1, 1, 1, 3] / 6.
        check_values(y, {1, 2, 2}, {1 / 6., 1 / 6., 1 / 6., 3 / 6.});
      } else {
        // Along axis 1: pairs (x[0,0,j], x[0,1,j]): j=0 -> [0.5, 0.5]; j=1 -> [1/4, 3/4].
        check_values(y, {1, 2, 2}, {0.5, 0.25, 0.5, 0.75});
      }
    }
  }
}

TEST_CASE("Conv, MaxPool (with indices), AveragePool, BatchNormalization, ArgMax by hand") {
  // x = 1..9 in a 3x3 image.
  const Tensor x = f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  SUBCASE("Conv 2x2 of ones, pads 1 on the left/top, bias 0.5, stride 2") {
    ModelBuilder b;
    b.input("x", {1, 1, 3, 3});
    b.initializer("W", f32({1, 1, 2, 2}, {1, 1, 1, 1}));
    b.initializer("B", f32({1}, {0.5f}));
    auto& n = b.node("Conv", {"x", "W", "B"}, {"y"});
    set_ints(n, "pads", {1, 1, 0, 0});
    set_ints(n, "strides", {2, 2});
    b.output("y");
    // Padded 4x4 with a zero first row/column; windows at (0,0),(0,2),(2,0),(2,2) of it:
    // {0,0,0,1}=1, {0,0,2,3}=5, {0,4,0,7}=11, {5,6,8,9}=28; + 0.5.
    check_values(b.graph().run({x})[0], {1, 1, 2, 2}, {1.5, 5.5, 11.5, 28.5});
  }
  SUBCASE("MaxPool 2x2 stride 1 with Indices; AveragePool with count_include_pad") {
    ModelBuilder b(12);
    b.input("x", {1, 1, 3, 3});
    set_ints(b.node("MaxPool", {"x"}, {"m", "i"}), "kernel_shape", {2, 2});
    auto& avg = b.node("AveragePool", {"x"}, {"a"});
    set_ints(avg, "kernel_shape", {2, 2});
    set_ints(avg, "pads", {1, 1, 1, 1});
    set_ints(avg, "strides", {2, 2});
    set_int(avg, "count_include_pad", 1);
    b.output("m");
    b.output("i", ::onnx::TensorProto::INT64);
    b.output("a");
    const auto out = b.graph().run({x});
    check_values(out[0], {1, 1, 2, 2}, {5, 6, 8, 9});
    check_values(out[1], {1, 1, 2, 2}, {4, 5, 7, 8});
    // Windows of the padded 5x5 at rows/cols 0 and 2: {0,0,0,1}/4, {0,0,2,3}/4, {0,4,0,7}/4,
    // {5,6,8,9}/4.
    check_values(out[2], {1, 1, 2, 2}, {0.25, 1.25, 2.75, 7});
  }
  SUBCASE("BatchNormalization (inference) and ArgMax") {
    ModelBuilder b;
    b.input("x", {2, 2});
    b.initializer("scale", f32({2}, {2, 1}));
    b.initializer("bias", f32({2}, {1, 0}));
    b.initializer("mean", f32({2}, {1, 10}));
    b.initializer("var", f32({2}, {4, 1}));
    auto& bn = b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"});
    set_float(bn, "epsilon", 0.f);
    set_int(b.node("ArgMax", {"y"}, {"k"}), "axis", 1);
    b.output("y");
    b.output("k", ::onnx::TensorProto::INT64);
    // Channel 0: 2 * (x - 1) / 2 + 1 = x; channel 1: (x - 10) / 1.
    const auto out = b.graph().run({f32({2, 2}, {3, 12, 20, 5})});
    check_values(out[0], {2, 2}, {3, 2, 20, -5});
    CHECK(out[1].dtype() == ox::DataType::int64);
    check_values(out[1], {2, 1}, {0, 0});
  }
}

namespace {

/// A window over images: the attributes of one Conv / MaxPool / AveragePool node.
struct ImageWindow {
  std::int64_t n, c, h, w, filters, group, kh, kw, sh, sw, dh, dw;
  std::vector<std::int64_t> pads;  // top, left, bottom, right
  std::int64_t ceil_mode, count_include_pad;
  bool bias;
};

/// `op` over x (n, c, h, w) as a 2-D node, or (`volume`) as the same node over (n, c, h, w, 1)
/// with a window of size 1 along the added axis: the executor's N-dimensional form, the
/// reference for its 2-D kernels (onnx/ops/planar.hpp).
Tensor run_window(const std::string& op, const ImageWindow& g, const std::vector<double>& x,
                  const std::vector<double>& weights, const std::vector<double>& bias, bool volume) {
  ModelBuilder b(13);
  const auto extend = [&](Shape s) {
    if (volume) s.push_back(1);
    return s;
  };
  const auto pair = [&](std::int64_t a, std::int64_t d, std::int64_t added) {
    return volume ? std::vector<std::int64_t>{a, d, added} : std::vector<std::int64_t>{a, d};
  };
  b.input("x", extend({g.n, g.c, g.h, g.w}), ::onnx::TensorProto::DOUBLE);
  std::vector<std::string> inputs{"x"};
  if (op == "Conv") {
    b.initializer("W", Tensor(extend({g.filters, g.c / g.group, g.kh, g.kw}), weights));
    inputs.emplace_back("W");
    if (g.bias) {
      b.initializer("B", Tensor(Shape{g.filters}, bias));
      inputs.emplace_back("B");
    }
  }
  auto& node = b.node(op, {}, {"y"});
  for (const auto& i : inputs) node.add_input(i);
  set_ints(node, "kernel_shape", pair(g.kh, g.kw, 1));
  set_ints(node, "strides", pair(g.sh, g.sw, 1));
  const auto& p = g.pads;
  set_ints(node, "pads", volume ? std::vector<std::int64_t>{p[0], p[1], 0, p[2], p[3], 0} : p);
  if (op != "AveragePool") set_ints(node, "dilations", pair(g.dh, g.dw, 1));
  if (op == "Conv") set_int(node, "group", g.group);
  if (op != "Conv") set_int(node, "ceil_mode", g.ceil_mode);
  if (op == "AveragePool") set_int(node, "count_include_pad", g.count_include_pad);
  b.output("y", ::onnx::TensorProto::DOUBLE);
  return b.graph().run({Tensor(extend({g.n, g.c, g.h, g.w}), x)})[0];
}

}  // namespace

TEST_CASE("Images run on the 2-D kernels and give the N-dimensional form's results") {
  // Random geometries (seeded): kernels 1-3, strides 1-2, dilations 1-2, pads 0-2, one or two
  // groups, batches of 0, 1 and 3, ceil_mode and count_include_pad both ways. Doubles, so the
  // only difference is the order of the products' sums.
  std::mt19937 rng(7);
  const auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  std::normal_distribution<double> normal;
  int compared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    ImageWindow g{};
    g.n = std::array<std::int64_t, 3>{0, 1, 3}[static_cast<std::size_t>(pick(0, 2))];
    g.group = pick(1, 2);
    g.c = 2 * g.group;
    g.filters = 2 * g.group * pick(1, 2);
    g.h = pick(5, 9);  // at least the largest dilated window (5)
    g.w = pick(5, 9);
    g.kh = pick(1, 3);
    g.kw = pick(1, 3);
    g.sh = pick(1, 2);
    g.sw = pick(1, 2);
    g.dh = pick(1, 2);
    g.dw = pick(1, 2);
    for (int k = 0; k < 4; ++k) g.pads.push_back(std::min<std::int64_t>(pick(0, 2), (k % 2 == 0 ? g.kh : g.kw) - 1));
    if (trial % 3 == 0) {
      // Every third: the "same" convolution (one group, stride 1, padding (k - 1) x dilation),
      // which runs on the direct kernels rather than im2col.
      g.group = 1;
      g.c = 2;
      g.filters = 2 * pick(1, 2);
      g.sh = g.sw = 1;
      const std::int64_t th = (g.kh - 1) * g.dh, tw = (g.kw - 1) * g.dw;
      g.pads = {th / 2, tw / 2, th - th / 2, tw - tw / 2};
    }
    g.ceil_mode = pick(0, 1);
    g.count_include_pad = pick(0, 1);
    g.bias = pick(0, 1) == 1;
    std::vector<double> x(static_cast<std::size_t>(g.n * g.c * g.h * g.w));
    for (double& v : x) v = normal(rng);
    std::vector<double> weights(static_cast<std::size_t>(g.filters * (g.c / g.group) * g.kh * g.kw));
    for (double& v : weights) v = normal(rng);
    std::vector<double> bias(static_cast<std::size_t>(g.filters));
    for (double& v : bias) v = normal(rng);
    for (const std::string op : {"Conv", "MaxPool", "AveragePool"}) {
      CAPTURE(trial);
      CAPTURE(op);
      const Tensor planar = run_window(op, g, x, weights, bias, false);
      const Tensor volume = run_window(op, g, x, weights, bias, true);
      Shape expected = volume.shape();
      expected.pop_back();
      REQUIRE(planar.shape() == expected);
      const auto a = planar.data<double>(), r = volume.data<double>();
      for (std::size_t i = 0; i < a.size(); ++i) {
        CAPTURE(i);
        // A ceil_mode window wholly past the image has no maximum: -inf in both forms.
        if (std::isinf(r[i])) CHECK(a[i] == r[i]);
        else CHECK(a[i] == doctest::Approx(r[i]).epsilon(1e-12).scale(1.0));
      }
      compared += static_cast<int>(a.size());
    }
  }
  CHECK(compared > 10000);
}

namespace {

/// The bit patterns of a float or double tensor's elements: NaN equals NaN, -0 differs from 0.
std::vector<std::uint64_t> bits_of(const Tensor& t) {
  std::vector<std::uint64_t> bits;
  if (t.holds<float>()) {
    for (const float v : t.data<float>()) bits.push_back(std::bit_cast<std::uint32_t>(v));
  } else {
    for (const double v : t.data<double>()) bits.push_back(std::bit_cast<std::uint64_t>(v));
  }
  return bits;
}

/// Normal values with exact zeros of both signs (1 in 16 each) and NaN (1 in `nan_every`)
/// among them (seeded).
template <class T>
std::vector<T> awkward_values(std::size_t n, std::uint32_t seed, std::uint32_t nan_every) {
  std::mt19937 rng(seed);
  std::normal_distribution<T> normal;
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto draw = static_cast<std::uint32_t>(rng());
    if (draw % nan_every == 0) v[i] = std::numeric_limits<T>::quiet_NaN();
    else if (draw % 16 == 1) v[i] = T(0);
    else if (draw % 16 == 2) v[i] = -T(0);
    else v[i] = normal(rng);
  }
  return v;
}

template <class T>
constexpr int onnx_type_of() {
  return std::is_same_v<T, float> ? ::onnx::TensorProto::FLOAT : ::onnx::TensorProto::DOUBLE;
}

struct ConvChain {
  std::int64_t n, c, h, w, filters, kernel, stride, pad, group;
  bool bias, relu, pool;
};

/// x -> Conv -> [Relu] -> [MaxPool 2x2, stride 2] -> y. With `expose`, the Conv's and the Relu's
/// outputs are graph outputs too, which keeps the executor from fusing them (graph.hpp).
template <class T>
Tensor run_conv_chain(const ConvChain& g, const std::vector<T>& x, const std::vector<T>& weights,
                      const std::vector<T>& bias, bool expose) {
  constexpr int elem = onnx_type_of<T>();
  ModelBuilder b(13);
  b.input("x", {g.n, g.c, g.h, g.w}, elem);
  b.initializer("W", Tensor(Shape{g.filters, g.c / g.group, g.kernel, g.kernel}, weights));
  auto& conv = b.node("Conv", {"x", "W"}, {"c"}, "conv");
  if (g.bias) {
    b.initializer("B", Tensor(Shape{g.filters}, bias));
    conv.add_input("B");
  }
  set_ints(conv, "kernel_shape", {g.kernel, g.kernel});
  set_ints(conv, "strides", {g.stride, g.stride});
  set_ints(conv, "pads", {g.pad, g.pad, g.pad, g.pad});
  set_int(conv, "group", g.group);
  std::string last = "c";
  if (g.relu) {
    b.node("Relu", {last}, {"r"}, "relu");
    last = "r";
  }
  if (g.pool) {
    auto& pool = b.node("MaxPool", {last}, {"p"}, "pool");
    set_ints(pool, "kernel_shape", {2, 2});
    set_ints(pool, "strides", {2, 2});
    last = "p";
  }
  b.output(last, elem);
  if (expose && last != "c") b.output("c", elem);
  if (expose && g.relu && last != "r") b.output("r", elem);
  return b.graph().run({Tensor(Shape{g.n, g.c, g.h, g.w}, x)})[0];
}

template <class T>
void check_conv_chain_fusion() {
  // The direct kernels' case (3x3, pad 1, stride 1, one group) at bench/'s sizes and odd ones,
  // and im2col's (no padding, stride 2, two groups); batches of 1 and 5 (chunks on threads).
  const std::vector<ConvChain> shapes{
      {1, 1, 28, 28, 16, 3, 1, 1, 1, true, true, true},  {5, 16, 14, 14, 32, 3, 1, 1, 1, true, true, true},
      {5, 3, 7, 9, 4, 3, 1, 1, 1, false, true, true},    {1, 2, 5, 6, 5, 3, 1, 1, 1, true, false, true},
      {5, 2, 9, 11, 3, 3, 1, 1, 1, true, true, false},   {5, 2, 9, 8, 4, 3, 1, 0, 1, true, true, true},
      {5, 4, 13, 12, 4, 3, 2, 1, 2, true, true, true},   {1, 4, 10, 10, 6, 2, 1, 0, 2, false, false, true}};
  std::uint32_t seed = 11;
  for (const ConvChain& g : shapes) {
    CAPTURE(g.h);
    CAPTURE(g.w);
    CAPTURE(g.relu);
    CAPTURE(g.pool);
    // NaN rarely: a window that reads one gives NaN (a Relu after it, 0).
    auto x = awkward_values<T>(static_cast<std::size_t>(g.n * g.c * g.h * g.w), ++seed, 997);
    // And one for sure, mid-image: its 3x3 neighbourhood of outputs is NaN, and some 2x2
    // window of the pool starts on one of them.
    x[static_cast<std::size_t>((g.h / 2) * g.w + g.w / 2)] = std::numeric_limits<T>::quiet_NaN();
    const auto weights = awkward_values<T>(
        static_cast<std::size_t>(g.filters * (g.c / g.group) * g.kernel * g.kernel), ++seed, 1u << 30);
    std::vector<T> bias(static_cast<std::size_t>(g.filters));
    std::mt19937 rng(++seed);
    for (T& v : bias) v = std::normal_distribution<T>(-0.5, 1)(rng);  // many negative sums
    const Tensor fused = run_conv_chain<T>(g, x, weights, bias, false);
    const Tensor apart = run_conv_chain<T>(g, x, weights, bias, true);
    REQUIRE(fused.shape() == apart.shape());
    CHECK(bits_of(fused) == bits_of(apart));
    // Not a degenerate comparison: positive, zero and NaN results are all there.
    const auto v = fused.data<T>();
    CHECK(std::count_if(v.begin(), v.end(), [](T e) { return e > 0; }) > 0);
    if (g.relu) CHECK(std::count(v.begin(), v.end(), T(0)) > 0);
    else CHECK(std::count_if(v.begin(), v.end(), [](T e) { return std::isnan(e); }) > 0);
  }
}

/// The two direct kernels of a "same" stride-1 Conv on one sample: filter_vector_conv.hpp
/// (vectors across filters, the bias, Relu and 2x2 pool in registers) and correlate followed by
/// copy_out_rows / copy_out_pooled (vectors across positions): the same bits, NaN and signed
/// zeros included (one sum per output in tap order, the same selects).
template <class T>
void check_filter_vector_conv() {
  namespace nd = onelearn::nn::detail;
  using onelearn::index_t;
  using DC = nd::DirectConv<T>;
  constexpr index_t L = DC::lanes;
  std::uint32_t seed = 29;
  struct Geometry {
    index_t c, h, w, filters, kernel;
  };
  // bench/'s two Convs, odd sizes (an odd last row and column the pool skips), one row or
  // column, 1x1 and 5x5 kernels, one to four packets of filters (the two-packet and one-packet
  // groups, and both).
  for (const Geometry& g : std::vector<Geometry>{{1, 28, 28, 16, 3}, {16, 14, 14, 32, 3}, {3, 7, 9, L, 3},
                                                 {2, 5, 30, 3 * L, 3}, {4, 1, 17, 2 * L, 3}, {2, 13, 1, L, 3},
                                                 {5, 6, 6, 4 * L, 1}, {2, 9, 11, 2 * L, 5}}) {
    for (int variant = 0; variant < 8; ++variant) {
      const bool bias = variant & 1, relu = variant & 2, pool = variant & 4;
      CAPTURE(g.c);
      CAPTURE(g.h);
      CAPTURE(g.w);
      CAPTURE(g.filters);
      CAPTURE(g.kernel);
      CAPTURE(variant);
      const index_t width = DC::plane_width(g.w, g.kernel, 1);
      const index_t plane = DC::plane_size(g.h, g.w, g.kernel, g.kernel, 1, 1);
      const index_t positions = DC::positions(g.h, width);
      const index_t taps = g.c * g.kernel * g.kernel;
      auto x = awkward_values<T>(static_cast<std::size_t>(g.c * g.h * g.w), ++seed, 61);
      // And one NaN for sure, at a pool window's first position (even row and column): a NaN
      // there comes out of the pool, elsewhere the window's first value is kept.
      x[static_cast<std::size_t>(2 * (g.h / 4) * g.w + 2 * (g.w / 4))] = std::numeric_limits<T>::quiet_NaN();
      const auto w = awkward_values<T>(static_cast<std::size_t>(g.filters * taps), ++seed, 1u << 30);
      std::vector<T> b(static_cast<std::size_t>(g.filters));
      std::mt19937 rng(++seed);
      for (T& v : b) v = std::normal_distribution<T>(-0.5, 1)(rng);
      std::vector<index_t> offsets;
      for (index_t c = 0; c < g.c; ++c) {
        for (index_t i = 0; i < g.kernel; ++i) {
          for (index_t j = 0; j < g.kernel; ++j) offsets.push_back(c * plane + i * width + j);
        }
      }
      std::vector<T> planes(static_cast<std::size_t>(g.c * plane), T(0));
      const index_t pad = (g.kernel - 1) / 2;
      nd::pad_planes(x.data(), g.c, g.h, g.w, pad, pad, width, plane, planes.data());
      const index_t out_h = pool ? g.h / 2 : g.h, out_w = pool ? g.w / 2 : g.w;
      const auto size = static_cast<std::size_t>(g.filters * out_h * out_w);
      const T* shift = bias ? b.data() : nullptr;
      // By positions.
      std::vector<T> packed;
      nd::pack_correlate_weights(w.data(), g.filters, taps, packed);
      std::vector<T> rows(packed.size() / static_cast<std::size_t>(taps) * static_cast<std::size_t>(positions) + L);
      nd::correlate(planes.data(), offsets, packed, positions, rows.data(), positions);
      std::vector<T> by_positions(size);
      if (pool) {
        ox::ops::planar::copy_out_pooled(rows.data(), rows.data() + rows.size(), positions, width, g.filters,
                                         g.h, g.w, shift, relu, by_positions.data());
      } else {
        ox::ops::planar::copy_out_rows(rows.data(), positions, width, g.filters, g.h, g.w, shift, relu,
                                       by_positions.data());
      }
      // By filters.
      REQUIRE(nd::FilterVectorConv<T>::applies(g.filters));
      std::vector<T> filter_major, tile(size), by_filters(size), zeros(static_cast<std::size_t>(g.filters));
      nd::pack_filter_major(w.data(), g.filters, taps, filter_major);
      const nd::FilterVectorOutput<T> out{bias ? b.data() : zeros.data(), relu, pool, g.filters,
                                          out_h, out_w, tile.data(), by_filters.data()};
      nd::filter_vector_conv(planes.data(), width, offsets, filter_major, g.h, g.w, out);
      const Shape shape{static_cast<std::int64_t>(size)};
      CHECK(bits_of(Tensor(shape, by_filters)) == bits_of(Tensor(shape, by_positions)));
      if (size > 0) {
        // Not a degenerate comparison: positive results, and NaN (or, after a Relu, zeros).
        CHECK(std::count_if(by_filters.begin(), by_filters.end(), [](T e) { return e > 0; }) > 0);
        if (relu) CHECK(std::count(by_filters.begin(), by_filters.end(), T(0)) > 0);
        else CHECK(std::count_if(by_filters.begin(), by_filters.end(), [](T e) { return std::isnan(e); }) > 0);
      }
    }
  }
}

/// MaxPool 2x2 / stride 2 over (n, c, h, w) images as a 2-D node, or (`volume`) over
/// (n, c, h, w, 1) with a window of 1 along the added axis (the N-dimensional form).
template <class T>
Tensor run_max_pool_2x2(const Shape& shape, const std::vector<T>& x, bool volume) {
  constexpr int elem = onnx_type_of<T>();
  Shape s = shape;
  if (volume) s.push_back(1);
  ModelBuilder b(13);
  b.input("x", s, elem);
  auto& node = b.node("MaxPool", {"x"}, {"y"});
  set_ints(node, "kernel_shape", volume ? std::vector<std::int64_t>{2, 2, 1} : std::vector<std::int64_t>{2, 2});
  set_ints(node, "strides", volume ? std::vector<std::int64_t>{2, 2, 1} : std::vector<std::int64_t>{2, 2});
  b.output("y", elem);
  return b.graph().run({Tensor(s, x)})[0];
}

template <class T>
void check_max_pool_2x2_rows() {
  std::uint32_t seed = 3;
  for (const Shape& shape : std::vector<Shape>{{1, 1, 2, 2},
                                               {2, 3, 4, 6},
                                               {3, 2, 7, 9},
                                               {2, 16, 28, 28},
                                               {2, 32, 14, 14},
                                               {1, 2, 3, 33},
                                               {3, 1, 16, 40}}) {
    CAPTURE(ox::shape_string(shape));
    std::vector<T> x = awkward_values<T>(ox::element_count(shape), ++seed, 16);
    // Ties (the first maximum wins): a run of equal values.
    for (std::size_t i = 0; i < std::min<std::size_t>(x.size(), 24); ++i) x[i] = T(1.5);
    const Tensor planar = run_max_pool_2x2<T>(shape, x, false);
    const Tensor volume = run_max_pool_2x2<T>(shape, x, true);
    Shape expected = volume.shape();
    expected.pop_back();
    REQUIRE(planar.shape() == expected);
    CHECK(bits_of(planar) == bits_of(volume));
  }
}

/// The product of row-major A (rows x depth) and B (depth x cols), plus c (per column, may be
/// empty), in long double, and the sum of the terms' magnitudes (the error scale).
template <class T>
std::pair<std::vector<long double>, std::vector<long double>> reference_product(
    const T* a, const T* b, const std::vector<T>& c, std::int64_t rows, std::int64_t depth,
    std::int64_t cols) {
  std::vector<long double> y(static_cast<std::size_t>(rows * cols)), scale(y.size());
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      long double sum = c.empty() ? 0 : c[static_cast<std::size_t>(j)];
      long double magnitude = std::abs(sum);
      for (std::int64_t d = 0; d < depth; ++d) {
        const long double term = static_cast<long double>(a[i * depth + d]) * b[d * cols + j];
        sum += term;
        magnitude += std::abs(term);
      }
      y[static_cast<std::size_t>(i * cols + j)] = sum;
      scale[static_cast<std::size_t>(i * cols + j)] = magnitude;
    }
  }
  return {y, scale};
}

template <class T>
void check_products_against_long_double() {
  constexpr int elem = onnx_type_of<T>();
  const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-15;
  std::mt19937 rng(5);
  std::normal_distribution<T> normal;
  const auto random = [&](std::int64_t n) {
    std::vector<T> v(static_cast<std::size_t>(n));
    for (T& e : v) e = normal(rng);
    return v;
  };
  const auto check_close = [&](std::span<const T> y, const std::vector<long double>& ref,
                               const std::vector<long double>& scale) {
    REQUIRE(y.size() == ref.size());
    double worst = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      worst = std::max(worst, static_cast<double>(std::abs(y[i] - ref[i]) / scale[i]));
    }
    CHECK(worst < tolerance);
  };
  // Shapes on both sides of the unpacked kernel's reach (nn/detail/unpacked_gemm.hpp: tiles of
  // 4 or 8 rows, panels of 3 packets, single packets, columns past the last packet, depth up to
  // 1024) and past it (depth 1100, 20 columns: Eigen's kernel).
  for (const auto& mkn : std::vector<std::array<std::int64_t, 3>>{
           {2, 1, 48}, {9, 70, 100}, {64, 300, 256}, {17, 5, 49}, {3, 1024, 64}, {13, 1100, 50}, {8, 33, 20}}) {
    const std::int64_t m = mkn[0], k = mkn[1], n = mkn[2];
    CAPTURE(m);
    CAPTURE(k);
    CAPTURE(n);
    const std::vector<T> a = random(m * k), bw = random(k * n), c = random(n);
    {  // Gemm with a bias row
      ModelBuilder b(13);
      b.input("a", {m, k}, elem);
      b.initializer("b", Tensor(Shape{k, n}, bw));
      b.initializer("c", Tensor(Shape{n}, c));
      b.node("Gemm", {"a", "b", "c"}, {"y"});
      b.output("y", elem);
      const Tensor y = b.graph().run({Tensor(Shape{m, k}, a)})[0];
      CHECK(y.shape() == Shape{m, n});
      const auto [ref, scale] = reference_product(a.data(), bw.data(), c, m, k, n);
      check_close(y.data<T>(), ref, scale);
    }
    {  // MatMul: a batch of two A's against one B (broadcast)
      const std::vector<T> a2 = random(2 * m * k);
      ModelBuilder b(13);
      b.input("a", {2, m, k}, elem);
      b.initializer("b", Tensor(Shape{k, n}, bw));
      b.node("MatMul", {"a", "b"}, {"y"});
      b.output("y", elem);
      const Tensor y = b.graph().run({Tensor(Shape{2, m, k}, a2)})[0];
      CHECK(y.shape() == Shape{2, m, n});
      for (std::int64_t p = 0; p < 2; ++p) {
        const auto [ref, scale] = reference_product(a2.data() + p * m * k, bw.data(), {}, m, k, n);
        check_close(y.data<T>().subspan(static_cast<std::size_t>(p * m * n), static_cast<std::size_t>(m * n)), ref, scale);
      }
    }
  }
}

}  // namespace

TEST_CASE("A Conv's sole Relu and 2x2 MaxPool run fused, to the same bits as run apart") {
  SUBCASE("float") { check_conv_chain_fusion<float>(); }
  SUBCASE("double") { check_conv_chain_fusion<double>(); }
  SUBCASE("a fused MaxPool over an output smaller than its window is refused as the MaxPool is") {
    // 3x3 images, 3x3 kernel, no padding: a 1x1 output, too small for a 2x2 window.
    const ConvChain g{1, 1, 3, 3, 2, 3, 1, 0, 1, false, true, true};
    const std::vector<float> x(9, 1.f), weights(18, 1.f), bias;
    CHECK_THROWS_AS(run_conv_chain<float>(g, x, weights, bias, false), onelearn::shape_error);
    CHECK_THROWS_AS(run_conv_chain<float>(g, x, weights, bias, true), onelearn::shape_error);
  }
}

TEST_CASE("A Conv vectorised across filters gives the bits of the one vectorised across positions") {
  SUBCASE("float") { check_filter_vector_conv<float>(); }
  SUBCASE("double") { check_filter_vector_conv<double>(); }
}

TEST_CASE("MaxPool 2x2 / stride 2 in vectors gives the N-dimensional form's values, NaN and signed zeros included") {
  SUBCASE("float") { check_max_pool_2x2_rows<float>(); }
  SUBCASE("double") { check_max_pool_2x2_rows<double>(); }
}

TEST_CASE("Gemm and MatMul on either kernel agree with a long-double product") {
  SUBCASE("float") { check_products_against_long_double<float>(); }
  SUBCASE("double") { check_products_against_long_double<double>(); }
}

TEST_CASE("A node output read by several nodes, or a graph output, is never taken in place") {
  // c feeds Relu and Neg and is a graph output; r feeds Sigmoid only (taken in place there).
  ModelBuilder b;
  b.input("x", {4});
  b.node("Identity", {"x"}, {"c"});
  b.node("Relu", {"c"}, {"r"});
  b.node("Neg", {"c"}, {"n"});
  b.node("Sigmoid", {"r"}, {"s"});
  b.node("Flatten", {"s"}, {"f"});
  b.output("c");
  b.output("n");
  b.output("f");
  const Tensor x = f32({4}, {-2, -0.5f, 0.5f, 3});
  const auto out = b.graph().run({x});
  check_values(out[0], {4}, {-2, -0.5, 0.5, 3});
  check_values(out[1], {4}, {2, 0.5, -0.5, -3});
  const auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  check_values(out[2], {4, 1}, {0.5, 0.5, sigmoid(0.5), sigmoid(3)});
  check_values(x, {4}, {-2, -0.5, 0.5, 3});  // the caller's input is untouched
}

TEST_CASE("ONNX-ML LinearClassifier, LinearRegressor and Scaler against scikit-learn 1.2.1") {
  // Python (scikit-learn 1.2.1):
  //   X = np.array([[0.,1.],[1.,0.],[2.,2.],[3.,1.],[0.,3.],[1.,2.5]]); y = [0,1,2,2,0,1]
  //   m = LogisticRegression(multi_class="multinomial").fit(X, y)
  //   m.predict_proba([[0.5,1.5],[2.5,0.5]]); m.predict(...) -> [0, 2]
  //   r = LinearRegression().fit(X, 2*X[:,0] - X[:,1] + 0.5 + [0.1,-0.1,0.05,0,0.02,-0.03])
  //   s = StandardScaler().fit(X); s.transform(...)
  const Tensor x = f32({2, 2}, {0.5f, 1.5f, 2.5f, 0.5f});
  ModelBuilder b(17, 3);
  b.input("X", {-1, 2});
  auto& clf = b.node("LinearClassifier", {"X"}, {"label", "proba"}, "clf", "ai.onnx.ml");
  set_floats(clf, "coefficients",
             {-0.9116638816931555, 0.15414836337259621, -0.06848326918212465,
              -0.22295501794612574, 0.9801471508752798, 0.06880665457352904});
  set_floats(clf, "intercepts", {0.662198328269013, 0.6751651764532, -1.3373635047222143});
  set_ints(clf, "classlabels_ints", {0, 1, 2});
  set_string(clf, "post_transform", "SOFTMAX");
  auto& reg = b.node("LinearRegressor", {"X"}, {"pred"}, "reg", "ai.onnx.ml");
  set_floats(reg, "coefficients", {1.992901878914406, -0.9822129436325687});
  set_floats(reg, "intercepts", {0.48678496868475984});
  auto& sc = b.node("Scaler", {"X"}, {"scaled"}, "scaler", "ai.onnx.ml");
  set_floats(sc, "offset", {1.1666666666666667, 1.5833333333333333});
  set_floats(sc, "scale", {1 / 1.0671873729054748, 1 / 1.0172129679778086});
  b.output("label", ::onnx::TensorProto::INT64);
  b.output("proba");
  b.output("pred");
  b.output("scaled");
  const auto out = b.graph().run({x});
  check_values(out[0], {2}, {0, 2});
  check_values(out[1], {2, 3},
               {0.45789679315044557, 0.4016358766663874, 0.14046733018316707,
                0.04425226393072934, 0.30559882769974583, 0.6501489083695249},
               1e-5);
  check_values(out[2], {2, 1}, {0.00991649269310968, 4.977933194154491}, 1e-4);
  check_values(out[3], {2, 2},
               {-0.6246950475544243, -0.08192319205190397, 1.2493900951088484,
                -1.0650014966747525},
               1e-5);
}

namespace {

/// One graph with every ONNX-ML feature transform: X (3 x 3) through Normalizer (L1, L2, MAX),
/// Binarizer and ArrayFeatureExtractor; M (2 x 3, NaN missing) through Imputer; integer codes
/// through OneHotEncoder and LabelEncoder.
ModelBuilder feature_transforms() {
  ModelBuilder b(17, 2);
  b.input("X", {-1, 3});
  b.input("M", {-1, 3});
  b.input("codes", {-1}, ::onnx::TensorProto::INT64);
  for (const char* norm : {"L1", "L2", "MAX"}) {
    set_string(b.node("Normalizer", {"X"}, {std::string("norm_") + norm}, std::string("n") + norm,
                      "ai.onnx.ml"),
               "norm", norm);
  }
  set_float(b.node("Binarizer", {"X"}, {"binary"}, "bin", "ai.onnx.ml"), "threshold", 0.5F);
  b.initializer("picks", i64({2}, {2, 0}));
  b.node("ArrayFeatureExtractor", {"X", "picks"}, {"picked"}, "afe", "ai.onnx.ml");
  auto& imputer = b.node("Imputer", {"M"}, {"imputed"}, "imp", "ai.onnx.ml");
  set_floats(imputer, "imputed_value_floats", {10, 20, 30});
  set_float(imputer, "replaced_value_float", std::numeric_limits<float>::quiet_NaN());
  set_ints(b.node("OneHotEncoder", {"codes"}, {"onehot"}, "ohe", "ai.onnx.ml"), "cats_int64s",
           {3, 1, 7});
  auto& encoder = b.node("LabelEncoder", {"codes"}, {"encoded"}, "le", "ai.onnx.ml");
  set_ints(encoder, "keys_int64s", {1, 3, 7});
  set_floats(encoder, "values_floats", {0.5, 1.5, 2.5});
  set_float(encoder, "default_float", -1.0F);
  for (const char* out : {"norm_L1", "norm_L2", "norm_MAX", "binary", "picked", "imputed", "onehot", "encoded"}) {
    b.output(out);
  }
  return b;
}

const float nan_value = std::numeric_limits<float>::quiet_NaN();

std::vector<Tensor> feature_transform_inputs() {
  return {f32({3, 3}, {3, -4, 0, 1, 2, -1, 0, 0, 0}), f32({2, 3}, {nan_value, 1, nan_value, 2, nan_value, 5}),
          i64({4}, {7, 1, 5, 3})};
}

}  // namespace

TEST_CASE("ONNX-ML Normalizer, Binarizer, ArrayFeatureExtractor, Imputer, OneHotEncoder, "
          "LabelEncoder: the specification's values") {
  const auto out = feature_transforms().graph().run(feature_transform_inputs());
  const double r6 = std::sqrt(6.0);
  // Rows (3, -4, 0), (1, 2, -1) and zeros, which every norm leaves as they are.
  check_values(out[0], {3, 3}, {3 / 7.0, -4 / 7.0, 0, 0.25, 0.5, -0.25, 0, 0, 0});
  check_values(out[1], {3, 3}, {0.6, -0.8, 0, 1 / r6, 2 / r6, -1 / r6, 0, 0, 0});
  // MAX divides by the largest value (3 and 2), not the largest magnitude.
  check_values(out[2], {3, 3}, {1, -4 / 3.0, 0, 0.5, 1, -0.5, 0, 0, 0});
  check_values(out[3], {3, 3}, {1, 0, 0, 1, 1, 0, 0, 0, 0});
  check_values(out[4], {3, 2}, {0, 3, -1, 1, 0, 0});
  check_values(out[5], {2, 3}, {10, 1, 30, 2, 20, 5});
  // Categories (3, 1, 7): 7, 1, 5 (none: zeros), 3.
  check_values(out[6], {4, 3}, {0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0});
  check_values(out[7], {4}, {2.5, 0.5, -1, 1.5});
  CHECK(out[5].dtype() == ox::DataType::float32);
  CHECK(out[7].dtype() == ox::DataType::float32);

  SUBCASE("integer outputs, one-row inputs, defaults") {
    ModelBuilder b(17, 2);
    b.input("X", {3});
    b.input("codes", {-1}, ::onnx::TensorProto::INT64);
    auto& le = b.node("LabelEncoder", {"codes"}, {"encoded"}, "le", "ai.onnx.ml");
    set_ints(le, "keys_int64s", {4, 5});
    set_ints(le, "values_int64s", {40, 50});
    b.initializer("one", i64({1}, {1}));
    b.node("ArrayFeatureExtractor", {"X", "one"}, {"picked"}, "afe", "ai.onnx.ml");
    set_string(b.node("Normalizer", {"X"}, {"l2"}, "n", "ai.onnx.ml"), "norm", "L2");
    b.output("encoded", ::onnx::TensorProto::INT64);
    b.output("picked");
    b.output("l2");
    const auto r = b.graph().run({f32({3}, {0, 3, 4}), i64({3}, {5, 6, 4})});
    check_values(r[0], {3}, {50, -1, 40});  // default_int64 is -1
    check_values(r[1], {1, 1}, {3});        // a (C) input gives (1, k)
    check_values(r[2], {3}, {0, 0.6, 0.8});
  }
}

TEST_CASE("ONNX-ML feature transforms: bad attributes and inputs are typed errors naming the node") {
  auto expect_error = [](auto configure, const std::vector<Tensor>& inputs, const std::string& part) {
    ModelBuilder b(17, 2);
    configure(b);
    b.output("y");
    const std::string m = message_of<std::exception>([&] { (void)b.graph().run(inputs); });
    CAPTURE(m);
    CHECK(contains(m, part));
  };
  const std::vector<Tensor> codes{i64({2}, {1, 9})};
  expect_error([](ModelBuilder& b) {
    b.input("c", {-1}, ::onnx::TensorProto::INT64);
    auto& n = b.node("OneHotEncoder", {"c"}, {"y"}, "strict", "ai.onnx.ml");
    set_ints(n, "cats_int64s", {1, 2});
    set_int(n, "zeros", 0);
  }, codes, "is no category");
  expect_error([](ModelBuilder& b) {
    b.input("c", {-1}, ::onnx::TensorProto::INT64);
    auto& n = b.node("LabelEncoder", {"c"}, {"y"}, "uneven", "ai.onnx.ml");
    set_ints(n, "keys_int64s", {1, 2});
    set_floats(n, "values_floats", {0.5});
  }, codes, "2 keys and 1 values");
  expect_error([](ModelBuilder& b) {
    b.input("c", {-1}, ::onnx::TensorProto::INT64);
    b.initializer("p", i64({1}, {3}));
    b.node("ArrayFeatureExtractor", {"c", "p"}, {"y"}, "beyond", "ai.onnx.ml");
  }, codes, "Y[0] = 3 is outside 0..1");
  expect_error([](ModelBuilder& b) {
    b.input("x", {-1, 2});
    set_floats(b.node("Imputer", {"x"}, {"y"}, "three", "ai.onnx.ml"), "imputed_value_floats", {1, 2, 3});
  }, {f32({1, 2}, {0, 1})}, "3 imputed values, expected 1 or 2");
  expect_error([](ModelBuilder& b) {
    b.input("x", {-1, 2});
    set_string(b.node("Normalizer", {"x"}, {"y"}, "lp", "ai.onnx.ml"), "norm", "L3");
  }, {f32({1, 2}, {0, 1})}, "'lp'");
}

TEST_CASE("ONNX-ML feature transforms equal onnxruntime's" *
          doctest::skip(!onelearn::test::onnxruntime_unavailable().empty())) {
  namespace fs = std::filesystem;
  const fs::path dir = onelearn::test::scratch_dir("onelearn_onnx_ml");
  const ModelBuilder b = feature_transforms();
  {
    std::ofstream model(dir / "transforms.onnx", std::ios::binary);
    REQUIRE(b.proto().SerializeToOstream(&model));
  }
  std::ofstream(dir / "transforms.json")
      << R"({"X": {"dims": [3, 3], "data": [3, -4, 0, 1, 2, -1, 0, 0, 0]},)"
      << R"( "M": {"dims": [2, 3], "data": [null, 1, null, 2, null, 5]},)"
      << R"( "codes": {"dims": [4], "type": "int64", "data": [7, 1, 5, 3]}})";
  using onelearn::test::quoted;
  const std::string text = onelearn::test::require_command_output(
      onelearn::test::node_command() + " " + quoted(onelearn::test::runner_script().string()) +
      " " + quoted((dir / "transforms.onnx").string()) + " " + quoted((dir / "transforms.json").string()), "onnxruntime failed: ");
  const auto ort = nlohmann::json::parse(text).at(0);
  const auto mine = b.graph().run(feature_transform_inputs());
  const std::vector<std::string> names{"norm_L1", "norm_L2", "norm_MAX", "binary", "picked", "imputed", "onehot", "encoded"};
  for (std::size_t k = 0; k < names.size(); ++k) {
    CAPTURE(names[k]);
    const auto& theirs = ort.at(names[k]);
    CHECK(theirs.at("dims").get<std::vector<std::int64_t>>() == mine[k].shape());
    const auto values = theirs.at("data").get<std::vector<double>>();
    const auto ours = mine[k].to_vector<double>();
    REQUIRE(values.size() == ours.size());
    for (std::size_t i = 0; i < ours.size(); ++i) {
      CAPTURE(i);
      CHECK(ours[i] == doctest::Approx(values[i]).epsilon(1e-6));
    }
  }
}

TEST_CASE("TreeEnsembleRegressor with *_as_tensor attributes compares in double, as onnxruntime") {
  // One split at 0.1 (no float holds it) with double thresholds, weights and base value:
  // 0.1 and below go left (1 + 0.5), its next double and float32's 0.1 (above it) go right
  // (2 + 0.5). Compared in float32, all four rows would go left.
  ModelBuilder b(17, 3);
  b.input("X", {-1, 1}, ::onnx::TensorProto::DOUBLE);
  auto& tree = b.node("TreeEnsembleRegressor", {"X"}, {"Y"}, "tree", "ai.onnx.ml");
  const auto set_doubles = [&](const std::string& name, const std::vector<double>& values) {
    auto* a = tree.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::TENSOR);
    *a->mutable_t() = ox::tensor_to_proto(
        Tensor({static_cast<std::int64_t>(values.size())}, std::vector<double>(values)), "");
  };
  set_ints(tree, "nodes_treeids", {0, 0, 0});
  set_ints(tree, "nodes_nodeids", {0, 1, 2});
  set_ints(tree, "nodes_featureids", {0, 0, 0});
  tree.add_attribute()->CopyFrom([] {
    ::onnx::AttributeProto a;
    a.set_name("nodes_modes");
    a.set_type(::onnx::AttributeProto::STRINGS);
    for (const char* m : {"BRANCH_LEQ", "LEAF", "LEAF"}) a.add_strings(m);
    return a;
  }());
  set_ints(tree, "nodes_truenodeids", {1, 0, 0});
  set_ints(tree, "nodes_falsenodeids", {2, 0, 0});
  set_doubles("nodes_values_as_tensor", {0.1, 0, 0});
  set_ints(tree, "target_treeids", {0, 0});
  set_ints(tree, "target_nodeids", {1, 2});
  set_ints(tree, "target_ids", {0, 0});
  set_doubles("target_weights_as_tensor", {1, 2});
  set_doubles("base_values_as_tensor", {0.5});
  set_int(tree, "n_targets", 1);
  b.output("Y");
  const std::vector<double> x{0.1, std::nextafter(0.1, 1.0), static_cast<double>(0.1f), 0.0999999};
  const std::vector<double> expected{1.5, 2.5, 2.5, 1.5};
  const auto out = b.graph().run({Tensor({4, 1}, std::vector<double>(x))});
  CHECK(out[0].dtype() == ox::DataType::float32);  // the operator's output type
  check_values(out[0], {4, 1}, expected, 1e-12);
  if (!onelearn::test::onnxruntime_unavailable().empty()) {
    MESSAGE("SKIPPED the onnxruntime half: ", onelearn::test::onnxruntime_unavailable());
    return;
  }
  namespace fs = std::filesystem;
  const fs::path dir = onelearn::test::scratch_dir("onelearn_onnx_ml");
  {
    std::ofstream model(dir / "tree_as_tensor.onnx", std::ios::binary);
    REQUIRE(b.proto().SerializeToOstream(&model));
  }
  nlohmann::json input;
  input["X"] = {{"dims", {4, 1}}, {"type", "float64"}, {"data", x}};
  std::ofstream(dir / "tree_as_tensor.json") << input.dump();
  using onelearn::test::quoted;
  const std::string text = onelearn::test::require_command_output(
      onelearn::test::node_command() + " " + quoted(onelearn::test::runner_script().string()) + " " +
      quoted((dir / "tree_as_tensor.onnx").string()) + " " + quoted((dir / "tree_as_tensor.json").string()), "onnxruntime failed: ");
  CHECK(nlohmann::json::parse(text).at(0).at("Y").at("data").get<std::vector<double>>() == expected);
}

TEST_CASE("ONNX-ML binary LinearClassifier: one score column, labels by its sign") {
  ModelBuilder b(17, 1);
  b.input("X", {-1, 1});
  auto& clf = b.node("LinearClassifier", {"X"}, {"label", "scores"}, "bin", "ai.onnx.ml");
  set_floats(clf, "coefficients", {2});
  set_floats(clf, "intercepts", {-1});
  set_ints(clf, "classlabels_ints", {7, 9});
  set_string(clf, "post_transform", "LOGISTIC");
  b.output("label", ::onnx::TensorProto::INT64);
  b.output("scores");
  // Scores 2x - 1: x = 0 -> -1 (label 7), x = 1 -> 1 (label 9); columns 1 - p, p.
  const auto out = b.graph().run({f32({2, 1}, {0, 1})});
  check_values(out[0], {2}, {7, 9});
  const double p = 1 / (1 + std::exp(1.0));
  check_values(out[1], {2, 2}, {1 - p, p, p, 1 - p}, 1e-6);
}

TEST_CASE("Errors name the node, the operator and the problem") {
  SUBCASE("missing initializer") {
    ModelBuilder b;
    b.input("x", {1, 2});
    b.node("Gemm", {"x", "W"}, {"y"}, "dense");
    b.output("y");
    const std::string m = message_of<ox::graph_error>([&] { (void)b.graph(); });
    CHECK(contains(m, "'dense'"));
    CHECK(contains(m, "(Gemm)"));
    CHECK(contains(m, "'W'"));
    CHECK(contains(m, "missing initializer"));
  }
  SUBCASE("unsupported operator") {
    ModelBuilder b;
    b.input("x", {1, 2});
    b.node("Relu", {"x"}, {"h"});
    b.node("Einsum", {"h"}, {"y"}, "fancy");
    b.output("y");
    try {
      (void)b.graph();
      FAIL("expected unsupported_error");
    } catch (const ox::unsupported_error& e) {
      CHECK(e.kind() == ox::unsupported_kind::op);
      CHECK(e.detail() == "Einsum");
      CHECK(contains(e.what(), "node 'fancy' (Einsum)"));
      CHECK(contains(e.what(), "unsupported operator Einsum"));
    }
  }
  SUBCASE("unsupported data type and opset") {
    ModelBuilder b;
    b.input("x", {2}, ::onnx::TensorProto::FLOAT16);
    b.node("Relu", {"x"}, {"y"});
    b.output("y", ::onnx::TensorProto::FLOAT16);
    const std::string m = message_of<ox::unsupported_error>([&] { (void)b.graph(); });
    CHECK(contains(m, "graph input 'x'"));
    CHECK(contains(m, "float16"));

    ModelBuilder future(99);
    future.input("x", {2});
    future.node("Relu", {"x"}, {"y"}, "r");
    future.output("y");
    const std::string f = message_of<ox::unsupported_error>([&] { (void)future.graph(); });
    CHECK(contains(f, "node 'r' (Relu)"));
    CHECK(contains(f, "opset ai.onnx 99"));
  }
  SUBCASE("a cycle") {
    ModelBuilder b;
    b.input("x", {2});
    b.node("Add", {"x", "q"}, {"p"}, "one");
    b.node("Relu", {"p"}, {"q"}, "two");
    b.output("q");
    CHECK(contains(message_of<ox::graph_error>([&] { (void)b.graph(); }), "cycle"));
  }
  SUBCASE("wrong input shape, element type and count") {
    ModelBuilder b;
    b.input("x", {-1, 3});
    b.node("Relu", {"x"}, {"y"});
    b.output("y");
    const ox::Graph g = b.graph();
    const std::string m = message_of<onelearn::shape_error>([&] { (void)g.run({f32({2, 4}, std::vector<float>(8))}); });
    CHECK(contains(m, "input 'x'"));
    CHECK(contains(m, "(N, 3)"));
    CHECK(contains(m, "(2, 4)"));
    CHECK_THROWS_AS((void)g.run({Tensor(Shape{1, 3}, std::vector<double>(3))}), onelearn::shape_error);
    CHECK_THROWS_AS((void)g.run(std::vector<Tensor>{}), ox::graph_error);
  }
  SUBCASE("inconsistent shapes inside the graph name the node") {
    ModelBuilder b;
    b.input("a", {2, 3});
    b.input("b", {2});
    b.node("Add", {"a", "b"}, {"y"}, "plus");
    b.output("y");
    const std::string m = message_of<onelearn::shape_error>([&] {
      (void)b.graph().run({f32({2, 3}, std::vector<float>(6)), f32({2}, {1, 2})});
    });
    CHECK(contains(m, "node 'plus' (Add)"));
    CHECK(contains(m, "do not broadcast"));
  }
  SUBCASE("truncated, malformed and missing files") {
    ModelBuilder b;
    b.input("x", {2});
    b.initializer("w", f32({2}, {1, 2}));
    b.node("Mul", {"x", "w"}, {"y"});
    b.output("y");
    std::string bytes;
    REQUIRE(b.proto().SerializeToString(&bytes));
    const auto dir = std::filesystem::temp_directory_path();
    const auto path = dir / "onelearn_test_onnx_truncated.onnx";
    {
      std::ofstream out(path, std::ios::binary);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 3));
    }
    const std::string m = message_of<ox::format_error>([&] { (void)ox::load(path); });
    CHECK(contains(m, path.string()));
    CHECK(contains(m, "truncated or malformed"));
    // A format_error is an io_error, so callers that catch onelearn's I/O errors catch it.
    CHECK_THROWS_AS((void)ox::load(path), onelearn::io_error);
    CHECK_THROWS_AS((void)ox::parse_model_proto(std::string_view("\x08\x07\x12", 3)),
                    ox::format_error);
    std::filesystem::remove(path);
    CHECK_THROWS_AS((void)ox::load(dir / "onelearn_no_such_model.onnx"), onelearn::io_error);
    // A complete file loads and runs.
    {
      std::ofstream out(path, std::ios::binary);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    check_values(ox::load(path).run({f32({2}, {3, 4})})[0], {2}, {3, 8});
    std::filesystem::remove(path);
  }
  SUBCASE("a tensor whose raw data does not fill its shape") {
    ::onnx::TensorProto t = ox::tensor_to_proto(f32({2}, {1, 2}), "w");
    t.add_dims(2);  // now (2, 2): 4 floats needed, 2 stored
    const std::string m = message_of<ox::format_error>([&] { (void)ox::tensor_from_proto(t, "initializer 'w'"); });
    CHECK(contains(m, "initializer 'w'"));
    CHECK(contains(m, "(2, 2)"));
  }
}

TEST_CASE("Element types: int32, int8, uint8 and bool load, cast, compare and select") {
  SUBCASE("Cast between every pair of types keeps the values that fit") {
    const std::vector<int> codes = {::onnx::TensorProto::FLOAT, ::onnx::TensorProto::DOUBLE,
                                    ::onnx::TensorProto::INT64, ::onnx::TensorProto::INT32,
                                    ::onnx::TensorProto::INT8,  ::onnx::TensorProto::UINT8};
    for (const int from : codes) {
      for (const int to : codes) {
        CAPTURE(from);
        CAPTURE(to);
        // x (float) -> from -> to
        ModelBuilder c;
        c.input("x", {3});
        set_int(c.node("Cast", {"x"}, {"m"}), "to", from);
        set_int(c.node("Cast", {"m"}, {"y"}), "to", to);
        c.output("y", to);
        const std::vector<Tensor> out = c.graph().run({f32({3}, {0.f, 7.9f, 100.f})});
        CHECK(ox::onnx_elem_type(out[0].dtype()) == to);
        const bool both_int = from != ::onnx::TensorProto::FLOAT && from != ::onnx::TensorProto::DOUBLE;
        check_values(out[0], {3}, {0, both_int ? 7 : (to == ::onnx::TensorProto::FLOAT || to == ::onnx::TensorProto::DOUBLE ? 7.9 : 7), 100}, 1e-6);
      }
    }
  }
  SUBCASE("float to bool is x != 0; comparisons give bool; Where selects") {
    ModelBuilder b;
    b.input("x", {4});
    b.input("y", {4});
    set_int(b.node("Cast", {"x"}, {"nz"}), "to", ::onnx::TensorProto::BOOL);
    b.node("Less", {"x", "y"}, {"lt"});
    b.node("And", {"nz", "lt"}, {"both"});
    b.node("Where", {"both", "x", "y"}, {"pick"}, "choose");
    b.output("nz", ::onnx::TensorProto::BOOL);
    b.output("pick");
    const auto out = b.graph().run({f32({4}, {0, 1, 5, -2}), f32({4}, {1, 2, 3, 4})});
    CHECK(out[0].dtype() == ox::DataType::boolean);
    check_values(out[0], {4}, {0, 1, 1, 1});
    check_values(out[1], {4}, {1, 1, 3, -2});
  }
  SUBCASE("int8 and uint8 arithmetic wraps around; bool and int32 tensors load from protos") {
    ModelBuilder b;
    b.input("a", {2}, ::onnx::TensorProto::UINT8);
    b.input("c", {2}, ::onnx::TensorProto::INT32);
    b.initializer("k", Tensor(Shape{2}, std::vector<std::uint8_t>{200, 1}));
    b.initializer("flag", Tensor(Shape{2}, std::vector<ox::boolean>{true, false}));
    b.node("Add", {"a", "k"}, {"sum"});
    b.node("Not", {"flag"}, {"nf"});
    b.node("Max", {"c", "c"}, {"m"});
    b.output("sum", ::onnx::TensorProto::UINT8);
    b.output("nf", ::onnx::TensorProto::BOOL);
    b.output("m", ::onnx::TensorProto::INT32);
    const auto out = b.graph().run({Tensor(Shape{2}, std::vector<std::uint8_t>{100, 2}),
                                    Tensor(Shape{2}, std::vector<std::int32_t>{-3, 9})});
    check_values(out[0], {2}, {44, 3});  // 300 mod 256
    check_values(out[1], {2}, {0, 1});
    CHECK(out[2].dtype() == ox::DataType::int32);
    check_values(out[2], {2}, {-3, 9});
  }
}

TEST_CASE("PyTorch's x.view(x.size(0), -1): Shape, Gather, Unsqueeze, Concat, Reshape") {
  ModelBuilder b(13);
  b.input("x", {-1, 2, 3});
  b.initializer("zero", i64({}, {0}));
  b.initializer("axes", i64({1}, {0}));
  b.initializer("minus_one", i64({1}, {-1}));
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "zero"}, {"n"});
  b.node("Unsqueeze", {"n", "axes"}, {"n1"});
  set_int(b.node("Concat", {"n1", "minus_one"}, {"target"}), "axis", 0);
  b.node("Reshape", {"x", "target"}, {"y"});
  b.output("y");
  std::vector<float> v(12);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const auto out = b.graph().run({f32({2, 2, 3}, v)});
  check_values(out[0], {2, 6}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
}

TEST_CASE("Data movement by hand: Slice, Tile, Expand, Transpose, Split, Pad") {
  std::vector<float> v(6);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);  // [[0 1 2] [3 4 5]]
  ModelBuilder b(13);
  b.input("x", {2, 3});
  b.initializer("starts", i64({1}, {-1}));
  b.initializer("ends", i64({1}, {-100}));
  b.initializer("axes", i64({1}, {1}));
  b.initializer("steps", i64({1}, {-2}));
  b.initializer("reps", i64({2}, {1, 2}));
  b.initializer("shape", i64({3}, {2, 1, 1}));
  b.initializer("pads", i64({4}, {0, 1, 0, 0}));
  b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"sl"});
  b.node("Tile", {"x", "reps"}, {"ti"});
  b.node("Expand", {"x", "shape"}, {"ex"});
  b.node("Transpose", {"x"}, {"tr"});
  set_int(b.node("Split", {"x"}, {"s0", "s1", "s2"}), "axis", 1);
  set_string(b.node("Pad", {"x", "pads"}, {"pd"}), "mode", "reflect");
  for (const char* o : {"sl", "ti", "ex", "tr", "s2", "pd"}) b.output(o);
  const auto out = b.graph().run({f32({2, 3}, v)});
  check_values(out[0], {2, 2}, {2, 0, 5, 3});
  check_values(out[1], {2, 6}, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  check_values(out[2], {2, 2, 3}, {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5});
  check_values(out[3], {3, 2}, {0, 3, 1, 4, 2, 5});
  check_values(out[4], {2, 1}, {2, 5});
  check_values(out[5], {2, 4}, {1, 0, 1, 2, 4, 3, 4, 5});
}

TEST_CASE("Bad input: wrong input counts, types and shapes are typed errors naming the node") {
  SUBCASE("a wrong number of inputs") {
    ModelBuilder b;
    b.input("x", {2});
    b.node("Add", {"x", "x", "x"}, {"y"}, "three");
    b.output("y");
    const std::string m = message_of<ox::graph_error>([&] { (void)b.graph().run({f32({2}, {1, 2})}); });
    CHECK(contains(m, "node 'three' (Add)"));
    CHECK(contains(m, "expects 2 inputs, found 3"));
  }
  SUBCASE("an element type the operator does not take") {
    ModelBuilder b;
    b.input("x", {2}, ::onnx::TensorProto::INT32);
    b.node("Sin", {"x"}, {"y"}, "sine");
    b.output("y", ::onnx::TensorProto::INT32);
    try {
      (void)b.graph().run({Tensor(Shape{2}, std::vector<std::int32_t>{1, 2})});
      FAIL("expected unsupported_error");
    } catch (const ox::unsupported_error& e) {
      CHECK(e.kind() == ox::unsupported_kind::data_type);
      CHECK(e.detail() == "int32");
      CHECK(contains(e.what(), "node 'sine' (Sin)"));
      CHECK(contains(e.what(), "float32, float64"));
    }
    ModelBuilder w;
    w.input("c", {2});
    w.node("Where", {"c", "c", "c"}, {"y"}, "w");
    w.output("y");
    CHECK_THROWS_AS((void)w.graph().run({f32({2}, {1, 2})}), ox::unsupported_error);
  }
  SUBCASE("shapes that cannot broadcast") {
    ModelBuilder b;
    b.input("c", {3}, ::onnx::TensorProto::BOOL);
    b.input("x", {2});
    b.node("Where", {"c", "x", "x"}, {"y"}, "sel");
    b.output("y");
    const std::string m = message_of<onelearn::shape_error>([&] {
      (void)b.graph().run({Tensor(Shape{3}, std::vector<ox::boolean>(3)), f32({2}, {1, 2})});
    });
    CHECK(contains(m, "node 'sel' (Where)"));
    CHECK(contains(m, "do not broadcast"));
  }
  SUBCASE("sizes are checked before anything is allocated") {
    const auto huge = [](const char* op, std::initializer_list<std::string> inputs, const Tensor& second) {
      ModelBuilder b;
      b.input("x", {2});
      b.initializer("s", second);
      b.node(op, inputs, {"y"}, "big");
      b.output("y");
      return message_of<onelearn::shape_error>([&] { (void)b.graph().run({f32({2}, {1, 2})}); });
    };
    const Tensor enormous = i64({3}, {std::int64_t{1} << 40, std::int64_t{1} << 40, 4});
    CHECK(contains(huge("ConstantOfShape", {"s"}, enormous), "too many elements"));
    CHECK(contains(huge("Expand", {"x", "s"}, i64({2}, {std::int64_t{1} << 62, 2})), "too many elements"));
    CHECK(contains(huge("Tile", {"x", "s"}, i64({1}, {std::int64_t{1} << 62})), "too"));
    CHECK(contains(huge("ConstantOfShape", {"s"}, i64({1}, {-3})), "negative"));
    const std::string g = huge("Gather", {"x", "s"}, i64({1}, {5}));
    CHECK(contains(g, "node 'big' (Gather)"));
    CHECK(contains(g, "out of range"));
  }
}

TEST_CASE("The operator registry: unique names, a function and types for each") {
  std::set<std::string> names;
  for (const ox::OperatorInfo& op : ox::operators()) {
    CAPTURE(op.name);
    CHECK(names.insert(std::string(op.name)).second);
    CHECK(static_cast<bool>(op.fn));
    CHECK(op.since >= 1);
    CHECK(ox::operator_table().at(std::string(op.name)) == &op);
  }
  for (const char* op : {"Cast", "Shape", "Gather", "Concat", "Unsqueeze", "Squeeze", "Reshape",
                         "Slice", "Transpose", "Expand", "ConstantOfShape", "Range", "Tile",
                         "Where", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not",
                         "And", "Or", "Xor", "Min", "Max", "Mean", "Sum", "Abs", "Neg", "Ceil",
                         "Floor", "Round", "Sign", "Reciprocal", "Pow", "Mod", "Clip", "Identity",
                         "Size", "Flatten", "Split", "ArgMin", "CumSum", "TopK"}) {
    CAPTURE(op);
    CHECK(names.count(op) == 1);
  }
}
