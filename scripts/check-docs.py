#!/usr/bin/env python3
"""Every repository path the front-door documents name exists.

Checks README.md, ribbon/src/standalone/GUIDE.md and the crate READMEs:
- every relative Markdown link (`[text](path)`, images included) points at a
  file or directory of the repository;
- every path in backticks that starts with a top-level entry of the
  repository (`scripts/test.sh`, `docs/`, `tests/bridge_db.rs`...) exists.
  Paths of other projects (RocksDB's `util/ribbon_alg.h`) start elsewhere and
  are left alone.
And the README stays a front door: at most MAX_README_LINES lines.

Usage: scripts/check-docs.py [--self-test]
"""

import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DOCS = [
    "README.md",
    "ribbon/src/standalone/GUIDE.md",
    "ribbon/README.md",
    "sst/README.md",
    "reconcile/README.md",
    "ribbon-cli/README.md",
    "rocks-bridge/README.md",
]
MAX_README_LINES = 260
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\s]+)`")
PATHLIKE = re.compile(r"^[\w.-]+(/[\w.*{},-]*)*/?$")


def top_level(root):
    return {e for e in os.listdir(root) if not e.startswith(".git")} | {".ci"}


def expand(path):
    """`cpp/harness.{h,cc}` names two files."""
    m = re.search(r"\{([^}]*)\}", path)
    if not m:
        return [path]
    return [p for alt in m.group(1).split(",") for p in expand(path[: m.start()] + alt + path[m.end() :])]


def problems_in(text, doc, root, tops):
    out = []
    base = os.path.dirname(os.path.join(root, doc))
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#")[0]
        if path and not os.path.exists(os.path.normpath(os.path.join(base, path))):
            out.append(f"{doc}: link to {target}, which does not exist")
    for token in CODE.findall(text):
        token = token.rstrip(".,:;")
        if "/" not in token or not PATHLIKE.match(token) or "*" in token:
            continue
        if token.split("/")[0] not in tops:
            continue
        for path in expand(token):
            if not os.path.exists(os.path.join(root, path)):
                out.append(f"{doc}: `{token}` names {path}, which does not exist")
    return out


def self_test():
    import tempfile

    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "scripts"))
        open(os.path.join(root, "scripts", "test.sh"), "w").close()
        open(os.path.join(root, "scripts", "a.h"), "w").close()
        tops = top_level(root)
        good = "Run `scripts/test.sh`; see [it](scripts/test.sh), `scripts/a.{h}` and RocksDB's `util/ribbon_alg.h`."
        assert problems_in(good, "README.md", root, tops) == [], problems_in(good, "README.md", root, tops)
        bad = "Run `scripts/gone.sh` and [x](docs/missing.md), `scripts/a.{h,cc}`."
        found = problems_in(bad, "README.md", root, tops)
        assert len(found) == 3, found
    print("check-docs self-test: ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    tops = top_level(ROOT)
    problems = []
    for doc in DOCS:
        with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
            text = f.read()
        problems += problems_in(text, doc, ROOT, tops)
        if doc == "README.md" and text.count("\n") > MAX_README_LINES:
            problems.append(f"README.md: {text.count(chr(10))} lines (a front door has at most {MAX_README_LINES})")
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"check-docs: every path named in {len(DOCS)} documents exists")


if __name__ == "__main__":
    main()
