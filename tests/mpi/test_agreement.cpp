// Every rank agrees, or every rank gets the same error: the conformance table of the estimators.
// For every estimator and every one of its parameters, rank 1 is given another value than the
// others; fit must then raise invalid_argument on every rank, with the same message naming that
// parameter, within seconds (not after the policy's timeout, and never two different models).
// The exception is `verbose`, which only sets what rank 0 prints: it may differ, and fit goes
// through.
// The table must list every estimator the headers declare: a new estimator that is not added
// here fails "every estimator is in the agreement table".

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/cluster/k_means.hpp"
#include "onelearn/core/log.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/decomposition/pca.hpp"
#include "onelearn/ensemble/forest_classifier.hpp"
#include "onelearn/ensemble/forest_regressor.hpp"
#include "onelearn/ensemble/hist_gradient_boosting.hpp"
#include "onelearn/exec/mpi.hpp"
#include "onelearn/rl/agents/a2c.hpp"
#include "onelearn/rl/agents/dqn.hpp"
#include "onelearn/rl/agents/ppo.hpp"
#include "onelearn/rl/agents/reinforce.hpp"
#include "onelearn/rl/envs/cartpole_vector.hpp"
#include "onelearn/linear_model/elastic_net.hpp"
#include "onelearn/linear_model/lasso.hpp"
#include "onelearn/linear_model/linear_regression.hpp"
#include "onelearn/linear_model/logistic_regression.hpp"
#include "onelearn/linear_model/ridge.hpp"
#include "onelearn/linear_model/sgd_classifier.hpp"
#include "onelearn/linear_model/sgd_regressor.hpp"
#include "onelearn/model_selection/grid_search_cv.hpp"
#include "onelearn/model_selection/halving_grid_search_cv.hpp"
#include "onelearn/model_selection/kfold.hpp"
#include "onelearn/model_selection/randomized_search_cv.hpp"
#include "onelearn/naive_bayes/gaussian_nb.hpp"
#include "onelearn/naive_bayes/multinomial_nb.hpp"
#include "onelearn/neighbors/k_neighbors_classifier.hpp"
#include "onelearn/neighbors/k_neighbors_regressor.hpp"
#include "onelearn/neighbors/nearest_neighbors.hpp"
#include "onelearn/pipeline.hpp"
#include "onelearn/preprocessing/label_encoder.hpp"
#include "onelearn/preprocessing/max_abs_scaler.hpp"
#include "onelearn/preprocessing/min_max_scaler.hpp"
#include "onelearn/preprocessing/normalizer.hpp"
#include "onelearn/preprocessing/one_hot_encoder.hpp"
#include "onelearn/preprocessing/polynomial_features.hpp"
#include "onelearn/preprocessing/simple_imputer.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "onelearn/tree/decision_tree_classifier.hpp"
#include "onelearn/tree/decision_tree_regressor.hpp"
#include "onelearn/tune/mpi.hpp"
#include "agreement_support.hpp"

using namespace onelearn;
using onelearn::test::agreement::same_on_every_rank;
using onelearn::test::agreement::world;

namespace {

/// Small data every estimator fits: 24 rows of 3 small non-negative integers per rank (valid for
/// MultinomialNB and OneHotEncoder too), labels 0..2 and a real target.
struct Data {
  Matrix<double> X;
  Labels labels;
  Vector<double> y;
};

Data make_data(int rank) {
  Data d{Matrix<double>(24, 3), Labels(24), Vector<double>(24)};
  for (index_t i = 0; i < 24; ++i) {
    for (index_t j = 0; j < 3; ++j) d.X(i, j) = static_cast<double>((i * (j + 2) + rank + j) % 4);
    d.labels(i) = (i + rank) % 3;
    d.y(i) = d.X(i, 0) - 0.5 * d.X(i, 2) + 0.1 * static_cast<double>(i % 5);
  }
  return d;
}

/// X's columns as text ("0".."3"), for the encoders of text.
std::vector<std::vector<std::string>> as_text(const Matrix<double>& X) {
  std::vector<std::vector<std::string>> columns(static_cast<std::size_t>(X.cols()));
  for (index_t j = 0; j < X.cols(); ++j) {
    for (index_t i = 0; i < X.rows(); ++i) {
      columns[static_cast<std::size_t>(j)].push_back(std::to_string(static_cast<int>(X(i, j))));
    }
  }
  return columns;
}

/// Another value of a parameter, as a user might have typed on one rank.
ParamValue other_value(const ParamValue& value) {
  return std::visit(
      [](const auto& v) -> ParamValue {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, bool>) return !v;
        if constexpr (std::is_same_v<V, std::int64_t>) return v + 1;
        if constexpr (std::is_same_v<V, double>) return v * 2 + 1;
        if constexpr (std::is_same_v<V, std::string>) return v + "_on_rank_1";
      },
      value);
}

struct Outcome {
  bool raised_invalid_argument = false;
  std::string message;
  double seconds = 0;
};

/// Runs `fit` on every rank and records what it raised.
Outcome run_fit(const std::function<void()>& fit) {
  Outcome out;
  const auto start = std::chrono::steady_clock::now();
  try {
    fit();
  } catch (const invalid_argument& e) {
    out.raised_invalid_argument = true;
    out.message = e.what();
  } catch (const std::exception& e) {
    out.message = std::string("another error: ") + e.what();
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

/// One row of the table: the estimator's name, and for each parameter a fit where rank 1
/// holds another value. Returns the names of the parameters that cannot be set by name (the
/// caller covers them by hand).
template <class E>
std::vector<std::string> check_every_parameter(const std::string& name, typename E::Params base,
                                               const std::function<void(E&, const Data&)>& fit) {
  const exec::mpi comm = world();
  const Data data = make_data(comm.rank());
  std::vector<std::string> not_settable;
  for (const auto& [field, value] : params::to_list(base)) {
    if (onelearn::detail::is_logging_param(field)) {
      // Only rank 0 prints (core/log.hpp): verbose = (rank == 0) is no disagreement.
      typename E::Params chatty = base;
      params::set(chatty, field, ParamValue(std::int64_t{comm.rank() == 0 ? 1 : 0}));
      const ScopedLogSink discard([](LogLevel, std::string_view) {});
      E estimator(chatty, comm);
      const Outcome outcome = run_fit([&] { fit(estimator, data); });
      INFO(name, ".", field, " on rank 0 only: ", outcome.message);
      CHECK(outcome.message.empty());
      continue;
    }
    typename E::Params changed = base;
    try {
      params::set(changed, field, other_value(value));
    } catch (const invalid_argument&) {
      not_settable.push_back(field);  // the same on every rank: the type decides
      continue;
    }
    E estimator(comm.rank() == 1 ? changed : base, comm);
    const Outcome outcome = run_fit([&] { fit(estimator, data); });
    INFO(name, ".", field, ": ", outcome.message);
    CHECK(outcome.raised_invalid_argument);
    CHECK(outcome.message.find("ranks disagree on " + field + ":") != std::string::npos);
    CHECK(outcome.message.find(name + ".") == 0);
    CHECK(outcome.seconds < 5.0);
    CHECK(same_on_every_rank(comm, outcome.message));
  }
  // And with the same parameters everywhere the fit goes through.
  E estimator(base, comm);
  const Outcome agreed = run_fit([&] { fit(estimator, data); });
  INFO(name, " with equal parameters: ", agreed.message);
  CHECK(agreed.message.empty());
  return not_settable;
}

template <class E>
void fit_regressor(E& e, const Data& d) { e.fit(d.X, d.y); }
template <class E>
void fit_classifier(E& e, const Data& d) { e.fit(d.X, d.labels); }
template <class E>
void fit_unsupervised(E& e, const Data& d) { e.fit(d.X); }

using Mpi = exec::mpi;

/// An RL agent in the table's shape (E(params, comm), then a "fit"): the agent is made inside
/// the fit, where its constructor compares the parameters, on two copies of CartPole per rank.
template <template <class, class> class Agent>
struct AgentFit {
  using Params = typename Agent<rl::CartPoleVectorEnv<double>, Mpi>::Params;
  AgentFit(const Params& p, const Mpi& c) : params(p), comm(c) {}
  Params params;
  Mpi comm;
};
template <template <class, class> class Agent>
void fit_agent(AgentFit<Agent>& f, const Data&) {
  Agent<rl::CartPoleVectorEnv<double>, Mpi> agent(
      rl::CartPoleVectorEnv<double>(2, {}, 2 * f.comm.rank()), f.params, f.comm);
}

/// name -> the check of every parameter of that estimator. Each returns the parameters that
/// could not be varied by name.
std::map<std::string, std::function<std::vector<std::string>()>> agreement_table() {
  using namespace linear_model;
  using namespace preprocessing;
  return {
      {"PPO", [] { return check_every_parameter<AgentFit<rl::PPO>>("PPO", {.n_steps = 8, .batch_size = 16, .hidden_units = 4}, fit_agent<rl::PPO>); }},
      {"A2C", [] { return check_every_parameter<AgentFit<rl::A2C>>("A2C", {.n_steps = 4, .hidden_units = 4}, fit_agent<rl::A2C>); }},
      {"REINFORCE", [] { return check_every_parameter<AgentFit<rl::REINFORCE>>("REINFORCE", {.hidden_units = 4}, fit_agent<rl::REINFORCE>); }},
      {"DQN", [] { return check_every_parameter<AgentFit<rl::DQN>>("DQN", {.buffer_size = 64, .batch_size = 16, .hidden_units = 4}, fit_agent<rl::DQN>); }},
      {"LinearRegression", [] { return check_every_parameter<LinearRegression<double, Mpi>>("LinearRegression", {}, fit_regressor<LinearRegression<double, Mpi>>); }},
      {"Ridge", [] { return check_every_parameter<Ridge<double, Mpi>>("Ridge", {}, fit_regressor<Ridge<double, Mpi>>); }},
      {"Lasso", [] { return check_every_parameter<Lasso<double, Mpi>>("Lasso", {.alpha = 0.1}, fit_regressor<Lasso<double, Mpi>>); }},
      {"ElasticNet", [] { return check_every_parameter<ElasticNet<double, Mpi>>("ElasticNet", {.alpha = 0.1}, fit_regressor<ElasticNet<double, Mpi>>); }},
      {"SGDRegressor", [] { return check_every_parameter<SGDRegressor<double, Mpi>>("SGDRegressor", {.max_iter = 5}, fit_regressor<SGDRegressor<double, Mpi>>); }},
      {"SGDClassifier", [] { return check_every_parameter<SGDClassifier<double, Mpi>>("SGDClassifier", {.max_iter = 5}, fit_classifier<SGDClassifier<double, Mpi>>); }},
      {"LogisticRegression", [] { return check_every_parameter<LogisticRegression<double, Mpi>>("LogisticRegression", {}, fit_classifier<LogisticRegression<double, Mpi>>); }},
      {"GaussianNB", [] { return check_every_parameter<naive_bayes::GaussianNB<double, Mpi>>("GaussianNB", {}, fit_classifier<naive_bayes::GaussianNB<double, Mpi>>); }},
      {"MultinomialNB", [] { return check_every_parameter<naive_bayes::MultinomialNB<double, Mpi>>("MultinomialNB", {}, fit_classifier<naive_bayes::MultinomialNB<double, Mpi>>); }},
      {"KNeighborsClassifier", [] { return check_every_parameter<neighbors::KNeighborsClassifier<double, Mpi>>("KNeighborsClassifier", {}, fit_classifier<neighbors::KNeighborsClassifier<double, Mpi>>); }},
      {"KNeighborsRegressor", [] { return check_every_parameter<neighbors::KNeighborsRegressor<double, Mpi>>("KNeighborsRegressor", {}, fit_regressor<neighbors::KNeighborsRegressor<double, Mpi>>); }},
      {"NearestNeighbors", [] { return check_every_parameter<neighbors::NearestNeighbors<double, Mpi>>("NearestNeighbors", {}, fit_unsupervised<neighbors::NearestNeighbors<double, Mpi>>); }},
      {"KMeans", [] { return check_every_parameter<cluster::KMeans<double, Mpi>>("KMeans", {.n_clusters = 3, .n_init = 1}, fit_unsupervised<cluster::KMeans<double, Mpi>>); }},
      {"PCA", [] { return check_every_parameter<decomposition::PCA<double, Mpi>>("PCA", {.n_components = 2}, fit_unsupervised<decomposition::PCA<double, Mpi>>); }},
      {"StandardScaler", [] { return check_every_parameter<StandardScaler<double, Mpi>>("StandardScaler", {}, fit_unsupervised<StandardScaler<double, Mpi>>); }},
      {"MinMaxScaler", [] { return check_every_parameter<MinMaxScaler<double, Mpi>>("MinMaxScaler", {}, fit_unsupervised<MinMaxScaler<double, Mpi>>); }},
      {"MaxAbsScaler", [] { return check_every_parameter<MaxAbsScaler<double, Mpi>>("MaxAbsScaler", {}, fit_unsupervised<MaxAbsScaler<double, Mpi>>); }},
      {"Normalizer", [] { return check_every_parameter<Normalizer<double, Mpi>>("Normalizer", {}, fit_unsupervised<Normalizer<double, Mpi>>); }},
      {"PolynomialFeatures", [] { return check_every_parameter<PolynomialFeatures<double, Mpi>>("PolynomialFeatures", {}, fit_unsupervised<PolynomialFeatures<double, Mpi>>); }},
      {"SimpleImputer", [] { return check_every_parameter<SimpleImputer<double, Mpi>>("SimpleImputer", {}, fit_unsupervised<SimpleImputer<double, Mpi>>); }},
      {"OneHotEncoder", [] { return check_every_parameter<OneHotEncoder<double, Mpi>>("OneHotEncoder", {}, fit_unsupervised<OneHotEncoder<double, Mpi>>); }},
      {"OneHotEncoder<std::string>", [] { return check_every_parameter<OneHotEncoder<std::string, Mpi>>("OneHotEncoder", {}, [](auto& e, const Data& d) { e.fit(as_text(d.X)); }); }},
      {"DecisionTreeClassifier", [] { return check_every_parameter<tree::DecisionTreeClassifier<double, Mpi>>("DecisionTreeClassifier", {}, fit_classifier<tree::DecisionTreeClassifier<double, Mpi>>); }},
      {"DecisionTreeRegressor", [] { return check_every_parameter<tree::DecisionTreeRegressor<double, Mpi>>("DecisionTreeRegressor", {}, fit_regressor<tree::DecisionTreeRegressor<double, Mpi>>); }},
      {"RandomForestClassifier", [] { return check_every_parameter<ensemble::RandomForestClassifier<double, Mpi>>("RandomForestClassifier", {.n_estimators = 3}, fit_classifier<ensemble::RandomForestClassifier<double, Mpi>>); }},
      {"RandomForestRegressor", [] { return check_every_parameter<ensemble::RandomForestRegressor<double, Mpi>>("RandomForestRegressor", {.n_estimators = 3}, fit_regressor<ensemble::RandomForestRegressor<double, Mpi>>); }},
      {"ExtraTreesClassifier", [] { return check_every_parameter<ensemble::ExtraTreesClassifier<double, Mpi>>("ExtraTreesClassifier", {.n_estimators = 3}, fit_classifier<ensemble::ExtraTreesClassifier<double, Mpi>>); }},
      {"ExtraTreesRegressor", [] { return check_every_parameter<ensemble::ExtraTreesRegressor<double, Mpi>>("ExtraTreesRegressor", {.n_estimators = 3}, fit_regressor<ensemble::ExtraTreesRegressor<double, Mpi>>); }},
      {"HistGradientBoostingClassifier", [] { return check_every_parameter<ensemble::HistGradientBoostingClassifier<double, Mpi>>("HistGradientBoostingClassifier", {}, fit_classifier<ensemble::HistGradientBoostingClassifier<double, Mpi>>); }},
      {"HistGradientBoostingRegressor", [] { return check_every_parameter<ensemble::HistGradientBoostingRegressor<double, Mpi>>("HistGradientBoostingRegressor", {}, fit_regressor<ensemble::HistGradientBoostingRegressor<double, Mpi>>); }},
      {"LabelEncoder", [] { return check_every_parameter<LabelEncoder<std::int64_t, Mpi>>("LabelEncoder", {}, [](auto& e, const Data& d) { e.fit(d.labels); }); }},
  };
}

/// Classes with a Params that are not fitted on ranks, with the reason; everything else the
/// headers declare must be in agreement_table().
const std::map<std::string, std::string> not_in_table = {
    {"KFold", "a splitter: no fit; it splits each rank's own rows"},
    {"StratifiedKFold", "a splitter: no fit; it splits each rank's own rows"},
    {"GroupKFold", "a splitter: no fit; it splits each rank's own rows"},
    {"ShuffleSplit", "a splitter: no fit; it splits each rank's own rows"},
    {"StratifiedShuffleSplit", "a splitter: no fit; it splits each rank's own rows"},
    {"KerasClassifier", "local only (nn::Sequential<T> inside); Sequential's options are checked in test_agreement_nn.cpp"},
};

}  // namespace

TEST_CASE("every estimator is in the agreement table") {
  // Every `using Params = <Name>Params;` in the public headers names an estimator.
  const std::filesystem::path include_dir =
      std::filesystem::path(ONELEARN_TEST_DATA_DIR) / ".." / ".." / "include" / "onelearn";
  REQUIRE(std::filesystem::is_directory(include_dir));
  const std::regex declaration(R"(using Params = (\w+)Params;)");
  std::set<std::string> declared;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(include_dir)) {
    if (entry.path().extension() != ".hpp") continue;
    // Environments are simulators each rank steps on its own (their agents agree, not them).
    if (entry.path().parent_path().filename() == "envs") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    for (std::sregex_iterator it(s.begin(), s.end(), declaration), end; it != end; ++it) {
      declared.insert((*it)[1]);
    }
  }
  CHECK(declared.size() >= 20);  // the regex still finds the estimators
  const auto table = agreement_table();
  for (const std::string& name : declared) {
    INFO("estimator ", name, " is declared in include/onelearn but has no row in agreement_table()");
    CHECK((table.count(name) == 1 || not_in_table.count(name) == 1));
  }
}

TEST_CASE("an estimator given another parameter on one rank raises the same error on every rank") {
  const exec::mpi comm = world();
  REQUIRE(comm.size() >= 2);
  std::map<std::string, std::vector<std::string>> not_settable;
  for (const auto& [name, check] : agreement_table()) {
    const std::vector<std::string> fields = check();
    if (!fields.empty()) not_settable[name] = fields;
  }
  // The parameters of a type that set_params cannot take by name, covered below by hand.
  const std::map<std::string, std::vector<std::string>> expected{{"MinMaxScaler", {"feature_range"}}};
  CHECK(not_settable == expected);

  preprocessing::MinMaxScaler<double, Mpi> scaler(
      {.feature_range = comm.rank() == 1 ? preprocessing::FeatureRange{0, 2} : preprocessing::FeatureRange{}}, comm);
  const Data data = make_data(comm.rank());
  const Outcome outcome = run_fit([&] { scaler.fit(data.X); });
  INFO(outcome.message);
  CHECK(outcome.raised_invalid_argument);
  CHECK(outcome.message.find("MinMaxScaler.fit: ranks disagree on feature_range:") == 0);
  CHECK(same_on_every_rank(comm, outcome.message));
}

TEST_CASE("check_same_values names the first differing setting and the ranks holding each value") {
  const exec::mpi comm = world();
  // Three settings; rank 1 differs in the second only, every rank past 1 in the third.
  std::vector<exec::NamedValue> values{{"a", "1"},
                                       {"b", comm.rank() == 1 ? "2.5" : "2"},
                                       {"c", comm.rank() >= 1 ? "x" : "y"}};
  const Outcome outcome = run_fit([&] { comm.check_same_values("Demo.fit", values); });
  CHECK(outcome.raised_invalid_argument);
  const std::string others = comm.size() == 2 ? "rank 0" : "ranks 0 and 2";
  CHECK(outcome.message ==
        "Demo.fit: ranks disagree on b: 2 on " + others + ", 2.5 on rank 1; expected the same on every rank");

  // A rank with fewer settings: the missing one shows as "nothing".
  std::vector<exec::NamedValue> fewer{{"a", "1"}};
  if (comm.rank() != 0) fewer.push_back({"b", "2"});
  const Outcome missing = run_fit([&] { comm.check_same_values("Demo.fit", fewer); });
  CHECK(missing.raised_invalid_argument);
  CHECK(missing.message.find("Demo.fit: ranks disagree on the settings: nothing on rank 0, b=2 on rank") == 0);

  // Equal settings pass.
  std::vector<exec::NamedValue> equal{{"a", "1"}, {"b", "2"}};
  CHECK_NOTHROW(comm.check_same_values("Demo.fit", equal));
}

namespace {

/// The error every rank must raise for a setting that differs on rank 1.
void check_disagreement(const exec::mpi& comm, const Outcome& outcome, const std::string& start) {
  INFO("rank ", comm.rank(), ": ", outcome.message);
  CHECK(outcome.raised_invalid_argument);
  CHECK(outcome.message.find(start) == 0);
  CHECK(outcome.seconds < 5.0);
  CHECK(same_on_every_rank(comm, outcome.message));
}

}  // namespace

TEST_CASE("searches, pipelines and tune::run with a setting that differs on one rank") {
  using linear_model::Ridge;
  using model_selection::GridSearchCV;
  using model_selection::HalvingGridSearchCV;
  using model_selection::RandomizedSearchCV;
  const exec::mpi comm = world();
  const bool odd_one = comm.rank() == 1;
  const Data data = make_data(comm.rank());

  SUBCASE("GridSearchCV: another grid") {
    GridSearchCV search(Ridge<double>(), {{"alpha", {0.1, odd_one ? 2.0 : 1.0}}},
                        {.cv = model_selection::KFold()}, comm);
    check_disagreement(comm, run_fit([&] { search.fit(data.X, data.y); }),
                       "GridSearchCV.fit: ranks disagree on candidate 1: {alpha=1} on rank");
  }
  SUBCASE("GridSearchCV: another cv") {
    GridSearchCV search(Ridge<double>(), {{"alpha", {0.1, 1.0}}}, {.cv = odd_one ? 3 : 5}, comm);
    check_disagreement(comm, run_fit([&] { search.fit(data.X, data.y); }),
                       "GridSearchCV.fit: ranks disagree on cv: 5 on rank");
  }
  SUBCASE("GridSearchCV: another base estimator") {
    GridSearchCV search(Ridge<double>({.fit_intercept = !odd_one}), {{"alpha", {0.1, 1.0}}}, {}, comm);
    check_disagreement(comm, run_fit([&] { search.fit(data.X, data.y); }),
                       "GridSearchCV.fit: ranks disagree on estimator.fit_intercept: true on rank");
  }
  SUBCASE("RandomizedSearchCV: another random_state") {
    const tune::Space space{{"alpha", tune::log_uniform{1e-3, 10.0}}};
    RandomizedSearchCV search(Ridge<double>(), space,
                              {.n_iter = 3, .random_state = odd_one ? 8U : 7U}, comm);
    check_disagreement(comm, run_fit([&] { search.fit(data.X, data.y); }),
                       "RandomizedSearchCV.fit: ranks disagree on candidate 0: ");
  }
  SUBCASE("HalvingGridSearchCV: another factor") {
    HalvingGridSearchCV search(Ridge<double>(), {{"alpha", {0.1, 1.0, 10.0}}},
                               {.cv = 2, .factor = odd_one ? 2.0 : 3.0}, comm);
    check_disagreement(comm, run_fit([&] { search.fit(data.X, data.y); }),
                       "HalvingGridSearchCV.fit: ranks disagree on factor: 3 on rank");
  }
  SUBCASE("a pipeline: a step's parameter") {
    auto pipe = pipeline::make_pipeline(preprocessing::StandardScaler<double, Mpi>({}, comm),
                                        Ridge<double, Mpi>({.alpha = odd_one ? 100.0 : 1.0}, comm));
    check_disagreement(comm, run_fit([&] { pipe.fit(data.X, data.y); }),
                       "Ridge.fit: ranks disagree on alpha: 1 on rank");
  }
  SUBCASE("tune::ablation: another component") {
    auto train = [](const tune::Trial& t, tune::Reporter&) { return t.get<bool>("a") ? 1.0 : 0.0; };
    const std::vector<tune::Component> components{{"a"}, {odd_one ? "c" : "b"}};
    check_disagreement(comm, run_fit([&] { (void)tune::ablation(train, components, {}, comm); }),
                       "tune::ablation: ranks disagree on configuration 0: {a=true, b=true} on rank");
  }
  SUBCASE("tune::run: another seed") {
    const tune::Space space{{"x", tune::uniform{0.0, 1.0}}};
    auto train = [](const tune::Trial& trial, tune::Reporter&) { return trial.get<double>("x"); };
    check_disagreement(comm, run_fit([&] {
                         (void)tune::run(train, space, {.n_trials = 3, .seed = odd_one ? 2U : 1U}, comm);
                       }),
                       "tune::run: ranks disagree on seed: 1 on rank");
  }
}
