// Markdown: one GitHub-flavoured table per collective, one row per record, under a heading that
// names the run (version, libraries, ranks, hosts). Fit for a pull-request comment or a wiki.
#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "common/units.hpp"
#include "report/format/markdown.hpp"
#include "report/format/record_text.hpp"
#include "report/format/writers.hpp"

namespace cb {

namespace {

class MarkdownWriter : public Writer {
 public:
  explicit MarkdownWriter(std::ostream& out) : out_(out) {}

  void begin(const RunMeta& meta) override { meta_ = meta; }
  void add(const ResultRecord& r) override { records_.push_back(r); }

  void finish() override {
    print_heading();
    for (const auto& c : collective_order(records_)) print_table(c);
    if (records_.empty()) out_ << "No results.\n";
    out_ << std::flush;
  }

 private:
  void print_heading() {
    std::string hosts;
    for (const auto& h : meta_.hosts) hosts += (hosts.empty() ? "" : ", ") + h;
    out_ << fmt::format("### commbench {} · {} · {}{}\n\n", md_escape(meta_.version),
                        md_escape(libraries_text(meta_)), ranks_text(meta_),
                        hosts.empty() ? "" : " (" + md_escape(hosts) + ")");
    if (!meta_.command_line.empty()) {
      out_ << md_code(meta_.command_line);
      if (!meta_.start_time.empty()) out_ << " · started " << md_escape(meta_.start_time);
      out_ << "\n\n";
    }
  }

  void print_table(const std::string& collective) {
    using A = MarkdownTable::Align;
    MarkdownTable t;
    std::vector<std::string> names = {
        "size",      "count", "type", "redop", "root",         "backend/algorithm",
        "placement", "time",  "p50",  "p99",   "algbw (GB/s)", "busbw (GB/s)",
        "#wrong"};
    std::vector<A> align = {A::Right, A::Right, A::Left,  A::Left,  A::Right, A::Left, A::Left,
                            A::Right, A::Right, A::Right, A::Right, A::Right, A::Right};
    bool split = false;
    for (const auto& r : records_) split = split || (collective_label(r) == collective && r.incast);
    if (split) {  // alltoallv: how uneven its split is, and what that cost
      names.insert(names.end(), {"incast", "send skew", "imbalance tax"});
      align.insert(align.end(), {A::Right, A::Right, A::Right});
    }
    t.set_header(names, align);
    for (const auto& r : records_) {
      if (collective_label(r) != collective) continue;
      std::vector<std::string> cells = {format_size(r.bytes),
                                        std::to_string(r.count),
                                        md_escape(r.dtype),
                                        md_escape(r.op),
                                        r.root < 0 ? "-" : std::to_string(r.root),
                                        md_escape(r.backend + "/" + series_algorithm(r)),
                                        md_escape(r.placement),
                                        format_time_us(r.time_us),
                                        format_time_us(r.p50_us),
                                        format_time_us(r.p99_us),
                                        format_bandwidth(r.algbw_GBps),
                                        format_bandwidth(r.busbw_GBps),
                                        r.wrong ? std::to_string(*r.wrong) : "N/A"};
      if (split) {
        cells.insert(cells.end(), {format_factor(r.incast), format_factor(r.send_skew),
                                   format_factor(r.imbalance_tax)});
      }
      t.add_row(cells);
    }
    out_ << "#### " << md_escape(collective) << "\n\n";
    t.print(out_);
    out_ << "\n";
  }

  std::ostream& out_;
  RunMeta meta_;
  std::vector<ResultRecord> records_;
};

}  // namespace

std::unique_ptr<Writer> make_markdown_writer(std::ostream& out) {
  return std::make_unique<MarkdownWriter>(out);
}

}  // namespace cb
