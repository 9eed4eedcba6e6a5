#pragma once
// The operator registry: every operator the executor runs, with what the documentation says
// about it. docs/onnx-operators.md is generated from this table (`onelearn-onnx ops
// --markdown`, checked by the onnx_operators_doc test), so the two cannot drift.
//
// `types` are the element types the operator takes for its first input; the Graph checks them
// before the operator runs, so a tensor of another type is an unsupported_error naming the node
// whatever the operator's code does. An empty set means any type, or no input.
//
// Compiled once instead of in every source file (optional; header-only by default): a program
// with several source files that run ONNX graphs compiles the ~200 operators in each of them
// (about 110 s per file under the test suite's sanitizers on a 2-core machine). Define
// ONELEARN_ONNX_SEPARATE_OPERATORS in every source file of the program (a target-wide compile
// definition: it must be the same everywhere), and in exactly one of them also define
// ONELEARN_ONNX_DEFINE_OPERATORS before its first include:
//   #define ONELEARN_ONNX_DEFINE_OPERATORS
//   #include <onelearn/onnx/ops/registry.hpp>
// The others then see only the declaration of operators() and do not parse the operators.

#include <cstdint>
#include <string_view>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"
#include "onelearn/onnx/tensor.hpp"

#if !defined(ONELEARN_ONNX_SEPARATE_OPERATORS) || defined(ONELEARN_ONNX_DEFINE_OPERATORS)
#include "onelearn/onnx/ops/activations.hpp"
#include "onelearn/onnx/ops/batchnorm.hpp"
#include "onelearn/onnx/ops/conv.hpp"
#include "onelearn/onnx/ops/conv_transpose.hpp"
#include "onelearn/onnx/ops/elementwise.hpp"
#include "onelearn/onnx/ops/gemm.hpp"
#include "onelearn/onnx/ops/generate.hpp"
#include "onelearn/onnx/ops/logic.hpp"
#include "onelearn/onnx/ops/ml.hpp"
#include "onelearn/onnx/ops/ml_transforms.hpp"
#include "onelearn/onnx/ops/movement.hpp"
#include "onelearn/onnx/ops/nn.hpp"
#include "onelearn/onnx/ops/pad.hpp"
#include "onelearn/onnx/ops/pool.hpp"
#include "onelearn/onnx/ops/quantize.hpp"
#include "onelearn/onnx/ops/reduce.hpp"
#include "onelearn/onnx/ops/resize.hpp"
#include "onelearn/onnx/ops/scatter.hpp"
#include "onelearn/onnx/ops/shape.hpp"
#include "onelearn/onnx/ops/signal.hpp"
#include "onelearn/onnx/ops/tree_ensemble.hpp"
#endif

namespace onelearn::onnx {

using OpFunction = std::vector<Tensor> (*)(const NodeContext&);

struct OperatorInfo {
  std::string_view name;  ///< "Add"; "ai.onnx.ml:Scaler" outside the default domain
  OpFunction fn;
  std::int64_t since;     ///< the first opset of its domain in which the operator exists
  TypeSet types;          ///< element types of input 0; empty: any (or no input)
  std::string_view notes;
};

inline constexpr std::int64_t max_onnx_opset = 17;
inline constexpr std::int64_t max_onnx_ml_opset = 3;

#if defined(ONELEARN_ONNX_SEPARATE_OPERATORS) && !defined(ONELEARN_ONNX_DEFINE_OPERATORS)
/// Every operator, sorted by name within each domain (defined in the program's source file that
/// defines ONELEARN_ONNX_DEFINE_OPERATORS).
const std::vector<OperatorInfo>& operators();
#else
/// Every operator, sorted by name within each domain.
#ifndef ONELEARN_ONNX_SEPARATE_OPERATORS
inline  // header-only: in every file that uses it; otherwise the one definition of the program
#endif
const std::vector<OperatorInfo>& operators() {
  using namespace types;  // NOLINT(google-build-using-namespace)
  constexpr TypeSet any{};
  constexpr TypeSet wide = floats | TypeSet{DataType::int64, DataType::int32};
  constexpr TypeSet ml_in = floats | TypeSet{DataType::int64};
  constexpr TypeSet ml_in32 = ml_in | TypeSet{DataType::int32};
  static const std::vector<OperatorInfo> table = {
      {"Abs", ops::abs, 1, numbers, ""},
      {"Acos", ops::acos, 7, floats, ""},
      {"Acosh", ops::acosh, 9, floats, ""},
      {"Add", ops::add, 1, numbers, "numpy broadcasting; integers wrap around"},
      {"And", ops::logical_and, 1, bools, ""},
      {"ArgMax", ops::argmax, 1, numbers, "keepdims, select_last_index"},
      {"ArgMin", ops::argmin, 1, numbers, "keepdims, select_last_index"},
      {"Asin", ops::asin, 7, floats, ""},
      {"Asinh", ops::asinh, 9, floats, ""},
      {"Atan", ops::atan, 7, floats, ""},
      {"Atanh", ops::atanh, 9, floats, ""},
      {"AveragePool", ops::average_pool, 1, floats, "1-d to 3-d; pads, auto_pad, ceil_mode, count_include_pad"},
      {"BlackmanWindow", ops::blackman_window, 17, TypeSet{DataType::int64, DataType::int32}, "periodic or symmetric; output_datatype"},
      {"BatchNormalization", ops::batch_normalization, 1, floats, "inference mode"},
      {"Cast", ops::cast, 1, all, "to any supported type; float to integer truncates (NaN gives 0, out of range saturates)"},
      {"CastLike", ops::cast_like, 15, all, ""},
      {"Ceil", ops::ceil, 1, floats, ""},
      {"Celu", ops::celu, 12, floats, ""},
      {"Clip", ops::clip, 1, numbers, "bounds as attributes before opset 11, inputs from 11"},
      {"Compress", ops::compress, 9, any, "along an axis or flattened"},
      {"Concat", ops::concat, 1, any, ""},
      {"Constant", ops::constant, 1, any, "value, value_float(s), value_int(s); not sparse_value or strings"},
      {"ConstantOfShape", ops::constant_of_shape, 9, wide, "shape input int64 (int32 accepted)"},
      {"Conv", ops::conv, 1, floats, "1-d to 3-d; groups, dilations, pads, auto_pad"},
      {"ConvTranspose", ops::conv_transpose, 1, floats, "any spatial rank; group, dilations, output_padding, output_shape, auto_pad"},
      {"Cos", ops::cos, 7, floats, ""},
      {"Cosh", ops::cosh, 9, floats, ""},
      {"CumSum", ops::cumsum, 11, wide, "exclusive, reverse"},
      {"DequantizeLinear", ops::dequantize_linear, 10, TypeSet{DataType::int8, DataType::uint8, DataType::int32}, "per tensor or per axis"},
      {"DepthToSpace", ops::depth_to_space, 1, any, "DCR and CRD modes"},
      {"Div", ops::div, 1, numbers, "integer division by zero is an error"},
      {"Dropout", ops::dropout, 1, floats, "inference (or training with ratio 0); mask output all true"},
      {"DynamicQuantizeLinear", ops::dynamic_quantize_linear, 11, TypeSet{DataType::float32}, ""},
      {"Elu", ops::elu, 1, floats, ""},
      {"Equal", ops::equal, 1, all, ""},
      {"Erf", ops::erf, 9, floats, ""},
      {"Exp", ops::exp, 1, floats, ""},
      {"Expand", ops::expand, 8, any, ""},
      {"EyeLike", ops::eye_like, 9, all, "k, dtype"},
      {"Flatten", ops::flatten, 1, any, ""},
      {"Floor", ops::floor, 1, floats, ""},
      {"Gather", ops::gather, 1, any, "negative indices; out-of-range indices are an error"},
      {"GatherElements", ops::gather_elements, 11, any, ""},
      {"GatherND", ops::gather_nd, 11, any, "batch_dims"},
      {"Gemm", ops::gemm, 1, floats, "transA, transB, alpha, beta; C broadcasts"},
      {"GlobalAveragePool", ops::global_average_pool, 1, floats, ""},
      {"GlobalMaxPool", ops::global_max_pool, 1, floats, ""},
      {"Greater", ops::greater, 1, numbers, ""},
      {"GreaterOrEqual", ops::greater_or_equal, 12, numbers, ""},
      {"HammingWindow", ops::hamming_window, 17, TypeSet{DataType::int64, DataType::int32}, "periodic or symmetric; output_datatype"},
      {"HannWindow", ops::hann_window, 17, TypeSet{DataType::int64, DataType::int32}, "periodic or symmetric; output_datatype"},
      {"HardSigmoid", ops::hard_sigmoid, 1, floats, ""},
      {"HardSwish", ops::hard_swish, 14, floats, ""},
      {"Hardmax", ops::hardmax, 1, floats, ""},
      {"Identity", ops::identity, 1, any, "tensors only"},
      {"InstanceNormalization", ops::instance_normalization, 1, floats, ""},
      {"IsInf", ops::is_inf, 10, floats, "detect_positive, detect_negative"},
      {"IsNaN", ops::is_nan, 9, floats, ""},
      {"LRN", ops::lrn, 1, floats, ""},
      {"LayerNormalization", ops::layer_normalization, 17, floats, "Mean and InvStdDev outputs"},
      {"LeakyRelu", ops::leaky_relu, 1, floats, ""},
      {"Less", ops::less, 1, numbers, ""},
      {"LessOrEqual", ops::less_or_equal, 12, numbers, ""},
      {"Log", ops::log, 1, floats, ""},
      {"LogSoftmax", ops::log_softmax, 1, floats, "2-d coercion before opset 13"},
      {"MatMul", ops::matmul, 1, wide, "numpy batch broadcasting"},
      {"Max", ops::max, 1, numbers, "variadic; NaN propagates"},
      {"MaxPool", ops::max_pool, 1, floats, "1-d to 3-d; Indices output; dilations, ceil_mode"},
      {"Mean", ops::mean, 1, floats, "variadic"},
      {"MeanVarianceNormalization", ops::mean_variance_normalization, 9, floats, ""},
      {"Min", ops::min, 1, numbers, "variadic; NaN propagates"},
      {"Mod", ops::mod, 10, numbers, "fmod = 0 (integers) and 1"},
      {"Mul", ops::mul, 1, numbers, ""},
      {"Neg", ops::neg, 1, signed_numbers, ""},
      {"NegativeLogLikelihoodLoss", ops::nll_loss, 12, floats, "reduction, weight, ignore_index"},
      {"NonZero", ops::non_zero, 9, all, ""},
      {"Not", ops::logical_not, 1, bools, ""},
      {"OneHot", ops::one_hot, 9, numbers, ""},
      {"Or", ops::logical_or, 1, bools, ""},
      {"PRelu", ops::prelu, 1, floats, ""},
      {"Pad", ops::pad, 1, any, "constant, reflect, edge"},
      {"Pow", ops::pow, 1, wide, "exponent of another type allowed"},
      {"QuantizeLinear", ops::quantize_linear, 10, TypeSet{DataType::float32, DataType::int32}, "to uint8 or int8; per tensor or per axis"},
      {"Range", ops::range, 11, wide, ""},
      {"Reciprocal", ops::reciprocal, 1, floats, ""},
      {"ReduceL1", ops::reduce_l1, 1, numbers, "computed in double precision"},
      {"ReduceL2", ops::reduce_l2, 1, numbers, "computed in double precision"},
      {"ReduceLogSum", ops::reduce_log_sum, 1, numbers, "computed in double precision"},
      {"ReduceLogSumExp", ops::reduce_log_sum_exp, 1, numbers, "computed in double precision"},
      {"ReduceMax", ops::reduce_max, 1, numbers, "computed in double precision"},
      {"ReduceMean", ops::reduce_mean, 1, numbers, "computed in double precision"},
      {"ReduceMin", ops::reduce_min, 1, numbers, "computed in double precision"},
      {"ReduceProd", ops::reduce_prod, 1, numbers, "computed in double precision"},
      {"ReduceSum", ops::reduce_sum, 1, numbers, "axes input from opset 13; noop_with_empty_axes"},
      {"ReduceSumSquare", ops::reduce_sum_square, 1, numbers, "computed in double precision"},
      {"Relu", ops::relu, 1, numbers, ""},
      {"Reshape", ops::reshape, 1, any, "0 copies a dimension unless allowzero"},
      {"Resize", ops::resize, 10, numbers, "nearest, linear, cubic; every coordinate_transformation_mode; scales or sizes"},
      {"ReverseSequence", ops::reverse_sequence, 10, any, ""},
      {"Round", ops::round, 11, floats, "halves to even"},
      {"Scatter", ops::scatter_elements, 9, any, "deprecated name of ScatterElements"},
      {"ScatterElements", ops::scatter_elements, 11, any, "reduction none, add, mul"},
      {"ScatterND", ops::scatter_nd, 11, any, "reduction none, add, mul"},
      {"Selu", ops::selu, 1, floats, ""},
      {"Shape", ops::shape, 1, any, "start, end (opset 15)"},
      {"Shrink", ops::shrink, 9, numbers, ""},
      {"Sigmoid", ops::sigmoid, 1, floats, ""},
      {"Sign", ops::sign, 9, numbers, ""},
      {"Sin", ops::sin, 7, floats, ""},
      {"Sinh", ops::sinh, 9, floats, ""},
      {"Size", ops::size, 1, any, ""},
      {"Slice", ops::slice, 1, any, "attributes before opset 10, inputs from 10; negative steps"},
      {"Softmax", ops::softmax, 1, floats, "2-d coercion before opset 13"},
      {"SoftmaxCrossEntropyLoss", ops::softmax_cross_entropy_loss, 12, floats, "reduction, weight, ignore_index, log_prob output"},
      {"Softplus", ops::softplus, 1, floats, ""},
      {"Softsign", ops::softsign, 1, floats, ""},
      {"SpaceToDepth", ops::space_to_depth, 1, any, ""},
      {"Split", ops::split, 1, any, "split as attribute before opset 13, input from 13"},
      {"Sqrt", ops::sqrt, 1, floats, ""},
      {"Squeeze", ops::squeeze, 1, any, "axes as attribute before opset 13, input from 13"},
      {"Sub", ops::sub, 1, numbers, ""},
      {"Sum", ops::sum, 1, floats, "variadic"},
      {"Tan", ops::tan, 7, floats, ""},
      {"Tanh", ops::tanh, 1, floats, ""},
      {"ThresholdedRelu", ops::thresholded_relu, 10, floats, ""},
      {"Tile", ops::tile, 1, any, ""},
      {"TopK", ops::top_k, 1, numbers, "largest, sorted output; ties to the lower index"},
      {"Transpose", ops::transpose, 1, any, ""},
      {"Trilu", ops::trilu, 14, any, ""},
      {"Unsqueeze", ops::unsqueeze, 1, any, "axes as attribute before opset 13, input from 13"},
      {"Upsample", ops::upsample, 7, numbers, "nearest, linear (deprecated by Resize)"},
      {"Where", ops::where, 9, bools, "condition bool; X and Y of any one type"},
      {"Xor", ops::logical_xor, 1, bools, ""},
      {"ai.onnx.ml:ArrayFeatureExtractor", ops::ml_array_feature_extractor, 1, numbers, "a (C) input gives (1, k)"},
      {"ai.onnx.ml:Binarizer", ops::ml_binarizer, 1, ml_in32, ""},
      {"ai.onnx.ml:Imputer", ops::ml_imputer, 1, ml_in32, ""},
      {"ai.onnx.ml:LabelEncoder", ops::ml_label_encoder, 1, TypeSet{DataType::float32, DataType::int64}, "numeric keys and values (opset 2); no strings"},
      {"ai.onnx.ml:LinearClassifier", ops::linear_classifier, 1, ml_in, "integer labels"},
      {"ai.onnx.ml:LinearRegressor", ops::linear_regressor, 1, ml_in, ""},
      {"ai.onnx.ml:Normalizer", ops::ml_normalizer, 1, ml_in32, "MAX: the largest value, as onnxruntime"},
      {"ai.onnx.ml:OneHotEncoder", ops::ml_one_hot_encoder, 1, ml_in32, "cats_int64s; reals truncated to int64"},
      {"ai.onnx.ml:Scaler", ops::scaler, 1, ml_in, ""},
      {"ai.onnx.ml:TreeEnsembleClassifier", ops::tree_ensemble_classifier, 1, ml_in,
       "integer labels; double thresholds and weights from *_as_tensor"},
      {"ai.onnx.ml:TreeEnsembleRegressor", ops::tree_ensemble_regressor, 1, ml_in,
       "double thresholds and weights from *_as_tensor"},
  };
  return table;
}
#endif

}  // namespace onelearn::onnx
