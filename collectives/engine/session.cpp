#include "collectives/engine/session.hpp"

#include <fmt/format.h>
#include <cstdlib>

#include <algorithm>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <utility>

#include "collectives/engine/control_measurement.hpp"
#include "collectives/engine/straggler.hpp"
#include "common/error.hpp"
#include "core/watchdog.hpp"

namespace cb {

Session::Session(std::vector<std::unique_ptr<Backend>>& backends,
                 const std::vector<std::vector<Case>>& plans, Control& control, Watchdog& watchdog,
                 RunnerOptions options, std::function<void(const ResultRecord&)> sink)
    : backends_(backends),
      plans_(plans),
      control_(control),
      watchdog_(watchdog),
      options_(options),
      sink_(std::move(sink)) {}

// Printed once per distinct message, on rank 0 only.
void Session::note(const std::string& message, const SessionEvents& events) {
  if (control_.rank() != 0) return;
  if (std::find(noted_.begin(), noted_.end(), message) != noted_.end()) return;
  noted_.push_back(message);
  if (events.before_note) events.before_note();
  std::cerr << "commbench: note: " << message << "\n";
}

std::vector<std::size_t> case_order(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (seed == 0) return order;
  std::mt19937_64 gen(seed);
  for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[gen() % i]);
  return order;
}

void Session::run(int nnodes, const SessionEvents& events) {
  std::size_t total = 0, done = 0;
  for (const auto& plan : plans_) total += plan.size();
  launch_control_ = LaunchControl{};
  launch_control_.case_order_seed = case_order_seed();
  HostLoad load;
  load.start();
  sample_control_collectively(control_, "start", launch_control_);
  bool middle_taken = false;
  for (std::size_t bi = 0; bi < backends_.size(); ++bi) {
    Backend& backend = *backends_[bi];
    Runner runner(backend, control_, watchdog_, options_, plans_[bi]);
    comms_.clear();  // the previous backend's are done
    auto& comms = comms_;
    // Records of a shuffled order wait here, by plan index, until the backend is done.
    std::map<std::size_t, ResultRecord> held;
    for (std::size_t index : case_order(plans_[bi].size(), launch_control_.case_order_seed)) {
      const Case& c = plans_[bi][index];
      if (!middle_taken && 2 * done >= total) {
        sample_control_collectively(control_, "middle", launch_control_);
        middle_taken = true;
      }
      ++done;
      if (events.case_started) {
        events.case_started(done, total, fmt::format("{} {}", backend.name(), describe(c)));
      }
      auto key = std::make_pair(c.collective, c.algorithm);
      auto it = comms.find(key);
      if (it == comms.end()) {
        watchdog_.arm(fmt::format("{} communicator set-up for {} ({})", backend.name(),
                                  name(c.collective), c.algorithm));
        it = comms.emplace(key, backend.open(c.collective, c.algorithm)).first;
        watchdog_.disarm();
      }
      if (!it->second.comm) {
        note(fmt::format("{}: {} algorithm {} skipped: {}", backend.name(), name(c.collective),
                         c.algorithm, it->second.skipped_reason),
             events);
        continue;
      }
      const CollectiveCall shape = runner.prepare(*it->second.comm, c);
      if (std::string why = it->second.comm->skip_reason(shape); !why.empty()) {
        note(fmt::format("{}: {} algorithm {} skipped where {}", backend.name(), name(c.collective),
                         c.algorithm, why),
             events);
        continue;
      }
      Measurement m = runner.run(*it->second.comm, c, done);
      ResultRecord rec = make_record(backend, c, m, nnodes);
      if (std::string chosen = it->second.comm->describe_choice(); !chosen.empty()) {
        rec.algorithm = chosen;  // what the library picked for "default"
      }
      if (c.split) measure_twin(runner, *it->second.comm, c, m, done, rec, events);
      if (!m.lateness.ranks.empty()) case_lateness_.push_back(std::move(m.lateness));
      if (rec.wrong && *rec.wrong > 0) {
        wrong_total_ += *rec.wrong;
        if (wrong_cases_++ == 0) first_wrong_ = fmt::format("{} {}", backend.name(), describe(c));
      }
      if (launch_control_.case_order_seed == 0) {
        sink_(rec);
      } else {
        held.emplace(index, std::move(rec));
      }
    }
    for (const auto& [index, rec] : held) sink_(rec);
  }
  if (!middle_taken) sample_control_collectively(control_, "middle", launch_control_);
  sample_control_collectively(control_, "end", launch_control_);
  load.finish(launch_control_);
}

// alltoallv: the imbalance tax, this case's time over that of the uniform split of the same
// total, measured right after it on the same communicator and buffers (the uniform split is its
// own reference). Wrong elements of the twin count in the record's.
void Session::measure_twin(Runner& runner, Communicator& comm, const Case& c, const Measurement& m,
                           std::uint64_t index, ResultRecord& rec, const SessionEvents& events) {
  if (!has_twin(c)) {
    rec.uniform_us = m.time_us;
    rec.imbalance_tax = 1.0;
    return;
  }
  const Case twin = uniform_twin(c, comm.size());
  const CollectiveCall shape = runner.prepare(comm, twin);
  if (std::string why = comm.skip_reason(shape); !why.empty()) {
    note(fmt::format("{}: no imbalance tax for {}: its uniform twin is skipped where {}",
                     rec.backend, describe(c), why),
         events);
    return;
  }
  const Measurement u = runner.run(comm, twin, index);
  rec.uniform_us = u.time_us;
  if (u.time_us > 0) rec.imbalance_tax = m.time_us / u.time_us;
  if (u.wrong) rec.wrong = rec.wrong.value_or(0) + *u.wrong;
}

void Session::warn_if_control_moved() const {
  if (control_.rank() != 0) return;
  if (const char* quiet = std::getenv("COMMBENCH_TEST_NO_CONTROL_WARNING"); quiet && *quiet == '1') {
    return;  // test-only: see docs/contributing.md
  }
  if (std::string moved = control_moved(launch_control_); !moved.empty()) {
    std::cerr << "commbench: warning: the machine changed during this launch (" << moved
              << "): its figures mix two speeds of the host; compare launches whose control "
                 "agrees\n";
  }
}

std::optional<RankStraggler> Session::straggler() const {
  return judge_straggler(case_lateness_);
}

void Session::warn_if_straggler() const {
  if (control_.rank() != 0) return;
  if (auto s = straggler(); s && s->found) {
    std::cerr << "commbench: warning: " << straggler_warning(*s) << "\n";
  }
}

void Session::check_results() const {
  if (wrong_cases_ == 0) return;
  fail(ErrorKind::Validation, "validation failed: {} wrong element{} in {} case{} (first: {})",
       wrong_total_, wrong_total_ == 1 ? "" : "s", wrong_cases_, wrong_cases_ == 1 ? "" : "s",
       first_wrong_);
}

}  // namespace cb
