#pragma once
/**
 * \file
 * \brief Datasets from a std::vector of plain structs, one struct per sample.
 * \ingroup core
 *
 * \code
 * #include <onelearn/core/records.hpp>
 *
 * struct Flower { double sepal_length, sepal_width, petal_length, petal_width; int species; };
 * std::vector<Flower> flowers{{5.1, 3.5, 1.4, 0.2, 0}, {7.0, 3.2, 4.7, 1.4, 1}};
 * auto iris = onelearn::from_records<double, std::int64_t>(flowers);  // target: the last field
 * auto named = onelearn::from_records<double, std::int64_t>(flowers, &Flower::species);
 * \endcode
 *
 * Datasets from a std::vector of plain structs, one struct per sample:
 * Boost.PFR walks the fields, so the struct needs no registration. If it declares
 * `static constexpr std::array<std::string_view, N> names` (the Params convention), those
 * become the feature names.
 */

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/pfr/core.hpp>

#include "onelearn/core/dataset.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"

namespace onelearn {

/// Pass as the target to build a Dataset of features only.
struct no_target_t {};
inline constexpr no_target_t no_target{};

namespace detail {

template <class Record>
consteval bool check_record() {
  static_assert(std::is_aggregate_v<Record>, "onelearn::from_records: a record must be an aggregate struct");
  constexpr bool all_numbers = []<std::size_t... I>(std::index_sequence<I...>) {
    return (std::is_arithmetic_v<boost::pfr::tuple_element_t<I, Record>> && ...);
  }(std::make_index_sequence<boost::pfr::tuple_size_v<Record>>{});
  static_assert(all_numbers, "onelearn::from_records: every field of a record must be a number");
  return true;
}

/// The index of the field `member` points to, found by address on a value-initialised record.
template <class Record, class Field>
std::size_t field_index(Field Record::*member) {
  const Record probe{};
  const void* target = &(probe.*member);
  std::optional<std::size_t> index;
  boost::pfr::for_each_field(probe, [&](const auto& field, std::size_t i) {
    if (static_cast<const void*>(&field) == target) index = i;
  });
  if (!index) throw invalid_argument("from_records: the target member is not a field of the record");
  return *index;
}

template <class T, class Y, class Record>
Dataset<T, Y> records_to_dataset(const std::vector<Record>& rows, std::optional<std::size_t> target) {
  static_assert(check_record<Record>());
  constexpr std::size_t n_fields = boost::pfr::tuple_size_v<Record>;
  const auto n_features = static_cast<index_t>(n_fields - (target ? 1 : 0));
  const auto n = static_cast<index_t>(rows.size());
  Matrix<T> X(n, n_features);
  Vector<Y> y(target ? n : 0);
  for (index_t r = 0; r < n; ++r) {
    index_t column = 0;
    boost::pfr::for_each_field(rows[static_cast<std::size_t>(r)], [&](const auto& field, std::size_t i) {
      if (target && i == *target) {
        y(r) = static_cast<Y>(field);
      } else {
        X(r, column++) = static_cast<T>(field);
      }
    });
  }
  Dataset<T, Y> out = target ? Dataset<T, Y>(std::move(X), std::move(y)) : Dataset<T, Y>(std::move(X));
  if constexpr (params::HasNames<Record>) {
    static_assert(Record::names.size() == n_fields, "onelearn::from_records: Record::names must name every field");
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n_fields; ++i) {
      if (!target || i != *target) names.emplace_back(Record::names[i]);
    }
    out.set_feature_names(std::move(names));
  }
  return out;
}

}  // namespace detail

/// Features from every field but the last; the last field is the target.
template <class T, class Y = T, class Record>
Dataset<T, Y> from_records(const std::vector<Record>& rows) {
  return detail::records_to_dataset<T, Y>(rows, boost::pfr::tuple_size_v<Record> - 1);
}

/// Features from every field but `target`, which is the target.
template <class T, class Y = T, class Record, class Field>
Dataset<T, Y> from_records(const std::vector<Record>& rows, Field Record::*target) {
  return detail::records_to_dataset<T, Y>(rows, detail::field_index(target));
}

/// Features from every field; no target.
template <class T, class Record>
Dataset<T> from_records(const std::vector<Record>& rows, no_target_t) {
  return detail::records_to_dataset<T, T>(rows, std::nullopt);
}

}  // namespace onelearn
