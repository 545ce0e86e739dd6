#include "report/check/check_spec.hpp"

#include <fmt/format.h>

#include <toml.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "common/units.hpp"

namespace cb {

namespace {

constexpr std::array kResultKeys = {"name",        "collective", "backend",   "algorithm",
                                    "env",         "dtype",      "op",        "placement",
                                    "nranks",      "min_bytes",  "max_bytes", "min_busbw_GBps",
                                    "max_time_us", "max_p99_us", "severity",  "min_efficiency"};
constexpr std::array kTopologyKeys = {"name",
                                      "gpus",
                                      "numa_nodes",
                                      "pcie_min_gts",
                                      "pcie_min_width",
                                      "nvlink_all_up",
                                      "ib_ports",
                                      "ib_ports_active_min_gbps",
                                      "gdr",
                                      "no_warnings",
                                      "identical_hosts",
                                      "severity"};
constexpr std::array kLinksKeys = {"name",           "links_min_fraction_of_median",
                                   "links_min_GBps", "links_max_latency_us",
                                   "links_nic",      "severity"};

template <std::size_t N>
std::string join(const std::array<const char*, N>& keys) {
  std::string s;
  for (const char* k : keys) s += (s.empty() ? "" : ", ") + std::string(k);
  return s;
}

// One [[results]] or [[topology]] table, read key by key with errors naming file and line.
class Table {
 public:
  Table(const toml::value& table, const std::string& path, const char* section)
      : table_(table.as_table()), path_(path), section_(section) {
    line_ = static_cast<int>(table.location().line());
  }

  int line() const { return line_; }

  // Rejects keys not in `known`, reporting the first by line.
  template <std::size_t N>
  void only(const std::array<const char*, N>& known) const {
    const toml::value* first = nullptr;
    std::string first_key;
    for (const auto& [key, value] : table_) {
      if (std::find_if(known.begin(), known.end(), [&](const char* k) { return key == k; }) !=
          known.end()) {
        continue;
      }
      if (!first || value.location().line() < first->location().line()) {
        first = &value;
        first_key = key;
      }
    }
    if (first) {
      usage_error("{}:{}: unknown key '{}' in [[{}]]: expected one of {}", path_,
                  first->location().line(), first_key, section_, join(known));
    }
  }

  const toml::value* find(const char* key) const {
    auto it = table_.find(key);
    return it == table_.end() ? nullptr : &it->second;
  }

  [[noreturn]] void bad(const toml::value& v, const char* key, const char* expected) const {
    usage_error("{}:{}: '{}' in [[{}]] must be {}", path_, v.location().line(), key, section_,
                expected);
  }

  std::optional<std::string> string(const char* key) const {
    const toml::value* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) bad(*v, key, "a string");
    std::string s = v->as_string().str;
    if (s.empty()) bad(*v, key, "a non-empty string");
    return s;
  }

  std::optional<double> number(const char* key, bool positive) const {
    const toml::value* v = find(key);
    if (!v) return std::nullopt;
    double d = 0;
    if (v->is_integer()) {
      d = static_cast<double>(v->as_integer());
    } else if (v->is_floating()) {
      d = v->as_floating();
    } else {
      bad(*v, key, "a number");
    }
    if (!std::isfinite(d) || d < 0 || (positive && d == 0)) {
      bad(*v, key, positive ? "a finite number > 0" : "a finite number >= 0");
    }
    return d;
  }

  std::optional<int> count(const char* key, bool positive) const {
    const toml::value* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_integer()) bad(*v, key, "an integer");
    auto n = v->as_integer();
    if (n < 0 || (positive && n == 0) || n > 1'000'000'000) {
      bad(*v, key, positive ? "an integer > 0" : "an integer >= 0");
    }
    return static_cast<int>(n);
  }

  bool flag(const char* key) const {
    const toml::value* v = find(key);
    if (!v) return false;
    if (!v->is_boolean()) bad(*v, key, "true or false");
    return v->as_boolean();
  }

  std::optional<std::uint64_t> size(const char* key) const {
    const toml::value* v = find(key);
    if (!v) return std::nullopt;
    if (v->is_integer()) {
      if (v->as_integer() < 0) bad(*v, key, "a size >= 0");
      return static_cast<std::uint64_t>(v->as_integer());
    }
    if (!v->is_string()) bad(*v, key, "a size such as 1G, \"64K\" or 1073741824");
    try {
      return parse_size(v->as_string().str, key);
    } catch (const Error&) {
      bad(*v, key, "a size such as \"8\", \"64K\", \"4M\" or \"1G\" (binary units)");
    }
  }

  Severity severity() const {
    auto s = string("severity");
    if (!s || *s == "error") return Severity::Error;
    if (*s == "warning") return Severity::Warning;
    bad(*find("severity"), "severity", "\"error\" or \"warning\"");
  }

  // A name checked against the vocabulary, canonicalised.
  std::optional<std::string> name_of(
      const char* key, const std::function<std::optional<std::string>(std::string_view)>& check,
      const std::string& accepted) const {
    auto s = string(key);
    if (!s || !check) return s;
    auto canonical = check(*s);
    if (!canonical) {
      usage_error("{}:{}: unknown {} '{}' in [[{}]]: expected one of {}", path_,
                  find(key)->location().line(), key, *s, section_, accepted);
    }
    return canonical;
  }

  void fail_here(const std::string& message) const {
    usage_error("{}:{}: [[{}]] {}", path_, line_, section_, message);
  }

 private:
  const toml::table& table_;
  std::string path_;
  const char* section_;
  int line_ = 0;
};

std::string default_result_name(const ResultRequirement& r) {
  std::string s = r.collective;
  if (r.backend) s += " " + *r.backend;
  if (r.min_bytes == r.max_bytes) {
    s += " " + format_size(r.min_bytes);
  } else if (r.min_bytes > 0 || r.max_bytes != std::numeric_limits<std::uint64_t>::max()) {
    s += " " + format_size(r.min_bytes) + "..";
    if (r.max_bytes != std::numeric_limits<std::uint64_t>::max()) s += format_size(r.max_bytes);
  }
  if (r.min_busbw_GBps) s += fmt::format(" busbw >= {:g} GB/s", *r.min_busbw_GBps);
  if (r.max_time_us) s += fmt::format(" time <= {:g} us", *r.max_time_us);
  if (r.max_p99_us) s += fmt::format(" p99 <= {:g} us", *r.max_p99_us);
  if (r.min_efficiency) s += fmt::format(" efficiency >= {:g}", *r.min_efficiency);
  return s;
}

ResultRequirement parse_result(const Table& t, const std::string& path,
                               const SpecVocabulary& vocab) {
  t.only(kResultKeys);
  ResultRequirement r;
  r.line = t.line();
  auto collective = t.name_of("collective", vocab.collective, vocab.collective_names);
  if (!collective) t.fail_here("needs 'collective'");
  r.collective = *collective;
  r.backend = t.string("backend");
  r.algorithm = t.string("algorithm");
  r.env = t.string("env");
  r.dtype = t.name_of("dtype", vocab.dtype, vocab.dtype_names);
  r.op = t.name_of("op", vocab.op, vocab.op_names);
  r.placement = t.string("placement");
  if (r.placement && *r.placement != "out" && *r.placement != "in") {
    t.bad(*t.find("placement"), "placement", "\"out\" or \"in\"");
  }
  r.nranks = t.count("nranks", true);
  r.min_bytes = t.size("min_bytes").value_or(r.min_bytes);
  r.max_bytes = t.size("max_bytes").value_or(r.max_bytes);
  if (r.min_bytes > r.max_bytes) {
    usage_error("{}:{}: min_bytes {} is larger than max_bytes {}", path, r.line,
                format_size(r.min_bytes), format_size(r.max_bytes));
  }
  r.min_busbw_GBps = t.number("min_busbw_GBps", true);
  r.max_time_us = t.number("max_time_us", true);
  r.max_p99_us = t.number("max_p99_us", true);
  r.min_efficiency = t.number("min_efficiency", true);
  if (!r.min_busbw_GBps && !r.max_time_us && !r.max_p99_us && !r.min_efficiency) {
    t.fail_here("needs a limit: min_busbw_GBps, max_time_us, max_p99_us or min_efficiency");
  }
  if (r.min_busbw_GBps && r.collective == "barrier") {
    t.fail_here("asks barrier for min_busbw_GBps, but a barrier moves no data: use max_time_us");
  }
  r.severity = t.severity();
  r.name = t.string("name").value_or(default_result_name(r));
  return r;
}

TopologyRequirement parse_topology(const Table& t) {
  t.only(kTopologyKeys);
  TopologyRequirement r;
  r.line = t.line();
  r.gpus = t.count("gpus", false);
  r.numa_nodes = t.count("numa_nodes", true);
  r.pcie_min_gts = t.number("pcie_min_gts", true);
  r.pcie_min_width = t.count("pcie_min_width", true);
  r.nvlink_all_up = t.flag("nvlink_all_up");
  r.ib_ports = t.count("ib_ports", false);
  r.ib_ports_active_min_gbps = t.number("ib_ports_active_min_gbps", true);
  r.gdr = t.flag("gdr");
  r.no_warnings = t.flag("no_warnings");
  r.identical_hosts = t.flag("identical_hosts");
  if (!r.gpus && !r.numa_nodes && !r.pcie_min_gts && !r.pcie_min_width && !r.nvlink_all_up &&
      !r.ib_ports && !r.ib_ports_active_min_gbps && !r.gdr && !r.no_warnings &&
      !r.identical_hosts) {
    t.fail_here("asks for nothing: give at least one of " + join(kTopologyKeys));
  }
  r.severity = t.severity();
  r.name = t.string("name").value_or(fmt::format("topology (line {})", r.line));
  return r;
}

LinksRequirement parse_links(const Table& t) {
  t.only(kLinksKeys);
  LinksRequirement r;
  r.line = t.line();
  r.min_fraction_of_median = t.number("links_min_fraction_of_median", true);
  if (r.min_fraction_of_median && *r.min_fraction_of_median > 1) {
    t.bad(*t.find("links_min_fraction_of_median"), "links_min_fraction_of_median",
          "a fraction in (0, 1]");
  }
  r.min_GBps = t.number("links_min_GBps", true);
  r.max_latency_us = t.number("links_max_latency_us", true);
  if (!r.min_fraction_of_median && !r.min_GBps && !r.max_latency_us) {
    t.fail_here("asks for nothing: give at least one of " + join(kLinksKeys));
  }
  r.nic = t.string("links_nic");
  r.severity = t.severity();
  r.name = t.string("name").value_or(fmt::format("links (line {})", r.line));
  return r;
}

// toml11 reports "[error] toml::func: what\n --> file\n | ...": keep "what" and the hint.
std::string syntax_message(const std::string& what) {
  std::string first = what.substr(0, what.find('\n'));
  if (auto colon = first.find(": "); first.rfind("[error]", 0) == 0 && colon != std::string::npos) {
    first = first.substr(colon + 2);
  }
  auto hint = what.rfind("^---");
  if (hint == std::string::npos) hint = what.rfind("~~~ ");
  if (hint != std::string::npos) {
    std::string h = what.substr(hint);
    h = h.substr(h.find(' ') + 1);
    h = h.substr(0, h.find('\n'));
    if (!h.empty()) first += " (" + h + ")";
  }
  return first;
}

const toml::array& tables(const toml::value& root, const char* key, const std::string& path) {
  const toml::value& v = root.as_table().at(key);
  if (!v.is_array() || !std::all_of(v.as_array().begin(), v.as_array().end(),
                                    [](const toml::value& x) { return x.is_table(); })) {
    usage_error("{}:{}: '{}' must be an array of tables, written [[{}]]", path, v.location().line(),
                key, key);
  }
  return v.as_array();
}

}  // namespace

const char* severity_name(Severity s) {
  return s == Severity::Error ? "error" : "warning";
}

Spec parse_spec(std::string_view text, const std::string& path, const SpecVocabulary& vocab) {
  toml::value root;
  try {
    std::istringstream in{std::string(text)};
    root = toml::parse(in, path);
  } catch (const toml::syntax_error& e) {
    usage_error("{}:{}: invalid TOML: {}", path, e.location().line(), syntax_message(e.what()));
  } catch (const std::exception& e) {
    usage_error("{}: invalid TOML: {}", path, syntax_message(e.what()));
  }
  Spec spec;
  spec.path = path;
  spec.name = std::filesystem::path(path).stem().string();
  for (const auto& [key, value] : root.as_table()) {
    if (key == "results" || key == "topology" || key == "links") continue;
    if (key == "name") {
      if (!value.is_string()) {
        usage_error("{}:{}: top-level 'name' must be a string", path, value.location().line());
      }
      spec.name = value.as_string().str;
      continue;
    }
    usage_error(
        "{}:{}: unknown key '{}' at top level: expected name, [[results]], [[topology]] or "
        "[[links]]",
        path, value.location().line(), key);
  }
  if (root.contains("results")) {
    for (const auto& t : tables(root, "results", path)) {
      spec.results.push_back(parse_result(Table(t, path, "results"), path, vocab));
    }
  }
  if (root.contains("topology")) {
    for (const auto& t : tables(root, "topology", path)) {
      spec.topology.push_back(parse_topology(Table(t, path, "topology")));
    }
  }
  if (root.contains("links")) {
    for (const auto& t : tables(root, "links", path))
      spec.links.push_back(parse_links(Table(t, path, "links")));
  }
  if (spec.results.empty() && spec.topology.empty() && spec.links.empty()) {
    usage_error("{}: no requirements: expected [[results]], [[topology]] or [[links]] tables",
                path);
  }
  return spec;
}

Spec read_spec(const std::string& path, const SpecVocabulary& vocab) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    usage_error("cannot read spec '{}': a directory", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) usage_error("cannot read spec '{}': {}", path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_spec(text.str(), path, vocab);
}

}  // namespace cb
