#pragma once
/**
 * \file
 * \brief ONNX export of every fitted onelearn model that ONNX can express.
 * \ingroup onnx
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/onnx/export.hpp>
 * #include <onelearn/onnx/graph.hpp>
 * auto pipe = onelearn::pipeline::make_pipeline(
 *     onelearn::preprocessing::StandardScaler<double>(),
 *     onelearn::linear_model::LogisticRegression<double>());
 * pipe.fit(X, y);
 * ::onnx::ModelProto proto = onelearn::onnx::to_proto(pipe);   // in memory
 * onelearn::onnx::save(pipe, "iris.onnx");   // input "X" (float, N x 4), outputs "label",
 *                                            // "probabilities"
 * onelearn::onnx::Graph g = onelearn::onnx::load("iris.onnx");   // or onnxruntime
 * \endcode
 *
 * ONNX export of every fitted onelearn model that ONNX can express:
 * - `onelearn::onnx::to_proto(model)`: an `onnx::ModelProto`;
 * - `onelearn::onnx::save(model, path)`: written to a temporary file, then renamed (no
 *   half-written file);
 * - both take `{.precision = onelearn::onnx::Precision::float64}` for a double model (every
 *   family below but the trees and boosting; the default is float32, as skl2onnx writes).
 *
 * The families, one header each under onnx/export/ (include just one to compile less):
 * - `linear.hpp`: LinearRegression, Ridge, Lasso, ElasticNet, SGDRegressor (LinearRegressor);
 *   LogisticRegression, SGDClassifier (LinearClassifier);
 * - `preprocessing.hpp`: StandardScaler, MinMaxScaler, MaxAbsScaler (Scaler); Normalizer,
 *   SimpleImputer, PolynomialFeatures, OneHotEncoder of numeric codes (plain ONNX operators);
 * - `labels.hpp`: LabelEncoder of int64 or real labels (LabelEncoder; its input is the label
 *   vector);
 * - `decomposition.hpp`: PCA (Sub, MatMul, Div);
 * - `cluster.hpp`: KMeans (label, scores);
 * - `naive_bayes.hpp`: GaussianNB, MultinomialNB;
 * - `neighbors.hpp`: KNeighborsClassifier, KNeighborsRegressor (the training rows in the model;
 *   TopK, Gather, OneHot);
 * - `trees.hpp`: `DecisionTree*`, `RandomForest*`, `ExtraTrees*` (TreeEnsembleClassifier,
 *   TreeEnsembleRegressor);
 * - `boosting.hpp`: `HistGradientBoosting*` (TreeEnsembleClassifier, TreeEnsembleRegressor);
 * - `pipeline.hpp`: `pipeline::Pipeline` of the above (one graph);
 * - `nn.hpp`: a built `nn::Sequential` (Gemm, Conv, MaxPool, AveragePool, BatchNormalization,
 *   activations, Flatten, Reshape; input N, C, H, W for images); onnx/to_sequential.hpp reads
 *   such a chain back as a Sequential.
 *
 * The format (opsets, names, metadata, precision) and how to add a model type are described in
 * onnx/export/core.hpp; checking a model with ONNX's checker in onnx/export/check.hpp.
 *
 * Needs `ONNX_ML=1` and `ONNX_NAMESPACE=onnx` and links onnx_proto and protobuf (the target
 * onelearn::onnx).
 *
 * Errors (onnx/export/core.hpp): `not_fitted_error` for a model (or pipeline step) that is not
 * fitted; `invalid_argument` for a fitted model the export cannot express; save: `io_error`
 * when the directory does not exist or the file cannot be written, in which case no file is
 * left.
 */

#include "onelearn/onnx/export/boosting.hpp"
#include "onelearn/onnx/export/cluster.hpp"
#include "onelearn/onnx/export/core.hpp"
#include "onelearn/onnx/export/decomposition.hpp"
#include "onelearn/onnx/export/linear.hpp"
#include "onelearn/onnx/export/naive_bayes.hpp"
#include "onelearn/onnx/export/neighbors.hpp"
#include "onelearn/onnx/export/nn.hpp"
#include "onelearn/onnx/export/pipeline.hpp"
#include "onelearn/onnx/export/trees.hpp"
#include "onelearn/onnx/export/labels.hpp"
#include "onelearn/onnx/export/preprocessing.hpp"
