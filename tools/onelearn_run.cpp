// onelearn-run: starts a program's MPI ranks and restarts them when one dies.
//
//   onelearn-run [--np N] [--min-np M] [--max-restarts K] [--checkpoint-dir DIR]
//                [--hostfile FILE] -- PROGRAM ARGS...
//
// Where it runs decides how the ranks start; the user never writes a host name:
// - with --hostfile FILE, or inside a Kubeflow MPIJob launcher (the hostfile the operator mounts,
//   named by OMPI_MCA_orte_default_hostfile), `mpirun --hostfile FILE` over that file's slots;
// - otherwise `mpirun` on this machine's slots (as root too, oversubscribed, without the
//   shared-memory single-copy mechanism that containers forbid).
// Inside a Slurm allocation Open MPI's mpirun takes the allocation's nodes itself.
//
// Supervision: mpirun ends the remaining ranks when one exits non-zero or is killed (a crash,
// SIGKILL, exec::mpi's collective timeout, which aborts the process); onelearn-run then kills
// whatever is left of that attempt's process group, and starts the program again, up to K times,
// on min(N, the slots available now) ranks; the hostfile is read again before every attempt, so
// an operator (or a test) can shrink or grow the job between attempts. Fewer than M slots ends
// the run. The program learns the attempt through its environment (core/run_environment.hpp):
// ONELEARN_RUN_ATTEMPT, ONELEARN_RUN_MAX_RESTARTS, ONELEARN_RUN_NP and ONELEARN_CHECKPOINT_DIR;
// a fit whose resume_from is nn::latest_checkpoint(model, dir) then continues from the newest
// complete checkpoint.
//
// Exit status: 0 when an attempt succeeded; the last attempt's status (128 + signal when it was
// killed) when every attempt failed; 2 for a usage error (no program, --min-np above --np, a
// checkpoint directory that cannot be created or written, a hostfile without slots).

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

namespace {

namespace fs = std::filesystem;

/// A usage or setup error: reported, exit status 2.
struct UsageError {
  std::string message;
};

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
  int status = 0;
  for (int attempt = 0; attempt <= o.max_restarts; ++attempt) {
    const std::string hostfile = current_hostfile(o);
    const int slots = hostfile.empty() ? (o.np != 0 ? o.np : local_slots()) : hostfile_slots(hostfile);
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
    status = run_attempt(mpirun_command(o, hostfile, np), environment);
    if (status == 0 || stop_signal != 0) return status;
    std::cerr << "onelearn-run: attempt " << attempt + 1 << " of " << o.max_restarts + 1
              << " on " << np << " ranks ended with status " << status
              << (status > 128 ? " (signal " + std::to_string(status - 128) + ")" : std::string())
              << (attempt < o.max_restarts ? "; starting again" : "; no restarts left") << "\n";
  }
  return status;
}

}  // namespace

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
  app.footer("Example: onelearn-run --np 2 --max-restarts 3 --checkpoint-dir ckpt -- ./train data/");
  CLI11_PARSE(app, argc, argv);

  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  try {
    return supervise(o);
  } catch (const UsageError& e) {
    std::cerr << "onelearn-run: " << e.message << "\n";
    return 2;
  }
}
