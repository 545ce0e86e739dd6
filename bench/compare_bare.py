#!/usr/bin/env python3
"""commbench against bare back-to-back allreduce loops on Open MPI, MPICH and Gloo.

Each round launches, per backend, the bare loop and commbench once each (their order alternates
between rounds), with the same sizes, float sum, out of place, 2 ranks:
  openmpi  mpirun.openmpi -np N --bind-to core --mca btl self,vader: bench/bare_allreduce and
           `commbench run -B mpi` from the Open MPI build (--build)
  mpich    mpiexec.mpich -n N -bind-to core: bare_allreduce and commbench from the MPICH build
           (--mpich-build)
  gloo     no launcher: bench/bare_gloo_allreduce starts N ranks itself (gloo::allreduce over TCP
           on 127.0.0.1, FileStore rendezvous) and `commbench run -B gloo -N N` its local launcher

Sizes: --sizes (default 8, 64 KiB, 4 MiB and 64 MiB; powers of two): commbench measures them in
one launch (-f chosen so that every size is on its grid), the bare loops in one launch too.

Printed per backend and size, as the median over rounds (and the best round: noise only adds):
  time ratio   = commbench time_us / bare time_us (target at the smallest size <= 1.05)
  bw ratio     = commbench busbw / bare busbw     (target at 4 MiB and above >= 0.97)
  clock ratio  = the bare loop's own second loop, which reads the time-stamp counter after every
                 iteration as commbench does, against its loop timed as a whole, same launch: what
                 per-iteration timing alone costs at the smallest size (in the verdict lines)
  p50 ratio    = commbench p50_us / bare p50_us at the smallest size (the median iteration, each
                 the max over ranks: what the ratio is without other processes' preemptions)
  >10x p50     = share of iterations slower than 10 x the median iteration, each side
                 (commbench's from COMMBENCH_DIAGNOSTICS; bare loops time a second loop of the
                 same length per iteration)
The load average is printed before and after: figures taken while the machine is busy are noise.

--osu-openmpi PATH / --osu-mpich PATH: OSU Micro-Benchmarks' osu_allreduce of that MPI (OSU is not
a dependency: point at your own build) also runs in every round, and its average latency per
size is put beside commbench's time_us (ratio = commbench / OSU; OSU times each iteration between
barriers, so it reads somewhat higher than a back-to-back loop at small sizes).

--sweep: also runs the default sweep (every collective, 8 B - 64 MiB, validated) once on Open MPI
and prints its wall time, the share of its cases with outliers (target <= 10 %), their causes
(outlier_cause), the cases whose slow calls are the library's own rhythm ("in every batch", not
outliers) beside them, and the largest fault_bytes of allreduce, allgather and broadcast from
1 MiB to 16 MiB (target 0).

Machine modes. bench/core_pingpong (two pinned threads bouncing a cache line, no MPI) runs right
before and right after every launch. On a virtual machine its round trip can jump between modes
while nothing in the guest changes (here 50 ns and 300 ns: the host moves the two virtual CPUs
between sibling hyper-threads and distant cores), and every shared-memory transport follows it.
When the probes of a session span a factor of 2 or more, each probe is called fast or slow
against the geometric midpoint of the lowest and highest probe; a launch whose two probes agree
has that mode, otherwise it is "mixed". A round counts as same-mode when both of its launches
have the same (not mixed) mode, and the ratios are printed again over the same-mode rounds of
each mode: the like-for-like comparison. Without a spread of 2 all launches are in one mode.

Usage: bench/compare_bare.py [--rounds 7] [--backends openmpi,mpich,gloo]
         [--sizes 8,65536,4194304,67108864] [--min-time 0.2] [--build build]
         [--mpich-build build-mpich] [--commbench-openmpi PATH] [--commbench-mpich PATH]
         [--osu-openmpi PATH] [--osu-mpich PATH] [--per-round] [--sweep] [--core-pingpong PATH]
"""
import argparse
import csv
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

TIME_TARGET = 1.05
BW_TARGET = 0.97


def mpi_launcher(flavor, np):
    if flavor == "mpich":
        return ["mpiexec.mpich", "-n", str(np), "-bind-to", "core"]
    return ["mpirun.openmpi", "-np", str(np), "--bind-to", "core", "--mca", "btl", "self,vader"]


def parse_bare(out):
    """bare loops print: bytes time_us busbw_GBps iters p50_us share_above_10x_p50
    marked_time_us (the mean of the loop that reads the clock after every iteration)"""
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 6:
            rows[int(f[0])] = {"t": float(f[1]), "bw": float(f[2]), "p50": float(f[4]),
                               "share": float(f[5]),
                               "marked": float(f[6]) if len(f) >= 7 else None}
    return rows


def parse_commbench(out, diag_path):
    rows = {}
    for row in csv.DictReader(io.StringIO(out)):
        rows[int(row["bytes"])] = {"t": float(row["time_us"]), "p50": float(row["p50_us"]),
                                   "bw": float(row["busbw_GBps"] or 0), "share": None}
    if os.path.exists(diag_path):
        with open(diag_path) as f:
            for line in f:
                d = json.loads(line)
                if d.get("rank") == 0 and d["bytes"] in rows:
                    rows[d["bytes"]]["share"] = float(d["share_above_10x_p50"])
        os.unlink(diag_path)
    return rows


def probe(path):
    """bench/core_pingpong's minimum round trip in ns."""
    out = subprocess.run([path], capture_output=True, text=True, timeout=60, check=True).stdout
    f = out.split()
    return float(f[f.index("min") + 1])


def classify(probes):
    """A function from a probe value to its mode: "fast"/"slow" around the geometric midpoint of
    the lowest and highest probe when they differ by 2x or more, else "one"."""
    lo, hi = min(probes), max(probes)
    if hi < 2 * lo:
        return lambda v: "one"
    mid = (lo * hi) ** 0.5
    return lambda v: "fast" if v < mid else "slow"


def run(cmd, env):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != 0:
        sys.exit(f"compare_bare: {' '.join(cmd)} exited {p.returncode}:\n{p.stderr[-2000:]}")
    return p.stdout


def parse_osu(out):
    """osu_allreduce prints '# Size  Avg Latency(us)' then 'SIZE LATENCY [...]' rows."""
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and not line.startswith("#") and f[0].isdigit():
            rows[int(f[0])] = {"t": float(f[1])}
    return rows


def size_grid(sizes):
    """commbench's -b, -e and -f that put every size (powers of two) on one launch's grid."""
    if any(s & (s - 1) for s in sizes):
        sys.exit("compare_bare: --sizes must be powers of two")
    exps = [s.bit_length() - 1 for s in sizes]
    step = 0
    for e in exps[1:]:
        step = math.gcd(step, e - exps[0])
    return ["-b", str(sizes[0]), "-e", str(sizes[-1]), "-f", str(2 ** max(step, 1))]


def sweep_figures(csv_text):
    """The default sweep's cases and outlier cases per backend, the outliers by outlier_cause
    per backend, and the largest fault_bytes of allreduce, allgather and broadcast from 1 MiB to
    16 MiB."""
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    cases, outliers, causes = {}, {}, {}
    for r in rows:
        b = r["backend"]
        cases[b] = cases.get(b, 0) + 1
        if r["outliers"] == "true":
            outliers[b] = outliers.get(b, 0) + 1
        # The library's rhythm ("in every batch") is not an outlier; it is counted beside them.
        if r["outliers"] == "true" or r.get("outlier_cause") == "in every batch":
            cause = r.get("outlier_cause") or "none seen"
            causes.setdefault(b, {})[cause] = causes.setdefault(b, {}).get(cause, 0) + 1
    mid = [float(r["fault_bytes"] or 0) for r in rows
           if r["collective"] in ("allreduce", "allgather", "broadcast")
           and (1 << 20) <= int(r["bytes"]) <= (16 << 20)]
    return cases, outliers, causes, max(mid, default=0.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--backends", default="openmpi,mpich,gloo")
    ap.add_argument("--sizes", default="8,65536,4194304,67108864", help="powers of two")
    ap.add_argument("--min-time", default="0.2", help="seconds per size, both sides")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--build", default="build", help="the Open MPI build (also runs gloo)")
    ap.add_argument("--mpich-build", default="build-mpich")
    ap.add_argument("--commbench-openmpi", help="commbench binary to measure (Open MPI, gloo)")
    ap.add_argument("--commbench-mpich", help="commbench binary to measure (MPICH)")
    ap.add_argument("--osu-openmpi", help="osu_allreduce built with Open MPI, to run beside")
    ap.add_argument("--osu-mpich", help="osu_allreduce built with MPICH, to run beside")
    ap.add_argument("--per-round", action="store_true", help="also print every round's ratios")
    ap.add_argument("--core-pingpong", help="the mode probe (default: BUILD/bench/core_pingpong)")
    ap.add_argument("--sweep", action="store_true",
                    help="also run the default sweep (all collectives, 8 B - 64 MiB) on Open MPI")
    a = ap.parse_args()
    sizes = sorted(int(s) for s in a.sizes.split(","))
    small = sizes[0]
    backends = a.backends.split(",")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("COMMBENCH_DIAGNOSTICS", None)
    cb_ompi = a.commbench_openmpi or os.path.join(a.build, "cmd", "commbench")
    cb_mpich = a.commbench_mpich or os.path.join(a.mpich_build, "cmd", "commbench")
    bare_mpi = {"openmpi": os.path.join(a.build, "bench", "bare_allreduce"),
                "mpich": os.path.join(a.mpich_build, "bench", "bare_allreduce")}
    osu = {"openmpi": a.osu_openmpi, "mpich": a.osu_mpich}
    bare_gloo = os.path.join(a.build, "bench", "bare_gloo_allreduce")
    pingpong = a.core_pingpong or os.path.join(a.build, "bench", "core_pingpong")
    cb_args = ["run", "-c", "allreduce"] + size_grid(sizes) + [
        "--min-time", a.min_time, "--format", "csv", "--no-check", "--progress", "never"]
    bare_sizes = [str(x) for x in sizes] + ["--min-time", a.min_time]

    def commands(b):
        """(bare, commbench, osu or None) command lines of backend b."""
        if b == "gloo":
            return ([bare_gloo] + bare_sizes + ["--np", str(a.np)],
                    [cb_ompi] + cb_args + ["-B", "gloo", "-N", str(a.np)], None)
        mpi = mpi_launcher(b, a.np)
        osu_cmd = None
        if osu.get(b):
            osu_cmd = mpi + [osu[b], "-m", f"{sizes[0]}:{sizes[-1]}", "-M", str(4 * sizes[-1])]
        return (mpi + [bare_mpi[b]] + bare_sizes,
                mpi + [cb_mpich if b == "mpich" else cb_ompi] + cb_args + ["-B", "mpi"], osu_cmd)

    tmp = tempfile.mkdtemp(prefix="compare-bare-")
    diag = os.path.join(tmp, "diagnostics.jsonl")
    load_before = os.getloadavg()
    t_start = time.monotonic()
    results = {b: [] for b in backends}  # per round: {"bare": rows, "cb": rows, "osu": rows}
    probes = {b: [] for b in backends}  # per round: {"bare": (before, after), "cb": ...}
    for r in range(a.rounds):
        for b in backends:
            bare_cmd, cb_cmd, osu_cmd = commands(b)
            sides = ["bare", "cb"] + (["osu"] if osu_cmd else [])
            got, pp = {}, {}
            for side in (sides if r % 2 == 0 else list(reversed(sides))):
                before = probe(pingpong)
                if side == "bare":
                    got["bare"] = parse_bare(run(bare_cmd, env))
                elif side == "osu":
                    got["osu"] = parse_osu(run(osu_cmd, env))
                else:
                    out = run(cb_cmd, dict(env, COMMBENCH_DIAGNOSTICS=diag))
                    got["cb"] = parse_commbench(out, diag)
                pp[side] = (before, probe(pingpong))
            results[b].append(got)
            probes[b].append(pp)
    os.rmdir(tmp)
    load_after = os.getloadavg()

    def fmt_share(v):
        return "n/a" if v is None else f"{100 * v:.3f}%"

    print(f"commbench vs bare allreduce loops, float sum, {a.np} ranks, {a.rounds} interleaved "
          f"rounds, --min-time {a.min_time} s per size")
    print(f"load average (1, 5, 15 min): before {load_before[0]:.2f} {load_before[1]:.2f} "
          f"{load_before[2]:.2f}, after {load_after[0]:.2f} {load_after[1]:.2f} "
          f"{load_after[2]:.2f}; {os.cpu_count()} CPUs; {time.monotonic() - t_start:.0f} s")
    print(f"{'backend':<8} {'size':>9} {'stat':<6} {'bare us':>9} {'cb us':>9} {'time x':>7} "
          f"{'bare GB/s':>9} {'cb GB/s':>9} {'bw x':>6} {'>10x p50 bare/cb':>20} {'osu x':>6}")
    all_probes = [v for b in backends for rnd in probes[b] for pair in rnd.values() for v in pair]
    mode_of = classify(all_probes)

    def launch_mode(pair):
        m = {mode_of(v) for v in pair}
        return m.pop() if len(m) == 1 else "mixed"

    def med(v):
        return statistics.median(v) if v else float("nan")

    verdicts, mode_lines = [], []
    for b in backends:
        rounds = results[b]
        modes = [(launch_mode(p["bare"]), launch_mode(p["cb"])) for p in probes[b]]
        t_ratio, bw_ratio = {}, {}
        for size in sizes:
            t_bare = [x["bare"][size]["t"] for x in rounds]
            t_cb = [x["cb"][size]["t"] for x in rounds]
            bw_bare = [x["bare"][size]["bw"] for x in rounds]
            bw_cb = [x["cb"][size]["bw"] for x in rounds]
            t_ratio[size] = [c / s for c, s in zip(t_cb, t_bare)]
            bw_ratio[size] = [c / s if s else 0 for c, s in zip(bw_cb, bw_bare)]
            osu_x = [x["cb"][size]["t"] / x["osu"][size]["t"] for x in rounds
                     if "osu" in x and x["osu"].get(size, {}).get("t")]

            def shares(side):
                v = [x[side][size]["share"] for x in rounds]
                return None if any(v_ is None for v_ in v) else med(v)

            rows = (("median", (med(t_bare), med(t_cb), med(t_ratio[size]), med(bw_bare),
                                med(bw_cb), med(bw_ratio[size])),
                     f"{fmt_share(shares('bare'))} / {fmt_share(shares('cb'))}",
                     f"{med(osu_x):.3f}" if osu_x else "-"),
                    ("best", (min(t_bare), min(t_cb), min(t_cb) / min(t_bare), max(bw_bare),
                              max(bw_cb), max(bw_cb) / max(bw_bare) if max(bw_bare) else 0),
                     "", f"{min(osu_x):.3f}" if osu_x else "-"))
            for name, v, share, osu_text in rows:
                print(f"{b:<8} {size:>9} {name:<6} {v[0]:>9.4g} {v[1]:>9.4g} {v[2]:>7.3f} "
                      f"{v[3]:>9.4g} {v[4]:>9.4g} {v[5]:>6.3f} {share:>20} {osu_text:>6}")
            if a.per_round:
                print(f"{'':<8} {size:>9} rounds: time x "
                      + " ".join(f"{x:.3f}" for x in t_ratio[size]))
                print(f"{'':<8} {size:>9} rounds: bw x   "
                      + " ".join(f"{x:.3f}" for x in bw_ratio[size]))
        if a.per_round:
            print(f"{'':<8} rounds: mode   " + " ".join(f"{m[0]}/{m[1]}" for m in modes))
        mode_lines.append(f"{b}: launches by mode (bare/cb): " + ", ".join(
            f"{m} {sum(x[0] == m for x in modes)}/{sum(x[1] == m for x in modes)}"
            for m in ("fast", "slow", "one", "mixed") if any(m in x for x in modes)))
        large = [x for x in sizes if x >= 4 << 20]
        p50_ratio = [x["cb"][small]["p50"] / x["bare"][small]["p50"] if x["bare"][small]["p50"]
                     else 0 for x in rounds]
        clock_ratio = [x["bare"][small]["marked"] / x["bare"][small]["t"]
                       if x["bare"][small].get("marked") and x["bare"][small]["t"] else None
                       for x in rounds]

        def verdict(indices, what):
            tm = med([t_ratio[small][i] for i in indices])
            best_t = min(t_ratio[small][i] for i in indices)
            pm = med([p50_ratio[i] for i in indices])
            clocks = [clock_ratio[i] for i in indices if clock_ratio[i] is not None]
            clock = f", bare loop with a clock read per iteration x {med(clocks):.3f}" \
                if clocks else ""
            bws = ", ".join(f"{x} B bw x {med([bw_ratio[x][i] for i in indices]):.3f} "
                            f"(best {max(bw_ratio[x][i] for i in indices):.3f}, "
                            f"{'meets' if max(bw_ratio[x][i] for i in indices) >= BW_TARGET else 'misses'}"
                            f" >= {BW_TARGET})" for x in large)
            return (f"{b}: {small} B time x {tm:.3f} (best {best_t:.3f}, "
                    f"{'meets' if best_t <= TIME_TARGET else 'misses'} <= {TIME_TARGET}; p50 x "
                    f"{pm:.3f}{clock}), {bws} over {what}")

        verdicts.append(verdict(range(len(rounds)), f"all {len(rounds)} rounds"))
        for m in ("fast", "slow"):
            same = [i for i, x in enumerate(modes) if x == (m, m)]
            if same:
                verdicts.append(verdict(same, f"the {len(same)} rounds with both launches in "
                                              f"the {m} mode"))
    print("time x = commbench time_us / bare time_us; bw x = commbench busbw / bare busbw; "
          "medians over rounds of each round's ratio (best: best round of each side, which the "
          "targets judge: noise only adds); p50 x = the same for the median iteration (each the "
          "max over ranks); osu x = commbench time_us / OSU's average latency")
    print(f"core_pingpong round trip before/after each launch: {min(all_probes):.0f} - "
          f"{max(all_probes):.0f} ns" + (
              f"; fast below {(min(all_probes) * max(all_probes)) ** 0.5:.0f} ns, slow above"
              if mode_of(max(all_probes)) == "slow" else "; one mode (spread below 2x)"))
    for v in mode_lines + verdicts:
        print(v)
    if a.sweep:
        t0 = time.monotonic()
        out = run(mpi_launcher("openmpi", a.np) + [cb_ompi, "run", "--format", "csv"], env)
        cases, outliers, causes, most = sweep_figures(out)
        print(f"default sweep (all collectives, 8 B - 64 MiB, validated, {a.np} ranks, Open MPI's "
              f"launcher, every CPU backend): {time.monotonic() - t0:.1f} s wall; fault_bytes of "
              f"allreduce, allgather and broadcast at 1-16 MiB: at most {most:.0f} (target 0)")
        for b in sorted(cases):
            n = outliers.get(b, 0)
            why = ", ".join(f"{k} {v}" for k, v in sorted(causes.get(b, {}).items()))
            print(f"  {b}: {n} of {cases[b]} cases had outliers ({100 * n / cases[b]:.1f} %"
                  f"{', target <= 10 %' if b == 'mpi' else ''}){': ' + why if why else ''}")


if __name__ == "__main__":
    main()
