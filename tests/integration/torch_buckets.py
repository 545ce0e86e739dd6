"""PyTorch's own answers for test_replay_torch.py, run by the Python that has PyTorch (Debian's
python3-torch installs for /usr/bin/python3). Reads a list of requests as JSON on stdin, writes
{"torch": version, "results": [one per request]}; a request is one of:

- {"mode": "reducer", "params": [...], "caps_mb": [...], "first_mb": F}: the buckets PyTorch's
  Reducer rebuilds after the first iteration, from the function it calls
  (torch.distributed._compute_bucket_assignment_by_size, reducer.cpp), given the parameters in
  gradient-ready order (the reverse of model.parameters()) and the limits [first, cap] as
  DistributedDataParallel converts them; meta tensors, so that no memory is allocated.
- {"mode": "ddp", ...}: the same from DistributedDataParallel itself (gloo, one rank, CPU): a
  module whose forward uses the parameters in order, three iterations, then the rebuilt buckets
  DDP logs (_get_ddp_logging_data: rebuilt_bucket_sizes, rebuilt_per_bucket_param_indices).
- {"mode": "fsdp", "params": [...], "units": [[indices]], "worlds": [...]}: each unit's padded
  shard for every rank from FSDP's own FlatParamHandle._get_unpadded_shard. PyTorch 1.13's
  torch.distributed.fsdp cannot be imported under Python 3.11 (its sharded_tensor metadata is a
  dataclass with a mutable default), so the function is taken from the installed flat_param.py
  by its syntax tree and run as it is written there.
"""
import ast
import typing
import json
import os
import sys
import tempfile

import torch
import torch.distributed as dist

MIB = 1024 * 1024


def dtype_of(name):
    return {"float": torch.float32, "double": torch.float64, "half": torch.float16,
            "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
            "int8": torch.int8, "uint8": torch.uint8}[name]


def element_size(name):
    return torch.empty(0, dtype=dtype_of(name)).element_size()


def reducer(req):
    params = req["params"]
    order = list(reversed(range(len(params))))
    tensors = [torch.empty(params[i]["numel"], dtype=dtype_of(params[i]["dtype"]), device="meta")
               for i in order]
    out = []
    for cap in req["caps_mb"]:
        limits = [int(req["first_mb"] * MIB), int(cap * MIB)]
        buckets, _ = dist._compute_bucket_assignment_by_size(
            tensors, limits, [False] * len(tensors), order)
        out.append({"cap_mb": cap, "buckets": [list(b) for b in buckets],
                    "sizes": [sum(params[i]["numel"] * element_size(params[i]["dtype"])
                                  for i in b) for b in buckets]})
    return out


class Chain(torch.nn.Module):
    def __init__(self, params):
        super().__init__()
        self.ps = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.zeros(p["numel"], dtype=dtype_of(p["dtype"])))
             for p in params])

    def forward(self, x):
        for p in self.ps:
            x = x + p.sum().to(x.dtype)
        return x


def ddp(req):
    from torch.nn.parallel import DistributedDataParallel
    store = tempfile.mktemp(prefix="cb-ddp-store-")
    dist.init_process_group("gloo", init_method="file://" + store, rank=0, world_size=1)
    out = []
    try:
        for cap in req["caps_mb"]:
            dist._DEFAULT_FIRST_BUCKET_BYTES = int(req["first_mb"] * MIB)
            model = DistributedDataParallel(Chain(req["params"]), bucket_cap_mb=cap)
            for _ in range(3):
                model(torch.zeros(1, dtype=torch.float64)).sum().backward()
            data = model._get_ddp_logging_data()
            assert data.get("has_rebuilt_buckets") == 1, data
            out.append({"cap_mb": cap,
                        "buckets": [[int(i) for i in b.split()]
                                    for b in data["rebuilt_per_bucket_param_indices"].split(", ")],
                        "sizes": [int(s) for s in data["rebuilt_bucket_sizes"].split(", ")]})
            del model
    finally:
        dist.destroy_process_group()
        if os.path.exists(store):
            os.remove(store)
    return out


def fsdp_unpadded_shard():
    """FlatParamHandle._get_unpadded_shard, from the installed source."""
    path = os.path.join(os.path.dirname(torch.__file__), "distributed", "fsdp", "flat_param.py")
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "FlatParamHandle":
            for f in node.body:
                if isinstance(f, ast.FunctionDef) and f.name == "_get_unpadded_shard":
                    f.decorator_list = []
                    namespace = {"torch": torch, "Tensor": torch.Tensor, "Tuple": typing.Tuple}
                    exec(compile(ast.Module(body=[f], type_ignores=[]), path, "exec"), namespace)
                    return namespace["_get_unpadded_shard"]
    raise AssertionError(f"{path} has no FlatParamHandle._get_unpadded_shard")


def fsdp(req):
    unpadded_shard = fsdp_unpadded_shard()
    out = []
    for world in req["worlds"]:
        units = []
        for unit in req["units"]:
            numel = sum(req["params"][i]["numel"] for i in unit)
            flat = torch.empty(numel, device="meta")
            shards = []
            for rank in range(world):
                chunk, pad = unpadded_shard(flat, rank, world)
                shards.append(chunk.numel() + pad)
            units.append({"numel": numel, "shards": shards})
        out.append({"world": world, "units": units})
    return out


def main():
    modes = {"reducer": reducer, "ddp": ddp, "fsdp": fsdp}
    results = [modes[req["mode"]](req) for req in json.load(sys.stdin)]
    json.dump({"torch": torch.__version__, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
