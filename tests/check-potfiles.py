#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fails when a file with translatable strings is missing from po/POTFILES.in, or when
POTFILES.in names a file that does not exist: either way a string would go untranslated."""
import os
import re
import sys

top = sys.argv[1]
listed = set()
with open(os.path.join(top, "po", "POTFILES.in")) as f:
    for line in f:
        line = line.strip()
        if line and not line.startswith("#"):
            listed.add(line)

marker = re.compile(r'\b(?:N_|C_|NC_|_|g_dngettext|ngettext)\s*\(|translatable="yes"|<_?(?:summary|description)>')
found = set()
for root in ("src", "data"):
    for dirpath, _, files in os.walk(os.path.join(top, root)):
        for name in files:
            if not name.endswith((".c", ".ui", ".in", ".gschema.xml")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, top)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if name.endswith(".in") and (name.endswith(".desktop.in") or name.endswith(".metainfo.xml.in")):
                found.add(rel)
            elif marker.search(text):
                found.add(rel)

missing = sorted(found - listed)
stale = sorted(p for p in listed if not os.path.exists(os.path.join(top, p)))
for p in missing:
    print(f"not in po/POTFILES.in but has translatable strings: {p}")
for p in stale:
    print(f"in po/POTFILES.in but does not exist: {p}")
print(f"{len(found)} files with translatable strings, {len(listed)} listed")
sys.exit(1 if missing or stale else 0)
