#include "collectives/patterns/model.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/csv.hpp"
#include "common/error.hpp"

namespace cb {

std::uint64_t Model::numel() const {
  std::uint64_t n = 0;
  for (const auto& p : params) n += p.numel;
  return n;
}

std::uint64_t Model::bytes() const {
  std::uint64_t n = 0;
  for (const auto& p : params) n += p.numel * info(p.dtype).size;
  return n;
}

std::optional<DType> parse_param_dtype(std::string_view text) {
  constexpr std::string_view kTorch = "torch.";
  if (text.substr(0, kTorch.size()) == kTorch) text.remove_prefix(kTorch.size());
  return parse_dtype(text);
}

namespace {

std::string trimmed(std::string s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

enum class Column { Name, Dtype, Numel, BackwardUs, Unit };

const std::map<std::string, Column>& column_names() {
  static const std::map<std::string, Column> names = {{"name", Column::Name},
                                                      {"dtype", Column::Dtype},
                                                      {"numel", Column::Numel},
                                                      {"backward_us", Column::BackwardUs},
                                                      {"unit", Column::Unit}};
  return names;
}

std::vector<Column> read_header(const std::vector<std::string>& fields, const std::string& where) {
  std::vector<Column> columns;
  for (const auto& raw : fields) {
    const std::string f = trimmed(raw);
    auto it = column_names().find(f);
    if (it == column_names().end()) {
      usage_error(
          "{}: line 1: unknown column '{}': expected name, dtype, numel and optionally "
          "backward_us, unit",
          where, f);
    }
    for (Column c : columns) {
      if (c == it->second) usage_error("{}: line 1: column '{}' appears twice", where, f);
    }
    columns.push_back(it->second);
  }
  for (const char* needed : {"name", "dtype", "numel"}) {
    bool found = false;
    for (Column c : columns) found = found || c == column_names().at(needed);
    if (!found) {
      usage_error("{}: line 1: no '{}' column: the header must name name, dtype and numel", where,
                  needed);
    }
  }
  return columns;
}

Param read_row(const std::vector<Column>& columns, const std::vector<std::string>& fields,
               const std::string& where, std::size_t line) {
  if (fields.size() != columns.size()) {
    usage_error("{}: line {}: {} fields where the header names {}", where, line, fields.size(),
                columns.size());
  }
  Param p;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::string f = trimmed(fields[i]);
    switch (columns[i]) {
      case Column::Name:
        if (f.empty()) usage_error("{}: line {}: empty parameter name", where, line);
        p.name = f;
        break;
      case Column::Dtype: {
        auto t = parse_param_dtype(f);
        if (!t) usage_error("{}: line {}: unknown dtype '{}'", where, line, f);
        p.dtype = *t;
        break;
      }
      case Column::Numel: {
        std::uint64_t v = 0;
        auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
        if (ec != std::errc() || end != f.data() + f.size() || v == 0) {
          usage_error("{}: line {}: invalid numel '{}': expected a positive integer", where, line,
                      f);
        }
        p.numel = v;
        break;
      }
      case Column::BackwardUs: {
        if (f.empty()) break;  // not known for this parameter
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(f.c_str(), &end);
        if (errno != 0 || end != f.c_str() + f.size() || !std::isfinite(v) || v < 0) {
          usage_error("{}: line {}: invalid backward_us '{}': expected microseconds >= 0", where,
                      line, f);
        }
        p.backward_us = v;
        break;
      }
      case Column::Unit:
        p.unit = f;
        break;
    }
  }
  return p;
}

}  // namespace

Model parse_model_csv(std::string_view text, const std::string& where) {
  Model m;
  m.name = where;
  std::vector<Column> columns;
  std::size_t line_no = 0;
  bool any_time = false, every_time = true;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (trimmed(line).empty() || line.front() == '#') continue;
    const std::vector<std::string> fields = csv_split(line);
    if (columns.empty()) {
      columns = read_header(fields, where);
      continue;
    }
    Param p = read_row(columns, fields, where, line_no);
    any_time = any_time || p.backward_us.has_value();
    every_time = every_time && p.backward_us.has_value();
    m.params.push_back(std::move(p));
  }
  if (columns.empty()) usage_error("{}: empty: expected a header line name,dtype,numel", where);
  if (m.params.empty()) usage_error("{}: no parameters after the header", where);
  if (any_time && !every_time) {
    usage_error("{}: backward_us is given for some parameters but not all: give it for each",
                where);
  }
  return m;
}

Model read_model_csv(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    usage_error("cannot read model file '{}': it is a directory", path);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) usage_error("cannot read model file '{}': {}", path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) usage_error("cannot read model file '{}': {}", path, std::strerror(errno));
  return parse_model_csv(text.str(), path);
}

}  // namespace cb
