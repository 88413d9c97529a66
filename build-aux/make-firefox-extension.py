#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the Firefox build of the extension: the same files as extension/, with a manifest that
Firefox takes, into OUT_DIR, and the same tree zipped as XPI.

    make-firefox-extension.py SRC_DIR OUT_DIR XPI [DEPFILE]

One source tree: the JavaScript feature-detects (lib/compat.js), so only the manifest differs:

- background: an event page (`background.scripts` with `"type": "module"`) instead of
  `service_worker` (Firefox runs MV3 backgrounds as event pages; `service_worker` is not
  supported there);
- `browser_specific_settings.gecko`: a fixed id, so the add-on keeps its storage (the device
  key, the pairing) across reinstalls, and the oldest Firefox tested (ESR);
- no `key` (a Chrome-only way of fixing the id) and no `minimum_chrome_version`;
- `content_security_policy.extension_pages` of Chrome's default (`script-src 'self'`): Firefox's
  own MV3 default adds `upgrade-insecure-requests`, which turns the bridge's ws://127.0.0.1 into
  wss:// — a TLS hello the bridge cannot answer, and the extension never connects.

The moz-extension:// origin is still random per profile: Firefox makes a fresh UUID for each
installation, whatever the id (docs/security.md, "Origins").

DEPFILE lists every file read, so ninja rebuilds when any of them changes.
"""

import json
import os
import shutil
import sys
import zipfile

GECKO_ID = 'chaperone@chaperone.github.io'
# Firefox ESR 128: MV3 event pages with ES modules, scripting.executeScript with files and func,
# storage.session, and host permissions asked for at install.
GECKO_MIN = '128.0'

# Chrome-only keys Firefox warns about or refuses.
DROP = ('key', 'minimum_chrome_version')


def firefox_manifest(manifest):
    out = {k: v for k, v in manifest.items() if k not in DROP}
    background = manifest.get('background', {})
    out['background'] = {'scripts': [background['service_worker']], 'type': background.get('type', 'module')}
    out['content_security_policy'] = {'extension_pages': "script-src 'self'"}
    out['browser_specific_settings'] = {'gecko': {'id': GECKO_ID, 'strict_min_version': GECKO_MIN}}
    return out


def source_files(src):
    for root, dirs, files in os.walk(src):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            yield path, os.path.relpath(path, src)


def main(argv):
    # The one place the Gecko id is written: meson asks for it (config.h's CHP_EXTENSION_ID_FIREFOX,
    # which the doctor and the native-host manifests use).
    if len(argv) == 2 and argv[1] == '--id':
        print(GECKO_ID)
        return 0
    if len(argv) not in (4, 5):
        sys.stderr.write(__doc__)
        return 2
    src, out_dir, xpi = argv[1], argv[2], argv[3]
    depfile = argv[4] if len(argv) == 5 else None

    with open(os.path.join(src, 'manifest.json'), encoding='utf-8') as f:
        manifest = firefox_manifest(json.load(f))
    manifest_text = json.dumps(manifest, indent=2, ensure_ascii=False) + '\n'

    # Anew each time: a file removed from extension/ must not linger in the build.
    shutil.rmtree(out_dir, ignore_errors=True)
    inputs = []
    for path, rel in source_files(src):
        inputs.append(path)
        dest = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if rel == 'manifest.json':
            with open(dest, 'w', encoding='utf-8') as f:
                f.write(manifest_text)
        else:
            shutil.copyfile(path, dest)

    # manifest.json at the top of the archive, as an XPI must have it; fixed times, so the same
    # sources give the same bytes.
    tmp = xpi + '.tmp'
    with zipfile.ZipFile(tmp, 'w', zipfile.ZIP_DEFLATED) as z:
        for path, rel in source_files(out_dir):
            info = zipfile.ZipInfo(rel.replace(os.sep, '/'), date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with open(path, 'rb') as f:
                z.writestr(info, f.read())
    os.replace(tmp, xpi)

    if depfile:
        def esc(p):
            return p.replace(' ', '\\ ')
        with open(depfile, 'w', encoding='utf-8') as f:
            f.write(f'{esc(xpi)}: ' + ' '.join(esc(p) for p in inputs) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
