/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-json-reader.h: a strict RFC 8259 reader that builds json-glib nodes. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Nesting beyond this is refused: json-glib's own code recurses without a bound. */
#define CHP_JSON_MAX_DEPTH 64

JsonNode *chp_json_read          (const char  *text,
                                  gsize        len,
                                  GError     **error);
JsonNode *chp_json_read_in_place (char        *text,
                                  gsize        len,
                                  GError     **error);
JsonNode *chp_json_read_shallow  (const char  *text,
                                  gsize        len,
                                  guint        max_depth,
                                  GError     **error);

const char *chp_json_skip_clean (const char *p,
                                 const char *end,
                                 gboolean    or_non_ascii);

G_END_DECLS
