#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reads meson's testlog.json and prints one line per build, or the plain total line
("N passed, N failed") that CI reads at the end of a run, or (--failures) why each failed test
failed: a run's log is long and only its end may be read, so the reasons are repeated there."""
import json
import os
import re
import sys

# Lines of a failed test's output worth repeating: node's failure section, GLib's test errors.
NODE_FAILURES = "✖ failing tests:"
GTEST_ERROR = re.compile(r"^(not ok|Bail out!|\*\*$|.*ERROR:|.*CRITICAL \*\*)")
MAX_LINES = 60


def entries(build):
    path = os.path.join(build, "meson-logs", "testlog.json")
    if not os.path.exists(path):
        return
    with open(path) as f:
        for line in f:
            yield json.loads(line)


def count(build):
    passed = failed = skipped = 0
    for entry in entries(build):
        result = entry.get("result")
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped += 1
        else:
            failed += 1
    return passed, failed, skipped


def reasons(stdout):
    lines = (stdout or "").splitlines()
    if NODE_FAILURES in lines:
        # node's own summary of every failing test, stack frames left out.
        at = lines.index(NODE_FAILURES)
        part = [l for l in lines[at + 1:] if l.strip() and not l.lstrip().startswith("at ")]
        # A whole file that ran out of time names none of its tests: the tests it finished, just
        # before its line in the report, say where it stopped.
        for line in list(part):
            if line.startswith("✖ /") and line in lines[:at]:
                end = lines.index(line)
                part += [f"  (before it in the report) {l}" for l in lines[max(0, end - 8):end]]
        return part
    picked = [l for l in lines if GTEST_ERROR.match(l)]
    return picked or lines[-15:]


def failures(build):
    for entry in entries(build):
        if entry.get("result") in ("OK", "EXPECTEDFAIL", "SKIP"):
            continue
        print(f"--- {build}: {entry.get('name')} ({entry.get('result')})")
        lines = reasons(entry.get("stdout"))
        for line in lines[:MAX_LINES]:
            print(line[:300])
        if len(lines) > MAX_LINES:
            print(f"… {len(lines) - MAX_LINES} more lines in {build}/meson-logs/testlog.txt")


if sys.argv[1] == "--total":
    totals = [count(b) for b in sys.argv[2:]]
    p, f, s = (sum(t[i] for t in totals) for i in range(3))
    print(f"{p} passed, {f} failed" + (f", {s} skipped" if s else ""))
elif sys.argv[1] == "--failures":
    for b in sys.argv[2:]:
        failures(b)
else:
    p, f, s = count(sys.argv[1])
    print(f"{sys.argv[2]}: {p} passed, {f} failed" + (f", {s} skipped" if s else ""))
