#!/usr/bin/env python3
"""commbench run -B nccl against a bare back-to-back NCCL loop (bench/nccl_bare_loop) on the same
libnccl, size by size; then the GPU validation kernels against device memory bandwidth
(bench/validation_bandwidth). Needs GPUs; targets: busbw within 3 % of the bare loop, the check
kernel at >= 80 % of device memory bandwidth.

  bench/nccl_vs_bare.py BUILD_DIR [--np N] [--gpus G] [--collectives allreduce,allgather]
                        [-b 1M] [-e 1G] [-n 50] [-w 10] [--launcher mpirun.openmpi]

Two comparisons per collective and size:
  like-for-like: commbench (blocking communicators, its default) vs the blocking bare loop, and
                 COMMBENCH_NCCL_BLOCKING=0 vs the bare loop with non-blocking communicators;
  the cost of non-blocking: commbench with COMMBENCH_NCCL_BLOCKING=0 against the blocking bare
                 loop (nccl-tests' mode).
Exit status 1 when a like-for-like ratio misses the 3 % target at a size of 1 MiB or more.
"""
import argparse
import csv
import io
import os
import subprocess
import sys


def launcher(args, np):
    if np <= 1 and not args.launcher_always:
        return []
    cmd = [args.launcher, "-np", str(np)]
    if "openmpi" in args.launcher or args.launcher in ("mpirun", "mpiexec"):
        cmd += ["--bind-to", "none"]
    return cmd


def run(cmd, env=None):
    full = dict(os.environ)
    full.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, env=full)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return p


def by_bytes(text, busbw_key):
    rows = csv.DictReader(io.StringIO(text))
    return {int(r["bytes"]): float(r[busbw_key]) for r in rows if r.get(busbw_key)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--np", type=int, default=1, help="processes (one GPU each)")
    ap.add_argument("--gpus", type=int, default=1, help="GPUs per process")
    ap.add_argument("--collectives", default="allreduce,allgather,reduce_scatter,broadcast")
    ap.add_argument("-b", default="1M")
    ap.add_argument("-e", default="1G")
    ap.add_argument("-f", default="4")
    ap.add_argument("-n", default="50")
    ap.add_argument("-w", default="10")
    ap.add_argument("--launcher", default="mpirun.openmpi")
    ap.add_argument("--launcher-always", action="store_true")
    args = ap.parse_args()
    bare = os.path.join(args.build, "bench", "nccl_bare_loop")
    commbench = os.path.join(args.build, "cmd", "commbench")
    if args.np * args.gpus < 2:
        print("note: with one rank NCCL copies locally; use --np or --gpus for 2+ ranks")
    pre = launcher(args, args.np)
    sweep = ["-b", args.b, "-e", args.e, "-f", args.f, "-n", args.n, "-w", args.w]
    worst = 0.0
    print(f"{'collective':15} {'bytes':>11} {'bare blk':>9} {'bare nb':>9} {'cb nb':>9} "
          f"{'cb blk':>9} {'nb/nb':>7} {'blk/blk':>7} {'nb/blk':>7}   busbw GB/s")
    for coll in args.collectives.split(","):
        base = ["-c", coll] + sweep + ["-g", str(args.gpus)]
        bare_blk = run(pre + [bare] + base + ["--blocking", "1"])
        lib_line = next(l for l in bare_blk.stderr.splitlines() if l.startswith("# nccl "))
        lib = lib_line.split(" ", 3)[3]
        bare_nb = run(pre + [bare] + base + ["--blocking", "0"])
        cb_args = ["run", "-B", "nccl", "--nccl-lib", lib, "--no-check", "--format", "csv"] + base
        cb_nb = run(pre + [commbench] + cb_args, env={"COMMBENCH_NCCL_BLOCKING": "0"})
        cb_blk = run(pre + [commbench] + cb_args, env={"COMMBENCH_NCCL_BLOCKING": "1"})
        tables = [by_bytes(p.stdout, "busbw_GBps") for p in (bare_blk, bare_nb, cb_nb, cb_blk)]
        for size in sorted(tables[0]):
            if not all(size in t for t in tables):
                continue
            b_blk, b_nb, c_nb, c_blk = (t[size] for t in tables)
            r_nb, r_blk, r_cost = c_nb / b_nb, c_blk / b_blk, c_nb / b_blk
            if size >= 1 << 20:
                worst = max(worst, abs(1 - r_nb), abs(1 - r_blk))
            print(f"{coll:15} {size:>11} {b_blk:>9.2f} {b_nb:>9.2f} {c_nb:>9.2f} {c_blk:>9.2f} "
                  f"{r_nb:>7.3f} {r_blk:>7.3f} {r_cost:>7.3f}")
    print(f"# libnccl: {lib}")
    print(f"# worst like-for-like busbw difference at >= 1 MiB: {100 * worst:.1f} % (target 3 %)")
    vb = os.path.join(args.build, "bench", "validation_bandwidth")
    p = subprocess.run([vb], capture_output=True, text=True)
    print(p.stdout, end="")
    if p.returncode not in (0, 77):
        print(p.stderr, end="")
    return 1 if worst > 0.03 else 0


if __name__ == "__main__":
    sys.exit(main())
