/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-hold.c: a hold as the extension reported it. Everything in it came from a page (the control's
 * label, the site, the field values) or from the agent (the values it typed), and goes to the
 * person's screen: each string is bounded and single-line, and the closed sets (kind, reason,
 * state) are checked, so the card words them itself instead of showing what it was sent.
 *
 * Field values are kept in memory only, for the card: never stored, never logged. A credential
 * field arrives as its length alone; the extension never sends its value. */
#include "config.h"

#include "chp-hold.h"

#include "chp-json-util.h"
#include "chp-protocol-error.h"

#include <string.h>

#define MAX_SHORT   256
#define MAX_CONTROL 1024   /* 160 code points of a label, at most 4 bytes each, and some room */
#define MAX_VALUE   1024   /* 200 code points of a field value, likewise */
#define MAX_FIELDS  30

static const char * const kinds[] = { "outward", "delete", "write", NULL };
/* "api": a call to the site's own API (browser_api), judged by its method and endpoint; "key": a
 * key press that is itself the act (Control+S's save, Enter in a message field with no Send
 * button beside it); "drop": a drag judged by where it drops (a card onto "Trash"). */
static const char * const reasons[] = {
  "form-elsewhere", "form-submit", "label", "api", "key", "drop", NULL
};
static const char * const states[] = { "held", "done", "declined", "changed", "expired", "failed",
                                       NULL };

typedef struct
{
  char   *name;
  char   *value;          /* NULL for a credential field */
  gint64  secret_length;  /* -1 unless a credential field */
} Field;

struct _ChpHold
{
  GObject parent_instance;

  char *hold_id;
  char *device_id;
  gint64 tab_id;
  char *state;
  char *kind;
  char *reason;
  char *word;
  char *control;
  char *source;         /* what the act starts from (the dragged element, a key's field), perhaps
                         * unnamed (""); NULL for an act that has none */
  char *site;
  char *signature;
  char *error;
  gint64 created_at;
  GArray *fields;       /* Field */
  JsonNode *changes;    /* what the approved act changed, for the agent; NULL until done */
};

enum {
  PROP_0,
  PROP_STATE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (ChpHold, chp_hold, G_TYPE_OBJECT)

static void
field_clear (gpointer data)
{
  Field *field = data;

  g_free (field->name);
  g_free (field->value);
}

static void
chp_hold_finalize (GObject *object)
{
  ChpHold *self = CHP_HOLD (object);

  g_free (self->hold_id);
  g_free (self->device_id);
  g_free (self->state);
  g_free (self->kind);
  g_free (self->reason);
  g_free (self->word);
  g_free (self->control);
  g_free (self->source);
  g_free (self->site);
  g_free (self->signature);
  g_free (self->error);
  g_clear_pointer (&self->fields, g_array_unref);
  g_clear_pointer (&self->changes, json_node_unref);

  G_OBJECT_CLASS (chp_hold_parent_class)->finalize (object);
}

static void
chp_hold_get_property (GObject    *object,
                       guint       prop_id,
                       GValue     *value,
                       GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_STATE:
      g_value_set_string (value, CHP_HOLD (object)->state);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_hold_class_init (ChpHoldClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = chp_hold_finalize;
  object_class->get_property = chp_hold_get_property;

  properties[PROP_STATE] =
    g_param_spec_string ("state", NULL, NULL, "held",
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
chp_hold_init (ChpHold *self)
{
  self->fields = g_array_new (FALSE, TRUE, sizeof (Field));
  g_array_set_clear_func (self->fields, field_clear);
}

static gboolean
bad (GError     **error,
     const char  *what)
{
  g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS, "hold: %s", what);
  return FALSE;
}

/* A single-line string of at most @max_len bytes; absent or null reads as "". */
static gboolean
take_string (JsonObject  *object,
             const char  *member,
             gsize        max_len,
             char       **out,
             GError     **error)
{
  JsonNode *node = json_object_get_member (object, member);
  const char *value = "";

  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      if (json_node_get_value_type (node) != G_TYPE_STRING)
        return bad (error, member);
      value = json_node_get_string (node);
    }

  if (strlen (value) > max_len || strpbrk (value, "\n\r") != NULL)
    return bad (error, member);

  *out = g_strdup (value);
  return TRUE;
}

/* take_string () for a member that may be absent: then @out stays %NULL. */
static gboolean
take_optional_string (JsonObject  *object,
                      const char  *member,
                      gsize        max_len,
                      char       **out,
                      GError     **error)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  return take_string (object, member, max_len, out, error);
}

static gboolean
take_fields (ChpHold     *self,
             JsonObject  *object,
             GError     **error)
{
  JsonArray *array = chp_json_get_array (object, "fields");

  if (json_object_has_member (object, "fields") && array == NULL)
    return bad (error, "fields");
  if (array == NULL)
    return TRUE;
  if (json_array_get_length (array) > MAX_FIELDS)
    return bad (error, "too many fields");

  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *node = json_array_get_element (array, i);
      JsonObject *entry;
      Field field = { NULL, NULL, -1 };

      if (!JSON_NODE_HOLDS_OBJECT (node))
        return bad (error, "fields");
      entry = json_node_get_object (node);
      if (!take_string (entry, "name", MAX_SHORT, &field.name, error))
        return FALSE;

      if (chp_json_get_bool (entry, "secret", FALSE))
        {
          field.secret_length = chp_json_get_int (entry, "length", -1);
          /* A credential field with a value on it is a broken extension: refuse the whole hold
           * rather than risk showing (or keeping) a password. */
          if (field.secret_length < 0 || json_object_has_member (entry, "value"))
            {
              g_free (field.name);
              return bad (error, "secret field");
            }
        }
      else if (!take_string (entry, "value", MAX_VALUE, &field.value, error))
        {
          g_free (field.name);
          return FALSE;
        }

      g_array_append_val (self->fields, field);
    }

  return TRUE;
}

/* Returns: (transfer full) (nullable): the hold in @object (a `hold.changed` event's data) */
ChpHold *
chp_hold_new_from_json (const char  *device_id,
                        JsonObject  *object,
                        GError     **error)
{
  g_autoptr(ChpHold) self = g_object_new (CHP_TYPE_HOLD, NULL);
  JsonNode *changes;

  g_return_val_if_fail (device_id != NULL, NULL);
  g_return_val_if_fail (object != NULL, NULL);

  self->device_id = g_strdup (device_id);
  self->tab_id = chp_json_get_int (object, "tabId", -1);
  self->created_at = chp_json_get_int (object, "createdAt", 0);

  if (!take_string (object, "holdId", 64, &self->hold_id, error) ||
      !take_string (object, "state", MAX_SHORT, &self->state, error) ||
      !take_string (object, "kind", MAX_SHORT, &self->kind, error) ||
      !take_string (object, "reason", MAX_SHORT, &self->reason, error) ||
      !take_string (object, "word", MAX_SHORT, &self->word, error) ||
      !take_string (object, "control", MAX_CONTROL, &self->control, error) ||
      !take_optional_string (object, "source", MAX_CONTROL, &self->source, error) ||
      !take_string (object, "site", MAX_SHORT * 2, &self->site, error) ||
      !take_string (object, "signature", 64, &self->signature, error) ||
      !take_string (object, "error", MAX_SHORT, &self->error, error) ||
      !take_fields (self, object, error))
    return NULL;

  if (*self->hold_id == '\0')
    {
      bad (error, "holdId is missing");
      return NULL;
    }
  if (!g_strv_contains (kinds, self->kind))
    {
      bad (error, "unknown kind");
      return NULL;
    }
  if (!g_strv_contains (reasons, self->reason))
    {
      bad (error, "unknown reason");
      return NULL;
    }
  if (!g_strv_contains (states, self->state))
    {
      bad (error, "unknown state");
      return NULL;
    }

  changes = json_object_get_member (object, "changes");
  if (changes != NULL && JSON_NODE_HOLDS_OBJECT (changes))
    self->changes = json_node_copy (changes);

  return g_steal_pointer (&self);
}

/* Takes @newer's state and outcome; what was held never changes. TRUE when the state did. */
gboolean
chp_hold_update (ChpHold *self,
                 ChpHold *newer)
{
  g_return_val_if_fail (CHP_IS_HOLD (self), FALSE);
  g_return_val_if_fail (CHP_IS_HOLD (newer), FALSE);

  if (g_strcmp0 (self->state, newer->state) == 0)
    return FALSE;

  g_free (self->error);
  self->error = g_strdup (newer->error);
  g_clear_pointer (&self->changes, json_node_unref);
  if (newer->changes != NULL)
    self->changes = json_node_copy (newer->changes);

  g_free (self->state);
  self->state = g_strdup (newer->state);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
  return TRUE;
}

#define GETTER(type, field) \
  type chp_hold_get_##field (ChpHold *self) \
  { \
    g_return_val_if_fail (CHP_IS_HOLD (self), (type) 0); \
    return self->field; \
  }

GETTER (const char *, device_id)
GETTER (gint64, tab_id)
GETTER (const char *, state)
GETTER (const char *, kind)
GETTER (const char *, reason)
GETTER (const char *, word)
GETTER (const char *, control)
GETTER (const char *, site)
GETTER (const char *, signature)
GETTER (const char *, error)
GETTER (gint64, created_at)
GETTER (JsonNode *, changes)

const char *
chp_hold_get_id (ChpHold *self)
{
  g_return_val_if_fail (CHP_IS_HOLD (self), NULL);
  return self->hold_id;
}

/**
 * chp_hold_get_source:
 *
 * Returns: (nullable): what the act starts from, as the page names it (the dragged element of a
 *   drop, the field a sending key is pressed in; "" when it has no name), or %NULL for an act
 *   that has none
 */
const char *
chp_hold_get_source (ChpHold *self)
{
  g_return_val_if_fail (CHP_IS_HOLD (self), NULL);
  return self->source;
}

/**
 * chp_hold_dup_act_text:
 *
 * The held control as an agent reads it, in English, as the page names it: the control alone,
 * or with the act's source — `"Order 4411" onto "Trash"` for a drop, `Enter in "Message" (send)`
 * and `Control+s (save)` for a key. (The person's card words the same parts in the app's
 * language: chp-hold-row.c.) An extension from before `source` sent these words whole, as the
 * control: they are said as they came.
 *
 * Returns: (transfer full): the text
 */
char *
chp_hold_dup_act_text (ChpHold *self)
{
  gboolean key;

  g_return_val_if_fail (CHP_IS_HOLD (self), NULL);

  if (g_str_equal (self->reason, "drop") && self->source != NULL)
    return g_strdup_printf ("\"%s\" onto \"%s\"", self->source, self->control);
  key = g_str_equal (self->reason, "key");
  if (key && self->source != NULL)
    return g_strdup_printf ("%s in \"%s\" (send)", self->control, self->source);
  if (key && g_str_equal (self->word, "save") && !g_str_has_suffix (self->control, " (save)"))
    return g_strdup_printf ("%s (save)", self->control);
  return g_strdup (self->control);
}

guint
chp_hold_get_n_fields (ChpHold *self)
{
  g_return_val_if_fail (CHP_IS_HOLD (self), 0);
  return self->fields->len;
}

/**
 * chp_hold_get_field:
 * @value: (out) (optional): the value, %NULL for a credential field
 * @secret_length: (out) (optional): a credential field's length in characters, else -1
 */
gboolean
chp_hold_get_field (ChpHold     *self,
                    guint        index,
                    const char **name,
                    const char **value,
                    gint64      *secret_length)
{
  Field *field;

  g_return_val_if_fail (CHP_IS_HOLD (self), FALSE);

  if (index >= self->fields->len)
    return FALSE;

  field = &g_array_index (self->fields, Field, index);
  if (name != NULL)
    *name = field->name;
  if (value != NULL)
    *value = field->value;
  if (secret_length != NULL)
    *secret_length = field->secret_length;
  return TRUE;
}

gboolean
chp_hold_is_held (ChpHold *self)
{
  g_return_val_if_fail (CHP_IS_HOLD (self), FALSE);
  return g_strcmp0 (self->state, "held") == 0;
}

/* The hold as an agent may see it (its own values back, credential fields as lengths). */
JsonNode *
chp_hold_to_json (ChpHold *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  g_return_val_if_fail (CHP_IS_HOLD (self), NULL);

  json_builder_begin_object (builder);
#define MEMBER(name, value) \
  json_builder_set_member_name (builder, name); \
  json_builder_add_string_value (builder, value)
  MEMBER ("state", self->state);
  MEMBER ("kind", self->kind);
  MEMBER ("control", self->control);
  if (self->source != NULL)
    {
      MEMBER ("source", self->source);
    }
  MEMBER ("site", self->site);
#undef MEMBER
  json_builder_set_member_name (builder, "fields");
  json_builder_begin_array (builder);
  for (guint i = 0; i < self->fields->len; i++)
    {
      Field *field = &g_array_index (self->fields, Field, i);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, field->name);
      if (field->value != NULL)
        {
          json_builder_set_member_name (builder, "value");
          json_builder_add_string_value (builder, field->value);
        }
      else
        {
          json_builder_set_member_name (builder, "secret");
          json_builder_add_boolean_value (builder, TRUE);
          json_builder_set_member_name (builder, "length");
          json_builder_add_int_value (builder, field->secret_length);
        }
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}
