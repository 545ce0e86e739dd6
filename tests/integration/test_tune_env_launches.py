"""`tune --env` judges combinations over launches, through the real binary: a knob that does
nothing is never advised, a combination that lifts a slowdown of the current environment is,
--emit-env writes only an advised combination with its values quoted for the shell, and an
--emit-* path that clashes with --output is refused before anything runs."""
import os
import subprocess

from cbtest import main, run, tempdir

# Three small sizes: each launch takes well under a second here, also in the slow mode.
SIZES = ["-c", "allreduce", "-b", "8", "-e", "32K", "-f", "64", "--min-time", "0.03", "-A",
         "default"]
SLOW = "slow:0:30000"  # rank 0 sleeps 30 ms after every call: far beyond any mode's noise


def tune(args, **kw):
    return run(["tune", "-B", "mpi", "-N", "2", *SIZES, "--format", "csv", *args], **kw)


def verdict(stderr):
    # Under --format csv, stdout holds the CSV alone and the advice goes to stderr.
    lines = [l for l in stderr.splitlines() if l.startswith("commbench: # tune --env: ")]
    assert len(lines) == 1, stderr
    return lines[0][len("commbench: # tune --env: "):]


def settings(path):
    return [l for l in open(path).read().splitlines() if l and not l.startswith("#")]


def test_noop_knob_is_not_advised():
    d = tempdir()
    emit = os.path.join(d, "best.env")
    env = {k: v for k, v in os.environ.items() if k != "COMMBENCH_TEST_FAULT"}
    p = tune(["--env", "COMMBENCH_UNUSED_KNOB=a,b", "--rounds", "3", "--emit-env", emit],
             check=0, env=env)
    line = verdict(p.stderr)
    assert line.startswith(("KEEP the current environment", "INCONCLUSIVE")), line
    assert "launches" in line, line
    assert settings(emit) == [], open(emit).read()
    assert "keep it" in open(emit).read()


def test_combination_lifting_a_slow_reference_is_advised_and_quoted():
    # The current environment carries the slowdown; the grid's empty value lifts it. A second
    # axis gives the combination a value that would run a command if a shell expanded it.
    d = tempdir()
    emit = os.path.join(d, "best.env")
    marker = os.path.join(d, "ran")
    p = tune(["--env", f"COMMBENCH_TEST_FAULT=,{SLOW}",
              "--env", f"COMMBENCH_UNUSED_KNOB=$(touch {marker})", "--rounds", "5",
              "--emit-env", emit], check=0, env={"COMMBENCH_TEST_FAULT": SLOW})
    line = verdict(p.stderr)
    assert line.startswith(f"ADVISE COMMBENCH_TEST_FAULT= COMMBENCH_UNUSED_KNOB=$(touch {marker})"), line
    assert "faster (its gain's 99 % bound" in line and "environment's part" in line, line
    assert settings(emit) == ["COMMBENCH_TEST_FAULT=''",
                              f"COMMBENCH_UNUSED_KNOB='$(touch {marker})'"], open(emit).read()
    # Sourcing the file sets the value as written and runs nothing.
    got = subprocess.run(["sh", "-c", f'set -a; . "{emit}"; set +a; printf %s "$COMMBENCH_UNUSED_KNOB"'],
                         capture_output=True, text=True, check=True).stdout
    assert got == f"$(touch {marker})", got
    assert not os.path.exists(marker)


def test_emit_path_clashing_with_output_is_refused():
    d = tempdir()
    out = os.path.join(d, "t.json")
    for emit_option in ("--emit-env", "--emit-ompi-rules"):
        p = tune(["--env", "COMMBENCH_UNUSED_KNOB=a", "--output", out, emit_option, out], check=2)
        assert p.stderr.startswith("commbench: ") and "names the same file" in p.stderr, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert not os.path.exists(out)
    p = tune(["--env", "COMMBENCH_UNUSED_KNOB=a", "--emit-env",
              os.path.join(d, "missing", "best.env")], check=2)
    assert p.stderr.startswith("commbench: ") and len(p.stderr.strip().splitlines()) == 1
    p = tune(["--env", "COMMBENCH_UNUSED_KNOB=a", "--rounds", "0"], check=2)
    assert "--rounds" in p.stderr, p.stderr


if __name__ == "__main__":
    main([test_noop_knob_is_not_advised,
          test_combination_lifting_a_slow_reference_is_advised_and_quoted,
          test_emit_path_clashing_with_output_is_refused])
