/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-limited-io-stream.h: a socket connection seen through a ChpLimitedInputStream; closing it
 * closes the socket. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define CHP_TYPE_LIMITED_IO_STREAM (chp_limited_io_stream_get_type ())

G_DECLARE_FINAL_TYPE (ChpLimitedIOStream, chp_limited_io_stream, CHP, LIMITED_IO_STREAM, GIOStream)

GIOStream    *chp_limited_io_stream_new         (GIOStream          *base,
                                                 guint64             budget);
GInputStream *chp_limited_io_stream_get_limiter (ChpLimitedIOStream *self);

G_END_DECLS
