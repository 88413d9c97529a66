#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Drives Chaperone's windows the way a person (or a screen reader) does: through the
accessibility tree. Approvals are widget actions that nothing on D-Bus can reach except this
tree, which is exactly what a person's own assistive technology uses.

  atspi-driver.py labels                 print every label of the app's windows, one per line
  atspi-driver.py buttons                print every button's accessible name
  atspi-driver.py windows                print the title of each showing window
  atspi-driver.py wait-window TITLE      wait until a showing window is titled TITLE
  atspi-driver.py no-window [TITLE]      wait until no showing window is titled TITLE (or none at all)
  atspi-driver.py wait-label TEXT        wait until a label contains TEXT; print it
  atspi-driver.py no-label TEXT          wait until no label is TEXT
  atspi-driver.py press NAME             press the button whose accessible name is NAME
  atspi-driver.py press-match REGEX      press the first button whose name matches REGEX; print it
  atspi-driver.py press-all NAME         press every button named NAME, one after another, until
                                         none is left; print how many were pressed
  atspi-driver.py page NAME              show the window's page NAME (its page tab in the switcher)
  atspi-driver.py absent NAME            wait until no showing button is named NAME
  atspi-driver.py nodes REGEX            wait until some node's accessible name matches REGEX (any
                                         role but a label's); print "ROLE<tab>NAME<tab>ACTIONS" for
                                         each, ACTIONS its action names joined by ','
  atspi-driver.py activate REGEX         do the first action of the first node (any role) whose
                                         accessible name matches REGEX and that has one, as a
                                         screen reader's "activate" does; print its role and name

--pid PID narrows every command to that process's windows (else: the app by its name).

GTK 4.8 sends no AT-SPI event we can wait on for these, so every wait looks again through
until(), the one polling helper here. Exit status 0 on success, 1 on timeout (saying what was
awaited); every wait is bounded (--timeout, seconds)."""
import argparse
import re
import sys
import time

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402

APP_NAMES = ("chaperone", "Chaperone", "io.github.chaperone.Chaperone")
# Set by --pid: only that process's windows (an app that just quit can still be listed for a
# moment, and another instance must never be taken for ours).
ONLY_PID = None
STEP_S = 0.05


def apps():
    desktop = Atspi.get_desktop(0)
    for i in range(desktop.get_child_count()):
        try:
            app = desktop.get_child_at_index(i)
            if app is None:
                continue
            if ONLY_PID is not None:
                if app.get_process_id() == ONLY_PID:
                    yield app
            elif app.get_name() in APP_NAMES:
                yield app
        except Exception:
            continue


def windows():
    """The app's windows that are on screen. GTK 4.8 reports SHOWING on plain windows only
    (not on dialogs, nor on anything inside a window), so that is where it is checked."""
    for app in apps():
        try:
            n = app.get_child_count()
        except Exception:
            continue
        for i in range(n):
            try:
                window = app.get_child_at_index(i)
                if window is None:
                    continue
                if showing(window) or window.get_role() in (Atspi.Role.DIALOG, Atspi.Role.ALERT):
                    yield window
            except Exception:
                continue


# A list longer than this is a log (the Activity page's rows: GTK 4.8 keeps about 200 of them
# realized, visible or not), never where a control a test presses lives; walking it over D-Bus
# took 20 s with 100,000 activity rows. Labels are still looked for inside.
LONG_LIST = 100
LIST_ROLES = (Atspi.Role.LIST, Atspi.Role.TABLE, Atspi.Role.TREE_TABLE, Atspi.Role.LIST_BOX)


def walk(node, depth=0, controls=False):
    if node is None or depth > 60:
        return
    yield node
    try:
        n = node.get_child_count()
        if controls and n > LONG_LIST and node.get_role() in LIST_ROLES:
            return
    except Exception:
        return
    for i in range(n):
        try:
            child = node.get_child_at_index(i)
        except Exception:
            continue
        yield from walk(child, depth + 1, controls)


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
        for node in walk(window, controls=True):
            try:
                if (node.get_role() in (Atspi.Role.PUSH_BUTTON, Atspi.Role.TOGGLE_BUTTON)
                        and node.get_name() == name):
                    yield node
            except Exception:
                continue


def button_names():
    for window in windows():
        for node in walk(window, controls=True):
            try:
                if node.get_role() in (Atspi.Role.PUSH_BUTTON, Atspi.Role.TOGGLE_BUTTON):
                    yield node.get_name()
            except Exception:
                continue


def page_tabs(name):
    for window in windows():
        for node in walk(window, controls=True):
            try:
                if node.get_role() == Atspi.Role.PAGE_TAB and node.get_name() == name:
                    yield node
            except Exception:
                continue


def named_nodes(pattern):
    """Every node of the app's windows but labels (their text is what label_texts() reads) whose
    accessible name matches `pattern`."""
    for window in windows():
        for node in walk(window, controls=True):
            try:
                role = node.get_role()
                name = node.get_name() or ""
            except Exception:
                continue
            if role != Atspi.Role.LABEL and pattern.search(name):
                yield node


def action_names(node):
    """The node's action names, asked one by one until there is none: GTK 4.8 leaks the list it
    makes to count a widget's actions (NActions), and the app is checked for leaks as it ends."""
    names = []
    try:
        action = node.get_action_iface()
        if action is None:
            return names
        for i in range(16):
            name = action.get_action_name(i)
            if not name:
                break
            names.append(name)
    except Exception:
        pass
    return names


def describe(node):
    try:
        return f"{node.get_role_name()}\t{node.get_name()}\t{','.join(action_names(node))}"
    except Exception:
        return None


def do_action(node):
    try:
        action = node.get_action_iface()
        return action is not None and action.do_action(0)
    except Exception:
        return False


class Timeout(Exception):
    pass


def until(predicate, timeout, what):
    """The one place that waits here: predicate() again and again until it gives something
    truthy (returned), or Timeout naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    looks = 0
    while True:
        result = predicate()
        looks += 1
        if result:
            return result
        if time.monotonic() >= deadline:
            raise Timeout(f"timed out after {timeout:g} s ({looks} looks) waiting for {what}")
        time.sleep(STEP_S)


def main():
    global ONLY_PID
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["labels", "buttons", "windows", "wait-window", "no-window",
                                            "wait-label", "press", "press-match", "press-all", "page",
                                            "absent", "nodes", "activate", "no-label"])
    parser.add_argument("text", nargs="?")
    parser.add_argument("--timeout", type=float, default=15.0)
    parser.add_argument("--pid", type=int, default=None)
    args = parser.parse_args()
    ONLY_PID = args.pid
    try:
        return run(args)
    except Timeout as err:
        print(err, file=sys.stderr)
        return 1


def run(args):
    if args.command == "labels":
        for text in label_texts():
            print(text)
        return 0

    if args.command == "buttons":
        for name in button_names():
            print(name)
        return 0

    if args.command == "windows":
        for window in windows():
            try:
                print(window.get_name() or "(untitled)")
            except Exception:
                continue
        return 0

    if args.command in ("wait-window", "no-window"):
        def titles():
            out = []
            for window in windows():
                try:
                    out.append(window.get_name() or "(untitled)")
                except Exception:
                    continue
            return out

        if args.command == "wait-window":
            until(lambda: args.text in titles(), args.timeout, f"a showing window titled {args.text!r}")
        elif args.text:
            until(lambda: args.text not in titles(), args.timeout, f"no showing window titled {args.text!r}")
        else:
            until(lambda: not titles(), args.timeout, "no showing window")
        return 0

    if args.command == "wait-label":
        found = until(lambda: next((t for t in label_texts() if args.text in t), None),
                      args.timeout, f"a label containing {args.text!r}")
        print(found)
        return 0

    if args.command == "no-label":
        until(lambda: args.text not in set(label_texts()), args.timeout,
              f"no label reading {args.text!r}")
        return 0

    if args.command == "press":
        # Found and pressed in one look: a button found in one walk can be gone by the next.
        until(lambda: any(do_action(b) for b in buttons(args.text)), args.timeout,
              f"a showing button named {args.text!r} that takes the press")
        return 0

    if args.command == "press-match":
        pattern = re.compile(args.text)

        def press_first():
            for window in windows():
                for node in walk(window):
                    try:
                        if (node.get_role() in (Atspi.Role.PUSH_BUTTON, Atspi.Role.TOGGLE_BUTTON)
                                and pattern.search(node.get_name() or "") and do_action(node)):
                            return node.get_name()
                    except Exception:
                        continue
            return None

        print(until(press_first, args.timeout, f"a showing button matching /{args.text}/"))
        return 0

    if args.command == "press-all":
        pressed = 0
        while True:
            count = sum(1 for _ in buttons(args.text))
            if count == 0:
                break
            until(lambda: any(do_action(b) for b in buttons(args.text)), args.timeout,
                  f"a showing button named {args.text!r} that takes the press")
            pressed += 1
            until(lambda: sum(1 for _ in buttons(args.text)) < count, args.timeout,
                  f"one button named {args.text!r} fewer than {count} after a press")
        print(pressed)
        return 0

    if args.command == "page":
        until(lambda: any(do_action(t) for t in page_tabs(args.text)), args.timeout,
              f"a page tab named {args.text!r} that takes the press")
        return 0

    if args.command == "nodes":
        pattern = re.compile(args.text)
        found = until(lambda: [d for d in map(describe, named_nodes(pattern)) if d],
                      args.timeout, f"a node named like /{args.text}/")
        for line in found:
            print(line)
        return 0

    if args.command == "activate":
        pattern = re.compile(args.text)

        def activate_first():
            for node in named_nodes(pattern):
                if action_names(node) and do_action(node):
                    return describe(node)
            return None

        print(until(activate_first, args.timeout,
                    f"a node named like /{args.text}/ that takes its action"))
        return 0

    if args.command == "absent":
        until(lambda: next(buttons(args.text), None) is None, args.timeout,
              f"no showing button named {args.text!r}")
        return 0

    return 2


if __name__ == "__main__":
    sys.exit(main())
