// Trees and forests under exec::mpi with 2 and 3 ranks and uneven shards (the last rank holds
// only a few rows): every rank must end with the model one process fits on the concatenated
// rows, node for node, and errors found on one rank must reach every rank.
//
// Checks use CHECK, never REQUIRE: a REQUIRE that stops one rank early would leave the others
// waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <cmath>
#include <string>

#include "onelearn/core/errors.hpp"
#include "onelearn/ensemble/forest_classifier.hpp"
#include "onelearn/ensemble/forest_regressor.hpp"
#include "onelearn/exec/mpi.hpp"
#if __has_include(<ucp/api/ucp.h>)  // exec::ucx is optional (Debian: libucx-dev)
#define ONELEARN_TEST_UCX 1
#include "onelearn/exec/ucx.hpp"
#endif
#include "onelearn/io/io.hpp"
#include "onelearn/tree/decision_tree_classifier.hpp"
#include "onelearn/tree/decision_tree_regressor.hpp"
#include "mpi_support.hpp"
#include "support.hpp"

using namespace onelearn;

namespace {

using test::world;

struct Rows {
  Matrix<double> X;
  Labels labels;
  Vector<double> y;
};

Rows all_rows() {
  return {io::load_npy<Matrix<double>>(test::data_path("trees/X.npy")),
          io::load_npy<Labels>(test::data_path("trees/y_class.npy")),
          io::load_npy<Vector<double>>(test::data_path("trees/y_reg.npy"))};
}

/// Rank r's rows: the last rank gets 7 rows, the others split the rest evenly; returns the
/// first row and the count.
std::pair<index_t, index_t> my_rows(index_t n, const exec::mpi& comm) {
  const index_t last = 7;
  const int size = comm.size(), rank = comm.rank();
  if (rank == size - 1) return {n - last, last};
  const index_t share = (n - last) / (size - 1);
  const index_t first = share * rank;
  return {first, rank == size - 2 ? n - last - first : share};
}

bool same_nodes(const tree::detail::TreeNodes& a, const tree::detail::TreeNodes& b) {
  return a.children_left == b.children_left && a.children_right == b.children_right &&
         a.feature == b.feature && a.threshold == b.threshold &&
         a.n_node_samples == b.n_node_samples && a.value == b.value;
}

}  // namespace

TEST_CASE("distributed DecisionTree equals the tree of the concatenated rows") {
  const auto comm = world();
  const Rows d = all_rows();
  const auto [first, count] = my_rows(d.X.rows(), comm);
  const Matrix<double> X = d.X.middleRows(first, count);

  tree::DecisionTreeClassifier<double> local({.max_depth = 6, .max_features = "4", .random_state = 9});
  local.fit(d.X, d.labels);
  tree::DecisionTreeClassifier<double, exec::mpi> distributed(
      {.max_depth = 6, .max_features = "4", .random_state = 9}, comm);
  distributed.fit(X, d.labels.segment(first, count));
  CHECK(same_nodes(distributed.tree(), local.tree()));
  CHECK(distributed.classes() == local.classes());
  CHECK(distributed.score(X, d.labels.segment(first, count)) ==
        doctest::Approx(local.score(d.X, d.labels)));

  tree::DecisionTreeRegressor<double> local_regressor({.min_samples_leaf = 4});
  local_regressor.fit(d.X, d.y);
  tree::DecisionTreeRegressor<double, exec::mpi> regressor({.min_samples_leaf = 4}, comm);
  regressor.fit(X, d.y.segment(first, count));
  CHECK(same_nodes(regressor.tree(), local_regressor.tree()));
}

TEST_CASE("distributed RandomForest spreads its trees and every rank ends with the whole forest") {
  const auto comm = world();
  const Rows d = all_rows();
  const auto [first, count] = my_rows(d.X.rows(), comm);
  const Matrix<double> X = d.X.middleRows(first, count);
  const ensemble::RandomForestClassifierParams params{
      .n_estimators = 7, .max_depth = 5, .oob_score = true, .random_state = 4};

  ensemble::RandomForestClassifier<double> local(params);
  local.fit(d.X, d.labels);
  ensemble::RandomForestClassifier<double, exec::mpi> distributed(params, comm);
  distributed.fit(X, d.labels.segment(first, count));
  CHECK(distributed.estimators().size() == 7);
  for (std::size_t t = 0; t < 7; ++t) {
    CHECK(same_nodes(distributed.estimators()[t], local.estimators()[t]));
  }
  CHECK(distributed.oob_score() == local.oob_score());
  CHECK(distributed.oob_decision_function() ==
        local.oob_decision_function().middleRows(first, count));
  CHECK(distributed.predict_proba(X) == local.predict_proba(X));

  const ensemble::ExtraTreesRegressorParams extra{.n_estimators = 5, .random_state = 1};
  ensemble::ExtraTreesRegressor<double> local_extra(extra);
  local_extra.fit(d.X, d.y);
  ensemble::ExtraTreesRegressor<double, exec::mpi> distributed_extra(extra, comm);
  distributed_extra.fit(X, d.y.segment(first, count));
  CHECK(distributed_extra.predict(X) == local_extra.predict(X));
}

#ifdef ONELEARN_TEST_UCX
TEST_CASE("a tree and a forest under exec::ucx equal the one-process fit") {
  const auto comm = world();
  const exec::ucx ucx(MPI_COMM_WORLD);
  const Rows d = all_rows();
  const auto [first, count] = my_rows(d.X.rows(), comm);
  const Matrix<double> X = d.X.middleRows(first, count);
  tree::DecisionTreeRegressor<double> local({.max_depth = 5});
  local.fit(d.X, d.y);
  tree::DecisionTreeRegressor<double, exec::ucx> distributed({.max_depth = 5}, ucx);
  distributed.fit(X, d.y.segment(first, count));
  CHECK(same_nodes(distributed.tree(), local.tree()));

  const ensemble::RandomForestClassifierParams params{.n_estimators = 4, .max_depth = 4};
  ensemble::RandomForestClassifier<double> local_forest(params);
  local_forest.fit(d.X, d.labels);
  ensemble::RandomForestClassifier<double, exec::ucx> forest(params, ucx);
  forest.fit(X, d.labels.segment(first, count));
  for (std::size_t t = 0; t < 4; ++t) {
    CHECK(same_nodes(forest.estimators()[t], local_forest.estimators()[t]));
  }
}
#endif

TEST_CASE("a bad row on one rank fails the tree's fit on every rank") {
  const auto comm = world();
  const Rows d = all_rows();
  const auto [first, count] = my_rows(d.X.rows(), comm);
  Matrix<double> X = d.X.middleRows(first, count);
  if (comm.rank() == comm.size() - 1) X(2, 1) = std::nan("");
  std::string message;
  try {
    ensemble::RandomForestRegressor<double, exec::mpi>({.n_estimators = 3}, comm)
        .fit(X, d.y.segment(first, count));
  } catch (const invalid_argument& e) {
    message = e.what();
  }
  CHECK(message.find("row 2, column 1") != std::string::npos);

  // One class over all ranks is an error on every rank, even where a rank's rows alone would
  // not show it.
  const Labels one_class = Labels::Constant(count, 3);
  using DistributedTree = tree::DecisionTreeClassifier<double, exec::mpi>;
  CHECK_THROWS_WITH_AS(DistributedTree({}, comm).fit(d.X.middleRows(first, count), one_class),
                       doctest::Contains("at least 2 classes"), invalid_argument);
}
