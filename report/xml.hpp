// Escaping text for XML documents (JUnit reports, SVG charts).
#pragma once

#include <string>
#include <string_view>

namespace cb {

// Escapes & < > " ' and replaces control characters XML 1.0 cannot carry.
std::string xml_escape(std::string_view text);

}  // namespace cb
