"""`probe links --transport nccl` for real (ctest label gpu; skipped, exit 77, with the reason
where it cannot run): one fresh job per HCA under a launcher that spans at least 2 GPU hosts with
InfiniBand or RoCE HCAs, each pass pinned by NCCL_IB_HCA to its HCA, merged into the rails
verdict. Give the launcher prefix in CB_GPU_HOSTS_LAUNCH (e.g. 'srun -N 2 --ntasks-per-node 1' or
'mpirun -np 2 -H gpu1,gpu2'); commbench must be at the same path on every host."""
import glob
import json
import os
import shlex
import subprocess

from cbtest import COMMBENCH, Skip, main, run, tempdir


def active_hcas():
    out = []
    for dev in sorted(glob.glob("/sys/class/infiniband/*")):
        states = [open(p).read() for p in glob.glob(os.path.join(dev, "ports", "*", "state"))]
        if any("ACTIVE" in s for s in states):
            out.append(os.path.basename(dev))
    return out


def require_gpu_hosts():
    p = run(["list", "backends"], check=0)
    line = next((l for l in p.stdout.splitlines() if l.startswith("nccl")), "nccl: not listed")
    if "unavailable" in line or "not listed" in line:
        raise Skip(line.strip())
    if not active_hcas():
        raise Skip("no HCA with an active port in /sys/class/infiniband")
    launch = os.environ.get("CB_GPU_HOSTS_LAUNCH", "")
    if not launch:
        raise Skip("CB_GPU_HOSTS_LAUNCH names no launcher spanning 2 or more GPU hosts")
    return launch


def test_one_fresh_job_per_hca_merged_into_rails():
    launch = require_gpu_hosts()
    out = os.path.join(tempdir(), "links.json")
    p = run(["probe", "links", "--transport", "nccl", "--launch", launch, "--output", out],
            check=0, timeout=1800)
    assert p.returncode == 0, (p.returncode, p.stderr)
    doc = json.load(open(out))
    meta = doc["meta"]
    assert meta["transport"] == "nccl" and meta["fresh_processes"] is True, meta
    assert meta["rails"] == active_hcas(), meta["rails"]
    assert {q["nic"] for q in doc["pairs"]} == set(meta["rails"]), doc["pairs"]
    assert all(q["bandwidth_GBps"] > 0 for q in doc["pairs"]), doc["pairs"]
    print(f"wall {meta['seconds']:.1f} s for {len(meta['rails'])} HCAs; stragglers: "
          f"{doc['stragglers']}")


def test_several_hcas_in_one_process_are_refused():
    launch = require_gpu_hosts()
    if len(active_hcas()) < 2:
        raise Skip("one HCA: nothing to refuse")
    cmd = shlex.split(launch) + [COMMBENCH, "probe", "links", "--transport", "nccl"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "--launch" in p.stderr.splitlines()[0], p.stderr


if __name__ == "__main__":
    main([test_one_fresh_job_per_hca_merged_into_rails, test_several_hcas_in_one_process_are_refused])
