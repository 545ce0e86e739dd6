#!/usr/bin/env python3
"""Healthy references for `check --expect auto` on host memory, measured on this machine.

  bench/host_references.py [--commbench PATH] [--backend mpi|gloo] [--launches 12]
                           [--out report/check/host_references.json] [--note TEXT]

Runs `commbench run -B BACKEND -N 2 -c <every collective but barrier> -b 1M -e 64M --repeat
LAUNCHES` (each launch a fresh job with its own control measurement) and adds what check needs
to OUT (schema commbench/host-references/v1): the machine (CPU model and CPUs from the run's roof
facts), the library, each launch's control, load average and steal, and each case's busbw in
each launch. An entry of the same machine, backend, library and ranks is replaced. Rebuild
commbench afterwards: the table is compiled in (report/CMakeLists.txt).

On another machine, users do the same with their own healthy node and pass the file itself:
    commbench run -B mpi -N 2 -b 1M -e 64M --repeat 10 --output ref.json
    commbench check --expect auto --reference ref.json node.json

Prints `uptime` first and last.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

from compare_false_alarms import default_commbench, uptime

COLLECTIVES = "allreduce,allgather,reduce_scatter,broadcast,reduce,alltoall,gather,scatter,sendrecv"


def entry_of(doc, command, note):
    meta = doc["meta"]
    if len(meta["hosts"]) != 1:
        sys.exit("a reference comes from one host")
    facts = next(iter(meta["topology"]["roof_facts"].values()))
    launches = []
    index = {}
    for i, l in enumerate(meta["launches"]):
        index[l.get("repeat", 0)] = i
        pp = sorted(s["pingpong_ns"] for s in l["control"])
        cu = sorted(s["compute_us"] for s in l["control"])
        mid = lambda v: v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
        launches.append({"pingpong_ns": round(mid(pp), 1), "compute_us": round(mid(cu), 2),
                         "load_average": l.get("load_average", 0),
                         "steal_fraction": round(l.get("steal_fraction", 0), 4)})
    cases = []
    library = backend = None
    nranks = 0
    for r in doc["results"]:
        if r["collective"] == "barrier":
            continue
        library, backend, nranks = r["library"], r["backend"], r["nranks"]
        figures = [None] * len(launches)
        for l in r.get("repeats", [r]):
            if l.get("busbw_GBps"):
                figures[index[l.get("repeat", 0)]] = round(l["busbw_GBps"], 4)
        cases.append({"collective": r["collective"], "algorithm": r["algorithm"],
                      "dtype": r["dtype"], "op": r["op"], "placement": r["placement"],
                      "root": r["root"], "bytes": r["bytes"], "split": r.get("split", ""),
                      "busbw_GBps": figures})
    loads = [l["load_average"] for l in launches]
    return {"machine": {"cpu_model": facts.get("cpu_model", ""), "cpus": facts.get("cpus", 0)},
            "backend": backend, "library": library, "nranks": nranks,
            "measured": datetime.date.today().isoformat(),
            "note": note or (f"measured on this project's {facts.get('cpus')}-CPU test machine, "
                             f"load average {min(loads):.1f}-{max(loads):.1f} at the launches' "
                             f"starts"),
            "command": command, "launches": launches, "cases": cases}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commbench", default=default_commbench())
    ap.add_argument("--backend", default="mpi", choices=["mpi", "gloo"])
    ap.add_argument("--launches", type=int, default=12)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                  "report", "check", "host_references.json"))
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    print(uptime(), flush=True)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "ref.json")
        command = [args.commbench, "run", "-B", args.backend, "-N", "2", "-c", COLLECTIVES,
                   "-b", "1M", "-e", "64M", "--repeat", str(args.launches), "--progress", "never",
                   "--output", out]
        p = subprocess.run(command, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"run failed ({p.returncode}): {p.stderr.strip()}")
        doc = json.load(open(out))
    shown = "commbench " + " ".join(command[2:-2] + ["--output", "ref.json"])
    entry = entry_of(doc, shown, args.note)
    # What healthy launches reach of the roof, per collective, where a row has an efficiency.
    print("efficiency (busbw / roof) per launch, where the buffers exceed 2 x the caches:")
    for r in doc["results"]:
        if r["collective"] == "barrier" or r.get("efficiency") is None:
            continue
        e = [l["busbw_GBps"] / r["roof_GBps"] for l in r.get("repeats", [r]) if l.get("busbw_GBps")]
        if e:
            print(f"  {r['collective']:15s} {r['bytes'] >> 20:3d} MiB {min(e):.3f}-{max(e):.3f} "
                  f"(median {sorted(e)[len(e) // 2]:.3f}; roof {r['roof_GBps']:.2f} GB/s)")
    table = json.load(open(args.out))
    table["references"] = [e for e in table["references"]
                           if (e["machine"], e["backend"], e["library"], e["nranks"]) !=
                           (entry["machine"], entry["backend"], entry["library"], entry["nranks"])]
    table["references"].append(entry)
    with open(args.out, "w") as f:
        f.write('{"schema": "commbench/host-references/v1",\n "about": ' +
                json.dumps(table["about"]) + ',\n "references": [\n')
        f.write(",\n".join("  " + json.dumps(e, separators=(",", ":")) for e in table["references"]))
        f.write("]}\n")
    pp = [l["pingpong_ns"] for l in entry["launches"]]
    print(f"{entry['library']}: {len(entry['launches'])} launches, round trip {min(pp):.0f}-"
          f"{max(pp):.0f} ns, {len(entry['cases'])} cases -> {args.out}")
    for c in entry["cases"]:
        v = sorted(x for x in c["busbw_GBps"] if x)
        if v and c["bytes"] >= 16 << 20:
            m = v[len(v) // 2]
            print(f"  {c['collective']:15s} {c['bytes'] >> 20:3d} MiB busbw median {m:7.3f} GB/s, "
                  f"launches {v[0] / m:.2f}-{v[-1] / m:.2f} of it")
    print(uptime())


if __name__ == "__main__":
    main()
