// A model as a training step's communication sees it: its parameters in the order
// `model.parameters()` yields them, each with its element type and size, optionally its backward
// compute time and the FSDP unit that holds it. Read from a CSV (docs/replay.md) or built in
// (presets.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/catalogue/dtype.hpp"

namespace cb {

struct Param {
  std::string name;
  DType dtype = DType::Float;
  std::uint64_t numel = 0;
  std::optional<double> backward_us;  // its share of the backward pass, when the input gives it
  std::string unit;                   // the FSDP unit that wraps it; "" the root unit
};

struct Model {
  std::string name;    // the preset's name, or the CSV's path
  std::string source;  // where its shapes come from (a preset's reference), "" for a CSV
  std::vector<Param> params;

  std::uint64_t numel() const;
  std::uint64_t bytes() const;
};

// A model CSV's text: a header naming its columns (name, dtype and numel required; backward_us
// and unit optional; in any order), then one row per parameter in `model.parameters()` order.
// dtype takes PyTorch's spellings (torch.float32, float16, bfloat16, ...) and commbench's.
// Throws a usage Error naming `where`, the line and what is wrong.
Model parse_model_csv(std::string_view text, const std::string& where);
// The same from a file; a usage Error when it cannot be read.
Model read_model_csv(const std::string& path);

// A dtype as PyTorch or commbench spells it ("torch.bfloat16", "float32", "half"), or empty.
std::optional<DType> parse_param_dtype(std::string_view text);

}  // namespace cb
