"""Emulated hosts for integration tests: a context manager over tests/cluster/emulated_hosts.sh
(network namespaces h1..hN on one bridge) and the launcher command that spans them with this
build's MPI (Open MPI's rsh agent, or MPICH hydra's launcher options)."""
import contextlib
import os
import shlex
import subprocess

from cbtest import COMMBENCH, SOURCE_DIR, Skip, is_openmpi

SCRIPT = os.path.join(SOURCE_DIR, "tests", "cluster", "emulated_hosts.sh")


class Cluster:
    def __init__(self, env):
        self.env = env
        self.id = env["CB_CLUSTER_ID"]
        self.hosts = env["CB_CLUSTER_HOSTS"].split(",")
        self.addrs = env["CB_CLUSTER_ADDRS"].split(",")

    def launcher(self, per_host=1, hosts=None):
        """mpirun/mpiexec words that start per_host ranks on each host."""
        hosts = hosts or self.hosts
        n = per_host * len(hosts)
        if is_openmpi():
            spec = ",".join(f"{h}:{per_host}" for h in hosts)
            return (["mpirun.openmpi", "-np", str(n), "-H", spec, "--oversubscribe"]
                    + shlex.split(self.env["CB_CLUSTER_OMPI_ARGS"]))
        spec = ",".join(f"{h}:{per_host}" for h in hosts)
        return (["mpiexec.mpich", "-n", str(n), "-hosts", spec]
                + shlex.split(self.env["CB_CLUSTER_HYDRA_ARGS"]))

    def mpmd(self, parts):
        """Words that start one rank per (host, commbench args) part."""
        if is_openmpi():
            cmd = (["mpirun.openmpi", "-H", ",".join(h for h, _ in parts)]
                   + shlex.split(self.env["CB_CLUSTER_OMPI_ARGS"]))
            for i, (h, args) in enumerate(parts):
                cmd += ([":"] if i else []) + ["-np", "1", "-H", h, COMMBENCH] + list(args)
            return cmd
        # Hydra takes one global host list and fills it in order, one slot per host here.
        cmd = (["mpiexec.mpich", "-hosts", ",".join(f"{h}:1" for h, _ in parts)]
               + shlex.split(self.env["CB_CLUSTER_HYDRA_ARGS"]))
        for i, (h, args) in enumerate(parts):
            cmd += ([":"] if i else []) + ["-n", "1", COMMBENCH] + list(args)
        return cmd

    def run(self, args, per_host=1, timeout=240, check=None, env=None, cmd=None):
        cmd = cmd or self.launcher(per_host) + [COMMBENCH] + list(args)
        full_env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        full_env.update(env or {})
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env)
        if check is not None and p.returncode != check:
            raise AssertionError(f"{' '.join(cmd)}: exit {p.returncode}, expected {check}\n"
                                 f"stdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}")
        return p

    def script(self, *args):
        subprocess.run([SCRIPT, *args], check=True, capture_output=True, text=True)

    def pids(self, host):
        """Processes still running in host's namespace."""
        out = subprocess.run(["ip", "netns", "pids", f"cb{self.id}-{host}"], capture_output=True,
                             text=True).stdout
        return [int(p) for p in out.split()]


def available():
    """Raises Skip with the reason when emulated hosts cannot be made here."""
    p = subprocess.run([SCRIPT, "check"], capture_output=True, text=True)
    if p.returncode != 0:
        raise Skip(f"no emulated hosts: {p.stderr.strip()}")


@contextlib.contextmanager
def emulated_cluster(n=3, rails=1):
    available()
    p = subprocess.run([SCRIPT, "up", "-H", str(n), "-R", str(rails)], capture_output=True,
                       text=True)
    if p.returncode == 77:
        raise Skip(p.stderr.strip())
    assert p.returncode == 0, p.stderr
    env = dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)
    cluster = Cluster(env)
    try:
        yield cluster
    finally:
        subprocess.run([SCRIPT, "down", cluster.id], capture_output=True)
