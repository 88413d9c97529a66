#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""No source file grows past what a reader can hold: C (and its headers) at most 900 lines,
JavaScript at most 700 (issue 14). Past that a file has more than one responsibility and should
be split along its seams. Covers the app, the relays, the extension, the tests and the benches;
not generated files, not node_modules. Prints TAP."""

import os
import sys

LIMITS = {'.c': 900, '.h': 900, '.js': 700, '.mjs': 700}
SKIP_DIRS = {'.git', 'node_modules', 'peers', 'subprojects', '.flatpak-builder'}


def main(root):
    over = []
    count = 0
    for dirpath, dirnames, names in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        # Build trees (build, build-asan, …) and vendored code are not ours to size.
        dirnames[:] = [d for d in dirnames
                       if d not in SKIP_DIRS and not (rel_dir == '.' and d.startswith('build'))]
        for name in names:
            limit = LIMITS.get(os.path.splitext(name)[1])
            if limit is None:
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding='utf-8', errors='replace') as f:
                lines = sum(1 for _ in f)
            count += 1
            if lines > limit:
                over.append((os.path.relpath(path, root), lines, limit))
    print('1..1')
    if over:
        print('not ok 1 - no source file over its size limit')
        for path, lines, limit in sorted(over, key=lambda o: -o[1]):
            print(f'# {path}: {lines} lines (limit {limit})')
        return 1
    print(f'ok 1 - no source file over its size limit ({count} files: C 900, JS 700 lines)')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.'))
