#!/usr/bin/env python3
"""Finds import cycles between the files of the library (crates/oomwhy/src).

Draws the graph of which file refers to which: every `crate::`, `super::`
and `self::` path (in `use` lines and in code), and paths that start with a
child module's name. A path leads to the file of the deepest module it
names (`crate::input::sniff::Content` leads to input/sniff.rs, and
`crate::Finding` to lib.rs). Comments, strings and test-only code
(`#[cfg(test)]` modules, inline or in files of their own) are left out:
tests sit above everything they test.

A module's own children are its parts, not its dependencies: a file that
declares `mod x;` and uses `x::f` is not an edge. Everything else is, a
child using its parent's items included. Then every strongly connected
group of two or more files is a cycle.

Prints each cycle with the references that close it, and exits 1 if there
is one. It also exits 1 where a file refers to a folder its layer must not
reach (`LAYERS`): finding messages (scanner/, detect/) never reaches into
explaining or rendering them (explain/, render/). `--allow A,B` accepts one
known cycle (its files, comma-separated, paths relative to the source
folder); `--graph` prints every edge. Python 3, no dependencies.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "crates" / "oomwhy" / "src"


# (folder, folders it must not refer to): the finding steps sit below the
# explaining and rendering ones, whatever cycle there is or is not.
LAYERS = [
    ("scanner", ("explain", "render")),
    ("detect", ("explain", "render")),
]


def strip(text: str) -> str:
    """The code without comments, string or character literals (each
    replaced by a space, so that no two tokens join)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            out.append(" ")
        elif (m := re.match(r'b?r(#*)"', text[i:])) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find('"' + m.group(1), i + m.end())
            i = n if end < 0 else end + 1 + len(m.group(1))
            out.append(' "" ')
        elif c == '"' or (c == "b" and text.startswith('b"', i) and (i == 0 or not text[i - 1].isalnum())):
            i += 2 if c == "b" else 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append(' "" ')
        elif c == "'":
            # A character literal ('x', '\n', '\u{1f}') or a lifetime ('a).
            m = re.match(r"'(\\(u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", text[i:])
            if m:
                i += m.end()
                out.append(" ' ' ")
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def without_tests(code: str) -> tuple[str, set[str]]:
    """The code with `#[cfg(test)]` items removed, and the names of the
    child modules declared test-only (`#[cfg(test)] mod tests;`)."""
    test_children = set()
    out = []
    i = 0
    attr = re.compile(r"#\[cfg\(test\)\]\s*")
    while True:
        m = attr.search(code, i)
        if not m:
            out.append(code[i:])
            break
        out.append(code[i : m.start()])
        j = m.end()
        # Further attributes on the same item.
        while (a := re.match(r"#\[[^\]]*\]\s*", code[j:])) is not None:
            j += a.end()
        decl = re.match(r"(pub(\([^)]*\))?\s+)?mod\s+(\w+)\s*;", code[j:])
        if decl:
            test_children.add(decl.group(3))
            i = j + decl.end()
            continue
        # An item: up to its `;` or the end of its `{ ... }` block.
        k, depth = j, 0
        while k < len(code):
            if code[k] == "{":
                depth += 1
            elif code[k] == "}":
                depth -= 1
                if depth == 0:
                    k += 1
                    break
            elif code[k] == ";" and depth == 0:
                k += 1
                break
            k += 1
        i = k
    return "".join(out), test_children


def module_of(path: Path) -> tuple[str, ...]:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib"):
        parts.pop()
    return tuple(parts)


def expand_use(tree: str) -> list[str]:
    """`a::{b, c::{d as e, f}}` -> [`a::b`, `a::c::d`, `a::c::f`]."""
    tree = re.sub(r"\s*(::|[{},])\s*", r"\1", tree.strip())
    depth, start = 0, None
    for k, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                start = k
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0 and start is not None:
                prefix, inner = tree[:start], tree[start + 1 : k]
                items, level, begin = [], 0, 0
                for q, cq in enumerate(inner + ","):
                    if cq == "{":
                        level += 1
                    elif cq == "}":
                        level -= 1
                    elif cq == "," and level == 0:
                        if inner[begin:q]:
                            items.append(inner[begin:q])
                        begin = q + 1
                return [p for item in items for p in expand_use(prefix + item)]
    # `path as alias`: the path is what is imported.
    tree = re.split(r"\s+as\s+", tree)[0].strip()
    tree = re.sub(r"::self$", "", tree)
    return [tree] if tree else []


def resolve(here: tuple[str, ...], path: list[str], modules: set) -> tuple[str, ...] | None:
    """The deepest module a path names, from the module `here`."""
    if not path:
        return None
    head, rest = path[0], path[1:]
    if head == "crate":
        base: tuple[str, ...] = ()
    elif head == "super":
        base = here[:-1]
        while rest and rest[0] == "super":
            base, rest = base[:-1], rest[1:]
    elif head == "self":
        base = here
    elif here + (head,) in modules:
        base, rest = here + (head,), rest
    else:
        return None
    found = base
    for part in rest:
        if base + (part,) in modules:
            base = base + (part,)
            found = base
        else:
            break
    return found


def graph():
    files = sorted(p for p in SRC.rglob("*.rs"))
    modules = {module_of(p): p for p in files}
    test_only: set = set()
    codes = {}
    for p in files:
        code, tests = without_tests(strip(p.read_text(encoding="utf-8")))
        codes[module_of(p)] = code
        test_only |= {module_of(p) + (t,) for t in tests}
    # A test-only module's children are test-only too.
    live = {m for m in modules if not any(m[: len(t)] == t for t in test_only)}
    edges: dict = {m: {} for m in live}
    path_re = re.compile(r"(?<![\w:])((?:crate|super|self|[a-z_][a-z0-9_]*)(?:\s*::\s*(?:\w+|\{))+)")
    use_re = re.compile(r"\buse\s+([^;]+);")
    for here in sorted(live):
        code = codes[here]
        paths = []
        for m in use_re.finditer(code):
            paths += expand_use(m.group(1))
        rest = use_re.sub(" ", code)
        paths += [re.sub(r"\s+", "", m.group(1)).rstrip(":{") for m in path_re.finditer(rest)]
        for text in paths:
            parts = [x for x in text.split("::") if x and x != "*"]
            target = resolve(here, parts, modules.keys())
            if target is None or target == here or target not in live:
                continue
            # A module's own descendants are its parts.
            if target[: len(here)] == here:
                continue
            edges[here].setdefault(target, text)
    return modules, edges


def cycles(edges) -> list[list]:
    """Strongly connected groups of two or more modules (Tarjan)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on: set = set()
    found = []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", action="store_true", help="print every edge")
    ap.add_argument(
        "--allow",
        action="append",
        default=[],
        help="a known cycle to accept: its files, comma-separated (relative to the source folder)",
    )
    args = ap.parse_args()
    modules, edges = graph()

    def name(m):
        return str(modules[m].relative_to(SRC))

    if args.graph:
        for here in sorted(edges):
            for target, via in sorted(edges[here].items()):
                print(f"{name(here)} -> {name(target)}    ({via})")
    allowed = [set(a.split(",")) for a in args.allow]
    failed = 0
    groups = cycles(edges)
    for group in groups:
        files = {name(m) for m in group}
        known = files in allowed
        print(f"{'allowed' if known else 'CYCLE'} ({len(group)} files): " + ", ".join(sorted(files)))
        for m in group:
            for target, via in sorted(edges[m].items()):
                if target in group:
                    print(f"    {name(m)} -> {name(target)}    ({via})")
        failed += not known
    for files in allowed:
        if not any({name(m) for m in group} == files for group in groups):
            print("allowed cycle is gone (drop its --allow): " + ", ".join(sorted(files)))
    crossed = 0
    for here in sorted(edges):
        for target, via in sorted(edges[here].items()):
            for folder, above in LAYERS:
                if here[:1] == (folder,) and target[:1] and target[0] in above:
                    print(f"LAYER: {name(here)} -> {name(target)}    ({via}): {folder}/ never refers to {target[0]}/")
                    crossed += 1
    edge_count = sum(len(t) for t in edges.values())
    print(f"{len(edges)} files, {edge_count} references between them, {failed} cycle(s)"
          + (f", {len(groups) - failed} allowed" if len(groups) > failed else "")
          + (f", {crossed} layer crossing(s)" if crossed else ""))
    return 1 if failed or crossed else 0


if __name__ == "__main__":
    sys.exit(main())
