#include "collectives/thread_audit.hpp"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace cb {

namespace {

std::string task_file(int tid, const char* leaf) {
  return "/proc/self/task/" + std::to_string(tid) + "/" + leaf;
}

std::vector<int> other_threads() {
  const int self = static_cast<int>(::syscall(SYS_gettid));
  std::vector<int> tids;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d)) {
      int tid = std::atoi(e->d_name);
      if (tid > 0 && tid != self) tids.push_back(tid);
    }
    ::closedir(d);
  }
  return tids;
}

// schedstat: "<ns on a CPU> <ns waiting to run> <times put on a CPU>". False once the thread
// has gone.
template <typename Sample>
bool read_schedstat(int tid, Sample& s) {
  std::ifstream in(task_file(tid, "schedstat"));
  std::uint64_t waited = 0;
  return static_cast<bool>(in >> s.run_ns >> waited >> s.slices);
}

}  // namespace

void ThreadAudit::before_batch() {
  start_.clear();
  for (int tid : other_threads()) {
    Sample s;
    if (!read_schedstat(tid, s)) continue;
    start_[tid] = s;
    if (!seen_.count(tid)) {
      ThreadActivity a;
      a.tid = tid;
      std::ifstream comm(task_file(tid, "comm"));
      std::getline(comm, a.name);
      seen_[tid] = a;
    }
  }
}

void ThreadAudit::after_batch() {
  ++batches_;
  for (const auto& [tid, before] : start_) {
    Sample after;
    if (!read_schedstat(tid, after)) continue;
    if (after.slices == before.slices && after.run_ns == before.run_ns) continue;
    ThreadActivity& a = seen_[tid];
    a.batches += 1;
    a.slices += after.slices - before.slices;
    a.run_ns += after.run_ns - before.run_ns;
  }
}

std::vector<ThreadActivity> ThreadAudit::activity() const {
  std::vector<ThreadActivity> out;
  for (const auto& [tid, a] : seen_) out.push_back(a);
  return out;
}

void ThreadAudit::reset() {
  start_.clear();
  seen_.clear();
  batches_ = 0;
}

}  // namespace cb
