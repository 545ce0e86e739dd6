"""Slurm across emulated hosts: one slurmd per emulated host (tests/cluster/emulated_hosts.sh
with, then tests/cluster/slurm_cluster.sh with --emulated-hosts), so that `srun -N 3` starts
commbench's ranks on three hosts, as on a real cluster: mpi and gloo validated, the hosts and
SLURM_NNODES recorded in meta."""
import json
import os
import subprocess

from cbtest import COMMBENCH, Skip, is_openmpi, main


def srun(nodes, ntasks, args, timeout=300):
    if "SLURM_CONF" not in os.environ or "CB_CLUSTER_HOSTS" not in os.environ:
        raise Skip("not started under emulated_hosts.sh with ... slurm_cluster.sh with "
                   "--emulated-hosts")
    env = dict(os.environ)
    subnet = os.environ["CB_CLUSTER_SUBNET"]
    if is_openmpi():
        mpi = "--mpi=pmix"
        # TCP over the emulated links only, as CB_CLUSTER_OMPI_ARGS sets it for mpirun.
        env.update(OMPI_MCA_btl="self,tcp", OMPI_MCA_btl_tcp_if_include=subnet,
                   OMPI_MCA_oob_tcp_if_include=subnet)
    else:
        mpi = "--mpi=pmi2"
        env.update(UCX_TLS="tcp,self", UCX_NET_DEVICES="eth0")
    cmd = ["srun", "-N", str(nodes), "-n", str(ntasks), f"--ntasks-per-node={ntasks // nodes}",
           mpi, "--kill-on-bad-exit=1", COMMBENCH] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def check_across_hosts(ntasks):
    p = srun(3, ntasks, ["run", "-B", "mpi,gloo", "-c", "allreduce,allgather,broadcast,alltoall",
                         "-e", "64K", "-f", "64", "--min-time", "0.001", "--format", "json"])
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    doc = json.loads(p.stdout)
    meta = doc["meta"]
    assert meta["nnodes"] == 3 and meta["nranks"] == ntasks, meta
    assert sorted(meta["hosts"]) == ["h1", "h2", "h3"], meta["hosts"]
    assert meta["ranks_per_node"] == ntasks // 3, meta
    assert meta["launcher"]["kind"] == "slurm" and meta["launcher"]["SLURM_NNODES"] == "3", meta
    rows = doc["results"]
    for backend in ("mpi", "gloo"):
        mine = [r for r in rows if r["backend"] == backend]
        assert {r["collective"] for r in mine} == {"allreduce", "allgather", "broadcast",
                                                  "alltoall"}, (backend, mine)
        assert all(r["nnodes"] == 3 and r["nranks"] == ntasks for r in mine), mine
    assert all(r["wrong"] == 0 for r in rows), [r for r in rows if r["wrong"]]


def test_srun_spans_three_hosts_one_rank_each():
    check_across_hosts(3)


def test_srun_spans_three_hosts_two_ranks_each():
    check_across_hosts(6)


if __name__ == "__main__":
    main([test_srun_spans_three_hosts_one_rank_each, test_srun_spans_three_hosts_two_ranks_each])
