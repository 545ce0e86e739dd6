"""compare's verdicts over launches through the real binary: identical runs are never a
regression (exit 0, or 6 when the machine's mode differed between them), a test-only slowdown of
one collective's large sizes and a forced slow Open MPI algorithm are regressions (exit 5) that
name the collective, and launches recorded on this machine (CPU hog in some launches),
resampled into 5 v 5 pairs, give no regression."""
import json
import os
import random
import sys

from cbtest import SOURCE_DIR, Skip, is_openmpi, main, run, tempdir

sys.path.insert(0, os.path.join(SOURCE_DIR, "bench"))
import compare_false_alarms as recorded  # noqa: E402  (the bench script's side documents)

SWEEP = ["-B", "mpi", "-N", "2", "-c", "allreduce,allgather,broadcast", "-b", "1K", "-e", "64K",
         "-f", "4", "--min-time", "0.005", "--repeat", "5"]
RECORDING = os.path.join(SOURCE_DIR, "tests", "data", "launches", "recording.json")


def sweep(path, env=None):
    run(["run", *SWEEP, "--output", path], env=env, check=0, timeout=300)
    return path


def compare_conclusive(d, env):
    """Base and new sweeps compared; when compare says the machine's mode moved between them
    (exit 6), both sides are measured again, as its line advises, up to three times."""
    for attempt in range(3):
        a = sweep(os.path.join(d, f"a{attempt}.json"))
        b = sweep(os.path.join(d, f"b{attempt}.json"), env=env)
        p = run(["compare", a, b])
        if p.returncode != 6:
            return a, b, p
    return a, b, p


def verdict(p):
    return p.stderr.strip().splitlines()[0] if p.stderr.strip() else ""


def test_identical_runs_are_never_a_regression():
    d = tempdir()
    a, b = sweep(os.path.join(d, "a.json")), sweep(os.path.join(d, "b.json"))
    p = run(["compare", a, b])
    assert p.returncode in (0, 6), p.stdout + p.stderr
    first = p.stdout.splitlines()[0]
    assert first.startswith("OK worst " if p.returncode == 0 else "INCONCLUSIVE "), first
    if p.returncode == 6:
        assert verdict(p).startswith("commbench: INCONCLUSIVE "), p.stderr


def test_slow_fault_on_large_allreduce_is_a_regression_naming_it():
    # Rank 0 sleeps 2 ms after each allreduce of 16 KiB and more: 16 and 64 KiB slower.
    a, b, p = compare_conclusive(tempdir(), {"COMMBENCH_TEST_FAULT": "slow:0:2000:allreduce:16384"})
    assert p.returncode == 5, p.stdout + p.stderr
    assert p.stdout.startswith("REGRESSION allreduce 16\u201364 KiB "), p.stdout
    assert verdict(p).startswith("commbench: REGRESSION allreduce 16\u201364 KiB "), p.stderr
    doc = json.loads(run(["compare", a, b, "--format", "json"], check=5).stdout)
    named = {(c["collective"], c["bytes"]) for c in doc["comparisons"]
             if c["status"] == "regression"}
    assert named == {("allreduce", 16384), ("allreduce", 65536)}, named


def test_forced_slow_algorithm_is_a_regression_naming_allreduce():
    if not is_openmpi():
        raise Skip("needs Open MPI's coll_tuned variables")
    a, b, p = compare_conclusive(tempdir(), {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                                             "OMPI_MCA_coll_tuned_allreduce_algorithm": "1"})
    assert p.returncode == 5, p.stdout + p.stderr
    assert p.stdout.startswith("REGRESSION allreduce "), p.stdout
    assert verdict(p).startswith("commbench: REGRESSION allreduce "), p.stderr


def test_recorded_launches_resampled_give_no_false_regression():
    """Identical launches recorded on this machine (bench/compare_false_alarms.py record),
    resampled into 5 v 5 pairs: whatever the machine did, never a regression."""
    rec = json.load(open(RECORDING))
    rng = random.Random(7)
    n = len(rec["launches"])
    assert n >= 40 and any(l["hog"] for l in rec["launches"]), "recording too small"
    d = tempdir()
    cb = os.environ.get("COMMBENCH", "commbench")
    for _ in range(20):
        draw = rng.sample(range(n), 10)
        code, named, line = recorded.compare(
            cb, d, recorded.side_document(rec, draw[:5], recorded.no_change),
            recorded.side_document(rec, draw[5:], recorded.no_change))
        assert code in (0, 6) and not named, line
        assert line.startswith("OK " if code == 0 else "INCONCLUSIVE "), line


# --- one launch a side --------------------------------------------------------------------------

ONE_LAUNCH = ["run", "-B", "mpi", "-N", "2", "-c", "allreduce,allgather", "-b", "1K", "-e", "4M",
              "--progress", "never"]
TIMES = ("time_us", "min_us", "p50_us", "p99_us", "max_us", "p50_low_us", "p50_high_us")


def slowed_copy(doc, factor, collective="allreduce", min_bytes=1 << 20):
    """The document with `collective` at `min_bytes` and more `factor` times slower: every time
    figure (p50, every percentile, the median's interval) times it, bandwidths over it; the
    control as it was."""
    d = json.loads(json.dumps(doc))
    for r in d["results"]:
        if r["collective"] == collective and r["bytes"] >= min_bytes:
            for k in TIMES:
                r[k] *= factor
            for k in ("algbw_GBps", "busbw_GBps"):
                r[k] /= factor
            if r.get("efficiency") is not None:
                r["efficiency"] /= factor
    return d


def gate_line(line):
    """An inconclusive line that says the launches could not be compared, and why."""
    return line.startswith("INCONCLUSIVE one launch a side: the ") and (
        "was disturbed" in line or "moved during it" in line or "controls disagree" in line)


def test_one_launch_a_side_copy_with_large_allreduce_twice_as_slow_is_a_regression():
    """The reproduction: one launch, and a copy of it with allreduce at 1 MiB and more twice as
    slow, the control unchanged: a regression naming allreduce at those sizes, or, where the
    launch itself was disturbed (this machine under other work), inconclusive saying so; never
    OK."""
    d = tempdir()
    base = os.path.join(d, "base.json")
    run([*ONE_LAUNCH, "--output", base], check=0)
    doc = json.load(open(base))
    assert all(r["p50_low_us"] <= r["p50_us"] <= r["p50_high_us"] for r in doc["results"])
    slow = os.path.join(d, "slow.json")
    json.dump(slowed_copy(doc, 2), open(slow, "w"))
    p = run(["compare", base, slow])
    line = p.stdout.splitlines()[0]
    assert p.returncode in (5, 6), (p.returncode, p.stdout, p.stderr)
    assert verdict(p) == "commbench: " + line, (line, p.stderr)
    if p.returncode == 5:
        assert line.startswith("REGRESSION allreduce "), line
        assert "\u00d7 slower (99 % CI " in line and "1 v 1 launches)" in line, line
        out = json.loads(run(["compare", base, slow, "--format", "json"], check=5).stdout)
        named = {(c["collective"], c["bytes"]) for c in out["comparisons"]
                 if c["status"] == "regression"}
        assert named and all(c == "allreduce" and b >= 1 << 20 for c, b in named), named
        assert all(c["method"] == "single-launch" for c in out["comparisons"])
    else:
        assert gate_line(line) and line.endswith("-- run both sides with --repeat 5"), line
    # The launch against itself: nothing moved.
    p = run(["compare", base, base], check=0)
    assert p.stdout.startswith("OK worst "), p.stdout


def test_one_launch_a_side_identical_launches_are_never_a_regression():
    """Real identical single launches, compared pairwise: never exit 5; OK, or inconclusive
    naming why (the launches could not be compared, or a change beyond the floor undecided)."""
    d = tempdir()
    paths = []
    for i in range(4):
        paths.append(os.path.join(d, f"l{i}.json"))
        run([*ONE_LAUNCH, "--min-time", "0.01", "--output", paths[-1]], check=0)
    for i, a in enumerate(paths):
        for b in paths[i + 1:]:
            p = run(["compare", a, b])
            line = p.stdout.splitlines()[0]
            assert p.returncode in (0, 6), (p.returncode, line)
            assert line.startswith("OK worst " if p.returncode == 0 else "INCONCLUSIVE "), line
            if p.returncode == 6:
                assert line.endswith("-- run both sides with --repeat 5"), line


if __name__ == "__main__":
    main([test_identical_runs_are_never_a_regression,
          test_slow_fault_on_large_allreduce_is_a_regression_naming_it,
          test_forced_slow_algorithm_is_a_regression_naming_allreduce,
          test_recorded_launches_resampled_give_no_false_regression,
          test_one_launch_a_side_copy_with_large_allreduce_twice_as_slow_is_a_regression,
          test_one_launch_a_side_identical_launches_are_never_a_regression])
