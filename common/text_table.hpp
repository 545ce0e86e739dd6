// Aligned plain-text tables: the one helper every table-printing subcommand uses.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace cb {

class TextTable {
 public:
  enum class Align { Left, Right };

  // Column headers; a header line may have several rows (e.g. a group title above names).
  void set_header(std::vector<std::string> names, std::vector<Align> align = {});
  void add_header_row(std::vector<std::string> cells);  // extra header rows above the names
  void add_row(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  // Prints with two spaces between columns; header lines start with `prefix`.
  void print(std::ostream& out, const std::string& prefix = "") const;

 private:
  std::vector<std::vector<std::string>> headers_;
  std::vector<std::string> names_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace cb
