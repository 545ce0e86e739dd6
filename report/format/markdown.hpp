// Markdown (GitHub-flavoured) tables, shared by every writer that produces Markdown.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace cb {

// Escapes the characters that would break a table cell or start markup: | \ * _ ` < >.
std::string md_escape(std::string_view text);

// `text` as an inline code span (backticks inside become quotes; nothing else is escaped).
std::string md_code(std::string_view text);

class MarkdownTable {
 public:
  enum class Align { Left, Right };
  // Header cells are escaped; `align` defaults to left for every column.
  void set_header(std::vector<std::string> names, std::vector<Align> align = {});
  // Cells are written as given, so callers may add markup (escape plain text with md_escape).
  void add_row(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> names_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace cb
