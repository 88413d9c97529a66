#!/usr/bin/env python3
"""Reads meson's testlog.json and prints one line per build, or the plain total line
("N passed, N failed") that CI reads at the end of a run."""
import json
import os
import sys


def count(build):
    path = os.path.join(build, "meson-logs", "testlog.json")
    passed = failed = skipped = 0
    if not os.path.exists(path):
        return passed, failed, skipped
    with open(path) as f:
        for line in f:
            result = json.loads(line).get("result")
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
    return passed, failed, skipped


if sys.argv[1] == "--total":
    totals = [count(b) for b in sys.argv[2:]]
    p, f, s = (sum(t[i] for t in totals) for i in range(3))
    print(f"{p} passed, {f} failed" + (f", {s} skipped" if s else ""))
else:
    p, f, s = count(sys.argv[1])
    print(f"{sys.argv[2]}: {p} passed, {f} failed" + (f", {s} skipped" if s else ""))
