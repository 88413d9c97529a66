/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-sites.c: the site memory's reading side and the person's hand on it — load one
 * site, list them, count a visit, Forget (hidden at once) and Restore (within a day), and the
 * purge that deletes for good what was forgotten longer ago, on time (a timer in the main
 * context) and at open, list and restore. Merging is chp-store-sites-merge.c.
 *
 * The store's statement cache is an enum shared by every record family; site memory is written
 * once per visit, so its statements are prepared per job (microseconds) and finalized with it. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-sites-private.h"

#include <glib/gi18n.h>

#define INFO_COLUMNS \
  "SELECT s.origin, s.created_at, s.last_visit, s.last_used, s.visits, s.ready, s.signin," \
  " s.forgotten_at," \
  " (SELECT count(*) FROM site_endpoints e WHERE e.origin = s.origin)," \
  " (SELECT count(*) FROM site_controls c WHERE c.origin = s.origin AND c.label IS NOT NULL)," \
  " (SELECT count(*) FROM site_endpoints e WHERE e.origin = s.origin AND e.quarantined != 0)," \
  " (SELECT coalesce (avg (e.confidence), 0) FROM site_endpoints e WHERE e.origin = s.origin)," \
  " (SELECT count(*) FROM site_recipes r WHERE r.origin = s.origin)" \
  " FROM sites s"

#define ENDPOINT_COLUMNS \
  "SELECT entry_id, origin, method, path_template, query_keys, body_shape, response_shape," \
  " credential, frame, sample_status, confidence, successes, misses, quarantined, learned_at," \
  " last_used FROM site_endpoints"

static void arm_purge (ChpStore *self,
                       gint64    due);

static GQuark
policy_quark (void)
{
  static GQuark quark;

  if (quark == 0)
    quark = g_quark_from_static_string ("chp-store-site-policy");
  return quark;
}

/**
 * chp_store_set_site_policy:
 * @check: (nullable): what may be kept: chp_site_allowlist_check()
 * @label_is_personal: (nullable): which control labels are the person's data, never kept:
 *   chp_site_allowlist_label_is_personal()
 *
 * Call once, on the thread that uses the store, before the first merge: the purge of what the
 * person forgot is timed in that thread's main context. Without both functions every merge is
 * refused, and an endpoint result keeps no response shape.
 */
void
chp_store_set_site_policy (ChpStore         *self,
                           ChpSiteCheckFunc  check,
                           ChpSiteLabelFunc  label_is_personal)
{
  ChpSitePolicy *policy;

  g_return_if_fail (CHP_IS_STORE (self));

  policy = g_new0 (ChpSitePolicy, 1);
  policy->check = check;
  policy->label_is_personal = label_is_personal;
  g_object_set_qdata_full (G_OBJECT (self), policy_quark (), policy, g_free);

  /* Sites forgotten before this start whose day is not up yet: the first look within the hour
   * (the open purges those whose day is). */
  arm_purge (self, G_MAXINT64);
}

void
chp_store_sites_get_policy (ChpStore      *self,
                            ChpSitePolicy *policy)
{
  ChpSitePolicy *set = g_object_get_qdata (G_OBJECT (self), policy_quark ());

  *policy = set != NULL ? *set : (ChpSitePolicy) { NULL, NULL };
}

/* The allowlist's verdict as the store's error: its message names the field, never its text. */
gboolean
chp_store_sites_check (const ChpSitePolicy  *policy,
                       JsonObject           *update,
                       GError              **error)
{
  g_autoptr(GError) refused = NULL;
  g_autofree char *bad_field = NULL;

  if (policy->check == NULL || policy->label_is_personal == NULL)
    {
      g_set_error_literal (error, CHP_STORE_ERROR, CHP_STORE_ERROR_FAILED,
                           _("Site memory has no allowlist: nothing is kept"));
      return FALSE;
    }

  if (policy->check (update, &bad_field, &refused))
    return TRUE;

  g_set_error_literal (error, CHP_STORE_ERROR, CHP_STORE_ERROR_FAILED,
                       refused != NULL ? refused->message : _("The site update was refused"));
  return FALSE;
}

sqlite3_stmt *
chp_store_sites_prepare (ChpStore    *self,
                         const char  *sql,
                         GError     **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (self->db, sql, -1, &stmt, NULL);

  if (rc != SQLITE_OK)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "prepare");
      sqlite3_finalize (stmt);
      return NULL;
    }

  return stmt;
}

gboolean
chp_store_sites_step_done (ChpStore      *self,
                           sqlite3_stmt  *stmt,
                           GError       **error)
{
  return chp_store_step_done (self, stmt, _("the site memory"), error);
}

char *
chp_store_sites_json_text (JsonNode *node)
{
  g_autoptr(JsonGenerator) generator = NULL;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return NULL;

  generator = json_generator_new ();
  json_generator_set_root (generator, node);
  return json_generator_to_data (generator, NULL);
}

/* Deletes for good the sites forgotten a day or more before @now, with their endpoints and
 * controls (ON DELETE CASCADE); @deleted: how many sites went. secure_delete overwrites the
 * freed pages, so what the person forgot does not linger in the file's free space; it is set
 * on the main database only around this statement, which is rare, rather than for every trim
 * of the audit, and put back as it was (some builds of SQLite have it on by default). */
static gboolean
purge (ChpStore  *self,
       gint64     now,
       gint      *deleted,
       GError   **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autofree char *restore = NULL;
  gboolean ok;
  int rc;

  stmt = chp_store_sites_prepare (self,
                                  "DELETE FROM sites WHERE forgotten_at > 0 AND forgotten_at <= ?1",
                                  error);
  if (stmt == NULL)
    return FALSE;

  restore = g_strdup_printf ("PRAGMA main.secure_delete = %" G_GINT64_FORMAT,
                             MAX (chp_store_pragma_int (self->db, "PRAGMA main.secure_delete",
                                                        &rc), 0));
  sqlite3_bind_int64 (stmt, 1, now - CHP_SITE_RESTORE_MS);
  sqlite3_exec (self->db, "PRAGMA main.secure_delete = ON", NULL, NULL, NULL);
  ok = chp_store_sites_step_done (self, stmt, error);
  *deleted = ok ? sqlite3_changes (self->db) : 0;
  sqlite3_exec (self->db, restore, NULL, NULL, NULL);

  return ok;
}

/* The purge in a transaction of its own, then, if it deleted anything, the write-ahead log cut
 * to nothing: the forgotten rows' old pages are still in it until a checkpoint passes them, and
 * a plain checkpoint would leave their bytes in the file. Called outside any job's transaction
 * (a checkpoint cannot run inside one). */
static gboolean
purge_now (ChpStore  *self,
           gint64     now,
           GError   **error)
{
  gint deleted = 0;
  int rc;

  if (!chp_store_exec_sql (self->db, "BEGIN IMMEDIATE", error))
    return FALSE;
  if (!purge (self, now, &deleted, error) || !chp_store_exec_sql (self->db, "COMMIT", error))
    {
      sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  if (deleted == 0)
    return TRUE;

  rc = sqlite3_wal_checkpoint_v2 (self->db, "main", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
  if (rc != SQLITE_OK)
    g_message ("The forgotten sites are deleted; their old pages stay in the write-ahead log "
               "until its next checkpoint: %s", sqlite3_errstr (rc));
  return TRUE;
}

/* At open: a failure is logged and the store still opens, since the next list purges again. */
void
chp_store_sites_purge_at_open (ChpStore *self)
{
  g_autoptr(GError) error = NULL;

  if (!purge_now (self, g_get_real_time () / 1000, &error))
    g_warning ("Could not delete the forgotten sites: %s", error->message);
}

/* ---- the purge on time --------------------------------------------------------------------
 * The database thread runs only what is queued, so a forgotten site's day is kept by a timer in
 * the main context that uses the store (chp_store_set_site_policy()'s): when the earliest
 * forgotten site's day is up, it queues the purge, which says when the next one's is. A timer
 * counts on the monotonic clock, which stops while the computer sleeps: none waits more than an
 * hour, and the purge goes by the real clock. Nothing forgotten, no timer. */

#define PURGE_WAIT_MAX_MS ((gint64) 3600 * 1000)

typedef struct
{
  GWeakRef      store;
  GMainContext *context;
  GSource      *source;   /* while armed */
  gint64        due;      /* what it is armed for: ms since the epoch */
} PurgeTimer;

/* One purge, queued by the timer; its outcome comes back to the timer's context. Shared by the
 * job and that callback (atomic reference counts): either may let go of it last. */
typedef struct
{
  GWeakRef      store;
  GMainContext *context;
  gint64        next;     /* when the next day is up; G_MAXINT64 for none */
} PurgeTick;

static void
purge_timer_free (PurgeTimer *timer)
{
  if (timer->source != NULL)
    g_source_destroy (timer->source);
  g_clear_pointer (&timer->source, g_source_unref);
  g_weak_ref_clear (&timer->store);
  g_main_context_unref (timer->context);
  g_free (timer);
}

static void
purge_tick_clear (PurgeTick *tick)
{
  g_weak_ref_clear (&tick->store);
  g_main_context_unref (tick->context);
}

static void
purge_tick_release (PurgeTick *tick)
{
  g_atomic_rc_box_release_full (tick, (GDestroyNotify) purge_tick_clear);
}

/* Back in the timer's context: armed again for the next day that will be up. */
static gboolean
purge_ticked_cb (gpointer data)
{
  PurgeTick *tick = data;
  g_autoptr(ChpStore) self = g_weak_ref_get (&tick->store);

  if (self != NULL && tick->next != G_MAXINT64)
    arm_purge (self, tick->next);
  return G_SOURCE_REMOVE;
}

static gpointer
purge_tick_job (ChpStore  *self,
                gpointer   data,
                GError   **error)
{
  PurgeTick *tick = data;
  g_autoptr(GSource) source = g_idle_source_new ();
  gint64 now = g_get_real_time () / 1000;
  gboolean ok = purge_now (self, now, error);
  gint64 first;
  int rc;

  first = chp_store_pragma_int (self->db, "SELECT coalesce (min (forgotten_at), 0) FROM sites"
                                          " WHERE forgotten_at > 0", &rc);
  /* A purge or a read that failed is tried again in an hour. */
  if (!ok || rc != SQLITE_OK)
    tick->next = now + PURGE_WAIT_MAX_MS;
  else
    tick->next = first > 0 ? first + CHP_SITE_RESTORE_MS : G_MAXINT64;
  g_source_set_callback (source, purge_ticked_cb, g_atomic_rc_box_acquire (tick),
                         (GDestroyNotify) purge_tick_release);
  g_source_attach (source, tick->context);

  return ok ? GINT_TO_POINTER (TRUE) : NULL;
}

static gboolean
purge_timer_cb (gpointer data)
{
  PurgeTimer *timer = data;
  g_autoptr(ChpStore) self = g_weak_ref_get (&timer->store);
  PurgeTick *tick;

  g_clear_pointer (&timer->source, g_source_unref);
  if (self == NULL)
    return G_SOURCE_REMOVE;

  tick = g_atomic_rc_box_new0 (PurgeTick);
  g_weak_ref_init (&tick->store, self);
  tick->context = g_main_context_ref (timer->context);
  chp_store_push_job (self, JOB_READ, purge_tick_job, tick, (GDestroyNotify) purge_tick_release,
                      NULL, NULL, NULL, NULL, NULL);
  return G_SOURCE_REMOVE;
}

static GQuark
purge_timer_quark (void)
{
  static GQuark quark;

  if (quark == 0)
    quark = g_quark_from_static_string ("chp-store-site-purge-timer");
  return quark;
}

/* The timer, to fire when @due (ms since the epoch) is past, unless it fires sooner already. */
static void
arm_purge (ChpStore *self,
           gint64    due)
{
  PurgeTimer *timer = g_object_get_qdata (G_OBJECT (self), purge_timer_quark ());
  gint64 wait;

  if (timer == NULL)
    {
      timer = g_new0 (PurgeTimer, 1);
      g_weak_ref_init (&timer->store, self);
      timer->context = g_main_context_ref_thread_default ();
      g_object_set_qdata_full (G_OBJECT (self), purge_timer_quark (), timer,
                               (GDestroyNotify) purge_timer_free);
    }
  if (timer->source != NULL && timer->due <= due)
    return;
  if (timer->source != NULL)
    g_source_destroy (timer->source);
  g_clear_pointer (&timer->source, g_source_unref);

  wait = CLAMP (due - g_get_real_time () / 1000, 0, PURGE_WAIT_MAX_MS);
  timer->due = due;
  timer->source = g_timeout_source_new ((guint) wait);
  g_source_set_callback (timer->source, purge_timer_cb, timer, NULL);
  g_source_attach (timer->source, timer->context);
}

static ChpSiteInfo *
read_info (sqlite3_stmt *stmt)
{
  ChpSiteInfo *info = g_new0 (ChpSiteInfo, 1);

  info->origin = chp_store_column_dup (stmt, 0);
  info->created_at = sqlite3_column_int64 (stmt, 1);
  info->last_visit = sqlite3_column_int64 (stmt, 2);
  info->last_used = sqlite3_column_int64 (stmt, 3);
  info->visits = sqlite3_column_int (stmt, 4);
  info->ready = chp_store_column_dup (stmt, 5);
  info->signin = chp_store_column_dup (stmt, 6);
  info->forgotten_at = sqlite3_column_int64 (stmt, 7);
  info->n_endpoints = sqlite3_column_int (stmt, 8);
  info->n_controls = sqlite3_column_int (stmt, 9);
  info->n_quarantined = sqlite3_column_int (stmt, 10);
  info->confidence = sqlite3_column_double (stmt, 11);
  info->n_recipes = sqlite3_column_int (stmt, 12);

  return info;
}

static ChpSiteEndpoint *
read_endpoint (sqlite3_stmt *stmt)
{
  ChpSiteEndpoint *endpoint = g_new0 (ChpSiteEndpoint, 1);

  endpoint->entry_id = chp_store_column_dup (stmt, 0);
  endpoint->origin = chp_store_column_dup (stmt, 1);
  endpoint->method = chp_store_column_dup (stmt, 2);
  endpoint->path_template = chp_store_column_dup (stmt, 3);
  endpoint->query_keys = chp_store_column_dup (stmt, 4);
  endpoint->body_shape = chp_store_column_dup (stmt, 5);
  endpoint->response_shape = chp_store_column_dup (stmt, 6);
  endpoint->credential = chp_store_column_dup (stmt, 7);
  endpoint->frame = chp_store_column_dup (stmt, 8);
  endpoint->sample_status = sqlite3_column_int (stmt, 9);
  endpoint->confidence = sqlite3_column_double (stmt, 10);
  endpoint->successes = sqlite3_column_int (stmt, 11);
  endpoint->misses = sqlite3_column_int (stmt, 12);
  endpoint->quarantined = sqlite3_column_int (stmt, 13) != 0;
  endpoint->learned_at = sqlite3_column_int64 (stmt, 14);
  endpoint->last_used = sqlite3_column_int64 (stmt, 15);

  return endpoint;
}

static ChpSiteControl *
read_control (sqlite3_stmt *stmt)
{
  ChpSiteControl *control = g_new0 (ChpSiteControl, 1);

  control->origin = chp_store_column_dup (stmt, 0);
  control->role = chp_store_column_dup (stmt, 1);
  control->label = chp_store_column_dup (stmt, 2);
  control->key = chp_store_column_dup (stmt, 3);
  control->visits = sqlite3_column_int (stmt, 4);
  control->first_seen = sqlite3_column_int64 (stmt, 5);
  control->last_seen = sqlite3_column_int64 (stmt, 6);

  return control;
}

static ChpSiteRecipe *
read_recipe (sqlite3_stmt *stmt)
{
  ChpSiteRecipe *recipe = g_new0 (ChpSiteRecipe, 1);

  recipe->origin = chp_store_column_dup (stmt, 0);
  recipe->name = chp_store_column_dup (stmt, 1);
  recipe->params = chp_store_column_dup (stmt, 2);
  recipe->steps = chp_store_column_dup (stmt, 3);
  recipe->n_steps = sqlite3_column_int (stmt, 4);
  recipe->saved_at = sqlite3_column_int64 (stmt, 5);
  recipe->last_used = sqlite3_column_int64 (stmt, 6);

  return recipe;
}

typedef gpointer (*RowReader) (sqlite3_stmt *stmt);

/* Every row of @sql, with ?1 bound to @text (NULL when %NULL) and ?2, if any, to @number. */
static GPtrArray *
read_rows (ChpStore        *self,
           const char      *sql,
           const char      *text,
           gint64           number,
           RowReader        reader,
           GDestroyNotify   row_free,
           GError         **error)
{
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func (row_free);
  g_autoptr(sqlite3_stmt) stmt = chp_store_sites_prepare (self, sql, error);
  int rc;

  if (stmt == NULL)
    return NULL;

  chp_store_bind_text (stmt, 1, text);
  if (sqlite3_bind_parameter_count (stmt) >= 2)
    sqlite3_bind_int64 (stmt, 2, number);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (rows, reader (stmt));

  if (rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "sites");
      return NULL;
    }

  return g_steal_pointer (&rows);
}

/* Most recently used first; @origin %NULL for every site. */
GPtrArray *
chp_store_sites_read_infos (ChpStore    *self,
                            const char  *origin,
                            gboolean     include_forgotten,
                            GError     **error)
{
  return read_rows (self,
                    INFO_COLUMNS " WHERE (?1 IS NULL OR s.origin = ?1)"
                    " AND (?2 != 0 OR s.forgotten_at = 0)"
                    " ORDER BY s.last_used DESC, s.last_visit DESC, s.origin",
                    origin, include_forgotten, (RowReader) read_info,
                    (GDestroyNotify) chp_site_info_free, error);
}

GPtrArray *
chp_store_sites_read_endpoints (ChpStore    *self,
                                const char  *origin,
                                GError     **error)
{
  return read_rows (self, ENDPOINT_COLUMNS " WHERE origin = ?1 ORDER BY path_template, method",
                    origin, 0, (RowReader) read_endpoint,
                    (GDestroyNotify) chp_site_endpoint_free, error);
}

GPtrArray *
chp_store_sites_read_controls (ChpStore    *self,
                               const char  *origin,
                               GError     **error)
{
  return read_rows (self,
                    "SELECT origin, role, label, key, visits, first_seen, last_seen"
                    " FROM site_controls WHERE origin = ?1"
                    " ORDER BY role, label IS NULL, label, first_seen, label_hash",
                    origin, 0, (RowReader) read_control,
                    (GDestroyNotify) chp_site_control_free, error);
}

GPtrArray *
chp_store_sites_read_recipes (ChpStore    *self,
                              const char  *origin,
                              GError     **error)
{
  return read_rows (self,
                    "SELECT origin, name, params, steps, n_steps, saved_at, last_used"
                    " FROM site_recipes WHERE origin = ?1 ORDER BY name",
                    origin, 0, (RowReader) read_recipe,
                    (GDestroyNotify) chp_site_recipe_free, error);
}

/* Returns: (nullable): the endpoint, or %NULL with @error (NOT_FOUND when none) */
ChpSiteEndpoint *
chp_store_sites_read_endpoint (ChpStore    *self,
                               const char  *entry_id,
                               GError     **error)
{
  g_autoptr(GPtrArray) rows = read_rows (self, ENDPOINT_COLUMNS " WHERE entry_id = ?1",
                                         entry_id, 0, (RowReader) read_endpoint,
                                         (GDestroyNotify) chp_site_endpoint_free, error);

  if (rows == NULL)
    return NULL;
  if (rows->len == 0)
    {
      g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND,
                   _("No remembered endpoint has the id %s"), entry_id);
      return NULL;
    }

  return g_ptr_array_steal_index (rows, 0);
}

/* Returns: (nullable): the site as it stands, or %NULL with @error (NOT_FOUND when it is
 * unknown or forgotten) */
ChpSiteRecord *
chp_store_sites_read_record (ChpStore    *self,
                             const char  *origin,
                             GError     **error)
{
  g_autoptr(ChpSiteRecord) record = NULL;
  g_autoptr(GPtrArray) infos = chp_store_sites_read_infos (self, origin, FALSE, error);

  if (infos == NULL)
    return NULL;
  if (infos->len == 0)
    {
      g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND,
                   _("Chaperone remembers nothing of %s"), origin);
      return NULL;
    }

  record = g_new0 (ChpSiteRecord, 1);
  record->info = g_ptr_array_steal_index (infos, 0);
  record->endpoints = chp_store_sites_read_endpoints (self, origin, error);
  if (record->endpoints == NULL)
    return NULL;
  record->controls = chp_store_sites_read_controls (self, origin, error);
  if (record->controls == NULL)
    return NULL;
  record->recipes = chp_store_sites_read_recipes (self, origin, error);
  if (record->recipes == NULL)
    return NULL;

  return g_steal_pointer (&record);
}

/* ---- jobs ------------------------------------------------------------------------------- */

typedef struct
{
  char   *origin;
  char   *visit_id;  /* or, for SITE_RECIPE_USED, the recipe's name */
  gint64  now;
  gint    what;
} SiteJob;

enum { SITE_VISIT, SITE_FORGET, SITE_RESTORE, SITE_RECIPE_USED };

static void
site_job_free (SiteJob *job)
{
  g_free (job->origin);
  g_free (job->visit_id);
  g_free (job);
}

static gpointer
load_site_job (ChpStore  *self,
               gpointer   data,
               GError   **error)
{
  return chp_store_sites_read_record (self, ((SiteJob *) data)->origin, error);
}

/**
 * chp_store_load_site_async:
 * @origin: a site's origin
 *
 * What is remembered of @origin. Finish with chp_store_load_site_finish().
 */
void
chp_store_load_site_async (ChpStore            *self,
                           const char          *origin,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  SiteJob *job;

  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (origin != NULL);

  job = g_new0 (SiteJob, 1);
  job->origin = g_strdup (origin);
  chp_store_push_job (self, JOB_READ, load_site_job, job, (GDestroyNotify) site_job_free,
                      (GDestroyNotify) chp_site_record_free, chp_store_load_site_async,
                      cancellable, callback, user_data);
}

/* Returns: (transfer full): the site, or %NULL with CHP_STORE_ERROR_NOT_FOUND when nothing
 * is remembered of it or the person forgot it */
ChpSiteRecord *
chp_store_load_site_finish (ChpStore      *self,
                            GAsyncResult  *result,
                            GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static gpointer
list_sites_job (ChpStore  *self,
                gpointer   data,
                GError   **error)
{
  if (!purge_now (self, g_get_real_time () / 1000, error))
    return NULL;

  return chp_store_sites_read_infos (self, NULL, GPOINTER_TO_INT (data), error);
}

/**
 * chp_store_list_sites_async:
 * @include_forgotten: list the sites the person forgot and may still restore
 *
 * Every remembered site, most recently used first. Sites forgotten a day ago or more are
 * deleted for good first. Finish with chp_store_list_sites_finish().
 */
void
chp_store_list_sites_async (ChpStore            *self,
                            gboolean             include_forgotten,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));

  /* A read: the purge is a write, but one that takes its own transaction (purge_now()). */
  chp_store_push_job (self, JOB_READ, list_sites_job, GINT_TO_POINTER (!!include_forgotten),
                      NULL, (GDestroyNotify) g_ptr_array_unref, chp_store_list_sites_async,
                      cancellable, callback, user_data);
}

/* Returns: (transfer full) (element-type ChpSiteInfo): the sites, or %NULL with @error */
GPtrArray *
chp_store_list_sites_finish (ChpStore      *self,
                             GAsyncResult  *result,
                             GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static const char * const site_update_sql[] = {
  /* A visit without an id always counts; with one, only a new id does. */
  [SITE_VISIT] =
    "UPDATE sites SET visits = visits + (?2 IS NULL OR ?2 IS NOT last_visit_id),"
    " last_visit = ?3, last_visit_id = coalesce (?2, last_visit_id)"
    " WHERE origin = ?1 AND forgotten_at = 0",
  [SITE_FORGET] =
    "UPDATE sites SET forgotten_at = max (?3, 1) WHERE origin = ?1 AND forgotten_at = 0",
  [SITE_RESTORE] = "UPDATE sites SET forgotten_at = 0 WHERE origin = ?1 AND forgotten_at > 0",
  /* ?2 is the recipe's name here. A forgotten site's recipes are not there to replay. */
  [SITE_RECIPE_USED] =
    ("UPDATE site_recipes SET last_used = ?3 WHERE origin = ?1 AND name = ?2"
     " AND origin IN (SELECT origin FROM sites WHERE forgotten_at = 0)"),
};

static gpointer
site_update_job (ChpStore  *self,
                 gpointer   data,
                 GError   **error)
{
  SiteJob *job = data;
  g_autoptr(sqlite3_stmt) stmt = NULL;

  stmt = chp_store_sites_prepare (self, site_update_sql[job->what], error);
  if (stmt == NULL)
    return NULL;

  chp_store_bind_text (stmt, 1, job->origin);
  chp_store_bind_text (stmt, 2, job->visit_id);
  sqlite3_bind_int64 (stmt, 3, job->now);
  if (!chp_store_sites_step_done (self, stmt, error))
    return NULL;

  if (sqlite3_changes (self->db) == 0)
    {
      if (job->what == SITE_RESTORE)
        g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND,
                     _("%s cannot be restored: it was not forgotten, or a day has passed"),
                     job->origin);
      else
        g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND,
                     _("Chaperone remembers nothing of %s"), job->origin);
      return NULL;
    }

  return GINT_TO_POINTER (TRUE);
}

static void
push_site_update (ChpStore            *self,
                  gint                 what,
                  const char          *origin,
                  const char          *visit_id,
                  gint64               now,
                  gpointer             source_tag,
                  GCancellable        *cancellable,
                  GAsyncReadyCallback  callback,
                  gpointer             user_data)
{
  SiteJob *job = g_new0 (SiteJob, 1);

  job->what = what;
  job->origin = g_strdup (origin);
  job->visit_id = g_strdup (visit_id);
  job->now = now;
  chp_store_push_job (self, JOB_WRITE, site_update_job, job, (GDestroyNotify) site_job_free,
                      NULL, source_tag, cancellable, callback, user_data);
}

/**
 * chp_store_site_visit_async:
 * @visit_id: (nullable): the visit's document id: the same id counts once
 *
 * A visit to a remembered site. An unknown or forgotten site is not created (NOT_FOUND): only
 * a merge starts remembering, so visits alone never make a browsing history. Finish with
 * chp_store_write_finish().
 */
void
chp_store_site_visit_async (ChpStore            *self,
                            const char          *origin,
                            const char          *visit_id,
                            gint64               now,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (origin != NULL);

  push_site_update (self, SITE_VISIT, origin, visit_id, now, chp_store_site_visit_async,
                    cancellable, callback, user_data);
}

/**
 * chp_store_forget_site_async:
 *
 * The person forgot @origin: hidden at once from loads, lists and exports, nothing more is
 * learned of it, and it can be restored until a day after @now, when it is deleted for good
 * (a timer in the main context of chp_store_set_site_policy() queues the purge, which empties
 * the write-ahead log too). Finish with chp_store_write_finish() (NOT_FOUND when nothing was
 * remembered).
 */
void
chp_store_forget_site_async (ChpStore            *self,
                             const char          *origin,
                             gint64               now,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (origin != NULL);

  push_site_update (self, SITE_FORGET, origin, NULL, now, chp_store_forget_site_async,
                    cancellable, callback, user_data);
  arm_purge (self, now + CHP_SITE_RESTORE_MS);
}

static gpointer
purge_job (ChpStore  *self,
           gpointer   data,
           GError   **error)
{
  return purge_now (self, *(gint64 *) data, error) ? GINT_TO_POINTER (TRUE) : NULL;
}

/**
 * chp_store_restore_site_async:
 *
 * Undoes a Forget within a day. Finish with chp_store_write_finish(): NOT_FOUND when the site
 * was not forgotten or was forgotten a day or more before @now (and is then deleted).
 */
void
chp_store_restore_site_async (ChpStore            *self,
                              const char          *origin,
                              gint64               now,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (origin != NULL);

  /* Restoring after the day is up finds nothing: the purge goes first, in a job of its own
   * so that the refused restore does not roll it back. */
  chp_store_push_job (self, JOB_READ, purge_job, g_memdup2 (&now, sizeof now), g_free, NULL,
                      NULL, NULL, NULL, NULL);
  push_site_update (self, SITE_RESTORE, origin, NULL, now, chp_store_restore_site_async,
                    cancellable, callback, user_data);
}

/**
 * chp_store_site_recipe_used_async:
 * @name: the recipe's name
 *
 * A remembered recipe of @origin was replayed at @now. Finish with chp_store_write_finish()
 * (NOT_FOUND when the site or the recipe is not remembered).
 */
void
chp_store_site_recipe_used_async (ChpStore            *self,
                                  const char          *origin,
                                  const char          *name,
                                  gint64               now,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (origin != NULL && name != NULL);

  push_site_update (self, SITE_RECIPE_USED, origin, name, now, chp_store_site_recipe_used_async,
                    cancellable, callback, user_data);
}
