#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""app-bench.py: the real app's start time and idle memory, with the window open and closed.

Usage: bench/app-bench.py APP [--runs N]

One Xvfb is started first and shared, so its own start is not counted. Each run starts the app
with private XDG folders and measures, from the moment the process is spawned to the line
"bridge: listening on 127.0.0.1:PORT" on its output, how long it takes before browsers can
connect; then its RSS after a second of idle:
  - "window open": a normal start, the main window mapped;
  - "window closed": `--background`, the start from the autostart file or the tray, where no
    window is built (the state the app is in after the person closes the window with "Run in
    background" on: closing destroys the window, it does not hide it).
Prints a table and one JSON line (prefix "json: ").
"""

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

LISTENING = "bridge: listening on 127.0.0.1:"


def start_xvfb():
    for display in range(140, 200):
        lock = f"/tmp/.X{display}-lock"
        if os.path.exists(lock):
            continue
        proc = subprocess.Popen(["Xvfb", f":{display}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(f"/tmp/.X11-unix/X{display}"):
                return proc, f":{display}"
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        proc.kill()
    raise RuntimeError("could not start Xvfb")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def one_run(app, display, schema_dir, background, renderer=None):
    home = tempfile.mkdtemp(prefix="chp-app-bench-")
    try:
        for sub in ("data", "run"):
            os.mkdir(os.path.join(home, sub), 0o700)
        env = dict(os.environ,
                   DISPLAY=display, GDK_BACKEND="x11", NO_AT_BRIDGE="1", GTK_A11Y="none",
                   GSETTINGS_BACKEND="memory", GSETTINGS_SCHEMA_DIR=schema_dir,
                   XDG_CONFIG_HOME=os.path.join(home, "config"),
                   XDG_CACHE_HOME=os.path.join(home, "cache"),
                   XDG_DATA_HOME=os.path.join(home, "share"),
                   XDG_RUNTIME_DIR=os.path.join(home, "run"))
        # A private session bus each time: a GApplication with the same id on a shared bus
        # would hand its command line to the first instance instead of starting.
        bus = subprocess.Popen(["dbus-daemon", "--session", "--print-address=1", "--nofork"],
                               stdout=subprocess.PIPE, text=True)
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.stdout.readline().strip()
        if renderer:
            env["GSK_RENDERER"] = renderer
        args = [app, "--bridge-port", "0", "--data-dir", os.path.join(home, "data")]
        if background:
            args.append("--background")
        t0 = time.monotonic()
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        start_ms = None
        log = []
        deadline = t0 + 30
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            log.append(line.rstrip())
            if LISTENING in line:
                start_ms = (time.monotonic() - t0) * 1000
                break
        if start_ms is None:
            proc.kill()
            bus.kill()
            raise RuntimeError("the app did not listen:\n" + "\n".join(log[-20:]))
        # Keep draining its output so a chatty app never blocks on a full pipe.
        drain = subprocess.Popen(["cat"], stdin=proc.stdout, stdout=subprocess.DEVNULL)
        time.sleep(1.0)
        rss = rss_kib(proc.pid)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
        drain.kill()
        bus.kill()
        bus.wait()
        return start_ms, rss
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    app = os.path.abspath(sys.argv[1])
    runs = 5
    if "--runs" in sys.argv:
        runs = int(sys.argv[sys.argv.index("--runs") + 1])
    if "--quick" in sys.argv:
        runs = 2
    with open(app, "rb") as f:
        if b"__asan_init" in f.read():
            print(f"app bench: skipped: {app} is built with a sanitizer")
            return 0
    for tool in ("Xvfb", "dbus-daemon"):
        if shutil.which(tool) is None:
            print(f"app bench: skipped: {tool} is not installed")
            return 0
    schema_dir = os.path.join(os.path.dirname(app), "..", "..", "data")

    xvfb, display = start_xvfb()
    try:
        results = {}
        # Chaperone draws with cairo unless the environment chooses a renderer (src/main.c):
        # the GL rows are the same app with GSK_RENDERER=gl, as it ran before, for the ratio.
        # Xvfb has no GPU: GL runs on Mesa's software rasteriser, llvmpipe.
        cases = (("window open", False, None), ("window closed (--background)", True, None),
                 ("window open, GL renderer", False, "gl"),
                 ("window closed, GL renderer", True, "gl"))
        for label, background, renderer in cases:
            starts, rsses = [], []
            for _ in range(runs):
                s, r = one_run(app, display, schema_dir, background, renderer)
                starts.append(s)
                rsses.append(r)
            results[label] = {"start_to_listening_ms_median": round(statistics.median(starts), 1),
                              "start_to_listening_ms_max": round(max(starts), 1),
                              "rss_kib_median": int(statistics.median(rsses))}
    finally:
        xvfb.kill()

    print()
    print(f"app start and idle memory ({runs} runs each, {app}):")
    print(f"  {'':32} {'start → listening (median / max)':>34} {'RSS 1 s later':>16}")
    for label, r in results.items():
        print(f"  {label:32} {r['start_to_listening_ms_median']:>15.1f} / {r['start_to_listening_ms_max']:>6.1f} ms"
              f" {r['rss_kib_median'] / 1024:>13.1f} MiB")
    opened = results["window open"]["rss_kib_median"]
    closed = results["window closed (--background)"]["rss_kib_median"]
    print(f"  the window costs {(opened - closed) / 1024:.1f} MiB; closed is {closed / opened:.2f}× open")
    gl_open = results["window open, GL renderer"]["rss_kib_median"]
    gl_closed = results["window closed, GL renderer"]["rss_kib_median"]
    print(f"  against the GL renderer: open {opened / gl_open:.2f}×, closed {closed / gl_closed:.2f}×"
          f" (goals: ≤ 60 MB open, ≤ 30 MB closed)")
    print("json: " + json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
