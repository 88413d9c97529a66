/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-sites.h: the site memory (issue 17) as the store keeps it, in chaperone.db on the
 * database thread: sites, their endpoints by shape and the controls seen on two visits. */
#pragma once

#include <json-glib/json-glib.h>

#include "chp-site-types.h"
#include "chp-store.h"

G_BEGIN_DECLS

/* What the site memory is allowed to keep is policy's to say (src/core/policy/
 * chp-site-allowlist.h), a layer the store may not include: the one who makes the store hands
 * it the two functions. Until then every merge is refused (fails closed). */
typedef gboolean (*ChpSiteCheckFunc) (JsonObject  *update,
                                      char       **bad_field,
                                      GError     **error);
typedef gboolean (*ChpSiteLabelFunc) (const char  *label);

void            chp_store_set_site_policy            (ChpStore             *self,
                                                      ChpSiteCheckFunc      check,
                                                      ChpSiteLabelFunc      label_is_personal);

void            chp_store_merge_site_async           (ChpStore             *self,
                                                      JsonObject           *update,
                                                      const char           *visit_id,
                                                      gint64                now,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
ChpSiteRecord  *chp_store_merge_site_finish          (ChpStore             *self,
                                                      GAsyncResult         *result,
                                                      GError              **error);

void            chp_store_load_site_async            (ChpStore             *self,
                                                      const char           *origin,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
ChpSiteRecord  *chp_store_load_site_finish           (ChpStore             *self,
                                                      GAsyncResult         *result,
                                                      GError              **error);

void            chp_store_list_sites_async           (ChpStore             *self,
                                                      gboolean              include_forgotten,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
GPtrArray      *chp_store_list_sites_finish          (ChpStore             *self,
                                                      GAsyncResult         *result,
                                                      GError              **error);

void            chp_store_site_endpoint_result_async (ChpStore             *self,
                                                      const char           *entry_id,
                                                      gboolean              success,
                                                      gint                  status,
                                                      JsonObject           *response_shape,
                                                      gint64                now,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
ChpSiteEndpoint *chp_store_site_endpoint_result_finish (ChpStore           *self,
                                                        GAsyncResult       *result,
                                                        GError            **error);

/* One use of an endpoint, for chp_store_site_endpoint_results_async(). */
typedef struct
{
  const char *entry_id;
  gboolean    success;
  gint        status;
} ChpSiteUse;

void            chp_store_site_endpoint_results_async (ChpStore           *self,
                                                       const ChpSiteUse   *uses,
                                                       guint               n_uses,
                                                       gint64              now,
                                                       GCancellable       *cancellable,
                                                       GAsyncReadyCallback callback,
                                                       gpointer            user_data);

void            chp_store_site_visit_async           (ChpStore             *self,
                                                      const char           *origin,
                                                      const char           *visit_id,
                                                      gint64                now,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
void            chp_store_site_recipe_used_async     (ChpStore             *self,
                                                      const char           *origin,
                                                      const char           *name,
                                                      gint64                now,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
void            chp_store_forget_site_async          (ChpStore             *self,
                                                      const char           *origin,
                                                      gint64                now,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
void            chp_store_restore_site_async         (ChpStore             *self,
                                                      const char           *origin,
                                                      gint64                now,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);

void            chp_store_export_sites_async         (ChpStore             *self,
                                                      const char           *origin,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
JsonNode       *chp_store_export_sites_finish        (ChpStore             *self,
                                                      GAsyncResult         *result,
                                                      GError              **error);

G_END_DECLS
