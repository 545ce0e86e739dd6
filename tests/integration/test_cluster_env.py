"""env:// launches across emulated hosts (network namespaces with their own host names,
tests/cluster/emulated_hosts.sh), no MPI launcher: 3 hosts x 2 ranks started with the env://
variables only, as torchrun or Kubernetes start them, rank 0 serving the rendezvous on h1."""
import json
import os
import re

from cbtest import SOURCE_DIR, main, tempdir
from cluster import emulated_cluster
import env_ranks
from env_ranks import first_line
from test_cluster import LINKS, SMALL, check_run, commbench_pids, degraded_tree, left_running

LAYOUT = ["h1", "h1", "h2", "h2", "h3", "h3"]


def on_host(c):
    """Words that run a command on an emulated host, with its host name, as a pod would."""
    return lambda host: ["ip", "netns", "exec", f"cb{c.id}-{host}", "unshare", "--uts", "sh", "-c",
                         f'hostname {host}; exec "$@"', "sh"]


def start(c, args_for, **kw):
    return env_ranks.start(LAYOUT, args_for, master=c.addrs[0], prefix_for=on_host(c), **kw)


def codes(results):
    return [code for code, _, _ in results]


def test_run_gloo_topo_and_links_across_3_hosts_2_ranks_each():
    with emulated_cluster(3) as c:
        results, _ = start(c, lambda r: ["run", "-B", "gloo"] + SMALL).wait()
        assert codes(results) == [0] * 6, results
        doc = json.loads(results[0][1])
        assert doc["meta"]["launcher"]["kind"] == "env", doc["meta"]["launcher"]
        assert doc["meta"]["launcher"]["MASTER_ADDR"] == c.addrs[0]
        check_run({"meta": doc["meta"], "results": doc["results"] + [
            dict(r, backend="mpi") for r in doc["results"]]}, 3, 2)

        good = os.path.join(SOURCE_DIR, "tests", "data", "sysfs", "dgx-h100")
        bad = degraded_tree(tempdir())
        trees = {"h1": good, "h2": bad, "h3": good}
        results, _ = start(c, lambda r: ["topo", "--sysfs-root", trees[LAYOUT[r]],
                                         "--format", "json"]).wait()
        assert codes(results) == [0] * 6, results
        topo = json.loads(results[0][1])
        assert [h["host"] for h in topo["hosts"]] == ["h1", "h2", "h3"], topo["hosts"]
        assert [g["hosts"] for g in topo["groups"]] == [["h1", "h3"], ["h2"]], topo["groups"]
        assert {d["host"] for d in topo["differences"]} == {"h2"}

        results, _ = start(c, lambda r: LINKS).wait()
        assert codes(results) == [0] * 6, results
        links = json.loads(results[0][1])
        assert links["meta"]["participants"] == [0, 2, 4], links["meta"]
        assert {(q["src_host"], q["dst_host"]) for q in links["pairs"]} == {
            (a, b) for a in ("h1", "h2", "h3") for b in ("h1", "h2", "h3") if a != b}


def test_a_wrong_world_size_on_one_host_ends_every_rank_with_one_line():
    def wrong_on_h3(rank, env):
        if LAYOUT[rank] == "h3":
            env["WORLD_SIZE"] = "8"
    with emulated_cluster(3) as c:
        results, took = start(c, lambda r: ["run", "-B", "gloo", "--timeout", "30"],
                              env_for=wrong_on_h3).wait(timeout=60)
        assert took < 30, f"{took:.1f} s"
        for code, out, err in results:
            assert code == 2 and out == "", results
            line = first_line(err)
            assert line.startswith("commbench: env:// rendezvous: WORLD_SIZE differs between "
                                   "ranks: 8 on host h3"), err
            assert len(err.splitlines()) == 1, err


def test_another_plan_on_one_host_is_named_by_its_host():
    def args(rank):
        return ["run", "-B", "gloo", "-c", "broadcast" if rank == 3 else "allreduce", "-e", "1K",
                "--timeout", "30"]
    with emulated_cluster(3) as c:
        results, took = start(c, args).wait(timeout=60)
        assert took < 15, f"{took:.1f} s"
        for code, out, err in results:
            assert code == 2 and out == "", results
            assert first_line(err) == (
                "commbench: env:// rendezvous: rank 3 on host h2 runs another plan than rank 0: "
                "--collectives broadcast there, allreduce on rank 0; every process must be given "
                "the same options"), err


def test_a_host_killed_mid_run_is_named_by_the_survivors():
    args = ["run", "-B", "gloo", "-c", "allreduce", "-b", "1K", "-e", "1K", "--min-time", "60",
            "--format", "csv", "--progress", "never", "--timeout", "30"]
    with emulated_cluster(3) as c:
        ranks = start(c, lambda r: args)
        import time
        deadline = time.time() + 60
        while len(commbench_pids(c, "h2")) < 2 and time.time() < deadline:
            time.sleep(0.2)
        time.sleep(3)  # into the timed loop
        c.script("kill", c.id, "h2")
        killed = time.time()
        results, _ = ranks.wait(timeout=90)
        assert time.time() - killed < 30, "within the timeout"
        for rank in (0, 1, 4, 5):
            code, _, err = results[rank]
            assert code == 1, (rank, results)
            assert re.match(r"commbench: rank [23] on host h2 ended without a word", first_line(err)), err
        for h in c.hosts:
            assert not left_running(c, h), f"left running on {h}"


def test_a_host_cut_off_mid_run_is_named_by_the_survivors():
    # h2's link goes down: no connection closes, nothing reaches its ranks; TCP keepalives on
    # the rendezvous connections notice it after a third of --timeout.
    args = ["run", "-B", "gloo", "-c", "allreduce", "-b", "1K", "-e", "1K", "--min-time", "60",
            "--format", "csv", "--progress", "never", "--timeout", "30"]
    import subprocess
    import time
    with emulated_cluster(3) as c:
        ranks = start(c, lambda r: args)
        deadline = time.time() + 60
        while len(commbench_pids(c, "h2")) < 2 and time.time() < deadline:
            time.sleep(0.2)
        time.sleep(3)  # into the timed loop
        subprocess.run(["ip", "link", "set", f"cb{c.id}v2", "down"], check=True)
        cut = time.time()
        for rank in (0, 1, 4, 5):
            ranks.procs[rank].wait(timeout=60)
        took = time.time() - cut
        for p in ranks.procs[2:4]:
            p.kill()
        results, _ = ranks.wait(timeout=30)
        assert took < 30, f"{took:.1f} s: not within the timeout"
        for rank in (0, 1, 4, 5):
            code, _, err = results[rank]
            assert code == 1, (rank, results)
            assert re.match(r"commbench: rank [23] on host h2 ended without a word", first_line(err)), err


if __name__ == "__main__":
    main([test_run_gloo_topo_and_links_across_3_hosts_2_ranks_each,
          test_a_wrong_world_size_on_one_host_ends_every_rank_with_one_line,
          test_another_plan_on_one_host_is_named_by_its_host,
          test_a_host_killed_mid_run_is_named_by_the_survivors,
          test_a_host_cut_off_mid_run_is_named_by_the_survivors])
