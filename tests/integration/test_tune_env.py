"""`tune --env` through the real binary: each combination a fresh job with the variables on
every rank (checked from the results' metadata), `env` on every record, a failed combination
recorded while the sweep goes on, --resume, commas inside values, --emit-env, and the
recommendation against the current environment. Real Open MPI variables and MPICH CVARs."""
import csv
import io
import json
import os
import subprocess

from cbtest import RESULT_COLUMNS, Skip, is_openmpi, main, mpi_prefix, run, tempdir
from test_repeat import stop_between_jobs

SIZES = ["-c", "allreduce", "-b", "1M", "-e", "4M", "-f", "4", "--min-time", "0.02", "-A",
         "default"]


def tune(args, sizes=SIZES, **kw):
    # One launch per combination unless a test judges the advice (which needs several).
    rounds = [] if "--rounds" in args else ["--rounds", "1"]
    return run(["tune", "-B", "mpi", "-N", "2", *sizes, *rounds, *args], **kw)


def records(path):
    return json.load(open(path))["results"]


def test_every_combination_reaches_every_rank_and_is_recorded():
    if is_openmpi():
        axis = "OMPI_MCA_coll_tuned_allreduce_algorithm=1,4"
        values = ["1", "4"]
    else:
        axis = "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=recursive_doubling,reduce_scatter_allgather"
        values = ["recursive_doubling", "reduce_scatter_allgather"]
    name = axis.split("=")[0]
    d = tempdir()
    out, csv_out = os.path.join(d, "t.json"), os.path.join(d, "t.csv")
    p = tune(["--env", axis, "--output", out, "--output", csv_out], check=0)
    got = records(out)
    envs = sorted({r["env"] for r in got})
    assert envs == sorted([""] + [f"{name}={v}" for v in values]), envs
    # The CSV carries env after wrong, as the contract orders the later columns.
    rows = list(csv.reader(io.StringIO(open(csv_out).read())))
    assert rows[0] == RESULT_COLUMNS, rows[0]
    assert {r[RESULT_COLUMNS.index("env")] for r in rows[1:]} == set(envs)
    assert "the environment combination and algorithm to use" in p.stdout, p.stdout


# Small sizes: an allreduce takes microseconds here, and even on a machine so busy that it takes
# 15 ms (2 ranks polling on 2 cores beside two compilers) the fault's 30 ms sleep is twice that.
SMALL = ["-c", "allreduce", "-b", "8", "-e", "32K", "-f", "4096", "--min-time", "0.1", "-A",
         "default"]
SLOW = "slow:0:30000"


def test_known_slower_setting_is_not_recommended():
    # A real algorithm's speed depends on the machine's load (basic_linear once beat the default
    # on a busy machine), so the known slower setting is the test-only fault that makes rank 0
    # sleep 30 ms after every call.
    d = tempdir()
    emit = os.path.join(d, "best.env")
    p = tune(["--env", "COMMBENCH_TEST_FAULT=" + SLOW, "--emit-env", emit, "--format", "csv",
              "--rounds", "3"], sizes=SMALL, check=0)
    after = p.stderr.split("# tune: the environment combination")[1]
    advice = [l for l in after.splitlines() if "allreduce" in l]
    # Each size keeps the current environment (the table still names the combination judged).
    assert advice and all("current | default" in l for l in advice), p.stderr
    text = open(emit).read()
    settings = [l for l in text.splitlines() if not l.startswith("#")]
    assert "keep it" in text and settings == [], text


def test_known_faster_setting_is_recommended():
    # The other way round: the current environment is the slow one, and the combination that
    # lifts the fault wins at every size and is written to --emit-env.
    d = tempdir()
    emit = os.path.join(d, "best.env")
    env = dict(os.environ, COMMBENCH_TEST_FAULT=SLOW)
    p = tune(["--env", "COMMBENCH_TEST_FAULT=none", "--emit-env", emit, "--format", "csv",
              "--rounds", "5"], sizes=SMALL, check=0, env=env)
    after = p.stderr.split("# tune: the environment combination")[1]
    advice = [l for l in after.splitlines() if "allreduce" in l]
    assert advice and all("COMMBENCH_TEST_FAULT=none" in l for l in advice), p.stderr
    text = open(emit).read()
    assert "COMMBENCH_TEST_FAULT=none" in text.splitlines(), text


# Quotes, $(...), backquotes, ';' and '#': a shell must take them as the value, in the comment
# that names the combination as in its NAME=VALUE line. (No ':' or ',', so no test fault.)
HOSTILE = "none'$(touch pwn1)\"$(touch pwn2)\"`touch pwn3`;touch pwn4 #\\ x"


def test_emitted_env_file_sources_to_exactly_its_values():
    # As docs/tune.md says to use it: `set -a; . FILE`, in sh and bash. The combination (it
    # lifts the slow fault) holds every shell metacharacter, in the verdict comment always and,
    # advised, in its NAME=VALUE line: sourcing runs nothing and sets exactly the value. (A
    # machine that changed mode between launches makes the verdict inconclusive: then the comment
    # alone is sourced. A newline is refused at the command line: test_bad_inputs.)
    d = tempdir()
    emit = os.path.join(d, "best.env")
    env = dict(os.environ, COMMBENCH_TEST_FAULT=SLOW)
    tune(["--env", "COMMBENCH_TEST_FAULT=" + HOSTILE, "--emit-env", emit, "--format", "csv",
          "--rounds", "5"], sizes=SMALL, check=0, env=env)
    text = open(emit).read()
    settings = [l for l in text.splitlines() if not l.startswith("#")]
    assert "COMMBENCH_TEST_FAULT=" + HOSTILE in text, text  # in the comment, as text
    assert settings == [] or (len(settings) == 1 and
                              settings[0].startswith("COMMBENCH_TEST_FAULT=")), text
    want = HOSTILE if settings else ""
    for shell in ("sh", "bash"):
        got = os.path.join(d, "got")
        source = 'set -a; . ./best.env; set +a; printf %s "$COMMBENCH_TEST_FAULT" > got'
        subprocess.run([shell, "-c", source], cwd=d, check=True,
                       env=dict(os.environ, COMMBENCH_TEST_FAULT=""))
        assert open(got).read() == want, (shell, open(got).read(), text)
        assert sorted(os.listdir(d)) == ["best.env", "got"], (shell, os.listdir(d), text)


def test_invalid_value_fails_only_its_combination():
    if not is_openmpi():
        raise Skip("an Open MPI MCA parameter")
    d = tempdir()
    out = os.path.join(d, "t.json")
    p = tune(["--env", "OMPI_MCA_btl=self\\,vader,no_such_btl", "--output", out], check=0)
    assert "combination OMPI_MCA_btl=no_such_btl failed" in p.stderr, p.stderr
    doc = json.load(open(out))
    assert {r["env"] for r in doc["results"]} == {"", "OMPI_MCA_btl=self,vader"}
    assert len(doc["meta"]["env_failures"]) == 1, doc["meta"]
    assert doc["meta"]["env_failures"][0].startswith("OMPI_MCA_btl=no_such_btl: exit")


def test_resume_skips_finished_combinations():
    d = tempdir()
    first = os.path.join(d, "first.jsonl")
    var = "OMPI_MCA_coll_tuned_allreduce_algorithm" if is_openmpi() else \
        "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM"
    vals = ["4", "3"] if is_openmpi() else ["recursive_doubling", "reduce_scatter_allgather"]
    tune(["--env", f"{var}={vals[0]}", "--output", first], check=0)
    before = [json.loads(l) for l in open(first)]
    second = os.path.join(d, "second.jsonl")
    p = tune(["--env", f"{var}={vals[0]},{vals[1]}", "--resume", first, "--output", second],
             check=0)
    assert "2 of 3 combinations already complete" in p.stderr, p.stderr
    after = [json.loads(l) for l in open(second)]
    # The finished combinations' records (every launch of each) are carried over as they were,
    # not measured again; a resumed sweep streams them combination by combination.
    kept = [r for r in after if r["env"] in ("", f"{var}={vals[0]}")]
    assert sorted(r["time_us"] for r in kept) == sorted(r["time_us"] for r in before), (kept,
                                                                                       before)
    assert any(r["env"] == f"{var}={vals[1]}" for r in after)


def test_resume_from_another_sweep_is_refused():
    # Records of other collectives, rank counts or sizes do not stand for this sweep's: refused
    # before anything runs, naming what differs, and no output written.
    d = tempdir()
    first = os.path.join(d, "first.jsonl")
    tune(["--env", "COMMBENCH_UNUSED_KNOB=a", "--output", first], check=0)
    second = os.path.join(d, "second.jsonl")
    for flag, value, needle in (("-c", "broadcast", "collectives: the file measured allreduce, "
                                                    "this sweep measures broadcast"),
                                ("-N", "3", "ranks: the file measured 2, this sweep measures 3"),
                                ("-e", "16M", "sizes:")):
        args = ["tune", "-B", "mpi", "-N", "2", *SIZES, "--rounds", "1", "--env",
                "COMMBENCH_UNUSED_KNOB=a,b", "--resume", first, "--output", second]
        args[args.index(flag) + 1] = value
        p = run(args, check=2)
        first_line = p.stderr.splitlines()[0]
        assert first_line.startswith(f"commbench: --resume {first} holds another sweep's"), p.stderr
        assert needle in first_line and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert not os.path.exists(second) and p.stdout == "", p.stdout


def test_documents_on_stdout_parse():
    # stdout is exactly the document; the advice and failures go to stderr.
    p = tune(["--env", "COMMBENCH_UNUSED_KNOB=a", "--format", "json"], check=0)
    assert {r["env"] for r in json.loads(p.stdout)["results"]} == {"", "COMMBENCH_UNUSED_KNOB=a"}
    assert "# tune --env: " in p.stderr, p.stderr
    p = tune(["--env", "COMMBENCH_UNUSED_KNOB=a", "--format", "csv"], check=0)
    rows = list(csv.reader(io.StringIO(p.stdout)))
    assert rows[0] == RESULT_COLUMNS and all(len(r) == len(RESULT_COLUMNS) for r in rows), p.stdout


def test_grid_beyond_the_bound_is_refused():
    # 10^8 combinations: refused at once from the count, before any is built.
    d = tempdir()
    grid = os.path.join(d, "g.toml")
    values = ", ".join(str(i) for i in range(100))
    with open(grid, "w") as f:
        f.write("[env]\n" + "".join(f"NCCL_K{a} = [{values}]\n" for a in range(4)))
    p = tune(["--env-grid", grid, "--output", os.path.join(d, "t.json")], check=2, timeout=20)
    assert p.stderr.startswith("commbench: the environment grid has 100000000 combinations "
                               "(100 x 100 x 100 x 100 values), more than the 10000"), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and os.listdir(d) == ["g.toml"], p.stderr


def test_interrupted_sweep_marks_its_env_file():
    # Stopped after its first job (test hook): exit 1, and the env file says the grid was cut,
    # names what was not measured and sets nothing.
    emit = os.path.join(tempdir(), "best.env")
    d = stop_between_jobs(["tune", "-B", "mpi", "-N", "2", *SIZES, "--rounds", "1", "--env",
                           "COMMBENCH_UNUSED_KNOB=a,b", "--emit-env", emit],
                          "combinations finished")
    lines = open(emit).read().splitlines()
    assert lines[0].startswith("# INCOMPLETE: the sweep was interrupted by signal 2"), lines
    assert lines[0].count("COMMBENCH_UNUSED_KNOB=") + lines[0].count("baseline") == 2, lines
    assert [l for l in lines if not l.startswith("#")] == [], lines
    # The .jsonl ends with the incomplete line: check and compare refuse it as they refuse a
    # cut run's, and --resume still reads it.
    stream = os.path.join(d, "r.jsonl")
    last = json.loads(open(stream).read().splitlines()[-1])
    assert last.get("incomplete") is True and "interrupted by signal 2" in last["reason"], last
    for args in (["check", "--expect", "auto", stream], ["compare", stream, stream]):
        p = run(args, check=2)
        assert "incomplete results" in p.stderr.splitlines()[0], p.stderr
    # The .json summary holds what finished, its meta marked the same way: refused likewise.
    summary = os.path.join(d, "r.json")
    mark = json.load(open(summary))["meta"]["incomplete"]
    assert mark["exit_code"] == 1 and "interrupted by signal 2" in mark["reason"], mark
    for args in (["check", "--expect", "auto", summary], ["compare", summary, summary]):
        p = run(args, check=2)
        assert p.stderr.startswith(f"commbench: {summary}: incomplete results: meta.incomplete: "
                                   "the run that wrote it failed with exit 1"), p.stderr
    p = run(["tune", "-B", "mpi", "-N", "2", *SIZES, "--rounds", "1", "--env",
             "COMMBENCH_UNUSED_KNOB=a,b", "--resume", stream, "--format", "csv"], check=0)
    assert "combinations already complete" in p.stderr, p.stderr


def test_launch_prefix_passes_the_variables():
    d = tempdir()
    out = os.path.join(d, "t.json")
    var = "OMPI_MCA_coll_tuned_allreduce_algorithm=4" if is_openmpi() else \
        "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=recursive_doubling"
    prefix = " ".join(mpi_prefix(2))
    run(["tune", "-B", "mpi", *SIZES, "--env", var, "--launch", prefix, "--output", out],
        check=0)
    assert {r["env"] for r in records(out)} == {"", var}


def test_bad_grids_are_usage_errors():
    d = tempdir()
    for args, needle in ((["--env", "NOEQUALS"], "NAME=VALUE"),
                         (["--env", "HOME=/x"], "not a variable commbench records"),
                         (["--env", "NCCL_X=1,1"], "repeated"),
                         (["--env-grid", os.path.join(d, "missing.toml")], "cannot read")):
        p = tune(args, check=2)
        assert p.stderr.startswith("commbench: ") and needle in p.stderr, (args, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    grid = os.path.join(d, "g.toml")
    with open(grid, "w") as f:
        f.write('[env]\nNCCL_ALGO = ["Ring,Tree", 3.5]\n')
    p = tune(["--env-grid", grid], check=2)
    assert "strings or integers" in p.stderr, p.stderr
    p = run(["tune", "-B", "mpi", *SIZES, "--env", "NCCL_ALGO=Ring"], np=2, check=2)
    assert "--launch" in p.stderr, p.stderr


if __name__ == "__main__":
    main([test_every_combination_reaches_every_rank_and_is_recorded,
          test_known_slower_setting_is_not_recommended, test_known_faster_setting_is_recommended,
          test_emitted_env_file_sources_to_exactly_its_values,
          test_invalid_value_fails_only_its_combination,
          test_resume_skips_finished_combinations, test_resume_from_another_sweep_is_refused,
          test_documents_on_stdout_parse, test_grid_beyond_the_bound_is_refused,
          test_interrupted_sweep_marks_its_env_file,
          test_launch_prefix_passes_the_variables,
          test_bad_grids_are_usage_errors])
