#pragma once
/**
 * \file
 * \ingroup core
 *
 * Dataset<T, Y>: features, optional targets and optional sample weights, kept together so that
 * sharding, shuffling and batching move all three at once.
 *
 * Y is the target's element type: T for regression, std::int64_t for class labels
 * (ClassificationDataset<T>). Construction from xt::xtensor and from a vector of plain structs
 * lives in core/xtensor.hpp and core/records.hpp, so this header costs only Eigen.
 */

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn {

template <class T, class Y = T>
class Dataset;

template <class T>
using ClassificationDataset = Dataset<T, std::int64_t>;

/// One mini-batch: views into the rows [offset, offset + size) of a Dataset, no copies.
template <class T, class Y>
struct Batch {
  Eigen::Map<const Matrix<T>> features;
  std::optional<Eigen::Map<const Vector<Y>>> targets;
  std::optional<Eigen::Map<const Vector<T>>> sample_weights;
  index_t offset;

  [[nodiscard]] index_t size() const noexcept { return features.rows(); }
};

template <class T, class Y>
class Dataset {
 public:
  using value_type = T;
  using target_type = Y;

  Dataset() = default;

  explicit Dataset(Matrix<T> features) : features_(std::move(features)) {}

  Dataset(Matrix<T> features, Vector<Y> targets)
      : features_(std::move(features)), targets_(std::move(targets)), has_targets_(true) {
    check_rows("targets", targets_.size());
  }

  Dataset(Matrix<T> features, Vector<Y> targets, Vector<T> sample_weights)
      : Dataset(std::move(features), std::move(targets)) {
    check_rows("sample_weights", sample_weights.size());
    sample_weights_ = std::move(sample_weights);
    has_sample_weights_ = true;
  }

  /// Number of samples (rows).
  [[nodiscard]] index_t size() const noexcept { return features_.rows(); }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  [[nodiscard]] index_t n_features() const noexcept { return features_.cols(); }

  [[nodiscard]] const Matrix<T>& features() const noexcept { return features_; }

  [[nodiscard]] bool has_targets() const noexcept { return has_targets_; }
  [[nodiscard]] const Vector<Y>& targets() const {
    if (!has_targets_) throw invalid_argument("Dataset::targets: this dataset has no targets");
    return targets_;
  }

  [[nodiscard]] bool has_sample_weights() const noexcept { return has_sample_weights_; }
  [[nodiscard]] const Vector<T>& sample_weights() const {
    if (!has_sample_weights_) {
      throw invalid_argument("Dataset::sample_weights: this dataset has no sample weights");
    }
    return sample_weights_;
  }

  /// Column names, when the data came with them (a CSV header, struct field names); may be empty.
  [[nodiscard]] const std::vector<std::string>& feature_names() const noexcept {
    return feature_names_;
  }
  Dataset& set_feature_names(std::vector<std::string> names) {
    if (!names.empty() && static_cast<index_t>(names.size()) != n_features()) {
      throw shape_error("Dataset::set_feature_names: expected " + std::to_string(n_features()) +
                        " names (one per feature), found " + std::to_string(names.size()));
    }
    feature_names_ = std::move(names);
    return *this;
  }

  /// The rows at `indices`, in that order (repeats allowed).
  [[nodiscard]] Dataset subset(const std::vector<index_t>& indices) const {
    Dataset out;
    const auto n = static_cast<index_t>(indices.size());
    out.features_.resize(n, n_features());
    out.has_targets_ = has_targets_;
    out.has_sample_weights_ = has_sample_weights_;
    if (has_targets_) out.targets_.resize(n);
    if (has_sample_weights_) out.sample_weights_.resize(n);
    for (std::size_t i = 0; i < indices.size(); ++i) {
      const index_t src = indices[i];
      if (src < 0 || src >= size()) {
        throw invalid_argument("Dataset::subset: index " + std::to_string(src) +
                               " is out of range for a dataset of " + std::to_string(size()) +
                               " samples");
      }
      const auto dst = static_cast<index_t>(i);
      out.features_.row(dst) = features_.row(src);
      if (has_targets_) out.targets_(dst) = targets_(src);
      if (has_sample_weights_) out.sample_weights_(dst) = sample_weights_(src);
    }
    out.feature_names_ = feature_names_;
    return out;
  }

  /// The contiguous rows [begin, end).
  [[nodiscard]] Dataset rows(index_t begin, index_t end) const {
    if (begin < 0 || end < begin || end > size()) {
      throw invalid_argument("Dataset::rows: expected 0 <= begin <= end <= " +
                             std::to_string(size()) + ", found [" + std::to_string(begin) + ", " +
                             std::to_string(end) + ")");
    }
    std::vector<index_t> indices(static_cast<std::size_t>(end - begin));
    std::iota(indices.begin(), indices.end(), begin);
    return subset(indices);
  }

  /// Shard `rank` of `n_shards` contiguous, even-as-possible shards: the first size() % n_shards
  /// shards have one row more than the others. Concatenating the shards in rank order gives
  /// back this dataset, which is what distributed fits are tested against.
  [[nodiscard]] Dataset shard(int rank, int n_shards) const {
    if (n_shards < 1 || rank < 0 || rank >= n_shards) {
      throw invalid_argument("Dataset::shard: expected 0 <= rank < n_shards, found rank " +
                             std::to_string(rank) + " of " + std::to_string(n_shards));
    }
    const auto [begin, end] = shard_bounds(size(), rank, n_shards);
    return rows(begin, end);
  }

  /// The shard of this dataset that belongs to the calling rank of an execution policy. Asks
  /// only for rank() and size(), not the whole exec::ExecutionPolicy: core/ is the floor below
  /// exec/ and does not include it.
  template <class Exec>
    requires requires(const Exec& e) {
      { e.rank() } -> std::convertible_to<int>;
      { e.size() } -> std::convertible_to<int>;
    }
  [[nodiscard]] Dataset shard(const Exec& exec) const {
    return shard(exec.rank(), exec.size());
  }

  /// A copy with the rows in a random order drawn from `seed` (std::mt19937_64, so the order is
  /// the same on every platform and every rank).
  [[nodiscard]] Dataset shuffled(std::uint64_t seed) const {
    return subset(permutation(size(), seed));
  }

  /// Splits off the last `n_second` rows: {rows [0, size - n_second), rows [size - n_second, size)}.
  [[nodiscard]] std::pair<Dataset, Dataset> split_tail(index_t n_second) const {
    if (n_second < 0 || n_second > size()) {
      throw invalid_argument("Dataset::split_tail: expected 0 <= n_second <= " +
                             std::to_string(size()) + ", found " + std::to_string(n_second));
    }
    return {rows(0, size() - n_second), rows(size() - n_second, size())};
  }

  /// Number of mini-batches of `batch_size` (the last one may be smaller).
  [[nodiscard]] index_t n_batches(index_t batch_size) const {
    check_batch_size(batch_size);
    return (size() + batch_size - 1) / batch_size;
  }

  /// Mini-batch `i` of `batch_size` rows, as views (valid while this dataset lives unchanged).
  /// Shuffle first with shuffled(seed) for a random order of batches.
  [[nodiscard]] Batch<T, Y> batch(index_t i, index_t batch_size) const {
    const index_t count = n_batches(batch_size);
    if (i < 0 || i >= count) {
      throw invalid_argument("Dataset::batch: expected 0 <= i < " + std::to_string(count) +
                             ", found " + std::to_string(i));
    }
    const index_t begin = i * batch_size;
    const index_t rows = std::min(batch_size, size() - begin);
    Batch<T, Y> out{Eigen::Map<const Matrix<T>>(features_.data() + begin * n_features(), rows,
                                                n_features()),
                    std::nullopt, std::nullopt, begin};
    if (has_targets_) out.targets.emplace(targets_.data() + begin, rows);
    if (has_sample_weights_) out.sample_weights.emplace(sample_weights_.data() + begin, rows);
    return out;
  }

  /// [begin, end) of shard `rank` of `n_shards` over `n` rows.
  static std::pair<index_t, index_t> shard_bounds(index_t n, int rank, int n_shards) {
    const index_t base = n / n_shards;
    const index_t extra = n % n_shards;
    const index_t begin = rank * base + std::min<index_t>(rank, extra);
    return {begin, begin + base + (rank < extra ? 1 : 0)};
  }

  /// A permutation of 0..n-1 drawn from `seed` with a Fisher-Yates shuffle written out here,
  /// because std::shuffle's algorithm differs between standard libraries.
  static std::vector<index_t> permutation(index_t n, std::uint64_t seed) {
    std::vector<index_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), index_t{0});
    std::mt19937_64 engine(seed);
    for (index_t i = n - 1; i > 0; --i) {
      // Lemire-free modulo draw: the bias is below 2^-40 for any n a dataset can have.
      const auto j = static_cast<index_t>(engine() % static_cast<std::uint64_t>(i + 1));
      std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
    }
    return order;
  }

 private:
  void check_rows(const char* what, index_t found) const {
    if (found != size()) {
      throw shape_error(std::string("Dataset: expected ") + what + " to have " +
                        std::to_string(size()) + " entries (one per row of the features), found " +
                        std::to_string(found));
    }
  }
  static void check_batch_size(index_t batch_size) {
    if (batch_size < 1) {
      throw invalid_argument("Dataset: expected batch_size >= 1, found " +
                             std::to_string(batch_size));
    }
  }

  Matrix<T> features_;
  // Plain vectors and flags rather than std::optional<Vector>: GCC 12 reports false
  // "may be used uninitialized" warnings through optional Eigen objects.
  Vector<Y> targets_;
  Vector<T> sample_weights_;
  bool has_targets_ = false;
  bool has_sample_weights_ = false;
  std::vector<std::string> feature_names_;
};

}  // namespace onelearn
