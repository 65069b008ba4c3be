#!/usr/bin/env python3
"""What `cargo publish --dry-run` does not check, for every crate we publish.

crates.io refuses, or shows badly, what the dry run lets through:
- at most 5 keywords, each at most 20 characters of ASCII letters, digits,
  `_`, `-` or `+`, starting with a letter;
- at most 5 categories, each a slug of crates.io's list (src/boot/categories.toml
  of rust-lang/crates.io; a subcategory is written `parent::child`);
- a description, a license, a repository, a readme file that exists.
And what we promise every crate carries:
- LICENSE and NOTICE files (the NOTICE credits RocksDB and LevelDB), packaged:
  `cargo package --list` names them;
- relative links in its README point at files that exist (crates.io resolves
  them against the repository);
- rustdoc names no repository Markdown file as dead text (`docs/x.md` in
  backticks, not a link): on docs.rs only a link leads there.

Usage: scripts/check-crates.py [--self-test]
"""

import json
import os
import re
import subprocess
import sys

# crates.io's category slugs (rust-lang/crates.io, src/boot/categories.toml).
CATEGORIES = set(
    """algorithms api-bindings asynchronous authentication caching
    command-line-interface command-line-utilities compression computer-vision
    config concurrency cryptography cryptography::cryptocurrencies database
    database-implementations data-structures date-and-time development-tools
    development-tools::build-utils development-tools::cargo-plugins
    development-tools::debugging development-tools::ffi
    development-tools::procedural-macro-helpers development-tools::profiling
    development-tools::testing email embedded emulators encoding
    external-ffi-bindings filesystem game-engines game-development games
    graphics gui hardware-support internationalization localization mathematics
    memory-management multimedia multimedia::audio multimedia::video
    multimedia::images multimedia::encoding network-programming no-std os
    os::linux-apis os::macos-apis os::unix-apis os::windows-apis
    parser-implementations parsing rendering rendering::engine
    rendering::graphics-api rendering::data-formats rust-patterns science
    science::robotics simulation template-engine text-editors text-processing
    value-formatting visualization wasm web-programming
    web-programming::http-client web-programming::http-server
    web-programming::websocket""".split()
)
KEYWORD = re.compile(r"^[A-Za-z][A-Za-z0-9_+-]{0,19}$")
MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# A repository Markdown path in backticks that is not the text of a link.
DEAD_DOC_PATH = re.compile(r"(?<!\[)`([\w.-]+/[\w./-]*\.md)`(?!\]\()")


def metadata_problems(pkg, crate_dir):
    """Problems with one package's metadata (a dict as `cargo metadata` gives)."""
    name = pkg["name"]
    out = []
    keywords = pkg.get("keywords") or []
    if len(keywords) > 5:
        out.append(f"{name}: {len(keywords)} keywords (crates.io takes at most 5)")
    for k in keywords:
        if not KEYWORD.match(k):
            out.append(
                f"{name}: keyword {k!r} is not 1 to 20 ASCII letters, digits, _, - or +, starting with a letter"
            )
    categories = pkg.get("categories") or []
    if len(categories) > 5:
        out.append(f"{name}: {len(categories)} categories (crates.io takes at most 5)")
    for c in categories:
        if c not in CATEGORIES:
            out.append(f"{name}: category {c!r} is not one of crates.io's slugs")
    for field in ("description", "license", "repository"):
        if not pkg.get(field):
            out.append(f"{name}: no {field}")
    readme = pkg.get("readme")
    if not readme:
        out.append(f"{name}: no readme")
    elif not os.path.isfile(os.path.join(crate_dir, readme)):
        out.append(f"{name}: readme {readme} does not exist")
    else:
        out += readme_link_problems(name, os.path.join(crate_dir, readme))
    for f in ("LICENSE", "NOTICE"):
        if not os.path.isfile(os.path.join(crate_dir, f)):
            out.append(f"{name}: no {f} file in {crate_dir}")
    return out


def readme_link_problems(name, readme):
    out = []
    base = os.path.dirname(readme)
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    for target in MARKDOWN_LINK.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#")[0]
        if path and not os.path.exists(os.path.join(base, path)):
            out.append(f"{name}: {os.path.relpath(readme)} links to {target}, which does not exist")
    return out


def rustdoc_problems(name, crate_dir):
    out = []
    src = os.path.join(crate_dir, "src")
    for root, _, files in os.walk(src):
        for f in sorted(files):
            path = os.path.join(root, f)
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
            for number, line in enumerate(lines, 1):
                stripped = line.strip()
                is_doc = f.endswith(".md") or stripped.startswith(("//!", "///"))
                if not is_doc:
                    continue
                for m in DEAD_DOC_PATH.finditer(line):
                    out.append(
                        f"{name}: {os.path.relpath(path)}:{number}: `{m.group(1)}` in rustdoc is dead text on docs.rs; make it a link"
                    )
    return out


def packaged_problems(name):
    listed = subprocess.run(
        ["cargo", "package", "--list", "--allow-dirty", "-p", name],
        capture_output=True,
        text=True,
    )
    if listed.returncode != 0:
        return [f"{name}: cargo package --list failed: {listed.stderr.strip().splitlines()[-1:]}"]
    files = set(listed.stdout.split())
    return [f"{name}: the package does not contain {f}" for f in ("LICENSE", "NOTICE") if f not in files]


def publishable():
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--no-deps", "--format-version", "1"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    # `publish = false` is an empty list in cargo metadata; null means anywhere.
    return [p for p in meta["packages"] if p.get("publish") is None]


def self_test():
    good = {
        "name": "good",
        "keywords": ["rocksdb", "ribbon-filter"],
        "categories": ["database", "development-tools::ffi"],
        "description": "d",
        "license": "Apache-2.0",
        "repository": "https://example.org",
        "readme": "README.md",
    }
    here = os.path.dirname(os.path.abspath(__file__))
    crate = os.path.join(here, "..", "ribbon")
    assert metadata_problems(good, crate) == [], metadata_problems(good, crate)
    bad = dict(good, keywords=["invertible-bloom-filter", "1st", "a", "b", "c", "d"], categories=["filters"])
    problems = metadata_problems(bad, crate)
    assert any("6 keywords" in p for p in problems), problems
    assert any("'invertible-bloom-filter'" in p for p in problems), problems
    assert any("'1st'" in p for p in problems), problems
    assert any("'filters'" in p for p in problems), problems
    assert any("no description" in p for p in metadata_problems(dict(good, description=""), crate))
    assert DEAD_DOC_PATH.search("/// see `ribbon/docs/space-overhead.md`.")
    assert not DEAD_DOC_PATH.search("/// see [`ribbon/docs/x.md`](https://example.org/x.md).")
    print("check-crates self-test: ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    problems = []
    packages = publishable()
    for pkg in packages:
        crate_dir = os.path.dirname(pkg["manifest_path"])
        problems += metadata_problems(pkg, crate_dir)
        problems += rustdoc_problems(pkg["name"], crate_dir)
        problems += packaged_problems(pkg["name"])
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"check-crates: {len(packages)} crates ready for crates.io: " + ", ".join(p["name"] for p in packages))


if __name__ == "__main__":
    main()
