// The human table: one block per collective; rows are (dtype, op, root, size); each series
// (backend, algorithm, placement) gets its own group of columns so backends sit side by side.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <tuple>

#include "common/text_table.hpp"
#include "common/units.hpp"
#include "report/format/record_text.hpp"
#include "report/format/writers.hpp"
#include "report/roof/roof.hpp"

namespace cb {

namespace {

std::string placement_title(const std::string& p) {
  if (p == "out") return "out-of-place";
  if (p == "in") return "in-place";
  return p;
}

class TableWriter : public Writer {
 public:
  explicit TableWriter(std::ostream& out) : out_(out) {}

  void begin(const RunMeta& meta) override { meta_ = meta; }
  void add(const ResultRecord& r) override { records_.push_back(r); }

  void finish() override {
    print_preamble();
    for (const auto& c : collective_order(records_)) print_block(c);
    if (records_.empty()) out_ << "# no results\n";
    print_summary();
    print_imbalance();
    print_roofs();
    print_outlier_warning();
    out_ << std::flush;
  }

 private:
  using RowKey = std::tuple<std::string, std::string, int, std::uint64_t>;  // dtype op root bytes
  using SeriesKey = std::tuple<std::string, std::string, std::string>;      // backend algo place

  void print_preamble() {
    out_ << fmt::format("# commbench {} | {} | {}", meta_.version, libraries_text(meta_),
                        ranks_text(meta_));
    if (!meta_.hosts.empty()) out_ << fmt::format(" ({})", fmt::join(meta_.hosts, ","));
    out_ << "\n";
    if (!meta_.backend_choice.empty()) out_ << "# backends " << meta_.backend_choice << "\n";
    if (meta_.repetitions > 1) {
      out_ << fmt::format("# every figure is the median over {} launches (--repeat)\n",
                          meta_.repetitions);
    }
  }

  void print_block(const std::string& collective) {
    std::vector<RowKey> rows;
    std::vector<SeriesKey> series;
    std::map<std::pair<RowKey, SeriesKey>, const ResultRecord*> cell;
    std::map<RowKey, std::uint64_t> counts;
    std::map<RowKey, const ResultRecord*> first;  // the row's split figures (alltoallv)
    bool split = false, drops = false;
    for (const auto& r : records_) {
      if (collective_label(r) != collective) continue;
      RowKey row{r.dtype, r.op, r.root, r.bytes};
      SeriesKey s{r.backend, series_algorithm(r), r.placement};
      if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
      if (std::find(series.begin(), series.end(), s) == series.end()) series.push_back(s);
      cell[{row, s}] = &r;
      counts[row] = r.count;
      first.emplace(row, &r);
      split = split || r.incast.has_value();
      drops = drops || r.drop_share.has_value();
    }
    bool is_barrier = collective == "barrier";
    TextTable table;
    std::vector<std::string> names = {"size", "count", "type", "redop", "root"};
    if (split) names.insert(names.end(), {"incast", "skew"});
    if (drops) names.push_back("dropped");
    std::vector<TextTable::Align> align(names.size(), TextTable::Align::Right);
    std::vector<std::string> group(names.size());
    group[0] = collective;
    const std::size_t per_series = is_barrier ? 3 : split ? 7 : 6;
    for (const auto& [backend, algo, place] : series) {
      std::vector<std::string> cols =
          is_barrier ? std::vector<std::string>{"time", "p50", "p99"}
                     : std::vector<std::string>{"time",        "p50",    "algbw(GB/s)",
                                                "busbw(GB/s)", "#wrong", "eff"};
      if (split) cols.push_back("tax");
      std::string title = fmt::format("{}/{} {}", backend, algo, placement_title(place));
      for (std::size_t i = 0; i < cols.size(); ++i) {
        names.push_back(cols[i]);
        align.push_back(TextTable::Align::Right);
        group.push_back(i == 0 ? title : "");
      }
    }
    table.add_header_row(group);
    table.set_header(names, align);
    for (const auto& row : rows) {
      const auto& [dtype, op, root, bytes] = row;
      std::vector<std::string> cells = {format_size(bytes), std::to_string(counts[row]), dtype, op,
                                        root < 0 ? "-" : std::to_string(root)};
      if (split) {
        cells.push_back(format_factor(first[row]->incast));
        cells.push_back(format_factor(first[row]->send_skew));
      }
      if (drops) cells.push_back(percent(first[row]->drop_share));
      for (const auto& s : series) {
        auto it = cell.find({row, s});
        if (it == cell.end()) {
          cells.insert(cells.end(), per_series, "");
          continue;
        }
        const ResultRecord& r = *it->second;
        cells.push_back(format_time_us(r.time_us));
        cells.push_back(format_time_us(r.p50_us));
        if (is_barrier) {
          cells.push_back(format_time_us(r.p99_us));
        } else {
          cells.push_back(format_bandwidth(r.algbw_GBps));
          cells.push_back(format_bandwidth(r.busbw_GBps));
          cells.push_back(r.wrong ? std::to_string(*r.wrong) : "N/A");
          cells.push_back(r.efficiency ? fmt::format("{:.2f}", *r.efficiency) : "-");
          if (split) cells.push_back(format_factor(r.imbalance_tax));
        }
      }
      table.add_row(cells);
    }
    out_ << "#\n";
    table.print(out_, "# ");
  }

  // One line per backend and algorithm, as acceptance reads nccl-tests' "Avg bus bandwidth":
  // the peak busbw of each collective, the mean busbw over the cases of 1 MiB and more, and
  // the wrong elements in all.
  void print_summary() {
    using Series = std::pair<std::string, std::string>;  // backend, algorithm
    std::vector<Series> order;
    std::map<Series, std::vector<const ResultRecord*>> by;
    for (const auto& r : records_) {
      Series k{r.backend, r.algorithm};
      if (by[k].empty()) order.push_back(k);
      by[k].push_back(&r);
    }
    if (order.empty()) return;
    out_ << "#\n";
    for (const auto& k : order) {
      std::vector<std::string> peaks;
      std::vector<std::string> seen;
      double big_sum = 0;
      int big_n = 0;
      std::uint64_t wrong = 0;
      bool checked = false;
      for (const ResultRecord* r : by[k]) {
        if (r->wrong) {
          wrong += *r->wrong;
          checked = true;
        }
        if (!r->busbw_GBps) continue;
        if (r->bytes >= (1ULL << 20)) {
          big_sum += *r->busbw_GBps;
          ++big_n;
        }
        const std::string label = collective_label(*r);
        if (std::find(seen.begin(), seen.end(), label) != seen.end()) continue;
        seen.push_back(label);
        double peak = 0;
        for (const ResultRecord* o : by[k]) {
          if (collective_label(*o) == label && o->busbw_GBps) peak = std::max(peak, *o->busbw_GBps);
        }
        peaks.push_back(fmt::format("{} {:.2f}", label, peak));
      }
      out_ << fmt::format(
          "# summary {}/{}: peak busbw (GB/s) {}; avg busbw >= 1 MiB {}; #wrong {}\n", k.first,
          k.second, peaks.empty() ? std::string("-") : fmt::format("{}", fmt::join(peaks, ", ")),
          big_n ? fmt::format("{:.2f} GB/s", big_sum / big_n) : std::string("-"),
          checked ? std::to_string(wrong) : std::string("N/A"));
    }
  }

  // alltoallv: one line per backend, algorithm, placement and split but uniform, at the largest
  // size measured: how uneven the split is and what it cost against its uniform twin.
  void print_imbalance() {
    using Key = std::tuple<std::string, std::string, std::string, std::string>;
    std::vector<Key> order;
    std::map<Key, const ResultRecord*> largest;
    for (const auto& r : records_) {
      if (!r.incast || r.split == "uniform") continue;
      Key k{r.backend, series_algorithm(r), r.placement, r.split};
      auto [it, fresh] = largest.emplace(k, &r);
      if (fresh) order.push_back(k);
      if (r.bytes > it->second->bytes) it->second = &r;
    }
    for (const auto& k : order) {
      const ResultRecord& r = *largest[k];
      std::string line = fmt::format("# imbalance {}/{} {}{}: incast {}, send skew {}", r.backend,
                                     series_algorithm(r), collective_label(r),
                                     r.placement == "in" ? " in-place" : "",
                                     format_factor(r.incast), format_factor(r.send_skew));
      if (r.drop_share) line += fmt::format(", {} of token copies dropped", percent(r.drop_share));
      if (r.imbalance_tax && r.uniform_us) {
        line += fmt::format("; imbalance tax {:.2f} at {} ({} against {} uniform)",
                            *r.imbalance_tax, format_size(r.bytes), format_time_us(r.time_us),
                            format_time_us(*r.uniform_us));
      } else {
        line += "; imbalance tax not measured (its uniform twin was skipped)";
      }
      out_ << line << "\n";
    }
  }

  static std::string percent(const std::optional<double>& share) {
    return share ? fmt::format("{:.1f}%", 100 * *share) : std::string("-");
  }

  // One line per backend, algorithm and collective: its efficiency at the largest sizes, the
  // roof and what the roof came from (or why it is not judged).
  void print_roofs() {
    using Key = std::tuple<std::string, std::string, std::string>;  // backend algo collective
    std::vector<Key> order;
    std::map<Key, std::vector<const ResultRecord*>> by;
    for (const auto& r : records_) {
      if (r.collective == "barrier") continue;
      Key k{r.backend, series_algorithm(r), r.collective};
      if (by[k].empty()) order.push_back(k);
      by[k].push_back(&r);
    }
    for (const auto& k : order) {
      const auto& [backend, algo, collective] = k;
      out_ << fmt::format("# roof {}/{} {}\n", backend, algo,
                          efficiency_line(collective, large_message_efficiency(by[k])));
    }
  }

  // One line for the cases with outliers, their causes as outlier_cause names them; one note for
  // the cases whose slow calls are the library's rhythm, which are not outliers.
  void print_outlier_warning() {
    std::size_t n = 0, faulted = 0, preempted = 0, rhythm = 0;
    double most_faults = 0;
    for (const auto& r : records_) {
      if (shows_slow_calls(r) && r.outlier_cause == kSteadyCause) ++rhythm;
      if (!has_outliers(r)) continue;
      ++n;
      faulted += r.outlier_cause == kPageFaultCause ? 1 : 0;
      preempted += r.outlier_cause == kPreemptedCause ? 1 : 0;
      if (r.outlier_cause == kPageFaultCause) {
        most_faults = std::max(most_faults, r.fault_bytes.value_or(0));
      }
    }
    const std::string cases =
        fmt::format("{} case{}", records_.size(), records_.size() == 1 ? "" : "s");
    if (rhythm > 0) {
      out_ << fmt::format(
          "#\n# note: {} of {} had slow calls in every timed batch, with neither page faults nor "
          "preemption (outlier_cause \"{}\": the library's own rhythm, e.g. flow control of "
          "back-to-back calls; time_us, the mean, includes it as every launch would, so they are "
          "not counted as outliers)\n",
          rhythm, cases, kSteadyCause);
    }
    if (n == 0) return;
    std::vector<std::string> why;
    auto part = [&](std::size_t k, const std::string& text) {
      if (k > 0) why.push_back(fmt::format("{} {}", k == n ? "all" : std::to_string(k), text));
    };
    part(faulted, fmt::format("in timed batches that took page faults (up to {} per call, "
                              "fault_bytes: the library or its allocator mapped memory during "
                              "the calls)",
                              format_size(static_cast<std::uint64_t>(most_faults))));
    part(preempted,
         "in timed batches where a rank was preempted (another process or thread took its core, "
         "a library's own progress thread included: the machine was busy or ranks share cores; "
         "give each rank a core of its own, or quiet the machine)");
    part(n - faulted - preempted,
         "with no cause seen in the process (the host: interrupts, ranks moving between cores; "
         "pin ranks, raise --min-time, or quiet the machine)");
    out_ << fmt::format(
        "#\n# warning: {} of {} had outliers (mean > {:g} x p50 or p99 > {:g} x p50): {}\n", n,
        cases, kOutlierMeanFactor, kOutlierTailFactor, fmt::join(why, "; "));
  }

  std::ostream& out_;
  RunMeta meta_;
  std::vector<ResultRecord> records_;
};

}  // namespace

std::unique_ptr<Writer> make_table_writer(std::ostream& out) {
  return std::make_unique<TableWriter>(out);
}

}  // namespace cb
