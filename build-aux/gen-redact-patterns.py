#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Makes both redactions' word lists and key shapes from src/core/policy/redact-patterns.json, so
that the app's chp-redact*.c and the extension's redact*.js cannot disagree about what a secret
looks like.

  gen-redact-patterns.py --c OUT.h DATA.json        the C header (meson, at build time)
  gen-redact-patterns.py --js OUT.js DATA.json      extension/lib/redact-patterns.js (committed:
                                                    the extension loads unpacked from the source
                                                    tree)
  gen-redact-patterns.py --check-js FILE DATA.json  exit 1 when FILE is not what --js would write

Standard library only. The data is checked before anything is written: an entry that one of the
two engines would read differently from the other (see the data's description) is an error."""
import json
import re
import sys
import unicodedata

NAME_WORD = re.compile(r"^[a-z0-9]+$")      # what the name splitter leaves: lowercase ASCII words
MARKER_NAME = re.compile(r"^[a-z0-9_]+$")   # a marker's name, as it will be written
KEY_PREFIX = re.compile(r"^[A-Za-z0-9_.-]+$")
SCHEME = re.compile(r"^[a-z]+$")
HEADER = re.compile(r"^[a-z]+(-[a-z]+)*$")
BODY_CHARS = {None: "FALSE", "A-Z0-9": "TRUE"}

C_HEAD = """\
/* chp-redact-patterns.h: the redaction's word lists and key shapes, made by
 * build-aux/gen-redact-patterns.py from src/core/policy/redact-patterns.json (do not edit: edit the
 * data). Included by chp-redact-private.h, after its KeyShape and Phrase types; each chp-redact*.c
 * file uses its own tables (unused static tables in a header cost nothing and warn nothing). */
#pragma once

"""

JS_HEAD = """\
// SPDX-License-Identifier: GPL-3.0-or-later
// The redaction's word lists and key shapes, made by build-aux/gen-redact-patterns.py from
// src/core/policy/redact-patterns.json, the data chp-redact*.c is built from too. Do not edit: edit
// the data and run `python3 build-aux/gen-redact-patterns.py --js extension/lib/redact-patterns.js
// src/core/policy/redact-patterns.json` (the redact-patterns-js test fails until this file is
// remade).
//
// Plain arrays, not frozen, and read-only by convention: the scan reads them at every word, and V8
// iterates a frozen array on a slower path (measured: the scan 1.4 times slower on 1 MiB).
"""


class DataError(Exception):
    pass


def check_words(words, pattern, what, min_len=1):
    if not isinstance(words, list) or not words:
        raise DataError(f"{what}: a non-empty list")
    for word in words:
        if not isinstance(word, str) or not pattern.match(word) or len(word) < min_len:
            raise DataError(f"{word!r} ({what}): {pattern.pattern}, {min_len}+ characters")
    if len(set(words)) != len(words):
        raise DataError(f"{what}: a word is listed twice")
    return words


def check_phrase_text(text, what):
    """Lowercase, single spaces between words, and long enough for the quick start checks: the C
    hashes a phrase's first three bytes, the JS an ASCII phrase's first three characters."""
    if not isinstance(text, str) or text != text.strip() or "  " in text or "\t" in text:
        raise DataError(f"{text!r} ({what}): words split by one space")
    if re.search(r"[A-Z]", text) or text != text.lower():
        raise DataError(f"{text!r} ({what}): lowercase (neither engine folds non-ASCII case)")
    if ord(text[0]) < 0x80 and (len(text) < 3 or not re.match(r"[a-z0-9]", text)):
        raise DataError(f"{text!r} ({what}): an ASCII phrase starts a word and has 3+ characters")
    if len(text.encode("utf-8")) < 3:
        raise DataError(f"{text!r} ({what}): 3 bytes at least")
    return text


def load(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)

    names = data["names"]
    check_words(names["substrings"]["words"], NAME_WORD, "names.substrings", 4)
    check_words(names["words"]["words"], NAME_WORD, "names.words", 2)
    check_words(names["words"]["suffixes"], NAME_WORD, "names.words.suffixes")
    for pair in names["pairs"]["pairs"]:
        if len(pair) != 2:
            raise DataError(f"{pair!r}: a pair is two words")
        check_words(pair[:1], NAME_WORD, "names.pairs (first)", 2)
        check_words(pair[1:], NAME_WORD, "names.pairs (second)")
    check_words(names["notSecretWords"]["words"], NAME_WORD, "names.notSecretWords")
    check_words(names["metaWords"]["words"], NAME_WORD, "names.metaWords")

    for shape in data["keyShapes"]["shapes"]:
        known = {"prefix", "minBody", "exactBody", "bodyChars", "needsDigit", "name", "why"}
        if set(shape) - known:
            raise DataError(f"unknown member in {shape}")
        if not KEY_PREFIX.match(shape["prefix"]):
            raise DataError(f"{shape['prefix']!r}: a prefix is ASCII letters, digits and _.-")
        if ("minBody" in shape) == ("exactBody" in shape):
            raise DataError(f"{shape['prefix']!r}: minBody or exactBody, one of them")
        body = shape.get("minBody", shape.get("exactBody"))
        if not isinstance(body, int) or body < 1:
            raise DataError(f"{shape['prefix']!r}: a body length is 1 or more")
        if shape.get("bodyChars") not in BODY_CHARS:
            raise DataError(f"{shape['prefix']!r}: bodyChars is \"A-Z0-9\" or absent")
        if not isinstance(shape.get("needsDigit", False), bool):
            raise DataError(f"{shape['prefix']!r}: needsDigit is true or false")
        if not MARKER_NAME.match(shape["name"]):
            raise DataError(f"{shape['name']!r}: a marker name is lowercase, digits and '_'")

    check_words(data["authSchemes"]["schemes"], SCHEME, "authSchemes")
    check_words(data["lineHeaders"]["names"], HEADER, "lineHeaders")

    phrases = []
    for kind in ("code", "key"):
        for text, name in data["phrases"][kind]["phrases"]:
            check_phrase_text(text, f"phrases.{kind}")
            if not MARKER_NAME.match(name):
                raise DataError(f"{name!r}: a marker name is lowercase, digits and '_'")
            phrases.append((text, name, kind))
    if len({p[0] for p in phrases}) != len(phrases):
        raise DataError("phrases: a text is listed twice")
    for word in data["connectors"]["words"]:
        if not isinstance(word, str) or not word or word != word.lower() or re.search(r"\s", word):
            raise DataError(f"{word!r} (connectors): one lowercase word")
    for text in data["codeBeforePhrase"]["leads"] + data["codeBeforePhrase"]["ends"]:
        check_phrase_text(text, "codeBeforePhrase")
    return data, phrases


# ---- formatting ------------------------------------------------------------------------------

def wrap(text, first, rest, width=100):
    """Words of @text as lines of at most @width columns: the first starts with @first, the others
    with @rest."""
    lines, line, empty = [], first, True
    for word in text.split():
        if not empty and len(line) + 1 + len(word) > width:
            lines.append(line)
            line, empty = rest, True
        line = line + word if empty else f"{line} {word}"
        empty = False
    lines.append(line)
    return lines


def c_comment(text, indent=""):
    lines = wrap(text, f"{indent}/* ", f"{indent} * ", 97)
    return "\n".join(lines) + " */"


def js_comment(text, indent=""):
    return "\n".join(wrap(text, f"{indent}// ", f"{indent}// "))


def c_string(s):
    """A C literal holding @s as UTF-8, ASCII only: a byte outside ASCII as \\xNN, and a literal
    split after it where a hex digit follows (C's \\x escapes take every hex digit there is)."""
    out, after_escape = '"', False
    for byte in s.encode("utf-8"):
        ch = chr(byte)
        if after_escape and ch in "0123456789abcdefABCDEF":
            out += '" "'
        after_escape = False
        if byte >= 0x80:
            out += f"\\x{byte:02x}"
            after_escape = True
        elif ch in '\\"':
            out += "\\" + ch
        else:
            out += ch
    return out + '"'


def js_string(s):
    """A JS literal, ASCII only: outside ASCII as \\uXXXX (a pair of them above U+FFFF)."""
    out = "'"
    for ch in s:
        if ch in "\\'":
            out += "\\" + ch
        elif ord(ch) < 0x80:
            out += ch
        else:
            units = ch.encode("utf-16-be")
            for k in range(0, len(units), 2):
                out += f"\\u{units[k]:02x}{units[k + 1]:02x}"
    return out + "'"


def listing(items, indent="  ", width=100):
    """Items (already literals) on lines of at most @width columns, each followed by a comma."""
    lines, line = [], ""
    for item in items:
        cell = f"{item},"
        if line and len(indent) + len(line) + 1 + len(cell) > width:
            lines.append(indent + line)
            line = cell
        else:
            line = f"{line} {cell}" if line else cell
    if line:
        lines.append(indent + line)
    return lines


def width(s):
    """Columns @s takes in an editor: a Han character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def noted(line, text, comment):
    """@line, and what its escaped literal says in a @comment when @text is not plain ASCII: after
    the line when that fits in 100 columns, else on a line of its own before it."""
    if all(ord(c) < 0x80 for c in text):
        return [line]
    note = comment.format(text)
    if width(line) + width(note) <= 100:
        return [line + note]
    return [comment.format(text + ":"), line]


# ---- C -----------------------------------------------------------------------------------------

def c_words(out, name, why, words):
    out.append(c_comment(why))
    out.append(f"static const char * const {name}[] = {{")
    out.extend(listing([c_string(w) for w in words] + ["NULL"]))
    out.append("};")
    out.append("")


def make_c(data, phrases):
    names = data["names"]
    out = C_HEAD.splitlines()
    out.append(c_comment(names["why"]))
    out.append("")
    c_words(out, "SECRET_SUBSTRINGS", names["substrings"]["why"], names["substrings"]["words"])
    c_words(out, "SECRET_WORDS", names["words"]["why"], names["words"]["words"])
    c_words(out, "SECRET_WORD_SUFFIXES", "The suffixes a secret word may have.",
            names["words"]["suffixes"])
    out.append(c_comment(names["pairs"]["why"]))
    out.append("static const struct { const char *first; const char *second; } SECRET_PAIRS[] = {")
    out.extend(listing([f"{{ {c_string(a)}, {c_string(b)} }}" for a, b in names["pairs"]["pairs"]]))
    out.append("};")
    out.append("")
    c_words(out, "NOT_SECRET_WORDS", names["notSecretWords"]["why"],
            names["notSecretWords"]["words"])
    c_words(out, "META_WORDS", names["metaWords"]["why"], names["metaWords"]["words"])

    out.append(c_comment(data["keyShapes"]["why"]))
    out.append("static const KeyShape KEY_SHAPES[] = {")
    for shape in data["keyShapes"]["shapes"]:
        exact = shape.get("exactBody", 0)
        minimum = shape.get("minBody", exact)
        line = (f"  {{ {c_string(shape['prefix'])}, {minimum}, {exact}, "
                f"{BODY_CHARS[shape.get('bodyChars')]}, "
                f"{'TRUE' if shape.get('needsDigit') else 'FALSE'}, {c_string(shape['name'])} }},")
        if shape.get("why"):
            line += f"  /* {shape['why']} */"
        out.append(line)
    out.append("};")
    out.append("")
    c_words(out, "AUTH_SCHEMES", data["authSchemes"]["why"], data["authSchemes"]["schemes"])
    c_words(out, "LINE_HEADERS", data["lineHeaders"]["why"], data["lineHeaders"]["names"])

    out.append(c_comment(data["phrases"]["why"]))
    out.append("static const Phrase PHRASES[] = {")
    for kind in ("code", "key"):
        if kind == "key":
            out.append("")
        out.append(c_comment(data["phrases"][kind]["why"], "  "))
        for text, name, k in phrases:
            if k == kind:
                out.extend(noted(f"  {{ {c_string(text)}, {c_string(name)}, "
                                 f"PHRASE_{kind.upper()} }},", text, "  /* {} */"))
    out.append("};")
    out.append("")
    c_words(out, "CONNECTOR_WORDS", data["connectors"]["why"], data["connectors"]["words"])
    lead = data["codeBeforePhrase"]
    c_words(out, "CODE_LEADS", lead["why"], lead["leads"])
    c_words(out, "CODE_ENDS", "The words that end such a phrase.", lead["ends"])
    return "\n".join(out[:-1]) + "\n"


# ---- JS ----------------------------------------------------------------------------------------

def js_words(out, name, why, words):
    out.append("")
    out.append(js_comment(why))
    out.append(f"export const {name} = [")
    out.extend(listing([js_string(w) for w in words]))
    out.append("];")


def make_js(data, phrases):
    names = data["names"]
    out = JS_HEAD.splitlines()
    out.append("")
    out.append(js_comment(names["why"]))
    js_words(out, "SECRET_SUBSTRINGS", names["substrings"]["why"], names["substrings"]["words"])
    js_words(out, "SECRET_WORDS", names["words"]["why"], names["words"]["words"])
    js_words(out, "SECRET_WORD_SUFFIXES", "The suffixes a secret word may have.",
             names["words"]["suffixes"])
    out.append("")
    out.append(js_comment(names["pairs"]["why"]))
    out.append("export const SECRET_PAIRS = [")
    out.extend(listing([f"[{js_string(a)}, {js_string(b)}]" for a, b in names["pairs"]["pairs"]]))
    out.append("];")
    js_words(out, "NOT_SECRET_WORDS", names["notSecretWords"]["why"],
             names["notSecretWords"]["words"])
    js_words(out, "META_WORDS", names["metaWords"]["why"], names["metaWords"]["words"])

    out.append("")
    out.append(js_comment(data["keyShapes"]["why"]))
    out.append("export const KEY_SHAPES = [")
    for shape in data["keyShapes"]["shapes"]:
        exact = shape.get("exactBody", 0)
        minimum = shape.get("minBody", exact)
        upper = "true" if shape.get("bodyChars") else "false"
        digit = "true" if shape.get("needsDigit") else "false"
        line = (f"  [{js_string(shape['prefix'])}, {minimum}, {exact}, {upper}, {digit}, "
                f"{js_string(shape['name'])}],")
        if shape.get("why"):
            line += f" // {shape['why']}"
        out.append(line)
    out.append("].map(([prefix, minBody, exactBody, upperDigits, needsDigit, name]) =>")
    out.append("  ({ prefix, minBody, exactBody, upperDigits, needsDigit, name }));")
    js_words(out, "AUTH_SCHEMES", data["authSchemes"]["why"], data["authSchemes"]["schemes"])
    js_words(out, "LINE_HEADERS", data["lineHeaders"]["why"], data["lineHeaders"]["names"])

    out.append("")
    out.append(js_comment(data["phrases"]["why"]))
    out.append("export const PHRASES = [")
    for kind in ("code", "key"):
        if kind == "key":
            out.append("")
        out.append(js_comment(data["phrases"][kind]["why"], "  "))
        for text, name, k in phrases:
            if k == kind:
                out.extend(noted(f"  [{js_string(text)}, {js_string(name)}, {js_string(kind)}],",
                                 text, " // {}"))
    out.append("].map(([text, name, kind]) => ({ text, name, kind }));")
    js_words(out, "CONNECTOR_WORDS", data["connectors"]["why"], data["connectors"]["words"])
    lead = data["codeBeforePhrase"]
    js_words(out, "CODE_LEADS", lead["why"], lead["leads"])
    js_words(out, "CODE_ENDS", "The words that end such a phrase.", lead["ends"])
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
                      f"build-aux/gen-redact-patterns.py --js {target} {source}`", file=sys.stderr)
                return 1
        return 0
    text = make_c(*parts) if mode == "--c" else make_js(*parts)
    with open(target, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
