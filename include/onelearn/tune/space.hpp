#pragma once
/**
 * \class onelearn::tune::Space
 * \brief The hyper-parameters a search draws, each with a distribution.
 * \ingroup tuning
 *
 * \code
 * #include <onelearn/tune/space.hpp>
 *
 * onelearn::tune::Space space{
 *     {"alpha", onelearn::tune::log_uniform{1e-4, 1e2}},     // log(alpha) uniform
 *     {"l1_ratio", onelearn::tune::uniform{0.0, 1.0}},
 *     {"max_iter", onelearn::tune::integer{100, 1000}},       // both ends included
 *     {"solver", onelearn::tune::choice{{"lbfgs", "saga"}}},  // also the grid values
 * };
 * \endcode
 *
 * tune::Space: the hyper-parameters a search draws, in order, each with a distribution. Values
 * are onelearn::ParamValue (bool, std::int64_t, double, std::string), the type estimators'
 * set_params takes, so a trial's parameters can be handed to an estimator unchanged.
 *
 * Distributions:
 * - `uniform{low, high}`: a double in [low, high).
 * - `log_uniform{low, high}`: a double whose logarithm is uniform in [log low, log high)
 *   (0 < low < high); for scales such as a penalty strength or a learning rate.
 * - `integer{low, high}`: an std::int64_t in [low, high], both ends included (Optuna's
 *   suggest_int; scikit-learn's randint and Ray's tune.randint exclude `high`).
 * - `choice{{v1, v2, ...}}`: one of the listed values, each equally likely. A grid search
 *   enumerates a choice's values; they are the "grid values" (Ray's tune.grid_search).
 *
 * Method: random draws come from std::mt19937_64, turned into doubles by taking the top 53 bits
 * (not std::uniform_real_distribution, whose algorithm the standard leaves to each library), so
 * a seed gives the same values with every standard library and on every MPI rank (log_uniform
 * values, which go through std::exp and std::log, up to the last bit of the math library).
 *
 * Errors (`validate`, called by every search): `invalid_argument` for an empty space, a
 * parameter with an empty or repeated name, bounds that are NaN/Inf or not low < high
 * (low <= high for integer), log_uniform with low <= 0, and a choice with no values. Each
 * message names the parameter.
 */

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"

namespace onelearn::tune {

/// A trial's hyper-parameters as (name, value), in the order of the search space.
using ParamList = std::vector<std::pair<std::string, ParamValue>>;

/// A double in [low, high).
struct uniform {
  double low = 0.0;
  double high = 1.0;
};

/// A double whose logarithm is uniform in [log low, log high); 0 < low < high.
struct log_uniform {
  double low = 1e-3;
  double high = 1.0;
};

/// An integer in [low, high], both ends included.
struct integer {
  std::int64_t low = 0;
  std::int64_t high = 1;
};

/// One of `values`, each equally likely; a grid search runs every one.
struct choice {
  std::vector<ParamValue> values;
};

using Distribution = std::variant<uniform, log_uniform, integer, choice>;

/// One named hyper-parameter of a search space.
struct Dimension {
  std::string name;
  Distribution distribution;
};

class Space {
 public:
  Space() = default;
  Space(std::initializer_list<Dimension> dimensions) : dimensions_(dimensions) {}

  /// Appends a parameter; returns *this so calls chain.
  Space& add(std::string name, Distribution distribution) {
    dimensions_.push_back({std::move(name), std::move(distribution)});
    return *this;
  }

  [[nodiscard]] const std::vector<Dimension>& dimensions() const noexcept { return dimensions_; }
  [[nodiscard]] std::size_t size() const noexcept { return dimensions_.size(); }
  [[nodiscard]] bool empty() const noexcept { return dimensions_.empty(); }

  /// Throws invalid_argument, naming `where` and the parameter, unless the space is usable.
  void validate(std::string_view where) const {
    const std::string at(where);
    if (dimensions_.empty()) {
      throw invalid_argument(at + ": expected a search space with at least one parameter, found "
                                  "an empty space");
    }
    for (std::size_t i = 0; i < dimensions_.size(); ++i) {
      const Dimension& d = dimensions_[i];
      if (d.name.empty()) {
        throw invalid_argument(at + ": expected every parameter to have a name, found an empty "
                                    "name at position " + std::to_string(i));
      }
      for (std::size_t j = 0; j < i; ++j) {
        if (dimensions_[j].name == d.name) {
          throw invalid_argument(at + ": expected distinct parameter names, found '" + d.name +
                                 "' twice");
        }
      }
      const std::string param = at + ": parameter '" + d.name + "': ";
      std::visit(
          [&](const auto& dist) {
            using D = std::decay_t<decltype(dist)>;
            if constexpr (std::is_same_v<D, uniform> || std::is_same_v<D, log_uniform>) {
              if (!std::isfinite(dist.low) || !std::isfinite(dist.high) || !(dist.low < dist.high)) {
                throw invalid_argument(param + "expected finite bounds with low < high, found low=" +
                                       std::to_string(dist.low) + ", high=" +
                                       std::to_string(dist.high));
              }
              if (std::is_same_v<D, log_uniform> && !(dist.low > 0.0)) {
                throw invalid_argument(param + "expected log_uniform bounds > 0, found low=" +
                                       std::to_string(dist.low));
              }
            } else if constexpr (std::is_same_v<D, integer>) {
              if (dist.low > dist.high) {
                throw invalid_argument(param + "expected integer bounds with low <= high, found "
                                               "low=" + std::to_string(dist.low) + ", high=" +
                                       std::to_string(dist.high));
              }
            } else {
              if (dist.values.empty()) {
                throw invalid_argument(param + "expected a choice of at least one value, found "
                                               "none");
              }
            }
          },
          d.distribution);
    }
  }

 private:
  std::vector<Dimension> dimensions_;
};

namespace detail {

/// A double in [0, 1) from the top 53 bits of one draw: the same on every platform.
inline double uniform01(std::mt19937_64& engine) {
  return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

/// A standard normal draw (Box-Muller; one of the pair is discarded, to keep no state).
inline double standard_normal(std::mt19937_64& engine) {
  const double u1 = 1.0 - uniform01(engine);  // (0, 1]: log(u1) is finite
  const double u2 = uniform01(engine);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
}

/// An index in [0, n), n >= 1.
inline std::size_t uniform_index(std::mt19937_64& engine, std::size_t n) {
  const auto i = static_cast<std::size_t>(uniform01(engine) * static_cast<double>(n));
  return i < n ? i : n - 1;
}

/// An integer in [low, high].
inline std::int64_t uniform_integer(std::mt19937_64& engine, std::int64_t low, std::int64_t high) {
  const std::uint64_t span = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  auto offset = static_cast<std::uint64_t>(uniform01(engine) * (static_cast<double>(span) + 1.0));
  if (offset > span) offset = span;
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + offset);
}

/// Maps [low, high) onto itself, guarding the rounding of exp(log(high)) and similar.
inline double clamp_below(double x, double low, double high) {
  if (x < low) return low;
  if (x >= high) return std::nextafter(high, low);
  return x;
}

/// One value drawn from `distribution`.
inline ParamValue sample(const Distribution& distribution, std::mt19937_64& engine) {
  return std::visit(
      [&](const auto& dist) -> ParamValue {
        using D = std::decay_t<decltype(dist)>;
        if constexpr (std::is_same_v<D, uniform>) {
          return clamp_below(dist.low + uniform01(engine) * (dist.high - dist.low), dist.low,
                             dist.high);
        } else if constexpr (std::is_same_v<D, log_uniform>) {
          const double a = std::log(dist.low);
          const double b = std::log(dist.high);
          return clamp_below(std::exp(a + uniform01(engine) * (b - a)), dist.low, dist.high);
        } else if constexpr (std::is_same_v<D, integer>) {
          return uniform_integer(engine, dist.low, dist.high);
        } else {
          return dist.values[uniform_index(engine, dist.values.size())];
        }
      },
      distribution);
}

/// One configuration: a draw of every dimension, in order.
inline ParamList sample(const Space& space, std::mt19937_64& engine) {
  ParamList out;
  out.reserve(space.size());
  for (const Dimension& d : space.dimensions()) out.emplace_back(d.name, sample(d.distribution, engine));
  return out;
}

/// Number of values a grid search takes from `distribution`; throws for a continuous one.
inline std::uint64_t grid_extent(std::string_view where, const Dimension& d) {
  return std::visit(
      [&](const auto& dist) -> std::uint64_t {
        using D = std::decay_t<decltype(dist)>;
        if constexpr (std::is_same_v<D, integer>) {
          return static_cast<std::uint64_t>(dist.high) - static_cast<std::uint64_t>(dist.low) + 1;
        } else if constexpr (std::is_same_v<D, choice>) {
          return dist.values.size();
        } else {
          throw invalid_argument(std::string(where) + ": parameter '" + d.name +
                                 "': expected a choice or an integer range for a grid search, "
                                 "found a continuous distribution (uniform or log_uniform)");
        }
      },
      d.distribution);
}

/// Number of points of the grid (the product of the extents); throws past 2^63.
inline std::uint64_t grid_size(std::string_view where, const Space& space) {
  std::uint64_t total = 1;
  for (const Dimension& d : space.dimensions()) {
    const std::uint64_t extent = grid_extent(where, d);
    if (extent == 0 || total > (std::uint64_t{1} << 63) / extent) {
      throw invalid_argument(std::string(where) + ": expected a grid of at most 2^63 points, "
                                                  "found more (parameter '" + d.name + "')");
    }
    total *= extent;
  }
  return total;
}

/// Point `index` of the grid: the last parameter varies fastest (itertools.product order).
inline ParamList grid_point(const Space& space, std::uint64_t index) {
  const auto& dims = space.dimensions();
  ParamList out(dims.size());
  for (std::size_t k = dims.size(); k-- > 0;) {
    const std::uint64_t extent = grid_extent("grid", dims[k]);
    const std::uint64_t i = index % extent;
    index /= extent;
    out[k].first = dims[k].name;
    if (const auto* range = std::get_if<integer>(&dims[k].distribution)) {
      out[k].second = static_cast<std::int64_t>(static_cast<std::uint64_t>(range->low) + i);
    } else {
      out[k].second = std::get<choice>(dims[k].distribution).values[static_cast<std::size_t>(i)];
    }
  }
  return out;
}

}  // namespace detail

}  // namespace onelearn::tune
