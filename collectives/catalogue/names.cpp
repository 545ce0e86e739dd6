#include "collectives/catalogue/names.hpp"

#include <fmt/ranges.h>

#include "common/error.hpp"
#include "common/units.hpp"

namespace cb {

namespace {

template <typename T, typename Parse, typename All, typename Name>
std::vector<T> parse_names(const std::string& text, const char* what, Parse parse, All all,
                           Name name_of) {
  std::vector<T> out;
  auto accepted = [&] {
    std::vector<std::string> names;
    for (const auto& v : all()) names.emplace_back(name_of(v));
    return fmt::format("{}", fmt::join(names, ", "));
  };
  for (const auto& item : split_list(text)) {
    if (item == "all") {
      for (const auto& v : all()) out.push_back(v);
      continue;
    }
    auto v = parse(item);
    if (!v) usage_error("unknown {} '{}': expected all or one of {}", what, item, accepted());
    out.push_back(*v);
  }
  if (out.empty()) usage_error("empty {} list: expected all or one of {}", what, accepted());
  std::vector<T> unique;
  for (const auto& v : out) {
    bool seen = false;
    for (const auto& u : unique) seen = seen || u == v;
    if (!seen) unique.push_back(v);
  }
  return unique;
}

}  // namespace

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    auto b = cur.find_first_not_of(" \t");
    auto e = cur.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(cur.substr(b, e - b + 1));
    cur.clear();
  };
  for (char c : text) {
    if (c == ',') {
      flush();
    } else {
      cur += c;
    }
  }
  flush();
  return out;
}

std::vector<Collective> parse_collectives(const std::string& text) {
  return parse_names<Collective>(
      text, "collective", parse_collective,
      [] {
        std::vector<Collective> v;
        for (const auto& c : all_collectives()) v.push_back(c.id);
        return v;
      },
      [](Collective c) { return name(c); });
}

std::vector<DType> parse_dtypes(const std::string& text) {
  return parse_names<DType>(
      text, "dtype", parse_dtype,
      [] {
        std::vector<DType> v;
        for (const auto& t : all_dtypes()) v.push_back(t.type);
        return v;
      },
      [](DType t) { return info(t).name; });
}

std::vector<ReduceOp> parse_ops(const std::string& text) {
  return parse_names<ReduceOp>(text, "op", parse_op, all_ops, [](ReduceOp op) { return name(op); });
}

std::vector<Placement> parse_placement(const std::string& text) {
  if (text == "out") return {Placement::Out};
  if (text == "in") return {Placement::In};
  if (text == "both") return {Placement::Out, Placement::In};
  usage_error("invalid --placement '{}': expected out, in or both", text);
}

int parse_root(const std::string& text, bool& all_roots) {
  all_roots = text == "all";
  if (all_roots) return 0;
  std::int64_t r = 0;
  try {
    r = parse_int(text, "--root");
  } catch (const Error&) {
    usage_error("invalid --root '{}': expected a rank number or all", text);
  }
  if (r < 0 || r > (1 << 24))
    usage_error("invalid --root '{}': expected a rank number or all", text);
  return static_cast<int>(r);
}

}  // namespace cb
