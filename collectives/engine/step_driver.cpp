#include "collectives/engine/step_driver.hpp"

#include <algorithm>
#include <deque>
#include <thread>

#include "collectives/patterns/step_figures.hpp"
#include "collectives/patterns/step_program.hpp"
#include "collectives/step_call.hpp"
#include "core/watchdog.hpp"

namespace cb {

namespace {

using Clock = std::chrono::steady_clock;

double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

class HostStepDriver : public StepDriver {
 public:
  explicit HostStepDriver(Watchdog& watchdog) : watchdog_(watchdog) {}

  StepTimeline run(const StepProgram& program, const std::vector<Communicator*>& channels,
                   const std::vector<void*>& buffers) override {
    program_ = &program;
    channels_ = &channels;
    t_ = StepTimeline{};
    t_.start_us.assign(program.ops.size(), 0);
    t_.end_us.assign(program.ops.size(), 0);
    tickets_.assign(program.ops.size(), 0);
    done_.assign(program.ops.size(), false);
    outstanding_.clear();
    start_ = Clock::now();
    device_ = start_;
    for (const StepAction& a : program.actions) {
      switch (a.kind) {
        case StepAction::Kind::Compute:
          device_ += std::chrono::duration_cast<Clock::duration>(
              std::chrono::duration<double, std::micro>(a.us));
          t_.compute_us += a.us;
          busy_until(device_);
          break;
        case StepAction::Kind::Issue: {
          const StepOp& op = program.ops[a.op];
          Communicator& comm = *channels[static_cast<std::size_t>(op.channel)];
          const CollectiveCall call = step_call(op, buffers);
          t_.start_us[a.op] = us_between(start_, Clock::now());
          tickets_[a.op] = comm.start(call);
          outstanding_.push_back(a.op);
          break;
        }
        case StepAction::Kind::Wait:  // the compute after it starts once the op is done
          while (!done_[a.op]) settle_one();
          device_ = std::max(
              device_, start_ + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double, std::micro>(t_.end_us[a.op])));
          break;
      }
      watchdog_.progress(++progress_);
    }
    while (!outstanding_.empty()) settle_one();
    t_.step_us = us_between(start_, std::max(Clock::now(), device_));
    watchdog_.progress(++progress_);
    return t_;
  }

 private:
  Communicator& comm_of(std::size_t op) const {
    return *(*channels_)[static_cast<std::size_t>(program_->ops[op].channel)];
  }

  // Stamps every outstanding op that has completed; returns how many did.
  int poll() {
    int completed = 0;
    for (auto it = outstanding_.begin(); it != outstanding_.end();) {
      if (auto at = comm_of(*it).test(tickets_[*it])) {
        t_.end_us[*it] = us_between(start_, *at);
        done_[*it] = true;
        it = outstanding_.erase(it);
        ++completed;
      } else {
        ++it;
      }
    }
    return completed;
  }

  // Polls; when nothing had completed, waits for the oldest outstanding op and stamps it.
  void settle_one() {
    if (poll() > 0 || outstanding_.empty()) return;
    const std::size_t oldest = outstanding_.front();
    comm_of(oldest).wait(tickets_[oldest]);
    poll();
  }

  // Busy until the compute reaches `until`: this thread polls the outstanding collectives and
  // yields its core between polls, so that the compute takes its time without taking the
  // host's cores from the communication (a GPU's compute leaves them free).
  void busy_until(Clock::time_point until) {
    for (;;) {
      if (!outstanding_.empty()) poll();
      if (Clock::now() >= until) return;
      std::this_thread::yield();
    }
  }

  Watchdog& watchdog_;
  const StepProgram* program_ = nullptr;
  const std::vector<Communicator*>* channels_ = nullptr;
  StepTimeline t_;
  std::vector<Communicator::Ticket> tickets_;
  std::vector<bool> done_;
  std::deque<std::size_t> outstanding_;
  Clock::time_point start_;
  // Where the compute has got to: it runs at its own pace, as a device's does (a late poll or a
  // host thread the scheduler kept waiting does not delay it), and waits only where the program
  // waits for a collective.
  Clock::time_point device_;
  std::uint64_t progress_ = 0;
};

}  // namespace

std::unique_ptr<StepDriver> make_host_step_driver(Watchdog& watchdog) {
  return std::make_unique<HostStepDriver>(watchdog);
}

}  // namespace cb
