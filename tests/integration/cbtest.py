"""Helpers for integration tests that drive the real commbench binary.

Every check is an assertion that raises; a script's main() runs its test functions, prints one
line per test and a final 'N passed, N failed, N skipped' line, and exits 1 on any failure, else
77 (ctest's SKIP_RETURN_CODE) when any test it ran skipped, so a skipped check is never reported
as passed. ctest runs each test function as its own test (CB_LIST_TESTS=1 lists them), so a
skipped function shows as skipped and the others as passed.
"""
import atexit
import csv
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

COMMBENCH = os.environ.get("COMMBENCH", "commbench")
MPIEXEC = os.environ.get("COMMBENCH_MPIEXEC", "mpirun.openmpi")
FLAVOR = os.environ.get("COMMBENCH_MPI_FLAVOR", "Open MPI")
BUILD_HAS_CUDA = os.environ.get("CB_BUILD_HAS_CUDA", "OFF").upper() in ("ON", "1", "TRUE", "YES")
# A launch's warning that the machine changed under it says how this 2-core machine behaved, not
# what a test checks, and would break tests that read every stderr line; the control is still
# measured and recorded (the unit tests cover the warning's rule).
os.environ.setdefault("COMMBENCH_TEST_NO_CONTROL_WARNING", "1")
SOURCE_DIR = os.environ.get("CB_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(__file__))))

RESULT_COLUMNS = [
    "backend", "library", "algorithm", "collective", "dtype", "op", "placement", "root",
    "nranks", "nnodes", "bytes", "count", "iters", "time_us", "min_us", "p50_us", "p99_us",
    "max_us", "cv", "algbw_GBps", "busbw_GBps", "wrong", "env", "outliers",
    "roof_GBps", "efficiency", "roof_basis", "fault_bytes", "outlier_cause",
    "split", "incast", "send_skew", "imbalance_tax", "uniform_us", "drop_share",
    "p50_low_us", "p50_high_us",
]
COLLECTIVES = ["allreduce", "allgather", "reduce_scatter", "broadcast", "reduce", "alltoall",
               "gather", "scatter", "sendrecv", "barrier", "alltoallv"]


class Skip(Exception):
    pass


def is_openmpi():
    return FLAVOR == "Open MPI"


# commbench's words when Open MPI 4.1's mpirun lost the ranks' own help box (a rank that ends at
# once as it sends it): a test of an MPI start-up error's cause runs again on them.
OPEN_MPI_LOST = "lost the ranks' own error message"


def mpi_prefix(np):
    """The launcher command for np ranks of this build's MPI."""
    if is_openmpi():
        cmd = [MPIEXEC, "-np", str(np), "--bind-to", "none", "--mca", "btl", "self,vader"]
        if np > os.cpu_count():
            cmd.append("--oversubscribe")
        return cmd
    return [MPIEXEC, "-n", str(np)]


def run(args, np=None, env=None, timeout=240, check=None):
    """Runs commbench (under the MPI launcher when np is given). Returns CompletedProcess."""
    cmd = (mpi_prefix(np) if np else []) + [COMMBENCH] + list(args)
    full_env = dict(os.environ)
    full_env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    full_env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    full_env.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env)
    if check is not None and p.returncode != check:
        raise AssertionError(
            f"{' '.join(cmd)}: exit {p.returncode}, expected {check}\nstdout:\n{p.stdout[-3000:]}\n"
            f"stderr:\n{p.stderr[-3000:]}")
    return p


def timeout_beyond_startup(args, np=None, env=None):
    """A --timeout (whole seconds, at least 2) that start-up cannot reach on this machine as loaded
    as it is now: 3 x the wall time of a whole healthy run of `args`, plus 1 s. For tests that
    expect the watchdog to name the operation a rank hangs in, not set-up."""
    start = time.monotonic()
    run(args, np=np, env=env, check=0)
    return max(2, math.ceil(3 * (time.monotonic() - start)) + 1)


def straggler_warnings(stderr):
    """run's straggler warning lines, in order."""
    return [l for l in stderr.splitlines() if l.startswith("commbench: warning: straggler:")]


# A straggler run: 3 collectives x 4 sizes (12 cases) at 4 timed iterations, 3 judged calls each
# (the first of a batch is not): 36 calls, the rule needs 20. A rank sleeping 20 ms after each
# call (slow:R:20000) enters every call about 20 ms after the others, far beyond what this
# machine's load does to healthy ranks.
STRAGGLER_ARGS = ["run", "-c", "allreduce,broadcast,allgather", "-b", "1K", "-e", "8K",
                  "-w", "1", "-n", "4", "--format", "json"]


def assert_straggler(p, rank, host=None, where="before the call"):
    """The first straggler warning and the document's meta.straggler name `rank` (on `host`):
    the rank the others waited for, entering most calls last at a delay cost of 10 % or more."""
    lines = straggler_warnings(p.stderr)
    assert lines, p.stderr
    want = f"straggler: rank {rank} ({host or ''}"
    assert want in lines[0], (want, lines[0])
    doc = json.loads(p.stdout)
    s = doc["meta"]["straggler"]
    assert s["found"] and s["rank"] == rank, s
    n = s["participants"]
    assert s["calls"] >= 20 and s["last_calls"] >= (1 + 1 / n) / 2 * s["calls"], s
    assert s["delay_cost"] >= 0.1 and s["late_us"] > 0 and s["where"] == where, s
    if host:
        assert s["host"] == host, s
    return doc


def parse_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    assert rows, "empty CSV"
    assert rows[0] == RESULT_COLUMNS, f"CSV header {rows[0]} != contract"
    return [dict(zip(rows[0], r)) for r in rows[1:]]


_TEMP_DIRS = []


def _remove_temp_dirs():
    if os.environ.get("CB_KEEP_TMP"):
        return
    for d in _TEMP_DIRS:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(_remove_temp_dirs)


def assert_validated(rows):
    """Every row was validated and exact: `wrong` is 0, never empty (barrier has nothing to check,
    so its `wrong` is empty)."""
    assert rows, "no rows"
    for r in rows:
        want = "" if r["collective"] == "barrier" else "0"
        assert r["wrong"] == want, f"wrong={r['wrong']!r}, expected {want!r}: {r}"


def tempdir(prefix="cbtest-"):
    """A new private directory, removed when the script ends (kept with CB_KEEP_TMP=1)."""
    d = tempfile.mkdtemp(prefix=prefix)
    _TEMP_DIRS.append(d)
    return d


def main(tests):
    """Runs test functions; prints per-test results and a summary line."""
    if os.environ.get("CB_LIST_TESTS"):
        for t in tests:
            print(t.__name__)
        return
    passed = failed = skipped = 0
    only = sys.argv[1:]
    unknown = sorted(set(only) - {t.__name__ for t in tests})
    if unknown:
        print(f"unknown test(s): {', '.join(unknown)}")
        sys.exit(2)
    for t in tests:
        if only and t.__name__ not in only:
            continue
        try:
            t()
            passed += 1
            print(f"PASS {t.__name__}", flush=True)
        except Skip as s:
            skipped += 1
            print(f"SKIP {t.__name__}: {s}", flush=True)
        except Exception:
            failed += 1
            print(f"FAIL {t.__name__}", flush=True)
            traceback.print_exc()
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    if failed:
        sys.exit(1)
    if skipped:
        sys.exit(77)
