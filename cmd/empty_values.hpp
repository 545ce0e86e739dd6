// One rule for every option and argument that takes a value: an empty value is a usage error.
// (An empty value never means "not given": leaving the option out does.)
#pragma once

#include <CLI/CLI.hpp>

namespace cb {

// Usage error "invalid --rounds '': ..." for the first option of `app` or of any of its
// subcommands (at any depth) that was given an empty value. Flags take no value and are skipped.
void refuse_empty_values(const CLI::App& app);

}  // namespace cb
