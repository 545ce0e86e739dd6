#!/usr/bin/env python3
"""False alarms, detections and inconclusives of every verdict, on launches recorded here.

  bench/verdict_rates.py record [--commbench PATH] [--healthy 20] [--hog 8] [--slowed 6]
                                [--factors 1.25,1.5,2,4] [--seed 1] --out FILE.json
  bench/verdict_rates.py analyse [--commbench PATH] [--pairs 20] [--seed 1] FILE.json

record: plain single launches of one configuration (SWEEP: 2 ranks of this build's MPI, four
collectives, 64 KiB - 16 MiB), each a `commbench run` of its own (a fresh launch with its own
control measurement, in plan order, as a nightly job runs it):
  - HEALTHY launches, nothing beside them;
  - HOG launches with a CPU hog (a busy loop) running beside them, started just before;
  - SLOWED launches per factor R: allreduce calls of 4 MiB and more sleep US microseconds on rank 0
    (COMMBENCH_TEST_FAULT=slow:0:US:allreduce:4194304), US = (R - 1) x the healthy launches'
    median allreduce p50 at 8 MiB: R x at 8 MiB, more at 4 MiB, less at 16 MiB (the realized
    factors per size are printed): the three sizes check judges, and neighbours for compare.
Each launch's whole result document goes into FILE.

analyse: on those launches, through the real binary,
  - check --expect auto: each healthy, hog and slowed launch against a reference made of ten
    other healthy launches (`--reference`, a `run --repeat 10` document): PASS / FAIL / not judged
    for allreduce, and a FAIL of any collective of a healthy launch is a false alarm;
  - compare, one launch a side: PAIRS pairs healthy v healthy, healthy v hog, healthy v slowed R;
  - compare, five launches a side (`run --repeat 5` documents): healthy v healthy, healthy v a
    side with two hog launches, healthy v slowed R.
Prints each rate with its counts, `uptime` first and last.
"""
import argparse
import copy
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

from compare_false_alarms import default_commbench, uptime

SWEEP = ["-N", "2", "-c", "allreduce,allgather,broadcast,alltoall", "-b", "64K", "-e", "16M",
         "--progress", "never"]
FIGURES = ["iters", "time_us", "min_us", "p50_us", "p99_us", "max_us", "cv", "algbw_GBps",
           "busbw_GBps", "wrong", "fault_bytes", "p50_low_us", "p50_high_us"]
MiB = 1 << 20


# --- record --------------------------------------------------------------------------------------

def one_launch(cb, backend, hog=False, fault=None):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "launch.json")
        env = dict(os.environ, COMMBENCH_TEST_NO_CONTROL_WARNING="1")
        env.pop("COMMBENCH_CASE_ORDER_SEED", None)
        if fault:
            env["COMMBENCH_TEST_FAULT"] = fault
        hog_proc = subprocess.Popen(["sh", "-c", "while :; do :; done"]) if hog else None
        try:
            if hog_proc:
                time.sleep(0.2)
            t0 = time.time()
            p = subprocess.run([cb, "run", "-B", backend, *SWEEP, "--output", out],
                               capture_output=True, text=True, env=env, timeout=900)
            seconds = time.time() - t0
        finally:
            if hog_proc:
                hog_proc.kill()
                hog_proc.wait()
        if p.returncode != 0:
            sys.exit(f"launch failed ({p.returncode}): {p.stderr.strip()}")
        return json.load(open(out)), seconds


def p50_at(doc, collective, size):
    return next(r["p50_us"] for r in doc["results"]
                if r["collective"] == collective and r["bytes"] == size)


def describe(kind, i, doc, seconds):
    c = doc["meta"]["launches"][0]
    pp = " ".join(f"{s['pingpong_ns']:6.0f}" for s in c["control"])
    return (f"{kind:10s} {i:2d} {seconds:6.1f} s  round trip ns {pp}  load "
            f"{c['load_average']:5.2f}")


def record(args):
    cb = args.commbench
    backend = "mpi"
    print(uptime(), flush=True)
    launches = []
    healthy_docs = []
    rng = random.Random(args.seed)
    # Healthy and hog launches interleaved in a shuffled order, so both see the same machine.
    kinds = ["healthy"] * args.healthy + ["hog"] * args.hog
    rng.shuffle(kinds)
    for i, kind in enumerate(kinds):
        doc, seconds = one_launch(cb, backend, hog=kind == "hog")
        launches.append({"kind": kind, "factor": 1, "seconds": round(seconds, 1), "doc": doc})
        if kind == "healthy":
            healthy_docs.append(doc)
        print(describe(kind, i, doc, seconds), flush=True)
    base_us = statistics.median(p50_at(d, "allreduce", 8 * MiB) for d in healthy_docs)
    for factor in args.factors:
        us = int(round((factor - 1) * base_us))
        for i in range(args.slowed):
            doc, seconds = one_launch(cb, backend, fault=f"slow:0:{us}:allreduce:{4 * MiB}")
            launches.append({"kind": f"slowed {factor:g}x", "factor": factor, "sleep_us": us,
                             "seconds": round(seconds, 1), "doc": doc})
            print(describe(f"x{factor:g}", i, doc, seconds), flush=True)
    with open(args.out, "w") as f:
        json.dump({"schema": "commbench-bench/verdict-launches/v1", "sweep": SWEEP,
                   "launches": launches}, f, separators=(",", ":"))
    print(uptime())
    print(f"{len(launches)} launches -> {args.out} ({os.path.getsize(args.out)} bytes)")


# --- analyse -------------------------------------------------------------------------------------

def repeat_document(docs):
    """The document `run --repeat N` writes for these launches: summary records (medians) with
    each launch's figures in `repeats`, and each launch's control in meta.launches."""
    first = docs[0]
    results = []
    for k, r in enumerate(first["results"]):
        repeats = []
        for i, d in enumerate(docs):
            x = {f: d["results"][k].get(f) for f in FIGURES}
            x["repeat"] = i
            repeats.append(x)
        s = dict(r)
        for f in FIGURES:
            v = [x[f] for x in repeats if x[f] is not None]
            s[f] = statistics.median(v) if v else None
        if s["iters"] is not None:
            s["iters"] = int(s["iters"])
        if s["wrong"] is not None:
            s["wrong"] = int(sum(x["wrong"] or 0 for x in repeats))
        s["repetitions"], s["repeats"] = len(docs), repeats
        results.append(s)
    meta = copy.deepcopy(first["meta"])
    meta["launches"] = [dict(d["meta"]["launches"][0], repeat=i) for i, d in enumerate(docs)]
    meta["repetitions"] = len(docs)
    meta.pop("straggler", None)
    return {"schema": "commbench/result/v1", "meta": meta, "results": results}


class Runner:
    def __init__(self, cb, d):
        self.cb, self.d, self.n = cb, d, 0

    def path(self, doc):
        self.n += 1
        p = os.path.join(self.d, f"f{self.n}.json")
        with open(p, "w") as f:
            json.dump(doc, f)
        return p

    def compare(self, base, new):
        p = subprocess.run([self.cb, "compare", self.path(base), self.path(new), "--format",
                            "json"], capture_output=True, text=True, timeout=120)
        if p.returncode not in (0, 5, 6):
            sys.exit(f"compare failed ({p.returncode}): {p.stderr.strip()}")
        doc = json.loads(p.stdout)
        named = {c["collective"] for c in doc["comparisons"] if c["status"] == "regression"}
        return p.returncode, named, doc["verdict"]["line"]

    def check(self, reference, launch):
        p = subprocess.run([self.cb, "check", "--expect", "auto", "--reference",
                            self.path(reference), self.path(launch), "--format", "json"],
                           capture_output=True, text=True, timeout=120)
        if p.returncode not in (0, 5):
            sys.exit(f"check failed ({p.returncode}): {p.stderr.strip()}")
        items = json.loads(p.stdout)["requirements"]
        out = {}
        for it in items:
            collective = it["name"].split(" ")[0]
            out[collective] = {"pass": "pass", "fail": "fail"}.get(it["status"], "not judged")
        return out


def tally(outcomes):
    n = len(outcomes)
    return ", ".join(f"{k} {outcomes.count(k)}/{n}" for k in sorted(set(outcomes)))


def analyse(args):
    cb = args.commbench
    rec = json.load(open(args.file))
    rng = random.Random(args.seed)
    print(uptime(), flush=True)
    launches = rec["launches"]
    healthy = [l["doc"] for l in launches if l["kind"] == "healthy"]
    hog = [l["doc"] for l in launches if l["kind"] == "hog"]
    factors = sorted({l["factor"] for l in launches if l["factor"] != 1})
    slowed = {f: [l["doc"] for l in launches if l["factor"] == f] for f in factors}
    print(f"{args.file}: {len(healthy)} healthy, {len(hog)} with a hog, "
          + ", ".join(f"{len(slowed[f])} slowed {f:g}x" for f in factors)
          + f"; sweep {' '.join(rec['sweep'])}")
    for f in factors:
        realized = []
        for size in (2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB):
            h = statistics.median(p50_at(d, "allreduce", size) for d in healthy)
            s = statistics.median(p50_at(d, "allreduce", size) for d in slowed[f])
            realized.append(f"{size >> 20} MiB {s / h:.2f}x")
        print(f"  slowed {f:g}x (sleep {next(l['sleep_us'] for l in launches if l['factor'] == f)}"
              f" us): allreduce p50 {', '.join(realized)} of the healthy launches' median")
    with tempfile.TemporaryDirectory() as d:
        run = Runner(cb, d)
        # check --expect auto: each launch against ten other healthy launches.
        print("\ncheck --expect auto (allreduce; a healthy launch's FAIL at any collective is a "
              "false alarm), reference: 10 other healthy launches")
        groups = [("healthy", healthy), ("hog", hog)] + [(f"slowed {f:g}x", slowed[f])
                                                         for f in factors]
        for name, docs in groups:
            outcomes, false_alarms = [], 0
            for doc in docs:
                others = [h for h in healthy if h is not doc]
                ref = repeat_document(rng.sample(others, min(10, len(others))))
                verdicts = run.check(ref, doc)
                outcomes.append(verdicts.get("allreduce", "missing"))
                false_alarms += any(v == "fail" for v in verdicts.values())
            extra = f"; any collective failed in {false_alarms}/{len(docs)}" if name in (
                "healthy", "hog") else ""
            print(f"  {name:12s} {len(docs):2d} launches: allreduce {tally(outcomes)}{extra}",
                  flush=True)
        # compare, one launch a side.
        print(f"\ncompare, 1 v 1 launches ({args.pairs} pairs each; exit 5 naming allreduce is a "
              "detection, any other exit 5 a false alarm)")
        for name, pool in [("healthy", healthy), ("hog", hog)] + [(f"slowed {f:g}x", slowed[f])
                                                                  for f in factors]:
            codes, named_ok = [], 0
            for _ in range(args.pairs):
                base = rng.choice(healthy)
                new = rng.choice([x for x in pool if x is not base])
                code, named, _ = run.compare(base, new)
                codes.append(code)
                named_ok += code == 5 and named == {"allreduce"}
            print(f"  healthy v {name:12s}: exit 0 {codes.count(0)}, 5 {codes.count(5)} "
                  f"({named_ok} naming allreduce alone), 6 {codes.count(6)}", flush=True)
        # compare, five launches a side.
        print(f"\ncompare, 5 v 5 launches ({args.pairs} pairs each)")
        for name in ["healthy", "hog"] + [f"slowed {f:g}x" for f in factors]:
            codes, named_ok = [], 0
            for _ in range(args.pairs):
                base = rng.sample(healthy, 5)
                rest = [h for h in healthy if all(h is not b for b in base)]
                if name == "healthy":
                    new = rng.sample(rest, 5)
                elif name == "hog":
                    new = rng.sample(rest, 3) + rng.sample(hog, 2)
                else:
                    pool = slowed[float(name.split()[1][:-1])]
                    new = rng.sample(pool, min(5, len(pool)))
                code, named, _ = run.compare(repeat_document(base), repeat_document(new))
                codes.append(code)
                named_ok += code == 5 and named == {"allreduce"}
            label = "healthy v " + (name if name != "hog" else "2 of 5 with a hog")
            print(f"  {label:26s}: exit 0 {codes.count(0)}, 5 {codes.count(5)} ({named_ok} naming "
                  f"allreduce alone), 6 {codes.count(6)}", flush=True)
    print(uptime())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("record")
    r.add_argument("--commbench", default=default_commbench())
    r.add_argument("--healthy", type=int, default=20)
    r.add_argument("--hog", type=int, default=8)
    r.add_argument("--slowed", type=int, default=6)
    r.add_argument("--factors", type=lambda s: [float(x) for x in s.split(",")],
                   default=[1.25, 1.5, 2, 4])
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--out", required=True)
    a = sub.add_parser("analyse")
    a.add_argument("--commbench", default=default_commbench())
    a.add_argument("--pairs", type=int, default=20)
    a.add_argument("--seed", type=int, default=1)
    a.add_argument("file")
    args = ap.parse_args()
    record(args) if args.mode == "record" else analyse(args)


if __name__ == "__main__":
    main()
