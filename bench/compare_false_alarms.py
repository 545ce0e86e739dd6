#!/usr/bin/env python3
"""False alarms and detection of `commbench compare`, on launches recorded on this machine.

  bench/compare_false_alarms.py record [--commbench PATH] [--launches 40] [--hog-share 0.3]
                                       [--seed 1] --out FILE.json
  bench/compare_false_alarms.py analyse [--commbench PATH] [--pairs 200] [--seed 1] FILE.json

record: runs LAUNCHES identical launches of one small configuration (SWEEP below: 2 ranks of
Open MPI, four collectives, 16 KiB - 8 MiB), one after another, each a plain `commbench run` with
its own case order seed (as `run --repeat` gives each launch). Before each launch a coin with
probability HOG_SHARE decides whether a CPU hog (a busy loop process) runs beside it: that is the
machine's slow mode, reproduced on demand; the machine's own modes come on top. Each launch's
control measurement (meta.launches), whether the hog ran and every record's per-launch figures
(p50_us, time_us) go into FILE, compact enough to keep as test data.

analyse: draws PAIRS pairs of 5 + 5 distinct launches from FILE, writes each side as the result
file `commbench run --repeat 5` would (summary records with their repeats, meta.launches with
each launch's control) and runs the real `commbench compare` on it:

- identical: the pairs as drawn. Target: 0 regressions (exit 5), inconclusive (exit 6) <= 10 %.
- x3 at allreduce 1-8 MiB: the new side's p50 and time of allreduce 1, 2, 4 and 8 MiB times 3.
  Target: exit 5 naming those records and nothing else in >= 99 % of pairs.
- +20 % everywhere, steady machine: pairs drawn from the launches without the hog whose
  control sits in the recording's most common mode; every figure of the new side x 1.2.
  Target: exit 5 in >= 90 %.
- +10 % everywhere, steady machine: the same with x 1.1 and 3, 5, 7, 10 launches a side:
  how many launches a side find it in 90 % of pairs.

Prints `uptime` first and last.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

SWEEP = ["-B", "mpi", "-N", "2", "-c", "allreduce,allgather,broadcast,alltoall", "-b", "16K",
         "-e", "8M", "--min-time", "0.005"]
KEY_FIELDS = ["collective", "backend", "algorithm", "dtype", "op", "placement", "root", "nranks",
              "bytes"]
MiB = 1 << 20
INJECTED = [("allreduce", b) for b in (MiB, 2 * MiB, 4 * MiB, 8 * MiB)]


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def default_commbench():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "build", "cmd", "commbench")


# --- record --------------------------------------------------------------------------------------

def one_launch(cb, seed, hog):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "launch.json")
        env = dict(os.environ, COMMBENCH_CASE_ORDER_SEED=str(seed))
        hog_proc = None
        if hog:
            hog_proc = subprocess.Popen(["sh", "-c", "while :; do :; done"])
            time.sleep(0.2)
        try:
            t0 = time.time()
            p = subprocess.run([cb, "run", *SWEEP, "--format", "csv", "--output", out],
                               capture_output=True, text=True, env=env, timeout=600)
            seconds = time.time() - t0
        finally:
            if hog_proc:
                hog_proc.kill()
                hog_proc.wait()
        if p.returncode != 0:
            sys.exit(f"launch failed ({p.returncode}): {p.stderr.strip()}")
        doc = json.load(open(out))
    return doc, seconds, [l for l in p.stderr.splitlines() if "warning" in l]


def record(args):
    cb = args.commbench
    rng = random.Random(args.seed)
    print(uptime(), flush=True)
    keys, launches = None, []
    for i in range(args.launches):
        hog = rng.random() < args.hog_share
        seed = rng.randrange(1, 2**62)
        doc, seconds, warnings = one_launch(cb, seed, hog)
        recs = doc["results"]
        these = [[r[f] for f in KEY_FIELDS] for r in recs]
        if keys is None:
            keys = these
        by_key = {json.dumps([r[f] for f in KEY_FIELDS]): r for r in recs}
        control = doc["meta"]["launches"][0]
        launches.append({
            "hog": hog,
            "seconds": round(seconds, 2),
            "control": control,
            "p50_us": [by_key[json.dumps(k)]["p50_us"] for k in keys],
            "time_us": [by_key[json.dumps(k)]["time_us"] for k in keys],
        })
        pp = [s["pingpong_ns"] for s in control["control"]]
        cu = [s["compute_us"] for s in control["control"]]
        print(f"launch {i:2d} hog={int(hog)} {seconds:5.1f} s  round trip ns "
              f"{' '.join(f'{x:6.0f}' for x in pp)}  compute us {' '.join(f'{x:5.0f}' for x in cu)}"
              f"  steal {control['steal_fraction']:.3f} load {control['load_average']:.2f}"
              + ("  " + warnings[0] if warnings else ""), flush=True)
    meta = {k: v for k, v in doc["meta"].items() if k not in ("launches", "start_time")}
    out = {"schema": "commbench-bench/launches/v1", "sweep": SWEEP, "key_fields": KEY_FIELDS,
           "meta": meta, "keys": keys, "launches": launches}
    with open(args.out, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print(uptime())
    print(f"{len(launches)} launches ({sum(l['hog'] for l in launches)} with the hog) -> "
          f"{args.out} ({os.path.getsize(args.out)} bytes)")


# --- analyse -------------------------------------------------------------------------------------

def side_document(rec, chosen, factor):
    """A `run --repeat N` result document of the chosen launches; factor(key) scales figures."""
    results = []
    for k, key in enumerate(rec["keys"]):
        base = dict(zip(rec["key_fields"], key))
        base.update(dtype=base["dtype"], env="", count=0, nnodes=1, iters=10, library="")
        f = factor(key)
        repeats = []
        for r, li in enumerate(chosen):
            l = rec["launches"][li]
            p50, t = l["p50_us"][k] * f, l["time_us"][k] * f
            repeats.append(dict(base, repeat=r, time_us=t, min_us=p50, p50_us=p50, p99_us=p50,
                                max_us=t, cv=0.0, algbw_GBps=None, busbw_GBps=None, wrong=0))
        summary = dict(repeats[len(repeats) // 2])
        summary.pop("repeat")
        summary["p50_us"] = statistics.median(x["p50_us"] for x in repeats)
        summary["time_us"] = statistics.median(x["time_us"] for x in repeats)
        summary["repetitions"] = len(repeats)
        summary["repeats"] = repeats
        results.append(summary)
    launches = []
    for r, li in enumerate(chosen):
        c = dict(rec["launches"][li]["control"])
        c["repeat"] = r
        launches.append(c)
    meta = dict(rec["meta"], repetitions=len(chosen), launches=launches,
                start_time="2026-01-01T00:00:00Z")
    return {"schema": "commbench/result/v1", "meta": meta, "results": results}


def compare(cb, d, base, new):
    pb, pn = os.path.join(d, "base.json"), os.path.join(d, "new.json")
    json.dump(base, open(pb, "w"))
    json.dump(new, open(pn, "w"))
    p = subprocess.run([cb, "compare", pb, pn, "--format", "json"], capture_output=True,
                       text=True, timeout=60)
    if p.returncode not in (0, 5, 6):
        sys.exit(f"compare failed ({p.returncode}): {p.stderr.strip()}")
    doc = json.loads(p.stdout)
    named = {(c["collective"], c["bytes"]) for c in doc["comparisons"]
             if c["status"] == "regression"}
    return p.returncode, named, doc["verdict"]["line"]


def no_change(key):
    return 1.0


def steady_launches(rec):
    """Launches without the hog whose control lies in the recording's most common mode."""
    quiet = [i for i, l in enumerate(rec["launches"]) if not l["hog"]]
    pp = {i: statistics.median(s["pingpong_ns"] for s in rec["launches"][i]["control"]["control"])
          for i in quiet}
    best = []
    for i in quiet:  # the 1.5x band holding most launches
        band = [j for j in quiet if pp[i] <= pp[j] <= 1.5 * pp[i]]
        if len(band) > len(best):
            best = band
    return best


def rate(n, total):
    return f"{n}/{total} ({100.0 * n / total:.1f} %)"


def analyse(args):
    cb = args.commbench
    rec = json.load(open(args.file))
    rng = random.Random(args.seed)
    n = len(rec["launches"])
    print(uptime(), flush=True)
    hogs = sum(l["hog"] for l in rec["launches"])
    print(f"{args.file}: {n} launches ({hogs} with the hog), {len(rec['keys'])} records each; "
          f"sweep {' '.join(rec['sweep'])}")
    pps = [statistics.median(s["pingpong_ns"] for s in l["control"]["control"])
           for l in rec["launches"]]
    print("control round trip per launch (ns, * = hog): " +
          " ".join(f"{p:.0f}{'*' if l['hog'] else ''}" for p, l in zip(pps, rec["launches"])))
    draws = [rng.sample(range(n), 10) for _ in range(args.pairs)]
    steady = steady_launches(rec)
    print(f"steady launches (no hog, control in the most common 1.5x band): {len(steady)}")
    t0 = time.time()
    with tempfile.TemporaryDirectory() as d:
        # identical
        codes, examples = {0: 0, 5: 0, 6: 0}, {}
        for draw in draws:
            code, named, line = compare(cb, d, side_document(rec, draw[:5], no_change),
                                        side_document(rec, draw[5:], no_change))
            codes[code] += 1
            examples.setdefault(code, line)
        print(f"\nidentical 5 v 5 pairs: {args.pairs}: regressions (exit 5) "
              f"{rate(codes[5], args.pairs)}, inconclusive (exit 6) {rate(codes[6], args.pairs)}, "
              f"ok {rate(codes[0], args.pairs)}")
        for code, line in sorted(examples.items()):
            print(f"  e.g. exit {code}: {line}")

        # x3 at allreduce 1-8 MiB
        injected = {(c, b) for c, b in INJECTED}

        def times3(key):
            k = dict(zip(rec["key_fields"], key))
            return 3.0 if (k["collective"], k["bytes"]) in injected else 1.0
        found_all = found_any = other = exit5 = 0
        example = None
        for draw in draws:
            code, named, line = compare(cb, d, side_document(rec, draw[:5], no_change),
                                        side_document(rec, draw[5:], times3))
            exit5 += code == 5
            found_all += injected <= named
            found_any += bool(injected & named)
            other += bool(named - injected)
            example = example or line
        print(f"\nx3 at allreduce 1-8 MiB, {args.pairs} pairs: exit 5 {rate(exit5, args.pairs)}; "
              f"all four named {rate(found_all, args.pairs)}, at least one "
              f"{rate(found_any, args.pairs)}; another record named {rate(other, args.pairs)}")
        print(f"  e.g. {example}")

        # +20 % and +10 % on every record, steady machine
        for factor, sizes in ((1.2, (5,)), (1.1, (3, 5, 7, 10))):
            for per_side in sizes:
                if 2 * per_side > len(steady):
                    print(f"\nx{factor} everywhere, {per_side} v {per_side}: only {len(steady)} "
                          "steady launches recorded")
                    continue
                hits = inconclusive = 0
                example = None
                for _ in range(args.pairs):
                    draw = rng.sample(steady, 2 * per_side)
                    code, named, line = compare(
                        cb, d, side_document(rec, draw[:per_side], no_change),
                        side_document(rec, draw[per_side:], lambda k, f=factor: f))
                    hits += code == 5
                    inconclusive += code == 6
                    example = example or line
                print(f"\nx{factor} on every record, steady machine, {per_side} v {per_side} "
                      f"launches, {args.pairs} pairs: found (exit 5) {rate(hits, args.pairs)}, "
                      f"inconclusive {rate(inconclusive, args.pairs)}")
                print(f"  e.g. {example}")
    print(f"\n{time.time() - t0:.0f} s of compare runs")
    print(uptime())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("record")
    r.add_argument("--commbench", default=default_commbench())
    r.add_argument("--launches", type=int, default=40)
    r.add_argument("--hog-share", type=float, default=0.3)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--out", required=True)
    a = sub.add_parser("analyse")
    a.add_argument("--commbench", default=default_commbench())
    a.add_argument("--pairs", type=int, default=200)
    a.add_argument("--seed", type=int, default=1)
    a.add_argument("file")
    args = ap.parse_args()
    record(args) if args.what == "record" else analyse(args)


if __name__ == "__main__":
    main()
