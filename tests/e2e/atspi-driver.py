#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Drives Chaperone's windows the way a person (or a screen reader) does: through the
accessibility tree. Approvals are widget actions that nothing on D-Bus can reach except this
tree, which is exactly what a person's own assistive technology uses.

  atspi-driver.py labels                 print every label of the app's windows, one per line
  atspi-driver.py buttons                print every button's accessible name
  atspi-driver.py wait-label TEXT        wait until a label contains TEXT; print it
  atspi-driver.py press NAME             press the button whose accessible name is NAME
  atspi-driver.py absent NAME            wait until no showing button is named NAME

Exit status 0 on success, 1 on timeout; every wait is bounded (--timeout, seconds)."""
import argparse
import sys
import time

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402

APP_NAMES = ("chaperone", "Chaperone", "io.github.chaperone.Chaperone")


def apps():
    desktop = Atspi.get_desktop(0)
    for i in range(desktop.get_child_count()):
        app = desktop.get_child_at_index(i)
        if app is not None and app.get_name() in APP_NAMES:
            yield app


def windows():
    """The app's windows that are on screen. GTK 4.8 reports SHOWING on plain windows only
    (not on dialogs, nor on anything inside a window), so that is where it is checked."""
    for app in apps():
        for i in range(app.get_child_count()):
            window = app.get_child_at_index(i)
            if window is None:
                continue
            if showing(window) or window.get_role() in (Atspi.Role.DIALOG, Atspi.Role.ALERT):
                yield window


def walk(node, depth=0):
    if node is None or depth > 60:
        return
    yield node
    try:
        n = node.get_child_count()
    except Exception:
        return
    for i in range(n):
        try:
            child = node.get_child_at_index(i)
        except Exception:
            continue
        yield from walk(child, depth + 1)


def showing(node):
    try:
        return node.get_state_set().contains(Atspi.StateType.SHOWING)
    except Exception:
        return False


def label_texts():
    for window in windows():
        for node in walk(window):
            try:
                role = node.get_role()
            except Exception:
                continue
            if role == Atspi.Role.LABEL:
                name = node.get_name() or ""
                if not name:
                    try:
                        text = node.get_text_iface()
                        if text is not None:
                            name = text.get_text(0, text.get_character_count())
                    except Exception:
                        pass
                if name:
                    yield name


def buttons(name):
    for window in windows():
        for node in walk(window):
            try:
                if (node.get_role() in (Atspi.Role.PUSH_BUTTON, Atspi.Role.TOGGLE_BUTTON)
                        and node.get_name() == name):
                    yield node
            except Exception:
                continue


def until(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        time.sleep(0.1)
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["labels", "buttons", "wait-label", "press", "absent"])
    parser.add_argument("text", nargs="?")
    parser.add_argument("--timeout", type=float, default=15.0)
    args = parser.parse_args()

    if args.command == "labels":
        for text in label_texts():
            print(text)
        return 0

    if args.command == "buttons":
        for window in windows():
            for node in walk(window):
                try:
                    if node.get_role() in (Atspi.Role.PUSH_BUTTON, Atspi.Role.TOGGLE_BUTTON):
                        print(node.get_name())
                except Exception:
                    continue
        return 0

    if args.command == "wait-label":
        found = until(lambda: next((t for t in label_texts() if args.text in t), None),
                      args.timeout)
        if found is None:
            print(f"no label contains {args.text!r}", file=sys.stderr)
            return 1
        print(found)
        return 0

    if args.command == "press":
        button = until(lambda: next(buttons(args.text), None), args.timeout)
        if button is None:
            print(f"no showing button named {args.text!r}", file=sys.stderr)
            return 1
        action = button.get_action_iface()
        if action is None or not action.do_action(0):
            print(f"{args.text!r} did not take the action", file=sys.stderr)
            return 1
        return 0

    if args.command == "absent":
        gone = until(lambda: next(buttons(args.text), None) is None, args.timeout)
        return 0 if gone else 1

    return 2


if __name__ == "__main__":
    sys.exit(main())
