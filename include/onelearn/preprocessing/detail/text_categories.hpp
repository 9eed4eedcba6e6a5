#pragma once
// The distinct strings of text columns over the rows of every rank (private header):
// LabelEncoder<std::string>'s classes (one column) and OneHotEncoder<std::string>'s categories.
//
// Each rank sorts and dedups its columns; one all-gather moves every rank's distinct strings as
// exec's packing of named values (length-prefixed bytes in int64 words, the one all-gather every
// policy moves), each string named by its column, and the receiver merges, sorts and dedups per
// column. The traffic is the distinct strings per rank, not the rows. Strings sort by their
// bytes: for UTF-8 the code-point order Python sorts str in, so categories come out in
// scikit-learn's order.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/exec/detail/named_values.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::preprocessing::detail {

/// `strings` sorted ascending by bytes, without repeats.
inline std::vector<std::string> sorted_unique(std::vector<std::string> strings) {
  std::sort(strings.begin(), strings.end());
  strings.erase(std::unique(strings.begin(), strings.end()), strings.end());
  return strings;
}

/// For each of this rank's columns (`mine[j]`: the column's distinct strings, any order), the
/// sorted distinct strings of that column over every rank. Collective under a distributed
/// policy; every rank must pass the same number of columns (checked by the caller).
template <exec::ExecutionPolicy Exec>
std::vector<std::vector<std::string>> gather_text_categories(
    const Exec& exec, std::vector<std::vector<std::string>> mine) {
  for (auto& column : mine) column = sorted_unique(std::move(column));
  if constexpr (!Exec::is_distributed) {
    return mine;
  } else {
    std::vector<exec::NamedValue> values;
    for (std::size_t j = 0; j < mine.size(); ++j) {
      for (std::string& text : mine[j]) values.push_back({std::to_string(j), std::move(text)});
    }
    const std::vector<std::int64_t> packed = exec::detail::pack(values);
    const std::vector<std::int64_t> all = exec.allgatherv(std::span<const std::int64_t>(packed));
    std::vector<std::vector<std::string>> merged(mine.size());
    for (auto& rank : exec::detail::unpack(all)) {
      for (exec::NamedValue& value : rank) {
        const std::size_t column = std::stoul(value.name);
        if (column < merged.size()) merged[column].push_back(std::move(value.text));
      }
    }
    for (auto& column : merged) column = sorted_unique(std::move(column));
    return merged;
  }
}

}  // namespace onelearn::preprocessing::detail
