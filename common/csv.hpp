// RFC 4180 field quoting and line splitting, shared by every CSV reader and writer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cb {

std::string csv_quote(std::string_view field);
std::string csv_line(const std::vector<std::string>& fields);
std::vector<std::string> csv_split(std::string_view line);

}  // namespace cb
