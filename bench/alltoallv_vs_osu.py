#!/usr/bin/env python3
"""commbench's uniform alltoallv beside OSU's osu_alltoallv, at per-peer blocks of 1 KiB, 64 KiB
and 4 MiB, on the same MPI, ranks and launcher options.

OSU is not part of commbench: point --osu at an osu_alltoallv you built (OSU Micro-Benchmarks,
`./configure CC=mpicc.openmpi CXX=mpicxx.openmpi && make -C mpi/collective osu_alltoallv`,
outside this repository). Each round runs OSU once (-m 1K:4M -f) and commbench once, their order
alternating between rounds, and the figures are medians over rounds.

The two count differently, so both conventions are printed:
  block        OSU's size: the bytes each rank sends each peer (MPI_CHAR counts).
  cb size      commbench's size for the same blocks: the bytes a rank sends, block x ranks.
  cb time      commbench time_us: back-to-back calls, each rank's mean, the slowest rank's.
  cb p50       commbench p50_us: the median iteration, each the slowest rank's.
  osu avg      OSU's average latency: each call timed alone between barriers, averaged over
               iterations, then over ranks.
  osu max      OSU's max latency (-f): the slowest rank's average, the figure commbench's time
               corresponds to.
  time/max     cb time / osu max: near 1 when both measure the same call; below 1 when OSU's
               barrier after each call adds a skew that back-to-back calls overlap.
The load average is printed before and after: figures taken on a busy machine are noise.

Usage: bench/alltoallv_vs_osu.py --osu PATH [--rounds 5] [--ranks 2] [--build build]
         [--commbench PATH] [--mpich] [--min-time 0.2] [--yield-when-idle]
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys

BLOCKS = [1 << 10, 64 << 10, 4 << 20]


def launcher(args):
    if args.mpich:
        return ["mpiexec.mpich", "-n", str(args.ranks)]
    cmd = ["mpirun.openmpi", "-np", str(args.ranks), "--bind-to", "none", "--mca", "btl",
           "self,vader"]
    if args.ranks > os.cpu_count():
        cmd.append("--oversubscribe")
    return cmd


def env_for(args):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if args.yield_when_idle:
        env["OMPI_MCA_mpi_yield_when_idle"] = "1"
    return env


def run_osu(args):
    cmd = launcher(args) + [args.osu, "-m", f"{BLOCKS[0]}:{BLOCKS[-1]}", "-f"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env_for(args), check=True).stdout
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 4 and f[0].isdigit() and int(f[0]) in BLOCKS:
            rows[int(f[0])] = {"avg": float(f[1]), "max": float(f[3])}
    return rows


def run_commbench(args):
    n = args.ranks
    cmd = launcher(args) + [args.commbench, "run", "-B", "mpi", "-c", "alltoallv", "--split",
                            "uniform", "-b", str(BLOCKS[0] * n), "-e", str(BLOCKS[-1] * n), "-f",
                            str(BLOCKS[1] // BLOCKS[0]), "--min-time", str(args.min_time),
                            "--format", "csv"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env_for(args), check=True).stdout
    rows = {}
    for r in csv.DictReader(io.StringIO(out)):
        block = int(r["bytes"]) // n
        rows[block] = {"time": float(r["time_us"]), "p50": float(r["p50_us"]),
                       "wrong": r["wrong"]}
    return rows


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def fmt_us(us):
    return f"{us:.1f} us" if us < 1000 else f"{us / 1000:.2f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--osu", required=True, help="an osu_alltoallv built against this MPI")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--build", default="build")
    ap.add_argument("--commbench")
    ap.add_argument("--mpich", action="store_true", help="MPICH's launcher (an MPICH build)")
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--yield-when-idle", action="store_true",
                    help="Open MPI: waiting ranks yield their core (a shared machine)")
    args = ap.parse_args()
    args.commbench = args.commbench or os.path.join(args.build, "cmd", "commbench")
    for path in (args.osu, args.commbench):
        if not os.access(path, os.X_OK):
            sys.exit(f"alltoallv_vs_osu: {path} is not an executable")
    print(f"# load average before: {loadavg()}")
    osu, cb = {b: [] for b in BLOCKS}, {b: [] for b in BLOCKS}
    for round_ in range(args.rounds):
        order = (run_osu, run_commbench) if round_ % 2 == 0 else (run_commbench, run_osu)
        for fn in order:
            rows = fn(args)
            for b in BLOCKS:
                if b not in rows:
                    sys.exit(f"alltoallv_vs_osu: round {round_ + 1} gave no row for block {b}")
                (osu if fn is run_osu else cb)[b].append(rows[b])
    print(f"# load average after: {loadavg()}")
    print(f"# {args.ranks} ranks, {args.rounds} rounds, medians; "
          f"{'MPICH' if args.mpich else 'Open MPI'}")
    print(f"{'block':>8} {'cb size':>9} {'cb time':>10} {'cb p50':>10} {'osu avg':>10} "
          f"{'osu max':>10} {'time/max':>8}  wrong")
    for b in BLOCKS:
        t = statistics.median(r["time"] for r in cb[b])
        p50 = statistics.median(r["p50"] for r in cb[b])
        avg = statistics.median(r["avg"] for r in osu[b])
        mx = statistics.median(r["max"] for r in osu[b])
        wrong = ",".join(sorted({r["wrong"] for r in cb[b]}))
        print(f"{b >> 10:>6}Ki {b * args.ranks >> 10:>7}Ki {fmt_us(t):>10} {fmt_us(p50):>10} "
              f"{fmt_us(avg):>10} {fmt_us(mx):>10} {t / mx:>8.2f}  {wrong}")


if __name__ == "__main__":
    main()
