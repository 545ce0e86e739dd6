#!/usr/bin/env python3
"""Writes the crafted result files the compare/check/plot tests read. Run it from this directory
after changing it; the outputs are committed so tests never depend on running it.

base.json            2-rank MPI run: allreduce 8 B..16 MiB, broadcast 1 MiB, barrier
new-regressed.json   the same run, changed: 8 B time +40 % (regression, latency rule),
                     1 KiB +3 % (unchanged), 64 KiB busbw +25 % (improvement), 1 MiB busbw -30 %
                     (regression), 16 MiB busbw -12 % with 40 % spread (noise); broadcast gone,
                     allgather added
new-other-host.json  base's figures on another host, library, fingerprint and NCCL_ALGO
new-disjoint.json    base's meta with only alltoall records: no record in common with base
new-wrong.json       base's records, allreduce 1 KiB with 3 wrong elements
repeats.jsonl        three runs of allreduce 1 MiB concatenated (median is the 2nd)
base.csv, base.jsonl base.json's records in the other formats
incomplete.jsonl     base.jsonl's first three records, then the mark of a run that failed there
"""
import copy
import csv
import json

COLUMNS = ["backend", "library", "algorithm", "collective", "dtype", "op", "placement", "root",
           "nranks", "nnodes", "bytes", "count", "iters", "time_us", "min_us", "p50_us", "p99_us",
           "max_us", "cv", "algbw_GBps", "busbw_GBps", "wrong"]


def record(collective, nbytes, time_us, spread=0.05, cv=0.04, root=-1, op="sum", factor=1.0):
    p50 = time_us * 0.98
    rec = {"backend": "mpi", "library": "Open MPI 4.1.4", "algorithm": "default",
           "collective": collective, "dtype": "float" if collective != "barrier" else "none",
           "op": op, "placement": "out" if collective != "barrier" else "none", "root": root,
           "nranks": 2, "nnodes": 1, "bytes": nbytes, "count": nbytes // 4,
           "iters": max(10, int(200000 / (time_us + 1))), "time_us": time_us,
           "min_us": p50 * 0.9, "p50_us": p50, "p99_us": p50 * (1 + spread),
           "max_us": p50 * (1 + spread) * 1.5, "cv": cv, "algbw_GBps": None, "busbw_GBps": None,
           "wrong": 0}
    if collective != "barrier":
        algbw = nbytes / time_us / 1e3
        rec["algbw_GBps"] = algbw
        rec["busbw_GBps"] = algbw * factor
    else:
        rec["wrong"] = None
    return rec


def allreduce(nbytes, time_us, **kw):
    return record("allreduce", nbytes, time_us, factor=1.0, **kw)  # 2(n-1)/n = 1 for 2 ranks


META = {"commbench_version": "0.1.0", "git_commit": "5bfb2bfbee88",
        "start_time": "2026-11-20T02:00:00Z",
        "command_line": "commbench run -c allreduce,broadcast,barrier -e 16M --output base.json",
        "hosts": ["ci-node-a"], "nranks": 2, "nnodes": 1, "ranks_per_node": 2,
        "libraries": {"mpi": "Open MPI 4.1.4"},
        "environment": {"OMPI_MCA_btl": "self,vader", "OMPI_MCA_orte_hnp_uri": "1.0;tcp://a"},
        "topology": {"hosts": ["ci-node-a"], "fingerprint": "3f2a9c01d4e5b6a7"}}

BASE = [allreduce(8, 0.40), allreduce(1024, 0.55), allreduce(65536, 20.0),
        allreduce(1 << 20, 200.0), allreduce(16 << 20, 3000.0, spread=0.10),
        record("broadcast", 1 << 20, 150.0, root=0, op="none"),
        record("barrier", 0, 0.30, op="none")]


def doc(meta, results):
    return {"schema": "commbench/result/v1", "meta": meta, "results": results}


def write_json(name, d):
    with open(name, "w") as f:
        json.dump(d, f, indent=1)
        f.write("\n")


def main():
    write_json("base.json", doc(META, BASE))

    new = [allreduce(8, 0.56), allreduce(1024, 0.5665), allreduce(65536, 16.0),
           allreduce(1 << 20, 285.7), allreduce(16 << 20, 3409.0, spread=0.40),
           record("allgather", 1 << 20, 180.0, op="none", factor=0.5),
           record("barrier", 0, 0.30, op="none")]
    meta = copy.deepcopy(META)
    meta["start_time"] = "2026-11-21T02:00:00Z"
    meta["environment"]["OMPI_MCA_orte_hnp_uri"] = "2.0;tcp://b"  # launcher noise, not a warning
    write_json("new-regressed.json", doc(meta, new))

    other = copy.deepcopy(META)
    other["hosts"] = ["ci-node-b"]
    other["libraries"] = {"mpi": "Open MPI 5.0.3"}
    other["environment"]["NCCL_ALGO"] = "Ring"
    other["topology"] = {"hosts": ["ci-node-b"], "fingerprint": "77c0ffee00112233"}
    moved = copy.deepcopy(BASE)
    for r in moved:
        r["library"] = "Open MPI 5.0.3"
    write_json("new-other-host.json", doc(other, moved))

    write_json("new-disjoint.json",
               doc(META, [record("alltoall", 1 << 20, 150.0, op="none", factor=0.5)]))
    wrong = copy.deepcopy(BASE)
    next(r for r in wrong if r["collective"] == "allreduce" and r["bytes"] == 1024)["wrong"] = 3
    write_json("new-wrong.json", doc(META, wrong))

    with open("repeats.jsonl", "w") as f:
        for t in (260.0, 200.0, 210.0):
            f.write(json.dumps(allreduce(1 << 20, t)) + "\n")

    with open("base.jsonl", "w") as f:
        for r in BASE:
            f.write(json.dumps(r) + "\n")
    with open("incomplete.jsonl", "w") as f:
        for r in BASE[:3]:
            f.write(json.dumps(r) + "\n")
        f.write(json.dumps({"incomplete": True, "exit_code": 1,
                            "reason": "repetition 2 of 3: rank 1 was killed by signal 9"}) + "\n")
    with open("base.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\r\n")
        w.writerow(COLUMNS)
        for r in BASE:
            w.writerow(["" if r[c] is None else ("%.6g" % r[c] if isinstance(r[c], float) else r[c])
                        for c in COLUMNS])

    # Bad inputs: each must be refused with one line and exit 2.
    open("bad-empty.json", "w").close()
    text = json.dumps(doc(META, BASE), indent=1)
    with open("bad-truncated.json", "w") as f:
        f.write(text[: len(text) // 2])
    with open("bad-not-json.json", "w") as f:
        f.write("allreduce 8 0.4\n")
    d = doc(META, BASE)
    d["schema"] = "commbench/result/v2"
    write_json("bad-schema.json", d)
    d = doc(META, copy.deepcopy(BASE))
    d["results"][2]["time_us"] = -20.0
    write_json("bad-negative.json", d)
    with open("bad-nan.json", "w") as f:
        f.write(json.dumps(doc(META, BASE)).replace('"time_us": 20.0', '"time_us": NaN'))
    with open("bad-nan.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\r\n")
        w.writerow(COLUMNS)
        r = dict(BASE[0], time_us="nan")
        w.writerow(["" if r[c] is None else r[c] for c in COLUMNS])
    lines = [json.dumps(r) for r in BASE]
    with open("bad-truncated.jsonl", "w") as f:
        f.write("\n".join(lines[:3]) + "\n" + lines[3][:40])
    with open("bad-header.csv", "w") as f:
        f.write("size,time\r\n8,0.4\r\n")


if __name__ == "__main__":
    main()
