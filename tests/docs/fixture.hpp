// The names the documentation's examples use without declaring them (X_train, y_train, comm,
// model, ...), for tests/docs/extract_examples.py: each example is compiled as the body of a
// function in a namespace inside onelearn_doc_fixture::<context>. The examples are compiled
// and linked, not run, so the values here only need the right types. A doc example may use a
// name declared here; one that is not declared here fails the docs_examples build, which is
// the point: an example that drifts from the code stops compiling.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <onelearn/cluster/k_means.hpp>
#include <onelearn/core/dataset.hpp>
#include <onelearn/exec/mpi.hpp>
#include <onelearn/linear_model/logistic_regression.hpp>
#include <onelearn/linear_model/ridge.hpp>
#include <onelearn/model_selection/grid_search_cv.hpp>
#include <onelearn/nn/sequential.hpp>
#include <onelearn/pipeline.hpp>
#include <onelearn/preprocessing/standard_scaler.hpp>
#include <onelearn/tune/ablation.hpp>
#include <onelearn/tune/run.hpp>

namespace onelearn_doc_fixture {

namespace common {
using onelearn::index_t;
namespace exec = onelearn::exec;
namespace tune = onelearn::tune;
inline MPI_Comm comm = MPI_COMM_WORLD;       // the application's communicator
inline int argc = 0;                         // main's arguments, for MPI_Init(&argc, &argv)
inline char** argv = nullptr;
inline std::int64_t n = 0;                   // a number of features
inline std::vector<std::string> lines;       // what a log sink collected
inline std::string text;                     // a file's contents
inline std::string preamble;                 // the first bytes of a file
inline std::size_t row_bytes = 0;
inline std::vector<double> values;           // a buffer for a collective
inline void validate(const onelearn::Matrix<double>&) {}
struct Logger {
  void write(std::string_view, std::string_view) {}
};
inline Logger my_logger;                     // an application's own logger

// tune's training functions and what they read
inline onelearn::tune::Space space{{"alpha", onelearn::tune::log_uniform{1e-4, 1e2}}};
inline onelearn::tune::RunOptions options;
inline std::vector<onelearn::tune::Component> components{{"scaler"}};
inline double fit_and_score(bool, bool, const std::string&, double, std::uint64_t) { return 0; }
inline double train_one_epoch(double, const std::string&, std::uint64_t) { return 0; }
inline double train(const onelearn::tune::Trial&, onelearn::tune::Reporter&) { return 0; }
}  // namespace common

// Real-valued targets (the default context): regressors, transformers, searches over them.
namespace regression {
using namespace common;
using M = onelearn::Matrix<double>;
using V = onelearn::Vector<double>;
inline M X, X_train, X_test, X_val, X_more, X_query, X_scaled, all_queries, my_X, my_rows;
inline V y, y_train, y_test, y_val, y_more, my_y, y_true, y_pred, my_true, my_pred, weights;
inline onelearn::Labels labels, labels_test, patient_id;  // class labels, groups
inline onelearn::Dataset<double> train_data;
inline onelearn::linear_model::Ridge<double> model, ridge, fitted_model;
inline onelearn::linear_model::LogisticRegression<double> clf;
inline auto pipe = onelearn::pipeline::make_pipeline(
    onelearn::preprocessing::StandardScaler<double>(),
    onelearn::linear_model::LogisticRegression<double>());
inline onelearn::model_selection::GridSearchCV search(
    onelearn::linear_model::Ridge<double>(), {{"alpha", {0.1, 1.0}}});
}  // namespace regression

// Class labels: classifiers, the label metrics, ONNX export of classifiers.
namespace classification {
using namespace common;
using M = onelearn::Matrix<double>;
using L = onelearn::Labels;
inline M X, X_train, X_test, X_batch, X_next, my_X, all_queries, proba, my_proba,
    p_positive_as_n_by_1;
inline L y, y_train, y_test, y_batch, y_next, my_y, all_classes, labels, y_true, y_pred,
    my_true, my_pred, my_truth, my_predicted, my_clusters;
inline onelearn::Vector<double> weights, scores, targets, targets_test;
}  // namespace classification

// Networks: float rows of 64 features, labels 0..9, a built and compiled Sequential.
namespace nn {
using namespace common;
namespace nn = onelearn::nn;
using M = onelearn::Matrix<float>;
using L = onelearn::Labels;
inline M X, X_train, X_test, X_val, X_mine, X_all;
inline L y, y_train, y_test, y_val, y_mine, y_all;
inline nn::Sequential<float> model{nn::Input({64}), nn::Dense(10)};
inline nn::FitOptions options;  // what fit is given
inline nn::Sequential<float> make_model() {
  return nn::Sequential<float>{nn::Input({64}), nn::Dense(10)};
}
}  // namespace nn

}  // namespace onelearn_doc_fixture
