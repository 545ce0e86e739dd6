#include "report/replay/replay_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "common/csv.hpp"
#include "common/text_table.hpp"
#include "common/units.hpp"

namespace cb {

namespace {

std::string mb_text(const std::optional<double>& mb) {
  return mb ? fmt::format("{:g} MiB", *mb) : "-";
}

std::string percent(const std::optional<double>& f) {
  if (!f) return "-";
  const double p = *f * 100;
  return fmt::format("{:.1f}%", p > -0.05 && p < 0 ? 0.0 : p);  // no "-0.0%"
}

std::string number(double v) {
  return fmt::format("{:.6g}", v);
}

std::string optional_number(const std::optional<double>& v) {
  return v ? number(*v) : "";
}

// The collectives a setting's step issues, as its answer names them.
std::string collectives_text(const ReplayRecord& r) {
  std::vector<std::string> names;
  for (const auto& op : r.ops) {
    if (std::find(names.begin(), names.end(), op.collective) == names.end()) {
      names.push_back(op.collective);
    }
  }
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  }
  return s.empty() ? "communication" : s;
}

}  // namespace

std::string replay_answer(const ReplayRecord& r) {
  const bool ddp = r.pattern == "ddp";
  const std::string setting =
      ddp ? fmt::format("{}, bucket cap {}", r.backend, mb_text(r.bucket_cap_mb))
          : fmt::format("{}, {}", r.backend, r.pattern);
  std::size_t units = 0;
  for (const auto& op : r.ops) units += op.collective == "reduce_scatter" ? 1 : 0;
  const std::string count =
      ddp ? fmt::format("{} bucket{}", r.ops.size(), r.ops.size() == 1 ? "" : "s")
          : fmt::format("{} unit{}", units, units == 1 ? "" : "s");
  const std::string compute = r.compute_us > 0
                                  ? fmt::format("behind a {} {}", format_time_us(r.compute_us),
                                                ddp ? "backward" : "forward and backward")
                                  : "with no compute to hide behind";
  const std::string overlap = r.overlap ? fmt::format(" (overlap {})", percent(r.overlap)) : "";
  return fmt::format("{} on {} rank{} ({}): {}, {} of {}, {} of it exposed {}{}", r.model,
                     r.nranks, r.nranks == 1 ? "" : "s", setting, count,
                     format_time_us(r.comm_us), collectives_text(r), format_time_us(r.exposed_us),
                     compute, overlap);
}

void write_replay_table(const ReplayReport& report, std::ostream& out) {
  for (const auto& v : report.verdicts) out << "# replay: " << v.line << "\n";
  if (!report.verdicts.empty()) out << "#\n";
  if (!report.records.empty()) {
    const ReplayRecord& first = report.records.front();
    out << fmt::format(
        "# replay {}: {} parameters, {}; {} timed steps{} after {} warm-up, each its slowest "
        "rank's; medians{}\n",
        first.model, first.params, format_size(first.bytes), first.steps,
        first.launches.empty() ? ""
                               : fmt::format(" in all over {} launches", first.launches.size()),
        first.warmup, first.launches.empty() ? "" : " over the launches");
  }
  for (const auto& r : report.records) out << "# " << replay_answer(r) << "\n";
  TextTable t;
  using A = TextTable::Align;
  t.set_header({"backend", "pattern", "cap", "first", "colls", "step", "min", "max", "compute",
                "comm", "exposed", "overlap", "#wrong"},
               {A::Left, A::Left, A::Right, A::Right, A::Right, A::Right, A::Right, A::Right,
                A::Right, A::Right, A::Right, A::Right, A::Right});
  for (const auto& r : report.records) {
    t.add_row({r.backend, r.pattern, mb_text(r.bucket_cap_mb), mb_text(r.first_bucket_mb),
               std::to_string(r.ops.size()), format_time_us(r.step_us),
               format_time_us(r.step_min_us), format_time_us(r.step_max_us),
               format_time_us(r.compute_us), format_time_us(r.comm_us),
               format_time_us(r.exposed_us), percent(r.overlap),
               r.wrong ? std::to_string(*r.wrong) : "-"});
  }
  out << "#\n";
  t.print(out, "# ");
  for (const auto& r : report.records) {
    out << "#\n# " << r.setting()
        << ": each collective in issue order; times from the step's start\n";
    TextTable ops;
    ops.set_header({"#", "collective", "dtype", "phase", "label", "tensors", "params", "bytes",
                    "start", "end", "time"},
                   {A::Right, A::Left, A::Left, A::Left, A::Left, A::Right, A::Right, A::Right,
                    A::Right, A::Right, A::Right});
    for (const auto& op : r.ops) {
      ops.add_row({std::to_string(op.index), op.collective, op.dtype, op.phase, op.label,
                   std::to_string(op.tensors), std::to_string(op.params), format_size(op.bytes),
                   format_time_us(op.start_us), format_time_us(op.end_us),
                   format_time_us(op.time_us)});
    }
    ops.print(out, "# ");
  }
  out << std::flush;
}

const std::vector<std::string>& replay_csv_columns() {
  static const std::vector<std::string> columns = {
      "row",        "backend",    "library",       "pattern",         "model",
      "nranks",     "nnodes",     "bucket_cap_mb", "first_bucket_mb", "repeat",
      "warmup",     "steps",      "step_us",       "step_min_us",     "step_max_us",
      "compute_us", "comm_us",    "exposed_us",    "overlap",         "wrong",
      "op",         "collective", "dtype",         "phase",           "label",
      "tensors",    "params",     "count",         "bytes",           "start_us",
      "end_us",     "time_us"};
  return columns;
}

namespace {

void csv_rows(const ReplayRecord& r, std::ostream& out) {
  const std::vector<std::string> id = {r.backend,
                                       r.library,
                                       r.pattern,
                                       r.model,
                                       std::to_string(r.nranks),
                                       std::to_string(r.nnodes),
                                       optional_number(r.bucket_cap_mb),
                                       optional_number(r.first_bucket_mb),
                                       r.repeat ? std::to_string(*r.repeat) : ""};
  std::vector<std::string> step = {"step"};
  step.insert(step.end(), id.begin(), id.end());
  step.insert(step.end(), {std::to_string(r.warmup),
                           std::to_string(r.steps),
                           number(r.step_us),
                           number(r.step_min_us),
                           number(r.step_max_us),
                           number(r.compute_us),
                           number(r.comm_us),
                           number(r.exposed_us),
                           optional_number(r.overlap),
                           r.wrong ? std::to_string(*r.wrong) : "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           std::to_string(r.params),
                           "",
                           std::to_string(r.bytes),
                           "",
                           "",
                           ""});
  out << csv_line(step) << "\n";
  for (const auto& op : r.ops) {
    std::vector<std::string> row = {"op"};
    row.insert(row.end(), id.begin(), id.end());
    row.insert(row.end(), 10, "");
    row.insert(row.end(), {std::to_string(op.index), op.collective, op.dtype, op.phase, op.label,
                           std::to_string(op.tensors), std::to_string(op.params),
                           std::to_string(op.count), std::to_string(op.bytes), number(op.start_us),
                           number(op.end_us), number(op.time_us)});
    out << csv_line(row) << "\n";
  }
}

}  // namespace

void write_replay_csv(const ReplayReport& report, std::ostream& out) {
  out << csv_line(replay_csv_columns()) << "\n";
  for (const auto& r : report.records) {
    csv_rows(r, out);
    for (const auto& l : r.launches) csv_rows(l, out);
  }
  out << std::flush;
}

void write_replay_json(const ReplayReport& report, std::ostream& out) {
  out << replay_document(report).dump(1) << "\n" << std::flush;
}

}  // namespace cb
