#pragma once
// The returns and lengths of the last 100 finished training episodes (Stable-Baselines3's
// ep_info_buffer), what learn() logs as episode_return and episode_length.
//
// Under a distributed policy each rank records the episodes of its own copies, keyed by when
// and where they ended (global step, global copy index); flush() gathers every rank's and
// appends them in key order, which is the order one process stepping all copies records them
// in. So the logs, and any callback that reads them (EarlyStopping, StopOnReturnThreshold),
// are the same on every rank and equal to one process's.

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "onelearn/core/types.hpp"

namespace onelearn::rl::detail {

/// Every rank's episodes, given flat as (key, return, length) triples, in key order: one
/// all-gather. The key (global step * copies + global copy) is the order in which one process
/// stepping every copy meets them.
template <class Exec>
std::vector<std::array<double, 3>> gather_episodes(const Exec& exec, std::span<const double> mine) {
  const std::vector<double> all = exec.allgatherv(mine);
  std::vector<std::array<double, 3>> episodes;
  for (std::size_t i = 0; i + 2 < all.size(); i += 3) episodes.push_back({all[i], all[i + 1], all[i + 2]});
  std::sort(episodes.begin(), episodes.end(), [](const auto& a, const auto& b) { return a[0] < b[0]; });
  return episodes;
}

class EpisodeStats {
 public:
  static constexpr std::size_t window = 100;

  /// An episode of one of this rank's copies ended (key: global step * copies + global copy).
  void record(double key, double episode_return, double length) {
    pending_.insert(pending_.end(), {key, episode_return, length});
  }

  /// Appends the episodes recorded since the last flush, every rank's, in key order.
  template <class Exec>
  void flush(const Exec& exec) {
    const auto episodes = gather_episodes(exec, pending_);
    pending_.clear();
    for (const auto& e : episodes) push(e[1], e[2]);
  }

  void push(double episode_return, double length) {
    returns_.push_back(episode_return);
    lengths_.push_back(length);
    if (returns_.size() > window) {
      returns_.pop_front();
      lengths_.pop_front();
    }
    ++episodes_;
  }

  [[nodiscard]] bool empty() const noexcept { return returns_.empty(); }
  [[nodiscard]] double mean_return() const { return mean(returns_); }
  [[nodiscard]] double mean_length() const { return mean(lengths_); }
  [[nodiscard]] std::int64_t episodes() const noexcept { return episodes_; }
  [[nodiscard]] const std::deque<double>& returns() const noexcept { return returns_; }
  [[nodiscard]] const std::deque<double>& lengths() const noexcept { return lengths_; }

  /// Replaces the window (a checkpoint's).
  void restore(std::vector<double> returns, std::vector<double> lengths, std::int64_t episodes) {
    returns_.assign(returns.begin(), returns.end());
    lengths_.assign(lengths.begin(), lengths.end());
    episodes_ = episodes;
    pending_.clear();
  }

 private:
  static double mean(const std::deque<double>& v) {
    double s = 0;
    for (const double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  }

  std::deque<double> returns_, lengths_;
  std::vector<double> pending_;  // (key, return, length) triples of this rank
  std::int64_t episodes_ = 0;
};

}  // namespace onelearn::rl::detail
