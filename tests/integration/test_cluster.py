"""Across hosts: commbench under mpirun/mpiexec on emulated hosts (network namespaces with their
own host names, tests/cluster/emulated_hosts.sh). Host names do not resolve there, so Gloo has
to find its interface itself."""
import json
import os
import shlex
import shutil
import subprocess
import time

from cbtest import (COLLECTIVES, COMMBENCH, SOURCE_DIR, STRAGGLER_ARGS, Skip, assert_straggler,
                    is_openmpi, main, run, tempdir)
from cluster import SCRIPT, emulated_cluster

SMALL = ["-e", "1K", "-f", "128", "-w", "1", "-n", "5", "--format", "json"]


def check_run(doc, nhosts, per_host):
    meta = doc["meta"]
    assert meta["hosts"] == [f"h{i}" for i in range(1, nhosts + 1)], meta["hosts"]
    assert meta["nnodes"] == nhosts and meta["ranks_per_node"] == per_host, meta
    assert meta["nranks"] == nhosts * per_host, meta
    rows = doc["results"]
    for backend in ("mpi", "gloo"):
        mine = [r for r in rows if r["backend"] == backend]
        assert {r["collective"] for r in mine} == set(COLLECTIVES), (backend, mine)
        assert all(r["nnodes"] == nhosts and r["nranks"] == nhosts * per_host for r in mine)
    checked = [r for r in rows if r["collective"] != "barrier"]
    assert checked and all(r["wrong"] == 0 for r in checked), [r for r in rows if r["wrong"]]


def test_mpi_and_gloo_across_3_hosts_1_and_2_ranks_each():
    with emulated_cluster(3) as c:
        for per_host in (1, 2):
            p = c.run(["run", "-B", "mpi,gloo"] + SMALL, per_host=per_host, check=0)
            check_run(json.loads(p.stdout), 3, per_host)
        table = c.run(["run", "-B", "gloo", "-c", "allreduce", "-e", "64", "-w", "1", "-n", "3"],
                      check=0).stdout
        assert "3 ranks on 3 nodes (h1,h2,h3)" in table.splitlines()[0], table


def test_straggling_rank_is_named_with_its_host():
    # 2 ranks on each of 3 hosts: rank 3 (the second on h2) sleeps 20 ms after each call. Under
    # MPICH, whose UCX over TCP stalls on KiB messages between 6 ranks across the emulated hosts
    # (the links tests above skip for the same reason), the rule, which does not depend on the
    # backend, is checked through Gloo alone.
    with emulated_cluster(3) as c:
        for backend in ("mpi", "gloo") if is_openmpi() else ("gloo",):
            p = c.run(STRAGGLER_ARGS + ["-B", backend], per_host=2,
                      env={"COMMBENCH_TEST_FAULT": "slow:3:20000"}, check=0)
            doc = assert_straggler(p, 3, host="h2")
            assert doc["meta"]["hosts"] == ["h1", "h2", "h3"], doc["meta"]


def test_gloo_iface_overrides_the_route():
    with emulated_cluster(2) as c:
        p = c.run(["run", "-B", "gloo", "-c", "allreduce", "-e", "1K"] + SMALL[2:] +
                  ["--gloo-iface", "eth0"], check=0)
        assert all(r["wrong"] == 0 for r in json.loads(p.stdout)["results"])
        bad = c.run(["run", "-B", "gloo", "-c", "allreduce", "--gloo-iface", "nonexistent0"])
        assert bad.returncode != 0
        assert "unknown --gloo-iface 'nonexistent0'" in bad.stderr, bad.stderr


def degraded_tree(tmp):
    """The DGX H100 fixture with GPU 0000:18:00.0 trained down to 16 GT/s x8."""
    tree = os.path.join(tmp, "dgx-degraded")
    shutil.copytree(os.path.join(SOURCE_DIR, "tests", "data", "sysfs", "dgx-h100"), tree,
                    symlinks=True)
    dev = os.path.join(tree, "bus", "pci", "devices", "0000:18:00.0")
    for name, value in [("current_link_width", "8"), ("current_link_speed", "16.0 GT/s PCIe"),
                        ("max_link_width", "8"), ("max_link_speed", "16.0 GT/s PCIe")]:
        with open(os.path.join(dev, name), "w") as f:
            f.write(value + "\n")
    return tree


def test_topo_across_hosts_names_the_odd_host():
    if not is_openmpi():
        raise Skip("MPICH build: an MPMD topo job across the emulated hosts (hydra, UCX over "
                   "TCP) does not finish here; not solved")
    good = os.path.join(SOURCE_DIR, "tests", "data", "sysfs", "dgx-h100")
    tmp = tempdir()
    bad = degraded_tree(tmp)
    with emulated_cluster(3) as c:
        parts = [("h1", good), ("h2", bad), ("h3", good)]
        cmd = c.mpmd([(h, ["topo", "--sysfs-root", t, "--format", "json"]) for h, t in parts])
        doc = json.loads(c.run([], cmd=cmd, check=0).stdout)
        assert doc["schema"] == "commbench/cluster-topology/v1", doc.get("schema")
        assert [h["host"] for h in doc["hosts"]] == ["h1", "h2", "h3"]
        assert [g["hosts"] for g in doc["groups"]] == [["h1", "h3"], ["h2"]], doc["groups"]
        fields = {d["field"]: d for d in doc["differences"]}
        assert {d["host"] for d in doc["differences"]} == {"h2"}
        width = fields["pci_devices[0000:18:00.0].link.current_width"]
        assert width["value"] == 8 and width["majority"] == 16, width
        table = c.run([], cmd=c.mpmd([(h, ["topo", "--sysfs-root", t]) for h, t in parts]),
                      check=0).stdout
        assert "3 hosts, 2 distinct shapes" in table and "h1,h3" in table, table

    topo_file = os.path.join(tmp, "cluster.json")
    with open(topo_file, "w") as f:
        json.dump(doc, f)
    spec = os.path.join(tmp, "spec.toml")
    with open(spec, "w") as f:
        f.write('[[topology]]\nname = "same nodes"\nidentical_hosts = true\n'
                '[[topology]]\nname = "gpu links"\npcie_min_gts = 32\n')
    p = run(["check", spec, "--topology", topo_file])
    assert p.returncode == 5, (p.returncode, p.stdout, p.stderr)
    first = p.stderr.splitlines()[0]
    assert first.startswith("commbench: 2 requirements failed") and "h2" in first, first
    assert "1 of 3 hosts differ: h2" in p.stdout, p.stdout
    assert any("h2: " in line and "0000:18:00.0" in line for line in p.stdout.splitlines()), p.stdout
    assert "h1:" not in p.stdout and "h3:" not in p.stdout, p.stdout


LINKS = ["probe", "links", "--size", "256K", "--window", "4", "--repeats", "3",
         "--latency-iters", "50", "--min-fraction", "0.5", "--format", "json"]


def test_probe_links_names_exactly_the_throttled_host():
    if not is_openmpi():
        raise Skip("MPICH build: with UCX over TCP (needed to cross the emulated links) a window "
                   "of several 256 KiB messages does not complete across the emulated hosts "
                   "(one message at a time does); not solved")
    tmp = tempdir()
    with emulated_cluster(3) as c:
        # No throttle: no host is named twice in 3 runs (a throttled host is named every time).
        # Both halves ask for half the median rather than the default 0.8: on an idle machine
        # no unthrottled pair falls under 0.8, but on a loaded 2-core machine a rank starved for
        # seconds left one link at 0.78 even after the confirmation passes; the throttled host
        # measures under 0.05.
        named = []
        for _ in range(3):
            doc = json.loads(c.run(LINKS, check=0).stdout)
            assert doc["schema"] == "commbench/links/v2"
            assert doc["meta"]["rounds"] == 3 and doc["meta"]["participants"] == [0, 1, 2]
            assert len(doc["pairs"]) == 6, doc["pairs"]
            named += sorted({s["host"] for s in doc["stragglers"]})
        assert all(named.count(h) < 2 for h in named), named
        c.script("throttle", c.id, "h2", "400mbit")
        out = os.path.join(tmp, "links.json")
        p = c.run(LINKS[:-2] + ["--output", out], check=0)
        assert p.stdout.startswith("Stragglers"), p.stdout
        assert "host h2: bandwidth" in p.stdout.splitlines()[1], p.stdout
        doc = json.load(open(out))
        bw = [s for s in doc["stragglers"] if s["metric"] == "bandwidth"]
        assert [(s["host"], s["peer"]) for s in bw] == [("h2", None)], doc["stragglers"]
        assert bw[0]["fraction"] < 0.5, bw
        assert {s["host"] for s in doc["stragglers"]} == {"h2"}, doc["stragglers"]
        hosts = {h["host"]: h for h in doc["hosts"]}
        assert hosts["h2"]["median_GBps"] < hosts["h1"]["median_GBps"], hosts
    spec = os.path.join(tmp, "links.toml")
    with open(spec, "w") as f:
        f.write('[[links]]\nname = "no straggler"\nlinks_min_fraction_of_median = 0.5\n')
    p = run(["check", spec, "--links", out])
    assert p.returncode == 5, (p.returncode, p.stdout, p.stderr)
    first = p.stderr.splitlines()[0]
    assert "straggler: h2" in first and "h1" not in first and "h3" not in first, first


def test_probe_links_two_ranks_per_host_measures_hosts():
    if not is_openmpi():
        raise Skip("MPICH build: with UCX over TCP a window of several 256 KiB messages does not "
                   "complete across the emulated hosts (one message at a time does); not solved")
    with emulated_cluster(3) as c:
        doc = json.loads(c.run(LINKS, per_host=2, check=0).stdout)
        # One rank per host by default when hosts have several: ranks 0, 2, 4.
        assert doc["meta"]["per_host"] and doc["meta"]["participants"] == [0, 2, 4], doc["meta"]
        assert {(q["src_host"], q["dst_host"]) for q in doc["pairs"]} == {
            (a, b) for a in ("h1", "h2", "h3") for b in ("h1", "h2", "h3") if a != b}
        every = json.loads(c.run(LINKS + ["--all-ranks"], per_host=2, check=0).stdout)
        assert len(every["pairs"]) == 30 and every["meta"]["rounds"] == 5
        assert len(every["hosts"]) == 3


KILL_RUN = ["run", "-B", "mpi,gloo", "-c", "allreduce", "-b", "1K", "-e", "1K", "--min-time", "60",
            "--format", "csv", "--progress", "never"]


def commbench_pids(c, host):
    """commbench processes running in an emulated host (a zombie has ended: not counted)."""
    found = []
    for pid in c.pids(host):
        try:
            with open(f"/proc/{pid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            if name == "commbench" and state != "Z":
                found.append(pid)
        except OSError:
            pass
    return found


def left_running(c, host, grace=10):
    """commbench processes still running in `host` once the launcher's kills have had `grace`
    seconds to land: a launcher may exit while its remote daemons' SIGKILLs are in flight."""
    deadline = time.time() + grace
    while commbench_pids(c, host) and time.time() < deadline:
        time.sleep(0.1)
    return commbench_pids(c, host)


def kill_host_mid_run(c, cmd):
    """Starts cmd, waits until h2's rank runs, kills every process of h2; returns the result."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 60
    while not commbench_pids(c, "h2") and time.time() < deadline and p.poll() is None:
        time.sleep(0.2)
    assert commbench_pids(c, "h2"), "no rank started on h2"
    time.sleep(2)  # into the timed loop
    c.script("kill", c.id, "h2")
    out, err = p.communicate(timeout=120)
    return p.returncode, out, err


def test_a_host_killed_mid_run_is_named_and_nothing_is_left_running():
    with emulated_cluster(3) as c:
        # commbench as the parent of the launcher: exit 1, the first line names rank and host.
        code, out, err = kill_host_mid_run(
            c, [COMMBENCH] + KILL_RUN + ["--launch", shlex.join(c.launcher(1))])
        assert code == 1, (code, err)
        first = err.splitlines()[0]
        assert first.startswith("commbench: ") and "rank 1 on host h2" in first, err
        for h in c.hosts:
            assert not left_running(c, h), f"left running on {h}"
        # Under the user's own mpirun the launcher's exit code is the job's: non-zero, and
        # nothing is left running either.
        code, out, err = kill_host_mid_run(c, c.launcher(1) + [COMMBENCH] + KILL_RUN)
        assert code != 0, err
        for h in c.hosts:
            assert not left_running(c, h), f"left running on {h}"


def test_script_cleans_up_after_itself():
    # `with` removes the hosts when the command ends, here by an error exit.
    p = subprocess.run([SCRIPT, "with", "-H", "2", "--", "sh", "-c",
                        "echo $CB_CLUSTER_ID; ip netns list | grep -c cb$CB_CLUSTER_ID-; exit 3"],
                       capture_output=True, text=True)
    assert p.returncode == 3, p
    ident, count = p.stdout.split()
    assert count == "2", p.stdout
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"cb{ident}-" not in left, left
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert f"cb{ident}" not in links, links


def test_roof_is_the_given_link_rate_and_a_throttled_host_fails_expect_auto():
    """Every host's link is shaped to 400 Mbit/s with tc and the run is told so: the roof is that
    rate, and a normal run passes `check --expect auto`. With one host throttled to 20 Mbit/s,
    the collectives that crossed it fail and are named. TCP through tc's token bucket reaches
    only 0.1-0.5 of the shaped rate at these sizes (measured), so the threshold is given."""
    tmp = tempdir()
    # MPICH's UCX over TCP does not complete MiB messages across the emulated hosts (see above):
    # there the roof, which does not depend on the backend, is checked through Gloo.
    backend = "mpi" if is_openmpi() else "gloo"
    args = ["run", "-B", backend, "-c", "allgather,broadcast", "-b", "1M", "-e", "2M", "-w", "1",
            "-n", "2", "--roof-link-gbps", "0.4", "--format", "json"]
    check = ["check", "--expect", "auto", "--min-efficiency", "0.15"]
    with emulated_cluster(2) as c:
        for h in c.hosts:
            c.script("throttle", c.id, h, "400mbit")
        good = os.path.join(tmp, "good.json")
        with open(good, "w") as f:
            f.write(c.run(args, check=0).stdout)
        rows = json.load(open(good))["results"]
        assert all(r["roof_GBps"] == 0.05 for r in rows), [r["roof_GBps"] for r in rows]
        assert all("network: 1 x 0.4 Gb/s per host (given)" in r["roof_basis"] for r in rows), rows
        p = run(check + [good])
        assert p.returncode == 0, (p.stdout, p.stderr)
        c.script("throttle", c.id, "h2", "20mbit")
        slow = os.path.join(tmp, "slow.json")
        with open(slow, "w") as f:
            f.write(c.run(args, check=0, timeout=400).stdout)
    p = run(check + [slow])
    assert p.returncode == 5, (p.returncode, p.stdout, p.stderr)
    assert f"allgather ({backend}/" in p.stderr.splitlines()[0], p.stderr
    assert "efficiency" in p.stderr.splitlines()[0], p.stderr
    assert "FAIL" in p.stdout and f"broadcast ({backend}/" in p.stdout, p.stdout

if __name__ == "__main__":
    main([test_mpi_and_gloo_across_3_hosts_1_and_2_ranks_each, test_gloo_iface_overrides_the_route,
          test_straggling_rank_is_named_with_its_host,
          test_topo_across_hosts_names_the_odd_host, test_probe_links_names_exactly_the_throttled_host,
          test_probe_links_two_ranks_per_host_measures_hosts,
          test_a_host_killed_mid_run_is_named_and_nothing_is_left_running,
          test_script_cleans_up_after_itself,
          test_roof_is_the_given_link_rate_and_a_throttled_host_fails_expect_auto])
