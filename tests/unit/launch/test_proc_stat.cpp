// /proc/PID/stat read past a command name that holds ") " (the name is the process's to choose).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch/proc_stat.hpp"

namespace cb {
namespace {

TEST(ProcStat, ReadsTheStateAndGroupPastANameWithAParenthesis) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::prctl(PR_SET_NAME, "x) S 1 2 3");
    ::setpgid(0, 0);
    ::raise(SIGSTOP);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(status));
  const std::optional<ProcStat> s = read_proc_stat(child);
  ::kill(child, SIGKILL);
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->state, 'T');
  EXPECT_EQ(s->pgrp, child);
  EXPECT_FALSE(read_proc_stat(child).has_value());  // reaped: gone
  EXPECT_EQ(read_proc_stat(::getpid())->pgrp, ::getpgrp());
}

}  // namespace
}  // namespace cb
