"""Expected performance through the real binary: every row carries its roof, efficiency and
roof basis, and a roof that is a ceiling (no row of a default run above 1.05 of it; buffers that
fit in the CPU caches get none, saying why); `check --expect auto` judges host memory against
healthy references of the same library, machine and mode (a run with allreduce slowed 2x fails
naming it, or is not judged with the reason, never passes), and each host against its peers."""
import copy
import csv
import json
import os

from cbtest import main, parse_csv, run, tempdir

# Sizes whose buffers exceed twice this machine's CPU caches (34 MiB) for 2 ranks: 64 MiB.
LARGE = ["-B", "mpi", "-N", "2", "-c", "allgather,broadcast", "-b", "32M", "-e", "64M",
         "--progress", "never"]


def cache_env(tmp):
    # A cache of its own, so that the test measures host memory itself rather than reading a
    # figure another run left.
    return {"COMMBENCH_CACHE_DIR": os.path.join(tmp, "cache")}


def test_rows_carry_roof_efficiency_and_basis_in_every_format():
    tmp = tempdir()
    js, csvp, jl = (os.path.join(tmp, n) for n in ("r.json", "r.csv", "r.jsonl"))
    args = ["-B", "mpi", "-N", "2", "-c", "allgather,broadcast", "-b", "64K", "-e", "64M", "-f",
            "32", "--progress", "never"]
    p = run(["run"] + args + ["--output", js, "--output", csvp, "--output", jl],
            env=cache_env(tmp), check=0)
    doc = json.load(open(js))
    facts = doc["meta"]["topology"]["roof_facts"]
    assert list(facts) == doc["meta"]["hosts"], facts
    host = next(iter(facts.values()))
    mem = host["host_memory"]
    assert mem["copy_1thread_GBps"] > 0 and mem["copy_all_GBps"] >= mem["copy_1thread_GBps"], mem
    assert host["caches"]["bytes"] > 0 and "L" in host["caches"]["text"], host
    beyond = 2 * host["caches"]["bytes"]
    rows = doc["results"]
    for r in rows:
        ws = 2 * r["bytes"] * (1.5 if r["collective"] == "allgather" else 1)  # 2 ranks' buffers
        if ws < beyond:
            # In the caches: no roof, no efficiency, and the row says why.
            assert r["roof_GBps"] is None and r["efficiency"] is None, r
            assert r["roof_basis"].startswith("cache: the 2 ranks' buffers ("), r
        else:
            assert r["roof_GBps"] > 0 and r["roof_basis"].startswith("host copy"), r
            assert r["efficiency"] is not None and r["efficiency"] <= 1.05, r
            assert abs(r["efficiency"] - r["busbw_GBps"] / r["roof_GBps"]) < 1e-3 * r["efficiency"]
    assert [r["bytes"] for r in rows if r["efficiency"] is not None] == [64 << 20] * 2, rows
    csv_rows = parse_csv(open(csvp).read())
    assert [c["roof_basis"] for c in csv_rows] == [r["roof_basis"] for r in rows]
    jl_rows = [json.loads(l) for l in open(jl) if '"roof_basis"' in l]
    assert [r["roof_GBps"] for r in jl_rows] == [r["roof_GBps"] for r in rows]
    lines = [l for l in p.stdout.splitlines() if l.startswith("# roof mpi/default ")]
    assert len(lines) == 2, p.stdout
    assert " of the " in lines[0] and "GB/s host memory roof at 64 MiB" in lines[0], lines


def test_no_row_of_a_default_run_is_above_its_roof():
    # Every collective and backend of a default run (Open MPI or MPICH, and Gloo) at the sizes
    # where a row can carry an efficiency (below 16 MiB two ranks' buffers fit within twice this
    # machine's caches, which give none), at a shorter time per case: no efficiency above 1.05
    # (the ceiling's tolerance), and one on some rows.
    tmp = tempdir()
    out = os.path.join(tmp, "default.json")
    run(["run", "-b", "16M", "--min-time", "0.01", "--progress", "never", "--output", out],
        timeout=600, env=cache_env(tmp), check=0)
    rows = json.load(open(out))["results"]
    assert {r["backend"] for r in rows} >= {"mpi", "gloo"}, {r["backend"] for r in rows}
    over = [(r["backend"], r["collective"], r["bytes"], r["efficiency"]) for r in rows
            if r["efficiency"] is not None and r["efficiency"] > 1.05]
    assert not over, over
    assert any(r["efficiency"] is not None for r in rows), rows


# --- check --expect auto on host memory -----------------------------------------------------

ALLREDUCE = ["-B", "mpi", "-N", "2", "-c", "allreduce", "-b", "1M", "-e", "4M", "--progress",
             "never"]


def first_line(p):
    return p.stderr.splitlines()[0] if p.stderr else ""


def item_line(p, collective):
    """The check table's row of `collective`'s requirement."""
    return next((l.strip() for l in p.stdout.splitlines()
                 if l.split()[:1] in (["PASS"], ["FAIL"], ["WARN"]) and f"{collective} (" in l), "")


def test_expect_auto_never_passes_allreduce_slowed_twice():
    """A healthy reference measured here (`run --repeat 5`), a healthy launch and one whose
    allreduce at 1 MiB and more sleeps about its own time after each call: the healthy launch
    passes or is not judged, the slowed one fails naming allreduce or is not judged, with the
    reason on the line; neither is ever the other's verdict."""
    tmp = tempdir()
    env = cache_env(tmp)
    ref, good, slow = (os.path.join(tmp, n) for n in ("ref.json", "good.json", "slow.json"))
    run(["run", *ALLREDUCE, "--repeat", "5", "--output", ref], env=env, check=0, timeout=600)
    run(["run", *ALLREDUCE, "--output", good], env=env, check=0)
    p = run(["check", "--expect", "auto", "--reference", ref, good])
    line = item_line(p, "allreduce")
    assert line.startswith("PASS") or (line.startswith("WARN") and "not judged: " in line), (
        p.returncode, p.stdout, p.stderr)
    assert p.returncode == 0, (p.stdout, p.stderr)
    # Rank 0 sleeps its median time at 2 MiB after each call of 1 MiB or more: 1.5-3x slower.
    p50 = next(r["p50_us"] for r in json.load(open(good))["results"] if r["bytes"] == 2 << 20)
    run(["run", *ALLREDUCE, "--output", slow], check=0,
        env=dict(env, COMMBENCH_TEST_FAULT=f"slow:0:{int(p50)}:allreduce:1048576"))
    p = run(["check", "--expect", "auto", "--reference", ref, slow])
    line = item_line(p, "allreduce")
    if p.returncode == 5:
        first = first_line(p)
        assert first.startswith("commbench: 1 requirement failed (first: allreduce (mpi/default) "
                                "against its healthy reference: allreduce: busbw "), first
        assert "of the healthy reference's" in first and "beyond their noise" in first, first
        assert line.startswith("FAIL"), p.stdout
    else:
        assert p.returncode == 0 and line.startswith("WARN") and "not judged: " in line, (
            p.returncode, p.stdout, p.stderr)


def reference_of(doc, factors=(0.9, 0.95, 1, 1, 1.05, 1.1)):
    """A `run --repeat` document of one launch repeated with its busbw times each factor, on a
    quiet host: a healthy reference whose launches lie 1.22x apart."""
    ref = copy.deepcopy(doc)
    launch = doc["meta"]["launches"][0]
    ref["meta"]["launches"] = [dict(launch, repeat=i, load_average=0.5, steal_fraction=0)
                               for i in range(len(factors))]
    ref["meta"]["repetitions"] = len(factors)
    for r in ref["results"]:
        repeats = []
        for i, f in enumerate(factors):
            x = {k: r[k] for k in ("iters", "time_us", "min_us", "p50_us", "p99_us", "max_us",
                                   "cv", "algbw_GBps", "busbw_GBps", "wrong")}
            x.update(repeat=i, busbw_GBps=r["busbw_GBps"] * f, algbw_GBps=r["algbw_GBps"] * f)
            repeats.append(x)
        r["repetitions"], r["repeats"] = len(factors), repeats
    return ref


def quiet(doc):
    d = copy.deepcopy(doc)
    for l in d["meta"]["launches"]:
        l.update(load_average=0.5, steal_fraction=0)
        for s in l["control"][1:]:  # steady: every sample as the first
            s.update(pingpong_ns=l["control"][0]["pingpong_ns"],
                     compute_us=l["control"][0]["compute_us"])
    return d


def elsewhere(doc):
    """The same document from a machine the built-in references do not know (its CPU model), so
    that only the references a test passes, or none, judge it."""
    d = copy.deepcopy(doc)
    for facts in d["meta"]["topology"]["roof_facts"].values():
        facts["cpu_model"] = "a CPU without a built-in reference"
    return d


def slowed(doc, factor, collective="allreduce", host=None):
    d = copy.deepcopy(doc)
    for r in d["results"]:
        if r["collective"] == collective and r["bytes"] >= 1 << 20:
            for k in ("busbw_GBps", "algbw_GBps"):
                r[k] /= factor
            for k in ("time_us", "min_us", "p50_us", "p99_us", "max_us"):
                r[k] *= factor
    if host:
        d["meta"]["hosts"] = [host]
        facts = d["meta"]["topology"]["roof_facts"]
        d["meta"]["topology"]["roof_facts"] = {host: next(iter(facts.values()))}
    return d


def write(tmp, name, doc):
    path = os.path.join(tmp, name)
    json.dump(doc, open(path, "w"))
    return path


def test_expect_auto_against_a_reference_passes_healthy_and_fails_half_speed():
    """A real launch's file, judged against a reference made of it (six launches at 0.9-1.1 of its
    figures, the same control, a quiet host): the launch itself passes, its allreduce at half the
    speed fails naming it, with measured and expected on the first line."""
    tmp = tempdir()
    src = os.path.join(tmp, "src.json")
    run(["run", *ALLREDUCE, "--output", src], env=cache_env(tmp), check=0)
    doc = quiet(json.load(open(src)))
    ref = write(tmp, "ref.json", reference_of(doc))
    p = run(["check", "--expect", "auto", "--reference", ref, write(tmp, "same.json", doc)],
            check=0)
    assert item_line(p, "allreduce").startswith("PASS"), p.stdout
    assert "1.00 of the healthy reference's" in p.stdout, p.stdout
    p = run(["check", "--expect", "auto", "--reference", ref,
             write(tmp, "half.json", slowed(doc, 2))], check=5)
    first = first_line(p)
    assert first.startswith("commbench: 1 requirement failed (first: allreduce (mpi/default) "
                            "against its healthy reference: allreduce: busbw "), first
    assert ", 0.50 of the healthy reference's " in first, first
    assert "expected >= 0.70 of the reference: its healthy launches reached 0.90-1.10 of it" in first
    assert "0.50 is beyond their noise" in first, first
    # The same launch on a busy host is not judged, and says so.
    busy = copy.deepcopy(doc)
    busy["meta"]["launches"][0]["load_average"] = 9
    p = run(["check", "--expect", "auto", "--reference", ref, write(tmp, "busy.json", busy)],
            check=0)
    assert "not judged: the host was busy (load average 9.0" in item_line(p, "allreduce"), p.stdout
    # Without a reference of this machine, never a pass.
    p = run(["check", "--expect", "auto", write(tmp, "alone.json", slowed(elsewhere(doc), 2))],
            check=0)
    assert "not judged: no healthy reference for Open MPI" in p.stdout or \
        "not judged: no healthy reference for MPICH" in p.stdout or "not judged: " in \
        item_line(p, "allreduce"), p.stdout
    assert not item_line(p, "allreduce").startswith("PASS"), p.stdout


def test_expect_auto_fails_a_host_at_half_its_peers():
    """Three hosts' files of the same case, one at half the others' busbw: it fails, named, with
    its figure against its peers'; all three alike pass."""
    tmp = tempdir()
    src = os.path.join(tmp, "src.json")
    run(["run", *ALLREDUCE, "--output", src], env=cache_env(tmp), check=0)
    doc = elsewhere(json.load(open(src)))  # the fleet alone judges: no built-in reference
    files = [write(tmp, f"{h}.json", slowed(doc, f, host=h))
             for h, f in (("h1", 1), ("h2", 1), ("h3", 2))]
    p = run(["check", "--expect", "auto", *files], check=5)
    first = first_line(p)
    assert "allreduce (mpi/default) across 3 hosts: h3: busbw " in first, first
    assert ", 0.50 of its 2 peers' median" in first and "expected >= 0.75 of its peers'" in first
    files = [write(tmp, f"{h}.json", slowed(doc, 1, host=h)) for h in ("h1", "h2", "h3")]
    p = run(["check", "--expect", "auto", *files])
    assert "PASS" in next(l for l in p.stdout.splitlines() if "across 3 hosts" in l), p.stdout
    assert p.returncode == 0, (p.stdout, p.stderr)
    p = run(["check", "--expect", "auto", "--fleet-fraction", "0.4",
             *[write(tmp, f"{h}.json", slowed(doc, f, host=h))
               for h, f in (("h1", 1), ("h2", 1), ("h3", 2))]])
    assert p.returncode == 0, (p.stdout, p.stderr)


def test_reduce_scatter_with_an_allocator_that_keeps_memory_is_judged_and_a_slowed_one_fails():
    # Open MPI's reduce_scatter page-faults its temporary buffers in on every call unless glibc
    # keeps freed memory (docs/check.md): with it, the collective is judged against its roof (here
    # the threshold given), not reported as bound by its allocator.
    tmp = tempdir()
    env = dict(cache_env(tmp), MALLOC_MMAP_THRESHOLD_="1073741824",
               MALLOC_TRIM_THRESHOLD_="1073741824")
    args = ["-B", "mpi", "-N", "2", "-c", "reduce_scatter", "-b", "32M", "-e", "64M",
            "--progress", "never", "--format", "csv"]
    good = os.path.join(tmp, "good.json")
    run(["run"] + args + ["--output", good], env=env, check=0)
    assert json.load(open(good))["meta"]["environment"]["MALLOC_MMAP_THRESHOLD_"] == "1073741824"
    p = run(["check", "--expect", "auto", "--min-efficiency", "0.01", good])
    line = item_line(p, "reduce_scatter")
    assert line.startswith(("PASS", "FAIL")) and "host memory roof at 32 MiB-64 MiB" in line, (
        p.stdout)
    # Rank 1 sleeps 1 s after each call: algbw at most 64 MiB a second, busbw half of it (2
    # ranks), 0.034 GB/s at 64 MiB and less at 32 MiB: below a threshold of 0.096 GB/s over the
    # roof, whatever the roof.
    slow = os.path.join(tmp, "slow.json")
    run(["run"] + args + ["--output", slow, "-n", "2", "-w", "1"],
        env=dict(env, COMMBENCH_TEST_FAULT="slow:1:1000000"), check=0)
    roof = json.load(open(slow))["results"][-1]["roof_GBps"]
    p = run(["check", "--expect", "auto", "--min-efficiency", str(0.064 * 1.5 / roof), slow])
    assert p.returncode == 5, (p.returncode, p.stdout, p.stderr)
    assert "reduce_scatter (mpi/default) efficiency" in p.stderr.splitlines()[0], p.stderr


def test_a_collective_that_faults_its_buffers_in_on_each_call_is_not_judged_and_says_why():
    # Rank 1 maps, writes and unmaps 16 MiB after each call (as an allocator that maps a library's
    # buffers afresh): at least 1/4 of every call's bytes at 32-64 MiB, above the 1/8 from which
    # the allocator, not the memory, bounds the collective.
    tmp = tempdir()
    faulting = os.path.join(tmp, "faulting.json")
    run(["run"] + LARGE + ["--output", faulting, "--format", "csv", "-n", "2", "-w", "1"],
        env=dict(cache_env(tmp), COMMBENCH_TEST_FAULT="faults:1:16777216"), check=0)
    rows = json.load(open(faulting))["results"]
    assert rows and all(r["fault_bytes"] >= 16 << 20 for r in rows), rows
    p = run(["check", "--expect", "auto", faulting], check=0)
    for collective in ("allgather", "broadcast"):
        line = next((l for l in (p.stdout + p.stderr).splitlines()
                     if f"{collective}: not judged: " in l), None)
        assert line and " of the " in line and "page-faulted 16 MiB per call at " in line, (
            p.stdout, p.stderr)
    assert p.returncode != 5, (p.returncode, p.stdout, p.stderr)


def test_expect_auto_does_not_judge_an_unknown_roof():
    tmp = tempdir()
    path = os.path.join(tmp, "r.csv")
    src = os.path.join(tmp, "src.csv")
    run(["run", "-B", "mpi", "-N", "2", "-c", "allgather", "-b", "1M", "-e", "1M",
         "--output", src, "--format", "csv"], env=cache_env(tmp), check=0)
    with open(src, newline="") as f:
        rows = list(csv.reader(f))
    i, j = rows[0].index("roof_GBps"), rows[0].index("roof_basis")
    for cells in rows[1:]:
        cells[i], cells[i + 1] = "", ""
        cells[j] = "unknown: no network port with a known rate"
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)
    p = run(["check", "--expect", "auto", "--min-efficiency", "0.5", path])
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert "not judged: unknown: no network port" in p.stdout, p.stdout
    assert "1 warning" in p.stdout, p.stdout


def test_bad_roof_and_expect_flags_are_usage_errors():
    p = run(["run", "-B", "mpi", "--roof-link-gbps", "fast"], check=2)
    assert p.stderr.startswith("commbench:") and "--roof-link-gbps" in p.stderr, p.stderr
    p = run(["run", "-B", "mpi", "--roof-host-memory", "0"], check=2)
    assert "--roof-host-memory" in p.stderr.splitlines()[0], p.stderr
    p = run(["check", "--expect", "maybe", "x.json"], check=2)
    assert "--expect" in p.stderr.splitlines()[0], p.stderr
    p = run(["check", "--expect", "auto", "--min-efficiency", "-1", "x.json"], check=2)
    assert "--min-efficiency" in p.stderr.splitlines()[0], p.stderr
    p = run(["check", "--expect", "auto", "--fleet-fraction", "1.5", "x.json"], check=2)
    assert "--fleet-fraction" in p.stderr.splitlines()[0], p.stderr
    p = run(["check", "--expect", "auto", "--reference", "/nonexistent.json", "x.json"], check=2)
    assert "/nonexistent.json" in p.stderr.splitlines()[0], p.stderr


if __name__ == "__main__":
    main([test_rows_carry_roof_efficiency_and_basis_in_every_format,
          test_no_row_of_a_default_run_is_above_its_roof,
          test_expect_auto_never_passes_allreduce_slowed_twice,
          test_expect_auto_against_a_reference_passes_healthy_and_fails_half_speed,
          test_expect_auto_fails_a_host_at_half_its_peers,
          test_reduce_scatter_with_an_allocator_that_keeps_memory_is_judged_and_a_slowed_one_fails,
          test_a_collective_that_faults_its_buffers_in_on_each_call_is_not_judged_and_says_why,
          test_expect_auto_does_not_judge_an_unknown_roof,
          test_bad_roof_and_expect_flags_are_usage_errors])
