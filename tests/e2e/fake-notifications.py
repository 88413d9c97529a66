#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A stand-in for the desktop's notification server (org.freedesktop.Notifications), for the
end-to-end tests: it owns the name on the test's private session bus, prints every Notify (once
its reply is sent) and CloseNotification as one JSON line on stdout, and on a line "invoke ID ACTION" on stdin emits
ActionInvoked as a person's click on the notification would.

  fake-notifications.py     prints {"ready": true} once it owns the name"""
import json
import sys

from gi.repository import Gio, GLib

XML = """
<node>
  <interface name="org.freedesktop.Notifications">
    <method name="Notify">
      <arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
      <arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
      <arg type="a{sv}" direction="in"/><arg type="i" direction="in"/>
      <arg type="u" direction="out"/>
    </method>
    <method name="CloseNotification"><arg type="u" direction="in"/></method>
    <method name="GetCapabilities"><arg type="as" direction="out"/></method>
    <method name="GetServerInformation">
      <arg type="s" direction="out"/><arg type="s" direction="out"/>
      <arg type="s" direction="out"/><arg type="s" direction="out"/>
    </method>
    <signal name="ActionInvoked"><arg type="u"/><arg type="s"/></signal>
    <signal name="NotificationClosed"><arg type="u"/><arg type="u"/></signal>
  </interface>
</node>
"""
PATH = "/org/freedesktop/Notifications"
IFACE = "org.freedesktop.Notifications"
state = {"next": 0, "connection": None}


def emit(record):
    print(json.dumps(record), flush=True)


def on_call(connection, sender, path, iface, method, params, invocation):
    if method == "Notify":
        app, replaces, icon, summary, body, actions, hints, timeout = params.unpack()
        if replaces:
            nid = replaces
        else:
            state["next"] += 1
            nid = state["next"]
        invocation.return_value(GLib.Variant("(u)", (nid,)))
        # Printed once the reply is on its way to the app, so a test that reads this line can
        # count on the app's having the id (the bus keeps the order of what follows).
        connection.flush_sync(None)
        emit({"method": "Notify", "id": nid, "app": app, "summary": summary, "body": body,
              "actions": actions, "replaces": replaces})
    elif method == "CloseNotification":
        (nid,) = params.unpack()
        emit({"method": "CloseNotification", "id": nid})
        invocation.return_value(None)
    elif method == "GetCapabilities":
        invocation.return_value(GLib.Variant("(as)", (["actions", "body"],)))
    elif method == "GetServerInformation":
        invocation.return_value(GLib.Variant("(ssss)", ("fake", "chaperone-tests", "1", "1.2")))


def on_stdin(channel, condition):
    line = sys.stdin.readline()
    if not line:
        loop.quit()
        return False
    words = line.split()
    if len(words) == 3 and words[0] == "invoke":
        state["connection"].emit_signal(None, PATH, IFACE, "ActionInvoked",
                                        GLib.Variant("(us)", (int(words[1]), words[2])))
        emit({"invoked": int(words[1]), "action": words[2]})
    return True


def on_bus(connection, name):
    state["connection"] = connection
    node = Gio.DBusNodeInfo.new_for_xml(XML)
    connection.register_object(PATH, node.interfaces[0], on_call, None, None)


def on_name(connection, name):
    emit({"ready": True})


loop = GLib.MainLoop()
Gio.bus_own_name(Gio.BusType.SESSION, IFACE, Gio.BusNameOwnerFlags.NONE, on_bus, on_name,
                 lambda *_: (print("could not own the name", file=sys.stderr), loop.quit()))
GLib.io_add_watch(GLib.IOChannel.unix_new(sys.stdin.fileno()), GLib.PRIORITY_DEFAULT,
                  GLib.IOCondition.IN | GLib.IOCondition.HUP, on_stdin)
loop.run()
