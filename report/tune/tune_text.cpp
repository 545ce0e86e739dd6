#include "report/tune/tune_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <tuple>

#include "common/text_table.hpp"
#include "common/units.hpp"
#include "report/tune/tune.hpp"

namespace cb {

namespace {

using CaseKey =
    std::tuple<std::string, std::string, std::string, std::string, std::string, int, int,
               std::string>;  // backend, collective, dtype, op, placement, root, nranks, split

// "alltoallv zipf:1.2": the collective with the split it measured, where it has one.
std::string collective_text(const std::string& collective, const std::string& split) {
  return split.empty() ? collective : collective + " " + split;
}

bool valid(const ResultRecord& r) {
  return !r.wrong || *r.wrong == 0;
}

// The current default: the library's own choice in the environment as it is.
bool is_reference(const ResultRecord& r) {
  return r.env.empty() && is_default_algorithm(r.algorithm);
}

std::string heading(const ResultRecord& r, std::size_t candidates, std::size_t shown) {
  std::string where =
      fmt::format("{} {} {} {} {}", collective_text(r.collective, r.split), r.backend, r.dtype,
                  r.op, r.placement == "in" ? "in-place" : "out-of-place");
  if (r.root >= 0) where += fmt::format(" root {}", r.root);
  std::string which = candidates <= shown
                          ? fmt::format("{} candidates per size, fastest first", candidates)
                          : fmt::format(
                                "{} candidates per size, the fastest {} and the current default "
                                "(--side-by-side shows all)",
                                candidates, shown);
  return fmt::format("# {}, {} ranks: {}", where, r.nranks, which);
}

}  // namespace

void print_candidates(const std::vector<ResultRecord>& records, std::size_t shown,
                      std::ostream& out) {
  std::vector<CaseKey> order;
  std::map<CaseKey, std::map<std::uint64_t, std::vector<const ResultRecord*>>> groups;
  for (const auto& r : records) {
    CaseKey key{r.backend, r.collective, r.dtype, r.op, r.placement, r.root, r.nranks, r.split};
    if (!groups.count(key)) order.push_back(key);
    groups[key][r.bytes].push_back(&r);
  }
  for (const auto& key : order) {
    const auto& sizes = groups[key];
    std::size_t candidates = 0;
    for (const auto& [bytes, at] : sizes) candidates = std::max(candidates, at.size());
    TextTable t;
    using A = TextTable::Align;
    t.set_header({"size", "candidate", "time", "p50", "busbw(GB/s)", "vs default", "#wrong"},
                 {A::Right, A::Left, A::Right, A::Right, A::Right, A::Right, A::Right});
    for (auto [bytes, at] : sizes) {
      // Validated candidates first, each group by time.
      std::stable_sort(at.begin(), at.end(), [](const ResultRecord* a, const ResultRecord* b) {
        if (valid(*a) != valid(*b)) return valid(*a);
        return a->time_us < b->time_us;
      });
      const ResultRecord* reference = nullptr;
      for (const ResultRecord* r : at) {
        if (is_reference(*r)) reference = r;
      }
      for (std::size_t i = 0; i < at.size(); ++i) {
        const ResultRecord& r = *at[i];
        if (i >= shown && &r != reference) continue;
        const std::string gain = reference && r.time_us > 0
                                     ? fmt::format("{:.2f}x", reference->time_us / r.time_us)
                                     : "-";
        t.add_row({format_size(bytes), series_algorithm(r), format_time_us(r.time_us),
                   format_time_us(r.p50_us),
                   r.busbw_GBps ? fmt::format("{:.2f}", *r.busbw_GBps) : "-", gain,
                   r.wrong ? std::to_string(*r.wrong) : "-"});
      }
    }
    out << heading(*sizes.begin()->second.front(), candidates, shown) << "\n";
    t.print(out, "# ");
  }
  out << std::flush;
}

void print_advice(const std::vector<TuneRange>& ranges, const std::string& what,
                  std::ostream& out) {
  TextTable t;
  using A = TextTable::Align;
  t.set_header(
      {"backend", "collective", "dtype", "op", "placement", "sizes", "use", "speedup", "margin"},
      {A::Left, A::Left, A::Left, A::Left, A::Left, A::Right, A::Left, A::Right, A::Right});
  for (const auto& r : ranges) {
    std::string sizes =
        r.min_bytes == r.max_bytes
            ? format_size(r.min_bytes)
            : fmt::format("{} - {}", format_size(r.min_bytes), format_size(r.max_bytes));
    t.add_row({r.backend, collective_text(r.collective, r.split), r.dtype, r.op, r.placement, sizes,
               r.algorithm, fmt::format("{:.2f}x", r.speedup),
               fmt::format("{:.1f}%", 100 * r.margin)});
  }
  out << "#\n# tune: " << what << "\n";
  t.print(out, "# ");
  out << std::flush;
}

}  // namespace cb
