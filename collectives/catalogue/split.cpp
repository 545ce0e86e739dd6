#include "collectives/catalogue/split.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "collectives/catalogue/names.hpp"
#include "common/error.hpp"
#include "common/units.hpp"

namespace cb {

namespace {

constexpr const char* kAccepted = "uniform, distance[:S], zipf:A, moe:E,K[,G][,CF] or matrix:FILE";

// More experts than this would make the router's scores (tokens x E per rank) the run's cost.
constexpr std::int64_t kMaxExperts = 1 << 16;

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  usage_error("invalid --split '{}': {} (expected {})", text, why, kAccepted);
}

double number_in(const std::string& text, const std::string& value, const char* what, double lo,
                 double hi) {
  double v = 0;
  try {
    v = parse_double(value, what);
  } catch (const Error&) {
    bad(text, fmt::format("{} '{}' is not a number", what, value));
  }
  if (v < lo || v > hi)
    bad(text, fmt::format("{} {} is outside [{:g}, {:g}]", what, value, lo, hi));
  return v;
}

int integer_in(const std::string& text, const std::string& value, const char* what, std::int64_t lo,
               std::int64_t hi) {
  std::int64_t v = 0;
  try {
    v = parse_int(value, what);
  } catch (const Error&) {
    bad(text, fmt::format("{} '{}' is not an integer", what, value));
  }
  if (v < lo || v > hi) bad(text, fmt::format("{} {} is outside {}..{}", what, value, lo, hi));
  return static_cast<int>(v);
}

// "a,b,,d" -> {a, b, "", d}: moe's optional fields may be left empty.
std::vector<std::string> fields(const std::string& text) {
  std::vector<std::string> out(1);
  for (char c : text) {
    if (c == ',') {
      out.emplace_back();
    } else if (c != ' ') {
      out.back() += c;
    }
  }
  return out;
}

SplitSpec parse_moe(const std::string& text, const std::string& args) {
  SplitSpec s;
  s.kind = SplitKind::Moe;
  const auto f = fields(args);
  if (f.size() < 2 || f.size() > 4) bad(text, "moe takes E,K and optionally G and CF");
  s.moe.experts = integer_in(text, f[0], "E (experts)", 1, kMaxExperts);
  s.moe.topk = integer_in(text, f[1], "K (experts per token)", 1, s.moe.experts);
  if (f.size() > 2 && !f[2].empty()) {
    s.moe.groups = integer_in(text, f[2], "G (ranks per token)", 0, kMaxExperts);
  }
  if (f.size() > 3 && !f[3].empty()) {
    s.moe.capacity = number_in(text, f[3], "CF (capacity factor)", 0, 1e6);
  }
  return s;
}

}  // namespace

SplitSpec parse_split(const std::string& text) {
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string args = colon == std::string::npos ? "" : text.substr(colon + 1);
  const bool has_args = colon != std::string::npos;
  SplitSpec s;
  if (kind == "uniform") {
    if (has_args) bad(text, "uniform takes no parameter");
    return s;
  }
  if (kind == "distance") {
    s.kind = SplitKind::Distance;
    if (has_args) s.spread = number_in(text, args, "S (spread)", 0, 1);
    return s;
  }
  if (kind == "zipf") {
    s.kind = SplitKind::Zipf;
    if (!has_args) bad(text, "zipf needs its exponent A");
    s.zipf = number_in(text, args, "A (exponent)", 0, 64);
    return s;
  }
  if (kind == "moe") return parse_moe(text, args);
  if (kind == "matrix") {
    s.kind = SplitKind::Matrix;
    if (args.empty()) bad(text, "matrix needs a file");
    s.path = args;
    return s;
  }
  bad(text, fmt::format("unknown distribution '{}'", kind));
}

std::string split_name(const SplitSpec& s) {
  switch (s.kind) {
    case SplitKind::Uniform:
      return "uniform";
    case SplitKind::Distance:
      return fmt::format("distance:{:g}", s.spread);
    case SplitKind::Zipf:
      return fmt::format("zipf:{:g}", s.zipf);
    case SplitKind::Moe: {
      std::string out = fmt::format("moe:{},{}", s.moe.experts, s.moe.topk);
      if (s.moe.groups > 0 || s.moe.capacity > 0) out += fmt::format(",{}", s.moe.groups);
      if (s.moe.capacity > 0) out += fmt::format(",{:g}", s.moe.capacity);
      return out;
    }
    case SplitKind::Matrix:
      return "matrix:" + s.path;
  }
  return "";
}

void parse_matrix_text(const std::string& text, const std::string& where, SplitSpec& s) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::vector<std::uint64_t>> rows;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::vector<std::uint64_t> row;
    for (std::string w; words >> w;) {
      std::int64_t v = 0;
      try {
        v = parse_int(w, "bytes");
      } catch (const Error&) {
        usage_error("{}:{}: '{}' is not a whole number of bytes", where, line_no, w);
      }
      if (v < 0) usage_error("{}:{}: {} bytes is negative", where, line_no, w);
      row.push_back(static_cast<std::uint64_t>(v));
    }
    if (row.empty()) continue;
    if (!rows.empty() && row.size() != rows.front().size()) {
      usage_error("{}:{}: {} values where the first row has {}", where, line_no, row.size(),
                  rows.front().size());
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) usage_error("{}: no rows: expected n rows of n bytes per pair", where);
  if (rows.size() != rows.front().size()) {
    usage_error(
        "{}: {} rows of {} values: the matrix must be square (row i: bytes rank i sends "
        "to each rank)",
        where, rows.size(), rows.front().size());
  }
  s.matrix_ranks = static_cast<int>(rows.size());
  s.matrix.clear();
  for (const auto& r : rows) s.matrix.insert(s.matrix.end(), r.begin(), r.end());
}

std::string read_matrix_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) usage_error("--split matrix:{}: cannot read it: {}", path, std::strerror(errno));
  std::ostringstream text;
  text << f.rdbuf();
  return text.str();
}

void load_matrix(SplitSpec& s) {
  if (s.kind != SplitKind::Matrix) return;
  parse_matrix_text(read_matrix_file(s.path), s.path, s);
}

std::string split_unfit(const SplitSpec& s, int nranks) {
  if (s.kind == SplitKind::Moe) {
    const int e = s.moe.experts;
    if (e % nranks != 0) {
      return fmt::format("{} experts do not spread evenly over {} ranks", e, nranks);
    }
    if (s.moe.groups > nranks) {
      return fmt::format("G = {} ranks per token, but there are {} ranks", s.moe.groups, nranks);
    }
    if (s.moe.groups > 0 && s.moe.groups * (e / nranks) < s.moe.topk) {
      return fmt::format("{} ranks of {} experts hold fewer than K = {} experts", s.moe.groups,
                         e / nranks, s.moe.topk);
    }
  }
  if (s.kind == SplitKind::Matrix && s.matrix_ranks != nranks) {
    return fmt::format("{} is a {}x{} matrix for {} ranks, and there are {}", s.path,
                       s.matrix_ranks, s.matrix_ranks, s.matrix_ranks, nranks);
  }
  return {};
}

}  // namespace cb
