#!/usr/bin/env python3
"""commbench against a bare back-to-back MPI_Allreduce loop, same sizes, interleaved launches.

Prints, per size, the median over rounds and the best round of each side's time and busbw, and
their ratios:
  time ratio  = commbench time_us / bare time_us      (target <= 1.05 at 8 B)
  busbw ratio = commbench busbw / bare busbw          (target >= 0.97 at 4 MiB)
And the wall time of the default sweep (all collectives, 8 B - 64 MiB, validated, 2 ranks).

Usage: bench/compare_bare.py [--build DIR] [--rounds N] [--np N] [--sizes 8,4194304]
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import time


def launcher(np, flavor):
    if flavor == "mpich":
        return ["mpiexec.mpich", "-n", str(np), "-bind-to", "core"]
    return ["mpirun.openmpi", "-np", str(np), "--bind-to", "core", "--mca", "btl", "self,vader"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--sizes", default="8,4194304")
    ap.add_argument("--mpi", default="openmpi", choices=["openmpi", "mpich"])
    ap.add_argument("--min-time", default="0.2")
    a = ap.parse_args()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    sizes = [int(s) for s in a.sizes.split(",")]
    commbench = os.path.join(a.build, "cmd", "commbench")
    bare = os.path.join(a.build, "bench", "bare_allreduce")
    mpi = launcher(a.np, a.mpi)
    results = {s: {"bare_t": [], "bare_bw": [], "cb_t": [], "cb_bw": []} for s in sizes}
    for _ in range(a.rounds):
        out = subprocess.run(mpi + [bare] + [str(s) for s in sizes] + ["--min-time", a.min_time],
                             capture_output=True, text=True, env=env, check=True).stdout
        for line in out.split("\n"):
            if line.strip():
                b, t, bw, _ = line.split()
                results[int(b)]["bare_t"].append(float(t))
                results[int(b)]["bare_bw"].append(float(bw))
        for s in sizes:
            out = subprocess.run(mpi + [commbench, "run", "-c", "allreduce", "-b", str(s), "-e", str(s),
                                        "--min-time", a.min_time, "--format", "csv", "--no-check"],
                                 capture_output=True, text=True, env=env, check=True).stdout
            row = next(csv.DictReader(io.StringIO(out)))
            results[s]["cb_t"].append(float(row["time_us"]))
            results[s]["cb_bw"].append(float(row["busbw_GBps"] or 0))
    # This class of VM is bimodal per launch (a launch lands in a fast or a 2-4x slower state),
    # so besides the median over rounds the best round of each side is compared: noise only adds.
    for stat_name, stat in (("median", statistics.median), ("best", None)):
        print(f"{stat_name} of {a.rounds} rounds")
        print(f"{'bytes':>10} {'bare us':>10} {'cb us':>10} {'time ratio':>10} {'bare GB/s':>10} {'cb GB/s':>10} {'bw ratio':>9}")
        for s in sizes:
            v = results[s]
            if stat:
                r = {k: stat(x) for k, x in v.items()}
            else:
                r = {"bare_t": min(v["bare_t"]), "cb_t": min(v["cb_t"]),
                     "bare_bw": max(v["bare_bw"]), "cb_bw": max(v["cb_bw"])}
            print(f"{s:>10} {r['bare_t']:>10.4g} {r['cb_t']:>10.4g} {r['cb_t'] / r['bare_t']:>10.3f} "
                  f"{r['bare_bw']:>10.4g} {r['cb_bw']:>10.4g} {r['cb_bw'] / r['bare_bw'] if r['bare_bw'] else 0:>9.3f}")
    t0 = time.monotonic()
    subprocess.run(mpi + [commbench, "run", "--format", "csv"], capture_output=True, env=env, check=True)
    print(f"default sweep (all collectives, 8 B - 64 MiB, validated, {a.np} ranks): "
          f"{time.monotonic() - t0:.1f} s wall")


if __name__ == "__main__":
    main()
