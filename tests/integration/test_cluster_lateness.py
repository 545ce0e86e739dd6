"""The rank the others wait for, across emulated hosts (network namespaces, one rank each or two):
a rank late by about its call's own time, or thirty times it, is named with its host; a healthy
run names nobody; a rank whose clock reads far off is placed by the clocks' estimate."""
import json

from cbtest import Skip, assert_straggler, is_openmpi, main, straggler_warnings
from cluster import emulated_cluster

# One case, 24 judged calls (the rule needs 20).
ONE_CASE = ["run", "-B", "mpi", "-c", "allreduce", "-b", "1K", "-e", "1K", "-w", "2", "-n", "25",
            "--format", "json"]


def needs_openmpi():
    if not is_openmpi():
        raise Skip("MPICH build: its UCX over TCP between the emulated hosts is too slow for "
                   "these runs (the lateness judgement does not depend on the MPI)")


def slow(rank, us):
    return f"slow:{rank}:{max(1, round(us))}"


def test_late_rank_is_named_with_its_host_and_a_healthy_run_names_nobody():
    # The call's own time is what a healthy run of the same case takes (its median iteration);
    # rank 2 (host h3) then sleeps that long between its calls.
    needs_openmpi()
    with emulated_cluster(4) as c:
        healthy = c.run(ONE_CASE, check=0)
        assert not straggler_warnings(healthy.stderr), healthy.stderr
        doc = json.loads(healthy.stdout)
        s = doc["meta"]["straggler"]
        assert not s["found"] and s["calls"] == 24 and s["between_us"] == 0, s
        call = doc["results"][0]["p50_us"]
        late = c.run(ONE_CASE, env={"COMMBENCH_TEST_FAULT": slow(2, call)}, check=0)
        assert_straggler(late, 2, host="h3")


def test_rank_late_30x_with_a_clock_far_off_is_still_named():
    # Rank 2's clock reads 50 ms behind (or 100 calls, whichever is more): far more than the call,
    # so its entries mean nothing until the clocks' estimate takes the offset off.
    needs_openmpi()
    with emulated_cluster(4) as c:
        call = json.loads(c.run(ONE_CASE, check=0).stdout)["results"][0]["p50_us"]
        skew = f"skew:2:-{max(50000, round(100 * call))}"
        p = c.run(ONE_CASE, env={"COMMBENCH_TEST_FAULT": f"{slow(2, 30 * call)},{skew}"}, check=0)
        doc = assert_straggler(p, 2, host="h3")
        s = doc["meta"]["straggler"]
        # Estimated, not assumed: the clock error is half a round trip between namespaces.
        assert 0 < s["clock_error_us"] < s["late_us"] / 2, s
        assert doc["results"][0]["lateness"]["clock_error_us"] > 0, doc["results"][0]


def test_ranks_of_one_host_late_together_name_the_host():
    # Two ranks on each of 3 hosts; both ranks of h2 sleep 20 ms between calls.
    needs_openmpi()
    with emulated_cluster(3) as c:
        p = c.run(["run", "-B", "mpi", "-c", "allreduce,allgather", "-b", "1K", "-e", "2K", "-w",
                   "1", "-n", "8", "--format", "json"], per_host=2,
                  env={"COMMBENCH_TEST_FAULT": "slow:2:20000,slow:3:20000"}, check=0)
        lines = straggler_warnings(p.stderr)
        want = "every rank of host h2 (ranks 2, 3) entered the calls late together: the host"
        assert lines and want in lines[0], p.stderr
        s = json.loads(p.stdout)["meta"]["straggler"]
        assert s["found"] and s["component"] == "host" and s["host"] == "h2", s
        assert s["host_ranks"] == [2, 3] and s["participants"] == 3, s


if __name__ == "__main__":
    main([test_late_rank_is_named_with_its_host_and_a_healthy_run_names_nobody,
          test_rank_late_30x_with_a_clock_far_off_is_still_named,
          test_ranks_of_one_host_late_together_name_the_host])
