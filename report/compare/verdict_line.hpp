// compare's verdict in one line, the first line of every report and the exit message:
// "REGRESSION allreduce 1-8 MiB 3.0x slower (99 % CI 2.7-3.3x, floor 1.25x; 5 v 5 launches)",
// "OK worst ...", "INCONCLUSIVE ...".
#pragma once

#include <string>

namespace cb {

struct CompareReport;

std::string verdict_line(const CompareReport& report);

}  // namespace cb
