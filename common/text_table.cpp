#include "common/text_table.hpp"

#include <algorithm>
#include <ostream>

namespace cb {

void TextTable::set_header(std::vector<std::string> names, std::vector<Align> align) {
  names_ = std::move(names);
  align_ = std::move(align);
  align_.resize(names_.size(), Align::Right);
}

void TextTable::add_header_row(std::vector<std::string> cells) {
  headers_.push_back(std::move(cells));
}

void TextTable::add_row(std::vector<std::string> cells) {
  rows_.push_back(std::move(cells));
}

void TextTable::print(std::ostream& out, const std::string& prefix) const {
  std::size_t ncols = names_.size();
  for (const auto& r : rows_) ncols = std::max(ncols, r.size());
  std::vector<std::size_t> width(ncols, 0);
  auto measure = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) width[i] = std::max(width[i], cells[i].size());
  };
  measure(names_);
  for (const auto& r : rows_) measure(r);
  auto emit = [&](const std::vector<std::string>& cells, const std::string& lead) {
    std::string line = lead;
    for (std::size_t i = 0; i < ncols; ++i) {
      const std::string cell = i < cells.size() ? cells[i] : std::string();
      std::size_t pad = width[i] - std::min(width[i], cell.size());
      bool right = i < align_.size() ? align_[i] == Align::Right : true;
      if (i) line += "  ";
      if (right) line.append(pad, ' ');
      line += cell;
      if (!right && i + 1 < ncols) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  for (const auto& h : headers_) emit(h, prefix);
  if (!names_.empty()) emit(names_, prefix);
  std::string body_lead(prefix.size(), ' ');
  for (const auto& r : rows_) emit(r, body_lead);
}

}  // namespace cb
