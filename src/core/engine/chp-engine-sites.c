/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-engine-sites.c: the site memory as the person sees it (the Sites page): the list of
 * remembered sites, kept current as agents learn, and the person's Forget (undoable for a day),
 * Restore and Export. Agents reach the memory only through browser_api and the arrival card
 * (src/core/agent), which learn and read; nothing an agent calls forgets or restores a site. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-engine"

#include "chp-engine-private.h"

#include "chp-store-sites.h"

/* The list of remembered sites, made with the store (chp_engine_start_async) and read once the
 * store is open. */
ChpSiteList *
chp_engine_get_sites (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  if (self->sites == NULL && self->store != NULL)
    self->sites = chp_site_list_new (self->store);
  return self->sites;
}

/* Something learned or used a site's memory: the person's list reads it again. */
void
chp_engine_sites_changed (ChpEngine *self)
{
  g_return_if_fail (CHP_IS_ENGINE (self));

  if (self->sites != NULL)
    chp_site_list_reload (self->sites);
}

static void
site_written_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ChpEngine *self = g_task_get_source_object (task);
  g_autoptr(GError) error = NULL;

  if (!chp_store_write_finish (CHP_STORE (source), result, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  chp_engine_sites_changed (self);
  g_task_return_boolean (task, TRUE);
}

/**
 * chp_engine_forget_site_async:
 *
 * The person's Forget: the site's memory is hidden at once, never used or shown to an agent
 * again, and deleted for good a day later unless restored.
 */
void
chp_engine_forget_site_async (ChpEngine           *self,
                              const char          *origin,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, chp_engine_forget_site_async);
  chp_store_forget_site_async (self->store, origin, g_get_real_time () / 1000, cancellable,
                               site_written_cb, task);
  if (self->bridge != NULL)
    chp_bridge_audit (self->bridge, "site", "forget", "ok", NULL, 0, NULL);
}

/* The person's Undo of a Forget, within the day. */
void
chp_engine_restore_site_async (ChpEngine           *self,
                               const char          *origin,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, chp_engine_restore_site_async);
  chp_store_restore_site_async (self->store, origin, g_get_real_time () / 1000, cancellable,
                                site_written_cb, task);
  if (self->bridge != NULL)
    chp_bridge_audit (self->bridge, "site", "restore", "ok", NULL, 0, NULL);
}

gboolean
chp_engine_site_finish (ChpEngine     *self,
                        GAsyncResult  *result,
                        GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
exported_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  JsonNode *node = chp_store_export_sites_finish (CHP_STORE (source), result, &error);

  if (node == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, node, (GDestroyNotify) json_node_unref);
}

/* The person's Export: what is remembered of @origin (NULL: of every site), as JSON; shapes and
 * labels seen twice, never a value. */
void
chp_engine_export_sites_async (ChpEngine           *self,
                               const char          *origin,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, chp_engine_export_sites_async);
  chp_store_export_sites_async (self->store, origin, cancellable, exported_cb, task);
}

JsonNode *
chp_engine_export_sites_finish (ChpEngine     *self,
                                GAsyncResult  *result,
                                GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
