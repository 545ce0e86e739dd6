"""commbench run under the MPI launcher: every collective validated at 1-4 ranks, the CSV/JSON
contract, streaming JSONL, and exit codes for bad input, corrupted results and hangs."""
import json
import os
import re

from cbtest import (COLLECTIVES, RESULT_COLUMNS, STRAGGLER_ARGS, Skip, assert_straggler,
                    is_openmpi, main, parse_csv, run, straggler_warnings, tempdir,
                    timeout_beyond_startup)

BUS = {"allreduce": lambda n: 2 * (n - 1) / n, "allgather": lambda n: (n - 1) / n,
       "reduce_scatter": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n,
       "gather": lambda n: (n - 1) / n, "scatter": lambda n: (n - 1) / n,
       "alltoallv": lambda n: (n - 1) / n,
       "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0, "sendrecv": lambda n: 1.0}
BLOCK = {"allgather", "reduce_scatter", "alltoall", "gather", "scatter"}
SIZE = {"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "float": 4,
        "double": 8}
MAX_RANKS = 4 if is_openmpi() else 2  # MPICH is unusable oversubscribed


def check_rows(rows, nranks):
    seen = set()
    for r in rows:
        c = r["collective"]
        seen.add(c)
        assert r["backend"] == "mpi", r
        assert int(r["nranks"]) == nranks and int(r["nnodes"]) == 1, r
        assert int(r["iters"]) > 0, r
        t, mn, p50, p99, mx = (float(r[k]) for k in ("time_us", "min_us", "p50_us", "p99_us", "max_us"))
        assert t > 0 and 0 <= mn <= p50 <= p99 <= mx, r
        assert float(r["cv"]) >= 0, r
        if c == "barrier":
            assert r["bytes"] == "0" and r["algbw_GBps"] == "" and r["busbw_GBps"] == "", r
            assert r["wrong"] == "" and r["placement"] == "none", r
            continue
        assert r["wrong"] == "0", f"validation failed: {r}"
        count, size = int(r["count"]), int(r["bytes"])
        blocks = nranks if c in BLOCK else 1
        assert size == count * SIZE[r["dtype"]] * blocks, r
        algbw = float(r["algbw_GBps"])
        assert abs(algbw - size / t / 1e3) <= 1e-3 * algbw + 1e-6, r
        busbw = float(r["busbw_GBps"])
        assert abs(busbw - algbw * BUS[c](nranks)) <= 1e-3 * algbw + 1e-6, r
        assert (r["root"] == "-1") == (c not in ("broadcast", "reduce", "gather", "scatter")), r
        assert (r["op"] == "none") == (c not in ("allreduce", "reduce_scatter", "reduce")), r
    return seen


def all_collectives_at(n):
    if n > MAX_RANKS:
        raise Skip(f"{n} ranks need oversubscription, which this MPI cannot do usefully")
    p = run(["run", "-B", "mpi", "-b", "8", "-e", "64K", "-f", "8", "--placement", "both", "--format", "csv",
             "--min-time", "0.005"], np=n, check=0)
    rows = parse_csv(p.stdout)
    assert check_rows(rows, n) == set(COLLECTIVES)
    placements = {r["placement"] for r in rows if r["collective"] != "barrier"}
    assert placements == {"out", "in"}, placements


def test_all_collectives_1_rank():
    all_collectives_at(1)


def test_all_collectives_2_ranks():
    all_collectives_at(2)


def test_all_collectives_3_ranks():
    all_collectives_at(3)


def test_all_collectives_4_ranks():
    all_collectives_at(4)


def test_every_dtype_and_op_validated():
    p = run(["run", "-B", "mpi", "-c", "allreduce,reduce_scatter,reduce", "-d", "all", "-o", "all", "-b", "64",
             "-e", "4K", "-f", "8", "--format", "csv", "-n", "3", "-w", "1"], np=2, check=0)
    rows = parse_csv(p.stdout)
    check_rows(rows, 2)
    assert {r["dtype"] for r in rows} == set(SIZE), "MPI dtypes missing"
    assert {r["op"] for r in rows} == {"sum", "prod", "min", "max"}
    assert "half is not supported" in p.stderr and "avg is not supported" in p.stderr


def test_all_roots_and_odd_sizes_at_3_ranks():
    p = run(["run", "-B", "mpi", "-c", "broadcast,reduce,gather,scatter", "-r", "all", "-b", "12", "-e", "1000",
             "-i", "196", "--placement", "both", "-d", "int32,double", "--format", "csv", "-n", "2",
             "-w", "1"], np=3, check=0)
    rows = parse_csv(p.stdout)
    check_rows(rows, 3)
    assert {r["root"] for r in rows} == {"0", "1", "2"}


def test_fixed_iterations():
    p = run(["run", "-B", "mpi", "-c", "allreduce", "-e", "1K", "-n", "7", "-w", "0", "--format", "csv"], np=2, check=0)
    assert {r["iters"] for r in parse_csv(p.stdout)} == {"7"}


def test_json_jsonl_csv_outputs_agree():
    d = tempdir()
    out = [os.path.join(d, f) for f in ("r.json", "r.csv", "r.jsonl")]
    args = ["run", "-B", "mpi", "-c", "allreduce,barrier,alltoall", "-e", "4K", "--min-time", "0.005"]
    for o in out:
        args += ["--output", o]
    # Secret-looking names, with and without a steering prefix: none may reach any file.
    secrets = {"SECRET_TOKEN": "hunter1", "NCCL_API_KEY": "hunter2", "UCX_PASSWORD": "hunter3"}
    p = run(args, np=2, env=dict(secrets, NCCL_ALGO="ring"), check=0)
    assert "# allreduce" in p.stdout  # the table still goes to stdout
    doc = json.load(open(out[0]))
    assert doc["schema"] == "commbench/result/v1"
    meta = doc["meta"]
    for key in ("commbench_version", "start_time", "command_line", "hosts", "nranks", "nnodes",
                "ranks_per_node", "libraries", "environment"):
        assert key in meta, key
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", meta["start_time"])
    assert meta["nranks"] == 2 and meta["ranks_per_node"] == 2
    assert meta["libraries"]["mpi"].startswith(("Open MPI", "MPICH"))
    assert meta["environment"].get("NCCL_ALGO") == "ring"
    assert "PATH" not in meta["environment"]
    for name, value in secrets.items():
        for f in out:
            assert name not in open(f).read() and value not in open(f).read(), (name, f)
    assert "--output" in meta["command_line"]
    results = doc["results"]
    # The table's columns in contract order, then the per-rank times and, where judged, the
    # lateness (JSON only).
    json_only = ["rank_time_us", "lateness"]
    assert all(list(r.keys())[:len(RESULT_COLUMNS) + 1] == RESULT_COLUMNS + ["rank_time_us"] and
               list(r.keys())[len(RESULT_COLUMNS):] in (json_only[:1], json_only)
               for r in results), [list(r.keys()) for r in results]
    csv_rows = parse_csv(open(out[1]).read())
    lines = [json.loads(l) for l in open(out[2])]
    assert len(results) == len(csv_rows) == len(lines) > 0
    for j, c, l in zip(results, csv_rows, lines):
        assert j == l
        assert j["collective"] == c["collective"] and str(j["bytes"]) == c["bytes"]
        assert abs(j["time_us"] - float(c["time_us"])) <= 1e-5 * j["time_us"]
    assert not [f for f in os.listdir(d) if ".tmp." in f], "temporary files left"


def test_slowest_rank_is_named_in_rank_times():
    # Rank R sleeps 20 ms after each call it issues (a test-only fault), so its timed batches end
    # one sleep after the others' (each of theirs ends with the call the sleeper last joined):
    # about a quarter longer at 5 iterations, far beyond the ranks' start skew.
    n = min(3, MAX_RANKS)
    slow = n - 2 if n > 2 else 1
    d = tempdir()
    out = [os.path.join(d, f) for f in ("r.json", "r.jsonl", "r.csv")]
    args = ["run", "-B", "mpi", "-c", "allreduce,broadcast", "-b", "1K", "-e", "1K", "-n", "5",
            "-w", "1"]
    for o in out:
        args += ["--output", o]
    run(args, np=n, env={"COMMBENCH_TEST_FAULT": f"slow:{slow}:20000"}, check=0)
    doc = json.load(open(out[0]))
    lines = [json.loads(l) for l in open(out[1])]
    assert len(doc["results"]) == len(lines) == 2
    for r, l in zip(doc["results"], lines):
        t = r["rank_time_us"]
        assert l["rank_time_us"] == t
        assert t["slowest_rank"] == slow, t
        assert t["slowest_host"] == doc["meta"]["hosts"][0], t
        assert t["max"] == r["time_us"], (t, r["time_us"])  # time_us is the slowest rank's
        assert 0 < t["min"] <= t["median"] <= t["max"], t
        assert t["max"] > 1.1 * t["min"], t
        assert t["slowest_gpu"] is None, t  # MPI ranks drive no GPU
        assert t["slowest_core"] is None or t["slowest_core"] >= 0, t
    assert "rank_time_us" not in open(out[2]).readline()  # CSV unchanged


def test_straggling_rank_is_named_after_the_results():
    if MAX_RANKS < 4:
        raise Skip("needs 4 ranks (Open MPI oversubscribed)")
    p = run(STRAGGLER_ARGS + ["-B", "mpi"], np=4,
            env={"COMMBENCH_TEST_FAULT": "slow:2:20000"}, check=0)
    doc = assert_straggler(p, 2, host=None)
    assert doc["meta"]["straggler"]["host"] == doc["meta"]["hosts"][0]
    # The integration harness sets COMMBENCH_TEST_NO_CONTROL_WARNING=1: this warning ignores it.
    assert os.environ.get("COMMBENCH_TEST_NO_CONTROL_WARNING") == "1"


def test_healthy_run_names_no_straggler():
    # Every collective from 8 bytes to 16K at adaptive iterations, no fault: ranks take turns
    # entering the calls last (descheduled, or last out of the previous call by the collective's
    # own order), and none is the one the others wait for case after case.
    n = min(4, MAX_RANKS)
    p = run(["run", "-B", "mpi", "-e", "16K", "--format", "json"], np=n, check=0)
    assert not straggler_warnings(p.stderr), p.stderr
    doc = json.loads(p.stdout)
    s = doc["meta"]["straggler"]
    assert not s["found"] and s["cases"] >= 8 and s["calls"] >= 20, s
    assert s["between_us"] == 0, s  # nothing of their own runs between the calls
    judged = [r for r in doc["results"] if r.get("lateness")]
    assert judged and all(r["lateness"]["calls"] > 0 for r in judged), doc["results"]
    assert all(r["collective"] != "sendrecv" for r in judged)  # point to point: not judged
    one = run(["run", "-B", "mpi", "-c", "allreduce", "-e", "1K", "--format", "json"], np=1,
              env={"COMMBENCH_TEST_FAULT": "slow:0:2000"}, check=0)
    assert not straggler_warnings(one.stderr), one.stderr
    assert "straggler" not in json.loads(one.stdout)["meta"]  # one rank: nothing to judge


def test_json_to_stdout():
    p = run(["run", "-B", "mpi", "-c", "sendrecv", "-e", "256", "--format", "json"], np=2, check=0)
    doc = json.loads(p.stdout)
    assert [r["collective"] for r in doc["results"]] == ["sendrecv"] * 6


def expect_usage_error(args, needle, np=None):
    d = tempdir()
    out = os.path.join(d, "x.json")
    p = run(args + ["--output", out], np=np)
    assert p.returncode == 2, (args, p.returncode, p.stderr)
    ours = [l for l in p.stderr.splitlines() if l.startswith("commbench:")]
    assert len(ours) == 1, p.stderr
    assert needle in ours[0], (needle, ours[0])
    assert "Traceback" not in p.stderr and "terminate called" not in p.stderr
    assert os.listdir(d) == [], "output written despite bad input"


def test_bad_input_exit_2():
    expect_usage_error(["run", "-B", "mpi", "-c", "allreduc"], "unknown collective 'allreduc'")
    expect_usage_error(["run", "-B", "mpi", "-b", "12Q"], "--min-bytes")
    expect_usage_error(["run", "-B", "mpi", "-b", "1M", "-e", "1K"], "larger than --max-bytes")
    expect_usage_error(["run", "-B", "mpi", "-d", "float,quad"], "unknown dtype 'quad'")
    expect_usage_error(["run", "-B", "mpi", "-o", "xor"], "unknown op 'xor'")
    expect_usage_error(["run", "-B", "mpi", "--placement", "up"], "--placement")
    expect_usage_error(["run", "-B", "mpi", "-n", "0"], "--iters")
    expect_usage_error(["run", "-B", "mpi", "-w", "-3"], "--warmup")
    expect_usage_error(["run", "-B", "mpi", "--timeout", "-1"], "--timeout")
    expect_usage_error(["run", "-B", "mpi", "--min-time", "zero"], "--min-time")
    expect_usage_error(["run", "-B", "mpi", "--format", "yaml"], "unknown format 'yaml'")
    expect_usage_error(["run", "-B", "carrier-pigeon"], "unknown backend")
    expect_usage_error(["run", "-B", "mpi", "--frobnicate"], "frobnicate")
    expect_usage_error(["run", "-B", "mpi", "-f", "1"], "--step-factor")
    p = run(["list", "sandwiches"])
    assert p.returncode == 2 and "unknown list 'sandwiches'" in p.stderr, p.stderr
    p = run(["run", "-B", "mpi", "--output", "/tmp/results.xlsx"])
    assert p.returncode == 2 and "extension" in p.stderr, p.stderr


def test_bad_input_under_mpirun():
    expect_usage_error(["run", "-B", "mpi", "-c", "broadcast", "-r", "5"], "--root 5 is out of range", np=2)
    expect_usage_error(["run", "-B", "mpi", "-c", "allreduce", "-b", "1T", "-e", "1T"], "cannot allocate", np=2)


def test_corrupted_result_is_caught():
    d = tempdir()
    out = os.path.join(d, "r.jsonl")
    p = run(["run", "-B", "mpi", "-c", "allreduce,alltoall", "-e", "1K", "--format", "csv", "--output", out],
            np=2, env={"COMMBENCH_TEST_FAULT": "corrupt:1"})
    assert p.returncode == 3, (p.returncode, p.stderr)
    rows = parse_csv(p.stdout)
    assert rows and all(r["wrong"] == "1" for r in rows), rows
    assert "validation failed" in p.stderr
    assert len(open(out).readlines()) == len(rows), "results not kept"


def test_no_check_leaves_wrong_empty():
    p = run(["run", "-B", "mpi", "-c", "allreduce", "-e", "1K", "--no-check", "--format", "csv"], np=2,
            env={"COMMBENCH_TEST_FAULT": "corrupt:1"}, check=0)
    assert {r["wrong"] for r in parse_csv(p.stdout)} == {""}


def test_hang_ends_at_timeout_with_exit_4():
    d = tempdir()
    out = os.path.join(d, "r.jsonl")
    args = ["run", "-B", "mpi", "-c", "barrier,allreduce", "-e", "64K"]
    t = timeout_beyond_startup(args + ["-n", "1", "-w", "0"], np=2)
    p = run(args + ["--timeout", str(t), "--output", out], np=2,
            env={"COMMBENCH_TEST_FAULT": "hang:1"}, timeout=10 * t + 60)
    assert p.returncode == 4, (p.returncode, p.stderr)
    assert f"timeout: barrier made no progress for {t} s" in p.stderr, p.stderr


def test_list_and_version():
    p = run(["list", "collectives"], check=0)
    for c in COLLECTIVES:
        assert c in p.stdout
    assert "2(n-1)/n" in p.stdout
    p = run(["list", "dtypes"], check=0)
    assert re.search(r"float\s+4\s+.*mpi", p.stdout), p.stdout
    p = run(["list", "backends"], check=0)
    assert "mpi" in p.stdout and "available" in p.stdout
    p = run(["version"], check=0)
    assert re.search(r"commbench \d+\.\d+\.\d+", p.stdout)
    assert "MPI: Open MPI" in p.stdout or "MPI: MPICH" in p.stdout


if __name__ == "__main__":
    main([test_all_collectives_1_rank, test_all_collectives_2_ranks, test_all_collectives_3_ranks,
          test_all_collectives_4_ranks, test_every_dtype_and_op_validated,
          test_all_roots_and_odd_sizes_at_3_ranks, test_fixed_iterations,
          test_json_jsonl_csv_outputs_agree, test_slowest_rank_is_named_in_rank_times,
          test_straggling_rank_is_named_after_the_results, test_healthy_run_names_no_straggler,
          test_json_to_stdout, test_bad_input_exit_2,
          test_bad_input_under_mpirun, test_corrupted_result_is_caught,
          test_no_check_leaves_wrong_empty, test_hang_ends_at_timeout_with_exit_4,
          test_list_and_version])
