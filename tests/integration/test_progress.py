"""Progress on every launch path: where commbench is the ranks' parent (its local launcher, its
own mpirun) the parent draws one bar on a terminal, or plain `commbench: progress:` lines with
--progress always elsewhere; under a user's mpirun rank 0 prints the plain lines itself. The
figures are the cases done of the total, the elapsed time and the estimated time left; stdout
stays the results, and --progress never (or auto off a terminal) prints nothing."""
import os
import pty
import re
import select
import subprocess

from cbtest import COMMBENCH, main, parse_csv, run

SWEEP = ["run", "-c", "allreduce,broadcast", "-e", "64K", "-f", "4", "--min-time", "0.02",
         "--format", "csv"]
DURATION = r"(?:\d+s|\d+m\d\ds|\d+h\d\dm)"
LINE = re.compile(r"^commbench: progress: (\d+)/(\d+) cases done, (" + DURATION +
                  r") elapsed(?:, ETA (" + DURATION + r"); now (.+))?$")
BAR = re.compile(r"\r\[([=> ]{20})\] (\d+)/(\d+) cases  (" + DURATION + r") elapsed  ETA (" +
                 DURATION + r")  ([^\r\x1b]*)\x1b\[K")


def base_env():
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def run_on_terminal(args, env=None, timeout=240, stdout_too=False):
    """Runs commbench with stderr on a pseudo-terminal (stdout a pipe, or the same terminal).
    Returns the exit code, what the terminal received, and stdout."""
    full_env = base_env()
    full_env.update(env or {})
    master, slave = pty.openpty()
    p = subprocess.Popen([COMMBENCH] + args, stdout=slave if stdout_too else subprocess.PIPE,
                         stderr=slave, stdin=subprocess.DEVNULL, env=full_env)
    os.close(slave)
    chunks = {master: b""}
    if not stdout_too:
        chunks[p.stdout.fileno()] = b""
    open_fds = list(chunks)
    try:
        while open_fds:
            ready, _, _ = select.select(open_fds, [], [], timeout)
            if not ready:
                raise AssertionError(f"no output for {timeout} s: {args}")
            for fd in ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:  # the terminal's other side has closed
                    data = b""
                if not data:
                    open_fds.remove(fd)
                chunks[fd] += data
        p.wait(timeout=timeout)
    finally:
        os.close(master)
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, chunks[master].decode(errors="replace"), \
        "" if stdout_too else chunks[p.stdout.fileno()].decode()


def screen(raw):
    """What stays on the terminal once `raw` has been drawn: its finished lines and the line the
    cursor is on (carriage returns and erase-to-end-of-line applied)."""
    lines, cur, col, i = [], [], 0, 0
    while i < len(raw):
        if raw.startswith("\x1b[K", i):
            del cur[col:]
            i += 3
            continue
        c = raw[i]
        if c == "\r":
            col = 0
        elif c == "\n":
            lines.append("".join(cur))
            cur, col = [], 0
        else:
            if col < len(cur):
                cur[col] = c
            else:
                cur.append(c)
            col += 1
        i += 1
    return lines, "".join(cur)


def row_keys(stdout):
    rows = parse_csv(stdout)
    return sorted((r["backend"], r["collective"], r["bytes"], r["dtype"], r["op"]) for r in rows)


def progress_lines(stderr):
    return [l for l in stderr.splitlines() if "progress" in l or "\r" in l]


def assert_plain_lines(p, reference):
    """stderr holds plain progress lines only: the first with 0/N, an ETA and the current case,
    the last N/N; at most one line per interval before the last; stdout has the reference's
    rows."""
    assert p.returncode == 0, p.stderr
    n = len(reference)
    assert row_keys(p.stdout) == reference, p.stdout
    lines = p.stderr.splitlines()
    assert lines and "\r" not in p.stderr, repr(p.stderr)
    parsed = []
    for line in lines:
        m = LINE.match(line)
        assert m, f"not a progress line: {line!r}\n{p.stderr}"
        parsed.append(m)
    first, last = parsed[0], parsed[-1]
    assert (first.group(1), first.group(2)) == ("0", str(n)), lines
    assert first.group(4) and first.group(5), lines  # ETA and the current case
    assert (last.group(1), last.group(2)) == (str(n), str(n)) and not last.group(4), lines
    assert len(parsed) <= 2 + int(seconds(last.group(3)) / 5) + 1, lines  # a low rate


def seconds(text):
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", text)
    h, mi, s = (int(g) if g else 0 for g in m.groups())
    return 3600 * h + 60 * mi + s


def assert_bar(code, raw, stdout, reference, backend):
    """The terminal saw the bar redrawn in place with done/total, elapsed and ETA, counting up to
    the last case, and nothing is left on it at the end; stdout has the reference's rows."""
    assert code == 0, raw
    n = len(reference)
    assert row_keys(stdout) == reference, stdout
    frames = BAR.findall(raw)
    assert frames, f"no progress bar on the terminal: {raw!r}"
    done = [int(f[1]) for f in frames]
    assert all(int(f[2]) == n for f in frames), frames
    assert done == sorted(done) and done[0] == 0 and done[-1] == n - 1, done
    assert all(f[5].startswith(backend + " ") for f in frames), frames
    lines, current = screen(raw)
    assert lines == [] and current == "", f"left on the terminal: {lines} {current!r}"


def reference_rows(args):
    return row_keys(run(args + ["--progress", "never"], env={"CUDA_VISIBLE_DEVICES": ""},
                        check=0).stdout)


def test_local_launcher_prints_plain_lines_with_always():
    args = SWEEP + ["-B", "gloo", "-N", "2"]
    reference = reference_rows(args)
    p = run(args + ["--progress", "always"], env={"CUDA_VISIBLE_DEVICES": ""})
    assert_plain_lines(p, reference)
    # auto off a terminal, and never: nothing at all.
    for mode in ("auto", "never"):
        q = run(args + ["--progress", mode], env={"CUDA_VISIBLE_DEVICES": ""}, check=0)
        assert q.stderr == "", f"--progress {mode}: {q.stderr!r}"


def test_local_launcher_draws_a_bar_on_a_terminal():
    args = SWEEP + ["-B", "gloo", "-N", "2"]
    reference = reference_rows(args)
    code, raw, stdout = run_on_terminal(args)  # auto: a terminal gets the bar
    assert_bar(code, raw, stdout, reference, "gloo")
    code, raw, stdout = run_on_terminal(args + ["--progress", "never"])
    assert code == 0 and raw == "", repr(raw)


def test_mpi_relaunch_prints_plain_lines_with_always():
    args = SWEEP + ["-B", "mpi", "-N", "2"]
    reference = reference_rows(args)
    p = run(args + ["--progress", "always"], env={"CUDA_VISIBLE_DEVICES": ""})
    assert_plain_lines(p, reference)
    q = run(args, env={"CUDA_VISIBLE_DEVICES": ""}, check=0)  # auto off a terminal
    assert q.stderr == "", repr(q.stderr)


def test_mpi_relaunch_draws_a_bar_on_a_terminal():
    args = SWEEP + ["-B", "mpi", "-N", "2"]
    reference = reference_rows(args)
    code, raw, stdout = run_on_terminal(args)
    assert_bar(code, raw, stdout, reference, "mpi")


def test_user_mpirun_prints_plain_lines_with_always():
    args = SWEEP + ["-B", "mpi"]
    reference = row_keys(run(args + ["--progress", "never"], np=2, check=0).stdout)
    p = run(args + ["--progress", "always"], np=2)
    assert_plain_lines(p, reference)
    q = run(args + ["--progress", "never"], np=2, check=0)
    assert q.stderr == "", repr(q.stderr)


def test_results_on_the_same_terminal_appear_above_the_bar():
    # stdout and stderr on one terminal (an interactive run): the results' lines stay whole and
    # nothing of the bar is left among them.
    for backend in ("gloo", "mpi"):
        args = SWEEP + ["-B", backend, "-N", "2"]
        reference = reference_rows(args)
        code, raw, _ = run_on_terminal(args, stdout_too=True)
        assert code == 0, raw
        assert BAR.search(raw), f"{backend}: no bar: {raw!r}"
        lines, current = screen(raw)
        assert current == "", f"{backend}: left on the terminal: {current!r}"
        assert row_keys("\n".join(lines) + "\n") == reference, f"{backend}: {lines}"


def test_a_failure_under_the_bar_leaves_only_its_line():
    # A rank killed mid-sweep: the bar is erased and the terminal shows the cause alone.
    for backend in ("gloo", "mpi"):
        code, raw, _ = run_on_terminal(
            ["run", "-B", backend, "-N", "2", "-c", "allreduce", "-e", "64K", "--min-time",
             "0.02", "--progress", "always"], env={"COMMBENCH_TEST_FAULT": "die:1"})
        lines, current = screen(raw)
        assert code == 1, raw
        assert lines == ["commbench: rank 1 was killed by signal 9 (Killed)"] and current == "", \
            f"{backend}: {lines} {current!r} from {raw!r}"


if __name__ == "__main__":
    main([test_local_launcher_prints_plain_lines_with_always,
          test_local_launcher_draws_a_bar_on_a_terminal,
          test_mpi_relaunch_prints_plain_lines_with_always,
          test_mpi_relaunch_draws_a_bar_on_a_terminal,
          test_user_mpirun_prints_plain_lines_with_always,
          test_results_on_the_same_terminal_appear_above_the_bar,
          test_a_failure_under_the_bar_leaves_only_its_line])
