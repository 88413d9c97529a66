#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks the layering of src/ (docs/architecture.md): every #include "…" of a C file names a
header of its own layer or of a layer it may use, and the include graph has no cycle. Meson's
include paths already refuse most upward includes; this also catches a header reached through a
wrong dependency and a cycle between files of one layer. Prints TAP."""

import os
import re
import sys

# Each layer and the layers it may include, lowest first.
LAYERS = {
    'src/wire': [],
    'src/core/base': ['src/wire'],
    'src/core/policy': ['src/wire'],
    'src/core/model': ['src/core/base', 'src/wire'],
    'src/core/bridge': ['src/core/model', 'src/core/base', 'src/wire'],
    'src/core/engine': ['src/core/bridge', 'src/core/model', 'src/core/policy', 'src/core/base',
                        'src/wire'],
    'src/core/agent': ['src/core/engine', 'src/core/bridge', 'src/core/model', 'src/core/policy',
                       'src/core/base', 'src/wire'],
    'src/platform': [],
    'src/relay': ['src/wire'],
    'native-host': ['src/wire'],
    'src/ui': ['src/core/agent', 'src/core/engine', 'src/core/bridge', 'src/core/model',
               'src/core/policy', 'src/core/base', 'src/wire', 'src/platform'],
}
# Headers made at build time, and where they belong.
GENERATED = {'config.h': None, 'chp-url-floor-rules.h': 'src/core/policy',
             'chp-redact-patterns.h': 'src/core/policy'}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    best = None
    for layer in LAYERS:
        if path == layer or path.startswith(layer + '/'):
            if best is None or len(layer) > len(best):
                best = layer
    return best


def main(root):
    headers = {}   # basename -> path relative to root
    sources = []
    for layer in LAYERS:
        for dirpath, _, names in os.walk(os.path.join(root, layer)):
            for name in names:
                # Tests beside a program (native-host/test-*.c) are not part of its layer.
                if name.endswith(('.c', '.h')) and not name.startswith('test-'):
                    rel = os.path.relpath(os.path.join(dirpath, name), root)
                    sources.append(rel)
                    if name.endswith('.h'):
                        if name in headers:
                            print(f'Bail out! two headers named {name}: {headers[name]}, {rel}')
                            return 1
                        headers[name] = rel
    problems = []
    graph = {}
    for rel in sorted(sources):
        with open(os.path.join(root, rel), encoding='utf-8') as f:
            text = f.read()
        own = layer_of(rel)
        graph[rel] = []
        for name in INCLUDE.findall(text):
            base = os.path.basename(name)
            if base in GENERATED:
                target_layer = GENERATED[base]
                if target_layer is not None and target_layer != own:
                    problems.append(f'{rel} includes {name}, made for {target_layer}')
                continue
            target = headers.get(base)
            if target is None:
                problems.append(f'{rel} includes {name}, which no layer has')
                continue
            graph[rel].append(target)
            target_layer = layer_of(target)
            if target_layer != own and target_layer not in LAYERS[own]:
                problems.append(f'{rel} ({own}) includes {target} ({target_layer})')

    # Cycles: a depth-first search that reports the first back edge it meets on each path.
    cycles = []
    state = {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                cycles.append(' -> '.join(stack[stack.index(nxt):] + [nxt]))
            elif state.get(nxt) is None:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    # A .c file and its header are one unit: an include of x.h reaches what x.c includes too, so
    # a cycle through implementations (a.c includes b.h, b.c includes a.h) counts.
    # A private header (x-private.h) is the inside of x, shared by the files that implement it.
    def unit_of(path):
        stem = path[:-2]
        return stem[:-len('-private')] if stem.endswith('-private') else stem

    units = {}
    for rel in graph:
        units.setdefault(unit_of(rel), set()).update(unit_of(t) for t in graph[rel])
    unit_graph = {u: sorted(t for t in ts if t != u) for u, ts in units.items()}
    graph = unit_graph
    for node in sorted(graph):
        if state.get(node) is None:
            visit(node, [])

    print('1..2')
    if problems:
        print('not ok 1 - every include stays in its layer or goes down')
        for p in problems:
            print(f'# {p}')
    else:
        print(f'ok 1 - every include stays in its layer or goes down ({len(sources)} files)')
    if cycles:
        print('not ok 2 - no include cycle between files')
        for c in cycles:
            print(f'# {c}')
    else:
        print('ok 2 - no include cycle between files (a .c and its .h count as one)')
    return 1 if problems or cycles else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.'))
