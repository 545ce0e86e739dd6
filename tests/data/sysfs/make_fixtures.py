#!/usr/bin/env python3
"""Writes the sysfs fixture trees used by the topology tests.

Each tree is laid out like /sys (only the files `commbench topo` reads), with relative
symlinks as the kernel makes them, plus commbench-snapshot.json carrying the host name and
NVML's answers. Run it from anywhere; it rewrites dgx-h100/ and workstation-4gpu/ next to
itself. The ci-vm/ tree is not made here: it is `commbench topo --capture` of the CI machine.

dgx-h100: 2 NUMA nodes; 8 H100 GPUs and 8 ConnectX-7 HCAs behind 4 PCIe Gen5 switches (one
GPU and one HCA per downstream port pair); 4 NVSwitches behind a fifth switch; 2 NVMe drives;
one 10 GbE port. Faults: GPU 3's link runs x8 (degraded); GPU 1 idles at 2.5 GT/s (power
saving, not a fault); mlx5_5 port 1 is DOWN; GPU 6 has NVLink 5 down. Captured without root,
so config space is 64 bytes and ACS is unknown.

workstation-4gpu: 1 NUMA node (numa_node -1 everywhere, as desktops report), 4 PCIe GPUs: two
behind a PLX switch whose downstream ports redirect P2P (ACS RR/CR on), two on root ports
(GPU 2 idles at 8 GT/s: power saving). An NVMe drive downtrained to 8 of 16 GT/s (degraded).
Captured as root: 4 KiB config space with an ACS capability on the switch ports.
"""
import json
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


class Tree:
    def __init__(self, name):
        self.root = os.path.join(HERE, name)
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(self.root)
        self.paths = {}  # bdf -> path of its directory inside the tree

    def write(self, rel, data):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        mode = "wb" if isinstance(data, bytes) else "w"
        with open(path, mode) as f:
            f.write(data)

    def link(self, rel, target_rel):
        """A symlink at rel pointing at target_rel (both inside the tree), written relative."""
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        target = os.path.relpath(os.path.join(self.root, target_rel), os.path.dirname(path))
        os.symlink(target, path)

    def pci(self, bdf, parent, cls, vendor, device, numa=-1, cpus="", link=None, driver=None,
            iommu=None, config=None):
        """A PCI function below `parent` (a BDF, or a host bridge name like 'pci0000:15')."""
        base = self.paths.get(parent, "devices/" + parent)
        d = f"{base}/{bdf}"
        self.paths[bdf] = d
        self.write(f"{d}/class", f"0x{cls:06x}\n")
        self.write(f"{d}/vendor", f"0x{vendor:04x}\n")
        self.write(f"{d}/device", f"0x{device:04x}\n")
        self.write(f"{d}/numa_node", f"{numa}\n")
        self.write(f"{d}/local_cpulist", f"{cpus}\n")
        if link:
            cur_gts, cur_w, max_gts, max_w = link
            self.write(f"{d}/current_link_speed", f"{cur_gts} GT/s PCIe\n")
            self.write(f"{d}/max_link_speed", f"{max_gts} GT/s PCIe\n")
            self.write(f"{d}/current_link_width", f"{cur_w}\n")
            self.write(f"{d}/max_link_width", f"{max_w}\n")
        if driver:
            os.makedirs(os.path.join(self.root, "bus/pci/drivers", driver), exist_ok=True)
            self.link(f"{d}/driver", f"bus/pci/drivers/{driver}")
        if iommu is not None:
            self.write(f"kernel/iommu_groups/{iommu}/type", "identity\n" if config is None else "DMA\n")
            self.link(f"{d}/iommu_group", f"kernel/iommu_groups/{iommu}")
            self.link(f"kernel/iommu_groups/{iommu}/devices/{bdf}", d)
        self.write(f"{d}/config", config if config is not None else bytes(64))
        self.link(f"bus/pci/devices/{bdf}", d)
        return d

    def numa(self, node, cpus, mem_kb, distances):
        d = f"devices/system/node/node{node}"
        self.write(f"{d}/cpulist", cpus + "\n")
        self.write(f"{d}/distance", " ".join(map(str, distances)) + "\n")
        self.write(f"{d}/meminfo", f"Node {node} MemTotal:       {mem_kb} kB\nNode {node} MemFree: 1 kB\n")

    def hca(self, name, bdf, netdev, state="4: ACTIVE", phys="5: LinkUp",
            rate="400 Gb/sec (4X NDR)", layer="InfiniBand", speed=400000):
        d = self.paths[bdf]
        ib = f"{d}/infiniband/{name}"
        self.link(f"class/infiniband/{name}", ib)
        self.link(f"{ib}/device", d)
        p = f"{ib}/ports/1"
        self.write(f"{p}/state", state + "\n")
        self.write(f"{p}/phys_state", phys + "\n")
        self.write(f"{p}/rate", rate + "\n")
        self.write(f"{p}/link_layer", layer + "\n")
        self.netdev(netdev, bdf, speed, "up" if "ACTIVE" in state else "down")

    def netdev(self, name, bdf, speed, operstate):
        d = self.paths[bdf]
        n = f"{d}/net/{name}"
        self.link(f"class/net/{name}", n)
        self.link(f"{n}/device", d)
        if speed is not None:
            self.write(f"{n}/speed", f"{speed}\n")
        self.write(f"{n}/operstate", operstate + "\n")

    def snapshot(self, host, nvml):
        self.write("commbench-snapshot.json", json.dumps(
            {"schema": "commbench/snapshot/v1", "host": host, "nvml": nvml,
             "nvml_status": "from snapshot" if nvml else "not in snapshot"}, indent=2) + "\n")


def nvlinks(n, remote_is_switch=True, down=()):
    return [{"link": l, "active": l not in down, "remote_bdf": None, "remote_is_switch": remote_is_switch}
            for l in range(n)]


def dgx_h100():
    t = Tree("dgx-h100")
    cpus = ["0-55,112-167", "56-111,168-223"]
    for node in range(2):
        t.numa(node, cpus[node], 1056323584, [10, 21] if node == 0 else [21, 10])
    gen5 = (32.0, 16, 32.0, 16)
    group = iter(range(10, 200))
    gpus = []
    # Four PCIe switches: host bridge -> root port -> upstream port -> 4 downstream ports, each
    # downstream port holding one GPU or one HCA.
    for s, bus in enumerate([0x15, 0x3d, 0x9a, 0xbd]):
        node = 0 if s < 2 else 1
        hb = f"pci0000:{bus:02x}"
        rp = f"0000:{bus:02x}:01.0"
        t.pci(rp, hb, 0x060400, 0x8086, 0x352a, node, cpus[node], gen5, "pcieport", next(group))
        up = f"0000:{bus + 1:02x}:00.0"
        t.pci(up, rp, 0x060400, 0x1000, 0xc030, node, cpus[node], gen5, "pcieport", next(group))
        for port in range(4):
            dp = f"0000:{bus + 2:02x}:{port:02x}.0"
            kind = "gpu" if port % 2 == 0 else "nic"
            i = 2 * s + port // 2
            ep = f"0000:{bus + 3 + port:02x}:00.0"
            if kind == "gpu":
                link = gen5
                if i == 1:
                    link = (2.5, 16, 32.0, 16)   # idle GPU: power saving
                if i == 3:
                    link = (32.0, 8, 32.0, 16)   # downtrained width: a fault
                t.pci(dp, up, 0x060400, 0x1000, 0xc030, node, cpus[node],
                      (link[0], link[1], 32.0, 16), "pcieport", next(group))
                t.pci(ep, dp, 0x030200, 0x10de, 0x2330, node, cpus[node], link, "nvidia", next(group))
                gpus.append(ep)
            else:
                t.pci(dp, up, 0x060400, 0x1000, 0xc030, node, cpus[node], gen5, "pcieport", next(group))
                t.pci(ep, dp, 0x020700, 0x15b3, 0x1021, node, cpus[node], gen5, "mlx5_core", next(group))
                if i == 5:
                    t.hca(f"mlx5_{i}", ep, f"ib{i}", state="1: DOWN", phys="3: Disabled",
                          rate="10 Gb/sec (4X SDR)", speed=None)
                else:
                    t.hca(f"mlx5_{i}", ep, f"ib{i}")
    # NVSwitches behind their own switch on node 1.
    rp = "0000:05:01.0"
    t.pci(rp, "pci0000:05", 0x060400, 0x8086, 0x352a, 1, cpus[1], (16.0, 4, 16.0, 4), "pcieport", next(group))
    t.pci("0000:06:00.0", rp, 0x060400, 0x10de, 0x22a4, 1, cpus[1], (16.0, 4, 16.0, 4), "pcieport", next(group))
    for k in range(4):
        dp = f"0000:07:{k:02x}.0"
        t.pci(dp, "0000:06:00.0", 0x060400, 0x10de, 0x22a4, 1, cpus[1], (16.0, 2, 16.0, 2), "pcieport", next(group))
        t.pci(f"0000:{8 + k:02x}:00.0", dp, 0x068000, 0x10de, 0x22a3, 1, cpus[1], (16.0, 2, 16.0, 2),
              "nvidia-nvswitch", next(group))
    # Two NVMe drives and one 10 GbE port on node 0.
    for k, bus in enumerate([0x60, 0x61]):
        rp = f"0000:{bus:02x}:01.0"
        t.pci(rp, f"pci0000:{bus:02x}", 0x060400, 0x8086, 0x352a, 0, cpus[0], (16.0, 4, 16.0, 4), "pcieport", next(group))
        t.pci(f"0000:{bus + 0x10:02x}:00.0", rp, 0x010802, 0x144d, 0xa80a, 0, cpus[0], (16.0, 4, 16.0, 4), "nvme",
              next(group))
    t.pci("0000:80:00.0", "pci0000:80", 0x020000, 0x8086, 0x1572, 0, cpus[0], (8.0, 8, 8.0, 8), "i40e", next(group))
    t.netdev("eno1", "0000:80:00.0", 10000, "up")
    t.write("module/nvidia_peermem/version", "1.0\n")
    t.write("module/nvidia/version", "550.90.07\n")
    nvml = {"driver_version": "550.90.07", "gpus": []}
    for i, bdf in enumerate(gpus):
        nvml["gpus"].append({
            "index": i, "bdf": bdf, "name": "NVIDIA H100 80GB HBM3",
            "uuid": f"GPU-00000000-0000-0000-0000-00000000000{i}", "cpu_affinity": cpus[0 if i < 4 else 1],
            "numa_node_id": None, "cc_major": 9, "cc_minor": 0,
            "nvlinks": nvlinks(18, down=(5,) if i == 6 else ())})
    t.snapshot("dgx-h100-node01", nvml)


def acs_config(control):
    """4 KiB config space: a PCIe capability chain ending in ACS (ID 0x000D) at 0x148."""
    cfg = bytearray(4096)
    struct.pack_into("<HH", cfg, 0, 0x10b5, 0x8747)
    struct.pack_into("<I", cfg, 0x100, 0x0001 | (1 << 16) | (0x148 << 20))  # AER -> ACS
    struct.pack_into("<IHH", cfg, 0x148, 0x000d | (1 << 16), 0x005f, control)
    return bytes(cfg)


def workstation():
    t = Tree("workstation-4gpu")
    t.numa(0, "0-31", 263724032, [10])
    gen4 = (16.0, 16, 16.0, 16)
    plain = bytes(256)  # conventional config space only
    # Root port A -> PLX switch -> GPU 0, GPU 1 (P2P redirected by ACS on the downstream ports).
    t.pci("0000:00:01.0", "pci0000:00", 0x060400, 0x1022, 0x1483, -1, "0-31", gen4, "pcieport", 1, acs_config(0x0000))
    t.pci("0000:01:00.0", "0000:00:01.0", 0x060400, 0x10b5, 0x8747, -1, "0-31", gen4, "pcieport", 2, acs_config(0x0000))
    gpus = []
    for k in range(2):
        dp = f"0000:02:{8 * (k + 1):02x}.0"
        t.pci(dp, "0000:01:00.0", 0x060400, 0x10b5, 0x8747, -1, "0-31", gen4, "pcieport", 3 + k, acs_config(0x001d))
        ep = f"0000:{3 + k:02x}:00.0"
        t.pci(ep, dp, 0x030000, 0x10de, 0x26b1, -1, "0-31", gen4, "nvidia", 5 + k, plain)
        gpus.append(ep)
    # Root ports B and C with one GPU each; GPU 2 idles at 8 GT/s.
    for k, (rp, ep, link) in enumerate([("0000:00:03.1", "0000:21:00.0", (8.0, 16, 16.0, 16)),
                                        ("0000:40:01.1", "0000:41:00.0", gen4)]):
        hb = "pci0000:00" if k == 0 else "pci0000:40"
        t.pci(rp, hb, 0x060400, 0x1022, 0x1483, -1, "0-31", (link[0], link[1], 16.0, 16), "pcieport", 7 + 2 * k,
              acs_config(0x001d))
        t.pci(ep, rp, 0x030000, 0x10de, 0x26b1, -1, "0-31", link, "nvidia", 8 + 2 * k, plain)
        gpus.append(ep)
    # NVMe downtrained to 8 of 16 GT/s, and a 1 GbE port.
    t.pci("0000:40:03.1", "pci0000:40", 0x060400, 0x1022, 0x1483, -1, "0-31", (8.0, 4, 16.0, 4), "pcieport", 11,
          acs_config(0x0000))
    t.pci("0000:42:00.0", "0000:40:03.1", 0x010802, 0x144d, 0xa80c, -1, "0-31", (8.0, 4, 16.0, 4), "nvme", 12, plain)
    t.pci("0000:43:00.0", "pci0000:40", 0x020000, 0x8086, 0x15f3, -1, "0-31", (5.0, 1, 5.0, 1), "igc", 13, plain)
    t.netdev("enp67s0", "0000:43:00.0", 1000, "up")
    nvml = {"driver_version": "550.54.14", "gpus": []}
    for i, bdf in enumerate(gpus):
        nvml["gpus"].append({
            "index": i, "bdf": bdf, "name": "NVIDIA RTX 6000 Ada Generation",
            "uuid": f"GPU-11111111-0000-0000-0000-00000000000{i}", "cpu_affinity": "0-31",
            "numa_node_id": None, "cc_major": 8, "cc_minor": 9, "nvlinks": []})
    t.snapshot("ws-4gpu", nvml)


if __name__ == "__main__":
    dgx_h100()
    workstation()
