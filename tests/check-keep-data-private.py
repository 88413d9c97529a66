#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""build-aux/keep-data-private.py as `meson install` runs it, on folders made for the test: the
person's data folder that the install shares is made private; a staged install, another folder
and a folder others may write to are left as they are. TAP.

    check-keep-data-private.py SCRIPT
"""

import os
import subprocess
import sys
import tempfile

script = sys.argv[1]
n = 0
failed = 0


def check(ok, what):
    global n, failed
    n += 1
    if not ok:
        failed += 1
    print(f'{"ok" if ok else "not ok"} {n} - {what}')


def install(prefix, data_home, destdir=None):
    env = {k: v for k, v in os.environ.items() if k not in ('DESTDIR', 'XDG_DATA_HOME')}
    env.update(MESON_INSTALL_PREFIX=prefix, MESON_INSTALL_DESTDIR_PREFIX=(destdir or '') + prefix,
               XDG_DATA_HOME=data_home)
    if destdir:
        env['DESTDIR'] = destdir
    return subprocess.run([sys.executable, script, 'share'], env=env, capture_output=True, text=True)


def mode(path):
    return os.stat(path).st_mode & 0o777


with tempfile.TemporaryDirectory() as tmp:
    prefix = os.path.join(tmp, 'home', '.local')
    data = os.path.join(prefix, 'share', 'chaperone')
    os.makedirs(os.path.join(data, 'extension'))

    # As meson leaves it: 0755, the data folder of the person installing.
    os.chmod(data, 0o755)
    os.chmod(os.path.join(data, 'extension'), 0o755)
    r = install(prefix, os.path.join(prefix, 'share'))
    check(r.returncode == 0 and mode(data) == 0o700, f'the shared data folder is made 0700 ({oct(mode(data))})')
    check('made private' in r.stdout, 'the install says so')
    check(mode(os.path.join(data, 'extension')) == 0o755, 'what is inside keeps its own mode (the browser reads it)')

    # Installed again: nothing to do, nothing said.
    r = install(prefix, os.path.join(prefix, 'share'))
    check(r.returncode == 0 and mode(data) == 0o700 and r.stdout == '', 'a second install leaves it private, quietly')

    # A staged install (a package build) never touches the person's folder.
    os.chmod(data, 0o755)
    r = install(prefix, os.path.join(prefix, 'share'), destdir=os.path.join(tmp, 'stage'))
    check(r.returncode == 0 and mode(data) == 0o755, 'a DESTDIR install leaves the folder alone')

    # Another prefix than the data home: a system-wide install's folder must stay readable.
    other = os.path.join(tmp, 'usr')
    os.makedirs(os.path.join(other, 'share', 'chaperone'))
    os.chmod(os.path.join(other, 'share', 'chaperone'), 0o755)
    r = install(other, os.path.join(prefix, 'share'))
    check(r.returncode == 0 and mode(os.path.join(other, 'share', 'chaperone')) == 0o755,
          'a folder that is not the data folder keeps 0755')
    check(mode(data) == 0o755, 'and the data folder is not touched either')

    # Writable by others: not ours to bless; the app refuses it with its own message.
    os.chmod(data, 0o777)
    r = install(prefix, os.path.join(prefix, 'share'))
    check(r.returncode == 0 and mode(data) == 0o777, 'a folder others may write to is left for the app to refuse')
    check('chmod 700' in r.stderr, 'and the install says how to fix it')

print(f'1..{n}')
sys.exit(1 if failed else 0)
