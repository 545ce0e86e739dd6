"""Helpers for integration tests that drive the real commbench binary.

Every check is an assertion that raises; a script's main() runs its test functions, prints one
line per test and a final 'N passed, N failed' line, and exits non-zero on any failure
(77 = skipped, for ctest's SKIP_RETURN_CODE).
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import traceback

COMMBENCH = os.environ.get("COMMBENCH", "commbench")
MPIEXEC = os.environ.get("COMMBENCH_MPIEXEC", "mpirun.openmpi")
FLAVOR = os.environ.get("COMMBENCH_MPI_FLAVOR", "Open MPI")
SOURCE_DIR = os.environ.get("CB_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(__file__))))

RESULT_COLUMNS = [
    "backend", "library", "algorithm", "collective", "dtype", "op", "placement", "root",
    "nranks", "nnodes", "bytes", "count", "iters", "time_us", "min_us", "p50_us", "p99_us",
    "max_us", "cv", "algbw_GBps", "busbw_GBps", "wrong",
]
COLLECTIVES = ["allreduce", "allgather", "reduce_scatter", "broadcast", "reduce", "alltoall",
               "gather", "scatter", "sendrecv", "barrier"]


class Skip(Exception):
    pass


def is_openmpi():
    return FLAVOR == "Open MPI"


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


def parse_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    assert rows, "empty CSV"
    assert rows[0] == RESULT_COLUMNS, f"CSV header {rows[0]} != contract"
    return [dict(zip(rows[0], r)) for r in rows[1:]]


def tempdir():
    return tempfile.mkdtemp(prefix="cbtest-")


def main(tests):
    """Runs test functions; prints per-test results and a summary line."""
    passed = failed = skipped = 0
    only = sys.argv[1:]
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
    if skipped and not passed:
        sys.exit(77)
