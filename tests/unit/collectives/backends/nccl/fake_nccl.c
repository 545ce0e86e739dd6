/* Test double for the NCCL loader: a shared library that exports NCCL's symbols with a chosen
 * version code, so version gating, missing-symbol reports and the known-place search can be
 * tested without an old or broken libnccl. Only ncclGetVersion is ever called; every other
 * function fails with ncclInternalError. Built as:
 *   fake_nccl_old      FAKE_VERSION=21212 (2.12.12, below the minimum)
 *   fake_nccl_partial  FAKE_VERSION=22809 without ncclCommInitRankConfig and ncclCommAbort
 *   fake_nccl_full     FAKE_VERSION=22809, every required symbol and ncclResetDebugInit
 *   fake_nccl_2_26     FAKE_VERSION=22605 with ncclResetDebugInit (reset unsafe there)
 *   fake_nccl_2_22     FAKE_VERSION=22203 without ncclResetDebugInit */
#ifndef FAKE_VERSION
#error FAKE_VERSION must be defined
#endif

#define FAIL_FN(name) \
  int name(void) {    \
    return 3;         \
  }

int ncclGetVersion(int* version) {
  *version = FAKE_VERSION;
  return 0;
}

FAIL_FN(ncclGetUniqueId)
#ifndef FAKE_OMIT_CONFIG
FAIL_FN(ncclCommInitRankConfig)
FAIL_FN(ncclCommAbort)
#endif
FAIL_FN(ncclCommFinalize)
FAIL_FN(ncclCommDestroy)
FAIL_FN(ncclCommGetAsyncError)
FAIL_FN(ncclCommCount)
FAIL_FN(ncclCommUserRank)
FAIL_FN(ncclAllReduce)
FAIL_FN(ncclBroadcast)
FAIL_FN(ncclReduce)
FAIL_FN(ncclAllGather)
FAIL_FN(ncclReduceScatter)
FAIL_FN(ncclSend)
FAIL_FN(ncclRecv)
FAIL_FN(ncclGroupStart)
FAIL_FN(ncclGroupEnd)

#ifdef FAKE_RESET
void ncclResetDebugInit(void) {}
#endif

const char* ncclGetErrorString(int result) {
  (void)result;
  return "fake";
}

const char* ncclGetLastError(void* comm) {
  (void)comm;
  return "";
}
