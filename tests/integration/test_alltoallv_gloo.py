"""alltoallv over Gloo (gloo::alltoallv) end to end: every split validated at 2 and 3 ranks,
in place skipped with its reason, a corrupted block caught, the imbalance tax growing with zipf's
A under an injected receive link; then its records in every output format, and compare, check
and plot reading them."""
import csv
import io
import json
import os

from cbtest import assert_validated, main, parse_csv, run, tempdir
from test_alltoallv import SPLITS, check_split_rows, every_split, split_args

LOCAL = {"CUDA_VISIBLE_DEVICES": ""}


def gloo(args, n=2, env=None, check=0):
    return run(["run", "-B", "gloo", "-N", str(n), "-c", "alltoallv"] + args,
               env={**LOCAL, **(env or {})}, check=check)


def test_every_split_validates_at_2_ranks():
    every_split(2, "gloo")


def test_every_split_validates_at_3_ranks():
    every_split(3, "gloo")


def test_in_place_is_skipped_with_the_reason():
    p = gloo(["--placement", "both", "--split", "zipf:1", "-b", "4K", "-e", "4K", "--format", "csv",
              "--min-time", "0.002"])
    rows = parse_csv(p.stdout)
    assert_validated(rows)
    assert [r["placement"] for r in rows] == ["out"], rows
    assert ("gloo: alltoallv algorithm default skipped where in place: gloo::alltoallv reads its "
            "input while peers write its output, and has no in-place form") in p.stderr, p.stderr


def test_corrupted_block_is_caught():
    p = gloo(["--split", "distance", "-b", "8K", "-e", "8K", "--format", "csv", "-n", "2"], n=3,
             env={"COMMBENCH_TEST_FAULT": "corrupt:0:1"}, check=3)
    assert [r["wrong"] for r in parse_csv(p.stdout)] == ["2"]  # the split's and its twin's
    assert p.stderr.startswith("commbench: validation failed: 2 wrong elements in 1 case (first: "
                               "gloo alltoallv 7.97 KiB float distance:1"), p.stderr


def test_imbalance_tax_grows_with_zipf_a():
    """As over MPI: an injected receive link (every rank sleeps for what it received) makes the
    busiest receiver set the time, so the tax follows the incast, which grows with A."""
    p = gloo(["--split", "zipf:0.5", "--split", "zipf:3", "-b", "64K", "-e", "64K", "-w", "1",
              "-n", "3", "--format", "csv"], env={"COMMBENCH_TEST_FAULT": "link:3200000"})
    rows = {r["split"]: r for r in parse_csv(p.stdout)}
    low, high = float(rows["zipf:0.5"]["imbalance_tax"]), float(rows["zipf:3"]["imbalance_tax"])
    assert float(rows["zipf:3"]["incast"]) > float(rows["zipf:0.5"]["incast"]) > 1, rows
    assert high > 1.3 and high > low + 0.2, (low, high)


def test_every_format_compare_check_and_plot_read_the_records():
    d = tempdir()
    out = {ext: os.path.join(d, f"r.{ext}") for ext in ("json", "jsonl", "csv", "md", "gbench.json")}
    outputs = [a for path in out.values() for a in ("--output", path)]
    p = gloo(["--split", "uniform", "--split", "zipf:1.5", "--split", "moe:4,2,0,1",
              "--moe-hidden", "64", "-b", "16K", "-e", "256K", "-f", "16", "--min-time", "0.01",
              "--split-seed", "3"] + outputs)
    # The table: a block per split with the incast, skew and tax columns, and the summary's
    # imbalance line for each split but uniform.
    assert "# alltoallv zipf:1.5" in p.stdout and "incast" in p.stdout and "tax" in p.stdout
    imbalance = [l for l in p.stdout.splitlines() if l.startswith("# imbalance gloo/default")]
    assert len(imbalance) == 2, p.stdout
    assert imbalance[0].startswith("# imbalance gloo/default alltoallv zipf:1.5: incast 1.")
    assert "imbalance tax" in imbalance[0] and "uniform)" in imbalance[0], imbalance
    assert "of token copies dropped" in imbalance[1], imbalance
    doc = json.load(open(out["json"]))
    assert doc["meta"]["split"] == {"splits": ["uniform", "zipf:1.5", "moe:4,2,0,1"], "seed": 3,
                                    "moe_hidden": 64}, doc["meta"]
    rows = doc["results"]
    assert_validated([{k: str(v) if v is not None else "" for k, v in r.items()} for r in rows])
    assert {r["split"] for r in rows} == {"uniform", "zipf:1.5", "moe:4,2,0,1"}
    for r in rows:
        assert r["incast"] >= 1 and r["send_skew"] >= 1 and r["imbalance_tax"] > 0, r
        assert (r["drop_share"] is not None) == r["split"].startswith("moe"), r
    lines = [json.loads(l) for l in open(out["jsonl"])]
    assert [(r["split"], r["bytes"]) for r in lines] == [(r["split"], r["bytes"]) for r in rows]
    csv_rows = parse_csv(open(out["csv"], newline="").read())
    assert [r["imbalance_tax"] for r in csv_rows] == [f"{r['imbalance_tax']:.6g}" for r in rows]
    md = open(out["md"]).read()
    assert "#### alltoallv zipf:1.5" in md and "| imbalance tax |" in md.replace("  ", " "), md
    names = [b["name"] for b in json.load(open(out["gbench.json"]))["benchmarks"]]
    assert any("/split:zipf:1.5/" in n for n in names), names

    # compare: each split its own series; the same file against itself is unchanged.
    p = run(["compare", out["json"], out["json"], "--format", "json"], check=0)
    rep = json.loads(p.stdout)
    described = json.dumps(rep)
    assert "zipf:1.5" in described and "moe:4,2,0,1" in described, described[:2000]
    # check: a requirement on alltoallv's busbw and time.
    spec = os.path.join(d, "a2av.toml")
    with open(spec, "w") as f:
        f.write('[[results]]\nname = "alltoallv moves data"\ncollective = "alltoallv"\n'
                'min_busbw_GBps = 0.000001\n')
    p = run(["check", spec, out["csv"]], check=0)
    assert "PASS" in p.stdout and "alltoallv moves data" in p.stdout, p.stdout
    # plot: a panel per split.
    svg = os.path.join(d, "a.svg")
    run(["plot", out["jsonl"], "-o", svg, "--collective", "alltoallv"], check=0)
    text = open(svg).read()
    assert "alltoallv zipf:1.5" in text and "alltoallv uniform" in text, text[:500]


if __name__ == "__main__":
    main([test_every_split_validates_at_2_ranks, test_every_split_validates_at_3_ranks,
          test_in_place_is_skipped_with_the_reason, test_corrupted_block_is_caught,
          test_imbalance_tax_grows_with_zipf_a,
          test_every_format_compare_check_and_plot_read_the_records])
