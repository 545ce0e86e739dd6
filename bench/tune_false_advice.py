#!/usr/bin/env python3
"""How often `commbench tune --env` gives false advice, and how often it finds a real gain.

  bench/tune_false_advice.py [--commbench PATH] [--runs 20] [--rounds N] [--hog]
                             [--slow-us 1000] [--min-time 0.01] [--algorithms default]
                             [--skip-noop] [--skip-slowed] [--ompi]

no-op grid: RUNS times `tune -B mpi -N 2 -c allreduce,broadcast -b 8 -e 4M -f 8
  --env COMMBENCH_UNUSED_KNOB=a,b,c --emit-env FILE`: a variable nothing reads, so any setting
  written to FILE is false advice. With --hog, a CPU hog (`yes >/dev/null`) is switched on and
  off at random moments during each run (each second a coin decides), so that some launches run
  beside it and some do not: the machine's slow mode, on demand.
slowed reference: RUNS times the same sweep with COMMBENCH_TEST_FAULT=slow:0:SLOW_US in the
  current environment (rank 0 sleeps SLOW_US microseconds after every call) and the grid
  `--env COMMBENCH_TEST_FAULT=,slow:0:SLOW_US`: the empty value lifts the slowdown, and a run
  detects it when FILE sets COMMBENCH_TEST_FAULT=''.
--ompi (an Open MPI build): RUNS times the same sweep with a real Open MPI variable whose effect
  is known here: the current environment has OMPI_MCA_btl=^vader (no shared-memory transport:
  the two ranks talk over TCP loopback; OMPI_MCA_pml=ob1 throughout, so that the BTLs are what
  carries the messages) and the grid `--env OMPI_MCA_btl=^vader,^tcp`; a run finds the effect
  when FILE sets OMPI_MCA_btl to ^tcp (shared memory back).

--algorithms is tune's -A (default: `default`, so that a run takes about a minute on the 2-core
test machine; `all` is tune's own default and takes a few times longer).
Prints `uptime` first and last, each run's verdict line, and the rates with their run counts.
--rounds is passed to tune when given (else tune's default).
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading

SWEEP = ["-B", "mpi", "-N", "2", "-c", "allreduce,broadcast", "-b", "8", "-e", "4M", "-f", "8"]


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def default_commbench():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "build", "cmd", "commbench")


class Hog:
    """Switches `yes >/dev/null` on and off at random, once a second, until stopped."""

    def __init__(self):
        self.proc = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        while not self.stop.wait(1.0):
            on = random.random() < 0.5
            if on and self.proc is None:
                self.proc = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL)
            elif not on and self.proc is not None:
                self.end()

    def end(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.end()


def print_rates(results):
    """One line per (name, hits, runs): the hits and their share of the runs."""
    for name, hits, runs in results:
        rate = f"{100.0 * hits / runs:.0f} %" if runs else "-"
        print(f"{name}: {hits} of {runs} runs ({rate})")


def one_run(args, grid, env_extra):
    with tempfile.TemporaryDirectory(prefix="tune-false-advice-") as d:
        emit = os.path.join(d, "best.env")
        cmd = [args.commbench, "tune", *SWEEP, "-A", args.algorithms, "--min-time",
               str(args.min_time), "--env", grid,
               "--emit-env", emit, "--format", "csv"]
        if args.rounds:
            cmd += ["--rounds", str(args.rounds)]
        env = dict(os.environ, **env_extra)
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            print(f"  exit {p.returncode}: {p.stderr.strip().splitlines()[-1:]}")
            return None, ""
        # Under --format csv the verdict is on stderr (stdout holds the CSV alone).
        prefix = "commbench: # tune --env: "
        line = next((l for l in p.stderr.splitlines() if l.startswith(prefix)), "")
        settings = [l for l in open(emit).read().splitlines() if l and not l.startswith("#")]
        return settings, line[len(prefix):]


def series(args, name, grid, env_extra, hit, hog):
    hits = runs = 0
    print(f"{name}: {args.runs} runs{' with the CPU hog switched at random' if hog else ''}")
    for i in range(args.runs):
        if hog:
            with Hog():
                settings, line = one_run(args, grid, env_extra)
        else:
            settings, line = one_run(args, grid, env_extra)
        if settings is None:
            continue
        runs += 1
        hits += hit(settings)
        print(f"  run {i + 1}: {'SET ' + ' '.join(settings) if settings else 'nothing set'} | "
              f"{line}")
    return hits, runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commbench", default=default_commbench())
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=0)
    ap.add_argument("--hog", action="store_true", help="also the no-op grid with the CPU hog")
    ap.add_argument("--slow-us", type=int, default=1000)
    ap.add_argument("--min-time", type=float, default=0.01)
    ap.add_argument("--algorithms", default="default")
    ap.add_argument("--skip-noop", action="store_true")
    ap.add_argument("--skip-slowed", action="store_true")
    ap.add_argument("--ompi", action="store_true", help="also the real Open MPI variable case")
    args = ap.parse_args()
    print(uptime())
    quiet = {"COMMBENCH_TEST_FAULT": ""}
    results = []
    if not args.skip_noop:
        noop = "COMMBENCH_UNUSED_KNOB=a,b,c"
        results.append(("false advice, no-op grid",
                        *series(args, "no-op grid", noop, quiet, bool, False)))
        if args.hog:
            results.append(("false advice, no-op grid, CPU hog",
                            *series(args, "no-op grid", noop, quiet, bool, True)))
    if not args.skip_slowed:
        slow = f"slow:0:{args.slow_us}"
        results.append(("detection, slowed reference",
                        *series(args, "slowed reference", f"COMMBENCH_TEST_FAULT=,{slow}",
                                {"COMMBENCH_TEST_FAULT": slow},
                                lambda s: "COMMBENCH_TEST_FAULT=''" in s, False)))
    if args.ompi:
        results.append(("detection, Open MPI without shared memory",
                        *series(args, "OMPI_MCA_btl", "OMPI_MCA_btl=^vader,^tcp",
                                {"COMMBENCH_TEST_FAULT": "", "OMPI_MCA_pml": "ob1",
                                 "OMPI_MCA_btl": "^vader"},
                                lambda s: any(x.startswith("OMPI_MCA_btl=") and "^tcp" in x
                                              for x in s), False)))
    print(uptime())
    print_rates(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
