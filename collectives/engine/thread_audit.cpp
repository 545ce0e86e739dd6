#include "collectives/engine/thread_audit.hpp"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

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

// Minor + major page faults of the calling thread (/proc/thread-self/stat fields 10 and 12).
std::uint64_t calling_thread_page_faults() {
  std::ifstream in("/proc/thread-self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string f[10];
  for (auto& x : f) fields >> x;  // fields 3 to 12
  return std::strtoull(f[7].c_str(), nullptr, 10) + std::strtoull(f[9].c_str(), nullptr, 10);
}

}  // namespace

void ThreadAudit::before_batch() {
  own_faults_at_start_ = calling_thread_page_faults();
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
  own_faults_ += calling_thread_page_faults() - own_faults_at_start_;
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
  own_faults_ = 0;
}

}  // namespace cb
