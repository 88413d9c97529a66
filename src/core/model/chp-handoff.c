/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-handoff.c: like a grant, a handoff carries page-derived text (title, URL) and the agent's
 * message to the person's screen; everything is bounded and checked on arrival. The reason and
 * state are closed sets, so the UI can word them itself instead of showing what it was sent. */
#include "config.h"

#include "chp-handoff.h"

#include "chp-json-util.h"
#include "chp-protocol-error.h"

#include <string.h>

#define MAX_SHORT 256
#define MAX_MESSAGE 1024
#define MAX_URL 4096

static const char * const reasons[] = { "qr", "mfa", "captcha", "device", "login", "other", NULL };
static const char * const states[] = { "waiting", "done", "cancelled", "expired", NULL };

struct _ChpHandoff
{
  GObject parent_instance;

  char *handoff_id;
  char *device_id;
  gint64 tab_id;
  char *url;
  char *title;
  char *origin;
  char *reason;
  char *message;
  char *state;
  char *by;
  gint64 created_at;
};

enum {
  PROP_0,
  PROP_STATE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (ChpHandoff, chp_handoff, G_TYPE_OBJECT)

static void
chp_handoff_finalize (GObject *object)
{
  ChpHandoff *self = CHP_HANDOFF (object);

  g_free (self->handoff_id);
  g_free (self->device_id);
  g_free (self->url);
  g_free (self->title);
  g_free (self->origin);
  g_free (self->reason);
  g_free (self->message);
  g_free (self->state);
  g_free (self->by);

  G_OBJECT_CLASS (chp_handoff_parent_class)->finalize (object);
}

static void
chp_handoff_get_property (GObject    *object,
                          guint       prop_id,
                          GValue     *value,
                          GParamSpec *pspec)
{
  ChpHandoff *self = CHP_HANDOFF (object);

  switch (prop_id)
    {
    case PROP_STATE:
      g_value_set_string (value, self->state);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_handoff_class_init (ChpHandoffClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = chp_handoff_finalize;
  object_class->get_property = chp_handoff_get_property;

  properties[PROP_STATE] =
    g_param_spec_string ("state", NULL, NULL, "waiting",
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
chp_handoff_init (ChpHandoff *self)
{
}

static gboolean
take_string (JsonObject  *object,
             const char  *member,
             gsize        max_len,
             gboolean     multiline,
             char       **out,
             GError     **error)
{
  JsonNode *node = json_object_get_member (object, member);
  const char *value = "";

  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      if (json_node_get_value_type (node) != G_TYPE_STRING)
        {
          g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                       "handoff: %s is not a string", member);
          return FALSE;
        }
      value = json_node_get_string (node);
    }

  if (strlen (value) > max_len || (!multiline && strpbrk (value, "\n\r") != NULL))
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                   "handoff: %s is too long", member);
      return FALSE;
    }

  *out = g_strdup (value);
  return TRUE;
}

static gboolean
one_of (const char          *value,
        const char * const  *allowed,
        const char          *what,
        GError             **error)
{
  if (g_strv_contains (allowed, value))
    return TRUE;

  g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
               "handoff: unknown %s", what);
  return FALSE;
}

/* Returns: (transfer full) (nullable) */
ChpHandoff *
chp_handoff_new_from_json (const char  *device_id,
                           JsonObject  *object,
                           GError     **error)
{
  g_autoptr(ChpHandoff) self = g_object_new (CHP_TYPE_HANDOFF, NULL);

  g_return_val_if_fail (device_id != NULL, NULL);
  g_return_val_if_fail (object != NULL, NULL);

  self->device_id = g_strdup (device_id);
  self->tab_id = chp_json_get_int (object, "tabId", -1);
  self->created_at = chp_json_get_int (object, "createdAt", 0);

  if (!take_string (object, "handoffId", MAX_SHORT, FALSE, &self->handoff_id, error) ||
      !take_string (object, "url", MAX_URL, FALSE, &self->url, error) ||
      !take_string (object, "title", MAX_SHORT * 4, FALSE, &self->title, error) ||
      !take_string (object, "origin", MAX_SHORT, FALSE, &self->origin, error) ||
      !take_string (object, "reason", MAX_SHORT, FALSE, &self->reason, error) ||
      !take_string (object, "message", MAX_MESSAGE, TRUE, &self->message, error) ||
      !take_string (object, "state", MAX_SHORT, FALSE, &self->state, error) ||
      !take_string (object, "by", MAX_SHORT, FALSE, &self->by, error))
    return NULL;

  if (*self->handoff_id == '\0')
    {
      g_set_error_literal (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                           "handoff: handoffId is missing");
      return NULL;
    }

  if (!one_of (self->reason, reasons, "reason", error) ||
      !one_of (self->state, states, "state", error))
    return NULL;

  return g_steal_pointer (&self);
}

/* Takes @newer's state; the rest of a handoff never changes. Returns TRUE when the state did. */
gboolean
chp_handoff_update (ChpHandoff *self,
                    ChpHandoff *newer)
{
  g_return_val_if_fail (CHP_IS_HANDOFF (self), FALSE);
  g_return_val_if_fail (CHP_IS_HANDOFF (newer), FALSE);

  g_free (self->by);
  self->by = g_strdup (newer->by);

  if (g_strcmp0 (self->state, newer->state) == 0)
    return FALSE;

  g_free (self->state);
  self->state = g_strdup (newer->state);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
  return TRUE;
}

#define GETTER(type, field) \
  type chp_handoff_get_##field (ChpHandoff *self) \
  { \
    g_return_val_if_fail (CHP_IS_HANDOFF (self), (type) 0); \
    return self->field; \
  }

GETTER (const char *, device_id)
GETTER (gint64, tab_id)
GETTER (const char *, url)
GETTER (const char *, title)
GETTER (const char *, origin)
GETTER (const char *, reason)
GETTER (const char *, message)
GETTER (const char *, state)
GETTER (const char *, by)
GETTER (gint64, created_at)

const char *
chp_handoff_get_id (ChpHandoff *self)
{
  g_return_val_if_fail (CHP_IS_HANDOFF (self), NULL);
  return self->handoff_id;
}

gboolean
chp_handoff_is_waiting (ChpHandoff *self)
{
  g_return_val_if_fail (CHP_IS_HANDOFF (self), FALSE);
  return g_strcmp0 (self->state, "waiting") == 0;
}

JsonNode *
chp_handoff_to_json (ChpHandoff *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  g_return_val_if_fail (CHP_IS_HANDOFF (self), NULL);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "handoffId");
  json_builder_add_string_value (builder, self->handoff_id);
  json_builder_set_member_name (builder, "deviceId");
  json_builder_add_string_value (builder, self->device_id);
  json_builder_set_member_name (builder, "tabId");
  json_builder_add_int_value (builder, self->tab_id);
  json_builder_set_member_name (builder, "url");
  json_builder_add_string_value (builder, self->url);
  json_builder_set_member_name (builder, "title");
  json_builder_add_string_value (builder, self->title);
  json_builder_set_member_name (builder, "reason");
  json_builder_add_string_value (builder, self->reason);
  json_builder_set_member_name (builder, "message");
  json_builder_add_string_value (builder, self->message);
  json_builder_set_member_name (builder, "state");
  json_builder_add_string_value (builder, self->state);
  json_builder_set_member_name (builder, "by");
  json_builder_add_string_value (builder, self->by);
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}
