"""No process outlives the commbench that started it: SIGKILL of commbench (nothing of it can
clean up) or a stop signal with a wrapper script as the launcher leaves no launcher and no rank
running, and no output file written by an orphan. Ranks hang in their timed loop (test fault),
so nothing ends by itself; each test waits for states, not for times."""
import os
import signal
import stat
import subprocess
import time

from cbtest import COMMBENCH, MPIEXEC, is_openmpi, main, mpi_prefix, tempdir

HANG = ["-c", "allreduce", "-b", "8", "-e", "8", "--timeout", "600"]
WATCH_FD = 1000  # a rank's connection to its parent sits at or above this descriptor


def ppid_and_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[1]), fields[0]
    except (OSError, IndexError, ValueError):
        return None, None


def descendants(root):
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            ppid, _ = ppid_and_state(name)
            children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def alive(pid):
    _, state = ppid_and_state(pid)
    return state is not None and state not in ("Z", "X")


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def env_of(pid):
    """The environment a process started with, as bytes NAME -> VALUE; {} when it is gone."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
    except OSError:
        return {}


def watched_ranks(root):
    """The rank processes under `root` that hold their connection to the parent."""
    ranks = []
    for pid in descendants(root):
        if comm(pid) != "commbench":
            continue
        try:
            fds = [int(fd) for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            continue
        if any(fd >= WATCH_FD for fd in fds):
            ranks.append(pid)
    return ranks


def start_hanging(args, cwd):
    env = dict(os.environ, COMMBENCH_TEST_FAULT="hang:1", CUDA_VISIBLE_DEVICES="")
    p = subprocess.Popen([COMMBENCH] + args, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while len(watched_ranks(p.pid)) < 2:
        assert p.poll() is None, f"commbench ended early: {p.stderr.read()}"
        assert time.monotonic() < deadline, "the ranks never started"
        time.sleep(0.1)
    return p, descendants(p.pid)


def assert_all_end(pids, what, within=60):
    deadline = time.monotonic() + within
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [f"{pid} {comm(pid)}" for pid in pids if alive(pid)]
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"{what}: still running: {left}"


def fake_launcher(d, name, body, shell="/bin/bash"):
    """An executable script `d/name` that runs `body`; its path."""
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(f"#!{shell}\n{body}\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def script_launcher(d, name, body):
    """A launcher prefix whose launcher is a shell script around this build's real one (`"$@"`
    is the rest of the prefix and commbench's rank command)."""
    return " ".join([fake_launcher(d, name, body, "/bin/sh")] + mpi_prefix(2)[1:])


def wrapper(d):
    """A launcher that is a script around the real one, which it does not exec."""
    name = "mpirun-wrap" if is_openmpi() else "mpiexec-wrap"
    return script_launcher(d, name, f'"{MPIEXEC}" "$@"\nexit $?')


def assert_no_output(d):
    """No output written by an orphan, and no temporary file of one that commbench writes
    itself: it has no name until committed, so even SIGKILL of commbench leaves nothing."""
    left = [f for f in os.listdir(d) if f.startswith("r.json")]
    assert not left, f"left behind: {left}"


def test_sigkill_stops_commbench_own_mpirun_and_its_ranks():
    d = tempdir()
    p, pids = start_hanging(["run", "-B", "mpi", "-N", "2", *HANG, "--output", "r.json"], d)
    p.kill()
    p.wait()
    assert_all_end(pids, "after SIGKILL of commbench")
    assert_no_output(d)


def test_sigkill_stops_a_launch_wrapper_and_the_launcher_it_started():
    d = tempdir()
    p, pids = start_hanging(["run", "-B", "mpi", *HANG, "--launch", wrapper(d), "--output",
                             "r.json"], d)
    p.kill()
    p.wait()
    assert_all_end(pids, "after SIGKILL of commbench")
    assert_no_output(d)


def test_sigint_stops_the_launcher_behind_a_wrapper():
    d = tempdir()
    p, pids = start_hanging(["run", "-B", "mpi", *HANG, "--launch", wrapper(d), "--output",
                             "r.json"], d)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode != 0, err
    assert err.startswith("commbench: ") and "interrupted" in err.splitlines()[-1], err
    assert_all_end(pids, "after SIGINT to commbench")
    assert_no_output(d)


def test_ranks_stop_themselves_when_commbench_dies_and_the_launcher_is_out_of_reach():
    """The ranks notice the death of the commbench that started them by themselves: their
    launcher moves itself into a session of its own (as a launcher that daemonizes, or one on
    another host, is), out of reach of the stop commbench's job guard sends its process group,
    and it has no stop of its own for its ranks."""
    d = tempdir()
    launch = script_launcher(d, "mpirun-own-session", f'exec setsid "{MPIEXEC}" "$@"')
    p, pids = start_hanging(["run", "-B", "mpi", *HANG, "--launch", launch, "--output",
                             "r.json"], d)
    ranks = watched_ranks(p.pid)
    sessions = {os.getsid(pid) for pid in ranks}
    assert os.getsid(p.pid) not in sessions, "the launcher did not leave commbench's session"
    p.kill()
    p.wait()
    try:
        # A rank stops as soon as its connection to commbench closes.
        assert_all_end(ranks, "ranks after SIGKILL of commbench, their launcher out of reach",
                       within=20)
    finally:
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert_no_output(d)


def test_sigkill_stops_a_launcher_that_ignores_the_stop_signals():
    """A launcher that ignores SIGTERM, SIGINT and SIGHUP (and lingers after its job) is killed
    with its whole process group once the stop sent when commbench died is 5 s old."""
    d = tempdir()
    launch = script_launcher(d, "mpirun-deaf", f"trap '' TERM INT HUP\n\"{MPIEXEC}\" \"$@\"\n"
                             "exec sleep 600")
    p, pids = start_hanging(["run", "-B", "mpi", *HANG, "--launch", launch, "--output",
                             "r.json"], d)
    p.kill()
    p.wait()
    # The group's SIGKILL is due 5 s after commbench's death.
    assert_all_end(pids, "after SIGKILL of commbench, its launcher deaf to stop signals",
                   within=20)
    assert_no_output(d)


def test_sigkill_stops_what_a_dead_launcher_left_in_its_group():
    """The stop kills the wrapper script at once, but not a process it started that ignores the
    stop signals: commbench's job guard stays until the group is empty, and kills what is left
    5 s after the stop."""
    d = tempdir()
    launch = script_launcher(d, "mpirun-leaves-one",
                             f"(trap '' TERM INT HUP; exec sleep 600) &\n\"{MPIEXEC}\" \"$@\"")
    p, pids = start_hanging(["run", "-B", "mpi", *HANG, "--launch", launch, "--output",
                             "r.json"], d)
    assert any(comm(pid) == "sleep" for pid in pids), [comm(pid) for pid in pids]
    p.kill()
    p.wait()
    assert_all_end(pids, "after SIGKILL of commbench, with a process its launcher left", within=20)
    assert_no_output(d)


def test_a_run_stops_what_its_launcher_left_behind():
    """A launcher that ends well but leaves a process in the job's group (one that ignores
    SIGTERM): the run keeps its exit code, and nothing is left once commbench has ended."""
    d = tempdir()
    marker = f"cb-left-{os.getpid()}-{time.monotonic_ns()}"
    launch = script_launcher(d, "mpirun-leaves-one",
                             f"(trap '' TERM INT HUP; export CB_LEFT={marker}; exec sleep 600) &\n"
                             f"exec \"{MPIEXEC}\" \"$@\"")
    p = subprocess.run([COMMBENCH, "run", "-B", "mpi", "-c", "allreduce", "-e", "64",
                        "--min-time", "0.002", "--launch", launch, "--output", "r.json"],
                       cwd=d, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""), capture_output=True,
                       text=True, timeout=120)
    left = [pid for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
            if alive(pid) and env_of(pid).get(b"CB_LEFT") == marker.encode()]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert p.returncode == 0, p.stderr
    assert not left, f"left running after commbench ended: {left}"
    assert os.path.exists(os.path.join(d, "r.json"))


if __name__ == "__main__":
    main([test_sigkill_stops_commbench_own_mpirun_and_its_ranks,
          test_sigkill_stops_a_launch_wrapper_and_the_launcher_it_started,
          test_sigint_stops_the_launcher_behind_a_wrapper,
          test_ranks_stop_themselves_when_commbench_dies_and_the_launcher_is_out_of_reach,
          test_sigkill_stops_a_launcher_that_ignores_the_stop_signals,
          test_sigkill_stops_what_a_dead_launcher_left_in_its_group,
          test_a_run_stops_what_its_launcher_left_behind])
