#include "collectives/engine/clock_sync.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "common/host_name.hpp"

namespace cb {

ClockOffset offset_from(const std::vector<RoundTrip>& trips) {
  if (trips.empty()) runtime_error("internal: a clock offset from no round trips");
  const auto best = std::min_element(trips.begin(), trips.end(), [](const auto& a, const auto& b) {
    return a.back_us - a.sent_us < b.back_us - b.sent_us;
  });
  return {best->answered_us - (best->sent_us + best->back_us) / 2,
          (best->back_us - best->sent_us) / 2};
}

ClockOffset compose(const ClockOffset& a_to_b, const ClockOffset& b_to_c) {
  return {a_to_b.offset_us + b_to_c.offset_us, a_to_b.error_us + b_to_c.error_us};
}

double ClockLine::offset_at(double at_us) const {
  const double span = after_at_us - before_at_us;
  if (!(span > 0)) return before.offset_us;
  const double f = std::clamp((at_us - before_at_us) / span, 0.0, 1.0);
  return before.offset_us + f * (after.offset_us - before.offset_us);
}

double ClockLine::error_us() const {
  return std::max(before.error_us, after.error_us);
}

std::vector<std::vector<TreeEdge>> clock_tree(int n) {
  std::vector<std::vector<TreeEdge>> levels;
  int top = 1;
  while (top < n) top <<= 1;
  for (int step = top / 2; step >= 1; step /= 2) {
    std::vector<TreeEdge> level;
    for (int r = 0; r + step < n; r += 2 * step) level.push_back({r, r + step});
    if (!level.empty()) levels.push_back(std::move(level));
  }
  return levels;
}

namespace {

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The monotonic clock's offset of this time namespace ("0 0" outside any), where the kernel
// has time namespaces.
std::string monotonic_offset() {
  std::ifstream in("/proc/self/timens_offsets");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("monotonic", 0) == 0) return line;
  }
  return "";
}

}  // namespace

std::string clock_identity() {
  const std::string boot = first_line("/proc/sys/kernel/random/boot_id");
  // Without a boot id nothing says two processes share a clock: each is its own.
  if (boot.empty()) return "unknown " + host_name() + " " + std::to_string(::getpid());
  return boot + " " + monotonic_offset();
}

ClockSync::ClockSync(Control& control, std::vector<std::string> identities, double skew_us)
    : control_(control), identities_(std::move(identities)), skew_us_(skew_us) {
  shared_ = std::all_of(identities_.begin(), identities_.end(),
                        [&](const std::string& id) { return id == identities_.front(); });
}

double ClockSync::now_us() const {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count() + skew_us_;
}

ClockOffset ClockSync::measure() {
  if (shared_) return {};
  const int rank = control_.rank();
  ClockOffset mine;  // rank 0's is exactly 0
  for (const auto& level : clock_tree(control_.size())) {
    for (const TreeEdge& e : level) {
      if (e.parent != rank && e.child != rank) continue;
      const bool same = identities_[static_cast<std::size_t>(e.parent)] ==
                        identities_[static_cast<std::size_t>(e.child)];
      if (e.parent == rank) {
        ClockOffset child{};
        if (!same) {
          std::vector<RoundTrip> trips;
          for (int k = 0; k < kRoundTrips; ++k) {
            RoundTrip t;
            t.sent_us = now_us();
            control_.send(e.child, &t.sent_us, sizeof t.sent_us);
            control_.recv(e.child, &t.answered_us, sizeof t.answered_us);
            t.back_us = now_us();
            trips.push_back(t);
          }
          child = offset_from(trips);
        }
        const ClockOffset to_0 = compose(child, mine);
        const double out[2] = {to_0.offset_us, to_0.error_us};
        control_.send(e.child, out, sizeof out);
      } else {
        if (!same) {
          for (int k = 0; k < kRoundTrips; ++k) {
            double asked = 0;
            control_.recv(e.parent, &asked, sizeof asked);
            const double answer = now_us();
            control_.send(e.parent, &answer, sizeof answer);
          }
        }
        double in[2] = {0, 0};
        control_.recv(e.parent, in, sizeof in);
        // Rank 0's own clock is exactly rank 0's, whatever the path to it.
        mine = identities_[static_cast<std::size_t>(rank)] == identities_.front()
                   ? ClockOffset{}
                   : ClockOffset{in[0], in[1]};
      }
    }
  }
  return mine;
}

}  // namespace cb
