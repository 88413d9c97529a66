/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-sites-private.h: shared by the parts of the site memory — reading, listing and the
 * person's Forget/Restore (chp-store-sites.c), merging what a visit learned and an endpoint's
 * outcome (chp-store-sites-merge.c), the export (chp-store-sites-export.c) — and by the schema,
 * which purges at open. Everything here runs on the database thread. */
#pragma once

#include "chp-store-private.h"
#include "chp-store-sites.h"

G_BEGIN_DECLS

/* Bounds on what one site keeps; past them the least recently useful rows make room. */
#define CHP_SITE_MAX_ENDPOINTS 256
#define CHP_SITE_MAX_CONTROLS  400
#define CHP_SITE_MAX_RECIPES   32

/* The two functions of chp_store_set_site_policy(), copied into each job on the caller's
 * thread so that the database thread never reads the store's data. */
typedef struct
{
  ChpSiteCheckFunc check;
  ChpSiteLabelFunc label_is_personal;
} ChpSitePolicy;

G_DEFINE_AUTOPTR_CLEANUP_FUNC (sqlite3_stmt, sqlite3_finalize)

void             chp_store_sites_get_policy      (ChpStore             *self,
                                                  ChpSitePolicy        *policy);
gboolean         chp_store_sites_check           (const ChpSitePolicy  *policy,
                                                  JsonObject           *update,
                                                  GError              **error);

sqlite3_stmt    *chp_store_sites_prepare         (ChpStore             *self,
                                                  const char           *sql,
                                                  GError              **error);
gboolean         chp_store_sites_step_done       (ChpStore             *self,
                                                  sqlite3_stmt         *stmt,
                                                  GError              **error);
void             chp_store_sites_purge_at_open   (ChpStore             *self);

ChpSiteRecord   *chp_store_sites_read_record     (ChpStore             *self,
                                                  const char           *origin,
                                                  GError              **error);
GPtrArray       *chp_store_sites_read_infos      (ChpStore             *self,
                                                  const char           *origin,
                                                  gboolean              include_forgotten,
                                                  GError              **error);
ChpSiteEndpoint *chp_store_sites_read_endpoint   (ChpStore             *self,
                                                  const char           *entry_id,
                                                  GError              **error);
GPtrArray       *chp_store_sites_read_endpoints  (ChpStore             *self,
                                                  const char           *origin,
                                                  GError              **error);
GPtrArray       *chp_store_sites_read_controls   (ChpStore             *self,
                                                  const char           *origin,
                                                  GError              **error);
GPtrArray       *chp_store_sites_read_recipes    (ChpStore             *self,
                                                  const char           *origin,
                                                  GError              **error);

char            *chp_store_sites_json_text       (JsonNode             *node);

G_END_DECLS
