/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-site-types.c: copy and free the site memory's records, and the endpoints' stable ids. */
#include "config.h"

#include "chp-site-types.h"

#include <string.h>

#include "chp-crypto.h"

G_DEFINE_BOXED_TYPE (ChpSiteEndpoint, chp_site_endpoint, chp_site_endpoint_copy,
                     chp_site_endpoint_free)
G_DEFINE_BOXED_TYPE (ChpSiteControl, chp_site_control, chp_site_control_copy,
                     chp_site_control_free)
G_DEFINE_BOXED_TYPE (ChpSiteRecipe, chp_site_recipe, chp_site_recipe_copy,
                     chp_site_recipe_free)
G_DEFINE_BOXED_TYPE (ChpSiteInfo, chp_site_info, chp_site_info_copy, chp_site_info_free)
G_DEFINE_BOXED_TYPE (ChpSiteRecord, chp_site_record, chp_site_record_copy, chp_site_record_free)

ChpSiteEndpoint *
chp_site_endpoint_copy (const ChpSiteEndpoint *endpoint)
{
  ChpSiteEndpoint *copy;

  g_return_val_if_fail (endpoint != NULL, NULL);

  copy = g_memdup2 (endpoint, sizeof *endpoint);
  copy->entry_id = g_strdup (endpoint->entry_id);
  copy->origin = g_strdup (endpoint->origin);
  copy->method = g_strdup (endpoint->method);
  copy->path_template = g_strdup (endpoint->path_template);
  copy->query_keys = g_strdup (endpoint->query_keys);
  copy->body_shape = g_strdup (endpoint->body_shape);
  copy->response_shape = g_strdup (endpoint->response_shape);
  copy->credential = g_strdup (endpoint->credential);
  copy->frame = g_strdup (endpoint->frame);

  return copy;
}

void
chp_site_endpoint_free (ChpSiteEndpoint *endpoint)
{
  if (endpoint == NULL)
    return;

  g_free (endpoint->entry_id);
  g_free (endpoint->origin);
  g_free (endpoint->method);
  g_free (endpoint->path_template);
  g_free (endpoint->query_keys);
  g_free (endpoint->body_shape);
  g_free (endpoint->response_shape);
  g_free (endpoint->credential);
  g_free (endpoint->frame);
  g_free (endpoint);
}

ChpSiteControl *
chp_site_control_copy (const ChpSiteControl *control)
{
  ChpSiteControl *copy;

  g_return_val_if_fail (control != NULL, NULL);

  copy = g_memdup2 (control, sizeof *control);
  copy->origin = g_strdup (control->origin);
  copy->role = g_strdup (control->role);
  copy->label = g_strdup (control->label);
  copy->key = g_strdup (control->key);

  return copy;
}

void
chp_site_control_free (ChpSiteControl *control)
{
  if (control == NULL)
    return;

  g_free (control->origin);
  g_free (control->role);
  g_free (control->label);
  g_free (control->key);
  g_free (control);
}

ChpSiteRecipe *
chp_site_recipe_copy (const ChpSiteRecipe *recipe)
{
  ChpSiteRecipe *copy;

  g_return_val_if_fail (recipe != NULL, NULL);

  copy = g_memdup2 (recipe, sizeof *recipe);
  copy->origin = g_strdup (recipe->origin);
  copy->name = g_strdup (recipe->name);
  copy->params = g_strdup (recipe->params);
  copy->steps = g_strdup (recipe->steps);

  return copy;
}

void
chp_site_recipe_free (ChpSiteRecipe *recipe)
{
  if (recipe == NULL)
    return;

  g_free (recipe->origin);
  g_free (recipe->name);
  g_free (recipe->params);
  g_free (recipe->steps);
  g_free (recipe);
}

ChpSiteInfo *
chp_site_info_copy (const ChpSiteInfo *info)
{
  ChpSiteInfo *copy;

  g_return_val_if_fail (info != NULL, NULL);

  copy = g_memdup2 (info, sizeof *info);
  copy->origin = g_strdup (info->origin);
  copy->ready = g_strdup (info->ready);
  copy->signin = g_strdup (info->signin);

  return copy;
}

void
chp_site_info_free (ChpSiteInfo *info)
{
  if (info == NULL)
    return;

  g_free (info->origin);
  g_free (info->ready);
  g_free (info->signin);
  g_free (info);
}

ChpSiteRecord *
chp_site_record_new (void)
{
  ChpSiteRecord *record = g_new0 (ChpSiteRecord, 1);

  record->endpoints = g_ptr_array_new_with_free_func ((GDestroyNotify) chp_site_endpoint_free);
  record->controls = g_ptr_array_new_with_free_func ((GDestroyNotify) chp_site_control_free);
  record->recipes = g_ptr_array_new_with_free_func ((GDestroyNotify) chp_site_recipe_free);

  return record;
}

ChpSiteRecord *
chp_site_record_copy (const ChpSiteRecord *record)
{
  ChpSiteRecord *copy;

  g_return_val_if_fail (record != NULL, NULL);

  copy = chp_site_record_new ();
  copy->info = record->info ? chp_site_info_copy (record->info) : NULL;
  for (guint i = 0; i < record->endpoints->len; i++)
    g_ptr_array_add (copy->endpoints, chp_site_endpoint_copy (record->endpoints->pdata[i]));
  for (guint i = 0; i < record->controls->len; i++)
    g_ptr_array_add (copy->controls, chp_site_control_copy (record->controls->pdata[i]));
  for (guint i = 0; record->recipes != NULL && i < record->recipes->len; i++)
    g_ptr_array_add (copy->recipes, chp_site_recipe_copy (record->recipes->pdata[i]));

  return copy;
}

void
chp_site_record_free (ChpSiteRecord *record)
{
  if (record == NULL)
    return;

  g_clear_pointer (&record->info, chp_site_info_free);
  g_clear_pointer (&record->endpoints, g_ptr_array_unref);
  g_clear_pointer (&record->controls, g_ptr_array_unref);
  g_clear_pointer (&record->recipes, g_ptr_array_unref);
  g_free (record);
}

/**
 * chp_site_entry_id:
 *
 * "e" and the first 12 hex digits of SHA-256 (origin "\n" method "\n" path_template): the same
 * endpoint has the same id on every visit and every machine, so an agent may name it and an
 * export may be compared; it says nothing the three parts do not.
 *
 * Returns: (transfer full): the id
 */
char *
chp_site_entry_id (const char *origin,
                   const char *method,
                   const char *path_template)
{
  g_autofree char *text = NULL;
  guint8 digest[32];
  GString *id;

  g_return_val_if_fail (origin != NULL && method != NULL && path_template != NULL, NULL);

  text = g_strjoin ("\n", origin, method, path_template, NULL);
  chp_sha256 (text, strlen (text), digest);

  id = g_string_sized_new (13);
  g_string_append_c (id, 'e');
  for (guint i = 0; i < 6; i++)
    g_string_append_printf (id, "%02x", digest[i]);

  return g_string_free (id, FALSE);
}
