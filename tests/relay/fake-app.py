#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A stand-in for Chaperone that test-relay.py lets a private dbus-daemon activate.

Like the real app it first owns its bus name, then listens on the agent socket
($CHAPERONE_AGENT_SOCKET, folder created 0700). It echoes one connection's bytes back and exits
when that connection ends. Standard library only, so it speaks just enough D-Bus itself:
EXTERNAL auth, Hello, RequestName.

FAKE_APP_MODE=no-socket owns the name but never listens (the relay must time out).
FAKE_APP_MARKER=<file> records the pid and argv there, to show how the app was started.
"""

import os
import signal
import socket
import struct
import sys

APP_ID = "io.github.chaperone.Chaperone"


def _pad(buf, align):
    buf.extend(b"\0" * (-len(buf) % align))


def _string(buf, value):
    data = value.encode()
    _pad(buf, 4)
    buf.extend(struct.pack("<I", len(data)) + data + b"\0")


def method_call(serial, member, signature="", body=b""):
    """A little-endian method call to the bus itself."""
    buf = bytearray(b"l\x01\x00\x01")
    buf.extend(struct.pack("<III", len(body), serial, 0))
    fields = [(1, "o", "/org/freedesktop/DBus"), (2, "s", "org.freedesktop.DBus"),
              (3, "s", member), (6, "s", "org.freedesktop.DBus")]
    if signature:
        fields.append((8, "g", signature))
    for code, kind, value in fields:
        _pad(buf, 8)
        buf.extend(bytes([code, 1]) + kind.encode() + b"\0")
        if kind == "g":
            buf.extend(bytes([len(value)]) + value.encode() + b"\0")
        else:
            _string(buf, value)
    struct.pack_into("<I", buf, 12, len(buf) - 16)
    _pad(buf, 8)
    return bytes(buf) + body


def own_bus_name():
    address = os.environ.get("DBUS_STARTER_ADDRESS") or os.environ["DBUS_SESSION_BUS_ADDRESS"]
    path = None
    for part in address.split(";")[0].split(":", 1)[1].split(","):
        key, _, value = part.partition("=")
        if key == "path":
            path = value
    if path is None:
        sys.exit(f"fake-app: cannot use bus address {address}")

    bus = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    bus.connect(path)
    bus.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
    answer = b""
    while not answer.endswith(b"\r\n"):
        answer += bus.recv(256)
    if not answer.startswith(b"OK"):
        sys.exit(f"fake-app: bus refused authentication: {answer!r}")
    bus.sendall(b"BEGIN\r\n")

    body = bytearray()
    _string(body, APP_ID)
    _pad(body, 4)
    body.extend(struct.pack("<I", 4))  # DBUS_NAME_FLAG_DO_NOT_QUEUE
    bus.sendall(method_call(1, "Hello") + method_call(2, "RequestName", "su", bytes(body)))
    # The replies are not read: the bus answers StartServiceByName once the name is owned,
    # and the connection stays open (so the name stays ours) until this process exits.
    return bus


def main():
    # Never outlive a test run, whatever happens to the relay.
    signal.alarm(30)

    marker = os.environ.get("FAKE_APP_MARKER")
    if marker:
        with open(marker, "w") as f:
            f.write("\n".join([str(os.getpid())] + sys.argv))

    bus = own_bus_name()

    if os.environ.get("FAKE_APP_MODE") == "no-socket":
        # Stay (owning the name) until the test stops the bus.
        while bus.recv(4096):
            pass
        return

    path = os.environ["CHAPERONE_AGENT_SOCKET"]
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    # Listen under a temporary name and rename: the socket appears ready, as the real app's does.
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path + ".tmp")
    os.chmod(path + ".tmp", 0o600)
    server.listen(1)
    os.rename(path + ".tmp", path)

    conn, _ = server.accept()
    while True:
        data = conn.recv(65536)
        if not data:
            break
        conn.sendall(data)
    conn.close()
    server.close()
    os.unlink(path)
    bus.close()


if __name__ == "__main__":
    main()
