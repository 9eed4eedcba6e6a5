#pragma once
// The journal of a search (RunOptions::journal): the rows of every finished batch, so that a
// search that was interrupted (a lost rank, a killed job) resumes without running them again.
//   write_journal  rank 0 writes the search's description and its rows so far, all or nothing
//                  (io/atomic_file.hpp), after every batch; a failure is raised on every rank
//   read_journal   rank 0 reads the file, every rank receives its rows (one broadcast), and a
//                  file of another search (another description) or a damaged one is an error
//                  on every rank; a missing file is an empty journal (a fresh search)
//
// Format: "onelearn tune journal 1\n", the description's length and bytes (describe_run: the
// options and the space, as the ranks compare them), the number of rows, then the rows in
// results.hpp's exact encoding (doubles by their bits), so the resumed table is bit-identical.

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/io/atomic_file.hpp"
#include "onelearn/io/byte_reader.hpp"
#include "onelearn/tune/results.hpp"

namespace onelearn::tune::detail {

inline constexpr std::string_view journal_magic = "onelearn tune journal 1\n";

template <class U>
void append_le(std::string& out, U v) {
  char bytes[sizeof(U)];
  std::memcpy(bytes, &v, sizeof(U));  // onelearn's platforms are little-endian (npy.hpp too)
  out.append(bytes, sizeof(U));
}

/// Rank 0 writes the journal (collective: an error there is raised on every rank).
template <exec::ExecutionPolicy Exec>
void write_journal(const Exec& world, const std::filesystem::path& path,
                   const std::string& description, const std::vector<TrialResult>& rows) {
  world.propagate_errors([&] {
    if (world.rank() != 0) return;
    Writer writer;
    for (const TrialResult& r : rows) writer.row(r);
    const std::vector<std::int64_t> words = writer.words();
    std::string bytes(journal_magic);
    append_le(bytes, static_cast<std::uint64_t>(description.size()));
    bytes += description;
    append_le(bytes, static_cast<std::uint64_t>(rows.size()));
    append_le(bytes, static_cast<std::uint64_t>(words.size()));
    bytes.append(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(std::int64_t));
    io::write_file_atomically(path, bytes);
  });
}

/// The rows of the journal at `path` (none when the file does not exist), on every rank.
template <exec::ExecutionPolicy Exec>
std::vector<TrialResult> read_journal(const Exec& world, const std::filesystem::path& path,
                                      const std::string& description) {
  std::vector<std::int64_t> message;  // [number of rows, the rows' words...]
  world.propagate_errors([&] {
    if (world.rank() != 0) return;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      message = {0};
      return;
    }
    io::ByteReader in(path);
    const std::string where = "tune::run (journal " + path.string() + ")";
    if (in.read_up_to(journal_magic.size()) != journal_magic) {
      throw io_error(where + ": expected a tune journal, found another file");
    }
    const auto described = in.little_endian<std::uint64_t>("the description's length");
    if (described > in.remaining()) {
      throw io_error(where + ": expected a description of " + std::to_string(described) +
                     " bytes, found a truncated file");
    }
    const std::string found = in.read_bytes(described, "the description");
    if (found != description) {
      throw invalid_argument(where + ": expected the journal of this search, found one of " +
                             "another (options or space differ); remove it to start afresh.\n" +
                             "this search:\n" + description + "\nthe journal's:\n" + found);
    }
    const auto n_rows = in.little_endian<std::uint64_t>("the number of rows");
    const auto n_words = in.little_endian<std::uint64_t>("the number of words");
    if (n_words > in.remaining() / sizeof(std::int64_t)) {
      throw io_error(where + ": expected " + std::to_string(n_words) + " words of rows, found a " +
                     "truncated file");
    }
    message.assign(static_cast<std::size_t>(n_words) + 1, 0);
    message[0] = static_cast<std::int64_t>(n_rows);
    in.read(message.data() + 1, n_words * sizeof(std::int64_t), "the rows");
  });
  std::int64_t size = static_cast<std::int64_t>(message.size());
  world.broadcast(std::span<std::int64_t>(&size, 1), 0);
  message.resize(static_cast<std::size_t>(size));
  world.broadcast(std::span<std::int64_t>(message), 0);

  std::vector<TrialResult> rows;
  world.propagate_errors([&] {
    Reader reader(std::span<const std::int64_t>(message).subspan(1));
    for (std::int64_t k = 0; k < message[0]; ++k) {
      try {
        rows.push_back(reader.row());
      } catch (const distributed_error&) {  // the reader's words for a truncated row
        throw io_error("tune::run (journal " + path.string() + "): expected " +
                       std::to_string(message[0]) + " rows, found a truncated row " +
                       std::to_string(k));
      }
      if (rows.back().trial_id != static_cast<std::size_t>(k)) {
        throw io_error("tune::run (journal " + path.string() + "): expected trial " +
                       std::to_string(k) + ", found trial " + std::to_string(rows.back().trial_id));
      }
    }
  });
  return rows;
}

}  // namespace onelearn::tune::detail
