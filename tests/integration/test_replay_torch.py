#!/usr/bin/env python3
"""replay's DDP buckets and FSDP shards are PyTorch's own for the same parameters: every preset
at several caps against the function PyTorch's Reducer calls when it rebuilds its buckets, and
generated parameter lists (up to three dtypes) and ResNet-50 against DistributedDataParallel
itself, and FSDP's padded shards against FSDP's own function.
PyTorch is a test dependency only: Debian's python3-torch installs it for /usr/bin/python3 (not
the python3 on PATH); without it these tests skip with the reason."""
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from cbtest import Skip, main, run, tempdir  # noqa: E402

TORCH_PYTHON = "/usr/bin/python3"
HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_buckets.py")
PRESETS = ["resnet50", "bert-large", "gpt2", "llama2-7b"]
CAPS = [1, 5, 25, 100]


def torch_answers(requests):
    """PyTorch's answers to `requests`, in one run of the Python that has it."""
    probe = subprocess.run([TORCH_PYTHON, "-c", "import torch.distributed"], capture_output=True,
                           text=True)
    if probe.returncode != 0:
        raise Skip(f"PyTorch is not installed for {TORCH_PYTHON} (Debian's python3-torch, which "
                   "ci/install-deps installs): " + (probe.stderr.strip().splitlines() or ["?"])[-1])
    p = subprocess.run([TORCH_PYTHON, HELPER], input=json.dumps(requests), capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)["results"]


def plan(args):
    p = run(["replay", "--dry-run", "--format", "json"] + args, check=0)
    return json.loads(p.stdout)


def commbench_buckets(doc):
    out = {}
    for s in doc["settings"]:
        out[s["bucket_cap_mb"]] = ([c["param_indices"] for c in s["collectives"]],
                                   [c["bytes"] for c in s["collectives"]])
    return out


def assert_same_buckets(doc, answer, what):
    mine = commbench_buckets(doc)
    for a in answer:
        buckets, sizes = mine[a["cap_mb"]]
        assert buckets == a["buckets"], (what, a["cap_mb"], buckets, a["buckets"])
        assert sizes == a["sizes"], (what, a["cap_mb"], sizes, a["sizes"])


def caps_arg(caps):
    return ",".join(str(c) for c in caps)


def test_every_preset_buckets_as_pytorchs_reducer_rebuilds_them():
    docs = [plan(["--preset", p, "--bucket-cap-mb", caps_arg(CAPS)]) for p in PRESETS]
    # And llama2-7b in bfloat16 with a larger first bucket.
    docs.append(plan(["--preset", "llama2-7b", "--param-dtype", "bfloat16", "--bucket-cap-mb",
                      "25,250", "--first-bucket-mb", "4"]))
    requests = [{"mode": "reducer", "params": d["model"]["params"], "caps_mb": CAPS, "first_mb": 1}
                for d in docs[:-1]]
    requests.append({"mode": "reducer", "params": docs[-1]["model"]["params"],
                     "caps_mb": [25, 250], "first_mb": 4})
    for doc, answer, what in zip(docs, torch_answers(requests), PRESETS + ["llama2-7b bf16"]):
        assert_same_buckets(doc, answer, what)


def generated_model(seed, dtypes):
    rng = random.Random(seed)
    rows = ["name,dtype,numel"]
    for i in range(rng.randint(20, 60)):
        numel = rng.choice([rng.randint(1, 4096), rng.randint(4096, 300000),
                            rng.randint(300000, 2000000)])
        rows.append(f"layer{i}.weight,{rng.choice(dtypes)},{numel}")
    path = os.path.join(tempdir(), f"generated{seed}.csv")
    with open(path, "w") as f:
        f.write("\n".join(rows) + "\n")
    return path


def test_generated_parameter_lists_bucket_as_ddp_itself():
    # One dtype, and several (DDP fills a bucket per dtype; the leftovers' order is its own).
    # bfloat16 is left to the reducer test: gloo cannot broadcast it in PyTorch 1.13, which
    # DistributedDataParallel does when it is built.
    caps = [0.5, 2, 25]
    docs, requests, names = [], [], []
    for seed, dtypes in [(1, ["torch.float32"]), (2, ["torch.float32"]),
                         (3, ["torch.float32", "torch.float64", "torch.float16"]),
                         (4, ["torch.float16", "torch.float32"])]:
        path = generated_model(seed, dtypes)
        docs.append(plan(["--model", path, "--bucket-cap-mb", caps_arg(caps),
                          "--first-bucket-mb", "0.25"]))
        requests.append({"mode": "ddp", "params": docs[-1]["model"]["params"], "caps_mb": caps,
                         "first_mb": 0.25})
        names.append(path)
    # And ResNet-50, the preset small enough for DDP on this machine.
    docs.append(plan(["--preset", "resnet50", "--bucket-cap-mb", "5,25"]))
    requests.append({"mode": "ddp", "params": docs[-1]["model"]["params"], "caps_mb": [5, 25],
                     "first_mb": 1})
    names.append("resnet50")
    for doc, answer, what in zip(docs, torch_answers(requests), names):
        assert_same_buckets(doc, answer, what)


def test_fsdp_shards_are_padded_as_fsdp_pads_them():
    worlds = [2, 3, 8]
    gathers, requests = [], []
    for world in worlds:
        doc = plan(["--preset", "gpt2", "--pattern", "fsdp", "-N", str(world)])
        gathers.append([c for c in doc["settings"][0]["collectives"]
                        if c["collective"] == "allgather" and c["phase"] == "forward"])
        requests.append({"mode": "fsdp", "params": doc["model"]["params"],
                         "units": [c["param_indices"] for c in gathers[-1]], "worlds": [world]})
    for world, mine, answer in zip(worlds, gathers, torch_answers(requests)):
        for c, unit in zip(mine, answer[0]["units"]):
            assert c["params"] == unit["numel"], (c, unit)
            assert all(s == c["count"] for s in unit["shards"]), (world, c, unit)
            assert c["bytes"] == 4 * c["count"] * world, c


if __name__ == "__main__":
    main([test_every_preset_buckets_as_pytorchs_reducer_rebuilds_them,
          test_generated_parameter_lists_bucket_as_ddp_itself,
          test_fsdp_shards_are_padded_as_fsdp_pads_them])
