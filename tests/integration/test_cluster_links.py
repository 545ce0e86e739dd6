"""`probe links` across emulated hosts, naming the component: time-bounded samples (a link at
100 Mbit/s no longer stalls the probe), and per-NIC passes over two rails (two bridges, eth0 and
eth1 on every host) that tell a bad NIC from a bad host from a bad rail. Wall times are printed
(`wall`) for the docs."""
import json
import os
import shlex
import time

from cbtest import COMMBENCH, Skip, is_openmpi, main, run, tempdir
from cluster import emulated_cluster

# Both rails' tests ask for a fifth of the median rather than the default 0.8: on a loaded 2-core
# machine an unthrottled emulated link (bandwidth made by CPUs) can fall to 0.7 of the median,
# and one healthy emulated rail was once measured at 0.45 of the other, while a link throttled to
# 100 Mbit/s measures under 0.05.
PER_NIC = ["probe", "links", "--per-nic", "--min-fraction", "0.2", "--format", "json"]


def need_openmpi():
    if not is_openmpi():
        raise Skip("MPICH build: with UCX over TCP a window of several messages does not complete "
                   "across the emulated hosts; the probe's control channel needs Open MPI here")


def timed(c, args, **kw):
    t0 = time.monotonic()
    p = c.run(args, check=0, **kw)
    wall = time.monotonic() - t0
    print(f"wall {wall:.1f} s: {' '.join(args)}")
    return p, wall


def bandwidth(doc):
    return [s for s in doc["stragglers"] if s["metric"] == "bandwidth"]


def test_defaults_finish_within_a_minute_with_a_host_at_100_mbit():
    need_openmpi()
    out = os.path.join(tempdir(), "links.json")
    with emulated_cluster(4) as c:
        c.script("throttle", c.id, "h2", "100mbit")
        p, wall = timed(c, ["probe", "links", "--output", out], timeout=120)
        lines = p.stdout.splitlines()
        assert lines[0].startswith("Stragglers"), p.stdout
        assert lines[1].startswith("  host h2: bandwidth"), p.stdout
        assert wall < 60, wall
        doc = json.load(open(out))
        meta = doc["meta"]
        print(f"probe {meta['seconds']:.1f} s, bound {meta['time_bound_seconds']:.1f} s, "
              f"{meta['confirmations']} pairs confirmed")
        assert meta["sample_time"] == 0.05 and meta["transport"] == "control", meta
        # The measured schedule stays within its stated bound (plus set-up and barriers).
        assert meta["seconds"] < meta["time_bound_seconds"] + 10, meta
        slow = [q for q in doc["pairs"] if "h2" in (q["src_host"], q["dst_host"])]
        # Measured from what the throttled link moved: 100 Mbit/s is 0.0125 GB/s. Measured again
        # one pair at a time (with four hosts, every pair is), the figure is the link's alone.
        assert all(0.002 < max(q["remeasured_GBps"]) < 0.02 for q in slow), slow


def test_defaults_name_no_healthy_host_and_a_100_mbit_nic_within_its_bound():
    # Four healthy hosts, the defaults (0.8 of the median): a host or link slow in the tournament
    # (on this shared machine, often) is measured again and, at par then, only listed as
    # unconfirmed. Then h2's one NIC at 100 Mbit/s, over TCP from that NIC, whose samples end
    # on time: named, within the stated bound.
    need_openmpi()
    with emulated_cluster(4) as c:
        p, _ = timed(c, ["probe", "links", "--format", "json"], timeout=120)
        doc = json.loads(p.stdout)
        assert doc["stragglers"] == [], doc["stragglers"]
        assert isinstance(doc["unconfirmed"], list), doc
        again = [q for q in doc["pairs"] if q["remeasured_GBps"]]
        assert len(again) == 12 and all(len(q["remeasured_GBps"]) == 2 for q in again), again
        c.script("throttle", c.id, "h2", "100mbit", "eth0")
        p, _ = timed(c, ["probe", "links", "--nics", "eth0", "--format", "json"], timeout=120)
        doc = json.loads(p.stdout)
        assert [(s["component"], s["host"], s["nic"]) for s in bandwidth(doc)] == [
            ("nic", "h2", "eth0")], doc["stragglers"]
        s = bandwidth(doc)[0]
        assert s["remeasured_fraction"] < 0.05 and s["noise_floor"] > 0, s
        meta = doc["meta"]
        print(f"probe {meta['seconds']:.1f} s, bound {meta['time_bound_seconds']:.1f} s")
        assert meta["seconds"] <= meta["time_bound_seconds"], meta


def test_per_nic_names_one_hosts_nic_and_no_other():
    need_openmpi()
    tmp = tempdir()
    out = os.path.join(tmp, "links.json")
    with emulated_cluster(4, rails=2) as c:
        c.script("throttle", c.id, "h2", "100mbit", "eth1")
        p, wall = timed(c, PER_NIC[:-2] + ["--output", out], timeout=120)
        # Bandwidth lines naming a NIC, host or rail only: on a 2-core machine loaded by other
        # work (load average 20) microsecond latencies of emulated links swing past any fraction,
        # and one single link (CPU-made bandwidth) was once left at 0.4 of its rail's median.
        lines = [x for x in p.stdout.split("\n\n")[0].splitlines()[1:]
                 if ": bandwidth" in x and not x.startswith("  link ")]
        assert len(lines) == 1 and lines[0].startswith(
            "  host h2 NIC eth1 (rail 1): bandwidth"), p.stdout
        assert "of the rail's median" in lines[0], p.stdout
        doc = json.load(open(out))
        assert doc["meta"]["rails"] == ["eth0", "eth1"] and doc["meta"]["transport"] == "tcp"
        assert {q["nic"] for q in doc["pairs"]} == {"eth0", "eth1"}
        bw = [s for s in bandwidth(doc) if s["component"] != "link"]
        assert [(s["component"], s["host"], s["nic"], s["rail"]) for s in bw] == [
            ("nic", "h2", "eth1", 1)], doc["stragglers"]
        assert bw[0]["fraction"] < 0.1, bw
    spec = os.path.join(tmp, "links.toml")
    with open(spec, "w") as f:
        f.write('[[links]]\nname = "rail 1"\nlinks_nic = "eth1"\nlinks_min_fraction_of_median = 0.2\n'
                '[[links]]\nname = "rail 0"\nlinks_nic = "eth0"\nlinks_min_fraction_of_median = 0.2\n')
    p = run(["check", spec, "--links", out])
    assert p.returncode == 5, (p.returncode, p.stdout, p.stderr)
    first = p.stderr.splitlines()[0]
    # The NIC first; a single noisy link of the rail may follow (see above).
    assert "(first: rail 1: straggler" in first and ": h2 NIC eth1 (rail 1)" in first, first
    assert "1 requirement failed" in first, first  # rail 0 passes


def test_per_nic_names_a_host_slow_on_both_nics():
    need_openmpi()
    with emulated_cluster(4, rails=2) as c:
        c.script("throttle", c.id, "h3", "100mbit")  # every NIC of h3
        p, wall = timed(c, PER_NIC, timeout=120)
        doc = json.loads(p.stdout)
        bw = bandwidth(doc)
        assert [(s["component"], s["host"], s["nic"]) for s in bw] == [("host", "h3", None)], \
            doc["stragglers"]


def test_per_nic_names_a_rail_slow_on_every_host():
    need_openmpi()
    with emulated_cluster(4, rails=2) as c:
        for h in c.hosts:
            c.script("throttle", c.id, h, "100mbit", "eth1")
        p, wall = timed(c, PER_NIC, timeout=120)
        doc = json.loads(p.stdout)
        bw = bandwidth(doc)
        assert [(s["component"], s["host"], s["nic"], s["rail"]) for s in bw] == [
            ("rail", None, "eth1", 1)], doc["stragglers"]


def test_launch_runs_each_nic_as_a_fresh_job():
    """The per-pass relaunch that NCCL's per-HCA passes need (NCCL reads NCCL_IB_HCA once per
    process), exercised with TCP: one job of fresh ranks per NIC under the launcher prefix, the
    passes merged into the rails verdict."""
    need_openmpi()
    tmp = tempdir()
    log = os.path.join(tmp, "jobs.log")
    with emulated_cluster(4, rails=2) as c:
        c.script("throttle", c.id, "h2", "100mbit", "eth1")
        cmd = [COMMBENCH, "probe", "links", "--transport", "tcp", "--nics", "eth0,eth1",
               "--min-fraction", "0.2", "--format", "json", "--launch", shlex.join(c.launcher(1))]
        p, wall = timed(c, cmd[1:], cmd=cmd, timeout=180, env={"COMMBENCH_TEST_JOB_LOG": log})
        assert p.returncode == 0, (p.returncode, p.stderr)
        doc = json.loads(p.stdout)
        assert doc["meta"]["fresh_processes"] is True and doc["meta"]["rails"] == ["eth0", "eth1"]
        assert doc["meta"]["transport"] == "tcp", doc["meta"]
        assert {(q["nic"], q["rail"]) for q in doc["pairs"]} == {("eth0", 0), ("eth1", 1)}
        bw = [s for s in bandwidth(doc) if s["component"] != "link"]
        assert [(s["component"], s["host"], s["nic"], s["rail"]) for s in bw] == [
            ("nic", "h2", "eth1", 1)], doc["stragglers"]
    jobs = [json.loads(line) for line in open(log)]
    # One job per NIC, each naming only its own NIC.
    assert len(jobs) == 2, jobs
    for job, nic in zip(jobs, ["eth0", "eth1"]):
        at = job.index("--nics")
        assert job[at + 1] == nic and job.count("--nics") == 1, job


def test_unknown_nic_is_a_usage_error():
    need_openmpi()
    with emulated_cluster(2, rails=2) as c:
        p = c.run(["probe", "links", "--nics", "eth0,eth7"], timeout=60)
        assert p.returncode == 2, (p.returncode, p.stderr)
        assert "commbench: --nics: host h1 has no NIC 'eth7'" in p.stderr, p.stderr


if __name__ == "__main__":
    main([test_defaults_finish_within_a_minute_with_a_host_at_100_mbit,
          test_defaults_name_no_healthy_host_and_a_100_mbit_nic_within_its_bound,
          test_per_nic_names_one_hosts_nic_and_no_other, test_per_nic_names_a_host_slow_on_both_nics,
          test_per_nic_names_a_rail_slow_on_every_host, test_launch_runs_each_nic_as_a_fresh_job,
          test_unknown_nic_is_a_usage_error])
