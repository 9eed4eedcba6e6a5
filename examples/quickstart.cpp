// onelearn quickstart: standardise the diabetes data and fit a linear model, on one process or,
// unchanged, data-parallel across MPI ranks.
//
//   ./quickstart                     one process (exec::local)
//   mpirun -np 2 ./quickstart        two ranks (exec::mpi): each fits on its shard of the
//                                    training rows, and every rank ends with the same model
//
// The data is examples/data/diabetes.csv: 442 patients, 10 standardised features and a disease
// progression target. Its rows are in the order of scikit-learn's 75/25 split used throughout
// the tests, so the last 111 rows are the test set and the score can be held against
// scikit-learn's on the same split.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <onelearn/core/dataset.hpp>
#include <onelearn/exec/local.hpp>
#include <onelearn/io/io.hpp>
#include <onelearn/linear_model/linear_regression.hpp>
#include <onelearn/preprocessing/standard_scaler.hpp>

#ifdef ONELEARN_QUICKSTART_WITH_MPI
#include <mpi.h>
#include <onelearn/exec/mpi.hpp>
#endif

namespace {

using Clock = std::chrono::steady_clock;

double milliseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// The whole job, written once for any execution policy.
template <class Exec>
int run(const std::string& csv_path, const Exec& exec, const char* policy_name) {
  const bool report = exec.rank() == 0;  // every rank computes; rank 0 prints

  // 1. Load. Every rank reads the file; each then keeps only its shard.
  const auto data = onelearn::io::load_csv<double>(csv_path, {.label_column = "progression"});

  // 2. Split: the last 111 rows are scikit-learn's test split (see above). Then shard: rank r
  //    of p keeps rows [r*n/p, (r+1)*n/p) of each part. With exec::local the shard is everything.
  const auto [train_all, test_all] = data.split_tail(111);
  const auto train = train_all.shard(exec);
  const auto test = test_all.shard(exec);

  // 3. Scale: statistics over all ranks' rows, so every rank scales the same way.
  const auto start = Clock::now();
  onelearn::preprocessing::StandardScaler<double, Exec> scaler({}, exec);
  const auto X_train = scaler.fit_transform(train.features());
  const auto X_test = scaler.transform(test.features());
  const double scale_ms = milliseconds_since(start);

  // 4. Fit. The solve combines every rank's rows; every rank gets the same coefficients.
  const auto fit_start = Clock::now();
  onelearn::linear_model::LinearRegression<double, Exec> model({}, exec);
  model.fit(X_train, train.targets());
  const double fit_ms = milliseconds_since(fit_start);

  // 5. Score: R^2 over the whole test set, each rank contributing its shard.
  const double r2 = model.score(X_test, test.targets());

  if (report) {
    std::printf("onelearn quickstart: %s, %lld samples x %lld features (%s)\n", csv_path.c_str(),
                static_cast<long long>(data.size()), static_cast<long long>(data.n_features()),
                "target: progression");
    std::printf("  policy        %s, %d rank%s; rank 0 holds %lld of %lld training rows\n",
                policy_name, exec.size(), exec.size() == 1 ? "" : "s",
                static_cast<long long>(train.size()), static_cast<long long>(train_all.size()));
    std::printf("  split         %lld train / %lld test\n", static_cast<long long>(train_all.size()),
                static_cast<long long>(test_all.size()));
    std::printf("  model         StandardScaler(%s) -> LinearRegression(%s)\n",
                onelearn::params::to_string(scaler.get_params()).c_str(),
                onelearn::params::to_string(model.get_params()).c_str());
    std::printf("  time          scale %.3f ms, fit %.3f ms\n", scale_ms, fit_ms);
    std::printf("  coefficients ");
    for (double c : model.coef()) std::printf(" %.2f", c);
    std::printf("\n  intercept     %.4f\n", model.intercept());
    std::printf("  test R^2      %.6f   (scikit-learn 1.2.1, same split: 0.359409)\n", r2);
  }
  return 0;
}

std::string default_csv() {
  if (const char* dir = std::getenv("ONELEARN_DATA_DIR")) return std::string(dir) + "/diabetes.csv";
  return ONELEARN_EXAMPLE_DATA_DIR "/diabetes.csv";
}

/// True when started by an MPI launcher (OpenMPI, MPICH/Hydra, Slurm's PMI/PMIx).
bool launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(variable) != nullptr) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string csv = argc > 1 ? argv[1] : default_csv();
  if (!launched_by_mpi()) {
    try {
      return run(csv, onelearn::exec::local{}, "local");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "quickstart: %s\n", e.what());
      return 1;
    }
  }
#ifdef ONELEARN_QUICKSTART_WITH_MPI
  // The application owns MPI; onelearn only uses the communicator it is handed.
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = run(csv, onelearn::exec::mpi(MPI_COMM_WORLD), "mpi");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quickstart: %s\n", e.what());  // raised on every rank alike
    status = 1;
  }
  MPI_Finalize();
  return status;
#else
  std::fprintf(stderr, "quickstart: started by mpirun, but built without MPI\n");
  return 1;
#endif
}
