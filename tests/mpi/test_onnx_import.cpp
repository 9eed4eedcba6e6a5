// onnx::to_estimator under exec::mpi with 2 and 3 ranks: every rank given the same file holds
// the model the file describes (a forest from a float64 file predicts as the local forest; the
// k-NN classifier, whose rows are split over the ranks, as the one-process model); a rank given
// another file or a damaged copy, or a file every rank refuses, is an error on every rank, and
// the ranks go on together after it (a collective that would hang otherwise follows each).
// Compiled only where ONNX is found (tests/cmake/mpi_tests.cmake).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "mpi_support.hpp"
#include "onelearn/ensemble/forest_classifier.hpp"
#include "onelearn/exec/mpi.hpp"
#include "onelearn/linear_model/logistic_regression.hpp"
#include "onelearn/neighbors/k_neighbors_classifier.hpp"
#include "onelearn/onnx/export.hpp"
#include "onelearn/onnx/to_estimator.hpp"
#include "support.hpp"

namespace {

namespace ox = onelearn::onnx;
using onelearn::Labels;
using onelearn::test::world;

/// A collective every rank must reach: after an error on some rank only, it would hang.
void ranks_still_together(const onelearn::exec::mpi& comm) {
  std::int64_t one = 1;
  comm.allreduce(std::span<std::int64_t>(&one, 1), onelearn::exec::reduce_op::sum);
  CHECK(one == comm.size());
}

}  // namespace

TEST_CASE("onnx::to_estimator under exec::mpi: one model on every rank, errors on every rank") {
  using namespace onelearn;
  const exec::mpi comm = world();
  const auto iris = test::load_split<double, std::int64_t>("iris");
  // Fitted on every rank alike (one process each, the same seed): the file every rank reads.
  ensemble::RandomForestClassifier<double> forest({.n_estimators = 5, .random_state = 4});
  forest.fit(iris.X_train, iris.y_train);
  const ::onnx::ModelProto file = ox::to_proto(forest, {.precision = ox::Precision::float64});
  // (aliases: a comma inside a doctest macro's template arguments splits the macro's arguments)
  using Forest = ensemble::RandomForestClassifier<double, exec::mpi>;
  using Neighbors = neighbors::KNeighborsClassifier<double, exec::mpi>;
  using Logistic = linear_model::LogisticRegression<double, exec::mpi>;

  SUBCASE("the same file: the model it holds, on every rank") {
    const auto back = ox::to_estimator<Forest>(file, comm);
    CHECK(back.predict(iris.X_test) == forest.predict(iris.X_test));
    // The k-NN classifier keeps its rows split over the ranks; its answers are the whole model's.
    neighbors::KNeighborsClassifier<double> knn({.n_neighbors = 4});
    knn.fit(iris.X_train, iris.y_train);
    const auto knn_back = ox::to_estimator<Neighbors>(
        ox::to_proto(knn, {.precision = ox::Precision::float64}), comm);
    CHECK(knn_back.predict(iris.X_test) == knn.predict(iris.X_test));
    ranks_still_together(comm);
  }
  SUBCASE("a damaged copy on the last rank: invalid_argument on every rank") {
    ::onnx::ModelProto mine = file;
    if (comm.rank() == comm.size() - 1) {
      for (auto& init : *mine.mutable_graph()->mutable_initializer()) {
        if (init.name() == "tree_thresholds") init.set_double_data(0, init.double_data(0) + 1);
      }
    }
    CHECK_THROWS_WITH_AS(
        (void)ox::to_estimator<Forest>(mine, comm),
        doctest::Contains("ranks disagree on model"), invalid_argument);
    // The k-NN import, which has collectives of its own, is refused before them too.
    CHECK_THROWS_AS(
        (void)ox::to_estimator<Neighbors>(mine, comm),
        invalid_argument);
    ranks_still_together(comm);
  }
  SUBCASE("a file every rank refuses: the same error on every rank") {
    CHECK_THROWS_WITH_AS(
        (void)ox::to_estimator<Logistic>(file, comm),
        doctest::Contains("TreeEnsembleClassifier"), ox::unsupported_error);
    // (raised in the k-NN import's own propagate_errors: every rank gets the first failing
    // rank's message, as onelearn::invalid_argument, the base of onnx::graph_error)
    CHECK_THROWS_WITH_AS((void)ox::to_estimator<Neighbors>(file, comm),
                         doctest::Contains("no TopK node"), invalid_argument);
    ranks_still_together(comm);
  }
}
