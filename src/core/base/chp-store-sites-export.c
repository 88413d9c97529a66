/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-sites-export.c: the site memory as one JSON document the person can read or keep:
 * {"sites": [{origin, visits, lastUsed, ready, signin, endpoints: […], controls: […],
 * recipes: […]}]}. Only what a person could be shown: forgotten sites and controls not yet known
 * by label (a hash and a count) are left out. Endpoints and recipes are written in the
 * allowlist's own form, so an export reads as the updates it was learned from. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-sites-private.h"

#include <glib/gi18n.h>
#include <string.h>

/* A stored JSON text as a node, or null: the texts were written by the merge. */
static void
add_json_text (JsonBuilder *builder,
               const char  *name,
               const char  *text)
{
  JsonNode *node = text != NULL ? json_from_string (text, NULL) : NULL;

  json_builder_set_member_name (builder, name);
  if (node != NULL)
    json_builder_add_value (builder, node);
  else
    json_builder_add_null_value (builder);
}

static void
add_credential (JsonBuilder *builder,
                const char  *credential)
{
  json_builder_set_member_name (builder, "credential");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "kind");
  if (g_str_has_prefix (credential, "header:"))
    {
      json_builder_add_string_value (builder, "header");
      json_builder_set_member_name (builder, "header");
      json_builder_add_string_value (builder, credential + strlen ("header:"));
    }
  else
    json_builder_add_string_value (builder, credential);
  json_builder_end_object (builder);
}

static void
add_endpoint (JsonBuilder     *builder,
              ChpSiteEndpoint *endpoint)
{
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "entryId");
  json_builder_add_string_value (builder, endpoint->entry_id);
  json_builder_set_member_name (builder, "method");
  json_builder_add_string_value (builder, endpoint->method);
  json_builder_set_member_name (builder, "pathTemplate");
  json_builder_add_string_value (builder, endpoint->path_template);
  add_json_text (builder, "queryKeys", endpoint->query_keys);
  add_json_text (builder, "body", endpoint->body_shape);
  add_json_text (builder, "response", endpoint->response_shape);
  add_credential (builder, endpoint->credential);
  json_builder_set_member_name (builder, "frame");
  json_builder_add_string_value (builder, endpoint->frame);
  json_builder_set_member_name (builder, "sampleStatus");
  json_builder_add_int_value (builder, endpoint->sample_status);
  json_builder_set_member_name (builder, "confidence");
  json_builder_add_double_value (builder, endpoint->confidence);
  json_builder_set_member_name (builder, "successes");
  json_builder_add_int_value (builder, endpoint->successes);
  json_builder_set_member_name (builder, "misses");
  json_builder_add_int_value (builder, endpoint->misses);
  json_builder_set_member_name (builder, "quarantined");
  json_builder_add_boolean_value (builder, endpoint->quarantined);
  json_builder_set_member_name (builder, "learnedAt");
  json_builder_add_int_value (builder, endpoint->learned_at);
  json_builder_set_member_name (builder, "lastUsed");
  json_builder_add_int_value (builder, endpoint->last_used);
  json_builder_end_object (builder);
}

static void
add_control (JsonBuilder    *builder,
             ChpSiteControl *control)
{
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "role");
  json_builder_add_string_value (builder, control->role);
  json_builder_set_member_name (builder, "label");
  json_builder_add_string_value (builder, control->label);
  json_builder_set_member_name (builder, "key");
  if (control->key != NULL)
    json_builder_add_string_value (builder, control->key);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "visits");
  json_builder_add_int_value (builder, control->visits);
  json_builder_end_object (builder);
}

/* A recipe as it was saved: its steps and params in the allowlist's form. */
static void
add_recipe (JsonBuilder   *builder,
            ChpSiteRecipe *recipe)
{
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, recipe->name);
  add_json_text (builder, "params", recipe->params);
  add_json_text (builder, "steps", recipe->steps);
  json_builder_set_member_name (builder, "savedAt");
  json_builder_add_int_value (builder, recipe->saved_at);
  json_builder_set_member_name (builder, "lastUsed");
  json_builder_add_int_value (builder, recipe->last_used);
  json_builder_end_object (builder);
}

static gboolean
add_site (ChpStore     *self,
          JsonBuilder  *builder,
          ChpSiteInfo  *info,
          GError      **error)
{
  g_autoptr(GPtrArray) endpoints = chp_store_sites_read_endpoints (self, info->origin, error);
  g_autoptr(GPtrArray) controls = NULL;
  g_autoptr(GPtrArray) recipes = NULL;

  if (endpoints == NULL)
    return FALSE;
  controls = chp_store_sites_read_controls (self, info->origin, error);
  if (controls == NULL)
    return FALSE;
  recipes = chp_store_sites_read_recipes (self, info->origin, error);
  if (recipes == NULL)
    return FALSE;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "origin");
  json_builder_add_string_value (builder, info->origin);
  json_builder_set_member_name (builder, "visits");
  json_builder_add_int_value (builder, info->visits);
  json_builder_set_member_name (builder, "lastUsed");
  json_builder_add_int_value (builder, info->last_used);
  add_json_text (builder, "ready", info->ready);
  add_json_text (builder, "signin", info->signin);

  json_builder_set_member_name (builder, "endpoints");
  json_builder_begin_array (builder);
  for (guint i = 0; i < endpoints->len; i++)
    add_endpoint (builder, endpoints->pdata[i]);
  json_builder_end_array (builder);

  json_builder_set_member_name (builder, "controls");
  json_builder_begin_array (builder);
  for (guint i = 0; i < controls->len; i++)
    {
      ChpSiteControl *control = controls->pdata[i];

      if (control->label != NULL)
        add_control (builder, control);
    }
  json_builder_end_array (builder);

  json_builder_set_member_name (builder, "recipes");
  json_builder_begin_array (builder);
  for (guint i = 0; i < recipes->len; i++)
    add_recipe (builder, recipes->pdata[i]);
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  return TRUE;
}

static gpointer
export_sites_job (ChpStore  *self,
                  gpointer   data,
                  GError   **error)
{
  const char *origin = data;
  g_autoptr(GPtrArray) infos = chp_store_sites_read_infos (self, origin, FALSE, error);
  g_autoptr(JsonBuilder) builder = NULL;

  if (infos == NULL)
    return NULL;
  if (origin != NULL && infos->len == 0)
    {
      g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND,
                   _("Chaperone remembers nothing of %s"), origin);
      return NULL;
    }

  builder = json_builder_new ();
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "sites");
  json_builder_begin_array (builder);
  for (guint i = 0; i < infos->len; i++)
    if (!add_site (self, builder, infos->pdata[i], error))
      return NULL;
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}

/**
 * chp_store_export_sites_async:
 * @origin: (nullable): one site, or %NULL for every remembered one (most recently used first)
 *
 * Finish with chp_store_export_sites_finish(): NOT_FOUND when @origin is not remembered.
 */
void
chp_store_export_sites_async (ChpStore            *self,
                              const char          *origin,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));

  chp_store_push_job (self, JOB_READ, export_sites_job, g_strdup (origin), g_free,
                      (GDestroyNotify) json_node_unref, chp_store_export_sites_async,
                      cancellable, callback, user_data);
}

/* Returns: (transfer full): {"sites": […]}, or %NULL with @error */
JsonNode *
chp_store_export_sites_finish (ChpStore      *self,
                               GAsyncResult  *result,
                               GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
