#!/usr/bin/env python3
"""`commbench SUB --help` and the reference pages under docs/ agree on the flags.

A page documents a flag by a row of an options table (a table whose first header cell is
`option`): the row's first cell names the flag, short and long (`-c, --collectives LIST`). For
every subcommand, and every sub-subcommand of `probe`, each flag its --help prints has a row on
its page (docs/SUB.md; a sub-subcommand's rows are those in the section of docs/SUB.md headed
`commbench SUB NAME`), and each flag with a row there is one its --help prints. A page that
says it "takes every [`run` option](run.md#options)" documents run's rows too. A backend's own
flag (a row on docs/backend-NAME.md) is absent from --help only when that backend is not built
in, and then only that backend's flags.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from cbtest import SOURCE_DIR, main, run  # noqa: E402

DOCS = os.path.join(SOURCE_DIR, "docs")
FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z0-9][A-Za-z0-9-]*)")
HELP_FLAGS = {"-h", "--help", "--help-all"}
INHERITS = re.compile(r"takes every \[`([a-z]+)` option\]\(([a-z-]+)\.md#options\)")


def flags_in(text):
    """Flag names (short and long) in a --help option column or a table cell."""
    return {f for f in FLAG.findall(text) if f not in HELP_FLAGS}


def help_text(words):
    p = run(words + ["--help"], check=0)
    return p.stdout


def help_sections(text):
    """{section title: [lines]} of a CLI11 --help ('Options:', 'Subcommands:', ...)."""
    sections, current = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            current = sections.setdefault(line[:-1], [])
        elif current is not None and line.strip():
            current.append(line)
    return sections


def help_flags(words):
    """The flags `commbench WORDS --help` prints in its option column."""
    flags = set()
    for line in help_sections(help_text(words)).get("Options", []):
        stripped = line.strip()
        if not stripped.startswith("-"):
            continue  # a description continued on the next line
        flags |= flags_in(re.split(r"\s{2,}", stripped)[0])
    return flags


def subcommands(words):
    names = []
    for line in help_sections(help_text(words)).get("Subcommands", []):
        if re.match(r"^  \S", line):
            names.append(line.split()[0])
    return names


def cells(row):
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def documented_flags(text):
    """Flags named in the first cell of the rows of the options tables in text."""
    flags, in_table = set(), False
    for line in text.splitlines():
        if not line.startswith("|"):
            in_table = False
            continue
        row = cells(line)
        if row and row[0] == "option":
            in_table = True
        elif in_table and row and not set(row[0]) <= set("-: "):
            flags |= flags_in(row[0])
    return flags


def page(name):
    path = os.path.join(DOCS, name + ".md")
    assert os.path.exists(path), f"docs/{name}.md does not exist"
    return open(path).read()


def section(text, heading):
    """The part of a page under the first heading containing `heading`, up to the next heading
    of the same or a higher level; with heading None, the part before the first '## '."""
    lines = text.splitlines()
    if heading is None:
        end = next((i for i, l in enumerate(lines) if l.startswith("## ")), len(lines))
        return "\n".join(lines[:end])
    for i, line in enumerate(lines):
        m = re.match(r"^(#+) ", line)
        if m and heading in line:
            level = len(m.group(1))
            end = next((j for j in range(i + 1, len(lines))
                        if re.match(r"^#{1,%d} " % level, lines[j])), len(lines))
            return "\n".join(lines[i:end])
    raise AssertionError(f"no section headed {heading!r}")


def page_flags(text):
    flags = documented_flags(text)
    for _, inherited in INHERITS.findall(text):
        flags |= documented_flags(page(inherited))
    return flags


def backend_flags():
    """{backend: its own flags}, from docs/backend-NAME.md."""
    out = {}
    for name in os.listdir(DOCS):
        m = re.match(r"^backend-([a-z]+)\.md$", name)
        if m:
            out[m.group(1)] = documented_flags(page(name[:-3]))
    return out


def built_backends():
    p = run(["list", "backends"], check=0)
    return {line.split()[0] for line in p.stdout.splitlines()
            if line.strip() and not line.startswith("#")}


def commands():
    """(words, page name, section heading or None) for every subcommand and probe's own."""
    out = []
    for sub in subcommands([]):
        nested = subcommands([sub])
        out.append(([sub], sub, None if nested else ""))
        for n in nested:
            out.append(([sub, n], sub, f"`commbench {sub} {n}`"))
    assert len(out) >= 10, out
    return out


def documented_for(words, name, heading):
    text = page(name)
    if heading is None:
        text = section(text, None)
    elif heading:
        text = section(text, heading)
    return page_flags(text)


def test_every_flag_help_prints_is_on_its_page():
    problems = []
    for words, name, heading in commands():
        missing = help_flags(words) - documented_for(words, name, heading)
        for flag in sorted(missing):
            where = f"docs/{name}.md" + (f" (section {heading})" if heading else "")
            problems.append(f"{where} has no options row for {flag}, which "
                            f"`commbench {' '.join(words)} --help` prints")
    assert not problems, "\n".join(problems)


def test_every_flag_a_page_documents_is_in_help():
    unbuilt = {b: f for b, f in backend_flags().items() if b not in built_backends()}
    excused = set().union(*unbuilt.values()) if unbuilt else set()
    problems = []
    for words, name, heading in commands():
        extra = documented_for(words, name, heading) - help_flags(words) - excused
        for flag in sorted(extra):
            where = f"docs/{name}.md" + (f" (section {heading})" if heading else "")
            problems.append(f"{where} documents {flag}, which "
                            f"`commbench {' '.join(words)} --help` does not print")
    assert not problems, "\n".join(problems)


def test_the_comparison_sees_the_flags():
    # Guards the parsing above: a wrong regular expression must not make both sides empty.
    run_help = help_flags(["run"])
    assert {"-c", "--collectives", "--check", "--no-check", "--repeat"} <= run_help, run_help
    run_page = documented_flags(page("run"))
    assert {"-c", "--collectives", "--check", "--no-check", "--repeat"} <= run_page, run_page
    links = documented_for(["probe", "links"], "probe", "`commbench probe links`")
    assert "--min-fraction" in links and "--kernels" not in links, links
    assert "--repeat" in page_flags(page("tune")), "tune.md does not take run's options"


if __name__ == "__main__":
    main([test_every_flag_help_prints_is_on_its_page, test_every_flag_a_page_documents_is_in_help,
          test_the_comparison_sees_the_flags])
