"""The nccl backend where no GPU is needed: finding and checking libnccl (bogus paths, a library
that is not NCCL, test-double libraries for an old release and missing symbols,
COMMBENCH_NCCL_LIB), `version`, argument checks, CUDA-aware MPI refusal, and -B nccl without a
GPU. Arguments: the three fake libraries (old, partial, full) built from tests/unit/collectives/backends/nccl/fake_nccl.c."""
import os
import sys

from cbtest import BUILD_HAS_CUDA, Skip, main, run, tempdir

FAKE_OLD, FAKE_PARTIAL, FAKE_FULL = (sys.argv[1:4] + ["", "", ""])[:3]
sys.argv[1:4] = []  # the rest selects tests
LIBM = "/lib/x86_64-linux-gnu/libm.so.6"


# What -B nccl says where it cannot run: no device, or a build without CUDA.
NO_GPU = "no CUDA device is visible" if BUILD_HAS_CUDA else "built without CUDA"


def gpu_visible():
    p = run(["list", "backends"], check=0)
    line = next(l for l in p.stdout.splitlines() if l.startswith("nccl"))
    return "unavailable" not in line


def one_line_error(p):
    """commbench's one line; the MPI launcher may add its own report around it."""
    lines = [l for l in p.stderr.splitlines() if l.startswith("commbench")]
    assert len(lines) == 1, f"expected one line on stderr, got:\n{p.stderr}"
    assert p.stdout == "", f"nothing may reach stdout on failure:\n{p.stdout}"
    return lines[0]


def test_without_a_gpu_nccl_exits_1_saying_so():
    if gpu_visible():
        raise Skip("a GPU is visible here")
    out = os.path.join(tempdir(), "r.csv")
    p = run(["run", "-B", "nccl", "-c", "allreduce", "-e", "1K", "--output", out], check=1)
    line = one_line_error(p)
    assert NO_GPU in line and "nccl" in line, line
    assert not os.path.exists(out), "no output file after a failure"
    # The same with a forced algorithm and several GPUs per process.
    p = run(["run", "-B", "nccl", "-A", "ring/ll128", "-g", "2"], check=1)
    assert NO_GPU in one_line_error(p)


def test_a_missing_library_path_is_a_usage_error_naming_it():
    p = run(["run", "-B", "nccl", "--nccl-lib", "/nonexistent/dir/libnccl.so.2"], check=2)
    line = one_line_error(p)
    assert "/nonexistent/dir/libnccl.so.2" in line and "no such file" in line, line
    assert "--nccl-lib" in line, line


def test_a_library_without_nccl_symbols_is_named():
    if not os.path.exists(LIBM):
        raise Skip(f"{LIBM} not here")
    p = run(["run", "-B", "nccl", "--nccl-lib", LIBM], check=2)
    line = one_line_error(p)
    assert LIBM in line and "ncclGetVersion" in line, line


def test_an_old_release_is_refused_with_both_versions():
    p = run(["run", "-B", "nccl", "--nccl-lib", FAKE_OLD], check=2)
    line = one_line_error(p)
    assert "NCCL 2.12.12" in line and "too old" in line and "2.14.0" in line, line
    assert FAKE_OLD in line, line


def test_missing_symbols_are_listed():
    p = run(["run", "-B", "nccl", "--nccl-lib", FAKE_PARTIAL], check=2)
    line = one_line_error(p)
    assert "ncclCommInitRankConfig" in line and "ncclCommAbort" in line, line


def test_commbench_nccl_lib_is_read():
    p = run(["run", "-B", "nccl"], env={"COMMBENCH_NCCL_LIB": "/nonexistent/libnccl.so.2"},
            check=2)
    line = one_line_error(p)
    assert "COMMBENCH_NCCL_LIB" in line and "/nonexistent/libnccl.so.2" in line, line
    # A usable library named there is what `version` reports.
    p = run(["version"], env={"COMMBENCH_NCCL_LIB": FAKE_FULL}, check=0)
    assert f"NCCL: 2.28.9 ({FAKE_FULL})" in p.stdout, p.stdout


def test_version_reports_the_loaded_nccl_and_its_path():
    p = run(["version"], check=0)
    line = next((l for l in p.stdout.splitlines() if l.startswith("NCCL: ")), None)
    assert line is not None, p.stdout
    if "not loaded" in line:
        raise Skip(line)
    version, path = line[len("NCCL: "):].split(" (", 1)
    path = path.rstrip(")").split(")")[0]
    assert version.count(".") == 2 and all(x.isdigit() for x in version.split(".")), line
    assert os.path.exists(path) and "libnccl" in path, line
    assert any(l.startswith("CUDA: ") for l in p.stdout.splitlines()), p.stdout
    # A bad --nccl-lib is reported, not fatal, for `version`.
    p = run(["version", "--nccl-lib", "/nonexistent/libnccl.so.2"], check=0)
    assert "NCCL: not loaded: cannot load NCCL from /nonexistent/libnccl.so.2" in p.stdout


def test_gpu_options_are_checked_before_anything_runs():
    for args, words in [
        (["-B", "nccl", "-g", "0"], ["--gpus", "positive"]),
        (["-B", "nccl", "-g", "two"], ["--gpus"]),
        (["-B", "mpi", "-g", "2"], ["--gpus 2", "nccl"]),
        (["-B", "nccl,mpi", "-g", "2"], ["--gpus 2", "nccl"]),
        (["-B", "nccl", "--memory", "host"], ["nccl", "--memory device"]),
    ]:
        p = run(["run", "-c", "allreduce", "-e", "1K"] + args, check=2)
        line = one_line_error(p)
        assert all(w in line for w in words), (args, line)


def test_mpi_on_device_memory_needs_a_cuda_aware_mpi():
    p = run(["run", "-B", "mpi", "--memory", "device", "-c", "allreduce", "-e", "1K"], np=1,
            check=None)
    if p.returncode == 0:
        raise Skip("this MPI is CUDA-aware and a GPU is visible")
    assert p.returncode == 2, p.stderr
    line = one_line_error(p)
    assert "CUDA-aware" in line and "COMMBENCH_MPI_CUDA_AWARE" in line, line
    # Asserted CUDA-aware, it then needs a GPU.
    if not gpu_visible():
        p = run(["run", "-B", "mpi", "--memory", "device", "-c", "allreduce", "-e", "1K"], np=1,
                env={"COMMBENCH_MPI_CUDA_AWARE": "1"}, check=1)
        assert NO_GPU in p.stderr or "--memory device is not available" in p.stderr, p.stderr


def test_list_names_nccl_and_why_it_cannot_run():
    p = run(["list", "backends"], check=0)
    line = next(l for l in p.stdout.splitlines() if l.startswith("nccl"))
    if not gpu_visible():
        assert f"unavailable: {NO_GPU}" in line or "built without CUDA" in line, line
    p = run(["list", "algorithms", "-B", "nccl"], check=0)
    if not gpu_visible():
        assert "# nccl: unavailable here" in p.stdout, p.stdout


def test_without_a_gpu_the_default_backend_is_not_nccl():
    if gpu_visible():
        raise Skip("a GPU is visible here")
    p = run(["run", "-c", "allreduce", "-e", "64", "--format", "csv", "--min-time", "0.002"],
            np=1, check=0)
    backends = {l.split(",")[0] for l in p.stdout.splitlines()[1:]}
    assert backends == {"mpi", "gloo"}, p.stdout  # every CPU backend side by side


if __name__ == "__main__":
    main([test_without_a_gpu_nccl_exits_1_saying_so,
          test_a_missing_library_path_is_a_usage_error_naming_it,
          test_a_library_without_nccl_symbols_is_named,
          test_an_old_release_is_refused_with_both_versions,
          test_missing_symbols_are_listed,
          test_commbench_nccl_lib_is_read,
          test_version_reports_the_loaded_nccl_and_its_path,
          test_gpu_options_are_checked_before_anything_runs,
          test_mpi_on_device_memory_needs_a_cuda_aware_mpi,
          test_list_names_nccl_and_why_it_cannot_run,
          test_without_a_gpu_the_default_backend_is_not_nccl])
