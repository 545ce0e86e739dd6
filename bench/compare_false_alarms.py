#!/usr/bin/env python3
"""False alarms and detection of `commbench compare` over repeated launches, measured here.

  bench/compare_false_alarms.py [--commbench PATH] [--pairs 10] [--repeat 5] [--min-time S]
                                [--no-default-sweep] [--keep DIR] [--from DIR] [--history K]

Runs, alternating in time so that a change of machine load hits both kinds alike,
  B0, N0, B1, N1, ..., B(pairs-1), N(pairs-1), B(pairs)
where every B is `commbench run -B mpi -N 2 -c allreduce,allgather,broadcast,alltoall -b 8
-e 16M --repeat R` and every N the same with OMPI_MCA_coll_tuned_use_dynamic_rules=1
OMPI_MCA_coll_tuned_allreduce_algorithm=1 (Open MPI's basic_linear allreduce: reduce to rank 0,
then broadcast) in the environment.

- false alarms: `compare B(i) B(i+1)` for every i (pairs of identical configurations); every
  regression reported is a false alarm. Target: 0 in all pairs.
- detection: `compare B(i) N(i)`. Per allreduce size, in how many pairs it was reported as a
  regression, next to the change of the medians pooled over all runs (the size of the effect);
  and how many regressions were reported for the collectives the variable does not touch
  (target: 0).
All at compare's default settings.

Machine modes: on a virtual machine every launch may land in a fast or a slow mode of the
machine (the host places the two virtual CPUs close or far; bench/core_pingpong shows it without
MPI). Each launch's mode is read from its own allgather 8 B `min_us` (a collective the variable
does not touch; the fastest iteration, which preemption does not lower): against the lowest such
value of the session, below 2x is F (fast), 2x to 5x S (slow; here the modes differ by about
2.3x), 5x or more ? (disturbed: other processes held the CPUs). Printed: every run's launches as
a string, the false alarms of every pair next to its two strings, and the detection count again
over the pairs whose 10 launches are all F, next to the other pairs. --from DIR reads the runs
kept by an earlier --keep DIR instead of running them. --history K also judges every run against
a directory of the K base runs before it, as the nightly recipe does (`compare baseline/
nightly.json`): B(i) against B(i-K)..B(i-1) for false alarms, N(i) against B(i-K+1)..B(i) for
detection. Finally the wall time of `commbench run --repeat R` with the
default sweep (unless --no-default-sweep). Prints `uptime` first and last: figures taken while
the machine is busy are noisier.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SWEEP = ["-B", "mpi", "-N", "2", "-c", "allreduce,allgather,broadcast,alltoall", "-b", "8",
         "-e", "16M"]
SLOW = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
        "OMPI_MCA_coll_tuned_allreduce_algorithm": "1"}


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def run(cb, out, repeat, min_time, env):
    cmd = [cb, "run", *SWEEP, "--repeat", str(repeat), "--min-time", str(min_time), "--format",
           "csv", "--output", out]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")


def compare(cb, base, new):
    p = subprocess.run([cb, "compare", base, new, "--format", "json"], capture_output=True,
                       text=True, timeout=300)
    if p.returncode not in (0, 5):
        sys.exit(f"compare {base} {new} failed ({p.returncode}):\n{p.stderr}")
    return json.loads(p.stdout)


def regressions(report):
    return [c for c in report["comparisons"] if c["status"] == "regression"]


def allreduce_hits(report):
    """The allreduce sizes a report calls regressions, and how many other records it calls so."""
    rs = regressions(report)
    sizes = [r["bytes"] for r in rs if r["collective"] == "allreduce"]
    return sizes, len(rs) - len(sizes)


def well_detected(effect, hits, runs):
    """Sizes whose pooled change is worse than 20 %, and how many of them were detected in at
    least 90 % of `runs`."""
    affected = [s for s, (_, c) in effect.items() if c > 0.20]
    return len(affected), sum(1 for s in affected if hits.get(s, 0) >= 0.9 * runs)


def pooled_change(files_base, files_new):
    """Per allreduce size: change of the median over every repetition of all runs."""
    def values(files):
        out = {}
        for f in files:
            for r in json.load(open(f))["results"]:
                if r["collective"] != "allreduce":
                    continue
                metric = "busbw_GBps" if r["bytes"] >= 65536 else "time_us"
                out.setdefault(r["bytes"], (metric, []))[1].extend(
                    x[metric] for x in r.get("repeats", [r]))
        return out
    b, n = values(files_base), values(files_new)
    out = {}
    for size, (metric, vb) in b.items():
        mb, mn = statistics.median(vb), statistics.median(n[size][1])
        change = mn / mb - 1
        out[size] = (metric, -change if metric == "busbw_GBps" else change)
    return out


def launch_modes(files):
    """Per file: its launches' modes as a string (see the module's doc), and "range"."""
    mins = {}
    for f in files:
        for r in json.load(open(f))["results"]:
            if r["collective"] == "allgather" and r["bytes"] == 8:
                mins[f] = [x["min_us"] for x in r.get("repeats", [r])]
    lo = min(v for vs in mins.values() for v in vs)
    out = {f: "".join("F" if v < 2 * lo else "S" if v < 5 * lo else "?" for v in vs)
           for f, vs in mins.items()}
    every = sorted(v for vs in mins.values() for v in vs)
    out["range"] = (f"F {every[0]:.3f} - {max(v for v in every if v < 2 * lo):.3f} us"
                    + "".join(f", {m} {min(s):.3f} - {max(s):.3f} us" for m, s in (
                        ("S", [v for v in every if 2 * lo <= v < 5 * lo]),
                        ("?", [v for v in every if v >= 5 * lo])) if s))
    return out


def size_text(b):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return f"{b // scale} {unit}"
    return f"{b} B"


def history_dir(files):
    """A temporary directory of links to `files`: compare pools a directory's runs."""
    d = tempfile.mkdtemp(prefix="cb-history-")
    for f in files:
        os.symlink(os.path.abspath(f), os.path.join(d, os.path.basename(f)))
    return d


def against_history(a, base, new, modes, effect):
    """Each run judged against the K base runs before it, pooled (K x R launches against R)."""
    k = a.history
    print(f"\n## against a history of the {k} base runs before (compare DIR run.json)\n")
    total, checks = 0, 0
    for i in range(k, a.pairs + 1):
        d = history_dir(base[i - k:i])
        rs = regressions(compare(a.commbench, d, base[i]))
        shutil.rmtree(d)
        total += len(rs)
        checks += 1
        hist = " ".join(modes[f] for f in base[i - k:i])
        where = ", ".join(f"{r['collective']} {size_text(r['bytes'])}" for r in rs)
        print(f"- B{i - k}..B{i - 1} ({hist}) -> B{i} ({modes[base[i]]}): {len(rs)} regressions"
              f"{': ' + where if where else ''}")
    print(f"\nfalse alarms against history: {total} regressions in {checks} checks (target 0)\n")
    hits, others, pairs = {}, 0, 0
    for i in range(k - 1, a.pairs):
        d = history_dir(base[i - k + 1:i + 1])
        sizes, other = allreduce_hits(compare(a.commbench, d, new[i]))
        shutil.rmtree(d)
        pairs += 1
        others += other
        for size in sizes:
            hits[size] = hits.get(size, 0) + 1
    print("| allreduce size | pooled change (worse +) | detected against history |")
    print("|---:|---:|---:|")
    for size in sorted(effect):
        print(f"| {size_text(size)} | {effect[size][1] * 100:+.1f}% | {hits.get(size, 0)}/{pairs} |")
    affected, detected = well_detected(effect, hits, pairs)
    print(f"\naffected sizes (pooled change worse than 20 %): {affected}; detected against "
          f"history in >= 90 % of {pairs} runs at {detected} of them")
    print(f"regressions reported for the untouched collectives against history: {others} "
          f"(target 0)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commbench", default=os.path.join("build", "cmd", "commbench"))
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.01)
    ap.add_argument("--no-default-sweep", action="store_true")
    ap.add_argument("--keep", help="write the runs' JSON files here (default: a temporary "
                    "directory, removed at the end)")
    ap.add_argument("--history", type=int, default=0, metavar="K",
                    help="also judge each run against a directory of the K base runs before it "
                    "(the nightly use: `compare baseline/ nightly.json`)")
    ap.add_argument("--from", dest="source", help="analyse the runs kept in this directory by an "
                    "earlier --keep (same --pairs) instead of running them")
    a = ap.parse_args()
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    slow_env = dict(env, **SLOW)
    work = a.source or a.keep or tempfile.mkdtemp(prefix="cb-false-alarms-")
    os.makedirs(work, exist_ok=True)
    print(f"# {uptime()}")
    print(f"# sweep: run {' '.join(SWEEP)} --repeat {a.repeat} --min-time {a.min_time}")
    start = time.monotonic()
    base, new = [], []
    for i in range(a.pairs + 1):
        base.append(os.path.join(work, f"B{i}.json"))
        if not a.source:
            run(a.commbench, base[-1], a.repeat, a.min_time, env)
        if i < a.pairs:
            new.append(os.path.join(work, f"N{i}.json"))
            if not a.source:
                run(a.commbench, new[-1], a.repeat, a.min_time, slow_env)
    runs_s = time.monotonic() - start

    modes = launch_modes(base + new)
    print("\n## machine mode of every launch (allgather 8 B min_us; F fast, S slow, ? disturbed)\n")
    print(f"allgather 8 B min_us per launch: {modes['range']}")
    for i in range(a.pairs + 1):
        print(f"- B{i} {modes[base[i]]}" + (f"   N{i} {modes[new[i]]}" if i < a.pairs else ""))

    def all_fast(*files):
        return set("".join(modes[f] for f in files)) == {"F"}

    print(f"\n## false alarms: {a.pairs} pairs of identical configurations\n")
    total = 0
    for i in range(a.pairs):
        rs = regressions(compare(a.commbench, base[i], base[i + 1]))
        total += len(rs)
        where = ", ".join(f"{r['collective']} {size_text(r['bytes'])}" for r in rs)
        print(f"- B{i} -> B{i + 1} ({modes[base[i]]} -> {modes[base[i + 1]]}): {len(rs)} "
              f"regressions{': ' + where if where else ''}")
    print(f"\nfalse alarms: {total} regressions in {a.pairs} pairs (target 0)")

    print(f"\n## detection: allreduce basic_linear on the new side, {a.pairs} pairs\n")
    hits, hits_one, others = {}, {}, 0
    compared = 0
    one = [i for i in range(a.pairs) if all_fast(base[i], new[i])]
    for i in range(a.pairs):
        rep = compare(a.commbench, base[i], new[i])
        compared = rep["summary"]["compared"]
        sizes, other = allreduce_hits(rep)
        others += other
        for size in sizes:
            hits[size] = hits.get(size, 0) + 1
            if i in one:
                hits_one[size] = hits_one.get(size, 0) + 1
    effect = pooled_change(base, new)
    print(f"all-fast pairs (every launch of both sides F): {len(one)} of {a.pairs}\n")
    print("| allreduce size | metric | pooled change (worse +) | detected in | in all-fast pairs "
          "| in the others |")
    print("|---:|---|---:|---:|---:|---:|")
    for size in sorted(effect):
        metric, change = effect[size]
        h, h1 = hits.get(size, 0), hits_one.get(size, 0)
        print(f"| {size_text(size)} | {metric} | {change * 100:+.1f}% | {h}/{a.pairs} | "
              f"{h1}/{len(one)} | {h - h1}/{a.pairs - len(one)} |")
    affected, detected = well_detected(effect, hits, a.pairs)
    print(f"\naffected sizes (pooled change worse than 20 %): {affected}; detected in >= 90 % "
          f"of pairs at {detected} of them")
    print(f"regressions reported for allgather, broadcast, alltoall (untouched): {others} "
          f"(target 0); {compared} records compared per pair")
    if a.history:
        against_history(a, base, new, modes, effect)
    if not a.source:
        print(f"\nwall time of the {2 * a.pairs + 1} runs: {runs_s:.0f} s "
              f"({runs_s / (2 * a.pairs + 1):.1f} s per --repeat {a.repeat} run)")

    if not a.no_default_sweep and not a.source:
        t = time.monotonic()
        out = os.path.join(work, "default.json")
        p = subprocess.run([a.commbench, "run", "--repeat", str(a.repeat), "--output", out],
                           capture_output=True, text=True, env=env, timeout=1800)
        if p.returncode != 0:
            sys.exit(f"default sweep failed ({p.returncode}):\n{p.stderr}")
        print(f"wall time of `commbench run --repeat {a.repeat}` (default sweep): "
              f"{time.monotonic() - t:.0f} s")
    if not a.keep and not a.source:
        shutil.rmtree(work)
    print(f"# {uptime()}")


if __name__ == "__main__":
    main()
