#include "launch/proc_stat.hpp"

#include <cstdio>

namespace cb {

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return std::nullopt;
  char text[512] = {0};
  const std::size_t n = std::fread(text, 1, sizeof(text) - 1, f);
  std::fclose(f);
  const char* close = nullptr;  // the last ')' ends the name
  for (std::size_t i = 0; i < n; ++i) {
    if (text[i] == ')') close = text + i;
  }
  ProcStat s;
  int pgrp = 0;  // after the parent's pid
  if (!close || std::sscanf(close + 1, " %c %*d %d", &s.state, &pgrp) != 2) return std::nullopt;
  s.pgrp = pgrp;
  return s;
}

}  // namespace cb
