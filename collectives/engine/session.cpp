#include "collectives/engine/session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <utility>

#include "collectives/engine/watchdog.hpp"
#include "common/error.hpp"

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

void Session::run(int nnodes, const SessionEvents& events) {
  std::size_t total = 0, done = 0;
  for (const auto& plan : plans_) total += plan.size();
  for (std::size_t bi = 0; bi < backends_.size(); ++bi) {
    Backend& backend = *backends_[bi];
    Runner runner(backend, control_, watchdog_, options_, plans_[bi]);
    comms_.clear();  // the previous backend's are done
    auto& comms = comms_;
    for (const Case& c : plans_[bi]) {
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
      CollectiveCall shape{c.collective,        c.dtype, c.op,    c.placement,
                           std::max(c.root, 0), c.count, nullptr, nullptr};
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
      if (rec.wrong && *rec.wrong > 0) {
        wrong_total_ += *rec.wrong;
        if (wrong_cases_++ == 0) first_wrong_ = fmt::format("{} {}", backend.name(), describe(c));
      }
      sink_(rec);
    }
  }
}

void Session::check_results() const {
  if (wrong_cases_ == 0) return;
  fail(ErrorKind::Validation, "validation failed: {} wrong element{} in {} case{} (first: {})",
       wrong_total_, wrong_total_ == 1 ? "" : "s", wrong_cases_, wrong_cases_ == 1 ? "" : "s",
       first_wrong_);
}

}  // namespace cb
