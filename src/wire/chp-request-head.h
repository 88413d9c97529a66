/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-request-head.h: checks an HTTP request's head as its bytes go by, before libsoup parses
 * it: the bridge takes no request body, and libsoup 3.2 mishandles a body length it cannot read. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _ChpRequestHead ChpRequestHead;

ChpRequestHead *chp_request_head_new     (void);
void            chp_request_head_free    (ChpRequestHead  *self);
gboolean        chp_request_head_feed    (ChpRequestHead  *self,
                                          const guint8    *data,
                                          gsize            n,
                                          GError         **error);
gboolean        chp_request_head_is_done (ChpRequestHead  *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpRequestHead, chp_request_head_free)

G_END_DECLS
