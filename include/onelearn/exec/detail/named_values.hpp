#pragma once
// The pieces of exec::collectives::check_same_values that need no communication:
//   digest               a 63-bit FNV-1a hash of the names and texts, the one number the ranks
//                        compare (by a min and a max in one all-reduce) when all goes well;
//   pack / unpack        the values as int64 words (length-prefixed bytes), for the allgatherv
//                        that follows only when the digests differ;
//   disagreement_message the first setting that differs, with each distinct value and the
//                        ranks that hold it: "Ridge.fit: ranks disagree on alpha: 1 on ranks 0
//                        and 2, 100 on rank 1".

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/exec/policy.hpp"

namespace onelearn::exec::detail {

inline void fnv1a(std::uint64_t& hash, std::string_view bytes) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
}

/// Non-negative, so that min(digest) == -min(-digest) says every rank sent the same one.
inline std::int64_t digest(std::span<const NamedValue> values) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const NamedValue& v : values) {
    // The lengths go in too, so that ("ab", "c") and ("a", "bc") differ.
    fnv1a(hash, std::to_string(v.name.size()) + ':' + v.name);
    fnv1a(hash, std::to_string(v.text.size()) + ':' + v.text);
  }
  return static_cast<std::int64_t>(hash >> 1);
}

/// [count, then per value: name length, text length] followed by all the bytes, 8 per word;
/// the whole prefixed by its own number of words, so that ranks' packs can be concatenated.
inline std::vector<std::int64_t> pack(std::span<const NamedValue> values) {
  std::vector<std::int64_t> header{static_cast<std::int64_t>(values.size())};
  std::string bytes;
  for (const NamedValue& v : values) {
    header.push_back(static_cast<std::int64_t>(v.name.size()));
    header.push_back(static_cast<std::int64_t>(v.text.size()));
    bytes += v.name;
    bytes += v.text;
  }
  const std::size_t byte_words = (bytes.size() + 7) / 8;
  std::vector<std::int64_t> words{static_cast<std::int64_t>(header.size() + byte_words)};
  words.insert(words.end(), header.begin(), header.end());
  const std::size_t at = words.size();
  words.resize(at + byte_words, 0);
  if (!bytes.empty()) std::memcpy(words.data() + at, bytes.data(), bytes.size());
  return words;
}

/// Every rank's values from the concatenation of their packs (a malformed pack, which only a
/// broken backend could deliver, reads as no values rather than past the end).
inline std::vector<std::vector<NamedValue>> unpack(std::span<const std::int64_t> words) {
  std::vector<std::vector<NamedValue>> ranks;
  for (std::size_t pos = 0; pos < words.size();) {
    const auto length = static_cast<std::size_t>(words[pos]);
    std::vector<NamedValue>& mine = ranks.emplace_back();
    if (words[pos] < 1 || length > words.size() - pos - 1) break;
    const std::span<const std::int64_t> pack = words.subspan(pos + 1, length);
    pos += length + 1;
    const auto count = static_cast<std::size_t>(pack[0]);
    if (pack[0] < 0 || 1 + 2 * count > pack.size()) continue;
    const std::size_t byte_capacity = (pack.size() - 1 - 2 * count) * 8;
    const char* bytes = reinterpret_cast<const char*>(pack.data() + 1 + 2 * count);
    std::size_t offset = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const auto name_size = static_cast<std::size_t>(pack[1 + 2 * i]);
      const auto text_size = static_cast<std::size_t>(pack[2 + 2 * i]);
      if (name_size > byte_capacity - offset || text_size > byte_capacity - offset - name_size) break;
      mine.push_back({std::string(bytes + offset, name_size),
                      std::string(bytes + offset + name_size, text_size)});
      offset += name_size + text_size;
    }
  }
  return ranks;
}

/// "rank 3", "ranks 0 and 2", "ranks 0, 2-5 and 7": ascending ranks, runs shortened.
inline std::string rank_list(std::span<const int> ranks) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    parts.push_back(j >= i + 2 ? std::to_string(ranks[i]) + "-" + std::to_string(ranks[j])
                               : std::to_string(ranks[i]));
    if (j == i + 1) parts.push_back(std::to_string(ranks[j]));
    i = j + 1;
  }
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  }
  return out;
}

/// The message for ranks whose values differ: the first position where any rank's name or
/// text differs from another's, then each distinct value in order of its first rank.
inline std::string disagreement_message(std::string_view where,
                                        const std::vector<std::vector<NamedValue>>& ranks) {
  std::size_t longest = 0;
  for (const auto& values : ranks) longest = std::max(longest, values.size());
  auto entry = [&](std::size_t r, std::size_t i) -> std::optional<NamedValue> {
    if (i < ranks[r].size()) return ranks[r][i];
    return std::nullopt;
  };
  auto same = [](const std::optional<NamedValue>& a, const std::optional<NamedValue>& b) {
    return a.has_value() == b.has_value() && (!a || (a->name == b->name && a->text == b->text));
  };
  for (std::size_t i = 0; i < longest; ++i) {
    bool all_same = true;
    for (std::size_t r = 1; r < ranks.size(); ++r) all_same = all_same && same(entry(r, i), entry(0, i));
    if (all_same) continue;
    // One name for all (the usual case: the same setting, different values), or name=value.
    std::string name;
    bool one_name = true;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      if (const auto e = entry(r, i)) {
        if (name.empty()) name = e->name;
        one_name = one_name && e->name == name;
      } else {
        one_name = false;
      }
    }
    std::vector<std::optional<NamedValue>> distinct;
    std::vector<std::vector<int>> holders;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const auto e = entry(r, i);
      std::size_t k = 0;
      while (k < distinct.size() && !same(distinct[k], e)) ++k;
      if (k == distinct.size()) {
        distinct.push_back(e);
        holders.emplace_back();
      }
      holders[k].push_back(static_cast<int>(r));
    }
    std::string message = std::string(where) + ": ranks disagree on " +
                          (one_name ? name : std::string("the settings")) + ": ";
    for (std::size_t k = 0; k < distinct.size(); ++k) {
      const auto& e = distinct[k];
      const std::string shown = !e ? "nothing" : one_name ? e->text : e->name + "=" + e->text;
      message += (k == 0 ? "" : ", ") + shown + " on " + rank_list(holders[k]);
    }
    return message + "; expected the same on every rank";
  }
  // The digests differed but the values did not: a hash collision cannot be told from this.
  return std::string(where) + ": ranks disagree on their settings (their digests differ)";
}

}  // namespace onelearn::exec::detail
