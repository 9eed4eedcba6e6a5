// Runner for the distributed tests, launched by CTest under mpirun. The test program, not
// onelearn, owns MPI_Init/MPI_Finalize, as an application would.
//
// Every rank runs every test case (the collectives inside need all of them). Rank 0 reports in
// full; the others report only failures. The exit status is non-zero on every rank if any rank
// failed, so mpirun's status is the suite's.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  doctest::Context context(argc, argv);
  if (rank != 0) context.setOption("minimal", true);
  int failed = context.run() != 0 ? 1 : 0;

  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
