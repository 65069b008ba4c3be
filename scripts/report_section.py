#!/usr/bin/env python3
"""One marked section of a markdown report, replaced in place or appended.

    python3 scripts/report_section.py REPORT NAME < SECTION

writes SECTION (standard input) between the markers <!-- NAME:begin --> and
<!-- NAME:end --> of REPORT, appending them when they are absent, and leaves
the rest of the file as it is. `scripts/bench.sh` writes the report's
generated sections this way (`kernels`; `doctor` through
scripts/doctor-synthetic.py, which imports `splice`).
"""

import sys


def splice(report, name, section):
    """Puts `section` between `name`'s markers in the file `report`."""
    with open(report) as f:
        text = f.read()
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    block = begin + "\n" + section.rstrip("\n") + "\n" + end
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    with open(report, "w") as f:
        f.write(text)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: report_section.py REPORT NAME < SECTION")
    section = sys.stdin.read()
    if not section.strip():
        sys.exit("report_section.py: empty section for %s" % sys.argv[2])
    splice(sys.argv[1], sys.argv[2], section)
