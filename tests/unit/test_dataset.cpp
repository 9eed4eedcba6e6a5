#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "onelearn/core/dataset.hpp"
#include "onelearn/core/records.hpp"
#include "onelearn/core/xtensor.hpp"

using namespace onelearn;

namespace {

/// 0, 1, 2, ... laid out row by row, so every entry says where it came from.
template <class T>
Matrix<T> counting_matrix(index_t rows, index_t cols) {
  Matrix<T> X(rows, cols);
  for (index_t i = 0; i < X.size(); ++i) X.data()[i] = static_cast<T>(i);
  return X;
}

template <class T>
Dataset<T> counting_dataset(index_t rows, index_t cols) {
  Vector<T> y = Vector<T>::LinSpaced(rows, 0, static_cast<T>(rows - 1));
  Vector<T> w = Vector<T>::Constant(rows, 1) + y;
  return Dataset<T>(counting_matrix<T>(rows, cols), y, w);
}

}  // namespace

TEST_CASE_TEMPLATE("Dataset keeps features, targets and weights together", T, float, double) {
  const auto data = counting_dataset<T>(5, 3);
  CHECK(data.size() == 5);
  CHECK(data.n_features() == 3);
  CHECK(data.has_targets());
  CHECK(data.has_sample_weights());
  CHECK(data.features()(4, 2) == T(14));
  CHECK(data.targets()(4) == T(4));
  CHECK(data.sample_weights()(4) == T(5));

  const Dataset<T> features_only(counting_matrix<T>(2, 2));
  CHECK_FALSE(features_only.has_targets());
  CHECK_THROWS_WITH_AS((void)features_only.targets(), doctest::Contains("has no targets"),
                       onelearn::invalid_argument);
}

TEST_CASE("Dataset rejects targets and weights of the wrong length") {
  CHECK_THROWS_WITH_AS(Dataset<double>(counting_matrix<double>(4, 2), Vector<double>::Zero(3)),
                       doctest::Contains("expected targets to have 4 entries"), shape_error);
  CHECK_THROWS_WITH_AS(Dataset<double>(counting_matrix<double>(4, 2), Vector<double>::Zero(4),
                                       Vector<double>::Zero(5)),
                       doctest::Contains("expected sample_weights to have 4 entries"
                                         " (one per row of the features), found 5"),
                       shape_error);
  Dataset<double> data(counting_matrix<double>(4, 2));
  CHECK_THROWS_WITH_AS(data.set_feature_names({"a"}), doctest::Contains("expected 2 names"),
                       shape_error);
}

TEST_CASE("shards are contiguous, as even as possible, and concatenate to the whole") {
  const auto data = counting_dataset<double>(10, 2);
  for (int n_shards : {1, 2, 3, 4, 7, 10, 12}) {
    CAPTURE(n_shards);
    index_t next_row = 0;
    for (int rank = 0; rank < n_shards; ++rank) {
      const auto shard = data.shard(rank, n_shards);
      // 10 rows over n shards: the first 10 % n shards get one more row.
      const index_t expected = 10 / n_shards + (rank < 10 % n_shards ? 1 : 0);
      CHECK(shard.size() == expected);
      for (index_t r = 0; r < shard.size(); ++r, ++next_row) {
        CHECK(shard.features().row(r) == data.features().row(next_row));
        CHECK(shard.targets()(r) == data.targets()(next_row));
        CHECK(shard.sample_weights()(r) == data.sample_weights()(next_row));
      }
    }
    CHECK(next_row == 10);
  }
  CHECK_THROWS_WITH_AS((void)data.shard(3, 3), doctest::Contains("expected 0 <= rank < n_shards"),
                       onelearn::invalid_argument);
  CHECK_THROWS_AS((void)data.shard(0, 0), onelearn::invalid_argument);
}

TEST_CASE("shuffling with a seed is a reproducible permutation that moves rows whole") {
  const auto data = counting_dataset<double>(50, 3);
  const auto a = data.shuffled(42);
  const auto b = data.shuffled(42);
  const auto c = data.shuffled(43);
  CHECK(a.features() == b.features());
  CHECK(a.features() != c.features());
  CHECK(a.features() != data.features());
  std::set<double> targets;
  for (index_t r = 0; r < a.size(); ++r) {
    // Each row still carries its own target and weight: target t sits in row t of the original.
    const auto t = static_cast<index_t>(a.targets()(r));
    CHECK(a.features().row(r) == data.features().row(t));
    CHECK(a.sample_weights()(r) == doctest::Approx(static_cast<double>(t + 1)));
    targets.insert(a.targets()(r));
  }
  CHECK(targets.size() == 50);
  const auto order = Dataset<double>::permutation(5, 42);
  CHECK(std::set<index_t>(order.begin(), order.end()) == std::set<index_t>{0, 1, 2, 3, 4});
}

TEST_CASE("mini-batches are views that cover the dataset in order") {
  const auto data = counting_dataset<float>(10, 2);
  CHECK(data.n_batches(4) == 3);
  CHECK(data.n_batches(10) == 1);
  CHECK(data.n_batches(11) == 1);
  index_t seen = 0;
  for (index_t i = 0; i < data.n_batches(4); ++i) {
    const auto batch = data.batch(i, 4);
    CHECK(batch.offset == seen);
    CHECK(batch.size() == (i < 2 ? 4 : 2));
    CHECK(batch.features.data() == data.features().data() + seen * 2);  // no copy
    CHECK(batch.features(0, 1) == data.features()(seen, 1));
    CHECK((*batch.targets)(batch.size() - 1) == data.targets()(seen + batch.size() - 1));
    CHECK((*batch.sample_weights)(0) == data.sample_weights()(seen));
    seen += batch.size();
  }
  CHECK(seen == 10);
  CHECK_THROWS_WITH_AS((void)data.batch(3, 4), doctest::Contains("expected 0 <= i < 3, found 3"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)data.n_batches(0), doctest::Contains("expected batch_size >= 1"),
                       onelearn::invalid_argument);
}

TEST_CASE("subset, rows and split_tail") {
  const auto data = counting_dataset<double>(6, 2);
  const auto picked = data.subset({5, 0, 5});
  CHECK(picked.size() == 3);
  CHECK(picked.targets()(0) == 5);
  CHECK(picked.targets()(2) == 5);
  CHECK(picked.features()(1, 1) == 1);
  const auto [head, tail] = data.split_tail(2);
  CHECK(head.size() == 4);
  CHECK(tail.size() == 2);
  CHECK(tail.targets()(0) == 4);
  CHECK_THROWS_AS((void)data.subset({6}), onelearn::invalid_argument);
  CHECK_THROWS_AS((void)data.rows(4, 2), onelearn::invalid_argument);
  CHECK_THROWS_AS((void)data.split_tail(7), onelearn::invalid_argument);
}

TEST_CASE_TEMPLATE("from xtensor: as_matrix shares the buffer, from_xtensor copies", T, float, double) {
  xt::xtensor<T, 2> X = {{1, 2, 3}, {4, 5, 6}};
  xt::xtensor<std::int64_t, 1> y = {7, 8};
  const auto view = as_matrix(X);
  CHECK(view.data() == X.data());
  CHECK(view(1, 0) == T(4));

  const auto data = from_xtensor(X, y);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(data)>, ClassificationDataset<T>>);
  CHECK(data.size() == 2);
  CHECK(data.features()(0, 2) == T(3));
  CHECK(data.targets()(1) == 8);

  xt::xtensor<T, 2, xt::layout_type::column_major> Xc = {{1, 2, 3}, {4, 5, 6}};
  const auto from_column_major = from_xtensor(Xc);
  CHECK(from_column_major.features() == data.features());
}

namespace {
struct Flower {
  double sepal_length;
  double sepal_width;
  float petal_length;
  int species;
  double petal_width;
  static constexpr std::array<std::string_view, 5> names{"sepal_length", "sepal_width",
                                                         "petal_length", "species", "petal_width"};
};
struct Point {
  float x, y, label;
};
}  // namespace

TEST_CASE("from records: the last field or a named one is the target") {
  const std::vector<Flower> flowers{{5.1, 3.5, 1.4f, 0, 0.2}, {7.0, 3.2, 4.7f, 1, 1.4}};
  const auto by_member = from_records<double, std::int64_t>(flowers, &Flower::species);
  CHECK(by_member.n_features() == 4);
  CHECK(by_member.targets()(1) == 1);
  CHECK(by_member.features()(1, 2) == doctest::Approx(4.7));
  CHECK(by_member.features()(1, 3) == 1.4);
  CHECK(by_member.feature_names() ==
        std::vector<std::string>{"sepal_length", "sepal_width", "petal_length", "petal_width"});

  const std::vector<Point> points{{1, 2, 0}, {3, 4, 1}, {5, 6, 1}};
  const auto last = from_records<float>(points);
  CHECK(last.n_features() == 2);
  CHECK(last.targets()(2) == 1.0f);
  CHECK(last.features()(2, 1) == 6.0f);
  CHECK(last.feature_names().empty());

  const auto all = from_records<double>(points, no_target);
  CHECK(all.n_features() == 3);
  CHECK_FALSE(all.has_targets());
}
