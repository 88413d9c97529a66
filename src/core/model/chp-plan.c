/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-plan.c: a plan is the agent's words (its summaries) checked for shape, never for truth: the
 * person reads them on the card and decides. What a plan can cover is fixed here, not by the
 * agent: only "create" and "edit" steps exist, and a step covers one item saved on its own site
 * (a write that only opens its editor spends none: chp-tool-act.c). The extension still judges
 * each act from the page, and a delete, a message or a payment is held whatever plan there is. */
#include "config.h"

#include "chp-plan.h"

#include "chp-json-util.h"
#include "chp-protocol-error.h"

#include <string.h>

#define MAX_SUMMARY_CHARS 200
#define MAX_SITE_BYTES    253

static const char * const step_kinds[] = { "create", "edit", NULL };

typedef struct
{
  char     *kind;
  char     *site;
  char     *summary;
  gboolean  used;
} Step;

struct _ChpPlan
{
  GObject parent_instance;

  char *plan_id;
  char *session_id;
  char *client_name;
  char *summary;
  char *state;        /* waiting, approved, declined, ended */
  char *end_reason;   /* used, expired, stopped, disconnected; NULL while live */
  gint64 expires_at;  /* wall clock, ms; 0 until approved */
  GArray *steps;      /* Step */
};

enum {
  PROP_0,
  PROP_STATE,
  PROP_USED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (ChpPlan, chp_plan, G_TYPE_OBJECT)

static void
step_clear (gpointer data)
{
  Step *step = data;

  g_free (step->kind);
  g_free (step->site);
  g_free (step->summary);
}

static void
chp_plan_finalize (GObject *object)
{
  ChpPlan *self = CHP_PLAN (object);

  g_free (self->plan_id);
  g_free (self->session_id);
  g_free (self->client_name);
  g_free (self->summary);
  g_free (self->state);
  g_free (self->end_reason);
  g_clear_pointer (&self->steps, g_array_unref);

  G_OBJECT_CLASS (chp_plan_parent_class)->finalize (object);
}

static void
chp_plan_get_property (GObject    *object,
                       guint       prop_id,
                       GValue     *value,
                       GParamSpec *pspec)
{
  ChpPlan *self = CHP_PLAN (object);

  switch (prop_id)
    {
    case PROP_STATE:
      g_value_set_string (value, self->state);
      break;

    case PROP_USED:
      g_value_set_uint (value, chp_plan_get_n_used (self));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_plan_class_init (ChpPlanClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = chp_plan_finalize;
  object_class->get_property = chp_plan_get_property;

  properties[PROP_STATE] =
    g_param_spec_string ("state", NULL, NULL, "waiting",
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* Steps used so far: the "step N of M" the app shows. */
  properties[PROP_USED] =
    g_param_spec_uint ("used", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
chp_plan_init (ChpPlan *self)
{
  self->state = g_strdup ("waiting");
  self->steps = g_array_new (FALSE, TRUE, sizeof (Step));
  g_array_set_clear_func (self->steps, step_clear);
}

static gboolean
invalid (GError     **error,
         const char  *message)
{
  g_set_error_literal (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS, message);
  return FALSE;
}

/* A one-line text of 1 to MAX_SUMMARY_CHARS characters, as the card shows it. */
static char *
summary_of (JsonObject  *object,
            GError     **error)
{
  const char *text = chp_json_get_string (object, "summary");
  g_autofree char *line = NULL;

  if (text == NULL || !g_utf8_validate (text, -1, NULL))
    {
      invalid (error, "summary must be text");
      return NULL;
    }
  line = g_strstrip (g_strdup (text));
  if (*line == '\0' || g_utf8_strlen (line, -1) > MAX_SUMMARY_CHARS ||
      strpbrk (line, "\n\r\t") != NULL)
    {
      invalid (error, "a summary is one line of 1 to 200 characters");
      return NULL;
    }
  return g_steal_pointer (&line);
}

/* "example.com", "Example.COM." or "https://example.com/path" → "example.com"; else NULL. */
static char *
site_of (const char *text)
{
  g_autofree char *host = NULL;
  gsize len;

  if (text == NULL)
    return NULL;

  if (strstr (text, "://") != NULL)
    {
      g_autoptr(GUri) uri = g_uri_parse (text, G_URI_FLAGS_NONE, NULL);

      if (uri == NULL || g_uri_get_host (uri) == NULL)
        return NULL;
      host = g_ascii_strdown (g_uri_get_host (uri), -1);
    }
  else
    host = g_ascii_strdown (text, -1);

  len = strlen (host);
  if (len > 0 && host[len - 1] == '.')
    host[--len] = '\0';
  if (len == 0 || len > MAX_SITE_BYTES || host[0] == '.' || host[0] == '-')
    return NULL;
  for (gsize i = 0; i < len; i++)
    if (!g_ascii_isalnum (host[i]) && host[i] != '.' && host[i] != '-')
      return NULL;
  if (strstr (host, "..") != NULL)
    return NULL;
  /* A step names a site, not the whole web: a single label would match every host under it. */
  if (strchr (host, '.') == NULL && g_strcmp0 (host, "localhost") != 0)
    return NULL;

  return g_steal_pointer (&host);
}

/* @host is @site or one of its subdomains. */
gboolean
chp_plan_site_matches (const char *site,
                       const char *host)
{
  gsize site_len, host_len;

  if (site == NULL || host == NULL)
    return FALSE;

  site_len = strlen (site);
  host_len = strlen (host);
  if (g_ascii_strcasecmp (site, host) == 0)
    return TRUE;
  return host_len > site_len + 1 && host[host_len - site_len - 1] == '.' &&
         g_ascii_strcasecmp (host + host_len - site_len, site) == 0;
}

/**
 * chp_plan_new_from_args:
 * @args: browser_plan's arguments, `{summary, steps: [{kind, site, summary}]}`
 *
 * Returns: (transfer full) (nullable): a waiting plan, or %NULL with
 *   %CHP_PROTOCOL_ERROR_INVALID_PARAMS saying what is wrong
 */
ChpPlan *
chp_plan_new_from_args (const char  *plan_id,
                        const char  *session_id,
                        const char  *client_name,
                        JsonObject  *args,
                        GError     **error)
{
  g_autoptr(ChpPlan) self = g_object_new (CHP_TYPE_PLAN, NULL);
  JsonArray *steps;

  g_return_val_if_fail (plan_id != NULL && args != NULL, NULL);

  self->plan_id = g_strdup (plan_id);
  self->session_id = g_strdup (session_id);
  self->client_name = g_strdup (client_name);
  self->summary = summary_of (args, error);
  if (self->summary == NULL)
    return NULL;

  steps = chp_json_get_array (args, "steps");
  if (steps == NULL || json_array_get_length (steps) == 0 ||
      json_array_get_length (steps) > CHP_PLAN_MAX_STEPS)
    {
      invalid (error, "steps must list 1 to 20 steps");
      return NULL;
    }

  for (guint i = 0; i < json_array_get_length (steps); i++)
    {
      JsonNode *node = json_array_get_element (steps, i);
      JsonObject *object;
      const char *kind;
      Step step = { NULL, NULL, NULL, FALSE };

      if (!JSON_NODE_HOLDS_OBJECT (node))
        {
          invalid (error, "each step is an object");
          return NULL;
        }
      object = json_node_get_object (node);
      kind = chp_json_get_string (object, "kind");
      if (kind == NULL || !g_strv_contains (step_kinds, kind))
        {
          invalid (error, "a step's kind is \"create\" or \"edit\": deletes, messages and "
                          "payments are never covered by a plan");
          return NULL;
        }
      step.site = site_of (chp_json_get_string (object, "site"));
      if (step.site == NULL)
        {
          invalid (error, "a step's site is a host name such as \"example.com\"");
          return NULL;
        }
      step.summary = summary_of (object, error);
      if (step.summary == NULL)
        {
          g_free (step.site);
          return NULL;
        }
      step.kind = g_strdup (kind);
      g_array_append_val (self->steps, step);
    }

  return g_steal_pointer (&self);
}

#define GETTER(type, field) \
  type chp_plan_get_##field (ChpPlan *self) \
  { \
    g_return_val_if_fail (CHP_IS_PLAN (self), (type) 0); \
    return self->field; \
  }

GETTER (const char *, session_id)
GETTER (const char *, client_name)
GETTER (const char *, summary)
GETTER (const char *, state)
GETTER (const char *, end_reason)
GETTER (gint64, expires_at)

const char *
chp_plan_get_id (ChpPlan *self)
{
  g_return_val_if_fail (CHP_IS_PLAN (self), NULL);
  return self->plan_id;
}

guint
chp_plan_get_n_steps (ChpPlan *self)
{
  g_return_val_if_fail (CHP_IS_PLAN (self), 0);
  return self->steps->len;
}

guint
chp_plan_get_n_used (ChpPlan *self)
{
  guint used = 0;

  g_return_val_if_fail (CHP_IS_PLAN (self), 0);

  for (guint i = 0; i < self->steps->len; i++)
    used += g_array_index (self->steps, Step, i).used ? 1 : 0;
  return used;
}

gboolean
chp_plan_get_step (ChpPlan     *self,
                   guint        index,
                   const char **kind,
                   const char **site,
                   const char **summary,
                   gboolean    *used)
{
  Step *step;

  g_return_val_if_fail (CHP_IS_PLAN (self), FALSE);

  if (index >= self->steps->len)
    return FALSE;
  step = &g_array_index (self->steps, Step, index);
  if (kind != NULL)
    *kind = step->kind;
  if (site != NULL)
    *site = step->site;
  if (summary != NULL)
    *summary = step->summary;
  if (used != NULL)
    *used = step->used;
  return TRUE;
}

/* Waiting for the person, or approved with steps left. */
gboolean
chp_plan_is_live (ChpPlan *self)
{
  g_return_val_if_fail (CHP_IS_PLAN (self), FALSE);
  return g_strcmp0 (self->state, "waiting") == 0 || g_strcmp0 (self->state, "approved") == 0;
}

gboolean
chp_plan_is_approved (ChpPlan *self)
{
  g_return_val_if_fail (CHP_IS_PLAN (self), FALSE);
  return g_strcmp0 (self->state, "approved") == 0;
}

/* The plan list's (and only its) way to move a plan on: approved, declined or ended. */
void
chp_plan_set_state (ChpPlan    *self,
                    const char *state,
                    const char *end_reason,
                    gint64      expires_at)
{
  g_return_if_fail (CHP_IS_PLAN (self));

  if (expires_at > 0)
    self->expires_at = expires_at;
  if (g_strcmp0 (self->state, state) == 0)
    return;
  g_free (self->end_reason);
  self->end_reason = g_strdup (end_reason);
  g_free (self->state);
  self->state = g_strdup (state);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
}

/* Returns: (transfer full): the sites of the steps not used yet, each once, %NULL-terminated */
char **
chp_plan_sites_left (ChpPlan *self)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr(GPtrArray) seen = g_ptr_array_new ();

  g_return_val_if_fail (CHP_IS_PLAN (self), NULL);

  for (guint i = 0; i < self->steps->len; i++)
    {
      Step *step = &g_array_index (self->steps, Step, i);

      if (step->used || g_ptr_array_find_with_equal_func (seen, step->site, g_str_equal, NULL))
        continue;
      g_ptr_array_add (seen, step->site);
      g_strv_builder_add (builder, step->site);
    }
  return g_strv_builder_end (builder);
}

/**
 * chp_plan_use_step:
 * @host: the host the write was made on
 *
 * Marks the first unused step whose site @host is on as used.
 *
 * Returns: that step's number (1-based), or 0 when no step is left for @host
 */
gint
chp_plan_use_step (ChpPlan    *self,
                   const char *host)
{
  g_return_val_if_fail (CHP_IS_PLAN (self), 0);

  if (!chp_plan_is_approved (self))
    return 0;

  for (guint i = 0; i < self->steps->len; i++)
    {
      Step *step = &g_array_index (self->steps, Step, i);

      if (!step->used && chp_plan_site_matches (step->site, host))
        {
          step->used = TRUE;
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_USED]);
          return (gint) i + 1;
        }
    }
  return 0;
}

JsonNode *
chp_plan_to_json (ChpPlan *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  g_return_val_if_fail (CHP_IS_PLAN (self), NULL);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "state");
  json_builder_add_string_value (builder, self->state);
  if (self->end_reason != NULL)
    {
      json_builder_set_member_name (builder, "reason");
      json_builder_add_string_value (builder, self->end_reason);
    }
  json_builder_set_member_name (builder, "step");
  json_builder_add_int_value (builder, chp_plan_get_n_used (self));
  json_builder_set_member_name (builder, "of");
  json_builder_add_int_value (builder, self->steps->len);
  if (self->expires_at > 0)
    {
      json_builder_set_member_name (builder, "expiresAt");
      json_builder_add_int_value (builder, self->expires_at);
    }
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}
