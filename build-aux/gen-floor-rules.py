#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Makes both floors' built-in tables from src/core/policy/floor-rules.json, so that the app's
chp-url-floor.c and the extension's floor.js cannot disagree about which site is blind.

  gen-floor-rules.py --c OUT.h DATA.json        the C header (meson, at build time)
  gen-floor-rules.py --js OUT.js DATA.json      extension/lib/floor-rules.js (committed: the
                                                extension loads unpacked from the source tree)
  gen-floor-rules.py --check-js FILE DATA.json  exit 1 when FILE is not what --js would write

Standard library only. The data is checked before anything is written: a host or path the
floors could never match (uppercase, non-ASCII, a scheme, a trailing dot) is an error."""
import json
import re
import sys

# The data's level: (the C's enum value, the JS's level word).
LEVELS = {
    "blind": ("CHP_FLOOR_BLIND", "blind"),
    "hands_only": ("CHP_FLOOR_HANDS_ONLY", "hands-only"),
}
REASON = re.compile(r"^[a-z][a-z_]*$")
HOST = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$")
PATH = re.compile(r"^(/[a-z0-9._~-]+)+$")
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*$")
CODE_POINT = re.compile(r"^U\+([0-9A-F]{4,6})$")


C_HEAD = """\
/* chp-url-floor-rules.h: the URL floor's built-in tables, made by build-aux/gen-floor-rules.py
 * from src/core/policy/floor-rules.json (do not edit: edit the data). Included once, by
 * chp-url-floor.c, after its BuiltinRule type. */

"""

JS_HEAD = """\
// SPDX-License-Identifier: GPL-3.0-or-later
// The URL floor's built-in tables, made by build-aux/gen-floor-rules.py from
// src/core/policy/floor-rules.json, the data chp-url-floor.c is built from too. Do not edit: edit the
// data and run `python3 build-aux/gen-floor-rules.py --js extension/lib/floor-rules.js
// src/core/policy/floor-rules.json` (the floor-rules-js test fails until this file is remade).

// Hosts match themselves and their subdomains; a path matches itself and everything under it.
// Within a level the first rule that matches gives the reason.
"""


class DataError(Exception):
    pass


def load(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)

    rules = []
    for group in data["groups"]:
        if not group.get("why") or not group.get("rules"):
            raise DataError("every group says why and has rules")
        for rule in group["rules"]:
            host, path = rule["host"], rule.get("path")
            level, reason = rule["level"], rule["reason"]
            if set(rule) - {"host", "path", "level", "reason"}:
                raise DataError(f"unknown member in {rule}")
            if not HOST.match(host):
                raise DataError(f"{host!r}: a host is ASCII, lowercase, with no trailing dot")
            if path is not None and not PATH.match(path):
                raise DataError(f"{path!r}: a path is lowercase, starts with '/' and does not "
                                "end with one")
            if level not in LEVELS:
                raise DataError(f"{level!r}: the levels are {', '.join(LEVELS)}")
            if not REASON.match(reason):
                raise DataError(f"{reason!r}: a reason is one lowercase word")
        rules.append(group)

    schemes = data["browserSchemes"]["schemes"]
    for scheme in schemes:
        if not SCHEME.match(scheme):
            raise DataError(f"{scheme!r}: a scheme is lowercase")
    words = data["bankWords"]["words"]
    for word in words:
        if not re.match(r"^[a-z]+$", word):
            raise DataError(f"{word!r}: a bank word is lowercase ASCII letters")

    letters = []
    for point, letter in data["confusables"]["letters"]:
        m = CODE_POINT.match(point)
        if not m or not re.match(r"^[a-z]$", letter):
            raise DataError(f"{point!r} -> {letter!r}: a code point as U+XXXX and one "
                            "lowercase letter")
        letters.append((int(m.group(1), 16), letter))
    return data, rules, schemes, words, letters


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def c_comment(text, indent="  "):
    """A C comment wrapped at 100 columns."""
    lines, line = [], ""
    for word in text.split():
        if len(indent) + 3 + len(line) + 1 + len(word) > 97 and line:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    out = f"{indent}/* " + f"\n{indent} * ".join(lines)
    return out + " */"


def js_comment(text, indent=""):
    lines, line = [], ""
    for word in text.split():
        if len(indent) + 3 + len(line) + 1 + len(word) > 100 and line:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n".join(f"{indent}// {l}" for l in lines)


def js_string(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def make_c(data, rules, schemes, words, letters):
    out = C_HEAD.splitlines() + ["static const BuiltinRule BUILTIN_RULES[] = {"]
    for i, group in enumerate(rules):
        if i > 0:
            out.append("")
        out.append(c_comment(group["why"]))
        for rule in group["rules"]:
            path = c_string(rule["path"]) if rule.get("path") else "NULL"
            out.append(f"  {{ {c_string(rule['host'])}, {path}, {LEVELS[rule['level']][0]}, "
                       f"{c_string(rule['reason'])} }},")
    out.append("};")
    out.append("")
    out.append(c_comment(data["browserSchemes"]["why"], indent=""))
    out.append("static const char * const BROWSER_SCHEMES[] = {")
    out.extend(f"  {c_string(s)}," for s in schemes)
    out.append("  NULL,")
    out.append("};")
    out.append("")
    out.append(c_comment(data["bankWords"]["why"], indent=""))
    out.append("static const char * const BANK_WORDS[] = {")
    out.extend(f"  {c_string(w)}," for w in words)
    out.append("  NULL,")
    out.append("};")
    out.append("")
    out.append(c_comment(data["confusables"]["why"], indent=""))
    out.append("static const struct { gunichar from; char to; } CONFUSABLES[] = {")
    out.extend(f"  {{ 0x{point:04X}, '{letter}' }}," for point, letter in letters)
    out.append("};")
    return "\n".join(out) + "\n"


def make_js(data, rules, schemes, words, letters):
    out = JS_HEAD.splitlines() + ["export const BUILTIN_RULES = Object.freeze(["]
    for i, group in enumerate(rules):
        if i > 0:
            out.append("")
        out.append(js_comment(group["why"], indent="  "))
        for rule in group["rules"]:
            path = js_string(rule["path"]) if rule.get("path") else "null"
            level = LEVELS[rule["level"]][1]
            out.append(f"  [{js_string(rule['host'])}, {path}, {js_string(level)}, "
                       f"{js_string(rule['reason'])}],")
    out.append("].map(([host, path, level, reason]) =>")
    out.append("  Object.freeze({ host, path, level, reason })));")
    out.append("")
    out.append(js_comment(data["browserSchemes"]["why"]))
    out.append("export const BROWSER_SCHEMES = Object.freeze([")
    out.extend(f"  {js_string(s)}," for s in schemes)
    out.append("]);")
    out.append("")
    out.append(js_comment(data["bankWords"]["why"]))
    listed = ", ".join(js_string(w) for w in words)
    out.append(f"export const BANK_WORDS = Object.freeze([{listed}]);")
    out.append("")
    out.append(js_comment(data["confusables"]["why"]))
    out.append("export const CONFUSABLES = Object.freeze([")
    out.extend(f"  [0x{point:04X}, '{letter}']," for point, letter in letters)
    out.append("].map((pair) => Object.freeze(pair)));")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 4 or argv[1] not in ("--c", "--js", "--check-js"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, target, source = argv[1:]
    try:
        parts = load(source)
    except (DataError, KeyError, ValueError, TypeError) as e:
        print(f"{source}: {e}", file=sys.stderr)
        return 1

    if mode == "--check-js":
        with open(target, encoding="utf-8") as f:
            if f.read() != make_js(*parts):
                print(f"{target} is not what {source} makes: run `python3 "
                      f"build-aux/gen-floor-rules.py --js {target} {source}`", file=sys.stderr)
                return 1
        return 0
    text = make_c(*parts) if mode == "--c" else make_js(*parts)
    with open(target, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
