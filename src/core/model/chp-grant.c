/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-grant.c: a grant arrives from a paired extension, but its strings come from web pages (tab
 * titles, URLs) and reach the person's screen: each is bounded and checked here, once, so no
 * widget has to wonder. */
#include "config.h"

#include "chp-grant.h"

#include "chp-json-util.h"
#include "chp-protocol-error.h"

#include <string.h>

/* Far more than any real grant needs; a list longer than this is not a person's choice. */
#define MAX_TARGETS 64
#define MAX_SCOPES 32
#define MAX_SHORT 256
#define MAX_URL 4096

struct _ChpGrant
{
  GObject parent_instance;

  char *grant_id;
  char *device_id;
  char *task_id;
  char *label;
  GStrv scopes;
  GArray *targets;   /* ChpGrantTarget */
  gint64 created_at;
  gint64 expires_at;
};

G_DEFINE_FINAL_TYPE (ChpGrant, chp_grant, G_TYPE_OBJECT)

static void
clear_target (gpointer data)
{
  ChpGrantTarget *target = data;

  g_free (target->document_id);
  g_free (target->origin);
  g_free (target->url);
  g_free (target->title);
}

static void
chp_grant_finalize (GObject *object)
{
  ChpGrant *self = CHP_GRANT (object);

  g_free (self->grant_id);
  g_free (self->device_id);
  g_free (self->task_id);
  g_free (self->label);
  g_strfreev (self->scopes);
  g_clear_pointer (&self->targets, g_array_unref);

  G_OBJECT_CLASS (chp_grant_parent_class)->finalize (object);
}

static void
chp_grant_class_init (ChpGrantClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = chp_grant_finalize;
}

static void
chp_grant_init (ChpGrant *self)
{
  self->targets = g_array_new (FALSE, TRUE, sizeof (ChpGrantTarget));
  g_array_set_clear_func (self->targets, clear_target);
}

/* A string member that is shown or used as a key: present (unless optional), UTF-8 (json-glib and
 * our frame reader guarantee that), one line, bounded. */
static gboolean
take_string (JsonObject  *object,
             const char  *member,
             gsize        max_len,
             gboolean     optional,
             char       **out,
             GError     **error)
{
  JsonNode *node = json_object_get_member (object, member);
  const char *value;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    {
      if (optional)
        {
          *out = g_strdup ("");
          return TRUE;
        }
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                   "grant: %s is missing", member);
      return FALSE;
    }

  if (json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                   "grant: %s is not a string", member);
      return FALSE;
    }

  value = json_node_get_string (node);
  if (strlen (value) > max_len || strpbrk (value, "\n\r") != NULL)
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                   "grant: %s is too long or not one line", member);
      return FALSE;
    }

  *out = g_strdup (value);
  return TRUE;
}

static gboolean
take_int (JsonObject  *object,
          const char  *member,
          gint64      *out,
          GError     **error)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      (json_node_get_value_type (node) != G_TYPE_INT64 &&
       json_node_get_value_type (node) != G_TYPE_DOUBLE))
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                   "grant: %s is not a number", member);
      return FALSE;
    }

  *out = json_node_get_int (node);
  return TRUE;
}

static gboolean
parse_target (JsonNode        *node,
              ChpGrantTarget  *target,
              GError         **error)
{
  JsonObject *object;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error_literal (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                           "grant: a target is not an object");
      return FALSE;
    }

  object = json_node_get_object (node);
  return take_int (object, "tabId", &target->tab_id, error) &&
         take_int (object, "frameId", &target->frame_id, error) &&
         take_string (object, "documentId", MAX_SHORT, TRUE, &target->document_id, error) &&
         take_string (object, "origin", MAX_SHORT, FALSE, &target->origin, error) &&
         take_string (object, "url", MAX_URL, TRUE, &target->url, error) &&
         take_string (object, "title", MAX_SHORT * 4, TRUE, &target->title, error);
}

/**
 * chp_grant_new_from_json:
 * @device_id: the device whose connection reported it; a grant never names its own device
 *
 * Returns: (transfer full) (nullable): the grant, or %NULL with %CHP_PROTOCOL_ERROR_INVALID_PARAMS
 */
ChpGrant *
chp_grant_new_from_json (const char  *device_id,
                         JsonObject  *object,
                         GError     **error)
{
  g_autoptr(ChpGrant) self = g_object_new (CHP_TYPE_GRANT, NULL);
  g_autoptr(GStrvBuilder) scopes = g_strv_builder_new ();
  JsonArray *array;

  g_return_val_if_fail (device_id != NULL, NULL);
  g_return_val_if_fail (object != NULL, NULL);

  self->device_id = g_strdup (device_id);
  if (!take_string (object, "grantId", MAX_SHORT, FALSE, &self->grant_id, error) ||
      !take_string (object, "taskId", MAX_SHORT, TRUE, &self->task_id, error) ||
      !take_string (object, "label", MAX_SHORT, TRUE, &self->label, error) ||
      !take_int (object, "createdAt", &self->created_at, error) ||
      !take_int (object, "expiresAt", &self->expires_at, error))
    return NULL;

  if (*self->grant_id == '\0')
    {
      g_set_error_literal (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                           "grant: grantId is empty");
      return NULL;
    }

  array = chp_json_get_array (object, "scopes");
  if (array == NULL || json_array_get_length (array) > MAX_SCOPES)
    {
      g_set_error_literal (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                           "grant: scopes is not a short array");
      return NULL;
    }
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *node = json_array_get_element (array, i);

      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING ||
          strlen (json_node_get_string (node)) > MAX_SHORT)
        {
          g_set_error_literal (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                               "grant: a scope is not a short string");
          return NULL;
        }
      g_strv_builder_add (scopes, json_node_get_string (node));
    }
  self->scopes = g_strv_builder_end (scopes);

  array = chp_json_get_array (object, "targets");
  if (array == NULL || json_array_get_length (array) > MAX_TARGETS)
    {
      g_set_error_literal (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                           "grant: targets is not a short array");
      return NULL;
    }
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      ChpGrantTarget target = { 0 };

      if (!parse_target (json_array_get_element (array, i), &target, error))
        {
          clear_target (&target);
          return NULL;
        }
      g_array_append_val (self->targets, target);
    }

  return g_steal_pointer (&self);
}

const char *
chp_grant_get_id (ChpGrant *self)
{
  g_return_val_if_fail (CHP_IS_GRANT (self), NULL);
  return self->grant_id;
}

const char *
chp_grant_get_device_id (ChpGrant *self)
{
  g_return_val_if_fail (CHP_IS_GRANT (self), NULL);
  return self->device_id;
}

const char *
chp_grant_get_label (ChpGrant *self)
{
  g_return_val_if_fail (CHP_IS_GRANT (self), NULL);
  return self->label;
}

const char *
chp_grant_get_task_id (ChpGrant *self)
{
  g_return_val_if_fail (CHP_IS_GRANT (self), NULL);
  return self->task_id;
}

const char * const *
chp_grant_get_scopes (ChpGrant *self)
{
  g_return_val_if_fail (CHP_IS_GRANT (self), NULL);
  return (const char * const *) self->scopes;
}

guint
chp_grant_get_n_targets (ChpGrant *self)
{
  g_return_val_if_fail (CHP_IS_GRANT (self), 0);
  return self->targets->len;
}

const ChpGrantTarget *
chp_grant_get_target (ChpGrant *self,
                      guint     index)
{
  g_return_val_if_fail (CHP_IS_GRANT (self), NULL);
  g_return_val_if_fail (index < self->targets->len, NULL);
  return &g_array_index (self->targets, ChpGrantTarget, index);
}

gint64
chp_grant_get_created_at (ChpGrant *self)
{
  g_return_val_if_fail (CHP_IS_GRANT (self), 0);
  return self->created_at;
}

/* Milliseconds since the Unix epoch, as on the wire. */
gint64
chp_grant_get_expires_at (ChpGrant *self)
{
  g_return_val_if_fail (CHP_IS_GRANT (self), 0);
  return self->expires_at;
}

gboolean
chp_grant_has_scope (ChpGrant   *self,
                     const char *scope)
{
  g_return_val_if_fail (CHP_IS_GRANT (self), FALSE);
  return g_strv_contains ((const char * const *) self->scopes, scope);
}

/* For the test harness and, later, the agent's browser_tabs: the same shape the extension sent,
 * plus the device. */
JsonNode *
chp_grant_to_json (ChpGrant *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  g_return_val_if_fail (CHP_IS_GRANT (self), NULL);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "grantId");
  json_builder_add_string_value (builder, self->grant_id);
  json_builder_set_member_name (builder, "deviceId");
  json_builder_add_string_value (builder, self->device_id);
  json_builder_set_member_name (builder, "taskId");
  json_builder_add_string_value (builder, self->task_id);
  json_builder_set_member_name (builder, "label");
  json_builder_add_string_value (builder, self->label);
  json_builder_set_member_name (builder, "scopes");
  json_builder_begin_array (builder);
  for (guint i = 0; self->scopes[i] != NULL; i++)
    json_builder_add_string_value (builder, self->scopes[i]);
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "targets");
  json_builder_begin_array (builder);
  for (guint i = 0; i < self->targets->len; i++)
    {
      const ChpGrantTarget *target = &g_array_index (self->targets, ChpGrantTarget, i);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "tabId");
      json_builder_add_int_value (builder, target->tab_id);
      json_builder_set_member_name (builder, "frameId");
      json_builder_add_int_value (builder, target->frame_id);
      json_builder_set_member_name (builder, "origin");
      json_builder_add_string_value (builder, target->origin);
      json_builder_set_member_name (builder, "url");
      json_builder_add_string_value (builder, target->url);
      json_builder_set_member_name (builder, "title");
      json_builder_add_string_value (builder, target->title);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "createdAt");
  json_builder_add_int_value (builder, self->created_at);
  json_builder_set_member_name (builder, "expiresAt");
  json_builder_add_int_value (builder, self->expires_at);
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}
