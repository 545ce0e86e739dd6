"""Under a real Slurm (slurmctld, slurmd, munge from Debian), started for this test by
tests/cluster/slurm_cluster.sh under a temporary directory and stopped afterwards: srun starts
commbench's ranks (PMIx for Open MPI, PMI-2 for MPICH; Gloo meets over the MPI control channel), the job's SLURM_* shape is
recorded in meta, and -N conflicting with srun's task count is a usage error."""
import json
import os
import subprocess
import sys

from cbtest import COLLECTIVES, COMMBENCH, SOURCE_DIR, Skip, is_openmpi, main

SCRIPT = os.path.join(SOURCE_DIR, "tests", "cluster", "slurm_cluster.sh")


def srun(ntasks, args, timeout=240):
    # Open MPI talks PMIx to srun; Debian's MPICH only PMI-1/2 (under pmix it starts singletons).
    mpi = "--mpi=pmix" if is_openmpi() else "--mpi=pmi2"
    cmd = ["srun", "-n", str(ntasks), mpi, "--kill-on-bad-exit=1", COMMBENCH] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def needs_slurm():
    if "SLURM_CONF" not in os.environ:
        raise Skip("not started under tests/cluster/slurm_cluster.sh")


def check_json_run(ntasks):
    p = srun(ntasks, ["run", "-B", "mpi,gloo", "-e", "1K", "-f", "32", "--min-time", "0.001",
                      "--format", "json"])
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    doc = json.loads(p.stdout)
    meta = doc["meta"]
    assert meta["nranks"] == ntasks and meta["nnodes"] == 1, meta
    assert meta["ranks_per_node"] == ntasks, meta
    launcher = meta["launcher"]
    assert launcher["kind"] == "slurm", launcher
    assert launcher["SLURM_NTASKS"] == str(ntasks), launcher
    assert launcher["SLURM_NNODES"] == "1", launcher
    assert launcher["SLURM_PROCID"] == "0" and launcher["SLURM_LOCALID"] == "0", launcher
    assert launcher["SLURM_JOB_ID"].isdigit(), launcher
    rows = doc["results"]
    for backend in ("mpi", "gloo"):
        mine = [r for r in rows if r["backend"] == backend]
        assert {r["collective"] for r in mine} == set(COLLECTIVES), (backend, mine)
        assert all(r["nranks"] == ntasks for r in mine)
    checked = [r for r in rows if r["collective"] != "barrier"]
    assert checked and all(r["wrong"] == 0 for r in checked), [r for r in rows if r["wrong"]]


def test_srun_2_tasks_mpi_and_gloo():
    needs_slurm()
    check_json_run(2)


def test_srun_3_tasks_mpi_and_gloo():
    needs_slurm()
    check_json_run(3)


def test_nranks_conflicting_with_srun_is_a_usage_error():
    needs_slurm()
    p = srun(2, ["run", "-B", "gloo", "-N", "3", "-c", "allreduce"])
    assert p.returncode != 0, p
    assert "commbench: -N 3 conflicts with the 2 ranks the launcher started" in p.stderr, p.stderr
    # srun reports the tasks' exit code as its own.
    assert p.returncode == 2, f"exit {p.returncode}: {p.stderr}"


if __name__ == "__main__":
    main([test_srun_2_tasks_mpi_and_gloo, test_srun_3_tasks_mpi_and_gloo,
          test_nranks_conflicting_with_srun_is_a_usage_error])
