"""commbench's own launcher: `run -N` without mpirun starts the ranks itself, gathers results at
rank 0, and on failure names the rank, keeps exit codes 2-5, leaves no processes and no
temporary files behind. `-B mpi` without mpirun re-executes under the build's MPI launcher."""
import json
import os
import re
import signal
import subprocess
import time

from cbtest import (COMMBENCH, assert_validated, is_openmpi, main, parse_csv, run, tempdir,
                    timeout_beyond_startup)

STORE_ENV = "COMMBENCH_LOCAL_STORE"


def fresh_tmpdir():
    """A private TMPDIR, so the launcher's rendezvous directory can be watched (removed when the
    script ends, also after a failure)."""
    return tempdir(prefix="cbtest-launch-")


def ranks_using(tmpdir):
    """Pids of live processes whose rendezvous directory is under `tmpdir`."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        if stat.split(")")[-1].split()[0] == "Z":
            continue
        if any(e.startswith(f"{STORE_ENV}={tmpdir}".encode()) for e in env):
            pids.append(int(pid))
    return pids


def launch(args, tmpdir, extra_env=None, check=None, timeout=120):
    env = {"TMPDIR": tmpdir, "CUDA_VISIBLE_DEVICES": ""}
    env.update(extra_env or {})
    return run(args, env=env, check=check, timeout=timeout)


def assert_clean(tmpdir):
    assert os.listdir(tmpdir) == [], f"left behind in {tmpdir}: {os.listdir(tmpdir)}"
    left = ranks_using(tmpdir)
    assert not left, f"orphan ranks: {left}"
    os.rmdir(tmpdir)


def test_run_without_mpirun_starts_local_ranks():
    d = fresh_tmpdir()
    p = launch(["run", "-B", "gloo", "-N", "3", "-c", "allreduce,broadcast", "-e", "1K", "-f", "16",
                "--format", "csv", "--min-time", "0.002"], d, check=0)
    rows = parse_csv(p.stdout)
    assert rows and {r["backend"] for r in rows} == {"gloo"}, p.stdout
    assert {r["nranks"] for r in rows} == {"3"}, rows
    assert_validated(rows)
    assert_clean(d)


def test_default_is_two_local_gloo_ranks():
    d = fresh_tmpdir()
    p = launch(["run", "-B", "gloo", "-c", "allreduce", "-e", "64", "--format", "csv", "--min-time", "0.002"],
               d, check=0)
    rows = parse_csv(p.stdout)
    assert {(r["backend"], r["nranks"]) for r in rows} == {("gloo", "2")}, rows
    assert_clean(d)


def test_only_rank_0_writes():
    d = fresh_tmpdir()
    out = os.path.join(d, "..", os.path.basename(d) + "-r.csv")
    p = launch(["run", "-B", "gloo", "-N", "4", "-c", "barrier", "--output", out], d, check=0)
    assert p.stdout.count("# commbench") == 1, p.stdout  # one table, from rank 0
    assert len(open(out).read().splitlines()) == 2
    os.remove(out)
    assert_clean(d)


def test_a_dying_rank_is_named_and_ends_the_run_with_1():
    # Left alone, the surviving ranks would wait in the collective for the watchdog (--timeout);
    # the launcher must stop them long before that: 3 s grace, then SIGTERM, then SIGKILL.
    watchdog = 120
    d = fresh_tmpdir()
    start = time.monotonic()
    p = launch(["run", "-B", "gloo", "-N", "3", "-c", "allreduce", "-e", "64K", "--timeout", str(watchdog)], d,
               {"COMMBENCH_TEST_FAULT": "die:1"}, timeout=2 * watchdog)
    elapsed = time.monotonic() - start
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert re.search(r"rank 1 was killed by signal 9", p.stderr), p.stderr
    assert "timeout" not in p.stderr, p.stderr
    assert elapsed < watchdog / 2, f"the other ranks were not stopped: {elapsed:.1f} s"
    assert_clean(d)


def test_validation_failure_keeps_exit_3_and_the_results():
    d = fresh_tmpdir()
    out = os.path.join(d, "..", os.path.basename(d) + "-r.jsonl")
    p = launch(["run", "-B", "gloo", "-N", "2", "-c", "allreduce", "-e", "1K", "--format", "csv",
                "--output", out], d, {"COMMBENCH_TEST_FAULT": "corrupt:1"})
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert "validation failed" in p.stderr and "rank" not in p.stderr, p.stderr
    rows = parse_csv(p.stdout)
    assert rows and len(open(out).readlines()) == len(rows)
    os.remove(out)
    assert_clean(d)


def test_hang_keeps_exit_4():
    d = fresh_tmpdir()
    args = ["run", "-B", "gloo", "-N", "2", "-c", "barrier,allreduce", "-e", "64"]
    t = timeout_beyond_startup(args + ["-n", "1", "-w", "0"], env={"TMPDIR": d})
    p = launch(args + ["--timeout", str(t)], d, {"COMMBENCH_TEST_FAULT": "hang:1"},
               timeout=10 * t + 60)
    assert p.returncode == 4, (p.returncode, p.stderr)
    assert f"barrier made no progress for {t} s" in p.stderr, p.stderr
    assert_clean(d)


def test_bad_input_is_reported_once_before_any_rank_starts():
    d = fresh_tmpdir()
    for args, words in [(["-N", "0"], "--nranks"), (["-N", "two"], "--nranks"),
                        (["-N", "5000"], "at most 1024"),
                        (["--gloo-iface", "nonexistent0"], "unknown --gloo-iface")]:
        p = launch(["run", "-B", "gloo", "-c", "barrier"] + args, d, check=2)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        assert len(lines) == 1 and words in lines[0], (args, p.stderr)
    assert_clean(d)


def start_long_run(tmpdir, nranks):
    """A launcher running `nranks` ranks for long enough to be interrupted, once they all run."""
    env = dict(os.environ, TMPDIR=tmpdir, CUDA_VISIBLE_DEVICES="")
    proc = subprocess.Popen([COMMBENCH, "run", "-B", "gloo", "-N", str(nranks), "-c", "allreduce",
                             "-b", "1M",
                             "-e", "1M", "--min-time", "30"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120  # a wait, not a limit under test
    while len(ranks_using(tmpdir)) < nranks and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(ranks_using(tmpdir)) == nranks, "ranks did not start"
    time.sleep(0.5)
    return proc


def test_stopping_the_launcher_stops_the_ranks_and_cleans_up():
    d = fresh_tmpdir()
    proc = start_long_run(d, 2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "interrupted" in err, (proc.returncode, err)
    assert_clean(d)


def test_killing_the_launcher_takes_the_ranks_with_it():
    d = fresh_tmpdir()
    proc = start_long_run(d, 3)
    proc.kill()  # SIGKILL: no clean-up in the launcher, the kernel ends its ranks
    proc.communicate()
    deadline = time.monotonic() + 60  # a wait, not a limit under test
    while ranks_using(d) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not ranks_using(d), "ranks outlived their launcher"
    # Only the rendezvous directory can stay behind after SIGKILL.
    for entry in os.listdir(d):
        subprocess.run(["rm", "-rf", os.path.join(d, entry)], check=True)
    assert_clean(d)


def complete_lines(path):
    try:
        text = open(path).read()
    except FileNotFoundError:
        return []
    return text.split("\n")[:-1]  # a line without its newline yet is not complete


def test_jsonl_keeps_every_finished_case_when_the_run_is_killed():
    d = fresh_tmpdir()
    out = os.path.join(d, "..", os.path.basename(d) + "-r.jsonl")
    env = dict(os.environ, TMPDIR=d, CUDA_VISIBLE_DEVICES="")
    # 9 sizes of 50 iterations each, up to 64 MiB: seconds of work after the first records, and
    # fewer records in all than a stream buffer holds, so only a flush can show them early.
    args = ["run", "-B", "gloo", "-N", "2", "-c", "allreduce", "-b", "1K", "-e", "64M", "-f", "4", "-n", "50",
            "-w", "1", "--format", "csv", "--output", out]
    proc = subprocess.Popen([COMMBENCH] + args, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    seen = []
    try:
        while proc.poll() is None and len(seen) < 3:
            seen = complete_lines(out)
            time.sleep(0.02)
        running = proc.poll() is None
    finally:
        proc.kill()  # SIGKILL: rank 0 dies with its launcher, no chance to flush anything more
        proc.communicate()
    assert running, f"the run ended before 3 records could be read from {out}: {seen}"
    deadline = time.monotonic() + 60  # a wait, not a limit under test
    while ranks_using(d) and time.monotonic() < deadline:
        time.sleep(0.05)
    kept = [json.loads(l) for l in complete_lines(out)]
    os.remove(out)
    assert len(kept) >= len(seen) >= 3, (len(kept), len(seen))
    # Killed with cases still to run: what was read came from flushes during the run, not from
    # the writes at its end.
    assert len(kept) < 9, f"all 9 cases had finished when the records appeared: {len(kept)}"
    assert [r["bytes"] for r in kept[:3]] == [1024, 4096, 16384], kept[:3]
    assert all(r["collective"] == "allreduce" and r["wrong"] == 0 for r in kept), kept
    for entry in os.listdir(d):  # only the rendezvous directory can stay after SIGKILL
        subprocess.run(["rm", "-rf", os.path.join(d, entry)], check=True)
    assert_clean(d)


def test_mpi_backend_reexecutes_under_the_mpi_launcher():
    d = fresh_tmpdir()
    p = launch(["run", "-B", "mpi", "-N", "2", "-c", "allreduce", "-e", "64", "--format", "csv",
                "--min-time", "0.002"], d, check=0)
    rows = parse_csv(p.stdout)
    assert {(r["backend"], r["nranks"]) for r in rows} == {("mpi", "2")}, rows
    assert all(r["library"].startswith("Open MPI" if is_openmpi() else "MPICH") for r in rows)
    assert_clean(d)


def test_rank_count_must_match_the_launcher():
    p = run(["run", "-B", "gloo", "-N", "3", "-c", "barrier"], np=2, check=2)
    assert "-N 3 conflicts with the 2 ranks" in p.stderr, p.stderr


if __name__ == "__main__":
    main([test_run_without_mpirun_starts_local_ranks,
          test_default_is_two_local_gloo_ranks,
          test_only_rank_0_writes,
          test_a_dying_rank_is_named_and_ends_the_run_with_1,
          test_validation_failure_keeps_exit_3_and_the_results,
          test_hang_keeps_exit_4,
          test_bad_input_is_reported_once_before_any_rank_starts,
          test_stopping_the_launcher_stops_the_ranks_and_cleans_up,
          test_killing_the_launcher_takes_the_ranks_with_it,
          test_jsonl_keeps_every_finished_case_when_the_run_is_killed,
          test_mpi_backend_reexecutes_under_the_mpi_launcher,
          test_rank_count_must_match_the_launcher])
