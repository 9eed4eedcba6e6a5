#pragma once
// The job descriptions `onelearn-run slurm` and `onelearn-run k8s` write: a Slurm batch script
// and a Kubeflow MPIJob (kubeflow.org/v2beta1, as JSON, which is YAML too). Both run
// `onelearn-run` inside the allocation or the launcher pod, which starts and supervises the
// ranks there (tools/onelearn_run.cpp). Pure functions of their options: the tests
// (tests/cmake/run_slurm_script_test.cmake, run_k8s_test.cmake) check the text they return.

#include <algorithm>
#include <cstdint>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace onelearn_run {

/// A usage or setup error: reported, exit status 2.
struct UsageError {
  std::string message;
};

/// `word` as one word for a POSIX shell: unchanged when it holds only characters no shell
/// treats specially, otherwise in single quotes (a quote inside written '\'').
inline std::string shell_quote(const std::string& word) {
  static const std::regex plain("[A-Za-z0-9_@%+=:,./-]+");
  if (std::regex_match(word, plain)) return word;
  std::string quoted = "'";
  for (const char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

inline std::string shell_command(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& word : words) line += (line.empty() ? "" : " ") + shell_quote(word);
  return line;
}

/// A JSON value with its object keys in the order written (Kubernetes manifests read better so).
class Json {
 public:
  using Object = std::vector<std::pair<std::string, Json>>;
  using Array = std::vector<Json>;

  Json(const char* text) : value_(std::string(text)) {}  // NOLINT: literals are JSON strings
  Json(std::string text) : value_(std::move(text)) {}    // NOLINT
  Json(int number) : value_(static_cast<std::int64_t>(number)) {}  // NOLINT
  Json(bool flag) : value_(flag) {}                      // NOLINT
  Json(Object members) : value_(std::move(members)) {}   // NOLINT
  Json(Array items) : value_(std::move(items)) {}        // NOLINT

  std::string dump() const {
    std::ostringstream out;
    write(out, 0);
    out << "\n";
    return out.str();
  }

 private:
  static void write_string(std::ostringstream& out, const std::string& text) {
    out << '"';
    for (const char c : text) {
      switch (c) {
        case '"': out << "\\\""; break;
        case '\\': out << "\\\\"; break;
        case '\n': out << "\\n"; break;
        case '\t': out << "\\t"; break;
        case '\r': out << "\\r"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            static const char* hex = "0123456789abcdef";
            out << "\\u00" << hex[(c >> 4) & 0xf] << hex[c & 0xf];
          } else {
            out << c;
          }
      }
    }
    out << '"';
  }

  void write(std::ostringstream& out, int depth) const {
    const std::string pad(static_cast<std::size_t>(2 * (depth + 1)), ' ');
    const std::string close(static_cast<std::size_t>(2 * depth), ' ');
    if (const auto* text = std::get_if<std::string>(&value_)) {
      write_string(out, *text);
    } else if (const auto* number = std::get_if<std::int64_t>(&value_)) {
      out << *number;
    } else if (const auto* flag = std::get_if<bool>(&value_)) {
      out << (*flag ? "true" : "false");
    } else if (const auto* members = std::get_if<Object>(&value_)) {
      if (members->empty()) {
        out << "{}";
        return;
      }
      out << "{\n";
      for (std::size_t i = 0; i < members->size(); ++i) {
        out << pad;
        write_string(out, (*members)[i].first);
        out << ": ";
        (*members)[i].second.write(out, depth + 1);
        out << (i + 1 < members->size() ? ",\n" : "\n");
      }
      out << close << "}";
    } else {
      const auto& items = std::get<Array>(value_);
      if (items.empty()) {
        out << "[]";
        return;
      }
      out << "[\n";
      for (std::size_t i = 0; i < items.size(); ++i) {
        out << pad;
        items[i].write(out, depth + 1);
        out << (i + 1 < items.size() ? ",\n" : "\n");
      }
      out << close << "]";
    }
  }

  std::variant<std::string, std::int64_t, bool, Object, Array> value_;
};

inline Json::Array strings(const std::vector<std::string>& words) {
  return Json::Array(words.begin(), words.end());
}

// ---------------------------------------------------------------------------------------------
// onelearn-run k8s

struct K8sOptions {
  std::string image;
  int workers = 0;
  int gpus_per_worker = 0;
  int cpus_per_worker = 1;
  std::string memory_per_worker = "2Gi";
  std::string pvc;
  std::string checkpoint_dir = "/checkpoints";
  int max_restarts = 3;
  std::string name = "onelearn";
  std::vector<std::string> command;
};

/// A Kubernetes resource quantity ("2Gi", "512Mi", "1.5", "100m"), as the API server accepts.
inline bool is_quantity(const std::string& text) {
  static const std::regex quantity(
      R"(([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?)");
  return std::regex_match(text, quantity);
}

inline void check(const K8sOptions& o) {
  const std::string where = "k8s: ";
  if (o.image.empty()) throw UsageError{where + "expected --image IMAGE (the image of the launcher and the workers), found none"};
  if (o.image.find_first_of(" \t\n") != std::string::npos) {
    throw UsageError{where + "expected --image without blanks, found '" + o.image + "'"};
  }
  if (o.workers < 1) throw UsageError{where + "expected --workers at least 1, found " + std::to_string(o.workers)};
  if (o.gpus_per_worker < 0) {
    throw UsageError{where + "expected --gpus-per-worker at least 0, found " + std::to_string(o.gpus_per_worker)};
  }
  if (o.cpus_per_worker < 1) {
    throw UsageError{where + "expected --cpus-per-worker at least 1, found " + std::to_string(o.cpus_per_worker)};
  }
  if (!is_quantity(o.memory_per_worker)) {
    throw UsageError{where + "expected --memory-per-worker as a Kubernetes quantity (512Mi, 8Gi), found '" +
                     o.memory_per_worker + "'"};
  }
  static const std::regex claim("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
  if (o.pvc.empty()) {
    throw UsageError{where + "expected --pvc NAME (the persistent volume claim that holds the checkpoints), found none"};
  }
  if (!std::regex_match(o.pvc, claim) || o.pvc.size() > 253) {
    throw UsageError{where + "expected --pvc as a claim name (lower-case letters, digits, '-', '.'), found '" + o.pvc + "'"};
  }
  if (o.checkpoint_dir.empty() || o.checkpoint_dir.front() != '/' || o.checkpoint_dir == "/") {
    throw UsageError{where + "expected --checkpoint-dir as an absolute path below / (where the claim is mounted), found '" +
                     o.checkpoint_dir + "'"};
  }
  if (o.max_restarts < 0) {
    throw UsageError{where + "expected --max-restarts at least 0, found " + std::to_string(o.max_restarts)};
  }
  // The operator names the pods <name>-launcher and <name>-worker-<i>: DNS labels (RFC 1035).
  static const std::regex label("[a-z]([-a-z0-9]*[a-z0-9])?");
  const std::string last_worker = o.name + "-worker-" + std::to_string(o.workers - 1);
  if (!std::regex_match(o.name, label) || last_worker.size() > 63) {
    throw UsageError{where + "expected --name as a DNS label: a lower-case letter, then lower-case letters, "
                     "digits or '-', at most 63 characters with '-worker-" + std::to_string(o.workers - 1) +
                     "' added; found '" + o.name + "'"};
  }
  if (o.command.empty()) throw UsageError{where + "expected the command after --, found none"};
}

/// The MPIJob. One rank per GPU (or per worker without GPUs), each with cpus / ranks OpenMP
/// threads; the launcher's onelearn-run starts them over the operator's hostfile.
inline std::string k8s_manifest(const K8sOptions& o) {
  check(o);
  const int slots = o.gpus_per_worker > 0 ? o.gpus_per_worker : 1;
  const int threads = std::max(1, o.cpus_per_worker / slots);
  std::vector<std::string> launch{"onelearn-run", "--np", std::to_string(o.workers * slots),
                                  "--max-restarts", std::to_string(o.max_restarts),
                                  "--checkpoint-dir", o.checkpoint_dir, "--"};
  launch.insert(launch.end(), o.command.begin(), o.command.end());

  const Json::Array volumes{Json::Object{
      {"name", "checkpoints"}, {"persistentVolumeClaim", Json::Object{{"claimName", o.pvc}}}}};
  const Json::Array mounts{Json::Object{{"name", "checkpoints"}, {"mountPath", o.checkpoint_dir}}};

  Json::Object worker_resources{{"cpu", std::to_string(o.cpus_per_worker)},
                                {"memory", o.memory_per_worker}};
  if (o.gpus_per_worker > 0) worker_resources.emplace_back("nvidia.com/gpu", std::to_string(o.gpus_per_worker));
  // The launcher only runs onelearn-run and mpirun.
  const Json::Object launcher_resources{{"cpu", "1"}, {"memory", "512Mi"}};

  const Json launcher = Json::Object{
      {"replicas", 1},
      // Kubernetes starts the launcher again (in its Job, up to runPolicy.backoffLimit times)
      // when onelearn-run exits non-zero: it resumes from the newest checkpoint on the claim.
      {"restartPolicy", "OnFailure"},
      {"template", Json::Object{{"spec", Json::Object{
          {"containers", Json::Array{Json::Object{
              {"name", "launcher"},
              {"image", o.image},
              {"command", strings(launch)},
              // mpirun starts the ranks through ssh: they see Open MPI's environment list, not
              // the pod's environment.
              {"env", Json::Array{Json::Object{
                  {"name", "OMPI_MCA_mca_base_env_list"},
                  {"value", "OMP_NUM_THREADS=" + std::to_string(threads)}}}},
              {"resources", Json::Object{{"requests", launcher_resources}, {"limits", launcher_resources}}},
              {"volumeMounts", mounts}}}},
          {"volumes", volumes}}}}}};
  const Json worker = Json::Object{
      {"replicas", o.workers},
      // A worker whose container fails (its sshd, the node's OOM killer) starts again in place,
      // with the same host name the hostfile lists.
      {"restartPolicy", "OnFailure"},
      {"template", Json::Object{{"spec", Json::Object{
          {"containers", Json::Array{Json::Object{
              // No command: the operator runs the image's sshd (/usr/sbin/sshd -De).
              {"name", "worker"},
              {"image", o.image},
              {"resources", Json::Object{{"requests", worker_resources}, {"limits", worker_resources}}},
              {"volumeMounts", mounts}}}},
          {"volumes", volumes}}}}}};

  const Json job = Json::Object{
      {"apiVersion", "kubeflow.org/v2beta1"},
      {"kind", "MPIJob"},
      {"metadata", Json::Object{{"name", o.name}, {"labels", Json::Object{{"app.kubernetes.io/created-by", "onelearn-run"}}}}},
      {"spec", Json::Object{
          {"slotsPerWorker", slots},
          {"mpiImplementation", "OpenMPI"},
          {"runPolicy", Json::Object{{"backoffLimit", o.max_restarts}, {"cleanPodPolicy", "Running"}}},
          {"mpiReplicaSpecs", Json::Object{{"Launcher", launcher}, {"Worker", worker}}}}}};
  return job.dump();
}

// ---------------------------------------------------------------------------------------------
// onelearn-run slurm

struct SlurmOptions {
  int np = 1;
  int nodes = 0;  ///< 0: Slurm chooses
  int cpus_per_task = 1;
  std::string time;  ///< empty: the partition's default
  int max_restarts = 3;
  std::string checkpoint_dir;
  std::string job_name = "onelearn";
  std::vector<std::string> program;
};

inline void check(const SlurmOptions& o) {
  const std::string where = "slurm: ";
  if (o.np < 1) throw UsageError{where + "expected --np at least 1, found " + std::to_string(o.np)};
  if (o.nodes < 0 || o.nodes > o.np) {
    throw UsageError{where + "expected --nodes between 1 and --np (" + std::to_string(o.np) + "), found " +
                     std::to_string(o.nodes)};
  }
  if (o.cpus_per_task < 1) {
    throw UsageError{where + "expected --cpus-per-task at least 1, found " + std::to_string(o.cpus_per_task)};
  }
  // sbatch's forms: minutes, minutes:seconds, hours:minutes:seconds, days-hours,
  // days-hours:minutes, days-hours:minutes:seconds.
  static const std::regex time_limit(R"([0-9]+(:[0-9]+){0,2}|[0-9]+-[0-9]+(:[0-9]+){0,2})");
  if (!o.time.empty() && !std::regex_match(o.time, time_limit)) {
    throw UsageError{where + "expected --time as minutes, H:M:S or D-H:M:S, found '" + o.time + "'"};
  }
  if (o.max_restarts < 0) {
    throw UsageError{where + "expected --max-restarts at least 0, found " + std::to_string(o.max_restarts)};
  }
  static const std::regex name("[A-Za-z0-9_.-]+");
  if (!std::regex_match(o.job_name, name)) {
    throw UsageError{where + "expected --job-name of letters, digits, '_', '.', '-', found '" + o.job_name + "'"};
  }
  if (o.checkpoint_dir.find('\n') != std::string::npos) {
    throw UsageError{where + "expected --checkpoint-dir on one line"};
  }
  if (o.program.empty()) throw UsageError{where + "expected a program after --, found none"};
}

/// The batch script; `self` is the onelearn-run that the script runs inside the allocation.
inline std::string slurm_script(const SlurmOptions& o, const std::string& self) {
  check(o);
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "#SBATCH --job-name=" << o.job_name << "\n"
    << "#SBATCH --ntasks=" << o.np << "\n";
  if (o.nodes > 0) s << "#SBATCH --nodes=" << o.nodes << "\n";
  s << "#SBATCH --cpus-per-task=" << o.cpus_per_task << "\n";
  if (!o.time.empty()) s << "#SBATCH --time=" << o.time << "\n";
  s << "#SBATCH --requeue\n"
    << "#SBATCH --open-mode=append\n"
    << "#SBATCH --output=" << o.job_name << "-%j.out\n"
    << "#\n"
    << "# Written by onelearn-run slurm; submit with sbatch. Inside the allocation onelearn-run\n"
    << "# starts the ranks with srun --mpi=pmix and starts them again when one dies, up to\n"
    << "# --max-restarts times; the program resumes from its newest checkpoint. A requeued job\n"
    << "# (scontrol requeue; Slurm starts it again after its requeue delay) runs this script\n"
    << "# again, and resumes the same way.\n"
    << "export OMP_NUM_THREADS=" << o.cpus_per_task << "\n";
  std::vector<std::string> run{self, "--np", std::to_string(o.np), "--max-restarts", std::to_string(o.max_restarts)};
  if (!o.checkpoint_dir.empty()) run.insert(run.end(), {"--checkpoint-dir", o.checkpoint_dir});
  run.emplace_back("--");
  run.insert(run.end(), o.program.begin(), o.program.end());
  s << "exec " << shell_command(run) << "\n";
  return s.str();
}

}  // namespace onelearn_run
