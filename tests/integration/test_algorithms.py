"""MPI algorithms forced inside one process (`run -A`), with evidence that does not depend on
timing: a probe built against the same selection code reduces with an order-sensitive user
operation, so each reduction order gives a different result. For every algorithm, forcing it
in-process must give the same result as forcing it through the MPI's own launch-time variable,
and the algorithms must not all agree (or the test would prove nothing). MPICH, at 2 ranks where
most orders coincide, must also refuse an algorithm whose restriction the call breaks (which it
can only do if the forced value reached it)."""
import os
import re
import subprocess

from cbtest import Skip, assert_validated, is_openmpi, main, mpi_prefix, parse_csv, run

PROBE = os.environ.get("CB_ALGORITHM_PROBE", "mpi_algorithm_probe")
NP = 4 if is_openmpi() else 2  # MPICH is unusable oversubscribed
# Large enough for every algorithm's count restriction, segmented_ring's 4 x 1 MiB included.
COUNT = {"allreduce": 524300, "reduce": 524300, "reduce_scatter": 131075}
OMPI_VAR = {"allreduce": "allreduce", "reduce": "reduce", "reduce_scatter": "reduce_scatter_block"}


def probe(collective, *extra, env=None):
    full = dict(os.environ)
    full.update(env or {})
    cmd = mpi_prefix(NP) + [PROBE, collective, str(COUNT[collective])] + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True, env=full, timeout=120)
    assert p.returncode == 0, (cmd, p.stdout, p.stderr)
    return p.stdout.splitlines()


def selected(collective):
    """{algorithm: hash} forced through commbench's selection code, skips left out."""
    out = {}
    for line in probe(collective):
        name, rest = line.split(" ", 1)
        assert name != "unavailable", line
        if not rest.startswith("skipped"):
            out[name] = rest
    return out


def launched(collective, algorithm, index):
    """The hash with `algorithm` forced through the MPI's own launch-time variable."""
    if is_openmpi():
        var = OMPI_VAR[collective]
        env = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
               f"OMPI_MCA_coll_tuned_{var}_algorithm": str(index)}
        if algorithm == "segmented_ring":
            env[f"OMPI_MCA_coll_tuned_{var}_algorithm_segmentsize"] = str(1 << 20)
    else:
        var = OMPI_VAR[collective].upper()
        env = {f"MPIR_CVAR_{var}_INTRA_ALGORITHM": algorithm,
               f"MPIR_CVAR_{var}_DEVICE_COLLECTIVE": "0",
               "MPIR_CVAR_COLLECTIVE_FALLBACK": "error"}
    (line,) = probe(collective, "--as-launched", env=env)
    return line.split()[1]


def names_in_order(collective):
    p = run(["list", "algorithms", "-B", "mpi", "-c", collective], np=1, check=0)
    line = next(l for l in p.stdout.splitlines() if l.startswith("mpi"))
    return [n.strip() for n in line.split(None, 2)[2].split(",")][1:]  # without "default"


def same_as_launch_variable(collective, min_distinct):
    got = selected(collective)
    order = names_in_order(collective)
    assert got and "default" in got, got
    checked = 0
    for index, name in enumerate(order, start=1):
        if name in got:
            assert launched(collective, name, index) == got[name], (collective, name)
            checked += 1
    assert checked >= 2, got
    distinct = set(got.values())
    assert len(distinct) >= min_distinct, f"{collective}: algorithms do not differ: {got}"


def test_allreduce_switch_takes_effect():
    if not is_openmpi():
        raise Skip("at 2 MPICH ranks every allreduce order coincides; see the refusal test")
    same_as_launch_variable("allreduce", 4)


def test_reduce_switch_takes_effect():
    if not is_openmpi():
        raise Skip("at 2 MPICH ranks every reduce order coincides; see the refusal test")
    same_as_launch_variable("reduce", 5)


def test_reduce_scatter_switch_takes_effect():
    same_as_launch_variable("reduce_scatter", 3 if is_openmpi() else 2)


def test_mpich_refuses_a_forced_algorithm_that_does_not_fit():
    if is_openmpi():
        raise Skip("Open MPI falls back silently instead; its switches are shown above")
    for collective, algorithm in [("allreduce", "reduce_scatter_allgather"),
                                  ("reduce", "reduce_scatter_gather")]:
        (line,) = probe(collective, "--refuse", algorithm)
        assert line.startswith("refused") and "not usable" in line, (collective, line)
        (line,) = probe(collective, "--refuse", "nb")
        assert line.startswith("accepted"), (collective, line)


def test_run_all_algorithms_in_one_process():
    p = run(["run", "-B", "mpi", "-A", "all", "-c", "allreduce,reduce_scatter,alltoall,barrier",
             "-b", "8", "-e", "64K", "-f", "64", "--format", "csv", "--min-time", "0.002"],
            np=NP, check=0)
    rows = parse_csv(p.stdout)
    assert_validated(rows)
    for collective in ("allreduce", "reduce_scatter", "alltoall", "barrier"):
        ran = {r["algorithm"] for r in rows if r["collective"] == collective}
        listed = set(names_in_order(collective)) | {"default"}
        assert ran <= listed, (collective, ran - listed)
        notes = re.findall(rf"mpi: {collective} algorithm (\S+) skipped", p.stderr)
        assert ran | set(notes) == listed, (collective, listed - ran - set(notes))
    if is_openmpi():
        # count 2 < 4 ranks at 8 B: Open MPI would run recursive doubling instead of ring.
        assert "allreduce algorithm ring skipped where count < nranks" in p.stderr, p.stderr
        small_ring = [r for r in rows if r["algorithm"] == "ring" and r["collective"] == "allreduce"
                      and r["bytes"] == "8"]
        assert not small_ring, small_ring
        assert "barrier algorithm two_proc skipped where nranks != 2" in p.stderr, p.stderr
    else:
        assert "alltoall algorithm pairwise_sendrecv_replace skipped where out of place" in p.stderr
        assert "allreduce algorithm smp skipped where all ranks are on one node" in p.stderr


def test_named_algorithm_is_what_runs():
    name = "ring" if is_openmpi() else "recursive_doubling"
    p = run(["run", "-B", "mpi", "-A", name, "-c", "allreduce", "-b", "64K", "-e", "64K",
             "--format", "csv", "--min-time", "0.002"], np=NP, check=0)
    rows = parse_csv(p.stdout)
    assert_validated(rows)
    assert {r["algorithm"] for r in rows} == {name}


def test_open_mpi_without_dynamic_rules_warns_once_and_runs_default():
    if not is_openmpi():
        raise Skip("Open MPI only")
    p = run(["run", "-B", "mpi", "-A", "all", "-c", "allreduce,bcast", "-e", "1K", "-f", "32",
             "--format", "csv", "--min-time", "0.002"], np=2,
            env={"OMPI_MCA_coll_tuned_use_dynamic_rules": "0"}, check=0)
    # The MPI backend's own warnings (a launch may also warn that the machine changed under it).
    warnings = [l for l in p.stderr.splitlines() if "warning: mpi:" in l]
    assert len(warnings) == 1 and "OMPI_MCA_coll_tuned_use_dynamic_rules=1" in warnings[0], p.stderr
    assert "running default only" in warnings[0]
    assert {r["algorithm"] for r in parse_csv(p.stdout)} == {"default"}


def test_list_algorithms_names_them():
    p = run(["list", "algorithms", "-B", "mpi", "-c", "allreduce"], np=1, check=0)
    if is_openmpi():
        assert "recursive_doubling, ring, segmented_ring, rabenseifner" in p.stdout, p.stdout
    else:
        assert "default, nb, smp, recursive_doubling, reduce_scatter_allgather" in p.stdout, p.stdout


if __name__ == "__main__":
    main([test_allreduce_switch_takes_effect,
          test_reduce_switch_takes_effect,
          test_reduce_scatter_switch_takes_effect,
          test_mpich_refuses_a_forced_algorithm_that_does_not_fit,
          test_run_all_algorithms_in_one_process,
          test_named_algorithm_is_what_runs,
          test_open_mpi_without_dynamic_rules_warns_once_and_runs_default,
          test_list_algorithms_names_them])
