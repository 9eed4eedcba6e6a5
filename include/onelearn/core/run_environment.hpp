#pragma once
/**
 * \file
 * \brief What onelearn-run tells the program it starts (attempt, checkpoint directory).
 * \ingroup core
 *
 * <!-- example-context: nn -->
 * \code
 * #include <onelearn/core/run_environment.hpp>
 *
 * const auto dir = onelearn::run::checkpoint_dir();   // onelearn-run --checkpoint-dir, or none
 * nn::ModelCheckpoint every_epoch(dir / "epoch{epoch}.olc", {.keep_last = 3});
 * model.fit(X, y, {.epochs = 20, .resume_from = nn::latest_checkpoint(model, dir)}, every_epoch);
 * if (onelearn::run::attempt() > 0) std::cerr << "restarted after a failure\n";
 * \endcode
 *
 * What `onelearn-run` (tools/onelearn_run.cpp) tells the program it starts, through the
 * environment of every rank:
 * - `ONELEARN_RUN_ATTEMPT`: 0 for the first start, 1 after the first restart, ...
 * - `ONELEARN_RUN_MAX_RESTARTS`: the restarts allowed in all (`--max-restarts`).
 * - `ONELEARN_RUN_NP`: the ranks of this attempt (fewer than asked when slots were lost).
 * - `ONELEARN_CHECKPOINT_DIR`: `--checkpoint-dir` as an absolute path (unset without it).
 * A program started another way (by hand, by mpirun) sees none of them: attempt 0, no directory.
 *
 * Errors: `invalid_argument` when a variable holds something other than what onelearn-run
 * writes (a number that is not one).
 */

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"

namespace onelearn::run {

namespace detail {

inline std::int64_t integer_variable(const char* name, std::int64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < 0) {
    throw invalid_argument(std::string(name) + ": expected a non-negative integer, found '" +
                           std::string(text) + "'");
  }
  return value;
}

}  // namespace detail

/// Which start of the program this is: 0 first, k after the k-th restart.
inline int attempt() { return static_cast<int>(detail::integer_variable("ONELEARN_RUN_ATTEMPT", 0)); }

/// The restarts onelearn-run allows in all (0 when not started by onelearn-run).
inline int max_restarts() {
  return static_cast<int>(detail::integer_variable("ONELEARN_RUN_MAX_RESTARTS", 0));
}

/// The directory for checkpoints that survive a restart; empty when none was given.
inline std::filesystem::path checkpoint_dir() {
  const char* text = std::getenv("ONELEARN_CHECKPOINT_DIR");
  return text == nullptr ? std::filesystem::path{} : std::filesystem::path(text);
}

}  // namespace onelearn::run
