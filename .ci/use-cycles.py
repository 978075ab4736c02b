#!/usr/bin/env python3
"""Finds `use` cycles between the files of the workspace's Rust crates.

A file depends on another when it names it in a `use` declaration (`use crate::a::b`,
`use super::x`, `use self::child::Y`, nested `{...}` trees included, at any depth) or in an
inline path (`crate::a::f()`, `super::x::Y`). Two files that depend on each other, directly or
through others, form a cycle: each needs the other to be read first, and neither can move or
be tested alone. A parent module and its child are two files like any others.

Usage:
    python3 .ci/use-cycles.py                 # every crate of the workspace
    python3 .ci/use-cycles.py actors src      # only the crates whose roots lie under these paths

Crate roots are `src/lib.rs`, `src/main.rs`, `src/bin/*.rs`, `tests/*.rs`, `tests/*/main.rs`,
`benches/*.rs` and `examples/*.rs` of every package; modules are followed through `mod name;`
(including `#[path = "..."]`). Exits 1 and prints every cycle with the lines that make it.
"""

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def strip_comments_and_strings(text):
    """Blanks comments and string/char literals, keeping line numbers."""
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
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or re.match(r"'\\u\{[0-9a-fA-F]+\}'", text[i:i + 12]):
            j = text.find("'", i + 2 if text[i + 1] == "\\" else i + 1)
            out.append("' '")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Module:
    def __init__(self, path, file, is_dir_owner):
        self.path = path  # tuple of module names from the crate root
        self.file = file
        # Where child files live: `foo.rs` → `foo/`, `foo/mod.rs` / `lib.rs` → its directory.
        self.child_dir = file.parent if is_dir_owner else file.parent / file.stem


def crate_modules(root_file):
    """Every file-backed module of the crate rooted at `root_file`: {module path: Module}."""
    modules = {}
    pending = [Module((), root_file, True)]
    while pending:
        module = pending.pop()
        if module.path in modules or not module.file.exists():
            continue
        modules[module.path] = module
        text = strip_comments_and_strings(module.file.read_text())
        for m in re.finditer(r'((?:#\[[^\]]*\]\s*)*)(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', text):
            attrs, name = m.group(1), m.group(2)
            explicit = re.search(r'path\s*=\s*"([^"]*)"', module.file.read_text()[m.start():m.end()] if attrs else "")
            if explicit:
                file = (module.file.parent / explicit.group(1)).resolve()
                pending.append(Module(module.path + (name,), file, file.name == "mod.rs"))
                continue
            plain = module.child_dir / f"{name}.rs"
            nested = module.child_dir / name / "mod.rs"
            if plain.exists():
                pending.append(Module(module.path + (name,), plain, False))
            elif nested.exists():
                pending.append(Module(module.path + (name,), nested, True))
    return modules


def inline_modules(text):
    """(start, end, names) of every inline `mod name { ... }` block, nested ones included."""
    blocks, stack, depth = [], [], 0
    pending = None
    for m in re.finditer(r'\bmod\s+(\w+)\s*\{|[{}]', text):
        token = m.group(0)
        if m.group(1):
            depth += 1
            stack.append((m.group(1), depth, m.end()))
        elif token == "{":
            depth += 1
        else:
            if stack and stack[-1][1] == depth:
                name, _, start = stack.pop()
                blocks.append((start, m.start(), tuple(n for n, _, _ in stack) + (name,)))
            depth -= 1
    return blocks


def module_at(position, blocks):
    """The inline module path (relative to the file's module) enclosing `position`."""
    inner = ()
    for start, end, names in blocks:
        if start <= position < end and len(names) > len(inner):
            inner = names
    return inner


def use_trees(text):
    """(offset, line, path) for every leaf path of every `use` declaration in `text`."""
    for m in re.finditer(r'\buse\s+([^;]*);', text):
        line = text.count("\n", 0, m.start()) + 1
        for path in expand(re.sub(r"\s+", "", m.group(1))):
            yield m.start(), line, path


def expand(tree, prefix=""):
    """`a::{b,c::{d,e}}` → `a::b`, `a::c::d`, `a::c::e`."""
    depth, start, parts = 0, 0, []
    brace = tree.find("{")
    if brace < 0:
        yield prefix + re.sub(r"\bas\w+$", "", tree)
        return
    head, body = tree[:brace], tree[brace + 1:tree.rfind("}")]
    for i, c in enumerate(body):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    for part in parts:
        if part:
            yield from expand(part, prefix + head)


def inline_paths(text):
    """(offset, line, path) for `crate::…`, `super::…` and `self::…` paths outside `use`
    declarations."""
    without_uses = re.sub(r'\buse\s+[^;]*;', lambda m: " " * len(m.group(0)), text)
    for m in re.finditer(r'(?<![\w:])((?:crate|super|self)(?:::\w+)+)', without_uses):
        yield m.start(), without_uses.count("\n", 0, m.start()) + 1, m.group(1)


def resolve(module, inline, path, modules):
    """The file-backed module a path names (the longest module prefix), or None if external.
    `inline` is the inline module path (inside the file) the path is written in."""
    segments = [s for s in path.split("::") if s]
    if not segments:
        return None
    here = module.path + inline
    if segments[0] == "crate":
        base, rest = (), segments[1:]
    elif segments[0] in ("super", "self"):
        base = here
        while segments and segments[0] in ("super", "self"):
            if segments.pop(0) == "super":
                base = base[:-1]
        rest = segments
    else:
        # A path starting with a child module's name (2015-style) or an external crate.
        base, rest = here, segments
        if (here + (segments[0],)) not in modules:
            return None
    target = base
    for segment in rest:
        if target + (segment,) in modules:
            target = target + (segment,)
        else:
            break
    while target and target not in modules:
        target = target[:-1]  # an inline module: its file is the enclosing one
    return modules.get(target)


def dependencies(modules):
    """{file: {other file: [lines]}} within one crate."""
    deps = {}
    for module in modules.values():
        text = strip_comments_and_strings(module.file.read_text())
        edges = deps.setdefault(module.file, {})
        blocks = inline_modules(text)
        for offset, line, path in list(use_trees(text)) + list(inline_paths(text)):
            target = resolve(module, module_at(offset, blocks), path, modules)
            if target is not None and target.file != module.file:
                edges.setdefault(target.file, []).append(line)
    return deps


def cycles(deps):
    """Strongly connected components with more than one file (Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in deps.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in list(deps):
        if v not in index:
            visit(v)
    return found


def crate_roots(scopes):
    roots = []
    for manifest in sorted(ROOT.glob("**/Cargo.toml")):
        package = manifest.parent
        if any(part in ("target", ".tools") or part.startswith(".") for part in package.relative_to(ROOT).parts):
            continue
        candidates = [package / "src/lib.rs", package / "src/main.rs"]
        for pattern in ("src/bin/*.rs", "tests/*.rs", "tests/*/main.rs", "benches/*.rs", "examples/*.rs"):
            candidates += sorted(package.glob(pattern))
        for root in candidates:
            if root.exists() and (not scopes or any(root.resolve().is_relative_to(s) for s in scopes)):
                roots.append(root.resolve())
    return roots


def main(argv):
    scopes = [Path(a).resolve() for a in argv]
    found_any = False
    seen = set()
    for root in crate_roots(scopes):
        modules = crate_modules(root)
        deps = dependencies(modules)
        for component in cycles(deps):
            key = tuple(component)
            if key in seen:
                continue
            seen.add(key)
            found_any = True
            print(f"use cycle in the crate rooted at {root.relative_to(ROOT)}:")
            members = set(component)
            for file in component:
                for target, lines in sorted(deps[file].items()):
                    if target in members:
                        where = ", ".join(str(l) for l in sorted(set(lines)))
                        print(f"  {file.relative_to(ROOT)} → {target.relative_to(ROOT)} (line {where})")
    if not found_any:
        print("no use cycles")
    return 1 if found_any else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
