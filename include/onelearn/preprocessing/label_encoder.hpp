#pragma once
/**
 * \class onelearn::preprocessing::LabelEncoder
 * \brief Maps labels to 0..k-1, as scikit-learn's LabelEncoder.
 * \ingroup estimators
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/preprocessing/label_encoder.hpp>
 *
 * onelearn::preprocessing::LabelEncoder<> encoder;        // labels are onelearn::Labels (int64)
 * onelearn::Labels codes = encoder.fit_transform(y);      // 0..k-1, in the order of classes()
 * onelearn::Labels back = encoder.inverse_transform(codes);  // y again
 *
 * onelearn::preprocessing::LabelEncoder<double> real_valued;  // labels as Vector<double>
 *
 * // Text labels (a text column of io::read_table): codes in the sorted order of the strings.
 * onelearn::preprocessing::LabelEncoder<std::string> names;
 * const std::vector<std::string> pets{"dog", "cat", "dog"};
 * onelearn::Labels c = names.fit_transform(pets);               // 1, 0, 1
 * std::vector<std::string> again = names.inverse_transform(c);  // pets again
 *
 * // Data-parallel: each rank passes its own labels (some ranks may lack some classes, or hold
 * // none); every rank ends with the same classes().
 * onelearn::exec::mpi policy{comm};  // the application's communicator
 * onelearn::preprocessing::LabelEncoder<std::int64_t, onelearn::exec::mpi> dist({}, policy);
 * dist.fit(my_y);
 * \endcode
 *
 * preprocessing::LabelEncoder: maps the distinct labels, sorted ascending, to 0..k-1, as
 * scikit-learn's LabelEncoder (1.2.1). T is the label's type: std::int64_t (the default,
 * onelearn::Labels), float or double, with labels in a Vector<T>; or std::string, with labels
 * in a std::vector<std::string> (any contiguous range: fit takes a std::span), classes() and
 * inverse_transform's result then std::vector<std::string>. Strings sort by their bytes, which
 * for UTF-8 is the code-point order Python sorts str in, so the codes are scikit-learn's. Codes
 * are always onelearn::Labels.
 *
 * Method: each rank sorts its distinct labels; one all-gather of them (strings as
 * length-prefixed bytes), then a sort and unique, gives the classes on every rank. transform is
 * a binary search per label.
 *
 * \par Parameters (LabelEncoderParams)
 * None (scikit-learn's LabelEncoder has none).
 *
 * \par Attributes (after fit)
 * - `classes()` (Vector<T>, or std::vector<std::string>, k): the distinct labels seen in fit on
 *   any rank, ascending.
 * - `n_classes()`.
 *
 * \par Differences from scikit-learn
 * - NaN and infinite labels are rejected. String labels are std::string only (not mixed with
 *   numbers, as a Python object array may be); the empty string is a label like any other.
 * - `n_features_in()` is 1 after fit (scikit-learn's LabelEncoder has no n_features_in_).
 *
 * Errors: `not_fitted_error` before fit; `invalid_argument` for no labels on any rank, a
 * non-finite label, a label at transform time that fit did not see (the message names it) and a
 * code outside 0..k-1 at inverse_transform. Under exec::mpi every error in fit is raised on
 * every rank.
 */

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/preprocessing/detail/text_categories.hpp"

namespace onelearn::preprocessing {

struct LabelEncoderParams {
  static constexpr std::array<std::string_view, 0> names{};
};

template <class T = std::int64_t, exec::ExecutionPolicy Exec = exec::local>
class LabelEncoder : public WithParams<LabelEncoder<T, Exec>, LabelEncoderParams> {
  static_assert(
      exec::collective_value<T>,
      "onelearn::LabelEncoder: labels must be std::int64_t, float, double or std::string");

 public:
  using value_type = T;
  using Params = LabelEncoderParams;
  using LabelVector = Vector<T>;
  using LabelVectorRef = Eigen::Ref<const LabelVector>;

  explicit LabelEncoder(const Params& params = {}, Exec exec = {})
      : WithParams<LabelEncoder, Params>(params), exec_(std::move(exec)) {}

  LabelEncoder& fit(const LabelVectorRef& y) {
    constexpr std::string_view where = "LabelEncoder.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    exec_.propagate_errors([&] { validation::check_finite(where, "y", y); });
    std::vector<T> mine(y.begin(), y.end());
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    std::vector<T> all = exec_.allgatherv(std::span<const T>(mine));
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    if (all.empty()) {  // the same on every rank: all see the same gathered labels
      throw invalid_argument(std::string(where) + ": expected at least one label, found 0");
    }
    classes_ = Eigen::Map<const LabelVector>(all.data(), static_cast<index_t>(all.size()));
    fitted_ = true;
    return *this;
  }

  /// The position of each label in classes().
  [[nodiscard]] Labels transform(const LabelVectorRef& y) const {
    constexpr std::string_view where = "LabelEncoder.transform";
    validation::check_fitted(where, fitted_);
    Labels codes(y.size());
    for (index_t i = 0; i < y.size(); ++i) {
      const auto* at = std::lower_bound(classes_.data(), classes_.data() + classes_.size(), y(i));
      if (at == classes_.data() + classes_.size() || *at != y(i)) {
        throw invalid_argument(std::string(where) + ": found unseen label " + label_text(y(i)) +
                               " at row " + std::to_string(i) + "; expected one of the " +
                               std::to_string(classes_.size()) + " labels seen in fit");
      }
      codes(i) = at - classes_.data();
    }
    return codes;
  }

  /// fit(y) then transform(y). Collective under exec::mpi, like fit.
  Labels fit_transform(const LabelVectorRef& y) { return fit(y).transform(y); }

  /// classes()(code) for each code.
  [[nodiscard]] LabelVector inverse_transform(const LabelsRef& codes) const {
    constexpr std::string_view where = "LabelEncoder.inverse_transform";
    validation::check_fitted(where, fitted_);
    LabelVector out(codes.size());
    for (index_t i = 0; i < codes.size(); ++i) {
      if (codes(i) < 0 || codes(i) >= classes_.size()) {
        throw invalid_argument(std::string(where) + ": expected codes in [0, " +
                               std::to_string(classes_.size() - 1) + "], found " +
                               std::to_string(codes(i)) + " at row " + std::to_string(i));
      }
      out(i) = classes_(codes(i));
    }
    return out;
  }

  [[nodiscard]] const LabelVector& classes() const {
    return validation::fitted_attribute("LabelEncoder.classes", fitted_, classes_);
  }
  [[nodiscard]] index_t n_classes() const { return classes().size(); }
  [[nodiscard]] index_t n_features_in() const {
    validation::check_fitted("LabelEncoder.n_features_in", fitted_);
    return 1;
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  static std::string label_text(T label) {
    if constexpr (std::is_integral_v<T>) {
      return std::to_string(label);
    } else {
      std::ostringstream os;
      os << label;
      return os.str();
    }
  }

  Exec exec_;
  LabelVector classes_;
  bool fitted_ = false;
};

/// LabelEncoder over text labels: the same interface with std::string labels (see the top).
template <exec::ExecutionPolicy Exec>
class LabelEncoder<std::string, Exec>
    : public WithParams<LabelEncoder<std::string, Exec>, LabelEncoderParams> {
 public:
  using value_type = std::string;
  using Params = LabelEncoderParams;
  using LabelVector = std::vector<std::string>;
  using LabelVectorRef = std::span<const std::string>;

  explicit LabelEncoder(const Params& params = {}, Exec exec = {})
      : WithParams<LabelEncoder, Params>(params), exec_(std::move(exec)) {}

  LabelEncoder& fit(LabelVectorRef y) {
    constexpr std::string_view where = "LabelEncoder.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    LabelVector all = std::move(
        detail::gather_text_categories(exec_, {LabelVector(y.begin(), y.end())}).front());
    if (all.empty()) {  // the same on every rank: all see the same gathered labels
      throw invalid_argument(std::string(where) + ": expected at least one label, found 0");
    }
    classes_ = std::move(all);
    fitted_ = true;
    return *this;
  }

  /// The position of each label in classes().
  [[nodiscard]] Labels transform(LabelVectorRef y) const {
    constexpr std::string_view where = "LabelEncoder.transform";
    validation::check_fitted(where, fitted_);
    Labels codes(static_cast<index_t>(y.size()));
    for (std::size_t i = 0; i < y.size(); ++i) {
      const auto at = std::lower_bound(classes_.begin(), classes_.end(), y[i]);
      if (at == classes_.end() || *at != y[i]) {
        throw invalid_argument(std::string(where) + ": found unseen label '" + y[i] + "' at row " +
                               std::to_string(i) + "; expected one of the " +
                               std::to_string(classes_.size()) + " labels seen in fit");
      }
      codes(static_cast<index_t>(i)) = at - classes_.begin();
    }
    return codes;
  }

  /// fit(y) then transform(y). Collective under exec::mpi, like fit.
  Labels fit_transform(LabelVectorRef y) { return fit(y).transform(y); }

  /// classes()[code] for each code.
  [[nodiscard]] LabelVector inverse_transform(const LabelsRef& codes) const {
    constexpr std::string_view where = "LabelEncoder.inverse_transform";
    validation::check_fitted(where, fitted_);
    LabelVector out;
    out.reserve(static_cast<std::size_t>(codes.size()));
    const auto k = static_cast<std::int64_t>(classes_.size());
    for (index_t i = 0; i < codes.size(); ++i) {
      if (codes(i) < 0 || codes(i) >= k) {
        throw invalid_argument(std::string(where) + ": expected codes in [0, " +
                               std::to_string(k - 1) + "], found " + std::to_string(codes(i)) +
                               " at row " + std::to_string(i));
      }
      out.push_back(classes_[static_cast<std::size_t>(codes(i))]);
    }
    return out;
  }

  [[nodiscard]] const LabelVector& classes() const {
    return validation::fitted_attribute("LabelEncoder.classes", fitted_, classes_);
  }
  [[nodiscard]] index_t n_classes() const { return static_cast<index_t>(classes().size()); }
  [[nodiscard]] index_t n_features_in() const {
    validation::check_fitted("LabelEncoder.n_features_in", fitted_);
    return 1;
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  Exec exec_;
  LabelVector classes_;
  bool fitted_ = false;
};

}  // namespace onelearn::preprocessing
