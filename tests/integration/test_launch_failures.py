"""Launches that go wrong, through the real binary: a rank stopped with SIGSTOP is named in the
timeout line (rank 0 too: the commbench that started the ranks speaks for it; under mpirun,
--launch and the local launcher), a launcher that never starts its ranks is stopped at the
start-up bound, hydra's banner about a dead rank stays off stdout, and an MPI start-up error's own words reach the first line of tune --env's warning.
Exit codes, first stderr lines, files and processes left."""
import os
import signal
import subprocess
import time

from cbtest import (COMMBENCH, OPEN_MPI_LOST, Skip, is_openmpi, main, mpi_prefix, parse_csv,
                    tempdir)
from test_orphans import alive, descendants, env_of, fake_launcher

QUICK = ["-c", "allreduce", "-e", "64", "--min-time", "0.002"]


def ranks_of(root):
    """rank -> pid of the commbench ranks under `root` (their launcher's rank variable)."""
    ranks = {}
    for pid in descendants(root):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() != "commbench":
                    continue
        except OSError:
            continue
        env = env_of(pid)
        for var in (b"OMPI_COMM_WORLD_RANK", b"PMI_RANK", b"COMMBENCH_LOCAL_RANK"):
            if var in env:
                ranks.setdefault(int(env[var]), pid)  # the rank, not a child of it
    return ranks


def start(args, extra_env=None):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.update(extra_env or {})
    return subprocess.Popen([COMMBENCH] + args, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def stop_rank_and_wait(args, rank, nranks=2):
    """Starts a long run, SIGSTOPs `rank` once all `nranks` ranks run, and returns (process,
    stderr, pids of the ranks)."""
    p = start(args)
    deadline = time.monotonic() + 120
    ranks, seen = {}, {}
    # The same ranks 1.5 s apart: in the timed loop of the long case (a first run on a machine
    # starts a short job of its own before it, to measure host memory).
    while len(ranks) < nranks or ranks != seen or not all(alive(pid) for pid in ranks.values()):
        assert p.poll() is None, f"ended early: {p.communicate()[1]}"
        assert time.monotonic() < deadline, "the ranks never started"
        seen = ranks
        time.sleep(1.5 if len(ranks) == nranks else 0.2)
        ranks = ranks_of(p.pid)
    os.kill(ranks[rank], signal.SIGSTOP)
    try:
        _, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
        for pid in ranks.values():
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    return p, err, list(ranks.values())


# A case long enough to stop a rank in it on any machine (10^7 calls of 1 MiB: --min-time alone
# ends at the iteration cap, within a second where a call takes 1 us); a --timeout the stopped
# rank's peers reach.
LONG = ["run", "-B", "mpi", "-c", "allreduce", "-b", "1M", "-e", "1M", "-n", "10000000",
        "--timeout", "5", "--format", "csv"]


def check_stopped_named(args, rank, nranks=2):
    p, err, pids = stop_rank_and_wait(args, rank, nranks)
    first = err.strip().splitlines()[0] if err.strip() else ""
    assert p.returncode == 4, f"exit {p.returncode}\n{err}"
    # What the peers waited in (the case, or set-up on a slow machine), then the stopped rank.
    # (--launch's line says which repetition.)
    assert first.startswith("commbench: ") and "timeout: " in first, err
    assert (f"made no progress for 5 s (--timeout): rank {rank} was stopped (SIGSTOP or a "
            "debugger)") in first, err
    time.sleep(0.5)
    left = [pid for pid in pids if alive(pid)]
    assert not left, f"ranks left running: {left}"


def test_a_stopped_rank_0_is_named_by_the_commbench_that_started_it():
    check_stopped_named(LONG + ["-N", "2"], 0)


def test_a_stopped_rank_1_is_named_not_the_rank_that_waited():
    check_stopped_named(LONG + ["-N", "2"], 1)


def test_a_stopped_rank_0_is_named_under_launch():
    check_stopped_named(LONG + ["--launch", " ".join(mpi_prefix(2))], 0)


# The same under the local launcher (Gloo): 4 MiB calls, as many as --timeout lets through.
LOCAL = ["run", "-B", "gloo", "-c", "allreduce,allgather", "-b", "4M", "-e", "4M", "-n",
         "10000000", "--timeout", "5", "--format", "csv"]


def test_a_stopped_rank_0_is_named_by_the_local_launcher():
    check_stopped_named(LOCAL + ["-N", "2"], 0)


def test_a_stopped_rank_1_is_named_by_the_local_launcher_not_the_rank_that_waited():
    check_stopped_named(LOCAL + ["-N", "2"], 1)


def test_a_stopped_middle_rank_of_3_is_named_by_the_local_launcher():
    check_stopped_named(LOCAL + ["-N", "3"], 1, nranks=3)


def check_bounded(prefix, marker, timeout=2):
    """A launcher that never starts its ranks ends within the start-up bound (--timeout plus as
    long again, at least 10 s), exit 4, and nothing it started is left."""
    d = tempdir()
    began = time.monotonic()
    bound = timeout + max(10, timeout)
    p = start(["run", "-B", "mpi"] + QUICK + ["--timeout", str(timeout), "--launch", prefix,
                                               "--output", os.path.join(d, "r.json")])
    try:
        _, err = p.communicate(timeout=bound + 25)
    except subprocess.TimeoutExpired:
        p.kill()  # its job guard stops the launcher (tested in test_orphans.py)
        p.wait()
        raise AssertionError(f"still running {bound + 25} s after it started")
    took = time.monotonic() - began
    assert p.returncode == 4, f"exit {p.returncode}\n{err}"
    first = err.strip().splitlines()[0]
    assert f"started no rank within {bound} s" in first, first
    assert took < bound + 25, f"took {took:.0f} s"
    assert os.listdir(d) == [], os.listdir(d)
    time.sleep(1)
    left = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        left.append(name)
            except OSError:
                pass
    assert not left, f"left running: {left}"


def test_a_launcher_that_never_starts_ranks_is_stopped_at_the_start_up_bound():
    d = tempdir()
    marker = f"sleep-{os.getpid()}-{time.monotonic_ns()}"
    path = fake_launcher(d, "mpirun", f'exec -a {marker} sleep 600')
    check_bounded(path + " -np 2", marker)


def test_mpich_with_an_unknown_host_is_stopped_at_the_start_up_bound():
    if is_openmpi():
        raise Skip("MPICH's hydra waits on an unknown host; this build uses Open MPI")
    check_bounded("mpiexec.mpich -hosts nosuchhost.invalid -n 2", "nosuchhost.invalid")


def test_hydra_banner_stays_off_stdout():
    if is_openmpi():
        raise Skip("the BAD TERMINATION banner is MPICH hydra's; this build uses Open MPI")
    p = start(["run", "-B", "mpi", "-N", "2", "-c", "allreduce,broadcast", "-e", "64",
               "--min-time", "0.002", "--format", "csv"], {"COMMBENCH_TEST_FAULT": "die:1"})
    out, err = p.communicate(timeout=120)
    assert p.returncode == 1, f"exit {p.returncode}\n{err}"
    assert err.startswith("commbench: rank 1 was killed by signal 9"), err
    assert "BAD TERMINATION" not in out and "=====" not in out, out
    parse_csv(out)  # the header alone, still a CSV document


def test_an_mpi_start_up_error_is_named_in_tune_env_warnings():
    if is_openmpi():
        var, value, words = "OMPI_MCA_btl", "nonexistent", "Component: nonexistent"
    else:
        var, value, words = "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM", "bogus", "value (bogus)"
    for attempt in range(5):
        p = start(["tune", "-B", "mpi", "-N", "2"] + QUICK + ["--env", f"{var}={value}"])
        out, err = p.communicate(timeout=240)
        lines = [l for l in err.splitlines() if f"{var}={value}" in l]
        # Open MPI 4.1 may lose the ranks' own help box, and commbench says so: once more.
        if not lines or OPEN_MPI_LOST not in lines[0]:
            break
    assert lines and words in lines[0], f"exit {p.returncode}\n{err}"


if __name__ == "__main__":
    main([test_a_stopped_rank_0_is_named_by_the_commbench_that_started_it,
          test_a_stopped_rank_1_is_named_not_the_rank_that_waited,
          test_a_stopped_rank_0_is_named_under_launch,
          test_a_stopped_rank_0_is_named_by_the_local_launcher,
          test_a_stopped_rank_1_is_named_by_the_local_launcher_not_the_rank_that_waited,
          test_a_stopped_middle_rank_of_3_is_named_by_the_local_launcher,
          test_a_launcher_that_never_starts_ranks_is_stopped_at_the_start_up_bound,
          test_mpich_with_an_unknown_host_is_stopped_at_the_start_up_bound,
          test_hydra_banner_stays_off_stdout,
          test_an_mpi_start_up_error_is_named_in_tune_env_warnings])
