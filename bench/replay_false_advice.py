#!/usr/bin/env python3
"""How often `commbench replay`'s bucket-cap verdict gives false advice, and how often it finds a
real gain.

  bench/replay_false_advice.py [--commbench PATH] [--runs 20] [--rounds 5] [--backend mpi]
                               [--hog] [--backward-ms 40] [--skip-noop] [--skip-gain]

no-op caps: RUNS times `replay -N 2 -B BACKEND --model M --bucket-cap-mb 25,26 -w 1 -n 5
  --rounds ROUNDS`, M a small parameter and twelve 4 MiB layers: both caps close each bucket at
  the same layer (seven layers, 28 MiB, reach either cap), so both settings replay the very same
  collectives. The script checks that from the JSON; any ADVISE is false advice. With --hog, a
  CPU hog (`yes >/dev/null`) is switched on and off at random moments during each run (each
  second a coin decides), as bench/tune_false_advice.py does.
real gain: RUNS times `replay ... --model M2 --backward-ms B --bucket-cap-mb 25,2`, M2 a small
  parameter and eight 2 MiB layers (16 MiB): at 25 MiB DDP's buckets are its first (1 MiB: the
  last layer) and one of all the rest, whose allreduce starts when the backward has ended; at
  2 MiB each layer is a bucket reduced while the backward goes on, so less communication is
  exposed. A run detects it when its verdict is ADVISE --bucket-cap-mb 2. The script prints the
  median exposed time and step time of each cap over the runs: the gain there was to find.

Prints `uptime` first and last, each run's verdict line, and the rates with their run counts.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tune_false_advice import Hog, default_commbench, print_rates, uptime  # noqa: E402

MIB_FLOATS = (1 << 20) // 4


def write_model(path, layers, layer_mib):
    with open(path, "w") as f:
        f.write("name,dtype,numel\nembed.weight,float32,256\n")
        for i in range(layers):
            f.write(f"layer{i}.weight,float32,{layer_mib * MIB_FLOATS}\n")


def one_run(args, model, caps, extra):
    with tempfile.TemporaryDirectory(prefix="replay-false-advice-") as d:
        out = os.path.join(d, "replay.json")
        cmd = [args.commbench, "replay", "-N", "2", "-B", args.backend, "--model", model,
               "--bucket-cap-mb", caps, "-w", "1", "-n", "5", "--rounds", str(args.rounds),
               "--output", out, *extra]
        env = dict(os.environ)
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            print(f"  exit {p.returncode}: {p.stderr.strip().splitlines()[-1:]}")
            return None
        return json.load(open(out))


def same_collectives(doc):
    """Whether every setting of the document replays the same collectives (kind and bytes)."""
    shapes = {tuple((c["collective"], c["bytes"]) for c in r["collectives"])
              for r in doc["replays"]}
    return len(shapes) == 1


def series(args, name, model, caps, extra, hit, hog, check=None):
    hits = runs = 0
    figures = {}
    print(f"{name}: {args.runs} runs{' with the CPU hog switched at random' if hog else ''}")
    for i in range(args.runs):
        if hog:
            with Hog():
                doc = one_run(args, model, caps, extra)
        else:
            doc = one_run(args, model, caps, extra)
        if doc is None:
            continue
        if check and not check(doc):
            print(f"  run {i + 1}: the settings differ in their collectives; not counted")
            continue
        runs += 1
        verdict = doc["verdicts"][0]
        hits += hit(verdict)
        for r in doc["replays"]:
            f = figures.setdefault(r["bucket_cap_mb"], {"step": [], "exposed": []})
            f["step"].append(r["step_us"])
            f["exposed"].append(r["exposed_us"])
        print(f"  run {i + 1}: {verdict['line']}")
    for cap, f in sorted(figures.items()):
        print(f"  cap {cap:g} MiB: median step {statistics.median(f['step']) / 1e3:.2f} ms, "
              f"exposed {statistics.median(f['exposed']) / 1e3:.2f} ms")
    return hits, runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commbench", default=default_commbench())
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--backend", default="mpi")
    ap.add_argument("--hog", action="store_true", help="also the no-op caps with the CPU hog")
    ap.add_argument("--backward-ms", type=float, default=40)
    ap.add_argument("--skip-noop", action="store_true")
    ap.add_argument("--skip-gain", action="store_true")
    args = ap.parse_args()
    print(uptime())
    results = []
    with tempfile.TemporaryDirectory(prefix="replay-models-") as d:
        same = os.path.join(d, "twelve_4mib.csv")
        write_model(same, 12, 4)
        gain = os.path.join(d, "eight_2mib.csv")
        write_model(gain, 8, 2)
        advised = lambda v: v["outcome"] == "advised"  # noqa: E731
        if not args.skip_noop:
            results.append(("false advice, no-op caps",
                            *series(args, "no-op caps 25,26", same, "25,26", [], advised, False,
                                    same_collectives)))
            if args.hog:
                results.append(("false advice, no-op caps, CPU hog",
                                *series(args, "no-op caps 25,26", same, "25,26", [], advised,
                                        True, same_collectives)))
        if not args.skip_gain:
            results.append(("detection, per-layer buckets behind the backward",
                            *series(args, f"caps 25,2 behind a {args.backward_ms:g} ms backward",
                                    gain, "25,2", ["--backward-ms", str(args.backward_ms)],
                                    lambda v: advised(v) and v["chosen_cap_mb"] == 2, False)))
    print(uptime())
    print_rates(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
