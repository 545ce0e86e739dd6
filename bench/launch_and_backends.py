#!/usr/bin/env python3
"""Figures for the launcher and the MPI/Gloo backends, measured with commbench itself.

  bench/launch_and_backends.py [--commbench PATH] [--repeat N]

1. MPI against Gloo: allreduce of 8 B, 64 KiB and 4 MiB floats on 2 local ranks, both backends
   in one run (-B mpi,gloo; the run re-executes under the MPI launcher). Median over --repeat
   runs of each backend's time_us (mean per operation, slowest rank) and p50_us.
2. Every Open MPI (or MPICH) allreduce algorithm at 4 MiB on 2 ranks, forced in one process
   (-A all).
3. The local launcher's start-up cost: wall time from starting `commbench run -N 2` to the first
   result row on its stdout (a 1-iteration barrier, CSV, so the row is the first output after
   the header), and to the end of the run; the same for -B mpi (re-execution under mpirun)
   for comparison. Median and minimum over --repeat runs.
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
import time


def rows_of(cmd, env):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return list(csv.DictReader(io.StringIO(p.stdout))), p.stderr


def mpi_vs_gloo(cb, env, repeat):
    print("## allreduce, float, 2 local ranks: MPI vs Gloo (median of %d runs)\n" % repeat)
    print("| size | MPI time_us | MPI p50_us | Gloo time_us | Gloo p50_us | Gloo/MPI (p50) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size in ("8", "64K", "4M"):
        got = {"mpi": ([], []), "gloo": ([], [])}
        for _ in range(repeat):
            rows, _ = rows_of([cb, "run", "-B", "mpi,gloo", "-N", "2", "-c", "allreduce",
                               "-b", size, "-e", size, "--format", "csv"], env)
            for r in rows:
                got[r["backend"]][0].append(float(r["time_us"]))
                got[r["backend"]][1].append(float(r["p50_us"]))
        m = {b: (statistics.median(t), statistics.median(p)) for b, (t, p) in got.items()}
        print(f"| {size}B | {m['mpi'][0]:.2f} | {m['mpi'][1]:.2f} | {m['gloo'][0]:.2f} | "
              f"{m['gloo'][1]:.2f} | {m['gloo'][1] / m['mpi'][1]:.1f}x |")
    print()


def mpi_algorithms(cb, env):
    rows, err = rows_of([cb, "run", "-B", "mpi", "-N", "2", "-A", "all", "-c", "allreduce",
                         "-b", "4M", "-e", "4M", "--format", "csv", "--min-time", "0.5"], env)
    lib = rows[0]["library"] if rows else "MPI"
    print(f"## {lib} allreduce algorithms, 4 MiB float, 2 ranks (-A all)\n")
    print("| algorithm | time_us | p50_us | busbw_GBps | wrong |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['algorithm']} | {float(r['time_us']):.1f} | {float(r['p50_us']):.1f} | "
              f"{float(r['busbw_GBps']):.2f} | {r['wrong']} |")
    for line in err.splitlines():
        if "skipped" in line:
            print(f"\n{line}")
    print()


def time_to_first_result(cmd, env):
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         env=env)
    first = None
    header = p.stdout.readline()
    if header and p.stdout.readline():
        first = time.monotonic() - start
    p.stdout.read()
    p.wait()
    total = time.monotonic() - start
    if p.returncode != 0 or first is None:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode})")
    return first, total


def startup(cb, env, repeat):
    print("## Start-up: time to the first result (1-iteration barrier, 2 ranks)\n")
    print("| launch | first row, median s | first row, min s | whole run, median s |")
    print("|---|---:|---:|---:|")
    for label, backend in (("local launcher (-B gloo)", "gloo"), ("re-exec under mpirun (-B mpi)", "mpi")):
        cmd = [cb, "run", "-N", "2", "-B", backend, "-c", "barrier", "-w", "0", "-n", "1",
               "--format", "csv"]
        samples = [time_to_first_result(cmd, env) for _ in range(repeat)]
        firsts = [s[0] for s in samples]
        totals = [s[1] for s in samples]
        print(f"| {label} | {statistics.median(firsts):.3f} | {min(firsts):.3f} | "
              f"{statistics.median(totals):.3f} |")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--commbench", default=os.environ.get("COMMBENCH", "commbench"))
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = ""  # host runs only: -N 2 regardless of GPUs
    mpi_vs_gloo(a.commbench, env, a.repeat)
    mpi_algorithms(a.commbench, env)
    startup(a.commbench, env, max(a.repeat, 10))


if __name__ == "__main__":
    main()
