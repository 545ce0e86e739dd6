// What the Gloo backend offers per collective: its algorithm names (besides "default") and how
// each collective is carried out, as data for `list` and the backend.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collectives/catalogue/catalogue.hpp"

namespace cb::gloo_backend {

struct GlooAlgorithm {
  std::string_view name;
  std::string_view carried_out_by;  // the Gloo class or function, or "composed: ..."
};

// Algorithms selectable with -A for `c`, in listing order; "default" is not among them.
const std::vector<GlooAlgorithm>& gloo_algorithms(Collective c);
bool is_gloo_algorithm(Collective c, std::string_view name);
// What "default" runs for `c`.
std::string_view gloo_default(Collective c);
// "native: ..." or "composed: ..." with the Gloo calls used, for `list collectives -B gloo`.
std::string gloo_implementation(Collective c);

}  // namespace cb::gloo_backend
