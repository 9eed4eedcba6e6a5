// exec::mpi's default response to a timeout (on_timeout = abort): the watchdog prints a message
// naming the rank, the operation and the step, and ends the process; the MPI launcher then ends
// the job. A process cannot test its own end, so this is a program of its own, run by CTest
// (mpi_timeout_abort) under mpirun -np 2: it passes when the output holds the message, and
// fails if the all-reduce returns, or if the job outlives the test's TIMEOUT (a hang).
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <span>
#include <thread>
#include <vector>

#include <onelearn/exec/mpi.hpp>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    const onelearn::exec::mpi policy(MPI_COMM_WORLD, {.timeout = std::chrono::milliseconds(300)});
    policy.set_step("epoch", 2);
    std::vector<double> values(4, 1.0);
    policy.allreduce(std::span(values), onelearn::exec::reduce_op::sum);  // both ranks join: no timeout
    if (policy.rank() == 0) {
      policy.allreduce(std::span(values), onelearn::exec::reduce_op::sum);  // rank 1 never joins
      std::puts("rank 0: the all-reduce returned without rank 1");
    } else {
      std::this_thread::sleep_for(std::chrono::seconds(60));  // the launcher ends it before
    }
  }
  MPI_Finalize();
  return 0;
}
