#!/usr/bin/env python3
"""Fails on an import cycle between the modules of any crate of the
workspace, and on an import that breaks the layering of `ribbon`.

Every `crate::a::b` and `super::x` path in a crate's code (comments and
strings left out; tests included: a test that reaches up a layer is a
dependency too) is an edge from the module it is written in to the module
it names. An edge between two modules is counted between their children of
the nearest common ancestor: `crate::a::x::f` used in `crate::a::y::z` is
the edge `y -> x` among the children of `a`. An edge between a module and
one of its own ancestors or descendants is how Rust modules are made (a
parent declares its children, a child uses its parent's items) and is not
counted. A cycle among the children of any module is an error.

`ribbon`'s root children are layered besides: `core` uses none of the
others, `rocksdb` and `standalone` use `core` only, `plugin` may use all
three (`test_support` and the crate root are free).

Usage: scripts/check-modules.py [WORKSPACE_ROOT]   (exit 0: clean, 1: findings)
       scripts/check-modules.py --self-test        (the checker on crafted trees)
"""

import os
import re
import sys

CRATES = {
    # crate directory: its src root files (lib, and bins that are roots of their own)
    "ribbon": ["lib.rs"],
    "sst": ["lib.rs"],
    "reconcile": ["lib.rs"],
    "ribbon-cli": ["main.rs"],
    "rocks-bridge": ["lib.rs"],
    ".": ["lib.rs"],
}

# ribbon's layers: a root child may use only the root children listed.
RIBBON_LAYERS = {
    "core": set(),
    "rocksdb": {"core"},
    "standalone": {"core"},
    "plugin": {"core", "rocksdb", "standalone"},
}


def strip_comments_and_strings(text):
    """The code of a Rust file with comments, strings and chars blanked
    (line breaks kept, so line numbers hold)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "'":
            # A char literal ('a', '\n', '\u{..}'), not a lifetime ('a).
            m = re.match(r"'(\\.[^']*|[^'\\])'", text[i:])
            if m:
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_files(src):
    """Map each module path (tuple of names, () for the root) to its files,
    following `mod x;` declarations from the root files."""
    mods = {}

    def visit(path, file, dir_for_children):
        mods.setdefault(path, []).append(file)
        with open(file, encoding="utf-8") as f:
            code = strip_comments_and_strings(f.read())
        for m in re.finditer(r"(?:#\[path\s*=\s*\"([^\"]+)\"\]\s*)?(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;", code):
            name = m.group(2)
            candidates = [os.path.join(dir_for_children, name + ".rs"), os.path.join(dir_for_children, name, "mod.rs")]
            child = next((c for c in candidates if os.path.exists(c)), None)
            if child is None:
                continue
            child_dir = os.path.join(dir_for_children, name)
            visit(path + (name,), child, child_dir)

    return mods, visit


def edges_of(mods, files_by_module):
    """(from_module, to_module, file, line) for each crate:: / super:: path."""
    found = []
    known = set(mods)
    for module, files in files_by_module.items():
        for file in files:
            with open(file, encoding="utf-8") as f:
                code = strip_comments_and_strings(f.read())
            inline = inline_lines(code)
            for lineno, line in enumerate(code.split("\n"), 1):
                for m in re.finditer(r"\b(crate|super)((?:::[a-z_][a-z0-9_]*)+)", line):
                    parts = m.group(2).strip(":").split("::")
                    if m.group(1) == "crate":
                        target = tuple(parts)
                    else:
                        # `super` is the file's parent module, or the file's
                        # own module inside an inline `mod tests { ... }`;
                        # each further `super` goes one up.
                        scope = module if inline[lineno - 1] else module[:-1]
                        while parts and parts[0] == "super":
                            parts = parts[1:]
                            scope = scope[:-1]
                        target = scope + tuple(parts)
                    # The deepest module the path names.
                    while target and target not in known:
                        target = target[:-1]
                    found.append((module, target, file, lineno))
    return found


def inline_lines(code):
    """For each line of `code`, whether it lies inside an inline
    `mod x { ... }` (braces counted on code without comments and strings)."""
    inside_at = []
    stack, depth = [], 0
    for line in code.split("\n"):
        inside_at.append(bool(stack))
        for m in re.finditer(r"\bmod\s+[a-z_][a-z0-9_]*\s*\{|\{|\}", line):
            tok = m.group(0)
            if tok.startswith("mod"):
                depth += 1
                stack.append(depth)
            elif tok == "{":
                depth += 1
            else:
                if stack and stack[-1] == depth:
                    stack.pop()
                depth -= 1
    return inside_at


def sibling_edge(a, b):
    """The edge between children of a's and b's nearest common ancestor, or
    None when one is the other's ancestor."""
    k = 0
    while k < len(a) and k < len(b) and a[k] == b[k]:
        k += 1
    if k == len(a) or k == len(b):
        return None
    return a[:k], a[k], b[k]


def find_cycle(graph):
    """One cycle of `graph` (dict node -> set of nodes) as a list, or None."""
    color = {}
    stack = []

    def dfs(u):
        color[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if color.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if color.get(v) is None:
                c = dfs(v)
                if c:
                    return c
        stack.pop()
        color[u] = 2
        return None

    for u in sorted(graph):
        if color.get(u) is None:
            c = dfs(u)
            if c:
                return c
    return None


def check_crate(root, crate_dir, roots):
    src = os.path.join(root, crate_dir, "src")
    mods, visit = module_files(src)
    for r in roots:
        visit((), os.path.join(src, r), src)
    findings = []
    by_parent = {}
    where = {}
    for a, b, file, line in edges_of(mods, mods):
        e = sibling_edge(a, b)
        if e is None:
            continue
        parent, x, y = e
        by_parent.setdefault(parent, {}).setdefault(x, set()).add(y)
        where.setdefault((parent, x, y), (os.path.relpath(file, root), line))
    for parent, graph in sorted(by_parent.items()):
        cycle = find_cycle(graph)
        if cycle:
            name = "::".join(("crate",) + parent)
            steps = []
            for x, y in zip(cycle, cycle[1:]):
                f, l = where[(parent, x, y)]
                steps.append(f"{x} -> {y} ({f}:{l})")
            findings.append(f"{crate_dir}: import cycle among the modules of {name}: " + ", ".join(steps))
    if crate_dir == "ribbon":
        for x, ys in sorted(by_parent.get((), {}).items()):
            if x not in RIBBON_LAYERS:
                continue
            for y in sorted(ys):
                if y in RIBBON_LAYERS and y not in RIBBON_LAYERS[x]:
                    f, l = where[((), x, y)]
                    findings.append(f"ribbon: layering: {x} uses {y} ({f}:{l}); {x} may use only {sorted(RIBBON_LAYERS[x]) or 'nothing else'}")
    return findings


def self_test():
    """The checker finds what it must on small crafted crates, and nothing
    on clean ones."""
    import tempfile

    def findings(files, crate_dir="x"):
        root = tempfile.mkdtemp()
        for path, text in files.items():
            full = os.path.join(root, crate_dir, "src", path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        return check_crate(root, crate_dir, ["lib.rs"])

    # A cycle through a test module counts.
    found = findings({
        "lib.rs": "mod a;\nmod b;\n",
        "a.rs": "use crate::b::f;\n",
        "b.rs": "pub fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::a::*;\n}\n",
    })
    assert len(found) == 1 and "a -> b" in found[0] and "b -> a" in found[0], found
    # Paths in comments and strings, and `super` in an inline module, do not.
    found = findings({
        "lib.rs": "mod a;\nmod b;\n",
        "a.rs": "use crate::b::f; // crate::a::x in a comment\nconst S: &str = \"crate::a::y\";\n",
        "b.rs": "pub fn f() {}\nmod c { use super::f; }\n",
    })
    assert found == [], found
    # Among the children of a nested module, through `super::`.
    found = findings({
        "lib.rs": "pub mod p;\n",
        "p/mod.rs": "mod x;\nmod y;\n",
        "p/x.rs": "use super::y::g;\npub fn f() {}\n",
        "p/y.rs": "pub fn g() { super::x::f() }\n",
    })
    assert len(found) == 1 and "crate::p" in found[0], found
    # ribbon's layers: standalone may not use rocksdb, even without a cycle.
    layered = {
        "lib.rs": "pub mod core;\npub mod rocksdb;\npub mod standalone;\npub mod plugin;\n",
        "core.rs": "pub fn f() {}\n",
        "rocksdb.rs": "use crate::core::f;\n",
        "standalone.rs": "use crate::rocksdb;\n",
        "plugin.rs": "use crate::rocksdb;\nuse crate::standalone;\n",
    }
    assert findings(layered) == []
    found = findings(layered, "ribbon")
    assert len(found) == 1 and "standalone uses rocksdb" in found[0], found
    print("check-modules self-test: ok")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    findings = []
    for crate_dir, roots in CRATES.items():
        findings += check_crate(root, crate_dir, roots)
    for f in findings:
        print(f)
    if findings:
        return 1
    print(f"no module import cycles in {len(CRATES)} crates; ribbon's layers hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
