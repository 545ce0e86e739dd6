#!/usr/bin/env python3
"""False stragglers, detections and time taken of `run`'s straggler verdict (lateness on a common
clock) and of `probe links`' confirmed verdict, on 4 emulated hosts (network namespaces, one Open
MPI rank each, tests/cluster/emulated_hosts.sh; needs root).

  bench/straggler_rates.py [--commbench PATH] [--runs 20] [--late-runs 10] [--probes 10]
                           [--nic-probes 5] [--only SCENARIO,...]

Scenarios (each a line of the table; `named` is how many runs named anyone, `right` how many
named exactly the faulty part):
  healthy          `run` (-c allreduce,allgather -b 8 -e 64K -f 8), nothing wrong: RUNS runs
  healthy+hog      the same with a CPU hog (a busy loop) on core 1, pinned to no rank: RUNS runs
  late 0.3x .. 30x one case (allreduce 1 KiB, 30 timed iterations: 29 judged calls); rank 2
                   (h3) sleeps k times the case's call time between its calls
                   (COMMBENCH_TEST_FAULT=slow:2:US, US = k x the median iteration of healthy runs
                   of the case, measured first): LATE_RUNS runs
  hog on rank 2    the sweep with rank 2 pinned to core 1 beside a CPU hog pinned there too
  run, h2 100M     the sweep with h2's NIC throttled to 100 Mbit/s (emulated_hosts.sh throttle):
                   what run says of a slow link (it should not name a rank as late)
  links healthy    `probe links` with its defaults over the 4 healthy hosts: PROBES probes
  links h2 100M    the same with h2's NIC at 100 Mbit/s: NIC_PROBES probes; also over TCP from
                   the NIC (--nics eth0), whose time bound holds exactly
Each line gives the seconds per run (median) and, for probes, meta.seconds against
meta.time_bound_seconds. Prints `uptime` first and last: the rates are worth what the machine's
load lets them be (a loaded 2-core machine stretches a 50 us call to milliseconds).
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "tests", "cluster", "emulated_hosts.sh")
SWEEP = ["run", "-B", "mpi", "-c", "allreduce,allgather", "-b", "8", "-e", "64K", "-f", "8",
         "--format", "json"]
ONE_CASE = ["run", "-B", "mpi", "-c", "allreduce", "-b", "1K", "-e", "1K", "-w", "2", "-n", "30",
            "--format", "json"]
LATE = [0.3, 1, 3, 10, 30]


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


class Cluster:
    def __init__(self):
        p = subprocess.run([SCRIPT, "up", "-H", "4"], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"no emulated hosts: {p.stderr.strip()}")
        self.env = dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)
        self.id = self.env["CB_CLUSTER_ID"]

    def down(self):
        subprocess.run([SCRIPT, "down", self.id], capture_output=True)

    def throttle(self, host, rate, nic="eth0"):
        subprocess.run([SCRIPT, "throttle", self.id, host, rate, nic], check=True)

    def launcher(self):
        return (["mpirun.openmpi", "-np", "4", "-H", "h1:1,h2:1,h3:1,h4:1", "--oversubscribe"]
                + shlex.split(self.env["CB_CLUSTER_OMPI_ARGS"]))

    def run(self, cb, args, fault=None, wrap=None, timeout=900):
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        cmd = self.launcher()
        if fault:
            env["COMMBENCH_TEST_FAULT"] = fault
            cmd += ["-x", "COMMBENCH_TEST_FAULT"]
        cmd += (wrap or []) + [cb] + args
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        seconds = time.monotonic() - t0
        try:
            doc = json.loads(p.stdout)
        except json.JSONDecodeError:
            sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}")
        return doc, seconds


class Hog:
    """A busy loop pinned to `core`."""

    def __init__(self, core):
        self.p = subprocess.Popen(["taskset", "-c", str(core), "sh", "-c", "while :; do :; done"])
        time.sleep(0.2)

    def stop(self):
        self.p.kill()
        self.p.wait()


def pin_rank_wrapper(rank, core):
    """A launcher prefix that pins rank `rank` to `core` and leaves the others free."""
    f = tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False)
    f.write(f'#!/bin/sh\nif [ "$OMPI_COMM_WORLD_RANK" = "{rank}" ]; then '
            f'exec taskset -c {core} "$@"; fi\nexec "$@"\n')
    f.close()
    os.chmod(f.name, 0o755)
    return [f.name]


def straggler(doc):
    s = doc["meta"].get("straggler") or {}
    return s if s.get("found") else None


def line(name, runs, named, right, seconds, extra=""):
    print(f"{name:<22} {runs:>4} {named:>6} {right if right is not None else '-':>6} "
          f"{statistics.median(seconds) if seconds else 0:>8.1f}  {extra}", flush=True)


def run_scenario(c, cb, name, n, args, fault=None, wrap=None, want=None):
    named = right = 0
    seconds, where = [], []
    for _ in range(n):
        doc, s = c.run(cb, args, fault=fault, wrap=wrap)
        seconds.append(s)
        st = straggler(doc)
        if st:
            named += 1
            where.append(f"{st['rank']}@{st['host']}:{st['where'].split()[0]}")
            if want and (st["rank"], st["host"]) == want:
                right += 1
    line(name, n, named, right if want else None, seconds, " ".join(where[:6]))


def probe_scenario(c, cb, name, n, args, want=None):
    named = right = 0
    seconds, within = [], 0
    ratios, names = [], []
    for _ in range(n):
        doc, s = c.run(cb, ["probe", "links", "--format", "json"] + args)
        seconds.append(s)
        meta = doc["meta"]
        within += meta["seconds"] <= meta["time_bound_seconds"]
        ratios.append(f"{meta['seconds']:.0f}/{meta['time_bound_seconds']:.0f}")
        # What is named: hosts and links (either metric), rails.
        who = sorted({x["host"] + (f"->{x['peer']}" if x["peer"] else "") if x["host"]
                      else f"rail {x['rail']}" for x in doc["stragglers"]})
        if who:
            named += 1
            names.append("+".join(who))
            if want and who == [want]:
                right += 1
    line(name, n, named, right if want else None, seconds,
         f"{within}/{n} within the bound (seconds/bound: {' '.join(ratios[:6])}) "
         f"{' '.join(names[:6])}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--commbench", default=os.path.join(HERE, "..", "build", "cmd", "commbench"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--late-runs", type=int, default=10)
    ap.add_argument("--probes", type=int, default=10)
    ap.add_argument("--nic-probes", type=int, default=5)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else None
    want = lambda s: not only or s in only  # noqa: E731
    cb = os.path.abspath(a.commbench)
    print(uptime())
    print(f"{'scenario':<22} {'runs':>4} {'named':>6} {'right':>6} {'s/run':>8}  notes")
    c = Cluster()
    try:
        if want("healthy"):
            run_scenario(c, cb, "healthy", a.runs, SWEEP)
        if want("healthy+hog"):
            hog = Hog(1)
            try:
                run_scenario(c, cb, "healthy+hog", a.runs, SWEEP)
            finally:
                hog.stop()
        if want("late"):
            call = statistics.median(c.run(cb, ONE_CASE)[0]["results"][0]["p50_us"]
                                     for _ in range(3))
            print(f"{'':<22} the case's call time: {call:.1f} us (median iteration, healthy)")
            for k in LATE:
                us = max(1, round(k * call))
                run_scenario(c, cb, f"late {k:g}x ({us} us)", a.late_runs, ONE_CASE,
                             fault=f"slow:2:{us}", want=(2, "h3"))
        if want("hog"):
            hog = Hog(1)
            try:
                run_scenario(c, cb, "hog on rank 2", a.late_runs, SWEEP,
                             wrap=pin_rank_wrapper(2, 1), want=(2, "h3"))
            finally:
                hog.stop()
        if want("links-healthy"):
            probe_scenario(c, cb, "links healthy", a.probes, [])
        if want("throttled"):
            c.throttle("h2", "100mbit")
            run_scenario(c, cb, "run, h2 100M", min(a.runs, 5), SWEEP)
            probe_scenario(c, cb, "links h2 100M", a.nic_probes, [], want="h2")
            probe_scenario(c, cb, "links --nics eth0 100M", a.nic_probes, ["--nics", "eth0"],
                           want="h2")
    finally:
        c.down()
    print(uptime())


if __name__ == "__main__":
    main()
