#pragma once
/**
 * \class onelearn::preprocessing::OneHotEncoder
 * \brief Encodes categorical columns as indicator columns, as scikit-learn's OneHotEncoder.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/preprocessing/one_hot_encoder.hpp>
 *
 * // Two categorical columns, coded as numbers (any finite values; integer codes are typical).
 * onelearn::Matrix<double> X(4, 2);
 * X << 3, 10,
 *      1, 20,
 *      3, 10,
 *      2, 10;
 * onelearn::preprocessing::OneHotEncoder<double> encoder({.handle_unknown = "ignore"});
 * onelearn::Matrix<double> Z = encoder.fit_transform(X);  // 4 x (3 + 2): columns 1,2,3 | 10,20
 * const auto& codes = encoder.categories()[0];           // {1, 2, 3}
 * onelearn::Matrix<double> back = encoder.inverse_transform(Z);  // X again
 *
 * // Text columns (io::read_table's Table::text), one std::vector<std::string> per feature.
 * onelearn::preprocessing::OneHotEncoder<std::string> colours;
 * const std::vector<std::vector<std::string>> T{{"red", "blue", "red"}, {"S", "M", "S"}};
 * onelearn::Matrix<double> C = colours.fit_transform(T);  // 3 x (2 + 2): blue,red | M,S
 * const auto& names = colours.categories()[0];            // {"blue", "red"}
 *
 * // Data-parallel: each rank passes its own rows; categories are gathered from every rank.
 * onelearn::exec::mpi policy{comm};  // the application's communicator
 * onelearn::preprocessing::OneHotEncoder<double, onelearn::exec::mpi> dist({}, policy);
 * dist.fit(my_X);
 * \endcode
 *
 * preprocessing::OneHotEncoder: encodes each column's categories as a block of 0/1 indicator
 * columns, as scikit-learn's OneHotEncoder (1.2.1) with categories="auto", drop=None and
 * sparse_output=False. The blocks follow the column order; within a block the categories are
 * ascending (scikit-learn's categories_ and output order).
 *
 * Input type: a Matrix<T> whose entries are category codes, not an integer matrix, or, with
 * T = std::string, text columns: a std::vector<std::string> per feature, all of one length,
 * as io::read_table's Table::text returns them. The text encoder's categories are the sorted
 * distinct strings of each column (sorted by bytes: for UTF-8, the code-point order Python sorts
 * str in, so the blocks are scikit-learn's), its output a Matrix<double>, and inverse_transform
 * returns a std::vector<std::optional<std::string>> per feature (std::nullopt where scikit-learn
 * gives None). Codes in a Matrix<T> make OneHotEncoder a Transformer like every other one here
 * (transform(Matrix<T>) -> Matrix<T>), so it chains after other transformers and in a Pipeline
 * with no conversion, and a .npy of codes loads as it is; integer codes are exact in float up to 2^24 and in double up to 2^53.
 * Categories are compared exactly, so codes computed by float arithmetic should be rounded
 * first. As in scikit-learn, any finite value is a category (not only integers).
 *
 * Method: each rank sorts the values of each column and keeps the distinct ones; one all-gather
 * of these (the traffic is the number of distinct values, not of rows; strings as
 * length-prefixed bytes), merged and sorted, gives the same categories on every rank. transform
 * is a binary search per entry.
 *
 * \par Parameters (OneHotEncoderParams)
 * - `handle_unknown` (string, default "error"): what transform does with a category fit did
 *   not see: "error" throws, "ignore" encodes it as a block of zeros.
 *
 * \par Attributes (after fit)
 * - `categories()` (std::vector<Vector<T>>, one per feature): the sorted categories.
 * - `n_output_features()`: the total number of categories (columns of transform's output).
 * - `n_features_in()`.
 *
 * \par Differences from scikit-learn
 * - No `categories` list given by the user, no `drop`, no infrequent-category grouping
 *   (min_frequency, max_categories), no sparse output; output is dense (T, or double for text).
 *   NaN is rejected, not a category. Numbers and strings are not mixed in one encoder (a Python
 *   object array may mix them): encode numeric and text columns with one encoder each.
 * - inverse_transform returns NaN where scikit-learn returns None (an all-zero block under
 *   handle_unknown = "ignore").
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for X with other features than in fit
 * (or a Z at inverse_transform without n_output_features() columns), text columns of different
 * lengths, and ranks that disagree on the number of features; `invalid_argument` for NaN/Inf, no samples, an unknown handle_unknown,
 * and, with handle_unknown = "error", a category at transform time that fit did not see (the
 * message names the column, the value and the row). Under exec::mpi every error in fit is
 * raised on every rank.
 */

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/preprocessing/detail/checks.hpp"
#include "onelearn/preprocessing/detail/text_categories.hpp"
#include "onelearn/preprocessing/detail/value_counts.hpp"

namespace onelearn::preprocessing {

struct OneHotEncoderParams {
  std::string handle_unknown = "error";  ///< "error" or "ignore"

  static constexpr std::array<std::string_view, 1> names{"handle_unknown"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local>
class OneHotEncoder : public WithParams<OneHotEncoder<T, Exec>, OneHotEncoderParams> {
 public:
  using value_type = T;
  using Params = OneHotEncoderParams;

  explicit OneHotEncoder(const Params& params = {}, Exec exec = {})
      : WithParams<OneHotEncoder, Params>(params), exec_(std::move(exec)) {}

  OneHotEncoder& fit(const MatrixRef<T>& X) {
    constexpr std::string_view where = "OneHotEncoder.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    detail::check_fit_input<T>(where, exec_, X, [&] { check_handle_unknown(where); });
    const auto merged = detail::allgather_value_counts(exec_, detail::local_value_counts<T>(X));
    // Every value is finite, so every row adds one category count to each column: the counts of
    // column 0 sum to the number of rows over all ranks (0 if there are no rows or no columns).
    std::int64_t n = 0;
    if (!merged.empty()) {
      for (std::int64_t c : merged.front().counts) n += c;
    }
    detail::check_has_samples(where, n, X.cols());

    categories_.clear();
    offsets_.assign(1, 0);
    for (const auto& column : merged) {
      Vector<T> categories(static_cast<index_t>(column.values.size()));
      for (index_t k = 0; k < categories.size(); ++k) {
        categories(k) = static_cast<T>(column.values[static_cast<std::size_t>(k)]);
      }
      categories_.push_back(std::move(categories));
      offsets_.push_back(offsets_.back() + categories_.back().size());
    }
    fitted_ = true;
    return *this;
  }

  /// n x n_output_features() of 0 and 1: row i has a 1 in block j at the position of X(i, j) in
  /// categories()[j] (no 1 in that block for an unknown category under "ignore").
  [[nodiscard]] Matrix<T> transform(const MatrixRef<T>& X) const {
    constexpr std::string_view where = "OneHotEncoder.transform";
    detail::check_transform_input<T>(where, fitted_, n_features(), X);
    check_handle_unknown(where);
    const bool ignore = this->params_.handle_unknown == "ignore";
    Matrix<T> out = Matrix<T>::Zero(X.rows(), offsets_.back());
    for (index_t i = 0; i < X.rows(); ++i) {
      for (index_t j = 0; j < X.cols(); ++j) {
        const Vector<T>& categories = categories_[static_cast<std::size_t>(j)];
        const T* begin = categories.data();
        const T* end = begin + categories.size();
        const T* at = std::lower_bound(begin, end, X(i, j));
        if (at != end && *at == X(i, j)) {
          out(i, offsets_[static_cast<std::size_t>(j)] + (at - begin)) = T(1);
        } else if (!ignore) {
          std::ostringstream value;
          value << X(i, j);
          throw invalid_argument(std::string(where) + ": found unknown category " + value.str() +
                                 " in column " + std::to_string(j) + " at row " +
                                 std::to_string(i) + "; expected one of the " +
                                 std::to_string(categories.size()) +
                                 " categories seen in fit (or handle_unknown = \"ignore\")");
        }
      }
    }
    return out;
  }

  Matrix<T> fit_transform(const MatrixRef<T>& X) { return fit(X).transform(X); }

  /// The category of each block's largest entry (scikit-learn's argmax; the first on ties); NaN
  /// for a block that sums to 0 under handle_unknown = "ignore" (an ignored unknown category).
  [[nodiscard]] Matrix<T> inverse_transform(const MatrixRef<T>& Z) const {
    constexpr std::string_view where = "OneHotEncoder.inverse_transform";
    validation::check_fitted(where, fitted_);
    if (Z.cols() != offsets_.back()) {
      throw shape_error(std::string(where) + ": expected " + std::to_string(offsets_.back()) +
                        " columns (one per category seen in fit), found " +
                        std::to_string(Z.cols()));
    }
    validation::check_finite(where, "X", Z);
    const bool ignore = this->params_.handle_unknown == "ignore";
    Matrix<T> out(Z.rows(), n_features());
    for (index_t j = 0; j < n_features(); ++j) {
      const index_t first = offsets_[static_cast<std::size_t>(j)];
      const Vector<T>& categories = categories_[static_cast<std::size_t>(j)];
      for (index_t i = 0; i < Z.rows(); ++i) {
        const auto block = Z.row(i).segment(first, categories.size());
        index_t best = 0;
        block.maxCoeff(&best);
        out(i, j) =
            ignore && block.sum() == T(0) ? std::numeric_limits<T>::quiet_NaN() : categories(best);
      }
    }
    return out;
  }

  /// The sorted categories of each feature (scikit-learn's categories_).
  [[nodiscard]] const std::vector<Vector<T>>& categories() const {
    return validation::fitted_attribute("OneHotEncoder.categories", fitted_, categories_);
  }
  [[nodiscard]] index_t n_output_features() const {
    validation::check_fitted("OneHotEncoder.n_output_features", fitted_);
    return offsets_.back();
  }
  [[nodiscard]] index_t n_features_in() const {
    validation::check_fitted("OneHotEncoder.n_features_in", fitted_);
    return n_features();
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  [[nodiscard]] index_t n_features() const { return static_cast<index_t>(categories_.size()); }

  void check_handle_unknown(std::string_view where) const {
    detail::check_choice(where, "handle_unknown", this->params_.handle_unknown,
                         {"error", "ignore"});
  }

  Exec exec_;
  std::vector<Vector<T>> categories_;
  std::vector<index_t> offsets_{0};  // first output column of each feature's block, then the total
  bool fitted_ = false;
};

/// OneHotEncoder over text columns (see the top): categories are the sorted distinct strings of
/// each column, and the output is the same 0/1 matrix, in double.
template <exec::ExecutionPolicy Exec>
class OneHotEncoder<std::string, Exec>
    : public WithParams<OneHotEncoder<std::string, Exec>, OneHotEncoderParams> {
 public:
  using value_type = std::string;
  using Params = OneHotEncoderParams;
  /// One std::vector<std::string> per feature, all of the same length (the rows).
  using TextColumns = std::vector<std::vector<std::string>>;

  explicit OneHotEncoder(const Params& params = {}, Exec exec = {})
      : WithParams<OneHotEncoder, Params>(params), exec_(std::move(exec)) {}

  OneHotEncoder& fit(const TextColumns& X) {
    constexpr std::string_view where = "OneHotEncoder.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    index_t rows = 0;
    exec_.propagate_errors([&] {
      detail::check_choice(where, "handle_unknown", this->params_.handle_unknown,
                           {"error", "ignore"});
      rows = check_rows(where, X);
    });
    const std::array<std::int64_t, 1> n_features{static_cast<std::int64_t>(X.size())};
    exec_.check_same_shape("the number of features of X", n_features);
    detail::check_has_samples(where, detail::total_rows(exec_, rows),
                              static_cast<index_t>(X.size()));
    categories_ = detail::gather_text_categories(exec_, TextColumns(X));
    offsets_.assign(1, 0);
    for (const auto& categories : categories_) {
      offsets_.push_back(offsets_.back() + static_cast<index_t>(categories.size()));
    }
    fitted_ = true;
    return *this;
  }

  /// n x n_output_features() of 0 and 1: row i has a 1 in block j at the position of X[j][i] in
  /// categories()[j] (no 1 in that block for an unknown category under "ignore").
  [[nodiscard]] Matrix<double> transform(const TextColumns& X) const {
    constexpr std::string_view where = "OneHotEncoder.transform";
    validation::check_fitted(where, fitted_);
    validation::check_n_features(where, n_features(), static_cast<index_t>(X.size()));
    const index_t rows = check_rows(where, X);
    const bool ignore = this->params_.handle_unknown == "ignore";
    Matrix<double> out = Matrix<double>::Zero(rows, offsets_.back());
    for (std::size_t j = 0; j < X.size(); ++j) {
      const std::vector<std::string>& categories = categories_[j];
      for (index_t i = 0; i < rows; ++i) {
        const std::string& value = X[j][static_cast<std::size_t>(i)];
        const auto at = std::lower_bound(categories.begin(), categories.end(), value);
        if (at != categories.end() && *at == value) {
          out(i, offsets_[j] + (at - categories.begin())) = 1.0;
        } else if (!ignore) {
          throw invalid_argument(std::string(where) + ": found unknown category '" + value +
                                 "' in column " + std::to_string(j) + " at row " +
                                 std::to_string(i) + "; expected one of the " +
                                 std::to_string(categories.size()) +
                                 " categories seen in fit (or handle_unknown = \"ignore\")");
        }
      }
    }
    return out;
  }

  /// fit(X) then transform(X). Collective under exec::mpi, like fit.
  Matrix<double> fit_transform(const TextColumns& X) { return fit(X).transform(X); }

  /// The category of each block's largest entry (the first on ties), per feature; std::nullopt
  /// (scikit-learn's None) for a block that sums to 0 under handle_unknown = "ignore".
  [[nodiscard]] std::vector<std::vector<std::optional<std::string>>> inverse_transform(
      const MatrixRef<double>& Z) const {
    constexpr std::string_view where = "OneHotEncoder.inverse_transform";
    validation::check_fitted(where, fitted_);
    if (Z.cols() != offsets_.back()) {
      throw shape_error(std::string(where) + ": expected " + std::to_string(offsets_.back()) +
                        " columns (one per category seen in fit), found " +
                        std::to_string(Z.cols()));
    }
    validation::check_finite(where, "X", Z);
    const bool ignore = this->params_.handle_unknown == "ignore";
    std::vector<std::vector<std::optional<std::string>>> out(categories_.size());
    for (std::size_t j = 0; j < categories_.size(); ++j) {
      const auto size = static_cast<index_t>(categories_[j].size());
      out[j].reserve(static_cast<std::size_t>(Z.rows()));
      for (index_t i = 0; i < Z.rows(); ++i) {
        const auto block = Z.row(i).segment(offsets_[j], size);
        index_t best = 0;
        block.maxCoeff(&best);
        if (ignore && block.sum() == 0.0) {
          out[j].emplace_back(std::nullopt);
        } else {
          out[j].emplace_back(categories_[j][static_cast<std::size_t>(best)]);
        }
      }
    }
    return out;
  }

  /// The sorted categories of each feature (scikit-learn's categories_).
  [[nodiscard]] const TextColumns& categories() const {
    return validation::fitted_attribute("OneHotEncoder.categories", fitted_, categories_);
  }
  [[nodiscard]] index_t n_output_features() const {
    validation::check_fitted("OneHotEncoder.n_output_features", fitted_);
    return offsets_.back();
  }
  [[nodiscard]] index_t n_features_in() const {
    validation::check_fitted("OneHotEncoder.n_features_in", fitted_);
    return n_features();
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  [[nodiscard]] index_t n_features() const { return static_cast<index_t>(categories_.size()); }

  /// The common length of the columns; shape_error if they differ.
  static index_t check_rows(std::string_view where, const TextColumns& X) {
    const std::size_t rows = X.empty() ? 0 : X.front().size();
    for (std::size_t j = 1; j < X.size(); ++j) {
      if (X[j].size() != rows) {
        throw shape_error(std::string(where) + ": expected columns of one length (the rows), " +
                          "found " + std::to_string(rows) + " in column 0 and " +
                          std::to_string(X[j].size()) + " in column " + std::to_string(j));
      }
    }
    return static_cast<index_t>(rows);
  }

  Exec exec_;
  TextColumns categories_;
  std::vector<index_t> offsets_{0};  // first output column of each feature's block, then the total
  bool fitted_ = false;
};

}  // namespace onelearn::preprocessing
