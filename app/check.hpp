// `check` as work: an acceptance spec, --expect auto, or both, judged against result files,
// the topology (a document or a probe) and a links document; exit 5 on a failed requirement.
#pragma once

#include <string>
#include <vector>

#include "app/flags.hpp"

namespace cb {

struct CheckRequest {
  std::string spec;
  std::vector<std::string> results;
  std::string topology;
  std::string links;
  std::string sysfs_root;
  std::string junit;
  std::string format = "table";
  std::string output;
  std::string expect;                   // "auto": judge efficiency against the hardware's roof
  std::string min_efficiency;           // with --expect auto
  std::vector<std::string> references;  // --reference: healthy result files, with --expect auto
  std::string fleet_fraction;           // with --expect auto
};

const Flags<CheckRequest>& check_flags();

// Reads, judges and reports; throws a usage Error (exit 2) on bad input before judging, and a
// Regression Error (exit 5) naming the first failed requirement.
int check(const CheckRequest& rq);

}  // namespace cb
