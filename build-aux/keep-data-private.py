#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run by `meson install`: keeps the person's data folder private when the install shares it.

    keep-data-private.py DATADIR_RELATIVE_TO_PREFIX

With the prefix README.md uses (~/.local), `meson install` puts the extension, the Firefox add-on
and the native-messaging manifest into ~/.local/share/chaperone, which is also the app's data
folder ($XDG_DATA_HOME/chaperone: the engine key, the databases). Meson makes a folder it creates
0755, and the app refuses a data folder other accounts can read (src/core/base/chp-identity.c):
a person who installed before the first start would find the app refusing to start. So when the
folder installed into is this user's data folder, and it is theirs, a real folder and writable by
nobody else, it is made 0700 (what the app itself makes it). A folder others could write to is
left alone, for the app to refuse with its own message: files in it may not be the person's.

A staged install (DESTDIR, a package build) or any other folder is not touched.
"""

import os
import stat
import sys


def data_home():
    home = os.environ.get('XDG_DATA_HOME')
    if home and os.path.isabs(home):
        return home
    return os.path.join(os.path.expanduser('~'), '.local', 'share')


def keep_private(installed, mine):
    """→ what was done: 'private', 'kept' (already private), 'skipped: <why>'."""
    if os.environ.get('DESTDIR'):
        return 'skipped: a staged install'
    if not os.path.exists(mine) or os.path.realpath(installed) != os.path.realpath(mine):
        return 'skipped: not the data folder'
    st = os.lstat(mine)
    if not stat.S_ISDIR(st.st_mode):
        return 'skipped: not a folder'
    if st.st_uid != os.getuid():
        return 'skipped: another user\'s folder'
    if st.st_mode & 0o022:
        return 'skipped: others may write to it'
    if st.st_mode & 0o077 == 0:
        return 'kept'
    os.chmod(mine, stat.S_IMODE(st.st_mode) & 0o700)
    return 'private'


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    prefix = os.environ.get('MESON_INSTALL_DESTDIR_PREFIX') or os.environ.get('MESON_INSTALL_PREFIX', '')
    installed = os.path.join(prefix, argv[1], 'chaperone')
    mine = os.path.join(data_home(), 'chaperone')
    done = keep_private(installed, mine)
    if done == 'private':
        print(f'{mine}: the data folder, made private (0700)')
    elif done.startswith('skipped: others'):
        print(f'{mine}: other users may write to this folder; Chaperone will refuse it until it is '
              f'yours alone (chmod 700 {mine})', file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
