#include "report/tune/env_grid.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <set>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/shell_text.hpp"

namespace cb {

namespace {

void check_name(const std::string& name, const std::string& where) {
  bool valid = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!valid) usage_error("{}: '{}' is not an environment variable name", where, name);
  if (!steering_variable(name)) {
    usage_error(
        "{}: {} is not a variable commbench records in meta.environment (NCCL_*, OMPI_MCA_*, "
        "MPIR_CVAR_*, MPICH_*, UCX_*, GLOO_*, FI_*, PSM2_*, HCOLL_*, CUDA_VISIBLE_DEVICES, "
        "CUDA_DEVICE_ORDER), so it could not be verified on every rank",
        where, name);
  }
}

void check_values(const EnvAxis& axis, const std::string& where) {
  if (axis.values.empty()) usage_error("{}: no values for {}", where, axis.name);
  // Named, never shown: the value itself is what would break the line it is shown on.
  for (const auto& v : axis.values) {
    if (has_control_character(v)) {
      usage_error(
          "{}: a value of {} holds a control character (newline, tab, escape, ...); values are "
          "written one per line for NCCL and a shell to read",
          where, axis.name);
    }
  }
  std::set<std::string> seen;
  for (const auto& v : axis.values) {
    if (!seen.insert(v).second)
      usage_error("{}: value '{}' of {} is repeated", where, v, axis.name);
  }
}

}  // namespace

EnvAxis parse_env_axis(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos) usage_error("--env '{}': expected NAME=VALUE[,VALUE...]", text);
  EnvAxis axis;
  axis.name = text.substr(0, eq);
  // The option is named by its variable alone: its values may be secret or unprintable.
  const std::string where = "--env " + axis.name;
  check_name(axis.name, where);
  std::string cur;
  for (std::size_t i = eq + 1; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size() && (text[i + 1] == ',' || text[i + 1] == '\\')) {
      cur += text[++i];
    } else if (c == ',') {
      axis.values.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  axis.values.push_back(cur);
  check_values(axis, where);
  return axis;
}

std::vector<EnvAxis> read_env_grid(const std::string& path) {
  std::ifstream probe(path);
  if (!probe) usage_error("cannot read --env-grid file '{}'", path);
  toml::value doc;
  try {
    doc = toml::parse(path);
  } catch (const std::exception& e) {
    std::string msg = e.what();
    auto nl = msg.find('\n');
    usage_error("{}: not valid TOML: {}", path, msg.substr(0, nl));
  }
  if (!doc.is_table()) usage_error("{}: expected a table [env]", path);
  std::vector<EnvAxis> axes;
  for (const auto& [key, value] : doc.as_table()) {
    if (key != "env" || !value.is_table()) {
      usage_error("{}: unknown key '{}': the file holds one table [env] of NAME = [values]", path,
                  key);
    }
    for (const auto& [name, list] : value.as_table()) {
      const std::string where = fmt::format("{}: [env] {}", path, name);
      check_name(name, where);
      if (!list.is_array()) usage_error("{}: expected an array of values", where);
      EnvAxis axis{name, {}};
      for (const auto& v : list.as_array()) {
        if (v.is_string()) {
          axis.values.push_back(v.as_string().str);
        } else if (v.is_integer()) {
          axis.values.push_back(std::to_string(v.as_integer()));
        } else {
          usage_error("{}: values must be strings or integers", where);
        }
      }
      check_values(axis, where);
      axes.push_back(std::move(axis));
    }
  }
  if (axes.empty()) usage_error("{}: the [env] table is empty", path);
  // TOML tables keep no order: the axes follow the variable names.
  std::sort(axes.begin(), axes.end(),
            [](const EnvAxis& a, const EnvAxis& b) { return a.name < b.name; });
  return axes;
}

std::uint64_t env_combination_count(const std::vector<EnvAxis>& axes) {
  std::uint64_t n = 1;
  for (const auto& a : axes) {
    const std::uint64_t k = a.values.size();
    if (k != 0 && n > UINT64_MAX / k) return UINT64_MAX;
    n *= k;
  }
  return n;
}

std::vector<EnvCombination> env_combinations(const std::vector<EnvAxis>& axes) {
  std::set<std::string> names;
  for (const auto& a : axes) {
    if (!names.insert(a.name).second) usage_error("{} is given more than once in the grid", a.name);
  }
  const std::uint64_t n = env_combination_count(axes);
  if (n > kMaxEnvCombinations) {
    std::vector<std::string> counts;
    for (const auto& a : axes) counts.push_back(std::to_string(a.values.size()));
    usage_error(
        "the environment grid has {} combinations ({} values), more than the {} tune --env "
        "measures: narrow the axes or split the grid",
        n == UINT64_MAX ? "more than 18446744073709551615" : std::to_string(n),
        fmt::format("{}", fmt::join(counts, " x ")), kMaxEnvCombinations);
  }
  std::vector<EnvCombination> out = {{}};
  for (const auto& a : axes) {
    std::vector<EnvCombination> next;
    for (const auto& c : out) {
      for (const auto& v : a.values) {
        EnvCombination x = c;
        x.emplace_back(a.name, v);
        next.push_back(std::move(x));
      }
    }
    out = std::move(next);
  }
  return out;
}

std::string sweep_difference(const std::vector<ResultRecord>& records,
                             const std::vector<SweepDimension>& dimensions) {
  for (const auto& d : dimensions) {
    if (d.wanted.empty()) continue;
    std::vector<std::string> have;
    for (const auto& r : records) {
      std::string v = d.of(r);
      if (!v.empty() && std::find(have.begin(), have.end(), v) == have.end()) have.push_back(v);
    }
    if (have.empty()) continue;
    bool same = have.size() == d.wanted.size();
    for (const auto& v : have) {
      same = same && std::any_of(d.wanted.begin(), d.wanted.end(), [&](const std::string& w) {
               return d.same ? d.same(v, w) : v == w;
             });
    }
    if (!same) {
      return fmt::format("{}: the file measured {}, this sweep measures {}", d.name,
                         fmt::join(have, ","), fmt::join(d.wanted, ","));
    }
  }
  return "";
}

std::string env_label(const EnvCombination& combination) {
  std::string s;
  for (const auto& [name, value] : combination) s += (s.empty() ? "" : " ") + name + "=" + value;
  return s;
}

}  // namespace cb
