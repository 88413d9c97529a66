#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""TAP tests for chaperone-mcp, the stdio relay (docs/relay.md).

    python3 tests/relay/test-relay.py build/src/relay/chaperone-mcp

Each test runs the relay against a Unix-socket server made here, in a private 0700 folder that
CHAPERONE_AGENT_SOCKET points into. DBUS_SESSION_BUS_ADDRESS points nowhere unless a test starts
its own dbus-daemon, so no test can ever start a real Chaperone.
"""

import json
import os
import select
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NO_BUS = "unix:path=/nonexistent"
NOT_STARTED = "Chaperone is not running and could not be started: "
INITIALIZE = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
              b'"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}\n')


class Skip(Exception):
    pass


class Server(threading.Thread):
    """The app's side of the socket: one connection, recorded and echoed.

    greeting is sent as soon as the relay connects (the app may speak first); in "echo" mode
    the server echoes until EOF, then sends `final` and closes; in "leave" mode it echoes the
    first line and closes while the client is still talking (the app quit)."""

    def __init__(self, path, mode="echo", greeting=b"", final=b""):
        super().__init__(daemon=True)
        self.mode = mode
        self.greeting = greeting
        self.final = final
        self.received = bytearray()
        self.saw_eof = False
        self.connected = False
        self.error = None
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        os.chmod(path, 0o600)
        self.listener.listen(4)
        self.listener.settimeout(10)

    def run(self):
        try:
            conn, _ = self.listener.accept()
        except OSError as e:
            self.error = e
            return
        self.connected = True
        with conn:
            conn.sendall(self.greeting)
            while True:
                data = conn.recv(65536)
                if not data:
                    self.saw_eof = True
                    break
                self.received += data
                conn.sendall(data)
                if self.mode == "leave" and b"\n" in self.received:
                    return
            conn.sendall(self.final)

    def finish(self):
        self.join(10)
        self.listener.close()
        if self.is_alive():
            raise AssertionError("the server thread did not finish")

    def had_connection(self):
        """Whether anyone connected, for servers never started as a thread."""
        self.listener.setblocking(False)
        try:
            self.listener.accept()[0].close()
            return True
        except BlockingIOError:
            return False


class Tmp:
    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="chaperone-relay-")  # 0700, ours
        self.sock = os.path.join(self.dir, "agent.sock")
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.dir, ignore_errors=True)


def relay_env(sock, bus=NO_BUS, **extra):
    env = dict(os.environ)
    env["CHAPERONE_AGENT_SOCKET"] = sock
    env["DBUS_SESSION_BUS_ADDRESS"] = bus
    env.pop("CHAPERONE_MCP_START_TIMEOUT_MS", None)
    env.update(extra)
    return env


def spawn(env):
    return subprocess.Popen([RELAY], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)


def run(env, data, timeout=15):
    """Feeds data, closes stdin, and returns (status, stdout, stderr, seconds)."""
    start = time.monotonic()
    proc = spawn(env)
    try:
        out, err = proc.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError(f"the relay did not exit within {timeout} s")
    return proc.returncode, out, err.decode(errors="replace"), time.monotonic() - start


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def expect_one_line(err, prefix):
    lines = err.splitlines()
    expect(len(lines) == 1 and lines[0].startswith("chaperone-mcp: " + prefix),
           f"stderr should be one line starting {prefix!r}, got {err!r}")


def expect_error_reply(out, request_id, prefix):
    lines = out.splitlines()
    expect(len(lines) == 1 and out.endswith(b"\n"),
           f"stdout should be exactly one JSON-RPC line, got {out[:300]!r}")
    reply = json.loads(lines[0])
    expect(reply.get("jsonrpc") == "2.0" and reply.get("id") == request_id and
           "result" not in reply, f"not an error reply to id {request_id!r}: {reply}")
    expect(reply["error"]["code"] == -32000, f"wrong error code: {reply}")
    expect(reply["error"]["message"].startswith(prefix), f"wrong error message: {reply}")
    return reply


# ---------------------------------------------------------------------------------------------

def test_version_and_help():
    out = subprocess.run([RELAY, "--version"], capture_output=True, check=True).stdout
    expect(out.startswith(b"chaperone-mcp ") and out.count(b"\n") == 1, f"--version: {out!r}")
    out = subprocess.run([RELAY, "--help"], capture_output=True, check=True).stdout
    expect(b"CHAPERONE_AGENT_SOCKET" in out, "--help does not name CHAPERONE_AGENT_SOCKET")
    status = subprocess.run([RELAY, "--no-such-option"], capture_output=True).returncode
    expect(status == 2, f"a bad option should exit 2, got {status}")


def test_relays_bytes_exactly():
    greeting = '{"jsonrpc":"2.0","method":"notifications/message","params":{"x":"ü"}}\n'.encode()
    big = ('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"s":"'
           + "é日本🙂x" * 180000 + '"}}\n').encode()
    expect(len(big) > 2 * 1024 * 1024, "the big line is not over 2 MiB")
    # Not even JSON: the relay must not care (invalid UTF-8, CR, NUL, no trailing newline).
    data = INITIALIZE + big + "{\"s\":\"Grüße, 世界\"}\n".encode() + b"\xff\xfe\r\n\x00tail"
    with Tmp() as tmp:
        server = Server(tmp.sock, greeting=greeting)
        server.start()
        status, out, err, _ = run(relay_env(tmp.sock), data)
        server.finish()
    expect(bytes(server.received) == data, "the server did not receive the client's bytes exactly")
    expect(out == greeting + data, f"stdout differs: {len(out)} bytes, expected "
                                   f"{len(greeting) + len(data)}")
    expect(status == 0 and err == "", f"status {status}, stderr {err!r}")


def test_many_small_lines_in_order():
    data = b"".join(b'{"jsonrpc":"2.0","method":"n","params":{"i":%d}}\n' % i
                    for i in range(20000))
    with Tmp() as tmp:
        server = Server(tmp.sock)
        server.start()
        status, out, err, _ = run(relay_env(tmp.sock), data)
        server.finish()
    expect(bytes(server.received) == data, "the server got the lines changed or out of order")
    expect(out == data, "the client got the lines changed or out of order")
    expect(status == 0, f"status {status}, stderr {err!r}")


def test_round_trips_are_lock_step():
    # One line out, its echo back, 200 times: a relay that waited for more input (or a full
    # buffer) before forwarding never sends the echo, and the round trip fails at its deadline.
    # How fast it is is bench/'s to measure; the figure is printed.
    with Tmp() as tmp:
        server = Server(tmp.sock)
        server.start()
        proc = spawn(relay_env(tmp.sock))
        try:
            start = time.monotonic()
            for i in range(200):
                line = b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i
                proc.stdin.write(line)
                proc.stdin.flush()
                ready, _, _ = select.select([proc.stdout], [], [], 10)
                expect(ready, f"round trip {i}: no echo within 10 s (the relay held the line back)")
                got = proc.stdout.readline()
                expect(got == line, f"round trip {i} returned {got!r}")
            elapsed = time.monotonic() - start
            proc.stdin.close()
            status = proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        server.finish()
    print(f"# 200 round trips in {elapsed * 1000:.0f} ms")
    expect(status == 0, f"status {status}")


def test_stdin_eof_reaches_app_and_its_last_words_reach_client():
    final = b'{"jsonrpc":"2.0","method":"notifications/bye"}\n'
    with Tmp() as tmp:
        server = Server(tmp.sock, final=final)
        server.start()
        status, out, err, _ = run(relay_env(tmp.sock), INITIALIZE)
        server.finish()
    expect(server.saw_eof, "the server never saw EOF after the client closed stdin")
    expect(out == INITIALIZE + final, f"stdout: {out!r}")
    expect(status == 0 and err == "", f"status {status}, stderr {err!r}")


def test_app_leaving_ends_relay():
    with Tmp() as tmp:
        server = Server(tmp.sock, mode="leave")
        server.start()
        proc = spawn(relay_env(tmp.sock))
        try:
            proc.stdin.write(INITIALIZE)
            proc.stdin.flush()
            # stdin stays open: the client is still there when the app goes.
            status = proc.wait(10)
            out = proc.stdout.read()
            err = proc.stderr.read().decode()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdin.close()
            proc.stdout.close()
            proc.stderr.close()
        server.finish()
    expect(out == INITIALIZE, f"what the app said before leaving was lost: {out!r}")
    expect(status == 1, f"status {status}, expected 1")
    expect_one_line(err, "Chaperone closed the connection")


def test_shared_folder_refused():
    with Tmp() as tmp:
        server = Server(tmp.sock)
        os.chmod(tmp.dir, 0o755)
        status, out, err, _ = run(relay_env(tmp.sock), INITIALIZE)
        connected = server.had_connection()
        server.listener.close()
    expect(not connected, "the relay connected through a folder others can read")
    expect(status == 1, f"status {status}")
    expect_one_line(err, "refusing to use " + tmp.dir)
    expect_error_reply(out, 1, "refusing to use")


def test_foreign_socket_refused():
    if os.getuid() != 0:
        raise Skip("needs root to give the socket to another user")
    with Tmp() as tmp:
        server = Server(tmp.sock)
        os.chown(tmp.sock, 65534, 65534)
        status, out, err, _ = run(relay_env(tmp.sock), INITIALIZE)
        connected = server.had_connection()
        server.listener.close()
    expect(not connected, "the relay connected to a socket another user owns")
    expect(status == 1, f"status {status}")
    expect_one_line(err, "refusing to use " + tmp.sock)


def test_no_app_no_bus_answers_initialize():
    with Tmp() as tmp:
        status, out, err, elapsed = run(relay_env(tmp.sock), INITIALIZE)
    expect(status == 1, f"status {status}")
    expect_one_line(err, NOT_STARTED)
    reply = expect_error_reply(out, 1, NOT_STARTED)
    expect(reply["error"]["message"] == err.strip()[len("chaperone-mcp: "):],
           "the client and stderr were told different things")
    print(f"# gave up after {elapsed:.1f} s")


def test_stale_socket_no_bus_answers_string_id():
    with Tmp() as tmp:
        # A socket left behind by an app that crashed: connecting is refused.
        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stale.bind(tmp.sock)
        stale.close()
        request = '{"jsonrpc":"2.0","id":"req-é-7","method":"initialize","params":{}}\n'
        status, out, err, elapsed = run(relay_env(tmp.sock), request.encode())
    expect(status == 1, f"status {status}")
    expect_one_line(err, NOT_STARTED)
    expect_error_reply(out, "req-é-7", NOT_STARTED)
    print(f"# gave up after {elapsed:.1f} s")


def test_no_app_notification_gets_no_answer():
    with Tmp() as tmp:
        note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        status, out, err, elapsed = run(relay_env(tmp.sock), note)
        status2, out2, err2, elapsed2 = run(relay_env(tmp.sock), b"[[[[[[[[" * 100000 + b"\n")
    expect(status == 1 and out == b"", f"a notification was answered: {out!r}")
    expect(status2 == 1 and out2 == b"", f"deep garbage: status {status2}, stdout {out2!r}")
    expect_one_line(err, NOT_STARTED)
    print(f"# gave up after {elapsed:.1f} s and {elapsed2:.1f} s")


# --- D-Bus activation, on a private bus ------------------------------------------------------

class Bus:
    """A private session bus whose only service is the fake app (or nothing)."""

    def __init__(self, tmpdir, env, with_service=True):
        self.dir = os.path.join(tmpdir, "bus")
        services = os.path.join(self.dir, "services")
        os.makedirs(services)
        self.marker = os.path.join(self.dir, "fake-app.marker")
        if with_service:
            exec_line = " ".join(shlex.quote(a) for a in
                                 [sys.executable, os.path.join(HERE, "fake-app.py"),
                                  "--gapplication-service"])
            with open(os.path.join(services, "io.github.chaperone.Chaperone.service"), "w") as f:
                f.write("[D-BUS Service]\nName=io.github.chaperone.Chaperone\n"
                        f"Exec={exec_line}\n")
        config = os.path.join(self.dir, "session.conf")
        with open(config, "w") as f:
            f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={self.dir}/socket</listen>
  <auth>EXTERNAL</auth>
  <servicedir>{services}</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
""")
        # Activated services inherit this environment: the fake app learns its socket here.
        env = dict(env, FAKE_APP_MARKER=self.marker)
        self.proc = subprocess.Popen(["dbus-daemon", f"--config-file={config}", "--nofork",
                                      "--print-address"], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.address = self.proc.stdout.readline().decode().strip()
        if not self.address:
            self.stop()
            raise AssertionError("dbus-daemon printed no address")

    def fake_app_argv(self):
        try:
            with open(self.marker) as f:
                return f.read().split("\n")
        except FileNotFoundError:
            return None

    def stop(self):
        self.proc.terminate()
        self.proc.wait(5)
        self.proc.stdout.close()
        argv = self.fake_app_argv()
        if argv:
            try:
                os.kill(int(argv[0]), 15)
            except ProcessLookupError:
                pass


def need_dbus_daemon():
    if shutil.which("dbus-daemon") is None:
        raise Skip("dbus-daemon is not installed")


def test_activation_starts_app():
    need_dbus_daemon()
    with Tmp() as tmp:
        # Not even the folder exists yet: the app makes it, as on a first start.
        sock = os.path.join(tmp.dir, "chaperone", "agent.sock")
        bus = Bus(tmp.dir, relay_env(sock))
        try:
            data = INITIALIZE + b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
            status, out, err, elapsed = run(relay_env(sock, bus.address), data)
            argv = bus.fake_app_argv()
        finally:
            bus.stop()
    print(f"# started and relayed in {elapsed * 1000:.0f} ms")
    expect(argv is not None and "--gapplication-service" in argv,
           f"the fake app was not started by D-Bus activation (argv {argv})")
    expect(out == data, f"stdout after activation: {out!r}")
    expect(status == 0 and err == "", f"status {status}, stderr {err!r}")


def test_activation_unknown_service():
    need_dbus_daemon()
    with Tmp() as tmp:
        bus = Bus(tmp.dir, relay_env(tmp.sock), with_service=False)
        try:
            status, out, err, elapsed = run(relay_env(tmp.sock, bus.address), INITIALIZE)
        finally:
            bus.stop()
    expect(status == 1, f"status {status}")
    expect_one_line(err, NOT_STARTED + "D-Bus could not start io.github.chaperone.Chaperone")
    expect_error_reply(out, 1, NOT_STARTED)
    print(f"# gave up after {elapsed:.1f} s")


def test_activation_timeout():
    need_dbus_daemon()
    with Tmp() as tmp:
        bus = Bus(tmp.dir, relay_env(tmp.sock, FAKE_APP_MODE="no-socket"))
        try:
            env = relay_env(tmp.sock, bus.address, CHAPERONE_MCP_START_TIMEOUT_MS="1000")
            status, out, err, elapsed = run(env, INITIALIZE)
            # The app now owns its name; a second relay finds it running but not listening.
            status2, out2, err2, elapsed2 = run(env, INITIALIZE)
        finally:
            bus.stop()
    expect(status == 1, f"status {status}")
    expect_one_line(err, NOT_STARTED + "it was started but did not open its agent socket")
    expect_error_reply(out, 1, NOT_STARTED)
    expect(elapsed > 0.9, f"gave up after {elapsed:.1f} s, before its 1 s start timeout")
    expect(status2 == 1, f"second status {status2}")
    expect_one_line(err2, "Chaperone is running but its agent socket")
    expect(elapsed2 > 0.9, f"the second gave up after {elapsed2:.1f} s, before its 1 s start timeout")


TESTS = [
    ("--version, --help and a bad option", test_version_and_help),
    ("relays both ways byte-exact: 2 MiB line, UTF-8, non-JSON bytes", test_relays_bytes_exactly),
    ("20000 small lines arrive complete and in order", test_many_small_lines_in_order),
    ("200 request/response round trips in lock step, each line forwarded on its own", test_round_trips_are_lock_step),
    ("stdin EOF reaches the app; its last words reach the client; exit 0",
     test_stdin_eof_reaches_app_and_its_last_words_reach_client),
    ("the app closing mid-session ends the relay with status 1", test_app_leaving_ends_relay),
    ("a folder with mode 0755 is refused without connecting", test_shared_folder_refused),
    ("a socket owned by another user is refused", test_foreign_socket_refused),
    ("no socket, no session bus: one stderr line and an error for initialize",
     test_no_app_no_bus_answers_initialize),
    ("stale socket, no session bus: the error carries the request's string id",
     test_stale_socket_no_bus_answers_string_id),
    ("giving up answers neither a notification nor deeply nested garbage",
     test_no_app_notification_gets_no_answer),
    ("D-Bus activation starts the app and the relay connects", test_activation_starts_app),
    ("D-Bus activation of an unknown service: one clear error, and the relay ends", test_activation_unknown_service),
    ("an app that never listens times out (started / already running)", test_activation_timeout),
]


def main():
    global RELAY
    if len(sys.argv) != 2:
        sys.exit("usage: test-relay.py PATH-TO-chaperone-mcp")
    RELAY = os.path.abspath(sys.argv[1])

    failed = 0
    print(f"1..{len(TESTS)}", flush=True)
    for number, (name, test) in enumerate(TESTS, 1):
        try:
            test()
        except Skip as e:
            print(f"ok {number} - {name} # SKIP {e}", flush=True)
        except Exception as e:  # noqa: BLE001 - any failure is reported, not raised
            failed += 1
            print(f"not ok {number} - {name}", flush=True)
            for line in f"{type(e).__name__}: {e}".splitlines():
                print(f"# {line}", flush=True)
        else:
            print(f"ok {number} - {name}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
