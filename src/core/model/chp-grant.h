/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-grant.h: one grant as the extension reported it: which tabs and frames an agent may touch,
 * with which scopes, until when. The person created it in the browser; the app only mirrors it
 * and can revoke it. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

typedef struct
{
  gint64  tab_id;
  gint64  frame_id;
  char   *document_id;
  char   *origin;
  char   *url;
  char   *title;
} ChpGrantTarget;

#define CHP_TYPE_GRANT (chp_grant_get_type ())

G_DECLARE_FINAL_TYPE (ChpGrant, chp_grant, CHP, GRANT, GObject)

ChpGrant             *chp_grant_new_from_json  (const char  *device_id,
                                                JsonObject  *object,
                                                GError     **error);
const char           *chp_grant_get_id         (ChpGrant    *self);
const char           *chp_grant_get_device_id  (ChpGrant    *self);
const char           *chp_grant_get_label      (ChpGrant    *self);
const char           *chp_grant_get_task_id    (ChpGrant    *self);
const char * const   *chp_grant_get_scopes     (ChpGrant    *self);
guint                 chp_grant_get_n_targets  (ChpGrant    *self);
const ChpGrantTarget *chp_grant_get_target     (ChpGrant    *self,
                                                guint        index);
gint64                chp_grant_get_created_at (ChpGrant    *self);
gint64                chp_grant_get_expires_at (ChpGrant    *self);
gboolean              chp_grant_has_scope      (ChpGrant    *self,
                                                const char  *scope);
JsonNode             *chp_grant_to_json        (ChpGrant    *self);

G_END_DECLS
