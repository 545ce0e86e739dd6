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


if __name__ == "__main__":
    main([test_identical_runs_are_never_a_regression,
          test_slow_fault_on_large_allreduce_is_a_regression_naming_it,
          test_forced_slow_algorithm_is_a_regression_naming_allreduce,
          test_recorded_launches_resampled_give_no_false_regression])
