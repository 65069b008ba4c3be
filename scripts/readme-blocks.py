#!/usr/bin/env python3
"""Every code block of README.md runs as written (issue 48).

The blocks are read from README.md itself, so the front door cannot drift
from what works. Each runs at the repository root, in README order, after
the README's set-up command (scripts/test.sh, whose builds it reuses):

- ``sh``: ``bash -e`` with a clean environment, as a fresh login shell has
  it: HOME, PATH (the system's, cargo's and go's directories, and the
  Python virtual environment's bin, as if activated), the rustup and cargo
  homes when set, and CARGO_INSTALL_ROOT in a scratch directory (so
  ``cargo install`` does not replace this machine's ``ribbon``); no
  CARGO_TARGET_DIR, no LD_LIBRARY_PATH, no PKG_CONFIG_PATH;
- ``c``: written to ``app.c`` before its section's ``sh`` blocks, which
  must compile ``app.c`` (the README's own command line does);
- ``go``: ``main.go`` of a scratch module that requires ``rocks-ribbon/go``
  through a replace directive to ``go/`` of this checkout, as the README
  says; built in the clean environment and run at the repository root;
- ``python``: run by the virtual environment's interpreter
  (``$ROCKS_RIBBON_PY_VENV/bin/python``) in the clean environment but with
  the environment NOT activated (its bin not on PATH): Spark's workers must
  still find the package;
- ``rust``: written to ``examples/readme_blocks.rs`` (the root package's
  examples, with RocksDB and rocks-bridge), built with ``cargo build
  --release --example readme_blocks`` in this environment (the native
  RocksDB of scripts/test.sh's earlier stages), run at the repository
  root, and removed; ``--no-rust`` skips it where RocksDB is not built;
- ``toml``: parsed (the dependency lists, which scripts/outside-packaged.sh
  uses as written);
- a block right after ``<!-- readme-blocks: skip (why) -->`` is not run
  (the set-up commands themselves); any other language is an error.

The files the examples read (``000012.sst``, ``db/``, ``keys.txt``,
``probes.txt``) are made by the README's own block before the first "## Use
it" section, from the repository's fixtures; that block runs first, also
with ``--only``. The script refuses to start when one of them is at the
repository root already, and at the end removes every top-level entry the
run created (``target`` excepted). When the checkout has no ``target`` and
CARGO_TARGET_DIR is set (scripts/test.sh), ``target`` is made a link to it
for the run, so that ``cargo build``, ``pip install`` and ``cargo install``
in the blocks reuse the suite's builds instead of compiling again.

A failing block stops the run: its output, then one line naming it
(``readme-blocks: README.md:LINE: the sh block of "## Section" failed:
...``), exit 1.

Usage:
  scripts/readme-blocks.py [--no-rust] [--verbose] [--only LINE,...] [--readme FILE]
  scripts/readme-blocks.py --list
  scripts/readme-blocks.py --self-test

ROCKS_RIBBON_PY_VENV: the virtual environment with the package and PySpark
(scripts/test-python.sh's and scripts/test-spark.sh's; default
${TMPDIR:-/tmp}/rocks-ribbon-venv-python).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SKIP = re.compile(r"^<!--\s*readme-blocks:\s*skip\b.*-->\s*$")
FENCE = re.compile(r"^(```+)\s*([^\s`]*)\s*$")
LANGS = ("sh", "c", "go", "python", "rust", "toml")
RUST_EXAMPLE = "readme_blocks"

# What the README's first block makes at the repository root from the
# repository's fixtures, and the C block's file: never overwritten.
GUARDED = ("000012.sst", "db", "keys.txt", "probes.txt", "app.c", "app")


class Block:
    def __init__(self, lang, info, line, section, text, skip):
        self.lang, self.info, self.line, self.section, self.text, self.skip = lang, info, line, section, text, skip

    def name(self, readme="README.md"):
        return f'{readme}:{self.line}: the {self.lang or "unlabelled"} block of "## {self.section}"'


class Failure(Exception):
    pass


QUIET = False  # the self-test's expected failures print only their one line
VERBOSE = False  # --verbose: every block's output


def parse(text):
    """The fenced blocks of a Markdown text, in order."""
    blocks, section, prev = [], "(top)", ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:].strip()
        m = FENCE.match(line)
        if m:
            fence, info = m.group(1), m.group(2)
            body, j = [], i + 1
            while j < len(lines) and not lines[j].startswith(fence):
                body.append(lines[j])
                j += 1
            if j == len(lines):
                raise Failure(f"line {i + 1}: a code block that never closes")
            lang = info.split(",")[0].lower()
            blocks.append(Block(lang, info, i + 1, section, "\n".join(body) + "\n", bool(SKIP.match(prev))))
            i = j + 1
            prev = ""
            continue
        if line.strip():
            prev = line.strip()
        i += 1
    return blocks


def venv_dir():
    return os.environ.get("ROCKS_RIBBON_PY_VENV") or os.path.join(
        os.environ.get("TMPDIR", "/tmp"), "rocks-ribbon-venv-python"
    )


def clean_env(scratch, activated):
    """A fresh login shell's environment."""
    path = []
    if activated:
        path.append(os.path.join(venv_dir(), "bin"))
    path.append(os.path.join(scratch, "cargo-install", "bin"))
    for tool in ("cargo", "go"):
        found = shutil.which(tool)
        if found:
            path.append(os.path.dirname(os.path.realpath(found)) if tool == "go" else os.path.dirname(found))
    path += ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
    env = {
        "HOME": os.environ.get("HOME", "/root"),
        "PATH": ":".join(dict.fromkeys(path)),
        "LANG": "C.UTF-8",
        "CARGO_INSTALL_ROOT": os.path.join(scratch, "cargo-install"),
    }
    for keep in ("RUSTUP_HOME", "CARGO_HOME", "RUSTUP_TOOLCHAIN", "TMPDIR", "JAVA_HOME"):
        if os.environ.get(keep):
            env[keep] = os.environ[keep]
    if activated:
        env["VIRTUAL_ENV"] = venv_dir()
    return env


def run(cmd, block, readme, cwd, env, timeout=1800):
    start = time.time()
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failure(f"{block.name(readme)} failed: no answer in {timeout} s")
    except OSError as e:
        raise Failure(f"{block.name(readme)} failed: {e}")
    out = p.stdout.decode("utf-8", "replace")
    if VERBOSE and p.returncode == 0:
        sys.stdout.write(out[-6000:])
    if p.returncode != 0:
        if not QUIET:
            sys.stdout.write(out[-6000:])
        lines = [l for l in out.strip().splitlines() if l.strip()]
        # The last line that says "error", else the last line.
        errs = [l for l in lines if "error" in l.lower()]
        last = errs[-1:] or lines[-1:] or ["(no output)"]
        raise Failure(f"{block.name(readme)} failed (exit {p.returncode}): {last[0].strip()[:300]}")
    return time.time() - start


def guard():
    for name in GUARDED:
        if os.path.lexists(os.path.join(ROOT, name)):
            raise Failure(f"{name} is already at the repository root: move it away (the README's examples make it there)")


def prelude(blocks):
    """The blocks before the first "## Use it" section that run (the
    files the examples read): run before any other, even with --only."""
    out = []
    for b in blocks:
        if b.section.startswith("Use it"):
            break
        if not b.skip:
            out.append(b)
    return out


def run_blocks(readme_path, readme_name, only=None, rust=True):
    with open(readme_path) as f:
        blocks = parse(f.read())
    for b in blocks:
        if not b.skip and b.lang not in LANGS:
            raise Failure(f"{b.name(readme_name)}: no runner for the language {b.lang!r} (readme-blocks handles {', '.join(LANGS)})")
    first = prelude(blocks)
    chosen = [b for b in blocks if not b.skip and (only is None or b.line in only or b in first)]
    if only is not None and not set(only) <= {b.line for b in chosen}:
        missing = sorted(set(only) - {b.line for b in chosen})
        raise Failure(f"{readme_name}: no block to run starts at line {', '.join(map(str, missing))} (see --list)")
    if not chosen:
        raise Failure(f"{readme_name}: no code block to run")
    venv_python = os.path.join(venv_dir(), "bin", "python")
    if any(b.lang == "python" for b in chosen) and not os.path.exists(venv_python):
        raise Failure(f"no virtual environment at {venv_dir()}: run scripts/test-python.sh and scripts/test-spark.sh first (or set ROCKS_RIBBON_PY_VENV)")

    before = set(os.listdir(ROOT))
    scratch = tempfile.mkdtemp(prefix="rocks-ribbon-readme-")
    made_target = False
    rust_example = os.path.join(ROOT, "examples", RUST_EXAMPLE + ".rs")
    times = []
    try:
        guard()
        outer_target = os.environ.get("CARGO_TARGET_DIR")
        if not os.path.lexists(os.path.join(ROOT, "target")) and outer_target:
            os.makedirs(outer_target, exist_ok=True)
            os.symlink(outer_target, os.path.join(ROOT, "target"))
            made_target = True
        env_sh = clean_env(scratch, activated=True)
        env_py = clean_env(scratch, activated=False)
        written = set()
        for b in chosen:
            t = None
            if b.lang == "toml":
                import tomllib

                try:
                    tomllib.loads(b.text)
                except tomllib.TOMLDecodeError as e:
                    raise Failure(f"{b.name(readme_name)} is not TOML: {e}")
                t = 0.0
            elif b.lang == "c":
                section_sh = [s for s in blocks if s.section == b.section and s.lang == "sh" and not s.skip]
                if not any("app.c" in s.text for s in section_sh):
                    raise Failure(f"{b.name(readme_name)}: no sh block of its section compiles app.c")
                with open(os.path.join(ROOT, "app.c"), "w") as f:
                    f.write(b.text)
                written.add(b.section)
                t = 0.0
            elif b.lang == "sh":
                for c in blocks:  # the section's C file, even when only the sh block is chosen
                    if c.lang == "c" and c.section == b.section and c.section not in written and not c.skip:
                        with open(os.path.join(ROOT, "app.c"), "w") as f:
                            f.write(c.text)
                        written.add(c.section)
                script = os.path.join(scratch, f"block{b.line}.sh")
                with open(script, "w") as f:
                    f.write(b.text)
                t = run(["bash", "-e", "-o", "pipefail", script], b, readme_name, ROOT, env_sh)
            elif b.lang == "python":
                script = os.path.join(scratch, f"block{b.line}.py")
                with open(script, "w") as f:
                    f.write(b.text)
                t = run([venv_python, script], b, readme_name, ROOT, env_py)
            elif b.lang == "go":
                mod = os.path.join(scratch, f"go{b.line}")
                os.makedirs(mod)
                with open(os.path.join(mod, "main.go"), "w") as f:
                    f.write(b.text)
                setup = (
                    "go mod init readme >/dev/null 2>&1\n"
                    f"go mod edit -require rocks-ribbon/go@v0.0.0 -replace rocks-ribbon/go={ROOT}/go\n"
                    "go build -o app .\n"
                )
                t = run(["bash", "-e", "-c", setup], b, readme_name, mod, env_sh)
                t += run([os.path.join(mod, "app")], b, readme_name, ROOT, env_sh)
            elif b.lang == "rust":
                if not rust:
                    print(f"readme-blocks: {b.name(readme_name)}: not run (--no-rust)")
                    continue
                with open(rust_example, "w") as f:
                    f.write("// Generated by scripts/readme-blocks.py from README.md; removed after the run.\n")
                    for line in b.text.splitlines():
                        f.write((line[2:] if line.startswith("# ") else "" if line == "#" else line) + "\n")
                t = run(
                    ["cargo", "build", "--release", "-q", "-p", "ribbon-compat", "--example", RUST_EXAMPLE],
                    b, readme_name, ROOT, dict(os.environ),
                )
                target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
                t += run([os.path.join(target, "release", "examples", RUST_EXAMPLE)], b, readme_name, ROOT, env_sh)
            times.append((b, t))
            print(f"readme-blocks: {b.name(readme_name)}: ok ({t:.1f} s)", flush=True)
    finally:
        if os.path.exists(rust_example):
            os.remove(rust_example)
        if made_target:
            os.remove(os.path.join(ROOT, "target"))
        for name in sorted(set(os.listdir(ROOT)) - before):
            if name == "target":
                continue
            path = os.path.join(ROOT, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.remove(path)
        shutil.rmtree(scratch, ignore_errors=True)
    return times


def self_test():
    """Each kind of break is caught and named; a good block passes. Run
    after a full run (it reuses the libraries and the installed package)."""
    global QUIET
    QUIET = True
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    blocks = parse(readme)
    langs = {b.lang for b in blocks if not b.skip}
    for want in ("sh", "c", "go", "python", "rust"):
        assert want in langs, f"README.md has no {want} block"
    assert any(b.skip for b in blocks), "the set-up block is not marked"
    c = [b for b in blocks if b.lang == "c"]
    assert len(c) == 1 and "int main" in c[0].text, "the README's C block is not a whole program"

    def run_blocks_text(text, only):
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            f.write(text)
        try:
            return run_blocks(f.name, "README.md", only=only, rust=False)
        finally:
            os.remove(f.name)

    def expect_failure(text, line_hint, only=None, want=None):
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            f.write(text)
        try:
            run_blocks(f.name, "README.md", only=only, rust=False)
        except Failure as e:
            msg = str(e)
            print(f"  caught: {msg}")
            assert f"README.md:{line_hint}:" in msg, msg
            assert "\n" not in msg, msg
            if want:
                assert want in msg, msg
            return msg
        finally:
            os.remove(f.name)
        raise AssertionError(f"a broken block at line {line_hint} passed")

    def break_copy(old, new, lang, want, also=()):
        """A copy of the README with `old` replaced in the block of `lang`
        holding it: that block (with the blocks `also` it needs first)
        fails, and is the one named."""
        target = [b for b in blocks if b.lang == lang and old in b.text and not b.skip][0]
        start = sum(len(l) + 1 for l in readme.splitlines()[: target.line])
        end = readme.index("```", start)
        broken = readme[:start] + readme[start:end].replace(old, new, 1) + readme[end:]
        assert broken != readme
        named = target.line
        if lang == "c":  # the C file fails where the README compiles it
            named = [b for b in blocks if b.lang == "sh" and b.section == target.section and "app.c" in b.text][0].line
        return expect_failure(broken, named, only={named, *also}, want=want)

    # The C block no longer compiles: its section's cc line fails.
    break_copy("ribbon_sst_close(sst);", "ribbon_sst_close(sst)", "c", "error: expected")
    # The Go, Python and CLI blocks name a file that is not there: each
    # fails with its own one-line error, which the last line repeats.
    c_sh = [b for b in blocks if b.lang == "sh" and "app.c" in b.text][0].line
    break_copy('OpenSst("000012.sst")', 'OpenSst("000013.sst")', "go", "000013.sst", also={c_sh})
    py_install = [b for b in blocks if b.lang == "sh" and "pip install ./python" in b.text][0].line
    break_copy('SstFile("000012.sst")', 'SstFile("000013.sst")', "python", "000013.sst", also={py_install})
    cli_install = [b for b in blocks if b.lang == "sh" and "cargo install" in b.text][0].line
    break_copy("--keys probes.txt", "--keys missing-probes.txt", "sh", "missing-probes.txt", also={cli_install})

    # Synthetic blocks: skipped ones are not run, the environment is clean,
    # an unknown language is refused, and the first failure stops the run.
    outer = dict(os.environ)
    fake_target = None
    if not os.environ.get("CARGO_TARGET_DIR"):
        fake_target = os.environ["CARGO_TARGET_DIR"] = tempfile.mkdtemp(prefix="rocks-ribbon-readme-target-")
    os.environ["LD_LIBRARY_PATH"] = "/nonexistent"
    try:
        text = (
            "## A\n\n<!-- readme-blocks: skip (the set-up) -->\n```sh\nexit 3\n```\n\n"
            "```sh\nmkdir db && touch keys.txt\n```\n\n"
            "## Use it B\n\n"
            '```sh\ntest -z "${CARGO_TARGET_DIR:-}" && test -z "${LD_LIBRARY_PATH:-}"\n'
            "test -d db && test -f keys.txt\n```\n\n"
            "```sh\nfalse\necho never\n```\n"
        )
        lines = {b.line: b for b in parse(text)}
        msg = expect_failure(text, 19)
        assert '"## Use it B"' in msg and lines[19].text.startswith("false"), msg
        # --only runs the files block first: the block that needs them passes alone.
        run_blocks_text(text, only={14})
        expect_failure("## C\n\n```perl\nprint 1\n```\n", 3, want="no runner")
    finally:
        os.environ.clear()
        os.environ.update(outer)
        if fake_target:
            shutil.rmtree(fake_target, ignore_errors=True)
    for name in GUARDED:
        assert not os.path.lexists(os.path.join(ROOT, name)), f"{name} left at the repository root"
    print("readme-blocks self-test: OK")


def main(argv):
    global VERBOSE
    args = argv[1:]
    if args == ["--self-test"]:
        self_test()
        return 0
    readme, only, rust = os.path.join(ROOT, "README.md"), None, True
    while args:
        a = args.pop(0)
        if a == "--no-rust":
            rust = False
        elif a == "--verbose":
            VERBOSE = True
        elif a == "--only" and args:
            only = {int(x) for x in args.pop(0).split(",")}
        elif a == "--readme" and args:
            readme = os.path.abspath(args.pop(0))
        elif a == "--list":
            with open(readme) as f:
                for b in parse(f.read()):
                    print(f"{b.line}\t{b.lang}\t{'skip' if b.skip else 'run'}\t## {b.section}")
            return 0
        else:
            print(__doc__, file=sys.stderr)
            return 2
    start = time.time()
    try:
        times = run_blocks(readme, os.path.relpath(readme, ROOT), only=only, rust=rust)
    except Failure as e:
        print(f"readme-blocks: {e}", file=sys.stderr)
        return 1
    print(f"readme-blocks: {len(times)} blocks ran as written in {time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
