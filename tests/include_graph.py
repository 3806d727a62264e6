#!/usr/bin/env python3
"""The module graph of lib/ and app/ has no cycle (suite 'code').

A module is a .c file and the .h of the same name in its folder; a file
that includes another makes its module depend on the other's. A public
header (lib/X/include/X/NAME.h) is a module of its own: it is the
library's interface, which several of its .c files implement (htoe.h:
htoe.c, htoe_acl.c, htoe_reset.c), and the library's internals may use
its types. Quoted includes are resolved as the
compiler does: the including file's folder first, then the project's include
folders; what is not found there (system, DPDK, generated headers) is not a
module of the project. Every cycle between two or more modules is printed
with the includes that close it, and the test fails.

    include_graph.py SRCDIR
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# the include folders of meson.build and of the libraries and programs
SEARCH = ["lib", "lib/htoe/include", "app", "app/common", "app/bridge", "lib/htoe",
          "lib/dimm", "lib/common", "lib/dimm_preload"]


def module(rel):
    """app/bridge/port.c -> app/bridge/port; a public header stays itself"""
    return os.path.splitext(rel)[0]


def resolve(src, rel, name):
    for d in [os.path.dirname(rel)] + SEARCH:
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(src, cand)):
            return cand
    return None


def graph(src):
    """{module: {module: [(file, included file), ...]}}"""
    edges = {}
    for top in ("lib", "app"):
        for root, _, files in os.walk(os.path.join(src, top)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                rel = os.path.relpath(os.path.join(root, f), src)
                a = module(rel)
                edges.setdefault(a, {})
                with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for name in INCLUDE.findall(text):
                    to = resolve(src, rel, name)
                    if to is None:
                        continue
                    b = module(to)
                    if b != a:
                        edges[a].setdefault(b, []).append((rel, to))
    return edges


def sccs(edges):
    """Tarjan's strongly connected components (iterative)"""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, {}))))]
        index[root] = low[root] = n[0]
        n[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = n[0]
                    n[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def cycle(edges, comp):
    """One cycle through the first module of comp, by breadth-first search inside comp"""
    members, start = set(comp), comp[0]
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges.get(v, {})):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "."
    edges = graph(src)
    bad = sccs(edges)
    n_edges = sum(len(v) for v in edges.values())
    if not bad:
        print(f"ok: {len(edges)} modules, {n_edges} dependencies, no cycle")
        return 0
    for comp in bad:
        path = cycle(edges, comp)
        print(f"FAIL: cycle between {len(comp)} modules: {' -> '.join(path)}")
        for a, b in zip(path, path[1:]):
            for f, inc in edges[a][b]:
                print(f"  {f} includes {inc}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
