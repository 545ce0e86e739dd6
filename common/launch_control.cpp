#include "common/launch_control.hpp"

#include <algorithm>

#include "common/median.hpp"

namespace cb {

namespace {

template <class F>
std::vector<double> figures(const std::vector<ControlSample>& s, F f) {
  std::vector<double> v;
  for (const auto& x : s) {
    if (f(x) > 0) v.push_back(f(x));
  }
  std::sort(v.begin(), v.end());
  return v;
}

double moved(const std::vector<double>& v) {
  return v.empty() ? 1 : v.back() / v.front();
}

double number(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}

}  // namespace

double LaunchControl::pingpong_ns() const {
  return median_of_sorted(figures(samples, [](const ControlSample& s) { return s.pingpong_ns; }));
}

double LaunchControl::compute_us() const {
  return median_of_sorted(figures(samples, [](const ControlSample& s) { return s.compute_us; }));
}

double LaunchControl::pingpong_moved() const {
  return moved(figures(samples, [](const ControlSample& s) { return s.pingpong_ns; }));
}

double LaunchControl::compute_moved() const {
  return moved(figures(samples, [](const ControlSample& s) { return s.compute_us; }));
}

void to_json(nlohmann::json& j, const LaunchControl& c) {
  j = nlohmann::json::object();
  if (c.repeat) j["repeat"] = *c.repeat;
  j["case_order_seed"] = c.case_order_seed;
  auto samples = nlohmann::json::array();
  for (const auto& s : c.samples) {
    samples.push_back({{"at", s.at}, {"pingpong_ns", s.pingpong_ns}, {"compute_us", s.compute_us}});
  }
  j["control"] = samples;
  j["steal_fraction"] = c.steal_fraction;
  j["load_average"] = c.load_average;
}

void from_json(const nlohmann::json& j, LaunchControl& c) {
  c = LaunchControl{};
  if (!j.is_object()) return;
  if (auto it = j.find("repeat"); it != j.end() && it->is_number_integer()) {
    c.repeat = it->get<int>();
  }
  if (auto it = j.find("case_order_seed"); it != j.end() && it->is_number_unsigned()) {
    c.case_order_seed = it->get<std::uint64_t>();
  }
  if (auto it = j.find("control"); it != j.end() && it->is_array()) {
    for (const auto& s : *it) {
      if (!s.is_object()) continue;
      ControlSample x;
      if (auto a = s.find("at"); a != s.end() && a->is_string()) x.at = a->get<std::string>();
      x.pingpong_ns = number(s, "pingpong_ns");
      x.compute_us = number(s, "compute_us");
      c.samples.push_back(x);
    }
  }
  c.steal_fraction = number(j, "steal_fraction");
  c.load_average = number(j, "load_average");
}

}  // namespace cb
