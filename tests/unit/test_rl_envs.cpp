#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <vector>

#include "onelearn/rl/env.hpp"
#include "onelearn/rl/envs/acrobot.hpp"
#include "onelearn/rl/envs/cartpole.hpp"
#include "onelearn/rl/envs/cartpole_vector.hpp"
#include "onelearn/rl/envs/mountain_car.hpp"
#include "onelearn/rl/envs/pendulum.hpp"
#include "onelearn/rl/errors.hpp"
#include "onelearn/rl/vector_env.hpp"

using namespace onelearn;
using namespace onelearn::rl;

static_assert(check_environment<CartPole<float>>() && check_environment<Acrobot<double>>());
static_assert(check_environment<MountainCar<float>>() && check_environment<Pendulum<double>>());
static_assert(DiscreteEnvironment<CartPole<float>> && ContinuousEnvironment<Pendulum<float>>);

namespace {

/// A user's simulator: observation (t, 1/(k - t)), which becomes infinite at step k and NaN
/// after, as a diverging simulation would.
struct Diverging {
  using value_type = double;
  using observation_type = Vector<double>;
  using action_type = std::int64_t;
  int t = 0;
  int k = 3;
  observation_type obs() const {
    observation_type o(2);
    o << t, t > k ? std::nan("") : 1.0 / (k - t);
    return o;
  }
  observation_type reset(std::uint64_t) { return reset(); }
  observation_type reset() {
    t = 0;
    return obs();
  }
  StepResult<observation_type> step(const action_type&) {
    ++t;
    return {obs(), 0.0, false, false};
  }
  Discrete action_space() const { return {2}; }
  Box<double> observation_space() const { return Box<double>::uniform(2, -1e300, 1e300); }
};
static_assert(check_environment<Diverging>());

/// The same without step(): not an Environment (check_environment<NoStep>() would fail to compile
/// with "missing member step(action_type) returning StepResult<observation_type>").
struct NoStep {
  using value_type = double;
  using observation_type = Vector<double>;
  using action_type = std::int64_t;
  observation_type reset(std::uint64_t);
  observation_type reset();
  Discrete action_space() const;
  Box<double> observation_space() const;
};
static_assert(!Environment<NoStep> && env_member::reset<NoStep> && !env_member::step<NoStep>);

template <std::size_t N>
void check_state(const std::array<double, N>& found, const std::array<double, N>& expected) {
  for (std::size_t j = 0; j < N; ++j)
    CHECK(found[j] == doctest::Approx(expected[j]).epsilon(1e-12));
}

template <class Obs>
void check_close(const Obs& found, const Obs& expected) {
  for (index_t j = 0; j < found.size(); ++j)
    CHECK(found(j) == doctest::Approx(expected(j)).epsilon(1e-6));
}

}  // namespace

// The expected states below were computed by a Python script written for this test from the
// equations of Gymnasium's classic_control sources (cartpole.py, acrobot.py with its rk4 and
// "book" dynamics, mountain_car.py, pendulum.py; the formulas are also in each header's
// comment), in Python floats (IEEE double, like numpy float64) and in Gymnasium's order of
// operations, starting from the set_state() and actions of each test, printed with repr(). So
// they are the published equations evaluated independently of the C++ code; agreement is
// required to 1e-12 relative (the rounding of libm's sin and cos may differ between platforms).

TEST_CASE_TEMPLATE("CartPole steps by Gymnasium's equations", T, float, double) {
  CartPole<T> env;
  env.set_state({0.01, -0.02, 0.03, 0.04});
  const std::array<std::array<double, 4>, 3> expected{
      {{0.009600000000000001, 0.17467919574755525, 0.030799999999999998, -0.24306871796000815},
       {0.013093583914951107, -0.020868848948191993, 0.025938625640799833, 0.05916799993941654},
       {0.012676206935987267, -0.21635292104612766, 0.027121985639588165, 0.3599205713784138}}};
  const std::array<std::int64_t, 3> actions{1, 0, 0};
  for (std::size_t k = 0; k < 3; ++k) {
    const auto r = env.step(actions[k]);
    check_state(env.state(), expected[k]);
    CHECK(r.observation(1) == static_cast<T>(env.state()[1]));  // the double state rounded to T
    CHECK(r.reward == T(1));
    CHECK_FALSE(r.done());
  }
  // Pole past 12 degrees (theta 0.2 + 0.02 * 1.0 = 0.22), then cart past 2.4: terminated, reward 1.
  env.set_state({0.0, 0.0, 0.2, 1.0});
  auto r = env.step(1);
  check_state(env.state(), {0.0, 0.1919689517863068, 0.22, 0.776195252810284});
  CHECK((r.terminated && !r.truncated && r.reward == T(1)));
  env.set_state({2.39, 1.0, 0.0, 0.0});
  r = env.step(1);
  check_state(env.state(), {2.41, 1.1951219512195121, 0.0, -0.2926829268292683});
  CHECK(r.terminated);
  CHECK_THROWS_WITH_AS(env.step(0),
                       doctest::Contains("after the episode ended (terminated at step 1)"),
                       reset_required_error);
}

TEST_CASE_TEMPLATE("Acrobot steps by RK4 on the book dynamics, wraps, clips and terminates", T,
                   float, double) {
  Acrobot<T> env;
  env.set_state({0.1, -0.2, 0.3, -0.4});
  const std::array<std::array<double, 4>, 3> expected{
      {{0.1282116312891261, -0.211840321026976, -0.023484731535001357, 0.28679521459777013},
       {0.11784404947450917, -0.15731524450506706, -0.07632067137914837, 0.24745843481895552},
       {0.08636069337858428, -0.08309034842545675, -0.22976340908300208, 0.4771579394626573}}};
  const std::array<std::int64_t, 3> actions{2, 0, 1};
  for (std::size_t k = 0; k < 3; ++k) {
    const auto r = env.step(actions[k]);
    check_state(env.state(), expected[k]);
    const auto& s = env.state();
    typename Acrobot<T>::observation_type obs;
    obs << static_cast<T>(std::cos(s[0])), static_cast<T>(std::sin(s[0])),
        static_cast<T>(std::cos(s[1])), static_cast<T>(std::sin(s[1])), static_cast<T>(s[2]),
        static_cast<T>(s[3]);
    check_close(r.observation, obs);
    CHECK((r.reward == T(-1) && !r.done()));
  }
  // RK4 takes (3, -3, 12, -27) to (6.06, -9.80, 21.3, -46.8): theta1 wrapped once, theta2
  // twice, the velocities clipped to 4 pi and -9 pi.
  env.set_state({3.0, -3.0, 12.0, -27.0});
  CHECK_FALSE(env.step(2).terminated);
  check_state(env.state(), {-0.22284128968327543, 2.768411297547228, 4 * std::numbers::pi,
                            -9 * std::numbers::pi});
  // Link 1 pointing up: -cos(t1) - cos(t1 + t2) = 1.98 > 1, terminated with reward 0.
  env.set_state({3.0, 0.0, 0.0, 0.0});
  const auto r = env.step(1);
  check_state(env.state(),
              {2.982057837208604, 0.01400267051831374, -0.18343726539567606, 0.14511760679397961});
  CHECK((r.terminated && r.reward == T(0)));
}

TEST_CASE_TEMPLATE("MountainCar steps, stops at the left wall and terminates at the goal", T, float,
                   double) {
  MountainCar<T> env;
  env.set_state({-0.5, 0.0});
  const std::array<std::array<double, 2>, 3> expected{
      {{-0.49917684300416926, 0.0008231569958307428},
       {-0.49753668667935325, 0.0016401563248160246},
       {-0.4970917969323474, 0.00044488974700586273}}};
  const std::array<std::int64_t, 3> actions{2, 2, 0};
  for (std::size_t k = 0; k < 3; ++k) {
    const auto r = env.step(actions[k]);
    check_state(env.state(), expected[k]);
    CHECK((r.reward == T(-1) && !r.done()));
  }
  env.set_state({-1.19, -0.05});  // position clipped to -1.2, the velocity zeroed
  CHECK_FALSE(env.step(0).terminated);
  CHECK((env.state()[0] == -1.2 && env.state()[1] == 0.0));
  env.set_state({0.49, 0.02});
  const auto r = env.step(2);
  check_state(env.state(), {0.5107484356665326, 0.020748435666532672});
  CHECK((r.terminated && r.reward == T(-1)));
}

TEST_CASE_TEMPLATE("Pendulum steps, clips the torque and the speed, and costs the old state", T,
                   float, double) {
  Pendulum<T> env;
  env.set_state({1.0, 0.5});
  const std::array<std::array<double, 2>, 3> expected{{{1.0621801619302962, 1.2436032386059224},
                                                       {1.1421135449332454, 1.5986676600589833},
                                                       {1.2711537055890125, 2.580803213115343}}};
  const std::array<double, 3> rewards{-1.0255625, -1.2868815979053847, -1.5639971782518307};
  const std::array<T, 3> torques{T(0.75), T(-3.0), T(2.0)};  // -3 is clipped to -2
  for (std::size_t k = 0; k < 3; ++k) {
    const auto r = env.step(Vector<T>::Constant(1, torques[k]));
    check_state(env.state(), expected[k]);
    CHECK(r.reward == doctest::Approx(rewards[k]).epsilon(1e-6));
    CHECK(r.observation(0) == static_cast<T>(std::cos(env.state()[0])));
    CHECK(r.observation(2) == static_cast<T>(env.state()[1]));
    CHECK_FALSE(r.done());
  }
  // theta = 7 is normalised to 7 - 2 pi in the cost; 7.9 + (15 sin 7 + 6) 0.05 is clipped to 8.
  env.set_state({7.0, 7.9});
  const auto r = env.step(T(2));
  CHECK(r.reward == doctest::Approx(-6.758823303843224).epsilon(1e-6));
  check_state(env.state(), {7.4, 8.0});
  // theta = -4 is normalised to -4 + 2 pi (the floored modulo of Python, not C's truncated one).
  env.set_state({-4.0, 0.0});
  CHECK(env.step(T(0)).reward == doctest::Approx(-5.212935146920741).epsilon(1e-6));
  check_state(env.state(), {-3.9716199064259525, 0.5676018714809462});
}

TEST_CASE_TEMPLATE("Episodes are truncated at 500 / 500 / 200 / 200 steps", T, float, double) {
  // CartPole balanced by a PD rule on the pole and the cart: it survives to the time limit.
  CartPole<T> cartpole;
  auto obs = cartpole.reset(2);
  for (int k = 1; k <= 500; ++k) {
    const T u = obs(2) + T(0.3) * obs(3) + T(0.01) * obs(0) + T(0.05) * obs(1);
    const auto r = cartpole.step(u > 0 ? 1 : 0);
    REQUIRE(r.terminated == false);
    CHECK(r.truncated == (k == 500));
    obs = r.observation;
  }
  CHECK_THROWS_WITH_AS(cartpole.step(0), doctest::Contains("truncated at step 500"),
                       reset_required_error);
  auto run_idle = [](auto env, std::int64_t idle, int limit) {  // no push/torque: never terminates
    env.reset(5);
    for (int k = 1; k <= limit; ++k) {
      const auto r = env.step(idle);
      REQUIRE_FALSE(r.terminated);
      CHECK(r.truncated == (k == limit));
    }
    CHECK_THROWS_AS(env.step(idle), reset_required_error);
  };
  run_idle(Acrobot<T>(), 1, 500);
  run_idle(MountainCar<T>(), 1, 200);
  Pendulum<T> pendulum;
  pendulum.reset(5);
  for (int k = 1; k <= 200; ++k) CHECK(pendulum.step(T(1)).truncated == (k == 200));
  CHECK_THROWS_AS(pendulum.step(T(1)), reset_required_error);
  CartPole<T> short_episodes({.max_episode_steps = 3});
  short_episodes.reset(1);
  CHECK_FALSE(short_episodes.step(0).truncated);
  CHECK_FALSE(short_episodes.step(1).truncated);
  CHECK(short_episodes.step(0).truncated);
}

TEST_CASE_TEMPLATE("Seeded resets are reproducible and drawn from Gymnasium's initial ranges", T,
                   float, double) {
  CartPole<T> a, b;
  const auto first = a.reset(11);
  CHECK(b.reset(11) == first);
  CHECK(a.reset() != first);  // reset() continues the stream
  CHECK(b.reset(12) != first);
  CHECK(a.reset(11) == first);
  // Ranges: the extremes of 4000 draws reach within 1% of both ends and never leave the range
  // (a uniform draw misses the last 1% of a side with probability 0.99^4000, about 3e-18).
  auto check_range = [](auto env, std::size_t j, double low, double high, auto coordinate) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    env.reset(3);
    for (int k = 0; k < 4000; ++k) {
      env.reset();
      const double v = coordinate(env.state()[j]);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    CHECK(lo >= low);
    CHECK(hi <= high);
    CHECK(lo <= low + 0.01 * (high - low));  // <=: a range of one value (MountainCar's velocity 0)
    CHECK(hi >= high - 0.01 * (high - low));
  };
  const auto same = [](double v) { return v; };
  for (std::size_t j = 0; j < 4; ++j) check_range(CartPole<T>(), j, -0.05, 0.05, same);
  for (std::size_t j = 0; j < 4; ++j) {
    check_range(Acrobot<T>(), j, -0.1, 0.1, [](double v) {
      CHECK(v == static_cast<double>(static_cast<float>(v)));  // rounded to float32 as Gymnasium
      return v;
    });
  }
  check_range(MountainCar<T>(), 0, -0.6, -0.4, same);
  check_range(MountainCar<T>(), 1, 0.0, 0.0, same);
  check_range(Pendulum<T>(), 0, -std::numbers::pi, std::numbers::pi, same);
  check_range(Pendulum<T>(), 1, -1.0, 1.0, same);
}

TEST_CASE_TEMPLATE("VectorEnv auto-resets like copies stepped one by one", T, float, double) {
  constexpr index_t n = 3;
  VectorEnv<CartPole<T>> envs(n);
  std::vector<CartPole<T>> singles(static_cast<std::size_t>(n));
  const Matrix<T> first = envs.reset(21);
  for (index_t i = 0; i < n; ++i) {
    const auto seed = nn::detail::derive_seed(21, static_cast<std::uint64_t>(i));  // VectorEnv's rule
    CHECK(first.row(i).transpose() == singles[static_cast<std::size_t>(i)].reset(seed));
  }
  int episodes = 0;
  Labels actions(n);
  for (int t = 0; t < 200; ++t) {
    for (index_t i = 0; i < n; ++i) actions(i) = (t * 7 + i * 3) % 5 < 2 ? 1 : 0;
    const auto& step = envs.step(actions);
    for (index_t i = 0; i < n; ++i) {
      auto& single = singles[static_cast<std::size_t>(i)];
      const std::int64_t length = single.elapsed_steps() + 1;
      const auto r = single.step(actions(i));
      CHECK(step.rewards(i) == r.reward);
      CHECK(step.terminated(i) == r.terminated);
      CHECK(step.truncated(i) == r.truncated);
      if (r.done()) {
        ++episodes;
        CHECK(step.final_observations.row(i).transpose() == r.observation);
        CHECK(step.observations.row(i).transpose() == single.reset());  // the next episode's first
        CHECK(step.episode_lengths(i) == length);
        CHECK(step.episode_returns(i) == static_cast<T>(length));
      } else {
        CHECK(step.observations.row(i).transpose() == r.observation);
      }
    }
  }
  CHECK(episodes > 5);
}

TEST_CASE_TEMPLATE("CartPoleVectorEnv gives VectorEnv<CartPole>'s numbers, copy offsets included",
                   T, float, double) {
  VectorEnv<CartPole<T>> all(8);
  CartPoleVectorEnv<T> fast(5, {}, 3);  // copies 3..7 of `all`
  all.reset(99);
  CHECK(fast.reset(99) == all.observations().bottomRows(5));
  nn::detail::SplitMix gen(4);
  Labels actions(8);
  int episodes = 0;
  for (int t = 0; t < 1000; ++t) {
    for (index_t i = 0; i < 8; ++i) actions(i) = static_cast<std::int64_t>(gen.below(2));
    const auto& a = all.step(actions);
    const auto& b = fast.step(actions.tail(5));
    REQUIRE(b.observations == a.observations.bottomRows(5));
    REQUIRE((b.terminated == a.terminated.tail(5)).all());
    REQUIRE((b.truncated == a.truncated.tail(5)).all());
    CHECK(b.rewards == a.rewards.tail(5));
    for (index_t i = 0; i < 5; ++i) {
      if (!b.done(i)) continue;
      ++episodes;
      CHECK(b.final_observations.row(i) == a.final_observations.row(i + 3));
      CHECK(b.episode_lengths(i) == a.episode_lengths(i + 3));
    }
  }
  CHECK(episodes > 100);
}

TEST_CASE("Bad input is a typed error with the value and the rule") {
  CartPole<double> cartpole;
  CHECK_THROWS_WITH_AS(cartpole.step(0), doctest::Contains("step() before the first reset()"),
                       reset_required_error);
  cartpole.reset(0);
  CHECK_THROWS_WITH_AS(cartpole.step(2),
                       doctest::Contains("action 2 is outside the action space Discrete(2)"),
                       invalid_action_error);
  CHECK_THROWS_AS(cartpole.step(-1), invalid_action_error);
  CHECK_THROWS_WITH_AS((cartpole.set_state({0.0, std::nan(""), 0.0, 0.0})),
                       doctest::Contains("set_state needs finite values; element 1 is nan"),
                       onelearn::invalid_argument);
  Acrobot<double> acrobot;
  acrobot.reset(0);
  CHECK_THROWS_WITH_AS(acrobot.step(3),
                       doctest::Contains("action 3 is outside the action space Discrete(3)"),
                       invalid_action_error);
  MountainCar<float> car;
  car.reset(0);
  CHECK_THROWS_AS(car.step(-1), invalid_action_error);
  Pendulum<float> pendulum;
  pendulum.reset(0);
  CHECK_THROWS_WITH_AS(pendulum.step(std::numeric_limits<float>::quiet_NaN()),
                       doctest::Contains("the torque must be finite"), invalid_action_error);
  CHECK_THROWS_WITH_AS(pendulum.step(Vector<float>::Zero(2)),
                       doctest::Contains("got a vector of length 2"), invalid_action_error);
  CHECK_THROWS_WITH_AS(CartPole<float>({.max_episode_steps = 0}),
                       doctest::Contains("max_episode_steps must be >= 1; got 0"),
                       onelearn::invalid_argument);
  CHECK_THROWS_AS(Pendulum<float>({.g = std::nan("")}), onelearn::invalid_argument);

  // Vectorised: the batch is checked before any copy steps.
  VectorEnv<CartPole<double>> envs(3);
  CHECK_THROWS_AS(envs.step(Labels::Zero(3)), reset_required_error);
  const Matrix<double> before = envs.reset(1);
  CHECK_THROWS_WITH_AS(envs.step(Labels::Zero(2)),
                       doctest::Contains("expected 3 actions (one per copy); got 2"),
                       invalid_action_error);
  Labels bad = Labels::Zero(3);
  bad(2) = 7;
  CHECK_THROWS_WITH_AS(
      envs.step(bad),
      doctest::Contains("action 7 of copy 2 is outside the action space Discrete(2)"),
      invalid_action_error);
  CHECK(envs.step(Labels::Zero(3)).observations != before);  // still usable: nothing stepped before
  CartPoleVectorEnv<double> fast(3);
  CHECK_THROWS_AS(fast.step(Labels::Zero(3)), reset_required_error);
  fast.reset(1);
  CHECK_THROWS_WITH_AS(fast.step(bad), doctest::Contains("action 7 of copy 2"),
                       invalid_action_error);
  CHECK_THROWS_AS(fast.step(Labels::Zero(4)), invalid_action_error);
  CHECK_THROWS_WITH_AS(CartPoleVectorEnv<float>(0),
                       doctest::Contains("needs at least 1 copy; got 0"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(VectorEnv<CartPole<float>>(-2),
                       doctest::Contains("needs at least 1 copy; got -2"),
                       onelearn::invalid_argument);

  VectorEnv<Pendulum<float>> pendulums(2);
  pendulums.reset(0);
  Matrix<float> torques =
      Matrix<float>::Constant(2, 1, 5.0f);  // outside [-2, 2]: clipped, not an error
  CHECK_NOTHROW(pendulums.step(torques));
  torques(1, 0) = std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH_AS(pendulums.step(torques),
                       doctest::Contains("action element 0 of copy 1 must be finite"),
                       invalid_action_error);
  CHECK_THROWS_AS(pendulums.step(Matrix<float>::Zero(2, 2)), invalid_action_error);

  // A user's simulation that diverges: infinite at step 3 (k = 3), caught at that step.
  VectorEnv<Diverging> user(2);
  user.reset(0);
  CHECK_NOTHROW(user.step(Labels::Zero(2)));
  CHECK_NOTHROW(user.step(Labels::Zero(2)));
  CHECK_THROWS_WITH_AS(
      user.step(Labels::Zero(2)),
      doctest::Contains("copy 0 returned a bad value at step: element 1 of the observation is inf"),
      invalid_observation_error);
  CHECK_THROWS_AS(user.step(Labels::Zero(2)), reset_required_error);  // the batch is half-stepped
  user.reset();
  CHECK_NOTHROW(user.step(Labels::Zero(2)));
}
