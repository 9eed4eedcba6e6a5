#pragma once
/**
 * \class onelearn::tune::Results
 * \brief The table of a search, one row per trial.
 * \ingroup tuning
 *
 * \code
 * #include <onelearn/tune/results.hpp>
 *
 * onelearn::tune::Results results = onelearn::tune::run(train, space, options);
 * const onelearn::tune::TrialResult& best = results.best();  // the best completed trial
 * double alpha = std::get<double>(best.params[0].second);
 * for (const auto& t : results.trials()) {
 *   // t.trial_id, t.params, t.score, t.status (ok/failed/stopped), t.message, t.reports, t.seconds
 * }
 * results.to_csv("search.csv");   // written to a temporary file, then renamed
 * results.to_json("search.json");
 * \endcode
 *
 * tune::Results: the table of a search, one row per trial in trial-id order. Under exec::mpi
 * every rank holds the same table.
 *
 * Columns of a row (TrialResult): `trial_id`; `params` (name, value) in the space's order;
 * `score` (the returned score; for a stopped trial the last reported one; NaN for a failed
 * trial); `status` (ok, failed, stopped); `message` (the exception's what() for a failed
 * trial, empty otherwise); `reports` (the intermediate scores, whose count is the CSV's
 * `n_reports`); `seconds` (wall time of the training function, the only column that differs
 * between two runs of the same search); `seed` (the trial's seed).
 *
 * CSV: a header `trial_id,status,score,<parameter names>,n_reports,seconds,message`, fields
 * quoted as RFC 4180 where needed, numbers in shortest round-trip form, NaN as an empty field.
 * JSON: `{"mode": "max", "trials": [{"trial_id": 0, "status": "ok", "score": ..., "params":
 * {...}, "reports": [[step, score], ...], "seconds": ..., "message": ""}, ...]}`, NaN as null.
 *
 * Errors: `best()` throws `invalid_argument` when no trial completed; to_csv/to_json throw
 * `io_error` when the file cannot be written (the destination is then left untouched).
 */

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/io/atomic_file.hpp"
#include "onelearn/io/text_writer.hpp"
#include "onelearn/tune/space.hpp"
#include "onelearn/tune/trial.hpp"

namespace onelearn::tune {

/// One row of a search's table.
struct TrialResult {
  std::size_t trial_id = 0;
  ParamList params;
  double score = std::numeric_limits<double>::quiet_NaN();
  Status status = Status::ok;
  std::string message;
  std::vector<Report> reports;
  double seconds = 0.0;
  std::uint64_t seed = 0;
};

/// Whether two rows agree in everything a run determines (all but the wall time); NaN scores
/// compare equal.
inline bool same_outcome(const TrialResult& a, const TrialResult& b) {
  const bool scores = (std::isnan(a.score) && std::isnan(b.score)) || a.score == b.score;
  return a.trial_id == b.trial_id && a.params == b.params && scores && a.status == b.status &&
         a.message == b.message && a.reports == b.reports && a.seed == b.seed;
}

namespace detail {

// The JSON and CSV pieces come from io/text_writer.hpp; ablation.hpp names them as detail::.
using io::csv_field;
using io::json_number;
using io::json_string;

/// A number in a CSV cell: shortest round-trip text, NaN as an empty field.
inline std::string format_number(double x) {
  return std::isnan(x) ? std::string() : io::number_text(x);
}

inline std::string format_value(const ParamValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return format_number(*d);
  return std::get<std::string>(v);
}

inline std::string json_value(const ParamValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return json_string(*s);
  if (const auto* d = std::get_if<double>(&v)) return json_number(*d);
  return format_value(v);
}

/// Writes `text` to `path` through a temporary file renamed into place.
inline void write_text_atomically(const std::filesystem::path& path, const std::string& text) {
  io::write_file_atomically(path, text);
}

// --- Exact serialisation of rows, to gather them across ranks --------------------------------
// Bytes packed 8 to an int64 (the policies move int64, float and double); doubles by their bits,
// so every rank's table is bit-identical to the one the trial's rank computed.

class Writer {
 public:
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void str(std::string_view s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void value(const ParamValue& v) {
    u64(v.index());
    std::visit(
        [&](const auto& x) {
          using V = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<V, bool>) u64(x ? 1 : 0);
          else if constexpr (std::is_same_v<V, std::int64_t>) u64(static_cast<std::uint64_t>(x));
          else if constexpr (std::is_same_v<V, double>) f64(x);
          else str(x);
        },
        v);
  }
  void row(const TrialResult& r) {
    u64(r.trial_id);
    u64(r.params.size());
    for (const auto& [name, v] : r.params) {
      str(name);
      value(v);
    }
    f64(r.score);
    u64(static_cast<std::uint64_t>(r.status));
    str(r.message);
    u64(r.reports.size());
    for (const Report& rep : r.reports) {
      u64(static_cast<std::uint64_t>(rep.step));
      f64(rep.score);
    }
    f64(r.seconds);
    u64(r.seed);
  }
  /// The bytes so far, zero-padded to whole int64 words.
  [[nodiscard]] std::vector<std::int64_t> words() const {
    std::vector<std::int64_t> out((bytes_.size() + 7) / 8, 0);
    if (!bytes_.empty()) std::memcpy(out.data(), bytes_.data(), bytes_.size());
    return out;
  }

 private:
  void raw(const void* p, std::size_t n) {
    const auto* c = static_cast<const char*>(p);
    bytes_.insert(bytes_.end(), c, c + n);
  }
  std::vector<char> bytes_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::int64_t> words)
      : data_(reinterpret_cast<const char*>(words.data())), size_(words.size() * 8) {}

  std::uint64_t u64() {
    std::uint64_t v = 0;
    raw(&v, sizeof v);
    return v;
  }
  double f64() {
    double v = 0;
    raw(&v, sizeof v);
    return v;
  }
  std::string str() {
    const std::uint64_t n = u64();
    check(n);
    std::string s(data_ + pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return s;
  }
  ParamValue value() {
    switch (u64()) {
      case 0: return u64() != 0;
      case 1: return static_cast<std::int64_t>(u64());
      case 2: return f64();
      default: return str();
    }
  }
  TrialResult row() {
    TrialResult r;
    r.trial_id = static_cast<std::size_t>(u64());
    const std::uint64_t n_params = u64();
    for (std::uint64_t i = 0; i < n_params; ++i) {
      std::string name = str();
      r.params.emplace_back(std::move(name), value());
    }
    r.score = f64();
    r.status = static_cast<Status>(u64());
    r.message = str();
    const std::uint64_t n_reports = u64();
    for (std::uint64_t i = 0; i < n_reports; ++i) {
      const auto step = static_cast<std::int64_t>(u64());
      r.reports.push_back({step, f64()});
    }
    r.seconds = f64();
    r.seed = u64();
    return r;
  }

 private:
  void check(std::uint64_t n) const {
    if (n > size_ - pos_) {
      throw distributed_error("tune: expected a complete row from every rank, found a truncated "
                              "one");
    }
  }
  void raw(void* p, std::size_t n) {
    check(n);
    if (n > 0) std::memcpy(p, data_ + pos_, n);  // never with a null pointer
    pos_ += n;
  }
  const char* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace detail

class Results {
 public:
  Results() = default;
  Results(std::vector<TrialResult> trials, Mode mode) : trials_(std::move(trials)), mode_(mode) {}

  [[nodiscard]] const std::vector<TrialResult>& trials() const noexcept { return trials_; }
  [[nodiscard]] std::size_t size() const noexcept { return trials_.size(); }
  [[nodiscard]] const TrialResult& operator[](std::size_t i) const { return trials_.at(i); }
  [[nodiscard]] Mode mode() const noexcept { return mode_; }

  /// The completed (status ok) trial with the best score; the first such trial on ties.
  [[nodiscard]] const TrialResult& best() const {
    const TrialResult* best = nullptr;
    std::size_t failed = 0;
    std::size_t stopped = 0;
    for (const TrialResult& t : trials_) {
      if (t.status == Status::failed) ++failed;
      if (t.status == Status::stopped) ++stopped;
      if (t.status != Status::ok) continue;
      if (best == nullptr || (mode_ == Mode::max ? t.score > best->score : t.score < best->score))
        best = &t;
    }
    if (best == nullptr) {
      throw invalid_argument("Results::best: expected at least one completed trial, found none (" +
                             std::to_string(trials_.size()) + " trials: " +
                             std::to_string(failed) + " failed, " + std::to_string(stopped) +
                             " stopped)");
    }
    return *best;
  }

  /// Whether both tables hold the same trials with the same outcomes (wall times aside).
  [[nodiscard]] bool same_outcomes(const Results& other) const {
    if (mode_ != other.mode_ || trials_.size() != other.trials_.size()) return false;
    for (std::size_t i = 0; i < trials_.size(); ++i) {
      if (!same_outcome(trials_[i], other.trials_[i])) return false;
    }
    return true;
  }

  [[nodiscard]] std::string csv() const {
    std::vector<std::string> names;  // every parameter name, in order of first appearance
    for (const TrialResult& t : trials_) {
      for (const auto& [name, v] : t.params) {
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
    }
    io::CsvWriter out;
    out.field("trial_id").field("status").field("score");
    for (const std::string& n : names) out.field(n);
    out.field("n_reports").field("seconds").field("message").end_row();
    for (const TrialResult& t : trials_) {
      out.field(t.trial_id).field(to_string(t.status)).field(detail::format_number(t.score));
      for (const std::string& n : names) {
        const auto it = std::find_if(t.params.begin(), t.params.end(),
                                     [&](const auto& param) { return param.first == n; });
        out.field(it != t.params.end() ? detail::format_value(it->second) : std::string());
      }
      out.field(t.reports.size()).field(detail::format_number(t.seconds)).field(t.message);
      out.end_row();
    }
    return out.text();
  }

  [[nodiscard]] std::string json() const {
    std::string out = std::string("{\"mode\": \"") + (mode_ == Mode::max ? "max" : "min") +
                      "\", \"trials\": [";
    for (std::size_t i = 0; i < trials_.size(); ++i) {
      const TrialResult& t = trials_[i];
      out += (i == 0 ? "\n  " : ",\n  ");
      out += "{\"trial_id\": " + std::to_string(t.trial_id) + ", \"status\": \"" +
             std::string(to_string(t.status)) + "\", \"score\": " + detail::json_number(t.score) +
             ", \"params\": {";
      for (std::size_t k = 0; k < t.params.size(); ++k) {
        out += (k == 0 ? "" : ", ") + detail::json_string(t.params[k].first) + ": " +
               detail::json_value(t.params[k].second);
      }
      out += "}, \"reports\": [";
      for (std::size_t k = 0; k < t.reports.size(); ++k) {
        out += (k == 0 ? "[" : ", [") + std::to_string(t.reports[k].step) + ", " +
               detail::json_number(t.reports[k].score) + "]";
      }
      out += "], \"seconds\": " + detail::json_number(t.seconds) +
             ", \"seed\": " + std::to_string(t.seed) +
             ", \"message\": " + detail::json_string(t.message) + "}";
    }
    return out + (trials_.empty() ? "]}\n" : "\n]}\n");
  }

  /// Writes csv() to `path` (temporary file, then rename).
  void to_csv(const std::filesystem::path& path) const { detail::write_text_atomically(path, csv()); }
  /// Writes json() to `path` (temporary file, then rename).
  void to_json(const std::filesystem::path& path) const {
    detail::write_text_atomically(path, json());
  }

 private:
  std::vector<TrialResult> trials_;
  Mode mode_ = Mode::max;
};

}  // namespace onelearn::tune
