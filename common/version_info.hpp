// Facts fixed at build time.
#pragma once

#include <string>

namespace cb {

std::string commbench_version();
std::string commbench_git_commit();
std::string build_options();  // "MPI=Open MPI, CUDA=off, ..."

}  // namespace cb
