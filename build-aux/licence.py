#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every source file says its licence, the one meson.build declares, in an SPDX line.

  build-aux/licence.py --check SOURCE_ROOT   list the files without it; exit 1 if any
  build-aux/licence.py --fix SOURCE_ROOT     add the line where it is missing

The line goes first, after a shebang or an XML declaration, in the file's own comment syntax.
Files that cannot hold a comment (JSON, data, images) are left out, and so are third-party
files (none today) and test fixtures that stand in for other people's web pages.
"""

import re
import subprocess
import sys
from pathlib import Path

SKIP_DIRS = ('tests/fixtures/', 'tests/fuzz/corpus', 'tests/fuzz/crashes/', 'po/', 'bench/peers/')

# suffix (or file name) -> how a comment line looks
STYLES = {
    '.c': '/* {} */', '.h': '/* {} */', '.css': '/* {} */',
    '.js': '// {}', '.mjs': '// {}',
    '.py': '# {}', '.sh': '# {}', 'meson.build': '# {}', 'meson_options.txt': '# {}',
    '.ui': '<!-- {} -->', '.xml': '<!-- {} -->', '.in': None,  # .in: by what it makes
    '.html': '<!-- {} -->',
}


def declared_licence(root):
    text = (root / 'meson.build').read_text(encoding='utf-8')
    m = re.search(r"license:\s*'([^']+)'", text)
    if not m:
        sys.exit('licence.py: meson.build declares no licence')
    return m.group(1)


def style_for(path):
    name = path.name
    if name in STYLES:
        return STYLES[name]
    if name.endswith('.in'):
        inner = Path(name[:-3])
        return STYLES.get(inner.suffix) if inner.suffix in ('.xml', '.ui', '.c', '.h', '.py', '.sh') else None
    return STYLES.get(path.suffix)


def tracked_files(root):
    out = subprocess.run(['git', '-C', str(root), 'ls-files', '--cached', '--others',
                          '--exclude-standard'], capture_output=True, text=True, check=False)
    if out.returncode != 0:  # not a git checkout (a tarball): every file below the root
        return [p.relative_to(root).as_posix() for p in root.rglob('*') if p.is_file()]
    return out.stdout.splitlines()


def candidates(root):
    for rel in tracked_files(root):
        if rel.startswith(SKIP_DIRS) or rel.startswith('.'):
            continue
        path = root / rel
        if path.is_file() and style_for(path) is not None:
            yield rel, path


def has_line(text, spdx):
    return spdx in '\n'.join(text.splitlines()[:4])


def insert(text, line):
    lines = text.split('\n')
    at = 0
    # After a shebang, an XML declaration or a doctype, which must come first.
    if lines and (lines[0].startswith('#!') or lines[0].startswith('<?xml') or
                  lines[0].lower().startswith('<!doctype')):
        at = 1
    lines.insert(at, line)
    return '\n'.join(lines)


def main(argv):
    if len(argv) != 3 or argv[1] not in ('--check', '--fix'):
        sys.exit(__doc__)
    root = Path(argv[2]).resolve()
    spdx = f'SPDX-License-Identifier: {declared_licence(root)}'
    missing = []
    for rel, path in candidates(root):
        text = path.read_text(encoding='utf-8')
        if has_line(text, spdx):
            continue
        if argv[1] == '--fix':
            path.write_text(insert(text, style_for(path).format(spdx)), encoding='utf-8')
        else:
            missing.append(rel)
    if not (root / 'COPYING').is_file():
        missing.append('COPYING (the licence text)')
    for rel in missing:
        print(f'no "{spdx}": {rel}')
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
