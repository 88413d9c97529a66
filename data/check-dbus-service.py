#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks the generated D-Bus service file: the [D-BUS Service] group, Name equal to the app id and
to the file's own name, and Exec running the installed binary with --gapplication-service.

  check-dbus-service.py SERVICE_FILE APP_ID BINARY"""
import configparser
import os
import shlex
import sys


def main():
    path, app_id, binary = sys.argv[1:4]
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    with open(path, encoding="utf-8") as f:
        parser.read_file(f)

    problems = []
    if parser.sections() != ["D-BUS Service"]:
        problems.append(f"groups are {parser.sections()}, not just [D-BUS Service]")
    service = parser["D-BUS Service"] if parser.has_section("D-BUS Service") else {}
    if service.get("Name") != app_id:
        problems.append(f"Name is {service.get('Name')!r}, not {app_id!r}")
    if os.path.basename(path) != app_id + ".service":
        problems.append(f"the file is {os.path.basename(path)}: the bus looks for {app_id}.service")
    exec_argv = shlex.split(service.get("Exec", ""))
    if exec_argv != [binary, "--gapplication-service"]:
        problems.append(f"Exec is {exec_argv}, not [{binary!r}, '--gapplication-service']")
    if not os.path.isabs(binary):
        problems.append(f"{binary} is not an absolute path (the bus has no PATH)")

    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
