/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-memory.h: giving memory back to the system after a large payload, and in the tray. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Payloads at least this large leave enough free heap behind to be worth a trim. */
#define CHP_MEMORY_TRIM_THRESHOLD (1024 * 1024)

void chp_memory_trim_after (gsize       payload_bytes,
                            const char *why);
void chp_memory_trim_soon  (const char *why);
guint chp_memory_get_trims (void);

void  chp_memory_page_out_soon   (void);
void  chp_memory_page_out_cancel (void);
guint chp_memory_page_out_now    (void);


G_END_DECLS
