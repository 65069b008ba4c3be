#!/usr/bin/env python3
"""The README's results table, generated from the bench report.

The numbers live in docs/benchmarks.md (default flags) and
docs/benchmarks-native.md (-Ctarget-cpu=native), both written by
`bash scripts/bench.sh`. This script copies the headline rows of both into
README.md between the markers

    <!-- results:begin -->
    <!-- results:end -->

so the README never carries a hand-copied number.

Usage:
  scripts/readme-results.py          # rewrite the README's table
  scripts/readme-results.py --check  # fail if the README's table is stale (CI)
  scripts/readme-results.py --self-test
"""

import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
BEGIN = "<!-- results:begin -->"
END = "<!-- results:end -->"
# The headline rows, by the measure's name in the report.
HEADLINES = [
    "Ribbon build, n = 1000000",
    "Ribbon build, n = 10000000",
    "ribbon query mixed single",
    "ribbon query mixed batched",
    "bloom query mixed batched",
    "Ribbon peak construction memory, n = 10000000",
    "SstFile batched may-match, full Ribbon filter",
    "DB 10^6 Gets of absent keys",
]


def rows(report_text):
    """measure -> (rust, cpp, ratio, target) of a report's ratio table."""
    out = {}
    for line in report_text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and re.match(r"^[\d.]+$", cells[3]):
            out[cells[0]] = (cells[1], cells[2], cells[3], cells[4])
    return out


def find(table, headline):
    for measure, row in table.items():
        if measure == headline or measure.startswith(headline + " ") or measure.startswith(headline + ","):
            return measure, row
    return None, None


def machine(report_text):
    m = re.search(r"^Machine: (.*)$", report_text, re.M)
    return m.group(1).rstrip(".") if m else "unknown machine"


def render(default_text, native_text):
    default, native = rows(default_text), rows(native_text) if native_text else {}
    lines = [
        "| measure: ratio Rust / RocksDB C++ (or the named baseline), same run | default flags | `-Ctarget-cpu=native` | target |",
        "|---|---|---|---|",
    ]
    for headline in HEADLINES:
        measure, row = find(default, headline)
        if row is None:
            raise SystemExit(f"docs/benchmarks.md has no row {headline!r}")
        _, nrow = find(native, headline)
        native_ratio = nrow[2] if nrow else "–"
        lines.append(f"| {measure} | {row[2]} ({row[0]} vs {row[1]}) | {native_ratio} | {row[3]} |")
    lines.append("")
    lines.append(f"Default flags: {machine(default_text)}.")
    if native_text:
        lines.append(f"Native: {machine(native_text)}.")
    lines.append("Every row, and the rows not shown: [docs/benchmarks.md](docs/benchmarks.md), [docs/benchmarks-native.md](docs/benchmarks-native.md).")
    return "\n".join(lines)


def splice(readme, table):
    if BEGIN not in readme or END not in readme:
        raise SystemExit(f"README.md has no {BEGIN} ... {END} block")
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{table}\n{END}{tail}"


def read(path):
    full = os.path.join(ROOT, path)
    if not os.path.exists(full):
        return None
    with open(full, encoding="utf-8") as f:
        return f.read()


def self_test():
    report = """Machine: test box

| measure | Rust | RocksDB C++ | ratio Rust/C++ | target | met |
|---|---|---|---|---|---|
""" + "\n".join(f"| {h} (x) | 1 ns | 2 ns | 0.50 | ≤ 1 | yes |" for h in HEADLINES)
    table = render(report, None)
    assert table.count("| 0.50 (1 ns vs 2 ns) | – | ≤ 1 |") == len(HEADLINES), table
    readme = f"a\n{BEGIN}\nold\n{END}\nb\n"
    assert splice(readme, "new") == f"a\n{BEGIN}\nnew\n{END}\nb\n"
    try:
        render(report.replace(HEADLINES[0], "something else"), None)
        raise AssertionError("a missing headline row must fail")
    except SystemExit:
        pass
    print("readme-results self-test: ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    table = render(read("docs/benchmarks.md"), read("docs/benchmarks-native.md"))
    readme = read("README.md")
    updated = splice(readme, table)
    if sys.argv[1:] == ["--check"]:
        if updated != readme:
            print("README.md's results table differs from docs/benchmarks*.md: run scripts/readme-results.py", file=sys.stderr)
            sys.exit(1)
        print("readme-results: the README's table is the bench report's")
        return
    with open(os.path.join(ROOT, "README.md"), "w", encoding="utf-8") as f:
        f.write(updated)


if __name__ == "__main__":
    main()
