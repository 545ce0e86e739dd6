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

Printed per backend, as the median over rounds (and the best round: noise only adds):
  time ratio   = commbench time_us / bare time_us at the smallest size (target <= 1.05)
  bw ratio     = commbench busbw / bare busbw at the largest size      (target >= 0.97)
  clock ratio  = the bare loop's own second loop, which reads the time-stamp counter after every
                 iteration as commbench does, against its loop timed as a whole, same launch: what
                 per-iteration timing alone costs at the smallest size (in the verdict lines)
  p50 ratio    = commbench p50_us / bare p50_us at the smallest size (the median iteration, each
                 the max over ranks: what the ratio is without other processes' preemptions)
  >10x p50     = share of iterations slower than 10 x the median iteration, each side
                 (commbench's from COMMBENCH_DIAGNOSTICS; bare loops time a second loop of the
                 same length per iteration)
The load average is printed before and after: figures taken while the machine is busy are noise.

Machine modes. bench/core_pingpong (two pinned threads bouncing a cache line, no MPI) runs right
before and right after every launch. On a virtual machine its round trip can jump between modes
while nothing in the guest changes (here 50 ns and 300 ns: the host moves the two virtual CPUs
between sibling hyper-threads and distant cores), and every shared-memory transport follows it.
When the probes of a session span a factor of 2 or more, each probe is called fast or slow
against the geometric midpoint of the lowest and highest probe; a launch whose two probes agree
has that mode, otherwise it is "mixed". A round counts as same-mode when both of its launches
have the same (not mixed) mode, and the ratios are printed again over the same-mode rounds of
each mode: the like-for-like comparison. Without a spread of 2 all launches are in one mode.

Usage: bench/compare_bare.py [--rounds 7] [--backends openmpi,mpich,gloo] [--sizes 8,4194304]
         [--min-time 0.2] [--build build] [--mpich-build build-mpich]
         [--commbench-openmpi PATH] [--commbench-mpich PATH] [--per-round] [--sweep]
         [--core-pingpong PATH]
"""
import argparse
import csv
import io
import json
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--backends", default="openmpi,mpich,gloo")
    ap.add_argument("--sizes", default="8,4194304", help="exactly two sizes: small,large")
    ap.add_argument("--min-time", default="0.2", help="seconds per size, both sides")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--build", default="build", help="the Open MPI build (also runs gloo)")
    ap.add_argument("--mpich-build", default="build-mpich")
    ap.add_argument("--commbench-openmpi", help="commbench binary to measure (Open MPI, gloo)")
    ap.add_argument("--commbench-mpich", help="commbench binary to measure (MPICH)")
    ap.add_argument("--per-round", action="store_true", help="also print every round's ratios")
    ap.add_argument("--core-pingpong", help="the mode probe (default: BUILD/bench/core_pingpong)")
    ap.add_argument("--sweep", action="store_true",
                    help="also time the default sweep (all collectives, 8 B - 64 MiB) on Open MPI")
    a = ap.parse_args()
    small, large = (int(s) for s in a.sizes.split(","))
    backends = a.backends.split(",")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("COMMBENCH_DIAGNOSTICS", None)
    cb_ompi = a.commbench_openmpi or os.path.join(a.build, "cmd", "commbench")
    cb_mpich = a.commbench_mpich or os.path.join(a.mpich_build, "cmd", "commbench")
    bare_mpi = {"openmpi": os.path.join(a.build, "bench", "bare_allreduce"),
                "mpich": os.path.join(a.mpich_build, "bench", "bare_allreduce")}
    bare_gloo = os.path.join(a.build, "bench", "bare_gloo_allreduce")
    pingpong = a.core_pingpong or os.path.join(a.build, "bench", "core_pingpong")
    cb_args = ["run", "-c", "allreduce", "-b", str(small), "-e", str(large),
               "-i", str(large - small), "--min-time", a.min_time, "--format", "csv",
               "--no-check", "--progress", "never"]
    sizes = [str(small), str(large), "--min-time", a.min_time]

    def commands(b):
        if b == "gloo":
            return ([bare_gloo] + sizes + ["--np", str(a.np)],
                    [cb_ompi] + cb_args + ["-B", "gloo", "-N", str(a.np)])
        mpi = mpi_launcher(b, a.np)
        return mpi + [bare_mpi[b]] + sizes, mpi + [cb_mpich if b == "mpich" else cb_ompi] + \
            cb_args + ["-B", "mpi"]

    tmp = tempfile.mkdtemp(prefix="compare-bare-")
    diag = os.path.join(tmp, "diagnostics.jsonl")
    load_before = os.getloadavg()
    t_start = time.monotonic()
    results = {b: [] for b in backends}  # per round: (bare rows, commbench rows)
    probes = {b: [] for b in backends}  # per round: ((bare before, after), (cb before, after))
    for r in range(a.rounds):
        for b in backends:
            bare_cmd, cb_cmd = commands(b)
            got, pp = {}, {}
            for side in (("bare", "cb") if r % 2 == 0 else ("cb", "bare")):
                before = probe(pingpong)
                if side == "bare":
                    got["bare"] = parse_bare(run(bare_cmd, env))
                else:
                    out = run(cb_cmd, dict(env, COMMBENCH_DIAGNOSTICS=diag))
                    got["cb"] = parse_commbench(out, diag)
                pp[side] = (before, probe(pingpong))
            results[b].append((got["bare"], got["cb"]))
            probes[b].append((pp["bare"], pp["cb"]))
    os.rmdir(tmp)
    load_after = os.getloadavg()

    def fmt_share(v):
        return "n/a" if v is None else f"{100 * v:.3f}%"

    print(f"commbench vs bare allreduce loops, float sum, {a.np} ranks, {a.rounds} interleaved "
          f"rounds, --min-time {a.min_time} s per size")
    print(f"load average (1, 5, 15 min): before {load_before[0]:.2f} {load_before[1]:.2f} "
          f"{load_before[2]:.2f}, after {load_after[0]:.2f} {load_after[1]:.2f} "
          f"{load_after[2]:.2f}; {os.cpu_count()} CPUs; {time.monotonic() - t_start:.0f} s")
    header = (f"{'backend':<8} {'stat':<6} {'bare us':>9} {'cb us':>9} {'time x':>7} "
              f"{'bare GB/s':>9} {'cb GB/s':>9} {'bw x':>6} "
              f"{'>10x p50 ' + str(small) + ' B bare/cb':>26} {'at ' + str(large) + ' B bare/cb':>22}")
    print(header)
    all_probes = [v for b in backends for rnd in probes[b] for side in rnd for v in side]
    mode_of = classify(all_probes)

    def launch_mode(pair):
        m = {mode_of(v) for v in pair}
        return m.pop() if len(m) == 1 else "mixed"

    verdicts, mode_lines = [], []
    for b in backends:
        rounds = results[b]
        t_bare = [x[0][small]["t"] for x in rounds]
        t_cb = [x[1][small]["t"] for x in rounds]
        bw_bare = [x[0][large]["bw"] for x in rounds]
        bw_cb = [x[1][large]["bw"] for x in rounds]
        t_ratio = [c / s for c, s in zip(t_cb, t_bare)]
        bw_ratio = [c / s if s else 0 for c, s in zip(bw_cb, bw_bare)]
        p50_ratio = [x[1][small]["p50"] / x[0][small]["p50"] if x[0][small]["p50"] else 0
                     for x in rounds]

        # What reading the clock after every iteration alone costs: the bare loop's own
        # per-iteration-timed loop against its loop timed as a whole, in the same launch.
        clock_ratio = [x[0][small]["marked"] / x[0][small]["t"]
                       if x[0][small].get("marked") and x[0][small]["t"] else None for x in rounds]

        def clock_text(indices):
            v = [clock_ratio[i] for i in indices if clock_ratio[i] is not None]
            return f", bare loop with a clock read per iteration x {statistics.median(v):.3f}" \
                if v else ""

        def shares(side, size):
            v = [x[side][size]["share"] for x in rounds]
            return None if any(s is None for s in v) else statistics.median(v)

        med = (statistics.median(t_bare), statistics.median(t_cb), statistics.median(t_ratio),
               statistics.median(bw_bare), statistics.median(bw_cb), statistics.median(bw_ratio))
        best = (min(t_bare), min(t_cb), min(t_cb) / min(t_bare),
                max(bw_bare), max(bw_cb), max(bw_cb) / max(bw_bare) if max(bw_bare) else 0)
        for name, v in (("median", med), ("best", best)):
            share_small = f"{fmt_share(shares(0, small))} / {fmt_share(shares(1, small))}"
            share_large = f"{fmt_share(shares(0, large))} / {fmt_share(shares(1, large))}"
            print(f"{b:<8} {name:<6} {v[0]:>9.4g} {v[1]:>9.4g} {v[2]:>7.3f} {v[3]:>9.4g} "
                  f"{v[4]:>9.4g} {v[5]:>6.3f} "
                  f"{share_small if name == 'median' else '':>26} "
                  f"{share_large if name == 'median' else '':>22}")
        if a.per_round:
            print(f"{'':<8} rounds: time x " + " ".join(f"{x:.3f}" for x in t_ratio))
            print(f"{'':<8} rounds: bw x   " + " ".join(f"{x:.3f}" for x in bw_ratio))
        modes = [(launch_mode(p[0]), launch_mode(p[1])) for p in probes[b]]
        if a.per_round:
            print(f"{'':<8} rounds: mode   " + " ".join(f"{m[0]}/{m[1]}" for m in modes))
        mode_lines.append(f"{b}: launches by mode (bare/cb): " + ", ".join(
            f"{m} {sum(x[0] == m for x in modes)}/{sum(x[1] == m for x in modes)}"
            for m in ("fast", "slow", "one", "mixed") if any(m in x for x in modes)))
        verdict = [(f"{b}: {small} B time x {med[2]:.3f} (p50 x "
                    f"{statistics.median(p50_ratio):.3f}{clock_text(range(len(rounds)))}), "
                    f"{large} B bw x {med[5]:.3f} over all {len(rounds)} rounds", med[2], med[5])]
        for m in ("one", "fast", "slow"):
            same = [i for i, x in enumerate(modes) if x == (m, m)]
            if not same or m == "one":
                continue
            tm = statistics.median(t_ratio[i] for i in same)
            bm = statistics.median(bw_ratio[i] for i in same)
            pm = statistics.median(p50_ratio[i] for i in same)
            verdict.append((f"{b}: {small} B time x {tm:.3f} (p50 x {pm:.3f}"
                            f"{clock_text(same)}), {large} B bw x "
                            f"{bm:.3f} over the "
                            f"{len(same)} rounds with both launches in the {m} mode", tm, bm))
        for text, tm, bm in verdict:
            verdicts.append(f"{text} (time {'meets' if tm <= TIME_TARGET else 'misses'} <= "
                            f"{TIME_TARGET}, bw {'meets' if bm >= BW_TARGET else 'misses'} >= "
                            f"{BW_TARGET})")
    print("time x = commbench time_us / bare time_us; bw x = commbench busbw / bare busbw; "
          "medians over rounds of each round's ratio (best: best round of each side); p50 x = "
          "the same for the median iteration (each the max over ranks), which preemption by "
          "other processes moves far less than the mean")
    print(f"core_pingpong round trip before/after each launch: {min(all_probes):.0f} - "
          f"{max(all_probes):.0f} ns" + (
              f"; fast below {(min(all_probes) * max(all_probes)) ** 0.5:.0f} ns, slow above"
              if mode_of(max(all_probes)) == "slow" else "; one mode (spread below 2x)"))
    for v in mode_lines + verdicts:
        print(v)
    if a.sweep:
        t0 = time.monotonic()
        run(mpi_launcher("openmpi", a.np) + [cb_ompi, "run", "--format", "csv"], env)
        print(f"default sweep (all collectives, 8 B - 64 MiB, validated, {a.np} ranks, Open MPI): "
              f"{time.monotonic() - t0:.1f} s wall")


if __name__ == "__main__":
    main()
