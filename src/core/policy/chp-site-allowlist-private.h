/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-site-allowlist-private.h: shared by the allowlist's field walk (chp-site-allowlist.c) and
 * its text shapes (chp-site-allowlist-text.c). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  TEXT_LABEL,     /* a control's label: only credential shapes refuse */
  TEXT_PLAIN,     /* + emails, phone numbers, 6+ digits */
  TEXT_READY,     /* + 5+ digits */
} TextRules;

const char *chp_site_allowlist_text_problem (const char *s,
                                             TextRules   rules);

G_END_DECLS
