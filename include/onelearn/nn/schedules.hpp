#pragma once
/**
 * \file
 * \brief Learning-rate schedules, as Keras's LearningRateSchedule.
 * \ingroup nn
 *
 * <!-- example-context: nn -->
 * \code
 * #include <onelearn/nn/schedules.hpp>
 *
 * namespace nn = onelearn::nn;
 * nn::Adam adam{.learning_rate = nn::CosineDecay{.initial_learning_rate = 1e-3,
 *                                              .decay_steps = 1000}};
 * nn::SGD sgd{.learning_rate = nn::LinearWarmup{.warmup_steps = 100,
 *                                               .after = nn::ExponentialDecay{0.1, 500, 0.5}}};
 * \endcode
 *
 * Learning-rate schedules: functions of the optimizer step (0 for the first update), as Keras's
 * LearningRateSchedule. A nn::LearningRate is a constant or any callable
 * `double(std::int64_t step)`, so users can write their own as a lambda.
 * - ExponentialDecay: initial · decay_rate^(step / decay_steps) (step / decay_steps floored when
 *   staircase), Keras's.
 * - StepDecay: initial · gamma^floor(step / step_size), PyTorch's StepLR counted in steps.
 * - CosineDecay: initial · ((1 - alpha) · ½ (1 + cos(π min(step, decay_steps) / decay_steps))
 *   + alpha), Keras's (without its built-in warm-up: wrap it in LinearWarmup).
 * - LinearWarmup: for step < warmup_steps, after(0) · (step + 1) / warmup_steps (a linear ramp
 *   that reaches the base rate at the end of the warm-up), then after(step - warmup_steps).
 *
 * Errors: `invalid_argument` for decay_steps, step_size or warmup_steps < 1 (when the
 * optimizer is made, at compile).
 */

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <functional>
#include <numbers>
#include <string>
#include <utility>

#include "onelearn/core/errors.hpp"

namespace onelearn::nn {

/// A constant learning rate or a schedule of the optimizer step.
class LearningRate {
 public:
  LearningRate(double constant) : constant_(constant) {}  // NOLINT(google-explicit-constructor)

  template <class F>
  requires(!std::convertible_to<F, double> && std::invocable<const F&, std::int64_t>)
      LearningRate(F schedule)  // NOLINT(google-explicit-constructor)
      : schedule_(std::move(schedule)) {}

  [[nodiscard]] double operator()(std::int64_t step) const {
    return schedule_ ? schedule_(step) : constant_;
  }
  [[nodiscard]] bool is_constant() const noexcept { return !schedule_; }

 private:
  double constant_ = 0;
  std::function<double(std::int64_t)> schedule_;
};

namespace detail {
inline void check_steps(const char* where, const char* name, std::int64_t value) {
  if (value < 1) {
    throw invalid_argument(std::string(where) + ": expected " + name + " >= 1, found " +
                           std::to_string(value));
  }
}
}  // namespace detail

struct ExponentialDecay {
  double initial_learning_rate = 0.01;
  std::int64_t decay_steps = 1;
  double decay_rate = 1;
  bool staircase = false;

  [[nodiscard]] double operator()(std::int64_t step) const {
    detail::check_steps("ExponentialDecay", "decay_steps", decay_steps);
    double p = static_cast<double>(step) / static_cast<double>(decay_steps);
    if (staircase) p = std::floor(p);
    return initial_learning_rate * std::pow(decay_rate, p);
  }
};

struct StepDecay {
  double initial_learning_rate = 0.01;
  std::int64_t step_size = 1;
  double gamma = 0.1;

  [[nodiscard]] double operator()(std::int64_t step) const {
    detail::check_steps("StepDecay", "step_size", step_size);
    return initial_learning_rate * std::pow(gamma, static_cast<double>(step / step_size));
  }
};

struct CosineDecay {
  double initial_learning_rate = 0.01;
  std::int64_t decay_steps = 1;
  double alpha = 0;

  [[nodiscard]] double operator()(std::int64_t step) const {
    detail::check_steps("CosineDecay", "decay_steps", decay_steps);
    const double progress =
        static_cast<double>(std::min(step, decay_steps)) / static_cast<double>(decay_steps);
    const double cosine = 0.5 * (1 + std::cos(std::numbers::pi * progress));
    return initial_learning_rate * ((1 - alpha) * cosine + alpha);
  }
};

struct LinearWarmup {
  std::int64_t warmup_steps = 1;
  LearningRate after = 0.01;

  [[nodiscard]] double operator()(std::int64_t step) const {
    detail::check_steps("LinearWarmup", "warmup_steps", warmup_steps);
    if (step < warmup_steps) {
      return after(0) * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
    }
    return after(step - warmup_steps);
  }
};

}  // namespace onelearn::nn
