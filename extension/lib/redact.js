// SPDX-License-Identifier: GPL-3.0-or-later
// Redaction (DESIGN §8), the extension's half of src/core/policy/chp-redact*.c: masks secrets in
// page-derived text and JSON before a result leaves the extension; the app then redacts again.
// Every secret becomes `[redacted <name> len=N]` (<name>: the kind — jwt, bearer, … — or the
// parameter, header or member name it was found under; N: its length in characters). Markers
// pass through unchanged, so redacting twice changes nothing more.
//
// The rules, names and false-positive guards are those of the table at the top of chp-redact.c,
// scanned the same way: one pass, no regular expressions over the text, look-aheads bounded or
// consumed, so the cost is linear. The C counts its bounds (MAX_NAME, MAX_QUOTED) in UTF-8
// bytes; so does the JS.
//
// This module is what the rest of the extension imports; the parts follow the C's files:
//   redact-text.js     the text scan (chp-redact.c)
//   redact-names.js    secret names (chp-redact-names.c)
//   redact-numbers.js  cards and national ids (chp-redact-numbers.c)
//   redact-phrases.js  "verification code is …" (chp-redact-phrases.c)
//   redact-marker.js   the marker (chp-redact-marker.c)
//   redact-json.js     the JSON walk (chp-redact-json.c)
//   redact-chars.js    character classes and UTF-8 lengths, as GLib reads them
//   redact-patterns.js the word lists and key shapes, made by build-aux/gen-redact-patterns.py
//                      from src/core/policy/redact-patterns.json, as the C's chp-redact-patterns.h

export { isMarker } from './redact-marker.js';
export { isSecretName } from './redact-names.js';
export { redactText } from './redact-text.js';
export { redactValue } from './redact-json.js';
