#include "report/format/markdown.hpp"

#include <ostream>

namespace cb {

std::string md_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '|':
      case '\\':
      case '*':
      case '_':
      case '`':
        out += '\\';
        out += c;
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string md_code(std::string_view text) {
  std::string out = "`";
  for (char c : text) out += c == '`' ? '\'' : (c == '\n' || c == '\r') ? ' ' : c;
  return out + "`";
}

void MarkdownTable::set_header(std::vector<std::string> names, std::vector<Align> align) {
  names_ = std::move(names);
  align_ = std::move(align);
  align_.resize(names_.size(), Align::Left);
}

void MarkdownTable::add_row(std::vector<std::string> cells) {
  rows_.push_back(std::move(cells));
}

void MarkdownTable::print(std::ostream& out) const {
  auto line = [&](const std::vector<std::string>& cells, bool escape) {
    out << "|";
    for (std::size_t i = 0; i < names_.size(); ++i) {
      std::string cell = i < cells.size() ? cells[i] : std::string();
      out << ' ' << (escape ? md_escape(cell) : cell) << " |";
    }
    out << "\n";
  };
  line(names_, true);
  out << "|";
  for (auto a : align_) out << (a == Align::Right ? " ---: |" : " --- |");
  out << "\n";
  for (const auto& r : rows_) line(r, false);
}

}  // namespace cb
