"""The nccl backend on GPUs (ctest label gpu; skipped, exit 77, where no GPU is visible): a full
validated sweep at one rank, forced algorithms, what NCCL chose, several GPUs per process, a hang
aborted by the watchdog, a corrupted result caught by the GPU check, CUDA-aware MPI, averages on
several ranks, blocking and non-blocking communicators, in-place staging without warm-up,
alltoallv's splits (one rank; across ranks with 2 GPUs), and the compute capability in `version`
and the run's meta."""
import json
import os
import subprocess

from cbtest import COLLECTIVES, Skip, main, parse_csv, run, tempdir

ALL_DTYPES = {"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "bfloat16", "float",
              "double", "fp8_e4m3", "fp8_e5m2"}
SELECTED = {"allreduce", "allgather", "reduce_scatter", "broadcast", "reduce"}


def gpu_count():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
        return sum(1 for l in out.stdout.splitlines() if l.startswith("GPU "))
    except (OSError, subprocess.SubprocessError):
        return 0


def require_gpus(n):
    p = run(["list", "backends"], check=0)
    line = next(l for l in p.stdout.splitlines() if l.startswith("nccl"))
    if "unavailable" in line:
        raise Skip(line.strip())
    if gpu_count() < n:
        raise Skip(f"needs {n} GPUs")


def csv_run(args, np=None, env=None):
    p = run(["run", "-B", "nccl", "--format", "csv", "--min-time", "0.005"] + args, np=np,
            env=env, check=0)
    return parse_csv(p.stdout), p


def check_valid(rows, nranks):
    assert rows, "no rows"
    for r in rows:
        assert r["backend"] == "nccl" and r["library"].startswith("NCCL 2."), r
        assert int(r["nranks"]) == nranks, r
        assert float(r["time_us"]) > 0, r
        if r["collective"] != "barrier":
            assert r["wrong"] == "0", f"validation failed: {r}"


def test_full_sweep_at_one_rank_validates():
    require_gpus(1)
    rows, p = csv_run(["-c", "all", "-d", "all", "-o", "all", "--placement", "both", "-b", "8",
                       "-e", "1M", "-f", "32"])
    check_valid(rows, 1)
    assert {r["collective"] for r in rows} == set(COLLECTIVES)
    dtypes = {r["dtype"] for r in rows} - {"none"}
    assert ALL_DTYPES - {"fp8_e4m3", "fp8_e5m2"} <= dtypes, dtypes  # fp8 needs sm90
    assert {r["op"] for r in rows if r["collective"] == "allreduce"} == {
        "sum", "prod", "min", "max", "avg"}
    if "fp8_e4m3" in dtypes:  # NCCL has no fp8 average: planned out, with its reason
        assert not [r for r in rows if r["dtype"].startswith("fp8") and r["op"] == "avg"], rows
        assert "op avg on fp8_e4m3 is not supported (NCCL has no fp8 average)" in p.stderr, \
            p.stderr


def test_large_sizes_validate_at_memory_speed():
    require_gpus(1)
    rows, _ = csv_run(["-c", "allreduce,allgather", "-b", "256M", "-e", "1G", "-f", "4"])
    check_valid(rows, 1)
    assert max(int(r["bytes"]) for r in rows) == 1 << 30


def test_forced_algorithms_run_validated_or_are_skipped_with_a_reason():
    require_gpus(1)
    gpus = 2 if gpu_count() >= 2 else 1
    rows, p = csv_run(["-g", str(gpus), "-c", "allreduce,broadcast,alltoall", "-A", "all",
                       "-e", "64K", "-f", "64"])
    check_valid(rows, gpus)
    forced = {r["algorithm"] for r in rows if not r["algorithm"].startswith("default")}
    assert all("/" in a for a in forced), forced
    assert all(r["algorithm"].startswith("default") for r in rows if r["collective"] == "alltoall")
    skips = [l for l in p.stderr.splitlines() if "skipped" in l]
    if gpus == 1:  # one rank copies locally: nothing to force
        assert not forced and skips and all("single rank" in l for l in skips), p.stderr
    else:
        assert "ring/simple" in forced, forced
        assert all("NCCL rejects it" in l for l in skips), skips


def test_several_gpus_per_process_and_what_nccl_chose():
    require_gpus(2)
    rows, _ = csv_run(["-g", "2", "-c", "all", "--placement", "both", "-e", "4M", "-f", "16"])
    check_valid(rows, 2)
    p = run(["version"], check=0)
    version = next(l for l in p.stdout.splitlines() if l.startswith("NCCL: ")).split()[1]
    major, minor = (int(x) for x in version.split(".")[:2])
    chosen = [r["algorithm"] for r in rows if r["collective"] in SELECTED]
    if (major, minor) >= (2, 24):
        assert all(a.startswith("default (") and a.endswith(")") for a in chosen), chosen
        assert any(" ch)" in a for a in chosen), chosen


def test_a_hang_is_aborted_by_the_watchdog():
    require_gpus(2)
    p = run(["run", "-B", "nccl", "-c", "allreduce", "-e", "1M", "--timeout", "5"], np=2,
            env={"COMMBENCH_TEST_FAULT": "hang:1"}, check=None, timeout=120)
    assert p.returncode == 4, (p.returncode, p.stderr)
    assert "timeout: allreduce" in p.stderr and "made no progress" in p.stderr, p.stderr


def test_a_corrupted_result_is_caught_on_the_gpu():
    require_gpus(1)
    p = run(["run", "-B", "nccl", "-c", "allreduce", "-e", "1M", "--format", "csv"],
            env={"COMMBENCH_TEST_FAULT": "corrupt:0"}, check=3)
    rows = parse_csv(p.stdout)
    assert all(r["wrong"] == "1" for r in rows), rows
    assert "validation failed" in p.stderr, p.stderr


def test_meta_names_the_library_and_where_it_came_from():
    require_gpus(1)
    out = os.path.join(tempdir(), "r.json")
    run(["run", "-B", "nccl", "-c", "allreduce", "-e", "64K", "--output", out], check=0)
    meta = json.load(open(out))["meta"]
    lib = meta["libraries"]["nccl"]
    assert lib.startswith("NCCL 2.") and "libnccl" in lib and "CUDA runtime" in lib, lib


def test_cuda_aware_mpi_on_device_memory():
    require_gpus(1)
    p = run(["run", "-B", "mpi", "--memory", "device", "-c", "allreduce,broadcast", "-e", "1M",
             "--format", "csv"], np=1, check=None)
    if p.returncode == 2 and "CUDA-aware" in p.stderr:
        raise Skip("this MPI is not CUDA-aware")
    assert p.returncode == 0, p.stderr
    assert all(r["wrong"] == "0" for r in parse_csv(p.stdout))


def test_default_backends_on_a_gpu_machine_say_whether_mpi_is_beside_nccl():
    require_gpus(1)
    d = tempdir()
    for env, beside in (({"COMMBENCH_MPI_CUDA_AWARE": "0"}, False), ({}, None)):
        out = os.path.join(d, "default.json")
        p = run(["run", "-N", "1", "-c", "allreduce", "-e", "1M", "--min-time", "0.005",
                 "--output", out], env=env, check=0)
        doc = json.load(open(out))
        why = doc["meta"]["backend_choice"]
        backends = {r["backend"] for r in doc["results"]}
        assert why.startswith("nccl") and "a GPU is visible and NCCL loads" in why, why
        if beside is None:  # the MPI's own answer decides
            beside = "mpi beside it on device memory" in why
        assert backends == ({"nccl", "mpi"} if beside else {"nccl"}), (why, backends)
        if not beside:
            assert "not CUDA-aware" in why, why
        assert all(r["wrong"] == 0 for r in doc["results"]), doc["results"]


def test_averages_validate_on_every_gpu():
    require_gpus(2)
    n = gpu_count()
    rows, _ = csv_run(["-g", str(n), "-c", "allreduce,reduce_scatter,reduce", "-o", "avg",
                       "-d", "all", "-e", "4M", "-f", "16"])
    check_valid(rows, n)
    assert {"float", "half", "bfloat16", "double"} <= {r["dtype"] for r in rows}


def test_non_blocking_communicators_are_an_option():
    require_gpus(1)
    rows, _ = csv_run(["-c", "allreduce,alltoall", "-e", "1M"],
                      env={"COMMBENCH_NCCL_BLOCKING": "0"})
    check_valid(rows, 1)
    p = run(["run", "-B", "nccl", "-c", "allreduce"], env={"COMMBENCH_NCCL_BLOCKING": "yes"},
            check=2)
    assert p.stderr.startswith("commbench: COMMBENCH_NCCL_BLOCKING must be"), p.stderr


def test_in_place_staging_without_warm_up():
    require_gpus(1)
    gpus = 2 if gpu_count() >= 2 else 1
    rows, _ = csv_run(["-g", str(gpus), "-c", "alltoall,sendrecv", "--placement", "in", "-w", "0",
                       "-n", "5", "-b", "1K", "-e", "64M", "-f", "64"])
    check_valid(rows, gpus)


def test_version_and_meta_name_the_compute_capability():
    require_gpus(1)
    p = run(["version"], check=0)
    cuda = next(l for l in p.stdout.splitlines() if l.startswith("CUDA: "))
    assert "compute capability " in cuda, cuda
    out = os.path.join(tempdir(), "r.json")
    run(["run", "-B", "nccl", "-c", "allreduce", "-e", "64K", "--output", out], check=0)
    assert "compute capability " in json.load(open(out))["meta"]["libraries"]["nccl"]


def test_an_nccl_environment_grid_reaches_every_rank():
    # NCCL_BUFFSIZE is read once per process: each value a fresh job, checked from the meta of
    # each job (mismatching ranks would be recorded as a failed combination).
    require_gpus(1)
    out = os.path.join(tempdir(), "grid.json")
    emit = os.path.join(tempdir(), "best.env")
    p = run(["tune", "-B", "nccl", "-c", "allreduce", "-b", "1M", "-e", "64M", "-f", "8",
             "--min-time", "0.02", "--env", "NCCL_BUFFSIZE=1048576,8388608", "--output", out,
             "--emit-env", emit], check=0)
    assert p.returncode == 0, p.stderr
    doc = json.load(open(out))
    envs = {r["env"] for r in doc["results"]}
    assert envs == {"", "NCCL_BUFFSIZE=1048576", "NCCL_BUFFSIZE=8388608"}, envs
    assert all(r["wrong"] == 0 for r in doc["results"]), doc["results"]
    assert not doc["meta"].get("env_failures"), doc["meta"]
    assert "the environment combination and algorithm to use" in p.stdout, p.stdout
    assert os.path.getsize(emit) > 0


def test_every_forced_algorithm_at_two_gpus_runs_or_is_skipped():
    # NCCL refuses some combinations at set-up (collnetdirect/ll: ncclInvalidUsage); the next
    # combination must still open (no crash), each refused one named in a note.
    require_gpus(2)
    rows, p = csv_run(["-N", "2", "-A", "all", "-c", "allreduce,allgather,reduce_scatter",
                       "-e", "1M"])
    assert p.returncode == 0, p.stderr
    check_valid(rows, 2)
    assert len({r["algorithm"] for r in rows}) > 2, {r["algorithm"] for r in rows}


def test_cuda_graph_launches_are_timed_per_call():
    require_gpus(1)
    gpus = 2 if gpu_count() >= 2 else 1
    rows, p = csv_run(["-N", str(gpus), "--cuda-graph", "20", "-c", "allreduce,broadcast",
                       "-e", "1M", "-n", "5", "-w", "1"])
    assert p.returncode == 0, p.stderr
    check_valid(rows, gpus)
    assert all(int(r["iters"]) == 5 * 20 for r in rows), [r["iters"] for r in rows]
    p = run(["run", "-B", "nccl", "--cuda-graph", "0"], check=2)
    assert p.stderr.startswith("commbench: --cuda-graph"), p.stderr


def test_alltoallv_one_rank():
    """alltoallv as grouped ncclSend/ncclRecv on a 1-rank world: every split validates (the one
    block is the rank's own), in place is skipped with its reason, a corrupted block exits 3."""
    require_gpus(1)
    d = tempdir()
    matrix = os.path.join(d, "m.txt")
    with open(matrix, "w") as f:
        f.write("4096\n")
    splits = ["uniform", "distance", "zipf:1", "moe:2,1,0,1", f"matrix:{matrix}"]
    rows, p = csv_run(["-N", "1", "-c", "alltoallv", "--placement", "both", "-b", "64K",
                       "-e", "16M", "-f", "16", "--moe-hidden", "1024"]
                      + [a for s in splits for a in ("--split", s)])
    assert p.returncode == 0, p.stderr
    check_valid(rows, 1)
    canonical = ["distance:1" if s == "distance" else s for s in splits]  # the column's form
    assert {r["split"] for r in rows} == set(canonical), rows
    assert all(r["placement"] == "out" and float(r["imbalance_tax"]) > 0 for r in rows), rows
    assert "grouped ncclSend/ncclRecv would overwrite blocks not yet sent" in p.stderr, p.stderr
    p = run(["run", "-B", "nccl", "-N", "1", "-c", "alltoallv", "--split", "zipf:1", "-b", "1M",
             "-e", "1M", "--format", "csv"], env={"COMMBENCH_TEST_FAULT": "corrupt:0"}, check=3)
    assert [r["wrong"] for r in parse_csv(p.stdout)] == ["2"], p.stdout  # split and twin


def test_alltoallv_splits_across_ranks():
    """Needs 2 GPUs: uneven blocks between ranks (one GPU per process, and two GPUs driven by one
    process), the busiest rank's bandwidth, and a corrupted block from another rank caught."""
    require_gpus(2)
    splits = ["uniform", "distance:0.5", "zipf:1.5", "moe:4,2,1,1.25"]
    args = ["-c", "alltoallv", "-b", "64K", "-e", "64M", "-f", "32", "--moe-hidden", "2048"] + \
        [a for s in splits for a in ("--split", s)]
    for placement in (["-N", "2"], ["-N", "1", "-g", "2"]):
        rows, p = csv_run(placement + args)
        assert p.returncode == 0, p.stderr
        check_valid(rows, 2)
        assert {r["split"] for r in rows} == set(splits), rows
        for r in rows:
            busiest = max(float(r["incast"]), float(r["send_skew"])) * int(r["bytes"])
            assert abs(float(r["algbw_GBps"]) - busiest / float(r["time_us"]) / 1e3) \
                <= 2e-3 * float(r["algbw_GBps"]), r
        assert all(float(r["incast"]) > 1.2 for r in rows if r["split"] == "zipf:1.5"), rows
    p = run(["run", "-B", "nccl", "-N", "2", "-c", "alltoallv", "--split", "zipf:1.5", "-b", "1M",
             "-e", "1M", "--format", "csv"], env={"COMMBENCH_TEST_FAULT": "corrupt:1:0"},
            check=3)
    assert [r["wrong"] for r in parse_csv(p.stdout)] == ["2"], p.stdout


def test_averages_at_seven_ranks_validate():
    require_gpus(7)
    rows, p = csv_run(["-N", "7", "-c", "allreduce,reduce_scatter,reduce", "-o", "avg",
                       "-d", "float,half,bfloat16,int32,uint8", "-e", "1M"])
    assert p.returncode == 0, p.stderr
    check_valid(rows, 7)
    doc = json.loads(run(["run", "-B", "nccl", "-N", "7", "-c", "allreduce", "-e", "64K",
                          "--format", "json"], check=0).stdout)
    for r in doc["results"]:
        assert r["rank_time_us"]["max"] == r["time_us"], r
        assert r["rank_time_us"]["slowest_gpu"] is not None, r


if __name__ == "__main__":
    main([test_an_nccl_environment_grid_reaches_every_rank,
          test_full_sweep_at_one_rank_validates,
          test_large_sizes_validate_at_memory_speed,
          test_forced_algorithms_run_validated_or_are_skipped_with_a_reason,
          test_several_gpus_per_process_and_what_nccl_chose,
          test_a_hang_is_aborted_by_the_watchdog,
          test_a_corrupted_result_is_caught_on_the_gpu,
          test_meta_names_the_library_and_where_it_came_from,
          test_cuda_aware_mpi_on_device_memory,
          test_default_backends_on_a_gpu_machine_say_whether_mpi_is_beside_nccl,
          test_averages_validate_on_every_gpu,
          test_non_blocking_communicators_are_an_option,
          test_in_place_staging_without_warm_up,
          test_version_and_meta_name_the_compute_capability,
          test_every_forced_algorithm_at_two_gpus_runs_or_is_skipped,
          test_cuda_graph_launches_are_timed_per_call,
          test_alltoallv_one_rank,
          test_alltoallv_splits_across_ranks,
          test_averages_at_seven_ranks_validate])
