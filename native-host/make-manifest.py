#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the native-messaging manifest: the template with the host's directory and the one
origin Chrome may start it for, the extension's own, derived from the development key in
extension/manifest.json the way Chrome derives an id (the first 32 hex digits of SHA-256 over
the key's DER, each mapped 0-f to a-p).

Usage: make-manifest.py <template> <extension/manifest.json> <bindir> <output>
       make-manifest.py --id <extension/manifest.json>   (prints the id: meson puts it in config.h)
"""
import base64
import hashlib
import json
import sys


def extension_id(manifest_path):
    with open(manifest_path, encoding='utf-8') as f:
        key = json.load(f)['key']
    digest = hashlib.sha256(base64.b64decode(key, validate=True)).hexdigest()[:32]
    return ''.join(chr(ord('a') + int(c, 16)) for c in digest)


def main(argv):
    if len(argv) == 3 and argv[1] == '--id':
        print(extension_id(argv[2]))
        return
    if len(argv) != 5:
        sys.exit(__doc__.strip().splitlines()[-1])
    template, manifest, bindir, output = argv[1:]
    with open(template, encoding='utf-8') as f:
        text = f.read()
    text = text.replace('@BINDIR@', bindir).replace('@EXTENSION_ID@', extension_id(manifest))
    if '@' in text:
        sys.exit(f'{template}: a placeholder is left over')
    json.loads(text)  # what Chrome reads must be JSON
    with open(output, 'w', encoding='utf-8') as f:
        f.write(text)


if __name__ == '__main__':
    main(sys.argv)
