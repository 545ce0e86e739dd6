// Environment grids for `tune --env`: axes of values for variables that are read once per
// process, their cartesian product, and the label each combination carries in records.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cb {

struct EnvAxis {
  std::string name;
  std::vector<std::string> values;
};

using EnvCombination = std::vector<std::pair<std::string, std::string>>;

// `NAME=v1,v2,...`: values are separated by commas; `\,` is a comma inside a value and `\\` a
// backslash. Throws a usage Error naming the option on an empty value list, a bad or
// non-steering name (see steering_variable), or a repeated value.
EnvAxis parse_env_axis(const std::string& text);

// A TOML file with one table `[env]` whose keys are variable names and whose values are arrays
// of strings or integers (`NCCL_BUFFSIZE = [4194304, 8388608]`, `OMPI_MCA_btl = ["self,vader"]`).
// Axes in the order of the variable names. Throws a usage Error naming the file and key on
// anything else.
std::vector<EnvAxis> read_env_grid(const std::string& path);

// Every combination of one value per axis, the first axis varying slowest. Throws a usage Error
// when a variable appears on two axes.
std::vector<EnvCombination> env_combinations(const std::vector<EnvAxis>& axes);

// "NAME=VALUE NAME2=VALUE2" (the record's `env`); "" for no variables.
std::string env_label(const EnvCombination& combination);

}  // namespace cb
