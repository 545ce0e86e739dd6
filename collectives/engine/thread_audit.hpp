// Which other threads of this process ran while the calling thread timed a batch, read from
// /proc/self/task/<tid>/schedstat (time on a CPU, times scheduled) just before and just after
// each batch, outside the timed region. The evidence that nothing of commbench's own (its
// threads are named "cb-...") wakes up during timing; library threads are listed too. The
// calling thread's page faults during batches are counted as well.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cb {

struct ThreadActivity {
  int tid = 0;
  std::string name;           // /proc/self/task/<tid>/comm
  std::uint64_t batches = 0;  // batches during which it ran
  std::uint64_t slices = 0;   // times it was put on a CPU during batches
  std::uint64_t run_ns = 0;   // its time on a CPU during batches
};

class ThreadAudit {
 public:
  void before_batch();
  void after_batch();
  std::uint64_t batches() const { return batches_; }
  // Page faults the calling thread took during batches (minor and major).
  std::uint64_t own_page_faults() const { return own_faults_; }
  // Every thread other than the caller seen at a batch start, in tid order (zeros when idle).
  std::vector<ThreadActivity> activity() const;
  void reset();

 private:
  struct Sample {
    std::uint64_t run_ns = 0, slices = 0;
  };
  std::map<int, Sample> start_;
  std::map<int, ThreadActivity> seen_;
  std::uint64_t batches_ = 0;
  std::uint64_t own_faults_at_start_ = 0;
  std::uint64_t own_faults_ = 0;
};

}  // namespace cb
