"""Ranks started the env:// way (as torchrun and Kubernetes start them): one commbench process
per rank, each given MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK and
LOCAL_WORLD_SIZE only; no MPI launcher. `prefix` puts a rank on an emulated host."""
import os
import socket
import subprocess
import time

from cbtest import COMMBENCH

# What torchrun sets for a rank that commbench reads (the recipe in docs/clusters.md sets these
# and TORCHELASTIC_* bookkeeping).
ENV_VARIABLES = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK",
                 "LOCAL_WORLD_SIZE")


def free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def rank_env(master, port, rank, world, local_rank, local_world):
    env = {k: v for k, v in os.environ.items()
           if k not in ENV_VARIABLES and not k.startswith(("OMPI_COMM_WORLD", "PMI", "SLURM_"))}
    env.update(MASTER_ADDR=master, MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
               LOCAL_RANK=str(local_rank), LOCAL_WORLD_SIZE=str(local_world))
    return env


class Ranks:
    """Started processes, rank order; .wait() gives (code, stdout, stderr) per rank and the
    seconds until the last one ended."""

    def __init__(self, procs, started):
        self.procs = procs
        self.started = started

    def wait(self, timeout=240):
        out = []
        for p in self.procs:
            try:
                o, e = p.communicate(timeout=max(1, self.started + timeout - time.time()))
            except subprocess.TimeoutExpired:
                for q in self.procs:
                    q.kill()
                raise AssertionError(f"ranks still running after {timeout} s")
            out.append((p.returncode, o, e))
        return out, time.time() - self.started


def start(layout, args_for, master="127.0.0.1", port=None, world=None, env_for=None,
          prefix_for=None):
    """layout: the host of each rank, rank order (e.g. ["h1", "h1", "h2", "h2"]). args_for(rank)
    gives its commbench arguments; env_for(rank, env) may change its variables; prefix_for(host)
    the words that run a command there (None: here)."""
    port = port or free_port()
    world = world or len(layout)
    procs = []
    started = time.time()
    for rank, host in enumerate(layout):
        local = [r for r, h in enumerate(layout) if h == host]
        env = rank_env(master, port, rank, world, local.index(rank), len(local))
        if env_for:
            env_for(rank, env)
        prefix = prefix_for(host) if prefix_for else []
        procs.append(subprocess.Popen(prefix + [COMMBENCH] + list(args_for(rank)), env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    return Ranks(procs, started)


def first_line(stderr):
    lines = stderr.splitlines()
    return lines[0] if lines else ""


def left_running(port):
    """Processes still running with this launch's MASTER_PORT in their environment."""
    mark = f"MASTER_PORT={port}".encode()
    left = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if mark in f.read().split(b"\0"):
                    left.append(int(pid))
        except OSError:
            pass
    return left
