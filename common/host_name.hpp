// This machine's host name: the one wrapper around gethostname().
#pragma once

#include <string>
#include <string_view>

namespace cb {

// gethostname(), or `fallback` when the call fails.
std::string host_name(std::string_view fallback = "unknown");

}  // namespace cb
