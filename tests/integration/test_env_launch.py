"""env:// launches on one host (no namespaces needed): ranks started as torchrun and Kubernetes
start them, with MASTER_ADDR=127.0.0.1 and no MPI launcher. They meet, validate, write once
(rank 0), and every failure (bad or disagreeing variables, a port in use, a rank killed) ends
every rank with one line within the timeout. torchrun itself, where installed."""
import json
import os
import shutil
import signal
import socket
import subprocess
import time

from cbtest import COMMBENCH, Skip, main, tempdir
import env_ranks
from env_ranks import first_line

SMALL = ["-e", "1K", "-f", "128", "-w", "1", "-n", "5", "--format", "json", "--timeout", "60"]


def test_run_gloo_validates_and_rank_0_writes():
    out_file = os.path.join(tempdir(), "r.json")
    ranks = env_ranks.start(["here"] * 3, lambda r: ["run", "-B", "gloo", "--output", out_file]
                            + SMALL)
    results, _ = ranks.wait()
    assert [c for c, _, _ in results] == [0, 0, 0], results
    assert all(o == "" for _, o, _ in results[1:]), "only rank 0 writes"
    doc = json.loads(results[0][1])
    meta = doc["meta"]
    assert meta["nranks"] == 3 and meta["nnodes"] == 1, meta
    launcher = meta["launcher"]
    assert launcher["kind"] == "env", launcher
    assert launcher["WORLD_SIZE"] == "3" and launcher["MASTER_ADDR"] == "127.0.0.1", launcher
    assert launcher["LOCAL_WORLD_SIZE"] == "3", launcher
    rows = doc["results"]
    assert rows and all(r["backend"] == "gloo" and r["nranks"] == 3 for r in rows)
    assert all(r["wrong"] == 0 for r in rows if r["collective"] != "barrier"), rows
    assert json.load(open(out_file))["results"] == rows


def test_without_b_the_backend_is_gloo_and_mpi_is_refused():
    ranks = env_ranks.start(["here"] * 2, lambda r: ["run", "-c", "allreduce"] + SMALL)
    results, _ = ranks.wait()
    assert [c for c, _, _ in results] == [0, 0], results
    assert {r["backend"] for r in json.loads(results[0][1])["results"]} == {"gloo"}
    ranks = env_ranks.start(["here"] * 2, lambda r: ["run", "-B", "mpi", "-c", "allreduce"] + SMALL)
    results, _ = ranks.wait()
    for code, _, err in results:
        assert code == 1, results
        assert first_line(err).startswith("commbench: backend mpi cannot run here: an env:// "
                                          "launcher"), err


def test_bad_variables_are_one_line_exit_2():
    for change, words in [({"RANK": "3"}, "RANK 3 is not below WORLD_SIZE 3"),
                          ({"MASTER_ADDR": ""}, "without MASTER_ADDR"),
                          ({"MASTER_PORT": "http"}, "MASTER_PORT='http' is not an integer"),
                          ({"LOCAL_RANK": "5"}, "LOCAL_RANK 5 is not below LOCAL_WORLD_SIZE 1")]:
        env = env_ranks.rank_env("127.0.0.1", env_ranks.free_port(), 1, 3, 0, 1)
        env.update(change)
        start = time.time()
        p = subprocess.run([COMMBENCH, "run", "-B", "gloo"] + SMALL, env=env, capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 2, (change, p.returncode, p.stderr)
        lines = p.stderr.splitlines()
        assert len(lines) == 1 and words in lines[0], (change, p.stderr)
        assert time.time() - start < 10, "decided within seconds"


def test_a_world_size_that_differs_ends_every_rank_with_one_line():
    def wrong_on_2(rank, env):
        if rank == 2:
            env["WORLD_SIZE"] = "4"
    ranks = env_ranks.start(["here"] * 3, lambda r: ["run", "-B", "gloo", "--timeout", "30"],
                            env_for=wrong_on_2)
    results, took = ranks.wait()
    assert took < 30, f"{took:.1f} s"
    for code, out, err in results:
        assert code == 2 and out == "", results
        assert first_line(err).startswith("commbench: env:// rendezvous: WORLD_SIZE differs between "
                                          "ranks: 4 on host "), err
        assert len(err.splitlines()) == 1, err


def test_a_rank_past_world_size_tells_rank_0():
    # WORLD_SIZE 2 on the last rank of 3: its RANK is not below it; rank 0 hears of it at once.
    def wrong_on_2(rank, env):
        if rank == 2:
            env["WORLD_SIZE"] = "2"
    ranks = env_ranks.start(["here"] * 3, lambda r: ["run", "-B", "gloo", "--timeout", "60"],
                            env_for=wrong_on_2)
    results, took = ranks.wait()
    assert took < 30, f"{took:.1f} s: rank 0 did not hear of it"
    assert all(c == 2 for c, _, _ in results), results
    assert "RANK 2 is not below WORLD_SIZE 2" in first_line(results[2][2]), results[2]
    for _, _, err in results[:2]:
        assert first_line(err).startswith("commbench: env:// launch: the process with RANK=2 on "
                                          "host "), err


def test_a_port_in_use_and_a_missing_rank_are_named_within_the_timeout():
    with socket.socket() as held:
        held.bind(("", 0))
        held.listen(1)
        port = held.getsockname()[1]
        ranks = env_ranks.start(["here"], lambda r: ["run", "-B", "gloo", "--timeout", "10"],
                                port=port, world=2)
        (code, _, err), = ranks.wait()[0]
    assert code == 1, err
    assert first_line(err) == (f"commbench: env:// rendezvous: rank 0 cannot listen on MASTER_PORT "
                               f"{port}: Address already in use (another process holds it: give "
                               f"this job a free MASTER_PORT)"), err
    # A timeout that a loaded machine's start-up (rank 1 joining) stays well within.
    ranks = env_ranks.start(["here"] * 2, lambda r: ["run", "-B", "gloo", "--timeout", "15"],
                            world=3)
    results, took = ranks.wait()
    assert took < 15, f"{took:.1f} s"
    for code, _, err in results:
        assert code == 1, results
        assert "2 of WORLD_SIZE 3 ranks joined" in first_line(err), err
        assert "never came: rank 2" in err, err


def test_a_killed_rank_is_named_by_the_others_within_the_timeout():
    args = ["run", "-B", "gloo", "-c", "allreduce", "-b", "1K", "-e", "1K", "--min-time", "60",
            "--format", "csv", "--progress", "never", "--timeout", "30"]
    ranks = env_ranks.start(["here"] * 3, lambda r: args)
    time.sleep(3)  # into the timed loop
    assert ranks.procs[2].poll() is None
    ranks.procs[2].send_signal(signal.SIGKILL)
    killed = time.time()
    results, _ = ranks.wait(timeout=60)
    assert time.time() - killed < 30, "within the timeout"
    for code, _, err in results[:2]:
        assert code == 1, results
        assert first_line(err).startswith("commbench: rank 2 ended without a word"), err
        assert len(err.splitlines()) == 1, err


def run_ranks(args_for, world=2, env_for=None):
    """Starts `world` ranks here; returns their (code, stdout, stderr), the seconds until the
    last ended, and checks that none is left running."""
    port = env_ranks.free_port()
    ranks = env_ranks.start(["here"] * world, args_for, port=port, env_for=env_for)
    results, took = ranks.wait()
    assert env_ranks.left_running(port) == [], "processes left behind"
    return results, took


def quick(**given):
    """A short allreduce run; each keyword (its dashes as underscores) replaces that option."""
    options = {"-c": "allreduce", "-e": "1K", "-f": "128", "-w": "1", "-n": "5",
               "--format": "csv", "--progress": "never", "--timeout": "20"}
    options.update({("-" if len(k) == 1 else "--") + k.replace("_", "-"): v
                    for k, v in given.items()})
    return ["run", "-B", "gloo"] + [w for kv in options.items() for w in kv]


def test_ranks_that_run_other_plans_end_every_rank_naming_the_option():
    # The last rank given another -c, -e or -A: every rank ends at once, exit 2, rather than
    # each waiting in its own collective until --timeout.
    for extra, words in [({"c": "broadcast"}, "--collectives broadcast there, allreduce on rank 0"),
                         ({"e": "1M"}, "--max-bytes 1 MiB there, 1 KiB on rank 0"),
                         ({"A": "ring"}, "--algorithms ring there, default on rank 0")]:
        results, took = run_ranks(lambda r: quick(**(extra if r == 2 else {})), world=3)
        assert took < 10, f"{extra}: {took:.1f} s of --timeout 20"
        expected = (" runs another plan than rank 0: " + words +
                    "; every process must be given the same options")
        for rank, (code, out, err) in enumerate(results):
            assert code == 2 and out == "", (extra, rank, results)
            line = first_line(err)
            assert line.startswith("commbench: env:// rendezvous: rank 2 on host "), (extra, err)
            assert line.endswith(expected), (extra, rank, err)
            assert len(err.splitlines()) == 1, (extra, err)


def test_another_subcommand_or_model_is_named():
    replay = ["replay", "-B", "gloo", "-n", "2", "-w", "1", "--format", "json", "--preset"]
    for odd, words in [(["topo"], "subcommand topo there, run on rank 0"),
                       (replay + ["resnet50"], "--model/--preset resnet50: ")]:
        first = quick() if odd[0] == "topo" else replay + ["gpt2"]
        results, took = run_ranks(lambda r: odd if r == 1 else first)
        assert took < 10, f"{took:.1f} s"
        for code, _, err in results:
            assert code == 2, results
            assert first_line(err).startswith("commbench: env:// rendezvous: rank 1 on host "), err
            assert "runs another plan than rank 0: " + words in first_line(err), err


def test_two_spellings_of_one_plan_run_together():
    results, _ = run_ranks(lambda r: quick(e="1048576", min_time="5e-2") if r else
                           quick(e="1M", format="json", output=os.path.join(tempdir(), "r.csv")))
    assert [c for c, _, _ in results] == [0, 0], results


def test_a_process_without_a_good_rank_tells_rank_0():
    # RANK missing or not an integer on the last process: it says so, and tells rank 0, which
    # ends every rank at once naming its host.
    def without(rank, env):
        if rank == 2:
            del env["RANK"]

    def word(rank, env):
        if rank == 2:
            env["RANK"] = "two"
    for change, own, told in [
            (without, "commbench: env:// launch: without RANK: ",
             "commbench: env:// launch: a process without RANK on host "),
            (word, "commbench: env:// launch: RANK='two' is not an integer",
             "commbench: env:// launch: the process with RANK=two on host ")]:
        results, took = run_ranks(lambda r: quick(), world=3, env_for=change)
        assert took < 10, f"{took:.1f} s of --timeout 20: rank 0 did not hear of it"
        assert [c for c, _, _ in results] == [2, 2, 2], results
        assert first_line(results[2][2]).startswith(own), results[2]
        for _, _, err in results[:2]:
            assert first_line(err).startswith(told), err
            assert len(err.splitlines()) == 1, err


def test_a_command_line_refused_on_one_rank_ends_every_rank():
    # A typo on one process's command line: it tells rank 0 as for bad variables; rank 0's own
    # answers the ranks that reach it for a few seconds.
    for bad, told in [(2, "commbench: env:// launch: the process with RANK=2 on host "),
                      (0, "commbench: env:// launch: rank 0 on host ")]:
        results, took = run_ranks(lambda r: quick(c="allreduc" if r == bad else "allreduce"),
                                  world=3)
        assert took < 10, f"rank {bad}: {took:.1f} s of --timeout 20"
        assert [c for c, _, _ in results] == [2, 2, 2], (bad, results)
        assert first_line(results[bad][2]).startswith("commbench: unknown collective 'allreduc'")
        for rank, (_, _, err) in enumerate(results):
            if rank != bad:
                assert first_line(err).startswith(told), (bad, rank, err)
                assert "unknown collective 'allreduc'" in first_line(err), (bad, rank, err)


def test_a_process_that_cannot_reach_rank_0_is_named_with_the_likely_cause():
    # Without MASTER_ADDR a process cannot tell rank 0: it says so itself at once, and rank 0's
    # rendezvous names it with the likely cause when it gives up.
    def without_addr(rank, env):
        if rank == 1:
            del env["MASTER_ADDR"]
    results, took = run_ranks(lambda r: quick(timeout="6"), env_for=without_addr)
    assert took < 6, f"{took:.1f} s"
    assert results[1][0] == 2, results
    assert first_line(results[1][2]).startswith("commbench: env:// launch: without MASTER_ADDR"), \
        results[1]
    code, _, err = results[0]
    assert code == 1, results
    assert "never came: rank 1 (not started, or unable to reach rank 0 to say why: MASTER_ADDR " \
           "or MASTER_PORT missing there" in first_line(err), err


def test_ranks_that_time_out_together_say_so_once_each():
    # Rank 0 never enters the collective: both watchdogs fire at the same deadline. Each rank
    # prints one line, its own timeout or the peer's, never a kill that did not happen.
    def hang_rank_0(rank, env):
        env["COMMBENCH_TEST_FAULT"] = "hang:0"
    results, took = run_ranks(lambda r: quick(timeout="5"), env_for=hang_rank_0)
    assert took < 15, f"{took:.1f} s"
    for rank, (code, _, err) in enumerate(results):
        assert code in (1, 4), results
        assert len(err.splitlines()) == 1, (rank, err)
        line = first_line(err)
        assert (line.startswith("commbench: timeout: allreduce 8 B float sum made no progress for "
                                f"5 s (--timeout) on rank {rank}, host ")
                or line.startswith(f"commbench: rank {1 - rank} timed out: it made no progress "
                                   "within --timeout")), (rank, err)


def test_topo_and_probe_links():
    ranks = env_ranks.start(["here"] * 2, lambda r: ["topo", "--format", "json"])
    results, _ = ranks.wait()
    assert [c for c, _, _ in results] == [0, 0], results
    doc = json.loads(results[0][1])
    assert doc["schema"] == "commbench/cluster-topology/v1" and len(doc["hosts"]) == 1, doc
    links = ["probe", "links", "--size", "64K", "--window", "2", "--repeats", "2",
             "--latency-iters", "20", "--all-ranks", "--format", "json"]
    ranks = env_ranks.start(["here"] * 3, lambda r: links)
    results, _ = ranks.wait()
    assert [c for c, _, _ in results] == [0, 0, 0], results
    doc = json.loads(results[0][1])
    assert doc["schema"] == "commbench/links/v2" and len(doc["pairs"]) == 6, doc


def torchrun_command():
    """torchrun, or `python3 -m torch.distributed.run`, when PyTorch is installed."""
    if shutil.which("torchrun"):
        return ["torchrun"]
    p = subprocess.run(["python3", "-c", "import torch.distributed.run"], capture_output=True)
    if p.returncode == 0:
        return ["python3", "-m", "torch.distributed.run"]
    raise Skip("PyTorch is not installed (Debian: python3-torch, 77 MB to download, not in "
               "ci/install-deps); env_ranks.py starts ranks with the variables torchrun sets")


def test_under_torchrun():
    # Underscored flags: torchrun 1.13 (Debian bookworm) knows no other spelling; 2.x takes both.
    # --redirects/--tee 9:1: 1.13's default of 0 fails on Python 3.11 inside torchrun.
    base = torchrun_command() + ["--nproc_per_node", "2", "--redirects", "9:1", "--tee", "9:1"]
    args = ["--no_python", COMMBENCH, "run", "-B", "gloo"] + SMALL
    port = env_ranks.free_port()
    for how, rdzv in [("standalone", ["--standalone"]),
                      ("static", ["--nnodes", "1", "--master_addr", "127.0.0.1",
                                  "--master_port", str(port)])]:
        p = subprocess.run(base + rdzv + args, capture_output=True, text=True, timeout=240)
        assert p.returncode == 0, (how, p.returncode, p.stderr[-3000:])
        doc = json.loads(p.stdout[p.stdout.index("{"):])
        launcher = doc["meta"]["launcher"]
        assert launcher["kind"] == "env" and launcher["WORLD_SIZE"] == "2", (how, launcher)
        for name in env_ranks.ENV_VARIABLES:
            assert name in launcher, (how, name, launcher)
        assert all(r["wrong"] == 0 for r in doc["results"] if r["collective"] != "barrier")
        if how == "static":
            # torchrun's agent keeps MASTER_PORT for its own store; rank 0 serves on the next.
            assert launcher["TORCHELASTIC_USE_AGENT_STORE"] == "True", launcher
            assert launcher["rendezvous_port"] == str(port + 1), launcher


if __name__ == "__main__":
    main([test_run_gloo_validates_and_rank_0_writes,
          test_without_b_the_backend_is_gloo_and_mpi_is_refused,
          test_bad_variables_are_one_line_exit_2,
          test_a_world_size_that_differs_ends_every_rank_with_one_line,
          test_a_rank_past_world_size_tells_rank_0,
          test_a_port_in_use_and_a_missing_rank_are_named_within_the_timeout,
          test_a_killed_rank_is_named_by_the_others_within_the_timeout,
          test_ranks_that_run_other_plans_end_every_rank_naming_the_option,
          test_another_subcommand_or_model_is_named,
          test_two_spellings_of_one_plan_run_together,
          test_a_process_without_a_good_rank_tells_rank_0,
          test_a_command_line_refused_on_one_rank_ends_every_rank,
          test_a_process_that_cannot_reach_rank_0_is_named_with_the_likely_cause,
          test_ranks_that_time_out_together_say_so_once_each,
          test_topo_and_probe_links, test_under_torchrun])
