"""commbench probe copy on a machine with a GPU: every figure present and positive."""
import json
import os

from cbtest import BUILD_HAS_CUDA, Skip, main, run


def test_probe_copy_reports_every_figure():
    if not BUILD_HAS_CUDA:
        raise Skip("this build has no CUDA (its refusal is tested in topo)")
    if not (os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl")):
        raise Skip("no GPU visible")
    p = run(["probe", "copy", "--size", "64M", "--repeats", "3", "--format", "json"], check=0)
    doc = json.loads(p.stdout)
    assert doc["schema"] == "commbench/gpucopy/v1" and doc["devices"]
    for d in doc["devices"]:
        for key in ["h2d_pinned_GBps", "h2d_pageable_GBps", "d2h_pinned_GBps", "d2h_pageable_GBps", "d2d_GBps"]:
            assert d[key] > 0, (key, d)
    n = len(doc["devices"])
    assert n < 2 or len(doc["p2p_GBps"]) == n


if __name__ == "__main__":
    main([test_probe_copy_reports_every_figure])
