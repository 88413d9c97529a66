/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-redact.h: masks secrets in page-derived text and JSON before an agent sees them
 * (DESIGN §8): a secret becomes `[redacted <name> len=N]`. Pure: no I/O, no GTK. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

char     *chp_redact_text            (const char *text,
                                      guint      *count_out);
JsonNode *chp_redact_json            (JsonNode   *node,
                                      guint      *count_out);
gboolean  chp_redact_name_is_secret  (const char *name,
                                      gssize      length);
gboolean  chp_redact_is_marker       (const char *text);

G_END_DECLS
