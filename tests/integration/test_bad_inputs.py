"""The bad-input and fault catalogue: every bad value, file and fault commbench is known to meet,
each run through the real binary and held to the contract: the documented exit code, a first
stderr line 'commbench: ...' naming the cause, nothing on stdout for a usage error, and no file
left behind. Then the fault cases of test_hardening.py (full disks, signals, dead ranks, ...).
Prints one line per case and 'N passed, N failed, N skipped'."""
import os
import shutil
import sys

import test_hardening
from cbtest import OPEN_MPI_LOST, SOURCE_DIR, Skip, is_openmpi, main, mpi_prefix, run, tempdir

DATA = os.path.join(SOURCE_DIR, "tests", "data", "results")


def data(name):
    return os.path.join(DATA, name)


def host_memory_overcommit():
    avail = 0
    for line in open("/proc/meminfo"):
        if line.startswith("MemAvailable:"):
            avail = int(line.split()[1]) * 1024
    size = str(avail // 3 // 4096 * 4096)
    return ["-b", size, "-e", size, "-n", "1", "-w", "0"]


RUN = ["run", "-c", "allreduce", "-e", "64"]
MPI2 = RUN + ["-B", "mpi", "-N", "2"]
GLOO2 = RUN + ["-B", "gloo", "-N", "2"]
MPI_PREFIX = " ".join(mpi_prefix(2))

# (name, arguments, expected exit code, words of the first stderr line, extra environment)
CASES = [
    ("unknown collective", ["run", "-c", "allreduc"], 2, ["unknown collective 'allreduc'"]),
    ("bad size suffix", ["run", "-b", "12Q"], 2, ["--min-bytes"]),
    ("min above max", ["run", "-b", "1M", "-e", "1K"], 2, ["larger than --max-bytes"]),
    ("unknown dtype", ["run", "-d", "float,quad"], 2, ["unknown dtype 'quad'"]),
    ("unknown op", ["run", "-o", "xor"], 2, ["unknown op 'xor'"]),
    ("bad placement", ["run", "--placement", "up"], 2, ["--placement"]),
    ("bad memory", ["run", "--memory", "floppy"], 2, ["--memory"]),
    ("bad progress", ["run", "--progress", "sometimes"], 2, ["--progress"]),
    ("zero iterations", ["run", "-n", "0"], 2, ["--iters"]),
    ("negative warm-up", ["run", "-w", "-3"], 2, ["--warmup"]),
    ("huge warm-up", RUN + ["-w", "4000000000"], 2, ["--warmup", "at most"]),
    ("huge iterations", RUN + ["-n", "4000000000"], 2, ["--iters", "at most"]),
    ("negative timeout", ["run", "--timeout", "-1"], 2, ["--timeout"]),
    ("timeout 1e10", RUN + ["--timeout", "1e10"], 2, ["--timeout", "at most"]),
    ("timeout 1e30", RUN + ["--timeout", "1e30"], 2, ["--timeout", "at most"]),
    ("timeout 9223372036", RUN + ["--timeout", "9223372036"], 2, ["--timeout", "at most"]),
    ("timeout nan", RUN + ["--timeout", "nan"], 2, ["--timeout"]),
    ("min-time word", ["run", "--min-time", "zero"], 2, ["--min-time"]),
    ("min-time huge", RUN + ["--min-time", "1e12"], 2, ["--min-time"]),
    ("unknown format", ["run", "--format", "yaml"], 2, ["unknown format 'yaml'"]),
    ("unknown backend", ["run", "-B", "carrier-pigeon"], 2, ["unknown backend"]),
    ("unknown flag", ["run", "--frobnicate"], 2, ["frobnicate"]),
    ("step factor 1", ["run", "-f", "1"], 2, ["--step-factor"]),
    ("step bytes 0", ["run", "-i", "0"], 2, ["--step-bytes"]),
    ("zero ranks", ["run", "-c", "barrier", "-N", "0"], 2, ["--nranks"]),
    ("ranks word", ["run", "-c", "barrier", "-N", "two"], 2, ["--nranks"]),
    ("too many ranks", ["run", "-c", "barrier", "-N", "5000"], 2, ["at most 1024"]),
    ("unknown interface", ["run", "-c", "barrier", "-B", "gloo", "--gloo-iface", "nonexistent0"],
     2, ["unknown --gloo-iface"]),
    ("output extension", RUN + ["--output", "r.pdf"], 2, ["extension"]),
    ("output directory missing", RUN + ["--output", "/nonexistent/dir/r.csv"], 2,
     ["does not exist"]),
    ("output is a directory", RUN + ["--output", "dir.csv"], 2, ["is a directory"]),
    ("output read-only", RUN + ["--output", "ro.csv"], 2, ["read-only"]),
    # A directory no one may create files in, not even root: every launch path refuses it in
    # the commbench the user started, before a rank starts (a rank that found out hung).
    ("output unwritable directory", RUN + ["--output", "/sys/r.json"], 2,
     ["cannot write output '/sys/r.json'"]),
    ("output unwritable directory under mpi", MPI2 + ["--output", "/sys/r.json"], 2,
     ["cannot write output '/sys/r.json'"]),
    ("output unwritable directory under gloo", GLOO2 + ["--output", "/sys/r.md"], 2,
     ["cannot write output '/sys/r.md'"]),
    ("output unwritable directory with repeat", MPI2 + ["--repeat", "2", "--output",
                                                        "/sys/r.jsonl"], 2,
     ["cannot write output '/sys/r.jsonl'"]),
    ("output unwritable directory with launch", RUN + ["-B", "mpi", "--launch", MPI_PREFIX,
                                                       "--output", "/sys/r.csv"], 2,
     ["cannot write output '/sys/r.csv'"]),
    ("output unwritable directory with tune", ["tune"] + MPI2[1:] + ["--output", "/sys/r.json"],
     2, ["cannot write output '/sys/r.json'"]),
    ("output unwritable directory with tune env",
     ["tune"] + MPI2[1:] + ["--env", "OMPI_MCA_coll_tuned_priority=30,40", "--output",
                            "/sys/r.json"], 2, ["cannot write output '/sys/r.json'"]),
    ("rounds without a grid", ["tune", "-c", "allreduce", "-e", "64", "--rounds", "3"], 2,
     ["--rounds applies to environment grids"]),
    ("tune grid beyond the bound",
     ["tune", "-c", "allreduce", "-e", "64"] + [a for n in ("NCCL_A", "NCCL_B") for a in
                                                ("--env", n + "=" + ",".join(map(str, range(200))))],
     2, ["40000 combinations (200 x 200 values)", "more than the 10000"]),
    ("tune side by side with csv", ["tune", "-c", "allreduce", "-e", "64", "--format", "csv",
                                    "--side-by-side"], 2, ["--side-by-side applies to --format table"]),
    ("tune resume of another sweep", ["tune"] + MPI2[1:] + ["--env", "NCCL_X=1", "--resume",
                                                            data("base.json")], 2,
     ["--resume", "holds another sweep's results", "collectives"]),
    ("launch empty", RUN + ["--launch", ""], 2, ["invalid --launch ''", "an empty value"]),
    ("launch blank under tune", ["tune", "-c", "allreduce", "-e", "64", "--launch", "  "], 2,
     ["--launch", "empty launcher prefix"]),
    ("launch program missing", RUN + ["--launch", "mpirun-nonexistent -np 2"], 2,
     ["--launch 'mpirun-nonexistent'", "no such program"]),
    ("output twice", RUN + ["--output", "r.csv", "--output", "./r.csv"], 2, ["same file"]),
    ("gpus zero", RUN + ["-B", "nccl", "-g", "0"], 2, ["--gpus"]),
    ("gpus without nccl", RUN + ["-B", "mpi", "-g", "2"], 2, ["--gpus 2", "nccl"]),
    ("cuda graph with gloo", RUN + ["-B", "gloo", "-N", "2", "--cuda-graph", "4"], 2,
     ["--cuda-graph applies to -B nccl only", "backends are gloo"]),
    ("cuda graph with the default backends", RUN + ["--cuda-graph", "4"], 2,
     ["--cuda-graph applies to -B nccl only"]),
    ("nccl library with mpi", RUN + ["-B", "mpi", "--nccl-lib", "/nonexistent/libnccl.so.2"], 2,
     ["--nccl-lib applies to -B nccl only", "backends are mpi"]),
    ("gloo interface with mpi", RUN + ["-B", "mpi", "--gloo-iface", "lo"], 2,
     ["--gloo-iface applies to -B gloo only"]),
    ("nccl tuner file with mpi", ["tune", "-B", "mpi", "-c", "allreduce", "-e", "64",
                                  "--emit-nccl-tuner", "tuner.conf"], 2,
     ["--emit-nccl-tuner applies to -B nccl only"]),
    ("nccl on host memory", RUN + ["-B", "nccl", "--memory", "host"], 2, ["--memory device"]),
    ("nccl library missing", ["run", "-B", "nccl", "--nccl-lib", "/nonexistent/libnccl.so.2"], 2,
     ["/nonexistent/libnccl.so.2"]),
    ("one buffer beyond RAM", ["run", "-c", "allreduce", "-b", "1T", "-e", "1T"], 2,
     ["cannot allocate"]),
    ("all buffers beyond available memory", ["run", "-c", "allreduce"] + host_memory_overcommit(),
     2, ["cannot allocate host buffers"]),
    ("nothing to run under mpi", RUN + ["-B", "mpi", "-N", "2", "-d", "half"], 2, []),
    ("no subcommand", [], 2, []),
    ("unknown subcommand", ["frobnicate"], 2, ["frobnicate"]),
    ("compare empty file", ["compare", data("base.json"), data("bad-empty.json")], 2,
     ["file is empty"]),
    ("compare truncated", ["compare", data("base.json"), data("bad-truncated.json")], 2,
     ["not valid JSON"]),
    ("compare not json", ["compare", data("base.json"), data("bad-not-json.json")], 2,
     ["not valid JSON"]),
    ("compare schema", ["compare", data("base.json"), data("bad-schema.json")], 2,
     ["unknown schema"]),
    ("compare negative", ["compare", data("base.json"), data("bad-negative.json")], 2,
     ["invalid value -20"]),
    ("compare nan json", ["compare", data("base.json"), data("bad-nan.json")], 2,
     ["not valid JSON"]),
    ("compare nan csv", ["compare", data("base.json"), data("bad-nan.csv")], 2, ["'nan'"]),
    ("compare truncated jsonl", ["compare", data("base.json"), data("bad-truncated.jsonl")], 2,
     ["bad-truncated.jsonl:4"]),
    ("compare csv header", ["compare", data("base.json"), data("bad-header.csv")], 2,
     ["not the commbench CSV header"]),
    ("compare missing file", ["compare", data("base.json"), data("missing.json")], 2,
     ["No such file"]),
    ("compare threshold", ["compare", data("base.json"), data("base.json"), "--threshold", "-3"],
     2, ["--threshold"]),
    ("compare latency bytes", ["compare", data("base.json"), data("base.json"),
                               "--latency-bytes", "12Q"], 2, ["--latency-bytes"]),
    ("compare noise factor", ["compare", data("base.json"), data("base.json"),
                              "--noise-factor", "x"], 2, ["--noise-factor"]),
    ("compare format", ["compare", data("base.json"), data("base.json"), "--format", "html"], 2,
     ["format 'html'"]),
    ("compare output read-only", ["compare", data("base.json"), data("base.json"), "--output",
                                  "ro.md"], 2, ["read-only"]),
    # Nothing in common is no pass; wrong results on the new side fail whatever they compare to.
    ("compare nothing in common", ["compare", data("base.json"), data("new-disjoint.json")], 6,
     ["INCONCLUSIVE nothing compared"]),
    ("compare wrong results", ["compare", data("base.json"), data("new-wrong.json")], 3,
     ["new-wrong.json", "3 wrong elements"]),
    # A .jsonl whose run failed part way is marked so: judged, it would pass part of a run.
    ("compare incomplete jsonl", ["compare", data("base.json"), data("incomplete.jsonl")], 2,
     ["incomplete.jsonl:4", "incomplete results", "exit 1", "repetition 2 of 3"]),
    ("compare incomplete base", ["compare", data("incomplete.jsonl"), data("base.json")], 2,
     ["incomplete.jsonl:4", "incomplete results"]),
    ("check incomplete jsonl", ["check", "--expect", "auto", data("incomplete.jsonl")], 2,
     ["incomplete.jsonl:4", "incomplete results"]),
    # A run that fails before its first record leaves no .jsonl (as no .json), on every path.
    ("run dies before a record", GLOO2 + ["--output", "r.jsonl"], 1, ["rank 1"],
     {"COMMBENCH_TEST_FAULT": "die:1"}),
    ("repeat dies before a record", GLOO2 + ["--repeat", "2", "--output", "r.jsonl"], 1,
     ["repetition 1 of 2", "rank 1"], {"COMMBENCH_TEST_FAULT": "die:1"}),
    ("launch dies before a record", MPI2 + ["--launch", MPI_PREFIX, "--output", "r.jsonl"], 1,
     ["repetition 1 of 1", "rank 1"], {"COMMBENCH_TEST_FAULT": "die:1"}),
    ("check missing spec", ["check", "none.toml"], 2, ["none.toml"]),
    ("plot truncated", ["plot", data("bad-truncated.json"), "-o", "p.svg"], 2,
     ["not valid JSON"]),
    ("plot output a directory", ["plot", data("base.json"), "-o", "dir.svg"], 2,
     ["is a directory"]),
    ("topo format", ["topo", "--format", "xml"], 2, ["xml"]),
    ("topo sysfs missing", ["topo", "--sysfs-root", "missing"], 2, ["missing"]),
]

# No output may be an input or another output, by identity: a.json and new.json are results,
# soft.json a symbolic and hard.json a hard link to a.json, chart.svg a link to a.json, l.csv and
# l.env links to files not there yet (make_case). Each file is checked unchanged afterwards.
TUNE_GRID = ["tune", "-c", "allreduce", "-e", "64", "--env", "GLOO_X=1"]
CASES += [
    ("compare output is its base", ["compare", "a.json", "new.json", "--output", "a.json"], 2,
     ["--output 'a.json' names the same file as BASE 'a.json'"]),
    ("compare output is its new file", ["compare", "a.json", "new.json", "--output", "new.json"],
     2, ["--output 'new.json' names the same file as NEW 'new.json'"]),
    ("compare output is a base through a link", ["compare", "a.json", "new.json", "--output",
                                                 "soft.json"], 2,
     ["--output 'soft.json' names the same file as BASE 'a.json'"]),
    ("compare output is a hard link of the new file", ["compare", "new.json", "a.json",
                                                       "--output", "hard.json"], 2,
     ["--output 'hard.json' names the same file as NEW 'a.json'"]),
    ("check output is its results", ["check", "--expect", "auto", "a.json", "--output", "a.json"],
     2, ["--output 'a.json' names the same file as RESULTS 'a.json'"]),
    ("check junit is its results", ["check", "--expect", "auto", "a.json", "new.json", "--junit",
                                    "hard.json"], 2,
     ["--junit 'hard.json' names the same file as RESULTS 'a.json'"]),
    ("check junit is its output", ["check", "--expect", "auto", "a.json", "--output", "r.json",
                                   "--junit", "./r.json"], 2,
     ["--junit './r.json' names the same file as --output 'r.json'"]),
    ("plot output is its results through a link", ["plot", "a.json", "-o", "chart.svg"], 2,
     ["--output 'chart.svg' names the same file as RESULTS 'a.json'"]),
    ("run outputs one file through a link", RUN + ["--output", "r.json", "--output", "l.csv"], 2,
     ["--output 'l.csv' names the same file as --output 'r.json'"]),
    ("repeat outputs one file twice", GLOO2 + ["--repeat", "2", "--output", "r.jsonl",
                                               "--output", "./r.jsonl"], 2,
     ["--output './r.jsonl' names the same file as --output 'r.jsonl'"]),
    ("tune emit-env is an output through a link", TUNE_GRID + ["--emit-env", "l.env", "--output",
                                                              "g.json"], 2,
     ["--emit-env 'l.env' names the same file as --output 'g.json'"]),
    ("tune output is its env grid", TUNE_GRID[:-2] + ["--env-grid", "a.json", "--output",
                                                      "hard.json"], 2,
     ["--output 'hard.json' names the same file as --env-grid 'a.json'"]),
]

# What --emit-env writes for a shell to source: a value that would end its line is refused,
# the variable named, the value never shown (and nothing left: no best.env, no pwn5).
CASES += [
    ("env value with a newline", TUNE_GRID[:-1] + ["COMMBENCH_TEST_FAULT=ok\ntouch pwn5 #",
                                                   "--emit-env", "best.env"], 2,
     ["--env COMMBENCH_TEST_FAULT", "control character"], None, ["touch pwn5"]),
    ("env value with an escape", TUNE_GRID[:-1] + ["NCCL_ALGO=Ring,\x1b]0;x\x07Tree"], 2,
     ["--env NCCL_ALGO", "control character"], None, ["\x1b", "Tree"]),
    # Secrets never reach stderr, refusals included.
    ("env secret refused unshown", TUNE_GRID[:-1] + ["GLOO_AUTH_TOKEN=topsecretQQ1,topsecretQQ2"],
     2, ["--env GLOO_AUTH_TOKEN"], None, ["topsecretQQ"]),
    ("unknown flag carrying a secret", ["run", "--frobnicate=GLOO_AUTH_TOKEN=topsecretQQ3"], 2,
     ["frobnicate", "GLOO_AUTH_TOKEN=***"], None, ["topsecretQQ"]),
    # --nics: each NIC once, by a name, not loopback.
    ("nics twice", ["probe", "links", "--nics", "eth0,eth0"], 2,
     ["invalid --nics 'eth0,eth0'", "eth0 is named twice"]),
    ("nics empty name", ["probe", "links", "--nics", "eth0,"], 2,
     ["invalid --nics 'eth0,'", "an empty NIC name"]),
    ("nics loopback", ["probe", "links", "--nics", "lo"], 2,
     ["invalid --nics 'lo'", "loopback"]),
    # An empty value is a usage error for every option that takes one (one rule).
    ("empty min-efficiency", ["check", "--expect", "auto", "a.json", "--min-efficiency", ""], 2,
     ["invalid --min-efficiency '': an empty value"]),
    ("empty rounds", TUNE_GRID + ["--rounds", ""], 2, ["invalid --rounds '': an empty value"]),
    ("empty emit-env", TUNE_GRID + ["--emit-env", ""], 2,
     ["invalid --emit-env '': an empty value"]),
    ("empty nics", ["probe", "links", "--nics", ""], 2, ["invalid --nics '': an empty value"]),
    ("empty transport", ["probe", "links", "--transport", ""], 2,
     ["invalid --transport '': an empty value"]),
    ("empty output", RUN + ["--output", ""], 2, ["invalid --output '': an empty value"]),
    ("empty collective", ["run", "-c", ""], 2, ["invalid --collectives '': an empty value"]),
    ("empty compare file", ["compare", "a.json", ""], 2, ["invalid FILES '': an empty value"]),
]


def fake_launchers():
    """Launchers that end at once without starting a rank: one exits 0, one 3 (which only a rank
    may report as a validation verdict)."""
    d = tempdir(prefix="cbtest-fake-launchers-")
    for name, code in (("mpirun", 0), ("mpiexec", 3)):
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\necho 'launcher says hello' >&2\nexit {code}\n")
        os.chmod(path, 0o755)
    return d


FAKE = fake_launchers()
# The other MPI's launcher than this build's: each rank would be a world of its own.
OTHER_PREFIX = ("mpiexec.mpich -n 2" if is_openmpi()
                else "mpirun.openmpi -np 2 --oversubscribe --mca btl self,vader")
CASES += [
    ("launcher ends without ranks", RUN + ["-B", "mpi", "--launch", f"{FAKE}/mpirun -np 2",
                                           "--output", "r.json"], 1,
     ["mpirun ended (exit 0) without starting any rank", "launcher says hello"]),
    ("launcher exit 3 is no verdict", RUN + ["-B", "mpi", "--launch", f"{FAKE}/mpiexec -n 2",
                                             "--output", "r.json"], 1,
     ["mpiexec exited with code 3 and no rank reported a verdict"]),
    # Open MPI's help box: its sentence, never its rule of dashes.
    ("launcher help box", RUN + ["-B", "mpi", "--launch", "mpirun.openmpi -np 64"], 1,
     ["There are not enough slots available in the system"]),
    ("launcher of the other MPI flavour", RUN + ["-B", "mpi", "-N", "2", "--launch",
                                                 OTHER_PREFIX], 2,
     ["launcher started 2 ranks", "MPI flavours differ"]),
]
# MPI start-up errors keep the MPI library's own words (or say Open MPI lost them: OPEN_MPI_LOST).
if is_openmpi():
    CASES.append(("mpi start-up error", MPI2, 1, ["Framework: btl", "Component: nonexistent"],
                  {"OMPI_MCA_btl": "nonexistent"}))
else:
    CASES.append(("mpi start-up error", MPI2, 1,
                  ["Invalid MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM value (bogus)"],
                  {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "bogus"}))


def contents(d):
    """Each regular file's bytes (links followed), by name."""
    out = {}
    for n in os.listdir(d):
        p = os.path.join(d, n)
        if os.path.isfile(p):
            with open(p, "rb") as f:
                out[n] = f.read()
    return out


def make_case(name, args, code, words, env=None, absent=()):
    def case():
        d = tempdir()
        os.mkdir(os.path.join(d, "dir.csv"))
        os.mkdir(os.path.join(d, "dir.svg"))
        for ro in ("ro.csv", "ro.md"):
            with open(os.path.join(d, ro), "w") as f:
                f.write("keep\n")
            os.chmod(os.path.join(d, ro), 0o444)
        shutil.copy(data("base.json"), os.path.join(d, "a.json"))
        shutil.copy(data("base.json"), os.path.join(d, "new.json"))
        os.symlink("a.json", os.path.join(d, "soft.json"))
        os.symlink("a.json", os.path.join(d, "chart.svg"))
        os.link(os.path.join(d, "a.json"), os.path.join(d, "hard.json"))
        os.symlink("r.json", os.path.join(d, "l.csv"))
        os.symlink("g.json", os.path.join(d, "l.env"))
        before = sorted(os.listdir(d))
        files = contents(d)
        cwd = os.getcwd()
        os.chdir(d)
        try:
            for attempt in range(5):
                p = run(args, env=dict(env or {}, CUDA_VISIBLE_DEVICES=""), timeout=120)
                # Open MPI 4.1 may lose the ranks' own help box (said so, not hidden): once more.
                if OPEN_MPI_LOST not in p.stderr.partition("\n")[0]:
                    break
        finally:
            os.chdir(cwd)
        assert p.returncode == code, f"exit {p.returncode}, expected {code}\n{p.stderr}"
        lines = p.stderr.strip().splitlines()
        assert lines and lines[0].startswith("commbench: "), p.stderr
        assert "Traceback" not in p.stderr and "terminate called" not in p.stderr, p.stderr
        errors = [l for l in lines if not l.startswith(("commbench: note:",
                                                         "commbench: warning:"))]
        assert errors, p.stderr
        for w in words:
            assert w in errors[0], f"{w!r} not in {errors[0]!r}"
        for w in absent:
            assert w not in p.stderr, f"{w!r} on stderr:\n{p.stderr}"
        if code == 2:
            assert p.stdout == "", f"stdout on a usage error:\n{p.stdout[:500]}"
        assert sorted(os.listdir(d)) == before, f"left behind: {os.listdir(d)}"
        assert contents(d) == files, "a file changed"
        shutil.rmtree(d)
    case.__name__ = "test_bad_input_" + "".join(c if c.isalnum() else "_" for c in name)
    return case


def hardening_cases():
    return [getattr(test_hardening, n) for n in dir(test_hardening) if n.startswith("test_")]


if __name__ == "__main__":
    cases = [make_case(*c) for c in CASES]
    if "--inputs-only" in sys.argv:
        sys.argv.remove("--inputs-only")
    else:
        cases += hardening_cases()
    main(cases)
