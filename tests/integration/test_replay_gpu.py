"""commbench replay on GPUs (ctest label gpu; skipped, exit 77, where no GPU is visible): the
step on NCCL, compute as spin kernels on a stream of their own and each bucket's allreduce on the
communicator's stream behind the event where its gradients are ready, timed by CUDA events: the
compute takes its time, every collective validates, and a long enough backward hides most of the
communication; FSDP's gathers and reduce-scatters likewise."""
import json

from cbtest import main, run
from test_nccl_gpu import gpu_count, require_gpus


def replay(args):
    n = max(1, min(gpu_count(), 2))
    p = run(["replay", "-B", "nccl", "-N", str(n), "-w", "2", "-n", "5", "--format", "json"] + args,
            check=0, timeout=600)
    return json.loads(p.stdout)["replays"][0]


def test_ddp_step_on_gpus_validates_and_hides_behind_compute():
    require_gpus(1)
    bare = replay(["--preset", "gpt2", "--backward-ms", "0"])
    hidden = replay(["--preset", "gpt2", "--backward-ms", "200"])
    for r in (bare, hidden):
        assert r["backend"] == "nccl" and r["wrong"] == 0, r
        assert len(r["collectives"]) == 13, r
    assert bare["compute_us"] < 1, bare
    # The spin kernels take their time on the GPU (within 5 %, plus launch gaps).
    assert 190000 <= hidden["compute_us"] <= 230000, hidden
    assert hidden["exposed_us"] < max(bare["exposed_us"], 1000), (bare, hidden)


def test_fsdp_step_on_gpus_validates():
    require_gpus(1)
    r = replay(["--preset", "gpt2", "--pattern", "fsdp", "--backward-ms", "50"])
    assert r["wrong"] == 0, r
    kinds = {(c["collective"], c["phase"]) for c in r["collectives"]}
    assert kinds == {("allgather", "forward"), ("allgather", "backward"),
                     ("reduce_scatter", "backward")}, kinds
    assert r["step_us"] >= r["compute_us"] > 0, r


if __name__ == "__main__":
    main([test_ddp_step_on_gpus_validates_and_hides_behind_compute,
          test_fsdp_step_on_gpus_validates])
