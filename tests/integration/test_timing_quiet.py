"""While a batch is timed, no commbench thread other than the rank's main thread runs.

Every rank audits /proc/self/task around its timed batches (COMMBENCH_DIAGNOSTICS) during a
fixed-iteration run of more than half a second of timed work, so that a watchdog polling every
200 ms would be seen running in them; commbench names its own threads "cb-...". MPI under this
build's launcher, and Gloo under the local launcher."""
import json
import os
import subprocess
import sys

from cbtest import Skip, main, parse_csv, run, tempdir

CASE = ["-c", "allreduce", "-b", "64K", "-e", "64K", "--no-check", "--progress", "never",
        "--format", "csv"]
TARGET_S = 1.5  # timed seconds aimed at
AT_LEAST_S = 0.6  # three 200 ms polls


def have_gloo():
    p = run(["list", "backends"], check=0)
    return any(line.split()[:2] == ["gloo", "available"] for line in p.stdout.splitlines())


def timed_seconds(rows):
    return float(rows[0]["time_us"]) * int(rows[0]["iters"]) / 1e6


def audited_run(backend_args, np):
    # Iterations for TARGET_S of timed work, from a short adaptive run of the same case. On a
    # loaded machine that estimate can be several times off, so a run that timed too little to
    # catch a poll is sized again from what it measured (at most three runs).
    p = run(["run"] + backend_args + CASE + ["--min-time", "0.05"], np=np, check=0)
    per_iter_us = float(parse_csv(p.stdout)[0]["time_us"])
    for _ in range(3):
        iters = int(min(max(TARGET_S * 1e6 / per_iter_us, 1000), 5_000_000))
        diag = os.path.join(tempdir(), "diagnostics.jsonl")
        p = run(["run"] + backend_args + CASE + ["-n", str(iters), "-w", "10"], np=np,
                env={"COMMBENCH_DIAGNOSTICS": diag}, check=0, timeout=300)
        rows = parse_csv(p.stdout)
        with open(diag) as f:
            lines = [json.loads(line) for line in f]
        if len(rows) != 1 or timed_seconds(rows) >= AT_LEAST_S:
            break
        per_iter_us = float(rows[0]["time_us"])
    return rows, lines


def assert_quiet(rows, lines, nranks, library_threads_at_most=None):
    assert len(rows) == 1, rows
    timed_s = timed_seconds(rows)
    assert timed_s >= AT_LEAST_S, f"only {timed_s:.2f} s timed: too short to catch a poll"
    assert sorted(d["rank"] for d in lines) == list(range(nranks)), lines
    for d in lines:
        # The warm-up batch and the fixed one, and a batch timed whole beside it where the
        # case is fast enough for that.
        assert d["batches"] == 2 + d["whole_batches"], d
        others = d["other_threads"]
        # The audit sees commbench's own thread (so the check below is not vacuous) ...
        assert any(t["name"] == "cb-watchdog" for t in others), others
        # ... and none of commbench's threads ran in any timed batch.
        ran = [t for t in others if t["name"].startswith("cb-") and t["batches"] > 0]
        libs = [t for t in others if not t["name"].startswith("cb-") and t["batches"] > 0]
        assert not ran, f"rank {d['rank']}: ran while timed: {ran} (library threads: {libs})"
        if library_threads_at_most is not None:
            assert len(libs) <= library_threads_at_most, f"rank {d['rank']}: {libs}"


def test_mpi_ranks_run_alone_while_timed():
    rows, lines = audited_run(["-B", "mpi"], np=2)
    assert_quiet(rows, lines, 2)


def test_gloo_ranks_run_alone_while_timed():
    if not have_gloo():
        raise Skip("this build has no Gloo backend")
    rows, lines = audited_run(["-B", "gloo", "-N", "2"], np=None)
    # Gloo's TCP device thread carries the data (and wakes every 10 ms); the control channel
    # shares that device, so it adds no second one.
    assert_quiet(rows, lines, 2, library_threads_at_most=1)


def test_fast_cases_take_time_us_from_batches_without_a_clock_read():
    # Under 20 us per iteration a clock read after every iteration (about 10 ns) would show in
    # time_us, so each stamped batch has a twin of the same length timed only as a whole, and
    # time_us comes from the twins; slower cases time the stamped batches alone.
    diag = os.path.join(tempdir(), "diagnostics.jsonl")
    p = run(["run", "-B", "mpi", "-c", "allreduce", "-b", "8", "-e", "4M", "-f", "524288",
             "-w", "100", "--no-check", "--progress", "never", "--format", "csv"], np=2,
            env={"COMMBENCH_DIAGNOSTICS": diag}, check=0, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = {int(r["bytes"]): r for r in parse_csv(p.stdout)}
    with open(diag) as f:
        lines = [json.loads(line) for line in f]
    assert sorted(rows) == [8, 4194304], sorted(rows)
    for d in lines:
        row = rows[d["bytes"]]
        # Every timed iteration behind time_us has its stamped twin, one sample each.
        assert d["iters"] == int(row["iters"]), (d, row)
        if d["bytes"] == 8:
            assert d["whole_batches"] >= 1, d
            assert d["batches"] == 1 + 2 * d["whole_batches"], d  # the warm-up, then pairs
        else:
            assert float(row["p50_us"]) > 20, row
            assert d["whole_batches"] == 0, d


def warm_up_run(fault):
    diag = os.path.join(tempdir(), "diagnostics.jsonl")
    p = run(["run", "-B", "mpi", "-c", "allreduce", "-b", "8", "-e", "8", "--min-time", "0.03",
             "--no-check", "--progress", "never", "--format", "csv"], np=2,
            env={"COMMBENCH_TEST_FAULT": fault, "COMMBENCH_DIAGNOSTICS": diag}, check=0,
            timeout=120)
    assert p.returncode == 0, p.stderr
    rows = parse_csv(p.stdout)
    with open(diag) as f:
        lines = [json.loads(line) for line in f]
    assert len(rows) == 1 and sorted(d["rank"] for d in lines) == [0, 1], (rows, lines)
    return rows[0], lines


def test_warm_up_absorbs_the_page_faults_of_a_case_first_calls():
    # Rank 1 maps and writes 4 MiB of fresh memory after each of the case's first 11 calls, as
    # a library that grows its pools at first. At 1.2 ms or more per call (2 ms alone here, 20
    # ms a call under heavy load) a warm-up that stopped at a fifth of the 30 ms budget would
    # leave some of them to the timed loop; this one goes on until a batch took no page fault
    # and its time stopped falling (or 10 budgets passed), so none are left.
    row, lines = warm_up_run("faults:1:4194304:11")
    # Less than one faulting call's 4 MiB in the whole timed loop (fault_bytes is per timed
    # call, twice iters where fast cases time twin batches): a stray page the kernel reclaimed
    # and faulted back is not one of the case's first calls.
    assert float(row["fault_bytes"]) * 2 * int(row["iters"]) < 4194304, row
    assert row["outlier_cause"] != "page faults", row  # the machine may still preempt it
    for d in lines:
        assert d["warmup_iters"] > 11 and d["warmup_end"] != "faults on every call", d


def test_slow_iterations_of_ranks_sharing_their_cores_with_a_hog_are_put_down_to_preemption():
    # One busy process per CPU: every rank's core has another runnable thread, so the ranks are
    # switched out for it while timed, and the slow iterations lie in batches where a rank was.
    # (Where other work loads the machine beyond the hogs, every call can be as slow as the
    # next, with no outliers to attribute: up to three tries.)
    for _ in range(3):
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(os.cpu_count() or 1)]
        try:
            p = run(["run", "-B", "mpi", "-c", "allreduce", "-b", "8", "-e", "8", "--min-time",
                     "0.3", "--no-check", "--progress", "never", "--format", "csv"], np=2,
                    check=0, timeout=120)
        finally:
            for h in hogs:
                h.kill()
                h.wait()
        row = parse_csv(p.stdout)[0]
        if row["outliers"] == "true":
            break
    assert row["outliers"] == "true", row
    assert row["outlier_cause"] == "preempted", row


def test_a_library_rhythm_of_slow_calls_is_its_figure_not_outliers():
    # Rank 1 sleeps 300 us after every 16th call it issues, as a library whose flow control
    # stops back-to-back calls at a steady rhythm: the slow calls recur through every timed
    # batch with no page fault or preemption to account for them, so outlier_cause names the
    # rhythm, the case is not counted in `outliers`, and the table notes it instead of warning.
    # (Where other work preempts the ranks, the same calls read `preempted`: up to three tries.)
    for _ in range(3):
        out = os.path.join(tempdir(), "rhythm.csv")
        p = run(["run", "-B", "mpi", "-c", "allreduce", "-b", "8", "-e", "8", "--min-time",
                 "0.2", "--no-check", "--progress", "never", "--output", out], np=2,
                env={"COMMBENCH_TEST_FAULT": "stall:1:300:16"}, check=0, timeout=120)
        assert p.returncode == 0, p.stderr
        row = parse_csv(open(out).read())[0]
        if row["outlier_cause"] == "in every batch":
            break
    assert row["outlier_cause"] == "in every batch", row
    assert float(row["p99_us"]) > 10 * float(row["p50_us"]), row  # its figures show them
    assert row["outliers"] == "false", row
    assert "# note: 1 of 1 case had slow calls in every timed batch" in p.stdout, p.stdout
    assert "# warning:" not in p.stdout, p.stdout


def test_warm_up_stops_for_a_library_that_faults_on_every_call():
    # Faults on every call at a steady rate are the library's way: the warm-up recognises them
    # and stops, and the case is measured as the library behaves, its faults in fault_bytes.
    row, lines = warm_up_run("faults:1:1048576")
    assert float(row["fault_bytes"]) >= 1 << 20, row
    for d in lines:
        assert d["warmup_end"] in ("faults on every call", "bound"), d


if __name__ == "__main__":
    main([test_mpi_ranks_run_alone_while_timed, test_gloo_ranks_run_alone_while_timed,
          test_fast_cases_take_time_us_from_batches_without_a_clock_read,
          test_warm_up_absorbs_the_page_faults_of_a_case_first_calls,
          test_slow_iterations_of_ranks_sharing_their_cores_with_a_hog_are_put_down_to_preemption,
          test_a_library_rhythm_of_slow_calls_is_its_figure_not_outliers,
          test_warm_up_stops_for_a_library_that_faults_on_every_call])
