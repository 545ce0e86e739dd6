"""The Gloo backend end to end: every collective and every algorithm validated at 2, 3 and 4
ranks under the local launcher, Gloo rendezvous through MPI under mpirun, MPI and Gloo side by
side in one run, and what `list` says about Gloo."""
import json
import os
import re

from cbtest import (COLLECTIVES, STRAGGLER_ARGS, assert_straggler, assert_validated, is_openmpi,
                    main, parse_csv, run, tempdir)

LOCAL = {"CUDA_VISIBLE_DEVICES": ""}


def gloo_algorithms():
    p = run(["list", "algorithms", "-B", "gloo"], check=0)
    table = {}
    for line in p.stdout.splitlines()[1:]:
        backend, collective, names = line.split(None, 2)
        table[collective] = {n.strip() for n in names.split(",")}
    assert set(table) == set(COLLECTIVES), table
    return table


def every_algorithm_at(n):
    listed = gloo_algorithms()
    p = run(["run", "-N", str(n), "-B", "gloo", "-A", "all", "-b", "8", "-e", "40K", "-f", "70",
             "--placement", "both", "-d", "float,int32,half", "-o", "sum,max", "-r", str(n - 1),
             "--format", "csv", "--min-time", "0.002"], env=LOCAL, check=0, timeout=600)
    rows = parse_csv(p.stdout)
    assert_validated(rows)
    assert all(r["nranks"] == str(n) and r["backend"] == "gloo" for r in rows)
    assert all(re.match(r"Gloo \S+$", r["library"]) for r in rows), rows[0]["library"]
    for collective, names in listed.items():
        ran = {r["algorithm"] for r in rows if r["collective"] == collective}
        want = set(names)
        if collective == "allreduce" and n % 2:
            want.discard("bcube")  # legacy AllreduceBcube needs a multiple of 2 ranks
            assert "allreduce algorithm bcube skipped" in p.stderr, p.stderr
        assert ran == want, (collective, n, ran, want)
        if collective != "barrier":
            placements = {r["placement"] for r in rows if r["collective"] == collective}
            # gloo::alltoallv has no in-place form: skipped with a note.
            want = {"out"} if collective == "alltoallv" else {"out", "in"}
            assert placements == want, (collective, placements)
    assert "alltoallv algorithm default skipped where in place" in p.stderr, p.stderr


def test_every_algorithm_at_2_ranks():
    every_algorithm_at(2)


def test_every_algorithm_at_3_ranks():
    every_algorithm_at(3)


def test_every_algorithm_at_4_ranks():
    every_algorithm_at(4)


def test_gloo_under_mpirun_rendezvous_through_mpi():
    n = 3 if is_openmpi() else 2
    p = run(["run", "-B", "gloo", "-c", "allreduce,alltoall,sendrecv", "-e", "4K", "-f", "16",
             "--format", "csv", "--min-time", "0.002"], np=n, check=0)
    rows = parse_csv(p.stdout)
    assert rows and all(r["backend"] == "gloo" and r["nranks"] == str(n) for r in rows), rows
    assert_validated(rows)


def test_mpi_and_gloo_side_by_side():
    d = tempdir()
    out = os.path.join(d, "r.json")
    p = run(["run", "-B", "mpi,gloo", "-N", "2", "-c", "allreduce,barrier", "-b", "8", "-e", "64K",
             "-f", "8", "--output", out, "--min-time", "0.002"], env=LOCAL, check=0)
    header = next(l for l in p.stdout.splitlines() if "mpi/default" in l)
    assert "gloo/default" in header, p.stdout  # one line, two column groups
    first_row = next(l for l in p.stdout.splitlines() if re.match(r"\s+8 B", l))
    assert first_row.count(" 0") >= 2, first_row  # a #wrong column per backend
    doc = json.load(open(out))
    libraries = doc["meta"]["libraries"]
    assert libraries["mpi"].startswith("Open MPI" if is_openmpi() else "MPICH"), libraries
    assert libraries["gloo"].startswith("Gloo "), libraries
    as_csv = [{k: "" if v is None else str(v) for k, v in r.items()} for r in doc["results"]]
    assert_validated(as_csv)
    backends = {(r["backend"], r["library"]) for r in doc["results"]}
    assert {b for b, _ in backends} == {"mpi", "gloo"}, backends
    per_backend = {}
    for r in doc["results"]:
        per_backend.setdefault(r["backend"], set()).add((r["collective"], r["bytes"]))
    assert per_backend["mpi"] == per_backend["gloo"], per_backend


def test_list_collectives_says_native_or_composed():
    p = run(["list", "collectives", "-B", "gloo"], check=0)
    lines = {l.split()[1]: l for l in p.stdout.splitlines()[1:]}
    assert set(lines) == set(COLLECTIVES), p.stdout
    assert "composed" in lines["sendrecv"], lines["sendrecv"]
    assert "ReduceScatterHalvingDoubling" in lines["reduce_scatter"], lines["reduce_scatter"]
    # The legacy class races (a rank overwrites data still being sent), so the default is the
    # composed ring.
    assert "composed: ring" in lines["reduce_scatter"] and "(default)" in lines["reduce_scatter"], \
        lines["reduce_scatter"]
    for c in ("allreduce", "allgather", "broadcast", "reduce", "alltoall", "gather", "scatter",
              "barrier"):
        assert "native" in lines[c], lines[c]


def test_gloo_iface_names_the_interface():
    p = run(["run", "-N", "2", "-B", "gloo", "--gloo-iface", "lo", "-c", "allreduce", "-e", "64",
             "--format", "csv", "--min-time", "0.002"], env=LOCAL, check=0)
    assert_validated(parse_csv(p.stdout))


def test_straggling_rank_is_named_after_the_results():
    # 4 ranks under the local launcher; rank 2 sleeps 20 ms after each call it issues.
    p = run(STRAGGLER_ARGS + ["-B", "gloo", "-N", "4"],
            env=dict(LOCAL, COMMBENCH_TEST_FAULT="slow:2:20000"), check=0)
    doc = assert_straggler(p, 2)
    assert {r["backend"] for r in doc["results"]} == {"gloo"}


if __name__ == "__main__":
    main([test_every_algorithm_at_2_ranks,
          test_every_algorithm_at_3_ranks,
          test_every_algorithm_at_4_ranks,
          test_gloo_under_mpirun_rendezvous_through_mpi,
          test_mpi_and_gloo_side_by_side,
          test_list_collectives_says_native_or_composed,
          test_gloo_iface_names_the_interface,
          test_straggling_rank_is_named_after_the_results])
