/**
 * \page tool-onelearn-run onelearn-run
 *
 * \code{.sh}
 * onelearn-run --np 4 --max-restarts 3 --checkpoint-dir ckpt -- ./train data.npy
 * onelearn-run slurm --np 8 --nodes 2 --time 60 --checkpoint-dir ckpt -- ./train | sbatch
 * onelearn-run k8s --image registry/app:1 --workers 4 --pvc data -- ./train | kubectl apply -f -
 * \endcode
 *
 * onelearn-run: starts a program's MPI ranks and restarts them when one dies.
 *
 * \code{.unparsed}
 *   onelearn-run [--np N] [--min-np M] [--max-restarts K] [--checkpoint-dir DIR]
 *                [--hostfile FILE] -- PROGRAM ARGS...
 *   onelearn-run slurm [--np N] [--nodes K] [--cpus-per-task C] [--time T] [--max-restarts K]
 *                [--checkpoint-dir DIR] [--job-name NAME] -- PROGRAM ARGS...     (| sbatch)
 *   onelearn-run k8s --image IMG --workers N [--gpus-per-worker G] [--cpus-per-worker C]
 *                [--memory-per-worker M] --pvc NAME [--checkpoint-dir DIR] [--max-restarts K]
 *                [--name NAME] -- COMMAND...                             (| kubectl apply -f -)
 * \endcode
 *
 * Where it runs decides how the ranks start; the user never writes a host name:
 * - with --hostfile FILE, `mpirun --hostfile FILE` over that file's slots;
 * - inside a Slurm allocation (SLURM_JOB_ID), `srun --mpi=pmix -n NP --kill-on-bad-exit=1` on
 *   the allocation's tasks (SLURM_NTASKS);
 * - inside a Kubeflow MPIJob launcher (the hostfile the operator mounts, named by
 *   OMPI_MCA_orte_default_hostfile), `mpirun --hostfile FILE` over it;
 * - otherwise `mpirun` on this machine's slots (as root too, oversubscribed, without the
 *   shared-memory single-copy mechanism that containers forbid).
 * The slurm and k8s subcommands write the job that runs onelearn-run in those places: a batch
 * script, a Kubeflow MPIJob (tools/onelearn_run_jobs.hpp).
 *
 * Supervision: mpirun (srun with --kill-on-bad-exit) ends the remaining ranks when one exits
 * non-zero or is killed (a crash, SIGKILL, exec::mpi's collective timeout, which aborts the
 * process); onelearn-run then kills whatever is left of that attempt's process group, and starts
 * the program again, up to K times, on min(N, the slots available now) ranks; the hostfile is
 * read again before every attempt, so an operator (or a test) can shrink or grow the job between
 * attempts. Fewer than M slots ends the run. The program learns the attempt through its
 * environment (core/run_environment.hpp): ONELEARN_RUN_ATTEMPT, ONELEARN_RUN_MAX_RESTARTS,
 * ONELEARN_RUN_NP and ONELEARN_CHECKPOINT_DIR; a fit whose resume_from is
 * nn::latest_checkpoint(model, dir) then continues from the newest complete checkpoint.
 *
 * Exit status: 0 when an attempt succeeded; the last attempt's status (128 + signal when it was
 * killed) when every attempt failed; 2 for a usage error (an unknown option, no program,
 * --min-np above --np, a checkpoint directory that cannot be created or written, a hostfile
 * without slots, a job option the scheduler would refuse).
 */

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onelearn/core/version.hpp"
#include "onelearn_run_jobs.hpp"

namespace {

namespace fs = std::filesystem;
using onelearn_run::UsageError;

struct Options {
  int np = 0;  ///< 0: every slot available
  int min_np = 1;
  int max_restarts = 0;
  std::string checkpoint_dir;
  std::string hostfile;
  std::vector<std::string> program;
};

/// The slots of an Open MPI hostfile: "host slots=N" (or "host": one slot) per line, # comments.
int hostfile_slots(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError{"cannot read the hostfile '" + path + "'"};
  int slots = 0;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string host;
    if (!(words >> host)) continue;
    int here = 1;
    for (std::string word; words >> word;) {
      if (word.starts_with("slots=")) {
        try {
          here = std::stoi(word.substr(6));
        } catch (const std::exception&) {
          throw UsageError{"hostfile '" + path + "': expected slots=<number>, found '" + word + "'"};
        }
      }
    }
    slots += here;
  }
  return slots;
}

/// The hostfile of this attempt: --hostfile, or the one an MPIJob's launcher is given.
std::string current_hostfile(const Options& o) {
  if (!o.hostfile.empty()) return o.hostfile;
  const char* mounted = std::getenv("OMPI_MCA_orte_default_hostfile");
  return mounted != nullptr ? std::string(mounted) : std::string();
}

int local_slots() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

/// mpirun's command line for one attempt on `np` ranks.
std::vector<std::string> mpirun_command(const Options& o, const std::string& hostfile, int np) {
  std::vector<std::string> argv{"mpirun", "-np", std::to_string(np)};
  if (!hostfile.empty()) {
    argv.insert(argv.end(), {"--hostfile", hostfile});
  } else {
    argv.push_back("--oversubscribe");  // --np above the cores is the user's choice
  }
  if (::geteuid() == 0) argv.push_back("--allow-run-as-root");
  // Containers withhold the ptrace rights of the single-copy mechanism (CMA).
  argv.insert(argv.end(), {"--mca", "btl_vader_single_copy_mechanism", "none"});
  argv.insert(argv.end(), o.program.begin(), o.program.end());
  return argv;
}

/// Inside a Slurm allocation (a batch script, salloc), unless --hostfile names the slots.
bool in_slurm_allocation(const Options& o) {
  const char* job = std::getenv("SLURM_JOB_ID");
  return o.hostfile.empty() && job != nullptr && *job != '\0';
}

/// The tasks of the Slurm allocation (sbatch --ntasks); without SLURM_NTASKS (salloc --nodes
/// alone), --np, which srun then asks the allocation for, or 1.
int slurm_slots(const Options& o) {
  const char* tasks = std::getenv("SLURM_NTASKS");
  if (tasks == nullptr || *tasks == '\0') return o.np != 0 ? o.np : 1;
  try {
    return std::stoi(tasks);
  } catch (const std::exception&) {
    throw UsageError{std::string("SLURM_NTASKS: expected a number, found '") + tasks + "'"};
  }
}

/// srun's command line for one attempt on `np` ranks: a job step of the allocation, ended as
/// a whole when one task fails or is killed (--kill-on-bad-exit), its ranks wired up by PMIx.
std::vector<std::string> srun_command(const Options& o, int np) {
  std::vector<std::string> argv{"srun", "--mpi=pmix", "-n", std::to_string(np), "--kill-on-bad-exit=1"};
  // Slurm 22.05's srun does not take --cpus-per-task from the allocation: asked again, each rank
  // gets the CPUs its OpenMP threads were given.
  if (const char* cpus = std::getenv("SLURM_CPUS_PER_TASK"); cpus != nullptr && *cpus != '\0') {
    argv.push_back(std::string("--cpus-per-task=") + cpus);
  }
  argv.insert(argv.end(), o.program.begin(), o.program.end());
  return argv;
}

volatile std::sig_atomic_t stop_signal = 0;
extern "C" void on_stop_signal(int signal) { stop_signal = signal; }

/// Runs `argv` in its own process group with `environment` added; returns its exit status
/// (128 + signal when killed). Whatever is left of the group afterwards (ranks mpirun did not
/// reap) is killed, so an attempt never outlives itself.
int run_attempt(const std::vector<std::string>& argv,
                const std::vector<std::pair<std::string, std::string>>& environment) {
  const pid_t child = ::fork();
  if (child < 0) throw UsageError{std::string("fork failed: ") + std::strerror(errno)};
  if (child == 0) {
    ::setpgid(0, 0);
    for (const auto& [name, value] : environment) ::setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::cerr << "onelearn-run: cannot start " << argv[0] << ": " << std::strerror(errno) << "\n";
    std::_Exit(127);
  }
  ::setpgid(child, child);  // also here: no race with the child's own call
  int status = 0;
  bool forwarded = false;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) break;
    if (stop_signal != 0 && !forwarded) {  // Ctrl-C or a scheduler's SIGTERM: pass it on
      ::kill(-child, stop_signal);
      forwarded = true;
    }
  }
  ::kill(-child, SIGKILL);  // stragglers of this attempt (ESRCH when there are none)
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string absolute_checkpoint_dir(const std::string& dir) {
  if (dir.empty()) return dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw UsageError{"--checkpoint-dir '" + dir + "': expected a directory that exists or can be "
                     "created, found " + (ec ? ec.message() : std::string("something else"))};
  }
  const fs::path probe = fs::path(dir) / (".onelearn-run-write-test." + std::to_string(::getpid()));
  std::ofstream(probe) << "";
  if (!fs::exists(probe)) {
    throw UsageError{"--checkpoint-dir '" + dir + "': expected a writable directory, found one "
                     "that cannot be written"};
  }
  fs::remove(probe, ec);
  return fs::absolute(dir).lexically_normal().string();
}

int supervise(const Options& o) {
  if (o.program.empty()) throw UsageError{"expected a program after --, found none"};
  if (o.np != 0 && o.min_np > o.np) {
    throw UsageError{"expected --min-np (" + std::to_string(o.min_np) + ") at most --np (" +
                     std::to_string(o.np) + ")"};
  }
  const std::string checkpoint_dir = absolute_checkpoint_dir(o.checkpoint_dir);
  const bool slurm = in_slurm_allocation(o);
  int status = 0;
  for (int attempt = 0; attempt <= o.max_restarts; ++attempt) {
    const std::string hostfile = slurm ? std::string() : current_hostfile(o);
    const int slots = slurm               ? slurm_slots(o)
                      : hostfile.empty() ? (o.np != 0 ? o.np : local_slots())
                                         : hostfile_slots(hostfile);
    const int np = o.np != 0 ? std::min(o.np, slots) : slots;
    if (np < o.min_np) {
      std::cerr << "onelearn-run: " << np << " slots available, below --min-np " << o.min_np
                << "; giving up\n";
      return status != 0 ? status : 1;
    }
    std::vector<std::pair<std::string, std::string>> environment{
        {"ONELEARN_RUN_ATTEMPT", std::to_string(attempt)},
        {"ONELEARN_RUN_MAX_RESTARTS", std::to_string(o.max_restarts)},
        {"ONELEARN_RUN_NP", std::to_string(np)}};
    if (!checkpoint_dir.empty()) environment.emplace_back("ONELEARN_CHECKPOINT_DIR", checkpoint_dir);
    if (slurm && std::getenv("OMPI_MCA_btl_vader_single_copy_mechanism") == nullptr) {
      environment.emplace_back("OMPI_MCA_btl_vader_single_copy_mechanism", "none");  // as mpirun's
    }
    status = run_attempt(slurm ? srun_command(o, np) : mpirun_command(o, hostfile, np), environment);
    if (status == 0 || stop_signal != 0) return status;
    std::cerr << "onelearn-run: attempt " << attempt + 1 << " of " << o.max_restarts + 1
              << " on " << np << " ranks ended with status " << status
              << (status > 128 ? " (signal " + std::to_string(status - 128) + ")" : std::string())
              << (attempt < o.max_restarts ? "; starting again" : "; no restarts left") << "\n";
  }
  return status;
}

}  // namespace

/// This program's path, for the batch script to run it again inside the allocation.
std::string self_path(const char* argv0) {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) return exe.string();
  return fs::absolute(argv0, ec).lexically_normal().string();
}

int main(int argc, char** argv) {
  CLI::App app{"onelearn-run: starts a program's MPI ranks and restarts them when one dies",
               "onelearn-run"};
  app.set_version_flag("--version", std::string("onelearn-run ") + std::string(onelearn::version));
  Options o;
  app.add_option("--np", o.np, "ranks to start (default: every slot)")->check(CLI::PositiveNumber);
  app.add_option("--min-np", o.min_np, "fewest ranks to go on with after slots are lost")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-restarts", o.max_restarts, "restarts after a failed attempt (default 0)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--checkpoint-dir", o.checkpoint_dir,
                 "created if missing; the program finds it in ONELEARN_CHECKPOINT_DIR");
  app.add_option("--hostfile", o.hostfile, "Open MPI hostfile, read again before every attempt");
  app.add_option("program", o.program, "-- PROGRAM ARGS...");
  app.footer("Example: onelearn-run --np 2 --max-restarts 3 --checkpoint-dir ckpt -- ./train data/\n"
             "         onelearn-run slurm --np 4 -- ./train data/ | sbatch\n"
             "         onelearn-run k8s --image IMG --workers 2 --pvc ckpt -- /app/train | kubectl apply -f -");

  onelearn_run::SlurmOptions slurm;
  CLI::App* slurm_app = app.add_subcommand("slurm", "write a Slurm batch script that runs onelearn-run (to stdout)");
  slurm_app->add_option("--np", slurm.np, "ranks (sbatch --ntasks; default 1)");
  slurm_app->add_option("--nodes", slurm.nodes, "nodes (sbatch --nodes; default: Slurm's choice)");
  slurm_app->add_option("--cpus-per-task", slurm.cpus_per_task, "CPUs per rank, its OMP_NUM_THREADS (default 1)");
  slurm_app->add_option("--time", slurm.time, "time limit (minutes, H:M:S, D-H:M:S)");
  slurm_app->add_option("--max-restarts", slurm.max_restarts, "restarts after a failed attempt (default 3)");
  slurm_app->add_option("--checkpoint-dir", slurm.checkpoint_dir, "the program's ONELEARN_CHECKPOINT_DIR");
  slurm_app->add_option("--job-name", slurm.job_name, "job name and output file NAME-<job id>.out (default onelearn)");
  slurm_app->add_option("program", slurm.program, "-- PROGRAM ARGS...");

  onelearn_run::K8sOptions k8s;
  CLI::App* k8s_app = app.add_subcommand("k8s", "write a Kubeflow MPIJob (kubeflow.org/v2beta1, JSON) that runs onelearn-run (to stdout)");
  k8s_app->add_option("--image", k8s.image, "container image of the launcher and the workers (required)");
  k8s_app->add_option("--workers", k8s.workers, "worker pods (required)");
  k8s_app->add_option("--gpus-per-worker", k8s.gpus_per_worker, "nvidia.com/gpu per worker, one rank each (default 0: one rank per worker)");
  k8s_app->add_option("--cpus-per-worker", k8s.cpus_per_worker, "CPUs per worker, shared by its ranks' OpenMP threads (default 1)");
  k8s_app->add_option("--memory-per-worker", k8s.memory_per_worker, "memory per worker, a Kubernetes quantity (default 2Gi)");
  k8s_app->add_option("--pvc", k8s.pvc, "persistent volume claim for the checkpoints (required)");
  k8s_app->add_option("--checkpoint-dir", k8s.checkpoint_dir, "where the claim is mounted (default /checkpoints)");
  k8s_app->add_option("--max-restarts", k8s.max_restarts, "restarts by onelearn-run, and the launcher's backoffLimit (default 3)");
  k8s_app->add_option("--name", k8s.name, "the MPIJob's name (default onelearn)");
  k8s_app->add_option("command", k8s.command, "-- COMMAND... (the program, as the image has it)");

  // The subcommands are recognised only as the first argument. CLI11 would otherwise take a
  // later "slurm" or "k8s" for one too: `onelearn-run --np 2 ./prog k8s` would run ./prog
  // without its argument and parse the rest as the subcommand's, and `onelearn-run --np 2 k8s`
  // would mix the two modes' options. Disabled, they still appear in --help.
  const std::string first = argc > 1 ? argv[1] : "";
  slurm_app->disabled(first != "slurm");
  k8s_app->disabled(first != "k8s");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // --help and --version: 0
    return code == 0 ? 0 : 2;
  }

  try {
    if (slurm_app->parsed()) {
      std::cout << onelearn_run::slurm_script(slurm, self_path(argv[0]));
      return 0;
    }
    if (k8s_app->parsed()) {
      std::cout << onelearn_run::k8s_manifest(k8s);
      return 0;
    }
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    ::sigaction(SIGINT, &action, nullptr);
    ::sigaction(SIGTERM, &action, nullptr);
    return supervise(o);
  } catch (const UsageError& e) {
    std::cerr << "onelearn-run: " << e.message << "\n";
    return 2;
  }
}
