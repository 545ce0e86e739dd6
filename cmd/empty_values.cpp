#include "cmd/empty_values.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace cb {

void refuse_empty_values(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options({})) {
    if (opt->get_type_size_max() == 0) continue;  // a flag
    const auto& values = opt->results();
    if (std::any_of(values.begin(), values.end(), [](const auto& v) { return v.empty(); })) {
      usage_error("invalid {} '': an empty value (leave the option out for its default)",
                  opt->get_name());
    }
  }
  for (const CLI::App* sub : app.get_subcommands({})) refuse_empty_values(*sub);
}

}  // namespace cb
