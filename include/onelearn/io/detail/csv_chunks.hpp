#pragma once
// Private: the records of a CSV parsed in chunks, in parallel on OpenMP threads when the program
// is compiled with OpenMP (through core/detail/parallel.hpp's for_each_chunk), one after the
// other otherwise, with the same results and the same first error either way.
//
// Where a chunk may start: only after a line end, and only where that line end ends a record.
// A line end inside a quoted field does not, and telling which is which needs the file read from
// the start, so a text that holds a double quote anywhere is parsed as one chunk. Numeric files
// (the large ones) hold none; finding that out is one memchr over the text.
//
// Errors: a chunk cannot throw out of an OpenMP region, so each one keeps its first error, and
// after all of them ran the first error in file order is thrown, its line made the line of the
// whole file by adding the line ends of the chunks before it.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/io/detail/csv_tokenizer.hpp"

namespace onelearn::io::detail {

/// Bytes per chunk, at least: small enough that two to a few dozen threads share a large file
/// evenly, large enough that the per-chunk setup and the merge stay negligible.
inline constexpr std::size_t csv_chunk_bytes = std::size_t{8} << 20;
/// Chunks, at most; a chunk's rows are copied once more when the chunks are merged.
inline constexpr std::size_t csv_max_chunks = 64;

/// `text` cut into pieces that each end just after a line end (the last one at the end of the
/// text), about `text.size() / pieces` bytes each; some may be empty.
inline std::vector<std::string_view> split_at_line_ends(std::string_view text, std::size_t pieces) {
  std::vector<std::string_view> out;
  std::size_t begin = 0;
  for (std::size_t k = 1; k < pieces && begin < text.size(); ++k) {
    std::size_t cut = std::max(begin, text.size() / pieces * k);
    cut = text.find_first_of("\r\n", cut);
    if (cut == std::string_view::npos) break;
    cut += (text[cut] == '\r' && cut + 1 < text.size() && text[cut + 1] == '\n') ? 2 : 1;
    out.push_back(text.substr(begin, cut - begin));
    begin = cut;
  }
  out.push_back(text.substr(begin));
  return out;
}

/// How many chunks to cut `text` into: 1 without OpenMP, for a small text, or when the text
/// holds a double quote (see above).
inline std::size_t csv_chunk_count(std::string_view text) {
#ifdef _OPENMP
  if (text.size() < 2 * csv_chunk_bytes) return 1;
  if (std::memchr(text.data(), '"', text.size()) != nullptr) return 1;
  return std::min(csv_max_chunks, text.size() / csv_chunk_bytes);
#else
  static_cast<void>(text);
  return 1;
#endif
}

/// Parses the records of `text` (the data after any header; its first byte on line
/// `first_line` of the file) in chunks: each is given to a fresh `make()`, whose
/// `parse(CsvTokenizer&)` reads every record of it. Returns the chunks' states in file order.
/// The first error in the file becomes an io_error "<where>:<line><message>".
template <class Make>
auto parse_in_chunks(std::string_view text, std::size_t first_line, char delimiter,
                     const std::string& where, Make make) {
  using Chunk = decltype(make());
  const std::vector<std::string_view> pieces = split_at_line_ends(text, csv_chunk_count(text));
  const std::size_t n = pieces.size();
  std::vector<Chunk> chunks;
  chunks.reserve(n);
  for (std::size_t c = 0; c < n; ++c) chunks.push_back(make());
  std::vector<std::optional<CsvError>> errors(n);
  std::vector<std::exception_ptr> failures(n);
  std::vector<std::size_t> line_ends(n, 0);
  onelearn::detail::for_each_chunk(
      static_cast<index_t>(n), 1, [&](index_t chunk, index_t, index_t) {
        const auto c = static_cast<std::size_t>(chunk);
        try {
          // The first chunk counts the file's lines; the others count from 1 and are shifted
          // below (they hold no quoted line ends, so no message of theirs names a second line).
          CsvTokenizer records(pieces[c], delimiter, c == 0 ? first_line : 1);
          chunks[c].parse(records);
          line_ends[c] = records.line_ends_read();
        } catch (const CsvError& e) {
          errors[c] = e;
        } catch (...) {  // bad_alloc: carried out of the parallel region, rethrown below
          failures[c] = std::current_exception();
        }
      });
  std::size_t lines_before = 0;
  for (std::size_t c = 0; c < n; ++c) {
    if (errors[c]) {
      throw io_error(where + ":" + std::to_string(lines_before + errors[c]->line) +
                     errors[c]->message);
    }
    if (failures[c]) std::rethrow_exception(failures[c]);
    lines_before += line_ends[c] + (c == 0 ? first_line - 1 : 0);
  }
  return chunks;
}

}  // namespace onelearn::io::detail
