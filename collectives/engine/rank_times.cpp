#include "collectives/engine/rank_times.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "common/error.hpp"
#include "common/host_name.hpp"
#include "common/median.hpp"

namespace cb {

namespace {

std::optional<int> bound_core() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1) return std::nullopt;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) return c;
  }
  return std::nullopt;
}

int or_minus_one(const std::optional<int>& v) {
  return v.value_or(-1);
}
std::optional<int> from_minus_one(int v) {
  return v < 0 ? std::nullopt : std::optional<int>(v);
}

}  // namespace

RankPlace this_place(const Backend& backend) {
  return {backend.rank(), host_name(), backend.local_gpu(), bound_core()};
}

std::vector<RankPlace> gather_places(const RankPlace& mine, Control& control) {
  // "rank gpu core host": the host last, since it is the only field that may hold anything.
  const std::string text = fmt::format("{} {} {} {}", mine.rank, or_minus_one(mine.gpu),
                                       or_minus_one(mine.core), mine.host);
  std::vector<RankPlace> out;
  for (const std::string& s : control.allgather(text)) {
    std::istringstream in(s);
    RankPlace p;
    int gpu = -1, core = -1;
    if (!(in >> p.rank >> gpu >> core)) runtime_error("internal: bad rank place '{}'", s);
    in.get();
    std::getline(in, p.host);
    p.gpu = from_minus_one(gpu);
    p.core = from_minus_one(core);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<double> gather_times(double mine, Control& control) {
  std::vector<double> out;
  for (const std::string& s : control.allgather(fmt::format("{:.17g}", mine))) {
    out.push_back(std::strtod(s.c_str(), nullptr));
  }
  return out;
}

RankTimes rank_times(const std::vector<double>& times_us, const std::vector<RankPlace>& places) {
  RankTimes t;
  if (times_us.empty() || times_us.size() != places.size()) return t;
  std::vector<double> sorted = times_us;
  std::sort(sorted.begin(), sorted.end());
  t.min_us = sorted.front();
  t.max_us = sorted.back();
  t.median_us = median_of_sorted(sorted);
  // The lowest rank among the slowest (max_element keeps the first of equal ones; places are
  // in rank order).
  const std::size_t i = static_cast<std::size_t>(
      std::max_element(times_us.begin(), times_us.end()) - times_us.begin());
  t.slowest_rank = places[i].rank;
  t.slowest_host = places[i].host;
  t.slowest_gpu = places[i].gpu;
  t.slowest_core = places[i].core;
  return t;
}

}  // namespace cb
