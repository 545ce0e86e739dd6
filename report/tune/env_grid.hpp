// Environment grids for `tune --env`: axes of values for variables that are read once per
// process, their cartesian product, and the label each combination carries in records.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/record.hpp"

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

// The most combinations a grid may have: beyond it (each combination is --rounds fresh jobs)
// the grid is refused before it is built.
inline constexpr std::uint64_t kMaxEnvCombinations = 10000;

// The product of the axes' value counts, UINT64_MAX where it does not fit.
std::uint64_t env_combination_count(const std::vector<EnvAxis>& axes);

// Every combination of one value per axis, the first axis varying slowest. Throws a usage Error
// when a variable appears on two axes, or when there are more than kMaxEnvCombinations (the
// count is taken before anything is built).
std::vector<EnvCombination> env_combinations(const std::vector<EnvAxis>& axes);

// What shapes a sweep's measurements, one dimension each (backends, collectives, ranks, ...):
// the values this sweep measures, taken from its request; an empty `wanted` is not known before
// the run and is not compared.
struct SweepDimension {
  std::string name;                                    // "collectives"
  std::function<std::string(const ResultRecord&)> of;  // a record's value; "" not counted
  std::vector<std::string> wanted;                     // in the sweep's order
  // Whether two values are the same measurement (default: equal).
  std::function<bool(const std::string& have, const std::string& want)> same;
};

// Why records from an earlier sweep (--resume) cannot stand for this one's: the first dimension
// whose values differ, "collectives: the file measured allreduce, this sweep measures
// broadcast"; "" when every known dimension agrees.
std::string sweep_difference(const std::vector<ResultRecord>& records,
                             const std::vector<SweepDimension>& dimensions);

// "NAME=VALUE NAME2=VALUE2" (the record's `env`); "" for no variables.
std::string env_label(const EnvCombination& combination);

}  // namespace cb
