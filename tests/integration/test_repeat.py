"""`run --repeat N` and `--launch` through the real binary: every repetition a separate launch,
records tagged with their repetition, medians over repetitions in the summaries, Google
Benchmark aggregate rows, failures mapped to exit codes, and `compare`/`check` judging
repetitions."""
import json
import os
import re
import signal
import subprocess
import time

from cbtest import COMMBENCH, is_openmpi, main, mpi_prefix, run, tempdir

QUICK = ["-c", "allreduce", "-b", "8", "-e", "64K", "-f", "64", "--min-time", "0.005"]


def one_error_line(p, *needles):
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one stderr line, got:\n{p.stderr}"
    assert lines[0].startswith("commbench: "), lines[0]
    for n in needles:
        assert n in lines[0], f"{n!r} not in {lines[0]!r}"


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def test_repeat_runs_separate_launches_and_summarises():
    d = tempdir()
    out = {ext: os.path.join(d, "r" + ext) for ext in (".json", ".jsonl", ".csv", ".gbench.json")}
    args = ["run", "-B", "gloo", *QUICK, "--repeat", "3", "--format", "csv"]
    for path in out.values():
        args += ["--output", path]
    p = run(args, check=0)
    doc = json.load(open(out[".json"]))
    assert doc["meta"]["repetitions"] == 3, doc["meta"]
    results = doc["results"]
    assert [r["bytes"] for r in results] == [8, 512, 32768], results
    for r in results:
        assert r["repetitions"] == 3 and [x["repeat"] for x in r["repeats"]] == [0, 1, 2], r
        assert r["time_us"] == median([x["time_us"] for x in r["repeats"]]), r
        assert r["busbw_GBps"] == median([x["busbw_GBps"] for x in r["repeats"]]), r
        assert "repeat" not in r
    # Separate launches: each repetition has its own adaptive iteration counts and timings.
    assert len({tuple(x["time_us"] for x in r["repeats"]) for r in results}) > 1
    # .jsonl: every repetition's records, each with its index, as the launches ended.
    lines = [json.loads(l) for l in open(out[".jsonl"])]
    assert [(l["repeat"], l["bytes"]) for l in lines] == [(i, b) for i in range(3)
                                                          for b in (8, 512, 32768)], lines
    # CSV (stdout and file): one row per measurement with the medians.
    rows = p.stdout.strip().splitlines()
    assert len(rows) == 4, p.stdout
    assert open(out[".csv"]).read().count("\n") == 4
    # Google Benchmark: an iteration row per repetition, then mean/median/stddev aggregates.
    bench = json.load(open(out[".gbench.json"]))["benchmarks"]
    name = "allreduce/gloo/default/float/sum/out/8"
    mine = [b for b in bench if b["run_name"] == name]
    assert [b["run_type"] for b in mine] == ["iteration"] * 3 + ["aggregate"] * 3, mine
    assert [b["repetition_index"] for b in mine[:3]] == [0, 1, 2]
    assert [b["aggregate_name"] for b in mine[3:]] == ["mean", "median", "stddev"]
    assert mine[4]["name"] == name + "_median" and mine[4]["repetitions"] == 3
    assert abs(mine[4]["real_time"] - results[0]["time_us"]) < 1e-9


def test_repeat_table_says_figures_are_medians():
    p = run(["run", "-B", "gloo", *QUICK, "--repeat", "2"], check=0)
    assert "median over 2 launches" in p.stdout, p.stdout


def test_bad_repeat_values_are_usage_errors():
    for bad in ("0", "-1", "x", "1001"):
        p = run(["run", "-B", "gloo", *QUICK, "--repeat", bad], check=2)
        one_error_line(p, "--repeat")


def test_repeat_under_a_launcher_is_refused():
    p = run(["run", "-B", "mpi", *QUICK, "--repeat", "2"], np=2, check=2)
    # The user's mpirun may print its own banner first: commbench's first line is what counts.
    ours = [line for line in p.stderr.splitlines() if line.startswith("commbench: ")]
    assert ours and "--launch" in ours[0], p.stderr


def test_unknown_launcher_is_a_usage_error():
    p = run(["run", "-B", "gloo", *QUICK, "--launch", "ssh node1"], check=2)
    one_error_line(p, "--launch", "ssh")


def test_failed_repetition_maps_exit_and_leaves_no_file():
    d = tempdir()
    out = os.path.join(d, "r.json")
    p = run(["run", "-B", "gloo", *QUICK, "--repeat", "3", "--output", out],
            env={"COMMBENCH_TEST_FAULT": "die:1"}, check=1)
    one_error_line(p, "repetition 1 of 3", "rank 1", "signal 9")
    assert os.listdir(d) == [], os.listdir(d)


def incomplete_jsonl(path):
    """A .jsonl's records and its incomplete mark (the last line), which must be there."""
    lines = [json.loads(l) for l in open(path)]
    assert lines and lines[-1].get("incomplete") is True, lines
    assert all("incomplete" not in l for l in lines[:-1]), lines
    return lines[:-1], lines[-1]


def assert_judges_refuse(path):
    """check and compare refuse a file marked incomplete (exit 2), naming it and why."""
    for args in (["check", "--expect", "auto", path], ["compare", path, path]):
        p = run(args, check=2)
        one_error_line(p, path, "incomplete results", "exit 1")


def test_failed_repetition_keeps_earlier_repetitions_marked_incomplete():
    """Repetition 2 of 3 cannot start (TMPDIR became a file while the sweep waited after
    repetition 1, test hook): the run fails naming it, writes no summary, and its .jsonl keeps
    repetition 1 and ends with the incomplete mark."""
    d, tmp = tempdir(), os.path.join(tempdir(), "tmp")
    os.mkdir(tmp)
    jsonl, doc = os.path.join(d, "r.jsonl"), os.path.join(d, "r.json")
    pause = os.path.join(tempdir(), "paused")
    env = dict(os.environ, TMPDIR=tmp, COMMBENCH_TEST_PAUSE_BETWEEN_JOBS=pause,
               CUDA_VISIBLE_DEVICES="")
    p = subprocess.Popen([COMMBENCH, "run", "-B", "gloo", *QUICK, "--repeat", "3", "--output",
                          jsonl, "--output", doc], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not os.path.exists(pause):
        assert p.poll() is None, p.communicate()[1]
        assert time.monotonic() < deadline, "the first repetition never ended"
        time.sleep(0.05)
    os.rmdir(tmp)
    open(tmp, "w").close()
    os.remove(pause)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 1, f"exit {p.returncode}\n{err}"
    first = err.splitlines()[0]
    assert first.startswith("commbench: repetition 2 of 3: ") and tmp in first, err
    records, mark = incomplete_jsonl(jsonl)
    assert [(r["repeat"], r["bytes"]) for r in records] == [(0, 8), (0, 512), (0, 32768)], records
    assert mark["exit_code"] == 1 and mark["reason"] == first[len("commbench: "):], mark
    assert sorted(os.listdir(d)) == ["r.jsonl"], os.listdir(d)  # no summary of part of a run
    assert_judges_refuse(jsonl)


def test_failed_launch_keeps_its_finished_cases_like_a_plain_run():
    d = tempdir()
    jsonl, plain = os.path.join(d, "r.jsonl"), os.path.join(d, "plain.jsonl")
    fault = {"COMMBENCH_TEST_FAULT": "die:1:2"}
    run(["run", "-B", "mpi", "-N", "2", *QUICK, "--output", plain], env=fault, check=1)
    p = run(["run", "-B", "mpi", *QUICK, "--launch", " ".join(mpi_prefix(2)), "--output", jsonl],
            env=fault, check=1)
    assert p.stderr.startswith("commbench: ") and "rank 1" in p.stderr.splitlines()[0], p.stderr
    records, mark = incomplete_jsonl(jsonl)
    kept, plain_mark = incomplete_jsonl(plain)
    assert plain_mark["exit_code"] == 1, plain_mark
    assert len(records) == len(kept) == 2, (records, kept)
    assert all(r["nranks"] == 2 and "repeat" not in r for r in records), records
    assert mark["exit_code"] == 1 and "rank 1" in mark["reason"], mark
    assert_judges_refuse(jsonl)


def test_validation_failure_in_a_repetition_is_exit_3_with_results():
    d = tempdir()
    out = os.path.join(d, "r.json")
    p = run(["run", "-B", "gloo", *QUICK, "--repeat", "2", "--output", out],
            env={"COMMBENCH_TEST_FAULT": "corrupt:1"}, check=3)
    assert "repetition 1 of 2" in p.stderr and "validation failed" in p.stderr, p.stderr
    results = json.load(open(out))["results"]
    assert all(r["wrong"] > 0 for r in results), results


def test_launch_prefix_runs_each_repetition_under_mpirun():
    d = tempdir()
    out = os.path.join(d, "r.json")
    prefix = " ".join(mpi_prefix(2))
    run(["run", "-B", "mpi", *QUICK, "--repeat", "2", "--launch", prefix, "--output", out],
        check=0)
    results = json.load(open(out))["results"]
    assert results and all(r["nranks"] == 2 and r["repetitions"] == 2 for r in results), results


def test_secret_in_launch_prefix_reaches_no_output():
    """A secret handed to the ranks through the launcher prefix is recorded as `***` in the
    command line of every output, the prefix's other words as given."""
    d = tempdir()
    secret = "s3cr3tValue"
    if is_openmpi():
        passing = ["-x", f"GLOO_AUTH_TOKEN={secret}", "-x", f"API_KEY='{secret} x'"]
    else:
        passing = ["-genv", "GLOO_AUTH_TOKEN", secret, "-genv", "API_KEY", secret]
    prefix = " ".join(mpi_prefix(2)[:1] + passing + mpi_prefix(2)[1:])
    outs = [os.path.join(d, "r" + ext) for ext in (".json", ".jsonl", ".md", ".gbench.json")]
    for extra in (["--repeat", "2"], []):
        args = ["run", "-B", "mpi", *QUICK, "--launch", prefix, "--format", "json", *extra]
        p = run(args + [a for o in outs for a in ("--output", o)], check=0)
        assert secret not in p.stdout and secret not in p.stderr, p.stdout + p.stderr
        for o in outs:
            text = open(o).read()
            assert secret not in text, f"{o}:\n{text}"
        line = json.load(open(outs[0]))["meta"]["command_line"]
        assert "GLOO_AUTH_TOKEN" in line and "***" in line and "-B mpi" in line, line


def stop_between_jobs(args, expect):
    """Runs a sweep that waits after its first job (test hook), sends SIGINT there, and checks
    that it says it was interrupted and leaves no temporary file or directory. Returns the
    directory that holds its outputs, r.json and r.jsonl."""
    d, tmp = tempdir(), tempdir()
    pause = os.path.join(tempdir(), "paused")
    env = dict(os.environ, TMPDIR=tmp, COMMBENCH_TEST_PAUSE_BETWEEN_JOBS=pause,
               CUDA_VISIBLE_DEVICES="")
    p = subprocess.Popen([COMMBENCH] + args + ["--output", "r.json", "--output", "r.jsonl"],
                         cwd=d, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    deadline = time.monotonic() + 120
    while not os.path.exists(pause):
        assert p.poll() is None, p.stderr.read()
        assert time.monotonic() < deadline, "the first job never ended"
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 1, f"exit {p.returncode}\n{err}"
    errors = [l for l in err.splitlines() if not l.startswith(("commbench: note:",
                                                               "commbench: warning:"))]
    assert errors and errors[0].startswith("commbench: ") and expect in errors[0], err
    assert "interrupted by signal 2" in errors[0], err
    assert os.listdir(tmp) == [], f"left in TMPDIR: {os.listdir(tmp)}"
    left = [f for f in os.listdir(d) if ".tmp." in f]
    assert not left, f"left behind: {left}"
    return d


def test_signal_between_repetitions_says_so_and_cleans_up():
    stop_between_jobs(["run", "-B", "gloo", *QUICK, "--repeat", "3"], "repetition 2 of 3")


def test_signal_between_env_combinations_says_so_and_cleans_up():
    stop_between_jobs(["tune", "-B", "gloo", *QUICK, "--env", "NCCL_DEBUG=WARN,INFO"],
                      "combinations finished")


def test_compare_and_check_judge_repetitions():
    d = tempdir()
    a, b = os.path.join(d, "a.json"), os.path.join(d, "b.jsonl")
    run(["run", "-B", "gloo", *QUICK, "--repeat", "3", "--output", a], check=0)
    run(["run", "-B", "gloo", *QUICK, "--repeat", "3", "--output", b], check=0)
    # Each launch's control measurement and case order seed are in meta.
    launches = json.load(open(a))["meta"]["launches"]
    assert [l["repeat"] for l in launches] == [0, 1, 2], launches
    assert all(l["case_order_seed"] > 0 and [s["at"] for s in l["control"]] ==
               ["start", "middle", "end"] and all(s["pingpong_ns"] > 0 and s["compute_us"] > 0
                                                  for s in l["control"]) for l in launches)
    p = run(["compare", a, b, "--format", "json"])
    assert p.returncode in (0, 6), p.stderr
    rows = json.loads(p.stdout)["comparisons"]
    assert rows and all(r["method"] == "shape" and r["base"]["runs"] == 3 and
                        r["new"]["runs"] == 3 and r["ratio_low"] is not None for r in rows), rows
    # A directory of earlier runs is a baseline: its repetitions are pooled.
    hist = os.path.join(d, "history")
    os.mkdir(hist)
    os.rename(a, os.path.join(hist, "a.json"))
    p = run(["compare", hist, b, "--format", "json"])
    assert p.returncode in (0, 6), p.stderr
    assert all(r["base"]["runs"] == 3 for r in json.loads(p.stdout)["comparisons"])
    spec = os.path.join(d, "spec.toml")
    with open(spec, "w") as f:
        f.write('[[results]]\ncollective = "allreduce"\nmax_time_us = 1e9\n')
    p = run(["check", spec, b], check=0)
    assert "geometric mean of 3 launches" in p.stdout, p.stdout


# Every `run` flag with a value that a quick Gloo job accepts; the flags of the sweep itself
# (outputs, progress, repetitions, launcher) are not given to its jobs.
RELAUNCHED = {
    "--collectives": "allreduce,alltoallv", "--backends": "gloo", "--algorithms": "default",
    "--min-bytes": "8", "--max-bytes": "64", "--step-factor": "4", "--step-bytes": "56",
    "--dtypes": "int32", "--ops": "max", "--placement": "in", "--root": "1", "--warmup": "1",
    "--iters": "3", "--min-time": "0.01", "--no-check": None, "--memory": "host",
    "--nranks": "2", "--timeout": "120", "--gloo-iface": "lo", "--gpus": "1",
    "--roof-link-gbps": "10", "--roof-host-memory": "5", "--split": "zipf:1", "--split-seed": "5",
    "--moe-hidden": "64",
}
# nccl's own flags apply only where nccl runs: given with it beside gloo, on device memory (its
# jobs then fail where no GPU is, after they started with every flag).
NCCL_RELAUNCHED = dict(RELAUNCHED, **{
    "--backends": "gloo,nccl", "--memory": "device", "--nccl-lib": "/nonexistent/nccl",
    "--cuda-graph": "2"})
SWEEP_ONLY = {"--help", "--format", "--output", "--progress", "--repeat", "--launch"}


def long_flags(sub):
    """The long flags `commbench SUB --help` lists (--check as the --no-check given here)."""
    text = run([sub, "--help"], check=0).stdout
    return {"--no-check" if f == "--check" else f
            for f in re.findall(r"^\s+(?:-\w,)?(--[\w-]+)", text, re.M)}


def flag_args(flags=RELAUNCHED):
    args = []
    for flag, value in flags.items():
        args += [flag] if value is None else [flag, value]
    return args


def assert_every_job_got_every_flag(log, jobs, flags=RELAUNCHED):
    lines = [json.loads(l) for l in open(log)]
    assert len(lines) == jobs, lines
    for job in lines:
        for flag, value in flags.items():
            assert flag in job, (flag, job)
            if value is not None:
                assert job[job.index(flag) + 1] == value, (flag, job)


def test_every_run_flag_reaches_each_job():
    # A flag added to `run` without a value here fails first: every flag is walked.
    flags = long_flags("run")
    want = set(NCCL_RELAUNCHED) | SWEEP_ONLY
    assert flags == want, flags ^ want
    d = tempdir()
    log = os.path.join(d, "jobs.log")
    run(["run", *flag_args(), "--repeat", "2"], env={"COMMBENCH_TEST_JOB_LOG": log}, check=0)
    assert_every_job_got_every_flag(log, 2)
    log = os.path.join(d, "tune-jobs.log")
    run(["tune", *flag_args(), "--env", "GLOO_RELAUNCH_PROBE=1", "--rounds", "2"],
        env={"COMMBENCH_TEST_JOB_LOG": log}, check=0)
    assert_every_job_got_every_flag(log, 4)  # the baseline and the one combination, 2 rounds
    log = os.path.join(d, "nccl-jobs.log")
    run(["run", *flag_args(NCCL_RELAUNCHED), "--repeat", "2"],
        env={"COMMBENCH_TEST_JOB_LOG": log})
    assert_every_job_got_every_flag(log, 1, NCCL_RELAUNCHED)  # no such NCCL: it ends there


if __name__ == "__main__":
    main([test_repeat_runs_separate_launches_and_summarises,
          test_repeat_table_says_figures_are_medians,
          test_bad_repeat_values_are_usage_errors,
          test_repeat_under_a_launcher_is_refused,
          test_unknown_launcher_is_a_usage_error,
          test_failed_repetition_maps_exit_and_leaves_no_file,
          test_failed_repetition_keeps_earlier_repetitions_marked_incomplete,
          test_failed_launch_keeps_its_finished_cases_like_a_plain_run,
          test_validation_failure_in_a_repetition_is_exit_3_with_results,
          test_launch_prefix_runs_each_repetition_under_mpirun,
          test_secret_in_launch_prefix_reaches_no_output,
          test_signal_between_repetitions_says_so_and_cleans_up,
          test_signal_between_env_combinations_says_so_and_cleans_up,
          test_compare_and_check_judge_repetitions,
          test_every_run_flag_reaches_each_job])
