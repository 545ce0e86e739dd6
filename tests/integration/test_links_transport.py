"""`probe links --transport` and `--launch` refusals through the real binary: NCCL asked for
without the NCCL build or without a GPU, an unknown transport, --launch under a launcher or naming
no program. Each is exit 2 with one `commbench:` line, before any rank talks, no file left."""
import os
import subprocess

from cbtest import BUILD_HAS_CUDA, Skip, main, run, tempdir


def one_line(p):
    lines = p.stderr.splitlines()
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert len(lines) >= 1 and lines[0].startswith("commbench: "), p.stderr
    return lines[0]


def gpu_visible():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
        return out.stdout.startswith("GPU ")
    except (OSError, subprocess.SubprocessError):
        return False


def test_nccl_without_the_build_or_a_gpu_is_refused():
    if BUILD_HAS_CUDA and gpu_visible():
        raise Skip("a GPU is visible here: the refusal needs a machine without one")
    out = os.path.join(tempdir(), "links.json")
    p = run(["probe", "links", "--transport", "nccl", "--nics", "mlx5_0", "--output", out])
    first = one_line(p)
    if BUILD_HAS_CUDA:
        assert first.startswith("commbench: --transport nccl: ") and "CUDA device" in first, first
    else:
        assert first == ("commbench: --transport nccl: this commbench was built without CUDA, so "
                         "it has no NCCL"), first
    assert len(p.stderr.splitlines()) == 1, p.stderr
    assert not os.path.exists(out)


def test_unknown_transport_is_refused():
    first = one_line(run(["probe", "links", "--transport", "ib"]))
    assert first == "commbench: invalid --transport 'ib': expected tcp or nccl", first


def test_launch_under_a_launcher_is_refused():
    p = run(["probe", "links", "--transport", "tcp", "--launch", "mpirun -np 2"], np=2)
    assert p.returncode == 2, (p.returncode, p.stderr)
    # The user's mpirun may print its own box first: commbench's first line is what counts.
    ours = [line for line in p.stderr.splitlines() if line.startswith("commbench: ")]
    assert ours and ours[0].startswith(
        "commbench: probe links --launch starts a fresh job per NIC"), p.stderr


def test_launch_naming_no_program_is_refused():
    first = one_line(run(["probe", "links", "--transport", "tcp", "--nics", "eth0", "--launch",
                          "mpirun-nonexistent -np 2"]))
    assert "--launch 'mpirun-nonexistent'" in first and "no such program" in first, first


if __name__ == "__main__":
    main([test_nccl_without_the_build_or_a_gpu_is_refused, test_unknown_transport_is_refused,
          test_launch_under_a_launcher_is_refused, test_launch_naming_no_program_is_refused])
