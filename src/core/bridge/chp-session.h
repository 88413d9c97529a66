/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-session.h: a device's logical session: it outlives a socket so that a reconnecting browser
 * (an MV3 service worker that was stopped, say) resumes it, and it owns the engine's calls. */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "chp-connection.h"

G_BEGIN_DECLS

/* How long a disconnected session waits to be resumed. */
#define CHP_SESSION_RESUME_WINDOW_MS (5 * 60 * 1000)
#define CHP_SESSION_DEFAULT_TIMEOUT_MS 30000

#define CHP_TYPE_SESSION (chp_session_get_type ())

G_DECLARE_FINAL_TYPE (ChpSession, chp_session, CHP, SESSION, GObject)

ChpSession    *chp_session_new               (const char          *device_id);
const char    *chp_session_get_id            (ChpSession          *self);
const char    *chp_session_get_device_id     (ChpSession          *self);
ChpConnection *chp_session_get_connection    (ChpSession          *self);
gint64         chp_session_get_last_sequence (ChpSession          *self);
void           chp_session_set_last_sequence (ChpSession          *self,
                                              gint64               sequence);

void           chp_session_attach            (ChpSession          *self,
                                              ChpConnection       *connection);
void           chp_session_detach            (ChpSession          *self);
void           chp_session_fail_all          (ChpSession          *self,
                                              const GError        *error);

void           chp_session_call_async        (ChpSession          *self,
                                              const char          *method,
                                              JsonNode            *params,
                                              guint                timeout_ms,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
JsonNode      *chp_session_call_finish       (ChpSession          *self,
                                              GAsyncResult        *result,
                                              GError             **error);
gint64         chp_session_call_get_queue_us (GAsyncResult        *result);

G_END_DECLS
