#!/usr/bin/env python3
"""Mutation check: breaks each headline promise on purpose and proves a test notices.

For every mutant in tests/mutants/mutants.toml (id, promise, file, an exact original snippet, its
replacement, ctest regexes) it applies the replacement to a scratch copy of the tree, rebuilds
incrementally, runs the named tests there, and restores the file. A mutant is caught (passed)
when at least one named test fails; it survives (failed) when they all pass or skip, when it does
not compile, or when no test matches its regexes. Before any mutant, every snippet must occur
exactly once in its file and the named tests must pass on the unmutated copy (unless
--after-suite says the whole suite has just passed on this tree), else the script stops with exit
2 naming the problem. A mutant's tests stop at the first failure: one catches it.

    tests/mutants/run_mutants.py                 # all mutants, default preset
    tests/mutants/run_mutants.py M1-secret-filter exit-3-validation
    tests/mutants/run_mutants.py --check         # only check that every snippet is found once
    tests/mutants/run_mutants.py --after-suite   # right after ci/test passed on this tree
    tests/mutants/run_mutants.py --after-suite --in-place   # CI, on its throw-away clone

The copy lives in build-mutants/ (ignored by git): src/ holds the tracked and untracked-but-not-
ignored files of this checkout, src/build/ the build (ccache used when installed), so repeated
runs rebuild only what changed. --in-place (CI, whose clone is thrown away) mutates this checkout
and its preset's build directory instead, which ci/test has just built: no copy to build. Prints
one line per mutant and `N passed, N failed`; exits 0 only when every mutant was caught.
"""
import argparse
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MUTANTS = os.path.join(ROOT, "tests", "mutants", "mutants.toml")
FIELDS = ("id", "promise", "file", "original", "replacement", "tests")


class Stop(Exception):
    """A problem with the mutants or the tree itself, not a surviving mutant."""


def load(path):
    with open(path, "rb") as f:
        mutants = tomllib.load(f).get("mutant", [])
    ids = set()
    for m in mutants:
        missing = [k for k in FIELDS if k not in m]
        if missing:
            raise Stop(f"mutant {m.get('id', '?')}: missing {', '.join(missing)}")
        if m["id"] in ids:
            raise Stop(f"mutant {m['id']}: id used twice")
        ids.add(m["id"])
        if not m["tests"] or m["original"] == m["replacement"]:
            raise Stop(f"mutant {m['id']}: needs tests and a replacement that differs")
    return mutants


def check_snippets(mutants, root):
    """Every original snippet occurs exactly once in its file."""
    problems = []
    for m in mutants:
        path = os.path.join(root, m["file"])
        if not os.path.isfile(path):
            problems.append(f"{m['id']}: {m['file']} does not exist")
            continue
        n = open(path, encoding="utf-8").read().count(m["original"])
        if n != 1:
            problems.append(f"{m['id']}: the original snippet occurs {n} times in {m['file']} "
                            f"(must be exactly once): {m['original']!r}")
    if problems:
        raise Stop("snippets to re-target:\n  " + "\n  ".join(problems))


def source_files():
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, check=True).stdout
    paths = [f for f in out.decode().split("\0") if f]
    return [f for f in paths if os.path.islink(os.path.join(ROOT, f))
            or os.path.isfile(os.path.join(ROOT, f))]


def sync(src):
    """Makes `src` hold this checkout's files; only changed files are rewritten (fresh mtime)."""
    files = source_files()
    manifest = os.path.join(src, ".mutants-manifest")
    old = set(open(manifest).read().split("\0")) if os.path.exists(manifest) else set()
    for f in old - set(files):
        if f and os.path.lexists(os.path.join(src, f)):
            os.remove(os.path.join(src, f))
    for f in files:
        a, b = os.path.join(ROOT, f), os.path.join(src, f)
        if os.path.islink(a):  # the sysfs fixtures are trees of links: keep them links
            if os.path.islink(b) and os.readlink(b) == os.readlink(a):
                continue
            if os.path.lexists(b):
                os.remove(b)
            os.makedirs(os.path.dirname(b), exist_ok=True)
            os.symlink(os.readlink(a), b)
            continue
        if os.path.isfile(b) and not os.path.islink(b) and filecmp.cmp(a, b, shallow=False):
            continue
        if os.path.lexists(b):
            os.remove(b)
        os.makedirs(os.path.dirname(b), exist_ok=True)
        shutil.copyfile(a, b)
        shutil.copymode(a, b)
    with open(manifest, "w") as m:
        m.write("\0".join(files))


def sh(cmd, cwd, log, timeout=None):
    # The copy's paths relative to this checkout are the checkout's own, so ccache serves the
    # copy's first build from what ci/build compiled.
    env = dict(os.environ, CCACHE_BASEDIR=ROOT, CCACHE_NOHASHDIR="1")
    with open(log, "a") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        return subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                              timeout=timeout, env=env).returncode


def configure(src, preset, log):
    cmd = ["cmake", "--preset", preset]
    if shutil.which("ccache"):
        cmd += [f"-DCMAKE_{lang}_COMPILER_LAUNCHER=ccache" for lang in ("C", "CXX", "CUDA")]
    if sh(cmd, src, log) != 0:
        raise Stop(f"configuring the copy failed; see {log}")


def build(src, preset, jobs, log, targets=None):
    """Builds everything, or only `targets` (build outputs by their path in the build directory,
    which is all a mutant's tests run: relinking every test binary for each mutant is most of
    the check's time)."""
    cmd = ["cmake", "--build", "--preset", preset, "-j", str(jobs)]
    if targets:
        cmd += ["--target", *targets]
    return sh(cmd, src, log) == 0


def all_tests(src, preset):
    """Every ctest test of the copy's build, in ctest's numbering (1-based), and for each the
    build outputs it runs: its command, arguments and environment values that name files in the
    build directory (the commbench binary, a unit test binary, fake libraries)."""
    out = subprocess.run(["ctest", "--preset", preset, "--show-only=json-v1"], cwd=src,
                         capture_output=True, text=True, check=True).stdout
    build_dir = os.path.join(src, "build") + os.sep
    tests, outputs = [], {}
    for t in json.loads(out)["tests"]:
        words = list(t.get("command", []))
        for prop in t.get("properties", []):
            if prop["name"] == "ENVIRONMENT":
                words += [v.split("=", 1)[1] for v in prop["value"] if "=" in v]
        tests.append(t["name"])
        outputs[t["name"]] = sorted({w[len(build_dir):] for w in words
                                     if w.startswith(build_dir) and os.path.isfile(w)})
    return tests, outputs


def ctest(src, preset, tests, regexes, log, timeout, stop_on_failure=False):
    """(exit code, names of the tests selected) for the union of `regexes` (matched here, as
    ctest -R would: a search anywhere in the name; ctest's own regex engine has too few groups
    for a union of many). None when nothing matches. With `stop_on_failure` ctest stops at the
    first failing test: one is enough to catch a mutant."""
    picked = [(i + 1, name) for i, name in enumerate(tests)
              if any(re.search(r, name) for r in regexes)]
    if not picked:
        return None, []
    numbers = ",".join(str(i) for i, _ in picked)
    cmd = ["ctest", "--preset", preset, "-I", f"0,0,0,{numbers}", "--output-on-failure",
           "--timeout", str(timeout)]
    code = sh(cmd + (["--stop-on-failure"] if stop_on_failure else []), src, log)
    return code, [name for _, name in picked]


def failed_tests(log):
    """Names ctest listed as failed at the end of its last run in `log`."""
    text = open(log).read().rsplit("$ ctest", 1)[-1]
    tail = text.split("The following tests FAILED:", 1)
    if len(tail) < 2:
        return []
    return [l.split(" - ", 1)[1].split(" (", 1)[0].strip() for l in tail[1].splitlines()
            if " - " in l]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ids", nargs="*", help="mutant ids to run (default: all)")
    ap.add_argument("--check", action="store_true", help="only check that every snippet is found")
    ap.add_argument("--preset", default="default")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--dir", default=os.path.join(ROOT, "build-mutants"))
    ap.add_argument("--timeout", type=int, default=600, help="per test, seconds")
    ap.add_argument("--after-suite", action="store_true",
                    help="the whole test suite has just passed on this tree (as in CI): skip the "
                         "baseline run of the named tests and the final rebuild of the copy")
    ap.add_argument("--in-place", action="store_true",
                    help="mutate this checkout and its build directory, not a copy (CI: the "
                         "clone is thrown away and ci/test has just built it); needs --after-suite")
    args = ap.parse_args()
    start = time.monotonic()
    try:
        mutants = load(MUTANTS)
        if args.ids:
            unknown = set(args.ids) - {m["id"] for m in mutants}
            if unknown:
                raise Stop(f"unknown mutant id(s): {', '.join(sorted(unknown))}")
            mutants = [m for m in mutants if m["id"] in args.ids]
        check_snippets(mutants, ROOT)
        if args.check:
            print(f"{len(mutants)} mutants: every snippet found exactly once")
            return 0
        if args.in_place and not args.after_suite:
            raise Stop("--in-place needs --after-suite: the checkout's build must be the one "
                       "the whole suite has just passed")
        src = ROOT if args.in_place else os.path.join(args.dir, "src")
        os.makedirs(args.dir, exist_ok=True)
        log = os.path.join(args.dir, "mutants.log")
        open(log, "w").close()
        if not args.in_place:
            os.makedirs(src, exist_ok=True)
            sync(src)
            configure(src, args.preset, log)
        if not build(src, args.preset, args.jobs, log):
            raise Stop(f"the unmutated copy does not build; see {log}")
        tests, outputs = all_tests(src, args.preset)
        unmatched = [f"{m['id']}: {r}" for m in mutants for r in m["tests"]
                     if not any(re.search(r, name) for name in tests)]
        if unmatched:
            raise Stop("test regexes that match no ctest test:\n  " + "\n  ".join(unmatched))
        if not args.after_suite:
            regexes = sorted({r for m in mutants for r in m["tests"]})
            code, names = ctest(src, args.preset, tests, regexes, log, args.timeout)
            if code is None:
                raise Stop("no test matches any mutant's regexes")
            if code != 0:
                raise Stop(f"the named tests fail without any mutant "
                           f"({failed_tests(log) or names}); see {log}")
            print(f"baseline: {len(names)} named tests pass unmutated "
                  f"({time.monotonic() - start:.0f} s)", flush=True)
    except Stop as e:
        print(f"run_mutants: {e}", file=sys.stderr)
        return 2

    caught = survived = 0
    for m in mutants:
        t0 = time.monotonic()
        path = os.path.join(src, m["file"])
        original = open(path, encoding="utf-8").read()
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(original.replace(m["original"], m["replacement"], 1))
            needed = sorted({o for name in tests if any(re.search(r, name) for r in m["tests"])
                             for o in outputs[name]})
            if not build(src, args.preset, args.jobs, log, needed):
                verdict, why = False, "does not compile (fix the replacement)"
            else:
                code, names = ctest(src, args.preset, tests, m["tests"], log, args.timeout,
                                    stop_on_failure=True)
                if code is None:
                    verdict, why = False, f"no test matches {m['tests']}"
                elif code == 0:
                    verdict, why = False, f"{len(names)} tests all passed: {', '.join(names)}"
                else:
                    verdict, why = True, "by " + ", ".join(failed_tests(log) or names)
        finally:
            with open(path, "w", encoding="utf-8") as f:
                f.write(original)
        caught += verdict
        survived += not verdict
        print(f"{'CAUGHT  ' if verdict else 'SURVIVED'} {m['id']} ({time.monotonic() - t0:.0f} s) "
              f"{why}", flush=True)
        if not verdict:
            print(f"         promise: {m['promise']}", flush=True)
    if not args.after_suite:
        # Leave the copy built as the tree is, so the next run starts incremental.
        build(src, args.preset, args.jobs, log)
    print(f"{caught} passed, {survived} failed ({time.monotonic() - start:.0f} s)")
    return 0 if survived == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
