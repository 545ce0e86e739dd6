// Built-in models whose parameter shapes are public facts, each generated from its published
// configuration in `model.parameters()` order, with its FSDP units (one per repeated block) and
// the reference it follows (docs/replay.md, "Presets").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/patterns/model.hpp"

namespace cb {

struct PresetInfo {
  std::string_view name;         // --preset NAME
  std::string_view description;  // for --help and docs
  std::string_view source;       // where the shapes come from
};

const std::vector<PresetInfo>& model_presets();
// The preset called `name` (float32 parameters, as a freshly built model has), or empty.
std::optional<Model> preset_model(std::string_view name);

}  // namespace cb
