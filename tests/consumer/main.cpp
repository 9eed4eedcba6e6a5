// A downstream program: standardises a small matrix and fits a line, locally or (with
// CONSUMER_WITH_MPI) through the MPI policy. Exits non-zero if the numbers are wrong.
#include <cmath>
#include <cstdio>

#include <onelearn/core/version.hpp>
#include <onelearn/linear_model/linear_regression.hpp>
#include <onelearn/preprocessing/standard_scaler.hpp>
#ifdef CONSUMER_WITH_MPI
#include <mpi.h>
#include <onelearn/exec/mpi.hpp>
using Exec = onelearn::exec::mpi;
#else
#include <onelearn/exec/local.hpp>
using Exec = onelearn::exec::local;
#endif

// The generated version header: macros usable in #if, in step with the C++ constant.
#if !defined(ONELEARN_VERSION) || ONELEARN_VERSION < 100
#error "expected ONELEARN_VERSION >= 100 (0.1.0) from onelearn/core/version.hpp"
#endif
static_assert(onelearn::version == ONELEARN_VERSION_STRING);
static_assert(ONELEARN_VERSION == ONELEARN_VERSION_MAJOR * 10000 + ONELEARN_VERSION_MINOR * 100 + ONELEARN_VERSION_PATCH);

int run(const Exec& exec) {
  onelearn::Matrix<double> X(4, 1);
  X << 1, 2, 3, 4;
  onelearn::Vector<double> y(4);
  y << 3, 5, 7, 9;  // y = 2x + 1
  onelearn::preprocessing::StandardScaler<double, Exec> scaler({}, exec);
  const auto Z = scaler.fit_transform(X);
  onelearn::linear_model::LinearRegression<double, Exec> model({}, exec);
  model.fit(X, y);
  const bool ok = std::abs(scaler.mean()(0) - 2.5) < 1e-12 && std::abs(Z(0, 0) + 1.3416407864998738) < 1e-12 &&
                  std::abs(model.coef()(0) - 2) < 1e-12 && std::abs(model.intercept() - 1) < 1e-12;
  std::printf("consumer: %s\n", ok ? "ok" : "wrong result");
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
#ifdef CONSUMER_WITH_MPI
  MPI_Init(&argc, &argv);
  const int status = run(onelearn::exec::mpi(MPI_COMM_WORLD));
  MPI_Finalize();
  return status;
#else
  (void)argc;
  (void)argv;
  return run(Exec{});
#endif
}
