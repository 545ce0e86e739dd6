"""commbench tune: every algorithm swept, advice per size range, an Open MPI rules file that
follows Open MPI's format, and bad input refused."""
import csv
import io
import json
import os
import re

from cbtest import Skip, assert_validated, is_openmpi, main, parse_csv, run, tempdir


def test_tune_sweeps_every_algorithm_and_advises_per_size_range():
    p = run(["tune", "-B", "mpi", "-c", "allreduce", "-b", "64", "-e", "64K", "-f", "32",
             "--min-time", "0.01", "--format", "csv"], np=2, check=0)
    # Under --format csv stdout is the CSV document alone; the advice goes to stderr.
    rows = parse_csv(p.stdout)
    assert_validated(rows)
    algorithms = {r["algorithm"] for r in rows}
    assert "default" in algorithms and len(algorithms) >= 3, algorithms
    assert {r["bytes"] for r in rows} == {"64", "2048", "65536"}, rows
    assert "# tune:" not in p.stdout, p.stdout
    assert "# tune: the algorithm to use per size range" in p.stderr, p.stderr
    advice = [l for l in p.stderr.splitlines()
              if re.match(r"commbench: \s+mpi\s+allreduce\s", l)]
    assert advice, p.stderr
    for line in advice:  # each range names a swept algorithm, a speedup and its noise margin
        use, speedup, margin = line.split()[-3:]
        assert use in algorithms and re.match(r"\d+\.\d\dx$", speedup), line
        assert re.match(r"\d+\.\d%$", margin) and float(margin[:-1]) >= 2.0, line


def test_tune_recommends_and_writes_ompi_rules():
    if not is_openmpi():
        raise Skip("Open MPI rules need the Open MPI build")
    d = tempdir()
    rules = os.path.join(d, "rules.txt")
    p = run(["tune", "-B", "mpi", "-c", "allreduce,alltoall", "-b", "64", "-e", "64K", "-f", "32",
             "--min-time", "0.01", "--emit-ompi-rules", rules, "--format", "csv"], np=2, check=0)
    assert "# tune: the algorithm to use per size range" in p.stderr, p.stderr
    advice = [l for l in p.stderr.splitlines()
              if re.match(r"commbench: \s+mpi\s+(allreduce|alltoall)\s", l)]
    assert advice, p.stderr
    algorithms = {r.split(",")[2] for r in p.stdout.splitlines()[1:] if r.startswith("mpi,")}
    assert {"default", "ring", "recursive_doubling"} <= algorithms, algorithms
    # Rules file: numbers only after stripping comments; collective count, then per collective its
    # ID, one communicator size (2 ranks) and rules whose first one starts at 0.
    numbers = [int(t) for line in open(rules) for t in line.split("#")[0].split()]
    assert numbers[0] == 2, numbers
    pos = 1
    ids = []
    for _ in range(numbers[0]):
        coll, ncomm, ranks, nrules = numbers[pos:pos + 4]
        ids.append(coll)
        assert ncomm == 1 and ranks == 2 and nrules >= 1, numbers
        rule = numbers[pos + 4:pos + 8]
        assert rule[0] == 0, "first message-size rule must start at 0"
        pos += 4 + 4 * nrules
    assert sorted(ids) == [2, 3], ids  # ALLREDUCE, ALLTOALL
    assert pos == len(numbers)


SWEEP = ["tune", "-B", "mpi", "-c", "allreduce", "-b", "64", "-e", "64K", "-f", "32",
         "--min-time", "0.005"]


def test_tune_prints_candidate_lines_not_column_groups():
    p = run(SWEEP, np=2, check=0)
    lines = p.stdout.splitlines()
    algorithms = {r["algorithm"] for r in parse_csv(run(SWEEP + ["--format", "csv"], np=2,
                                                        check=0).stdout)}
    assert len(algorithms) >= 4, algorithms  # more candidates than the lines shown per size
    heading = [l for l in lines if l.startswith("# allreduce mpi float sum out-of-place")]
    assert heading and f"{len(algorithms)} candidates per size" in heading[0], p.stdout
    # Per size one line per candidate: the fastest 3 and the current default, no column groups.
    rows = [l.split() for l in lines if re.match(r"\s*\d+ (B|KiB)\s", l)]
    per_size = {}
    for r in rows:
        per_size.setdefault(" ".join(r[:2]), []).append(r[2])
    assert set(per_size) == {"64 B", "2 KiB", "64 KiB"}, per_size
    for size, names in per_size.items():
        assert 3 <= len(names) <= 4 and "default" in names, (size, names)
        assert set(names) <= algorithms, names
    assert max(len(l) for l in lines) < 200, max(lines, key=len)
    assert "# tune: the algorithm to use per size range" in p.stdout, p.stdout
    # The run's side-by-side table is there on request: a column group per algorithm.
    wide = run(SWEEP + ["--side-by-side"], np=2, check=0).stdout
    assert any(all(f"mpi/{a}" in l for a in algorithms) for l in wide.splitlines()), wide


def test_tune_documents_on_stdout_parse():
    # stdout holds exactly the document: the advice goes to stderr.
    for np, ranks in ((2, []), (None, ["-N", "2"])):  # under mpirun, and ranks commbench starts
        p = run(SWEEP + ranks + ["--format", "json"], np=np, check=0)
        doc = json.loads(p.stdout)
        assert doc["results"] and "commbench: # tune: the algorithm" in p.stderr, p.stderr
    p = run(SWEEP + ["--format", "csv"], np=2, check=0)
    rows = list(csv.reader(io.StringIO(p.stdout)))
    assert len(rows) > 1 and all(len(r) == len(rows[0]) for r in rows), p.stdout


def test_tune_bad_input():
    p = run(["tune", "--min-gain", "-5"])
    assert p.returncode == 2 and "--min-gain" in p.stderr, p.stderr
    for option in ("--emit-ompi-rules", "--emit-nccl-tuner"):
        p = run(["tune", option, "/nonexistent-dir/rules.txt"])
        assert p.returncode == 2 and "does not exist" in p.stderr, (option, p.stderr)


if __name__ == "__main__":
    main([test_tune_sweeps_every_algorithm_and_advises_per_size_range,
          test_tune_recommends_and_writes_ompi_rules,
          test_tune_prints_candidate_lines_not_column_groups, test_tune_documents_on_stdout_parse,
          test_tune_bad_input])
