/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-site-list.c: the Sites list. A reload reads every site from the store (the database
 * thread) and changes the list as little as it can: a site already listed keeps its object,
 * updated in place, and the part that moved is one splice between the unchanged head and tail,
 * so a view keeps its rows and its selection. Reloads asked for while one runs make one more. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-sites"

#include "chp-site-list.h"

#include "chp-store-sites.h"

struct _ChpSiteList
{
  ChpObjectList parent_instance;

  ChpStore *store;
  GCancellable *cancellable;
  gboolean loading;
  gboolean again;
};

enum {
  SIGNAL_RELOADED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (ChpSiteList, chp_site_list, CHP_TYPE_OBJECT_LIST)

static void
chp_site_list_dispose (GObject *object)
{
  ChpSiteList *self = CHP_SITE_LIST (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->store);

  G_OBJECT_CLASS (chp_site_list_parent_class)->dispose (object);
}

static void
chp_site_list_class_init (ChpSiteListClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = chp_site_list_dispose;
  CHP_OBJECT_LIST_CLASS (klass)->item_type = CHP_TYPE_SITE;

  /**
   * ChpSiteList::reloaded:
   * @error: (nullable): why the store could not be read; the list is then unchanged
   *
   * A reload ended (after the list's own items-changed, if any).
   */
  signals[SIGNAL_RELOADED] =
    g_signal_new ("reloaded", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_ERROR);
}

static void
chp_site_list_init (ChpSiteList *self)
{
  self->cancellable = g_cancellable_new ();
}

/* Returns: (transfer full): an empty list; chp_site_list_reload() fills it */
ChpSiteList *
chp_site_list_new (ChpStore *store)
{
  ChpSiteList *self;

  g_return_val_if_fail (CHP_IS_STORE (store), NULL);

  self = g_object_new (CHP_TYPE_SITE_LIST, NULL);
  self->store = g_object_ref (store);

  return self;
}

static gboolean
has_origin (gpointer      item,
            gconstpointer origin)
{
  return g_strcmp0 (chp_site_get_origin (item), origin) == 0;
}

static const char *
info_origin (GPtrArray *infos,
             guint      i)
{
  return ((ChpSiteInfo *) g_ptr_array_index (infos, i))->origin;
}

static void
apply (ChpSiteList *self,
       GPtrArray   *infos)
{
  ChpObjectList *list = CHP_OBJECT_LIST (self);
  g_autoptr(GPtrArray) middle = g_ptr_array_new_with_free_func (g_object_unref);
  guint old_len = chp_object_list_get_len (list);
  guint head = 0, tail = 0;

  /* Every listed site takes its new numbers first, wherever it ends up. */
  for (guint i = 0; i < infos->len; i++)
    {
      ChpSite *site = chp_object_list_find (list, has_origin, info_origin (infos, i), NULL);

      if (site != NULL)
        chp_site_update (site, g_ptr_array_index (infos, i));
    }

  while (head < old_len && head < infos->len &&
         has_origin (chp_object_list_get_item_at (list, head), info_origin (infos, head)))
    head++;
  while (tail < old_len - head && tail < infos->len - head &&
         has_origin (chp_object_list_get_item_at (list, old_len - 1 - tail),
                     info_origin (infos, infos->len - 1 - tail)))
    tail++;

  if (head + tail == old_len && head + tail == infos->len)
    return;

  for (guint i = head; i < infos->len - tail; i++)
    {
      ChpSite *site = chp_object_list_find (list, has_origin, info_origin (infos, i), NULL);

      g_ptr_array_add (middle, site != NULL ? g_object_ref (site)
                                            : chp_site_new (g_ptr_array_index (infos, i)));
    }

  chp_object_list_splice (list, head, old_len - head - tail, middle->pdata, middle->len);
}

static void
list_sites_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(ChpSiteList) self = user_data;
  g_autoptr(GPtrArray) infos = NULL;
  g_autoptr(GError) error = NULL;

  infos = chp_store_list_sites_finish (CHP_STORE (source), result, &error);
  self->loading = FALSE;
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) || self->store == NULL)
    return;

  if (infos != NULL)
    apply (self, infos);
  else
    g_warning ("Could not read the remembered sites: %s", error->message);

  if (self->again)
    {
      self->again = FALSE;
      chp_site_list_reload (self);
      return;
    }

  g_signal_emit (self, signals[SIGNAL_RELOADED], 0, error);
}

/* Reads the sites again, and changes the list when the read is back. */
void
chp_site_list_reload (ChpSiteList *self)
{
  g_return_if_fail (CHP_IS_SITE_LIST (self));

  if (self->store == NULL)
    return;
  if (self->loading)
    {
      self->again = TRUE;
      return;
    }

  self->loading = TRUE;
  chp_store_list_sites_async (self->store, TRUE, self->cancellable, list_sites_cb,
                              g_object_ref (self));
}

/* Returns: (transfer none) (nullable) */
ChpSite *
chp_site_list_lookup (ChpSiteList *self,
                      const char  *origin)
{
  g_return_val_if_fail (CHP_IS_SITE_LIST (self), NULL);

  return origin != NULL ? chp_object_list_find (CHP_OBJECT_LIST (self), has_origin, origin, NULL)
                        : NULL;
}
