/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-safety-settings.c: the person's floor entries and result cap as a model the Preferences
 * window edits and the engine applies. GSettings would let any process of the user rewrite
 * them behind the person's back; the engine keeps these in the 0600 store instead, writes each
 * change there and records it in Activity. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-safety"

#include "chp-safety-settings.h"

#include "chp-frame.h"

#include <json-glib/json-glib.h>

struct _ChpSafetySettings
{
  GObject parent_instance;

  GStrv floor_blind;
  GStrv floor_hands_only;
  guint result_max_chars;
  gboolean stored;   /* the store held at least one of these */
};

enum {
  PROP_0,
  PROP_FLOOR_BLIND,
  PROP_FLOOR_HANDS_ONLY,
  PROP_RESULT_MAX_CHARS,
  N_PROPS
};

enum {
  SIGNAL_CHANGED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (ChpSafetySettings, chp_safety_settings, G_TYPE_OBJECT)

static const char * const empty_strv[] = { NULL };

static gboolean
strv_equal (const char * const *a,
            const char * const *b)
{
  return g_strv_equal (a ? a : empty_strv, b ? b : empty_strv);
}

/* Returns: whether it changed */
static gboolean
replace_strv (GStrv              *field,
              const char * const *value)
{
  if (strv_equal ((const char * const *) *field, value))
    return FALSE;
  g_strfreev (*field);
  *field = g_strdupv ((char **) (value ? value : empty_strv));
  return TRUE;
}

static void
changed (ChpSafetySettings *self,
         guint              prop_id,
         const char        *key)
{
  self->stored = TRUE;
  g_object_notify_by_pspec (G_OBJECT (self), properties[prop_id]);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0, key);
}

static void
chp_safety_settings_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  ChpSafetySettings *self = CHP_SAFETY_SETTINGS (object);

  switch (prop_id)
    {
    case PROP_FLOOR_BLIND:
      g_value_set_boxed (value, self->floor_blind);
      break;
    case PROP_FLOOR_HANDS_ONLY:
      g_value_set_boxed (value, self->floor_hands_only);
      break;
    case PROP_RESULT_MAX_CHARS:
      g_value_set_uint (value, self->result_max_chars);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_safety_settings_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  ChpSafetySettings *self = CHP_SAFETY_SETTINGS (object);

  switch (prop_id)
    {
    case PROP_RESULT_MAX_CHARS:
      chp_safety_settings_set_result_max_chars (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_safety_settings_finalize (GObject *object)
{
  ChpSafetySettings *self = CHP_SAFETY_SETTINGS (object);

  g_clear_pointer (&self->floor_blind, g_strfreev);
  g_clear_pointer (&self->floor_hands_only, g_strfreev);

  G_OBJECT_CLASS (chp_safety_settings_parent_class)->finalize (object);
}

static void
chp_safety_settings_class_init (ChpSafetySettingsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = chp_safety_settings_get_property;
  object_class->set_property = chp_safety_settings_set_property;
  object_class->finalize = chp_safety_settings_finalize;

  properties[PROP_FLOOR_BLIND] =
    g_param_spec_boxed ("floor-blind", NULL, NULL, G_TYPE_STRV,
                        G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_FLOOR_HANDS_ONLY] =
    g_param_spec_boxed ("floor-hands-only", NULL, NULL, G_TYPE_STRV,
                        G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* Writable so that the Preferences spin button binds to it directly. */
  properties[PROP_RESULT_MAX_CHARS] =
    g_param_spec_uint ("result-max-chars", NULL, NULL,
                       CHP_SAFETY_RESULT_MAX_CHARS_MIN, CHP_SAFETY_RESULT_MAX_CHARS_MAX,
                       CHP_SAFETY_RESULT_MAX_CHARS_DEFAULT,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * ChpSafetySettings::changed:
   * @key: the state key that changed (`CHP_STATE_FLOOR_BLIND`, …)
   *
   * The person changed a value; not emitted for values loaded from the store.
   */
  signals[SIGNAL_CHANGED] =
    g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
chp_safety_settings_init (ChpSafetySettings *self)
{
  self->floor_blind = g_strdupv ((char **) empty_strv);
  self->floor_hands_only = g_strdupv ((char **) empty_strv);
  self->result_max_chars = CHP_SAFETY_RESULT_MAX_CHARS_DEFAULT;
}

ChpSafetySettings *
chp_safety_settings_new (void)
{
  return g_object_new (CHP_TYPE_SAFETY_SETTINGS, NULL);
}

/* Returns: (transfer none): the person's blind entries, never %NULL */
const char * const *
chp_safety_settings_get_floor_blind (ChpSafetySettings *self)
{
  g_return_val_if_fail (CHP_IS_SAFETY_SETTINGS (self), NULL);

  return (const char * const *) self->floor_blind;
}

/* Returns: (transfer none): the person's hands-only entries, never %NULL */
const char * const *
chp_safety_settings_get_floor_hands_only (ChpSafetySettings *self)
{
  g_return_val_if_fail (CHP_IS_SAFETY_SETTINGS (self), NULL);

  return (const char * const *) self->floor_hands_only;
}

void
chp_safety_settings_set_floor (ChpSafetySettings  *self,
                               const char * const *blind,
                               const char * const *hands_only)
{
  g_return_if_fail (CHP_IS_SAFETY_SETTINGS (self));

  if (replace_strv (&self->floor_blind, blind))
    changed (self, PROP_FLOOR_BLIND, CHP_STATE_FLOOR_BLIND);
  if (replace_strv (&self->floor_hands_only, hands_only))
    changed (self, PROP_FLOOR_HANDS_ONLY, CHP_STATE_FLOOR_HANDS_ONLY);
}

static GStrv *
floor_field (ChpSafetySettings *self,
             const char        *key)
{
  if (g_strcmp0 (key, CHP_STATE_FLOOR_BLIND) == 0)
    return &self->floor_blind;
  if (g_strcmp0 (key, CHP_STATE_FLOOR_HANDS_ONLY) == 0)
    return &self->floor_hands_only;
  return NULL;
}

/* One of the two lists replaced by @updated, the other kept. */
static void
set_floor_field (ChpSafetySettings  *self,
                 GStrv              *field,
                 const char * const *updated)
{
  chp_safety_settings_set_floor (self,
    field == &self->floor_blind ? updated : (const char * const *) self->floor_blind,
    field == &self->floor_hands_only ? updated : (const char * const *) self->floor_hands_only);
}

/* @key: %CHP_STATE_FLOOR_BLIND or %CHP_STATE_FLOOR_HANDS_ONLY; @pattern as the floor reads it */
void
chp_safety_settings_add_floor_entry (ChpSafetySettings *self,
                                     const char        *key,
                                     const char        *pattern)
{
  GStrv *field;
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) updated = NULL;

  g_return_if_fail (CHP_IS_SAFETY_SETTINGS (self));
  g_return_if_fail (pattern != NULL);

  field = floor_field (self, key);
  g_return_if_fail (field != NULL);
  if (g_strv_contains ((const char * const *) *field, pattern))
    return;

  g_strv_builder_addv (builder, (const char **) *field);
  g_strv_builder_add (builder, pattern);
  updated = g_strv_builder_end (builder);
  set_floor_field (self, field, (const char * const *) updated);
}

void
chp_safety_settings_remove_floor_entry (ChpSafetySettings *self,
                                        const char        *key,
                                        const char        *pattern)
{
  GStrv *field;
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) updated = NULL;

  g_return_if_fail (CHP_IS_SAFETY_SETTINGS (self));

  field = floor_field (self, key);
  g_return_if_fail (field != NULL);

  for (guint i = 0; (*field)[i] != NULL; i++)
    if (g_strcmp0 ((*field)[i], pattern) != 0)
      g_strv_builder_add (builder, (*field)[i]);
  updated = g_strv_builder_end (builder);
  set_floor_field (self, field, (const char * const *) updated);
}

guint
chp_safety_settings_get_result_max_chars (ChpSafetySettings *self)
{
  g_return_val_if_fail (CHP_IS_SAFETY_SETTINGS (self), CHP_SAFETY_RESULT_MAX_CHARS_DEFAULT);

  return self->result_max_chars;
}

/* @max_chars: 0 for the default; clamped to the range an agent can work with */
void
chp_safety_settings_set_result_max_chars (ChpSafetySettings *self,
                                          guint              max_chars)
{
  g_return_if_fail (CHP_IS_SAFETY_SETTINGS (self));

  if (max_chars == 0)
    max_chars = CHP_SAFETY_RESULT_MAX_CHARS_DEFAULT;
  max_chars = CLAMP (max_chars, CHP_SAFETY_RESULT_MAX_CHARS_MIN, CHP_SAFETY_RESULT_MAX_CHARS_MAX);
  if (max_chars == self->result_max_chars)
    return;

  self->result_max_chars = max_chars;
  changed (self, PROP_RESULT_MAX_CHARS, CHP_STATE_RESULT_MAX_CHARS);
}

/* Whether the person's values came from the store (or were set since): FALSE on a first start,
 * when the app may import what an older version kept in GSettings. */
gboolean
chp_safety_settings_get_stored (ChpSafetySettings *self)
{
  g_return_val_if_fail (CHP_IS_SAFETY_SETTINGS (self), FALSE);

  return self->stored;
}

/* A list of strings, or NULL for anything else: a damaged value is ignored whole. */
static GStrv
parse_strv (const char *text)
{
  g_autoptr(JsonNode) node = text ? json_from_string (text, NULL) : NULL;
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  JsonArray *array;

  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    return NULL;

  array = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *element = json_array_get_element (array, i);

      if (!JSON_NODE_HOLDS_VALUE (element) || json_node_get_value_type (element) != G_TYPE_STRING)
        return NULL;
      g_strv_builder_add (builder, json_node_get_string (element));
    }

  return g_strv_builder_end (builder);
}

/**
 * chp_safety_settings_load_state:
 * @state: key → JSON text, as chp_store_load_state_finish() gives it
 *
 * Takes the stored values without emitting ::changed (they are stored already).
 */
void
chp_safety_settings_load_state (ChpSafetySettings *self,
                                GHashTable        *state)
{
  const char *text;

  g_return_if_fail (CHP_IS_SAFETY_SETTINGS (self));
  g_return_if_fail (state != NULL);

  for (guint prop = PROP_FLOOR_BLIND; prop <= PROP_FLOOR_HANDS_ONLY; prop++)
    {
      const char *key = prop == PROP_FLOOR_BLIND ? CHP_STATE_FLOOR_BLIND
                                                 : CHP_STATE_FLOOR_HANDS_ONLY;
      g_auto(GStrv) value = parse_strv (g_hash_table_lookup (state, key));

      if (value == NULL)
        continue;
      self->stored = TRUE;
      if (replace_strv (floor_field (self, key), (const char * const *) value))
        g_object_notify_by_pspec (G_OBJECT (self), properties[prop]);
    }

  if ((text = g_hash_table_lookup (state, CHP_STATE_RESULT_MAX_CHARS)) != NULL)
    {
      guint64 value = g_ascii_strtoull (text, NULL, 10);

      self->stored = TRUE;
      value = CLAMP (value, CHP_SAFETY_RESULT_MAX_CHARS_MIN, CHP_SAFETY_RESULT_MAX_CHARS_MAX);
      if (value != self->result_max_chars)
        {
          self->result_max_chars = value;
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RESULT_MAX_CHARS]);
        }
    }
}

/* Returns: (transfer full): the JSON text that the store keeps for @key */
char *
chp_safety_settings_to_state (ChpSafetySettings *self,
                              const char        *key)
{
  g_autoptr(JsonBuilder) builder = NULL;
  g_autoptr(JsonNode) root = NULL;
  GStrv *field;

  g_return_val_if_fail (CHP_IS_SAFETY_SETTINGS (self), NULL);

  if (g_strcmp0 (key, CHP_STATE_RESULT_MAX_CHARS) == 0)
    return g_strdup_printf ("%u", self->result_max_chars);

  field = floor_field (self, key);
  g_return_val_if_fail (field != NULL, NULL);

  builder = json_builder_new_immutable ();
  json_builder_begin_array (builder);
  for (guint i = 0; (*field)[i] != NULL; i++)
    json_builder_add_string_value (builder, (*field)[i]);
  json_builder_end_array (builder);
  root = json_builder_get_root (builder);

  return chp_json_to_string (root);
}
