"""commbench topo and probe (membw, copy, links) through the real binary."""
import json
import os
import shutil
import subprocess

from cbtest import BUILD_HAS_CUDA, COMMBENCH, SOURCE_DIR, Skip, main, run, tempdir

FIXTURES = os.path.join(SOURCE_DIR, "tests", "data", "sysfs")


def topo_json(root):
    p = run(["topo", "--format", "json", "--sysfs-root", os.path.join(FIXTURES, root)], check=0)
    return json.loads(p.stdout)


def test_topo_json_contract_on_every_fixture():
    for root in ["dgx-h100", "workstation-4gpu", "ci-vm"]:
        doc = topo_json(root)
        assert doc["schema"] == "commbench/topology/v1"
        for key in ["host", "numa_nodes", "pci_devices", "gpus", "gpu_matrix", "nics", "gdr", "warnings"]:
            assert key in doc, (root, key)
        for d in doc["pci_devices"]:
            for key in ["bdf", "kind", "class", "vendor", "device", "numa_node", "parent", "link"]:
                assert key in d, (root, d["bdf"], key)
            assert d["kind"] in ("gpu", "nic", "nvswitch", "bridge", "storage", "other")
            if d["link"] is not None:
                assert set(["current_gts", "max_gts", "current_width", "max_width", "degraded"]) <= set(d["link"])
        assert len(doc["gpu_matrix"]) == len(doc["gpus"])


def test_topo_names_the_driver_and_the_libraries_it_finds():
    doc = topo_json("dgx-h100")
    assert doc["nvidia_driver"] == "550.90.07", doc["nvidia_driver"]
    version = run(["version"], check=0).stdout
    mpi_line = next(l for l in version.splitlines() if l.startswith("MPI: "))
    assert doc["libraries"]["MPI"] == mpi_line[len("MPI: "):], (doc["libraries"], mpi_line)
    table = run(["topo", "--sysfs-root", os.path.join(FIXTURES, "dgx-h100")], check=0).stdout
    assert "NVIDIA driver: 550.90.07" in table and "\nLibraries:\n  " in table, table


def test_topo_tables_flag_the_faults_of_the_dgx_fixture():
    p = run(["topo", "--sysfs-root", os.path.join(FIXTURES, "dgx-h100")], check=0)
    out = p.stdout
    for section in ["NUMA nodes", "PCI tree", "GPU matrix", "RDMA NIC ports", "GPUDirect RDMA: nvidia_peermem loaded",
                    "IOMMU groups", "Warnings (3)"]:
        assert section in out, section
    lines = out.splitlines()
    narrow = [l for l in lines if l.strip().startswith("0000:42:00.0")]
    assert narrow and "DEGRADED" in narrow[0] and "32 GT/s x8" in narrow[0], narrow
    idle = [l for l in lines if l.strip().startswith("0000:1a:00.0")]
    assert "power saving" in idle[0] and "DEGRADED" not in idle[0]
    assert "- mlx5_5 port 1: state DOWN" in out
    assert "mlx5_0 port" not in out.split("Warnings")[1]
    gpu0 = [l for l in lines if l.strip().startswith("GPU0 ") and "NV18" in l]
    assert gpu0 and gpu0[0].split()[1:4] == ["X", "NV18", "NV18"], gpu0


def test_topo_without_nvml_still_lists_gpus_from_pci():
    d = tempdir()
    tree = os.path.join(d, "ws")
    shutil.copytree(os.path.join(FIXTURES, "workstation-4gpu"), tree, symlinks=True)
    with open(os.path.join(tree, "commbench-snapshot.json"), "w") as f:
        json.dump({"host": "ws", "nvml": None, "nvml_status": "NVML not found"}, f)
    p = run(["topo", "--sysfs-root", tree], check=0)
    assert "(PCI 10de:26b1)" in p.stdout
    doc = json.loads(run(["topo", "--format", "json", "--sysfs-root", tree], check=0).stdout)
    assert [g["source"] for g in doc["gpus"]] == ["pci"] * 4
    assert doc["gpu_matrix"][0][1] == "PIX"
    shutil.rmtree(d)


def test_capture_of_this_machine_reproduces_the_output():
    d = tempdir()
    snap = os.path.join(d, "snap")
    live = run(["topo", "--format", "json", "--capture", snap], check=0)
    again = run(["topo", "--format", "json", "--sysfs-root", snap], check=0)
    assert json.loads(live.stdout) == json.loads(again.stdout)
    for base, dirs, files in os.walk(snap):
        for name in dirs + files:
            path = os.path.join(base, name)
            if os.path.islink(path):
                assert not os.path.isabs(os.readlink(path)), path
    p = run(["topo", "--capture", snap], check=2)
    assert "already exists" in p.stderr
    shutil.rmtree(d)


def test_topo_output_file_and_bad_input():
    d = tempdir()
    out = os.path.join(d, "topo.json")
    run(["topo", "--sysfs-root", os.path.join(FIXTURES, "ci-vm"), "--output", out], check=0)
    with open(out) as f:
        assert json.load(f)["schema"] == "commbench/topology/v1"
    p = run(["topo", "--format", "xml"], check=2)
    assert "expected table or json" in p.stderr and p.stdout == ""
    p = run(["topo", "--sysfs-root", os.path.join(d, "missing")], check=2)
    assert "--sysfs-root" in p.stderr
    p = run(["topo", "--output", os.path.join(d, "topo.csv")], check=2)
    assert "a .txt or .json file name" in p.stderr
    assert not os.path.exists(os.path.join(d, "topo.csv"))
    shutil.rmtree(d)


def test_probe_membw_matrix_and_json():
    d = tempdir()
    out = os.path.join(d, "membw.json")
    p = run(["probe", "membw", "--size", "8M", "--repeats", "3", "--kernels", "all", "--output", out], check=0)
    for k in ["read", "write", "copy", "memcpy"]:
        assert f"\n{k}\n" in p.stdout, k
    with open(out) as f:
        doc = json.load(f)
    assert doc["schema"] == "commbench/membw/v1"
    assert doc["repeats"] == 3 and doc["bytes"] == 8 << 20
    for k in ["read", "write", "copy", "memcpy"]:
        m = doc["kernels"][k]["GBps"]
        assert len(m) == len(doc["cpu_nodes"]) and all(len(r) == len(doc["memory_nodes"]) for r in m)
        assert all(v > 0 for r in m for v in r), (k, m)
    p = run(["probe", "membw", "--kernels", "triad"], check=2)
    assert "unknown kernel 'triad'" in p.stderr
    run(["probe", "membw", "--size", "1K"], check=2)
    shutil.rmtree(d)


def gpu_visible():
    return os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl")


def test_probe_copy_without_a_gpu_fails_with_one_line():
    # A build without CUDA refuses on any host, a GPU host included.
    if BUILD_HAS_CUDA and gpu_visible():
        raise Skip("a GPU is visible here and this build has CUDA")
    p = run(["probe", "copy"], check=1)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "no CUDA device is visible" in lines[0], p.stderr
    if not BUILD_HAS_CUDA:
        assert "built without CUDA" in lines[0], lines[0]
    assert p.stdout == ""


def test_probe_links_needs_two_ranks():
    p = run(["probe", "links"], check=2)
    assert "at least 2 ranks" in p.stderr


def links(np):
    p = run(["probe", "links", "--size", "256K", "--repeats", "3", "--latency-iters", "50", "--format", "json"],
            np=np, check=0)
    doc = json.loads(p.stdout)
    assert doc["schema"] == "commbench/links/v2" and doc["meta"]["nranks"] == np
    # One host: every rank takes part; every ordered pair once, with both figures.
    assert doc["meta"]["participants"] == list(range(np)) and not doc["meta"]["per_host"]
    assert doc["meta"]["rounds"] == (np - 1 if np % 2 == 0 else np)
    seen = {(q["src_rank"], q["dst_rank"]) for q in doc["pairs"]}
    assert seen == {(i, j) for i in range(np) for j in range(np) if i != j}, seen
    for q in doc["pairs"]:
        assert q["bandwidth_GBps"] > 0 and q["latency_us"] > 0, q
    # Pairs within one host take no part in the verdict.
    assert doc["stragglers"] == [], doc["stragglers"]
    assert len(doc["meta"]["hosts"]) == np


def test_probe_links_two_ranks():
    links(2)


def test_probe_links_three_ranks():
    links(3)


if __name__ == "__main__":
    main([test_topo_json_contract_on_every_fixture, test_topo_tables_flag_the_faults_of_the_dgx_fixture,
          test_topo_names_the_driver_and_the_libraries_it_finds,
          test_topo_without_nvml_still_lists_gpus_from_pci, test_capture_of_this_machine_reproduces_the_output,
          test_topo_output_file_and_bad_input, test_probe_membw_matrix_and_json,
          test_probe_copy_without_a_gpu_fails_with_one_line, test_probe_links_needs_two_ranks,
          test_probe_links_two_ranks, test_probe_links_three_ranks])
