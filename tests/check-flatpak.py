#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks the Flatpak manifest against the build: the same app id and command as meson, a meson
module built from this checkout, and only the sandbox holes the app needs (each one is explained
in flatpak/README.md). A hole that would let the app out of its sandbox fails the test.

  check-flatpak.py MANIFEST SOURCE_ROOT APP_ID COMMAND"""
import json
import os
import re
import sys

# Every finish-arg the app may have, and why (the README says the same in more words).
ALLOWED = {
    "--share=ipc": "X11 shared memory for the window",
    "--socket=fallback-x11": "the window, where there is no Wayland",
    "--socket=wayland": "the window",
    "--device=dri": "GPU rendering of the window",
    "--share=network": "the bridge listens on 127.0.0.1 (no network means no loopback)",
    "--talk-name=org.kde.StatusNotifierWatcher": "the tray icon registers with the watcher",
    "--own-name=org.kde.StatusNotifierItem-*": "the tray icon's own bus name",
    "--filesystem=xdg-run/chaperone:create": "the agent socket, reached by chaperone-mcp outside",
}
# Holes that would undo the sandbox: never, whatever the reason.
FORBIDDEN = re.compile(r"^--(filesystem=(host|home|/)|talk-name=org\.freedesktop\.Flatpak|"
                       r"socket=session-bus|socket=system-bus|device=all)")


def fail(message):
    print(f"not ok - {message}")
    sys.exit(1)


def main():
    manifest_path, source_root, app_id, command = sys.argv[1:5]
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)

    if manifest.get("id") != app_id:
        fail(f"id is {manifest.get('id')!r}, meson says {app_id!r}")
    if manifest.get("command") != command:
        fail(f"command is {manifest.get('command')!r}, meson builds {command!r}")
    if manifest.get("runtime") != "org.gnome.Platform" or manifest.get("sdk") != "org.gnome.Sdk":
        fail("not the GNOME runtime and SDK")

    args = manifest.get("finish-args", [])
    for arg in args:
        if FORBIDDEN.match(arg):
            fail(f"finish-arg {arg} breaks the sandbox")
        if arg not in ALLOWED:
            fail(f"finish-arg {arg} is not one the app needs (add it to ALLOWED with a reason)")
    for needed in ("--socket=wayland", "--socket=fallback-x11", "--share=network"):
        if needed not in args:
            fail(f"finish-arg {needed} is missing: the app needs it")

    modules = manifest.get("modules", [])
    ours = [m for m in modules if isinstance(m, dict) and m.get("name") == "chaperone"]
    if len(ours) != 1:
        fail("exactly one module named chaperone")
    module = ours[0]
    if module.get("buildsystem") != "meson":
        fail("the chaperone module is not built with meson")
    dirs = [s for s in module.get("sources", []) if s.get("type") == "dir"]
    if len(dirs) != 1:
        fail("the chaperone module builds from one directory source")
    root = os.path.normpath(os.path.join(os.path.dirname(manifest_path), dirs[0]["path"]))
    if os.path.realpath(root) != os.path.realpath(source_root):
        fail(f"the module builds {root}, not this checkout {source_root}")
    with open(os.path.join(root, "meson.build"), encoding="utf-8") as f:
        # Comments (the licence line) may come before project().
        if not re.match(r"(\s*#[^\n]*\n)*\s*project\('chaperone'", f.read()):
            fail("the module's directory is not the chaperone meson project")
    for opt in module.get("config-opts", []):
        if not opt.startswith("-D"):
            fail(f"config-opt {opt} is not a meson option")

    print("1..1")
    print(f"ok 1 - {app_id} runs {command}, built by meson from this checkout, "
          f"{len(args)} finish-args each explained")


if __name__ == "__main__":
    main()
