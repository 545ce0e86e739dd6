"""Faults and leaks through the real binary: output that cannot be written (a full file system,
/dev/full), secrets in the environment, temporary files after a failed or interrupted run,
values out of range, output paths that cannot be written, and the top-level --version."""
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from cbtest import COMMBENCH, SOURCE_DIR, Skip, main, mpi_prefix, parse_csv, run, tempdir
from test_orphans import descendants

QUICK = ["-c", "allreduce", "-e", "64", "--min-time", "0.002"]
SECRETS = {"UCX_api_key": "k1-value", "GLOO_Token": "t1-value", "COMMBENCH_ApiKey": "a1-value",
           "OMPI_MCA_secret_thing": "s1-value", "MPICH_AUTH_pass": "p1-value",
           "NCCL_private_path": "v1-value", "FI_Credential": "c1-value"}


def first_line(p):
    lines = p.stderr.strip().splitlines()
    assert lines, f"nothing on stderr (exit {p.returncode})"
    return lines[0]


def expect(p, code, *needles):
    """Exit `code` and a first stderr line 'commbench: ...' containing every needle."""
    assert p.returncode == code, f"exit {p.returncode}, expected {code}\nstderr:\n{p.stderr}"
    line = first_line(p)
    assert line.startswith("commbench: "), line
    for n in needles:
        assert n in line, f"{n!r} not in first line {line!r}\nstderr:\n{p.stderr}"
    assert "Traceback" not in p.stderr and "terminate called" not in p.stderr, p.stderr
    return line


def temp_leftovers(directory):
    return [f for f in os.listdir(directory) if ".tmp." in f]


def files_open_in(root, directory):
    """The files `root` and the processes under it hold open in `directory`: how a test sees that
    rank 0 has opened its outputs, which have no name until committed ('#123 (deleted)')."""
    held = []
    for pid in [root] + descendants(root):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith(directory + "/"):
                held.append(target)
    return held


def rank_holding_outputs(root, directory):
    """The process under `root` (a rank, not `root` itself) that holds files open in `directory`,
    or None: `root` opens an unnamed file there too, briefly, when it checks up front that the
    outputs can be written, before it has started any rank or taken over the stop signals."""
    return next((pid for pid in descendants(root) if files_open_in(pid, directory)), None)


def is_root():
    return os.geteuid() == 0


# --- secrets -----------------------------------------------------------------------------------

def test_secret_variables_never_written_whatever_their_case():
    d = tempdir()
    outs = [os.path.join(d, n) for n in ("r.json", "r.gbench.json", "r.md", "r.jsonl", "r.csv")]
    env = dict(SECRETS, NCCL_DEBUG_SUBSYS="INIT")  # a steering variable that is kept
    args = ["run", "-B", "gloo"] + QUICK + ["--format", "json"]
    for o in outs:
        args += ["--output", o]
    p = run(args, env=env, check=0)
    meta = json.loads(p.stdout)["meta"]
    assert meta["environment"].get("NCCL_DEBUG_SUBSYS") == "INIT", meta["environment"]
    texts = [p.stdout, p.stderr] + [open(o).read() for o in outs]
    for name, value in SECRETS.items():
        for t in texts:
            assert value not in t and name not in t, f"{name} leaked"
    # Result files written before the filter knew every spelling: compare never repeats them.
    doc = json.load(open(os.path.join(SOURCE_DIR, "tests", "data", "results", "base.json")))
    old, new = os.path.join(d, "old.json"), os.path.join(d, "new.json")
    doc["meta"]["environment"] = {"GLOO_Token": "old-secret", "NCCL_ALGO": "Ring"}
    json.dump(doc, open(old, "w"))
    doc["meta"]["environment"] = {"GLOO_Token": "new-secret", "NCCL_ALGO": "Tree"}
    json.dump(doc, open(new, "w"))
    for fmt in ("table", "json", "md"):
        p = run(["compare", old, new, "--format", fmt])
        assert p.returncode in (0, 5), p.stderr
        assert "Ring" in p.stdout and "Tree" in p.stdout, p.stdout  # still reports NCCL_ALGO
        assert "secret" not in p.stdout + p.stderr and "GLOO_Token" not in p.stdout, p.stdout
    shutil.rmtree(d)


# --- write errors ------------------------------------------------------------------------------

def test_jsonl_through_a_link_to_dev_full_fails_naming_the_file():
    d = tempdir()
    out = os.path.join(d, "x.jsonl")
    os.symlink("/dev/full", out)
    p = run(["run", "-B", "gloo", "-c", "allreduce,broadcast", "-e", "1K", "--min-time", "0.002",
             "--output", out])
    expect(p, 1, f"cannot write '{out}'", "No space left on device")
    assert sorted(os.listdir(d)) == ["x.jsonl"] and os.path.islink(out)
    shutil.rmtree(d)


def test_stdout_on_dev_full_fails():
    with open("/dev/full", "w") as full:
        for fmt in ("table", "csv", "json"):
            p = subprocess.run([COMMBENCH, "run", "-B", "gloo"] + QUICK + ["--format", fmt], stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=120)
            expect(p, 1, "cannot write standard output", "No space left on device")
        for args in (["list", "collectives"], ["version"], ["--version"]):
            p = subprocess.run([COMMBENCH] + args, stdout=full, stderr=subprocess.PIPE, text=True,
                               timeout=60)
            expect(p, 1, "cannot write standard output", "No space left on device")


def small_tmpfs(size="8k"):
    if not is_root():
        raise Skip("mounting a small tmpfs needs root")
    d = tempdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", d],
                       capture_output=True)
    if r.returncode != 0:
        raise Skip(f"cannot mount a tmpfs: {r.stderr.decode().strip()}")
    return d


def test_full_file_system_keeps_whole_jsonl_records_and_no_partial_files():
    d = small_tmpfs()
    try:
        jsonl, csv = os.path.join(d, "x.jsonl"), os.path.join(d, "x.csv")
        p = run(["run", "-B", "gloo", "-c", "allreduce,allgather,broadcast,reduce,alltoall", "-b", "8",
                 "-e", "64K", "-f", "2", "--min-time", "0.002", "--output", jsonl])
        expect(p, 1, f"cannot write '{jsonl}'", "No space left on device")
        text = open(jsonl).read()
        assert text and text.endswith("\n"), repr(text[-80:])
        for line in text.splitlines():
            json.loads(line)  # every record whole
        os.remove(jsonl)
        # A file replaced atomically: nothing under the final name, no temporary left.
        with open(os.path.join(d, "filler"), "wb") as f:
            try:
                f.write(b"x" * 8192)
            except OSError:
                pass
        p = run(["run", "-B", "gloo", "-c", "allreduce,allgather", "-e", "64K", "--min-time", "0.002",
                 "--output", csv])
        expect(p, 1, f"cannot write '{csv}'", "No space left on device")
        assert sorted(os.listdir(d)) == ["filler"], os.listdir(d)
    finally:
        subprocess.run(["umount", d])
        os.rmdir(d)


def test_full_tmpdir_names_the_rendezvous_directory():
    d = small_tmpfs()
    try:
        with open(os.path.join(d, "filler"), "wb") as f:
            try:
                f.write(b"x" * 16384)
            except OSError:
                pass
        p = run(["run", "-B", "gloo"] + QUICK, env={"TMPDIR": d})
        expect(p, 1, "cannot write the rendezvous directory", d, "No space left on device")
        assert os.listdir(d) == ["filler"], os.listdir(d)
    finally:
        subprocess.run(["umount", d])
        os.rmdir(d)


def fill(directory):
    with open(os.path.join(directory, "filler"), "wb") as f:
        try:
            f.write(b"x" * (4 << 20))
        except OSError:
            pass


def test_full_tmpdir_under_repeat_and_launch_names_the_temporary_directory():
    """Each fresh job of a sweep writes its document, stderr and ranks' status in TMPDIR: a full
    one is named as such before the job starts, not lost with the lines that would say it."""
    d, out = small_tmpfs(), tempdir()
    try:
        fill(d)
        jsonl = os.path.join(out, "r.jsonl")
        for extra in (["-B", "gloo", "--repeat", "3"],
                      ["-B", "mpi", "--launch", " ".join(mpi_prefix(2))]):
            p = run(["run"] + extra + QUICK + ["--output", jsonl], env={"TMPDIR": d})
            expect(p, 1, "repetition 1 of ", "cannot write the temporary directory", d,
                   "No space left on device")
            assert os.listdir(d) == ["filler"], os.listdir(d)
            assert os.listdir(out) == [], os.listdir(out)  # nothing was measured
    finally:
        subprocess.run(["umount", d])
        os.rmdir(d)


# --- temporary files ---------------------------------------------------------------------------

def outputs_in(d):
    return [os.path.join(d, n) for n in ("r.csv", "r.json", "r.md", "r.gbench.json")]


def output_args(paths):
    args = []
    for p in paths:
        args += ["--output", p]
    return args


def test_no_temporary_files_after_timeout():
    d = tempdir()
    p = run(["run", "-B", "gloo", "-c", "allreduce", "-e", "64", "--timeout", "2"] + output_args(outputs_in(d)),
            env={"COMMBENCH_TEST_FAULT": "hang:1"})
    expect(p, 4, "timeout")
    assert os.listdir(d) == [], os.listdir(d)
    shutil.rmtree(d)


def test_no_temporary_files_after_rank_0_dies():
    d = tempdir()
    p = run(["run", "-B", "gloo", "-c", "allreduce", "-e", "64"] + output_args(outputs_in(d)),
            env={"COMMBENCH_TEST_FAULT": "die:0"})
    assert p.returncode == 1, p.stderr
    assert os.listdir(d) == [], os.listdir(d)
    shutil.rmtree(d)


def interrupt_a_hanging_run(backend_args, signals):
    """Interrupts a run whose rank 1 hangs, once rank 0 has opened its outputs: exit 1, the
    first line says so, and no output or temporary file is left."""
    d = tempdir()
    for sig in signals:
        env = dict(os.environ, COMMBENCH_TEST_FAULT="hang:1")
        proc = subprocess.Popen([COMMBENCH, "run"] + backend_args +
                                ["-c", "allreduce", "-e", "64", "--timeout", "60"] +
                                output_args(outputs_in(d)),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.time() + 60
        while not rank_holding_outputs(proc.pid, d) and time.time() < deadline:
            time.sleep(0.05)
        assert rank_holding_outputs(proc.pid, d), "rank 0 never opened its outputs"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 1, (proc.returncode, err)
        assert err.strip().splitlines()[0].startswith("commbench: interrupted by signal"), err
        assert os.listdir(d) == [], os.listdir(d)
    shutil.rmtree(d)


def test_no_temporary_files_after_an_interrupt():
    interrupt_a_hanging_run(["-B", "gloo"], (signal.SIGINT, signal.SIGTERM))


SUMMARIES = ("r.json", "r.csv", "r.gbench.json", "r.md")


def earlier_outputs(d):
    """The complete outputs of an earlier run in `d` (the summaries and r.jsonl): name -> bytes."""
    run(["run", "-B", "gloo"] + QUICK + output_args([os.path.join(d, n)
                                                     for n in SUMMARIES + ("r.jsonl",)]))
    return {n: open(os.path.join(d, n), "rb").read() for n in os.listdir(d)}


def assert_only_complete_files(d, earlier, what):
    """Nothing in `d` but complete files: the summaries as the earlier run wrote them (a new one
    appears whole or not at all) and a .jsonl of whole records (written as the run goes)."""
    assert sorted(os.listdir(d)) == sorted(earlier), f"{what}: {sorted(os.listdir(d))}"
    for n in SUMMARIES:
        assert open(os.path.join(d, n), "rb").read() == earlier[n], f"{what}: {n} changed"
    text = open(os.path.join(d, "r.jsonl")).read()
    assert text.endswith("\n"), f"{what}: r.jsonl ends part way: {text[-80:]!r}"
    for line in text.splitlines():
        json.loads(line)


def sigkill_mid_run(args, d, victim, ready, env=None):
    """Starts commbench with the outputs in `d`, waits until `ready(process)` (the run is under
    way, its outputs open), SIGKILLs `victim(process)` and waits for everything it started to
    end. Returns the process (ended) and its stderr."""
    from test_orphans import assert_all_end
    paths = [os.path.join(d, n) for n in SUMMARIES + ("r.jsonl",)]
    proc = subprocess.Popen([COMMBENCH] + args + output_args(paths), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, CUDA_VISIBLE_DEVICES="", **(env or {})))
    deadline = time.time() + 120
    while not ready(proc):
        assert proc.poll() is None, f"ended early: {proc.communicate()[1]}"
        assert time.time() < deadline, "the run never got under way"
        time.sleep(0.05)
    started = descendants(proc.pid)
    os.kill(victim(proc), signal.SIGKILL)
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert_all_end(started, "after the SIGKILL")
    return proc, err


def test_sigkill_leaves_no_temporary_file_beside_the_outputs():
    """SIGKILL, which nothing can catch, of the commbench the user started or of rank 0, with
    every kind of output and --repeat: the directory holds only complete files, never a
    *.tmp.PID (the outputs have no name until committed), and TMPDIR keeps no commbench-XXXXXX
    directory of a launch (its guard removes it)."""
    d, tmp = tempdir(), tempdir()
    earlier = earlier_outputs(d)
    pause = os.path.join(tempdir(), "paused")
    hang = {"COMMBENCH_TEST_FAULT": "hang:1", "TMPDIR": tmp}
    between_jobs = {"COMMBENCH_TEST_PAUSE_BETWEEN_JOBS": pause, "TMPDIR": tmp}

    def ours_in_tmpdir():
        return [n for n in os.listdir(tmp) if n.startswith("commbench-")]

    def rank_0(proc):  # the rank that holds the outputs open
        return rank_holding_outputs(proc.pid, d)

    def rank_0_writing(proc):
        return rank_0(proc) is not None

    def parent(proc):
        return proc.pid

    quick = ["-c", "allreduce", "-e", "64", "--min-time", "0.002", "--timeout", "60"]
    # While rank 1 hangs: the local launcher, rank 0 itself, commbench's own mpirun's parent.
    for backend, victim, what in ((["-B", "gloo"], parent, "the local launcher"),
                                  (["-B", "gloo"], rank_0, "rank 0"),
                                  (["-B", "mpi"], parent, "the parent of mpirun")):
        p, err = sigkill_mid_run(["run", "-N", "2"] + backend + quick, d, victim,
                                 rank_0_writing, hang)
        if victim is rank_0:
            assert p.returncode == 1, f"exit {p.returncode}\n{err}"
            assert err.startswith("commbench: rank 0 was killed by signal 9"), err
        assert_only_complete_files(d, earlier, f"SIGKILL of {what}")
        if what == "the local launcher":
            # Its rendezvous directory: nothing of the run is left to remove it (docs/run.md).
            for n in ours_in_tmpdir():
                shutil.rmtree(os.path.join(tmp, n))
        assert ours_in_tmpdir() == [], f"SIGKILL of {what}: left in TMPDIR: {os.listdir(tmp)}"
    # A sweep after its first job: its summaries are open in the commbench the user started.
    for args in (["run", "-B", "gloo", "-N", "2"] + quick + ["--repeat", "3"],
                 ["tune", "-B", "gloo", "-N", "2"] + quick + ["--env", "GLOO_X=1,2,3"]):
        if os.path.exists(pause):
            os.remove(pause)
        sigkill_mid_run(args, d, parent,
                        lambda proc: os.path.exists(pause) and len(files_open_in(proc.pid, d)) >= 4,
                        between_jobs)
        assert_only_complete_files(d, earlier, f"SIGKILL of {args[0]} {args[-2]}")
        assert ours_in_tmpdir() == [], f"SIGKILL of {args[0]}: left in TMPDIR: {os.listdir(tmp)}"
    shutil.rmtree(d)


def test_the_named_fallback_leaves_no_temporary_file_after_a_rank_dies():
    """Where the file system refuses unnamed files (injected), the outputs are written through
    FILE.tmp.PID: a timeout, an interrupt and a rank killed outright (the commbench that started
    it removes the name) leave none of them."""
    d = tempdir()
    env = {"COMMBENCH_TEST_NO_TMPFILE": "1"}
    p = run(["run", "-B", "gloo", "-c", "allreduce", "-e", "64"] + output_args(outputs_in(d)),
            env=dict(env, COMMBENCH_TEST_FAULT="die:0"))
    assert p.returncode == 1, p.stderr
    assert os.listdir(d) == [], os.listdir(d)
    p = run(["run", "-B", "gloo", "-c", "allreduce", "-e", "64", "--timeout", "2"] +
            output_args(outputs_in(d)), env=dict(env, COMMBENCH_TEST_FAULT="hang:1"))
    expect(p, 4, "timeout")
    assert os.listdir(d) == [], os.listdir(d)
    proc = subprocess.Popen([COMMBENCH, "run", "-B", "gloo", "-c", "allreduce", "-e", "64",
                             "--timeout", "60"] + output_args(outputs_in(d)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, COMMBENCH_TEST_FAULT="hang:1", **env))
    deadline = time.time() + 60
    while len(temp_leftovers(d)) < 4 and time.time() < deadline:  # named from the start
        time.sleep(0.05)
    assert len(temp_leftovers(d)) == 4, os.listdir(d)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "interrupted by signal" in err, err
    assert os.listdir(d) == [], os.listdir(d)
    shutil.rmtree(d)


# --- values and paths checked before anything runs ---------------------------------------------

def test_values_out_of_range_are_usage_errors():
    cases = [(["--timeout", "1e10"], "--timeout"), (["--timeout", "1e30"], "--timeout"),
             (["--timeout", "9223372036"], "--timeout"), (["--min-time", "1e12"], "--min-time"),
             (["-w", "4000000000"], "--warmup"), (["-n", "4000000000"], "--iters")]
    for args, says in cases:
        p = run(["run", "-B", "gloo", "-c", "allreduce", "-e", "64"] + args, timeout=60)
        expect(p, 2, says)
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_output_paths_that_cannot_be_written_are_refused_up_front():
    d = tempdir()
    os.mkdir(os.path.join(d, "dir.csv"))
    ro = os.path.join(d, "ro.csv")
    open(ro, "w").write("keep\n")
    os.chmod(ro, 0o444)
    twice = os.path.join(d, "r.csv")
    cases = [(["--output", os.path.join(d, "dir.csv")], "is a directory"),
             (["--output", ro], "read-only"),
             (["--output", twice, "--output", twice], "same file"),
             (["--output", twice, "--output", os.path.join(d, ".", "r.csv")], "same file")]
    for args, says in cases:
        start = time.time()
        p = run(["run", "-B", "gloo", "-c", "allreduce", "-e", "64"] + args, timeout=60)
        expect(p, 2, says)
        assert time.time() - start < 5, "refused only after running"
    assert sorted(os.listdir(d)) == ["dir.csv", "ro.csv"], os.listdir(d)
    assert open(ro).read() == "keep\n"
    shutil.rmtree(d)


def test_an_output_link_is_written_through():
    d = tempdir()
    target, link = os.path.join(d, "target.csv"), os.path.join(d, "link.csv")
    open(target, "w").write("old\n")
    os.symlink("target.csv", link)
    run(["run", "-B", "gloo"] + QUICK + ["--output", link], check=0)
    assert os.path.islink(link) and os.readlink(link) == "target.csv"
    assert open(target).read().startswith("backend,"), open(target).read()
    assert sorted(os.listdir(d)) == ["link.csv", "target.csv"]
    shutil.rmtree(d)


def test_memory_check_counts_every_buffer_of_every_rank_on_the_host():
    avail = 0
    for line in open("/proc/meminfo"):
        if line.startswith("MemAvailable:"):
            avail = int(line.split()[1]) * 1024
    size = avail // 3 // 4096 * 4096  # one buffer fits, 2 ranks x (send + receive) do not
    start = time.time()
    p = run(["run", "-B", "gloo", "-c", "allreduce", "-b", str(size), "-e", str(size), "-n", "1", "-w", "0"],
            timeout=120)
    expect(p, 2, "cannot allocate host buffers", "2 ranks on this host")
    assert time.time() - start < 30, "refused only after allocating"


def test_compare_caps_absurd_percentages():
    import re
    d = tempdir()
    doc = json.load(open(os.path.join(SOURCE_DIR, "tests", "data", "results", "base.json")))
    base = os.path.join(d, "base.json")
    json.dump(doc, open(base, "w"))
    for r in doc["results"]:
        for k in ("time_us", "min_us", "p50_us", "p99_us", "max_us"):
            r[k] *= 1e300
        for k in ("algbw_GBps", "busbw_GBps"):
            if r.get(k) is not None:
                r[k] /= 1e300
    new = os.path.join(d, "new.json")
    json.dump(doc, open(new, "w"))
    p = run(["compare", base, new])
    expect(p, 5, ">+1000%")
    assert ">+1000%" in p.stdout, p.stdout
    assert not re.search(r"\d{12,}", p.stdout + p.stderr), p.stdout
    shutil.rmtree(d)


def test_a_bad_nccl_library_matters_only_where_nccl_is_used():
    env = {"COMMBENCH_NCCL_LIB": "/etc/passwd", "CUDA_VISIBLE_DEVICES": ""}
    p = run(["list", "backends"], env=env, check=0)
    assert "nccl" in p.stdout and "unavailable" in p.stdout, p.stdout
    run(["list", "algorithms"], env=env, check=0)
    p = run(["run", "-B", "gloo"] + QUICK + ["--format", "csv"], env=env, check=0)
    assert "gloo" in p.stdout
    p = run(["run", "-B", "nccl"] + QUICK, env=env)
    expect(p, 2, "/etc/passwd")


# --- launching: the first line names the cause -------------------------------------------------

MPI_CHATTER = ("mpirun noticed", "Primary job", "BAD TERMINATION", "-----", "=====",
               "prterun", "YOUR APPLICATION")


def no_launcher_chatter(p):
    for c in MPI_CHATTER:
        assert c not in p.stderr, f"launcher chatter {c!r} in:\n{p.stderr}"
    assert all(l.startswith("commbench: ") for l in p.stderr.strip().splitlines()), p.stderr


def test_a_dead_rank_is_named_first_local_launcher():
    p = run(["run", "-B", "gloo", "-c", "allreduce", "-e", "64K", "--min-time", "0.02"],
            env={"COMMBENCH_TEST_FAULT": "die:1"})
    expect(p, 1, "rank 1 was killed by signal 9 (Killed)")


def test_a_dead_rank_is_named_first_under_mpi():
    p = run(["run", "-B", "mpi", "-N", "2", "-c", "allreduce", "-e", "64K", "--min-time", "0.02"],
            env={"COMMBENCH_TEST_FAULT": "die:1"})
    line = expect(p, 1, "killed by signal 9 (Killed)")
    # MPICH's hydra can finish killing rank 0 before rank 1's own end is complete; then the
    # line says that it cannot tell the two apart rather than blaming rank 0.
    assert (line == "commbench: rank 1 was killed by signal 9 (Killed)" or line.startswith(
        "commbench: rank 0 or rank 1 was killed by signal 9 (Killed) first: both ended within "
        "1 ms")), line
    no_launcher_chatter(p)


def test_mpi_outcomes_map_to_documented_exit_codes():
    base = ["run", "-B", "mpi", "-N", "2", "-c", "allreduce", "-e", "64"]
    # Usage error found by the ranks (nothing left to run): one line, no banner.
    p = run(base + ["-d", "half"])
    assert p.returncode == 2, p.stderr
    no_launcher_chatter(p)
    assert "nothing to run" in p.stderr.strip().splitlines()[-1], p.stderr
    p = run(base + ["--timeout", "2"], env={"COMMBENCH_TEST_FAULT": "hang:1"})
    expect(p, 4, "timeout")
    no_launcher_chatter(p)
    p = run(base, env={"COMMBENCH_TEST_FAULT": "corrupt:1"})
    expect(p, 3, "validation failed")
    no_launcher_chatter(p)


def test_mpi_run_interrupted_stops_and_says_so():
    interrupt_a_hanging_run(["-B", "mpi", "-N", "2"], (signal.SIGTERM, signal.SIGINT))


def test_failed_mpi_runs_leave_no_temporary_files():
    d = tempdir()
    for fault in ("die:0", "die:1", "corrupt:1"):
        p = run(["run", "-B", "mpi", "-N", "2", "-c", "allreduce", "-e", "64K"] +
                output_args(outputs_in(d)), env={"COMMBENCH_TEST_FAULT": fault})
        assert p.returncode in (1, 3), (fault, p.stderr)
        assert temp_leftovers(d) == [], (fault, os.listdir(d))
    shutil.rmtree(d)


def test_ranks_are_named_commbench_in_ps():
    d = tempdir()
    env = dict(os.environ, COMMBENCH_TEST_FAULT="hang:1")
    proc = subprocess.Popen([COMMBENCH, "run", "-B", "gloo", "-c", "allreduce", "-e", "64", "--timeout", "60",
                             "--output", os.path.join(d, "r.csv")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 60
    while not rank_holding_outputs(proc.pid, d) and time.time() < deadline:
        time.sleep(0.05)
    children = subprocess.run(["ps", "-o", "comm=", "--ppid", str(proc.pid)],
                              capture_output=True, text=True).stdout.split()
    proc.terminate()
    proc.communicate(timeout=60)
    assert children and set(children) == {os.path.basename(COMMBENCH)}, children
    shutil.rmtree(d)


# --- what a newcomer meets first ---------------------------------------------------------------

def test_readme_setup_commands_work_as_root_without_sudo():
    readme = open(os.path.join(SOURCE_DIR, "README.md")).read()
    setup = readme.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    commands = [l for l in setup.splitlines() if l.startswith("ci/") or l.startswith("sudo")]
    assert commands and not any(c.startswith("sudo") for c in commands), commands
    if not is_root():
        raise Skip("running ci/install-deps as root needs root")
    # A root shell without sudo (a container): install-deps finds its packages and says so.
    bindir = tempdir()
    for tool in ("bash", "dpkg-query", "grep", "id"):
        os.symlink(shutil.which(tool), os.path.join(bindir, tool))
    assert not os.path.exists(os.path.join(bindir, "sudo"))
    p = subprocess.run([os.path.join(SOURCE_DIR, "ci", "install-deps")], capture_output=True,
                       text=True, env={"PATH": bindir}, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "packages present" in p.stdout and "sudo" not in p.stderr, (p.stdout, p.stderr)
    shutil.rmtree(bindir)


def test_table_ends_with_a_summary_per_backend_and_algorithm():
    p = run(["run", "-c", "allreduce,broadcast", "-b", "512K", "-e", "2M", "--min-time", "0.002"],
            check=0)
    lines = [l for l in p.stdout.splitlines() if l.startswith("# summary ")]
    assert len(lines) == 2, p.stdout  # mpi and gloo side by side without a GPU
    import re
    for backend, line in zip(["mpi", "gloo"], lines):
        assert re.match(rf"# summary {backend}/default: peak busbw \(GB/s\) allreduce [0-9.]+, "
                        r"broadcast [0-9.]+; avg busbw >= 1 MiB [0-9.]+ GB/s; #wrong 0$",
                        line), line


def test_default_backends_are_every_cpu_backend_and_the_header_says_why():
    listing = run(["list", "backends"], check=0).stdout.splitlines()
    if any(line.split()[:2] == ["nccl", "available"] for line in listing):
        raise Skip("a GPU is usable here: the default is nccl")
    out = os.path.join(tempdir(), "r.json")
    p = run(["run", "-c", "allreduce", "-e", "1K", "--min-time", "0.002", "--output", out],
            check=0)
    assert p.returncode == 0, p.stderr
    header = p.stdout.splitlines()[1]
    assert header.startswith("# backends mpi,gloo (no -B): no GPU backend here (nccl: "), header
    assert header.endswith("so every CPU backend side by side"), header
    doc = json.load(open(out))
    assert {r["backend"] for r in doc["results"]} == {"mpi", "gloo"}, doc["results"]
    assert doc["meta"]["backend_choice"] == header[len("# backends "):], doc["meta"]
    # With -B, what was asked for runs, and the header has no such line.
    p = run(["run", "-B", "gloo", "-c", "allreduce", "-e", "64", "--min-time", "0.002"], check=0)
    assert "# backends" not in p.stdout, p.stdout


def test_every_record_says_whether_it_had_outliers():
    # CSV column and JSON key `outliers`, by the rule in docs/output.md: from the record's own
    # figures, unless its slow calls are the library's rhythm (outlier_cause "in every batch").
    out = os.path.join(tempdir(), "r.json")
    p = run(["run", "-B", "gloo", "-c", "allreduce,broadcast", "-b", "1K", "-e", "64K",
             "--min-time", "0.002", "--format", "csv", "--output", out], check=0)
    rows = parse_csv(p.stdout)
    docs = json.load(open(out))["results"]
    assert len(rows) == len(docs) == 14, (len(rows), len(docs))

    def rule(r):
        p50 = float(r["p50_us"])
        slow = float(r["time_us"]) > 1.5 * p50 or float(r["p99_us"]) > 10 * p50
        return slow and r["outlier_cause"] != "in every batch"

    for row, doc in zip(rows, docs):
        assert row["outliers"] == ("true" if rule(row) else "false"), row
        assert doc["outliers"] is rule(doc), doc


def test_top_level_version_flag():
    p = run(["--version"], check=0)
    v = run(["version"], check=0)
    assert p.stdout.strip() == v.stdout.splitlines()[0], (p.stdout, v.stdout)
    assert p.stdout.startswith("commbench ") and p.stderr == ""


def test_check_and_compare_stopped_while_reading_end_with_one_line():
    # The input is a FIFO with a writer that sends nothing: the command is inside its read
    # (its handlers long installed) when the signal comes, whatever the machine's speed.
    base = os.path.join(SOURCE_DIR, "tests", "data", "results", "base.json")
    for args, sig in ((["compare", base, "FIFO", "--output", "r.md"], signal.SIGINT),
                      (["check", "--expect", "auto", "FIFO", "--output", "r.json"], signal.SIGTERM),
                      (["plot", "FIFO", "-o", "r.svg"], signal.SIGHUP)):
        d = tempdir()
        fifo = os.path.join(d, "in.jsonl")
        os.mkfifo(fifo)
        argv = [COMMBENCH] + [fifo if a == "FIFO" else a for a in args]
        p = subprocess.Popen(argv, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
        deadline = time.monotonic() + 60
        while True:  # opens once commbench has opened the read end
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                assert p.poll() is None, p.stderr.read()
                assert time.monotonic() < deadline, "commbench never opened its input"
                time.sleep(0.02)
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        os.close(writer)
        assert p.returncode == 1, (args[0], p.returncode, err)
        assert err == f"commbench: {args[0]} interrupted by signal {int(sig)} " \
                      f"({signal.strsignal(sig)})\n", err
        assert sorted(os.listdir(d)) == ["in.jsonl"], os.listdir(d)


if __name__ == "__main__":
    main([test_secret_variables_never_written_whatever_their_case,
          test_jsonl_through_a_link_to_dev_full_fails_naming_the_file,
          test_stdout_on_dev_full_fails,
          test_full_file_system_keeps_whole_jsonl_records_and_no_partial_files,
          test_full_tmpdir_names_the_rendezvous_directory,
          test_full_tmpdir_under_repeat_and_launch_names_the_temporary_directory,
          test_no_temporary_files_after_timeout,
          test_no_temporary_files_after_rank_0_dies,
          test_no_temporary_files_after_an_interrupt,
          test_sigkill_leaves_no_temporary_file_beside_the_outputs,
          test_the_named_fallback_leaves_no_temporary_file_after_a_rank_dies,
          test_values_out_of_range_are_usage_errors,
          test_output_paths_that_cannot_be_written_are_refused_up_front,
          test_an_output_link_is_written_through,
          test_memory_check_counts_every_buffer_of_every_rank_on_the_host,
          test_compare_caps_absurd_percentages,
          test_a_bad_nccl_library_matters_only_where_nccl_is_used,
          test_a_dead_rank_is_named_first_local_launcher,
          test_a_dead_rank_is_named_first_under_mpi,
          test_mpi_outcomes_map_to_documented_exit_codes,
          test_mpi_run_interrupted_stops_and_says_so,
          test_failed_mpi_runs_leave_no_temporary_files,
          test_ranks_are_named_commbench_in_ps,
          test_readme_setup_commands_work_as_root_without_sudo,
          test_table_ends_with_a_summary_per_backend_and_algorithm,
          test_every_record_says_whether_it_had_outliers,
          test_default_backends_are_every_cpu_backend_and_the_header_says_why,
          test_top_level_version_flag,
          test_check_and_compare_stopped_while_reading_end_with_one_line])
