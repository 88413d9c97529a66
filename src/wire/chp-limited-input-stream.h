/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-limited-input-stream.h: an input stream that fails once more bytes arrive than allowed.
 * It sits under libsoup on every bridge socket, because libsoup 3.2 bounds each WebSocket frame
 * but not a message split over many continuation frames; it also reads ahead, so that libsoup's
 * 1 KiB reads are not one syscall each, and its owner may pause it to hold the peer back. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define CHP_TYPE_LIMITED_INPUT_STREAM (chp_limited_input_stream_get_type ())

G_DECLARE_FINAL_TYPE (ChpLimitedInputStream, chp_limited_input_stream, CHP, LIMITED_INPUT_STREAM,
                      GFilterInputStream)

GInputStream *chp_limited_input_stream_new        (GInputStream          *base,
                                                   guint64                budget);
void          chp_limited_input_stream_set_budget (ChpLimitedInputStream *self,
                                                   guint64                budget);
void          chp_limited_input_stream_set_paused (ChpLimitedInputStream *self,
                                                   gboolean               paused);
gboolean      chp_limited_input_stream_get_paused (ChpLimitedInputStream *self);
void          chp_limited_input_stream_check_request_head (ChpLimitedInputStream *self);

G_END_DECLS
