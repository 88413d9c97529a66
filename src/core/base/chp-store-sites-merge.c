/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-sites-merge.c: what a visit taught, merged into the site memory, and what an
 * endpoint's use taught (confidence, quarantine). Each merge is one transaction: the update is
 * checked again by the allowlist here, on the database thread, before anything is written, so
 * a refused update leaves nothing behind, not even a part.
 *
 * Controls follow the two-visit rule: a label is kept only once the control was seen on two
 * distinct visits (document ids); before that the store knows it only by a keyed hash (HMAC-
 * SHA-256 under a random per-database key, site_salt) and a count. A control inside a record
 * list, or whose label carries the person's data (an email, a phone number, a long number), is
 * never stored at all: the same page shows other people's rows tomorrow. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-sites-private.h"

#include <glib/gi18n.h>
#include <string.h>

/* The most query keys one endpoint keeps, as many as one update may carry. */
#define MAX_QUERY_KEYS 32

typedef struct
{
  char          *update;    /* JSON text: json-glib's reference counts are not atomic */
  char          *visit_id;
  gint64         now;
  ChpSitePolicy  policy;
} MergeJob;

static void
merge_job_free (MergeJob *job)
{
  g_free (job->update);
  g_free (job->visit_id);
  g_free (job);
}

static JsonNode *
parse_object (const char  *text,
              GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(JsonNode) node = json_from_string (text, &local_error);

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error_literal (error, CHP_STORE_ERROR, CHP_STORE_ERROR_FAILED,
                           _("The site update is not a JSON object"));
      return NULL;
    }

  return g_steal_pointer (&node);
}

/* The member's JSON text, or %NULL when it is absent or null. */
static char *
member_text (JsonObject *object,
             const char *name)
{
  return chp_store_sites_json_text (json_object_get_member (object, name));
}

static const char *
member_string (JsonObject *object,
               const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  return node != NULL && JSON_NODE_HOLDS_VALUE (node) ? json_node_get_string (node) : NULL;
}

static JsonArray *
member_array (JsonObject *object,
              const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  return node != NULL && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
}

static gboolean
merge_site_row (ChpStore    *self,
                JsonObject  *update,
                const char  *origin,
                const char  *visit_id,
                gint64       now,
                GError     **error)
{
  g_autoptr(sqlite3_stmt) find = NULL;
  g_autoptr(sqlite3_stmt) write = NULL;
  g_autofree char *ready = member_text (update, "ready");
  g_autofree char *signin = member_text (update, "signin");
  int rc;

  find = chp_store_sites_prepare (self, "SELECT forgotten_at FROM sites WHERE origin = ?1", error);
  if (find == NULL)
    return FALSE;
  chp_store_bind_text (find, 1, origin);
  rc = sqlite3_step (find);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "sites");
      return FALSE;
    }

  /* The person asked to forget it: learning it again at once would undo that, and a restore
   * brings back exactly what was forgotten. After the day, it starts afresh. */
  if (rc == SQLITE_ROW && sqlite3_column_int64 (find, 0) > 0)
    {
      g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND,
                   _("%s was forgotten: nothing is learned of it until it is restored"), origin);
      return FALSE;
    }

  /* A null or absent ready / signin keeps what was known: a merge adds, Forget removes. */
  if (rc == SQLITE_DONE)
    write = chp_store_sites_prepare (self,
                                     "INSERT INTO sites (origin, created_at, last_visit,"
                                     " last_visit_id, last_used, visits, ready, signin)"
                                     " VALUES (?1, ?2, ?2, ?3, ?2, 1, ?4, ?5)", error);
  else
    write = chp_store_sites_prepare (self,
                                     "UPDATE sites SET last_used = ?2,"
                                     " visits = visits"
                                     "   + (?3 IS NOT NULL AND ?3 IS NOT last_visit_id),"
                                     " last_visit = CASE WHEN ?3 IS NULL"
                                     "   THEN last_visit ELSE ?2 END,"
                                     " last_visit_id = coalesce (?3, last_visit_id),"
                                     " ready = coalesce (?4, ready), signin = coalesce (?5, signin)"
                                     " WHERE origin = ?1", error);
  if (write == NULL)
    return FALSE;

  chp_store_bind_text (write, 1, origin);
  sqlite3_bind_int64 (write, 2, now);
  chp_store_bind_text (write, 3, visit_id);
  chp_store_bind_text (write, 4, ready);
  chp_store_bind_text (write, 5, signin);

  return chp_store_sites_step_done (self, write, error);
}

static void
add_key (GPtrArray  *keys,
         const char *key)
{
  if (key == NULL || keys->len >= MAX_QUERY_KEYS)
    return;
  for (guint i = 0; i < keys->len; i++)
    if (g_str_equal (keys->pdata[i], key))
      return;
  g_ptr_array_add (keys, g_strdup (key));
}

/* The keys known before, then the update's new ones: an endpoint's optional parameters show up
 * on different visits. */
static char *
union_query_keys (ChpStore    *self,
                  const char  *entry_id,
                  JsonArray   *update_keys,
                  GError     **error)
{
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  int rc;

  stmt = chp_store_sites_prepare (self, "SELECT query_keys FROM site_endpoints WHERE entry_id = ?1",
                                  error);
  if (stmt == NULL)
    return NULL;
  chp_store_bind_text (stmt, 1, entry_id);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      g_autoptr(JsonNode) known = json_from_string ((const char *) sqlite3_column_text (stmt, 0),
                                                   NULL);

      if (known != NULL && JSON_NODE_HOLDS_ARRAY (known))
        {
          JsonArray *array = json_node_get_array (known);

          for (guint i = 0; i < json_array_get_length (array); i++)
            add_key (keys, json_node_get_string (json_array_get_element (array, i)));
        }
    }
  else if (rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "site_endpoints");
      return NULL;
    }

  for (guint i = 0; update_keys != NULL && i < json_array_get_length (update_keys); i++)
    add_key (keys, json_node_get_string (json_array_get_element (update_keys, i)));

  json_builder_begin_array (builder);
  for (guint i = 0; i < keys->len; i++)
    json_builder_add_string_value (builder, keys->pdata[i]);
  json_builder_end_array (builder);
  root = json_builder_get_root (builder);

  return chp_store_sites_json_text (root);
}

/* "cookie", "bearer", "none" or "header:<Name>": what the endpoint needs, never its value. */
static char *
credential_text (JsonObject *endpoint)
{
  JsonNode *node = json_object_get_member (endpoint, "credential");
  JsonObject *credential = node != NULL && JSON_NODE_HOLDS_OBJECT (node) ?
                           json_node_get_object (node) : NULL;
  const char *kind = credential ? member_string (credential, "kind") : NULL;

  if (g_strcmp0 (kind, "header") == 0)
    return g_strconcat ("header:", member_string (credential, "header"), NULL);

  return g_strdup (kind != NULL ? kind : "none");
}

static gboolean
merge_endpoint (ChpStore    *self,
                const char  *origin,
                JsonObject  *endpoint,
                gint64       now,
                GError     **error)
{
  const char *method = member_string (endpoint, "method");
  const char *path = member_string (endpoint, "pathTemplate");
  g_autofree char *entry_id = chp_site_entry_id (origin, method, path);
  g_autofree char *query_keys = NULL;
  g_autofree char *body = member_text (endpoint, "body");
  g_autofree char *response = member_text (endpoint, "response");
  g_autofree char *credential = credential_text (endpoint);
  g_autoptr(sqlite3_stmt) stmt = NULL;

  query_keys = union_query_keys (self, entry_id, member_array (endpoint, "queryKeys"), error);
  if (query_keys == NULL)
    return FALSE;

  /* Known endpoints keep their confidence, counts and quarantine: what they did is what they
   * earned; a new sample only refreshes their shapes. */
  stmt = chp_store_sites_prepare (self,
                                  "INSERT INTO site_endpoints (entry_id, origin, method,"
                                  " path_template, query_keys, body_shape, response_shape,"
                                  " credential, frame, sample_status, confidence, learned_at)"
                                  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0.5, ?11)"
                                  " ON CONFLICT (entry_id) DO UPDATE SET query_keys = ?5,"
                                  " body_shape = coalesce (?6, body_shape),"
                                  " response_shape = coalesce (?7, response_shape),"
                                  " credential = ?8, frame = ?9, sample_status = ?10,"
                                  " learned_at = ?11 WHERE origin = ?2", error);
  if (stmt == NULL)
    return FALSE;

  chp_store_bind_text (stmt, 1, entry_id);
  chp_store_bind_text (stmt, 2, origin);
  chp_store_bind_text (stmt, 3, method);
  chp_store_bind_text (stmt, 4, path);
  chp_store_bind_text (stmt, 5, query_keys);
  chp_store_bind_text (stmt, 6, body);
  chp_store_bind_text (stmt, 7, response);
  chp_store_bind_text (stmt, 8, credential);
  chp_store_bind_text (stmt, 9, member_string (endpoint, "frame"));
  sqlite3_bind_int64 (stmt, 10, json_object_get_int_member (endpoint, "sampleStatus"));
  sqlite3_bind_int64 (stmt, 11, now);

  return chp_store_sites_step_done (self, stmt, error);
}

static GBytes *
read_salt (ChpStore  *self,
           GError   **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  int rc;

  stmt = chp_store_sites_prepare (self, "SELECT salt FROM site_salt WHERE id = 1", error);
  if (stmt == NULL)
    return NULL;

  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW || sqlite3_column_bytes (stmt, 0) < 16)
    {
      g_set_error_literal (error, CHP_STORE_ERROR, CHP_STORE_ERROR_FAILED,
                           _("The site memory's key is missing"));
      return NULL;
    }

  return g_bytes_new (sqlite3_column_blob (stmt, 0), sqlite3_column_bytes (stmt, 0));
}

static char *
label_hash (GBytes     *salt,
            const char *role,
            const char *label)
{
  g_autofree char *text = g_strconcat (role, "\n", label, NULL);
  gsize salt_len;
  const guint8 *key = g_bytes_get_data (salt, &salt_len);

  return g_compute_hmac_for_data (G_CHECKSUM_SHA256, key, salt_len, (const guchar *) text,
                                  strlen (text));
}

static gboolean
merge_control (ChpStore             *self,
               const ChpSitePolicy  *policy,
               GBytes               *salt,
               const char           *origin,
               JsonObject           *control,
               const char           *visit_id,
               gint64                now,
               GError              **error)
{
  const char *role = member_string (control, "role");
  const char *label = member_string (control, "label");
  const char *key = member_string (control, "key");
  g_autofree char *hash = NULL;
  g_autofree char *last_visit = NULL;
  g_autoptr(sqlite3_stmt) find = NULL;
  g_autoptr(sqlite3_stmt) write = NULL;
  gint visits = 0;
  gboolean known;
  int rc;

  if (json_object_get_boolean_member (control, "inList") || label == NULL ||
      policy->label_is_personal (label))
    return TRUE;

  hash = label_hash (salt, role, label);
  find = chp_store_sites_prepare (self,
                                  "SELECT visits, last_visit_id FROM site_controls"
                                  " WHERE origin = ?1 AND role = ?2 AND label_hash = ?3", error);
  if (find == NULL)
    return FALSE;
  chp_store_bind_text (find, 1, origin);
  chp_store_bind_text (find, 2, role);
  chp_store_bind_text (find, 3, hash);
  rc = sqlite3_step (find);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "site_controls");
      return FALSE;
    }
  known = rc == SQLITE_ROW;
  if (known)
    {
      visits = sqlite3_column_int (find, 0);
      last_visit = chp_store_column_dup (find, 1);
    }

  /* Only a visit with an id counts, and only once: a page read twice in one visit, or a
   * caller that cannot tell visits apart, never makes a label known. */
  if (visit_id != NULL && g_strcmp0 (visit_id, last_visit) != 0)
    visits++;

  write = chp_store_sites_prepare (self,
                                   "INSERT INTO site_controls (origin, role, label, label_hash,"
                                   " key, visits, last_visit_id, first_seen, last_seen)"
                                   " VALUES (?1, ?2, CASE WHEN ?6 >= 2 THEN ?4 END, ?3,"
                                   " CASE WHEN ?6 >= 2 THEN ?5 END, ?6, ?7, ?8, ?8)"
                                   " ON CONFLICT (origin, role, label_hash) DO UPDATE SET"
                                   " visits = ?6, last_visit_id = coalesce (?7, last_visit_id),"
                                   " last_seen = ?8,"
                                   " label = CASE WHEN ?6 >= 2 THEN ?4 ELSE label END,"
                                   " key = CASE WHEN ?6 >= 2 THEN ?5 ELSE key END", error);
  if (write == NULL)
    return FALSE;

  chp_store_bind_text (write, 1, origin);
  chp_store_bind_text (write, 2, role);
  chp_store_bind_text (write, 3, hash);
  chp_store_bind_text (write, 4, label);
  chp_store_bind_text (write, 5, key);
  sqlite3_bind_int (write, 6, visits);
  chp_store_bind_text (write, 7, visit_id);
  sqlite3_bind_int64 (write, 8, now);

  return chp_store_sites_step_done (self, write, error);
}

/* A recipe, in the allowlist's form (checked already): saved again under its name, it replaces
 * the one kept; its replays are counted from then on. */
static gboolean
merge_recipe (ChpStore    *self,
              const char  *origin,
              JsonObject  *recipe,
              gint64       now,
              GError     **error)
{
  g_autofree char *params = member_text (recipe, "params");
  g_autofree char *steps = member_text (recipe, "steps");
  JsonArray *step_list = member_array (recipe, "steps");
  g_autoptr(sqlite3_stmt) stmt = NULL;

  stmt = chp_store_sites_prepare (self,
                                  "INSERT INTO site_recipes (origin, name, params, steps, n_steps,"
                                  " saved_at) VALUES (?1, ?2, coalesce (?3, '[]'), ?4, ?5, ?6)"
                                  " ON CONFLICT (origin, name) DO UPDATE SET"
                                  " params = coalesce (?3, '[]'), steps = ?4, n_steps = ?5,"
                                  " saved_at = ?6, last_used = 0", error);
  if (stmt == NULL)
    return FALSE;

  chp_store_bind_text (stmt, 1, origin);
  chp_store_bind_text (stmt, 2, member_string (recipe, "name"));
  chp_store_bind_text (stmt, 3, params);
  chp_store_bind_text (stmt, 4, steps);
  sqlite3_bind_int (stmt, 5, step_list != NULL ? (int) json_array_get_length (step_list) : 0);
  sqlite3_bind_int64 (stmt, 6, now);

  return chp_store_sites_step_done (self, stmt, error);
}

/* Past its bounds a site keeps its labelled controls and most recently useful endpoints. */
static gboolean
trim_site (ChpStore    *self,
           const char  *origin,
           GError     **error)
{
  const char * const sql[] = {
    "DELETE FROM site_endpoints WHERE origin = ?1 AND entry_id NOT IN"
    " (SELECT entry_id FROM site_endpoints WHERE origin = ?1"
    "  ORDER BY quarantined, max (last_used, learned_at) DESC LIMIT ?2)",
    "DELETE FROM site_controls WHERE origin = ?1 AND rowid NOT IN"
    " (SELECT rowid FROM site_controls WHERE origin = ?1"
    "  ORDER BY label IS NULL, last_seen DESC LIMIT ?2)",
    "DELETE FROM site_recipes WHERE origin = ?1 AND rowid NOT IN"
    " (SELECT rowid FROM site_recipes WHERE origin = ?1"
    "  ORDER BY max (last_used, saved_at) DESC LIMIT ?2)",
  };
  const int limits[] = { CHP_SITE_MAX_ENDPOINTS, CHP_SITE_MAX_CONTROLS, CHP_SITE_MAX_RECIPES };

  for (guint i = 0; i < G_N_ELEMENTS (sql); i++)
    {
      g_autoptr(sqlite3_stmt) stmt = chp_store_sites_prepare (self, sql[i], error);

      if (stmt == NULL)
        return FALSE;
      chp_store_bind_text (stmt, 1, origin);
      sqlite3_bind_int (stmt, 2, limits[i]);
      if (!chp_store_sites_step_done (self, stmt, error))
        return FALSE;
    }

  return TRUE;
}

static gpointer
merge_site_job (ChpStore  *self,
                gpointer   data,
                GError   **error)
{
  MergeJob *job = data;
  g_autoptr(JsonNode) root = parse_object (job->update, error);
  g_autoptr(GBytes) salt = NULL;
  JsonObject *update;
  JsonArray *array;
  const char *origin;

  if (root == NULL)
    return NULL;
  update = json_node_get_object (root);
  if (!chp_store_sites_check (&job->policy, update, error))
    return NULL;

  origin = member_string (update, "origin");
  if (!merge_site_row (self, update, origin, job->visit_id, job->now, error))
    return NULL;

  array = member_array (update, "endpoints");
  for (guint i = 0; array != NULL && i < json_array_get_length (array); i++)
    if (!merge_endpoint (self, origin, json_array_get_object_element (array, i), job->now, error))
      return NULL;

  array = member_array (update, "controls");
  if (array != NULL && json_array_get_length (array) > 0)
    {
      salt = read_salt (self, error);
      if (salt == NULL)
        return NULL;
    }
  for (guint i = 0; array != NULL && i < json_array_get_length (array); i++)
    if (!merge_control (self, &job->policy, salt, origin, json_array_get_object_element (array, i),
                        job->visit_id, job->now, error))
      return NULL;

  array = member_array (update, "recipes");
  for (guint i = 0; array != NULL && i < json_array_get_length (array); i++)
    if (!merge_recipe (self, origin, json_array_get_object_element (array, i), job->now, error))
      return NULL;

  if (!trim_site (self, origin, error))
    return NULL;

  return chp_store_sites_read_record (self, origin, error);
}

/**
 * chp_store_merge_site_async:
 * @update: what a visit learned, in the allowlist's form (chp-site-allowlist.h); copied
 * @visit_id: (nullable): the visit's document id, which the two-visit rule counts
 * @now: ms since the epoch
 *
 * Checked again by the allowlist before anything is written: a refused update fails with
 * CHP_STORE_ERROR_FAILED and the allowlist's message (which names the field, never its text)
 * and changes nothing. A site the person forgot fails with NOT_FOUND. New endpoints start at
 * confidence 0.5; known ones keep theirs and take the new sample's status, shapes and query
 * keys (added to the known ones). Finish with chp_store_merge_site_finish().
 */
void
chp_store_merge_site_async (ChpStore            *self,
                            JsonObject          *update,
                            const char          *visit_id,
                            gint64               now,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_autoptr(JsonNode) node = NULL;
  MergeJob *job;

  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (update != NULL);

  node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, update);

  job = g_new0 (MergeJob, 1);
  job->update = json_to_string (node, FALSE);
  job->visit_id = g_strdup (visit_id);
  job->now = now;
  chp_store_sites_get_policy (self, &job->policy);
  chp_store_push_job (self, JOB_WRITE, merge_site_job, job, (GDestroyNotify) merge_job_free,
                      (GDestroyNotify) chp_site_record_free, chp_store_merge_site_async,
                      cancellable, callback, user_data);
}

/* Returns: (transfer full): the site after the merge, or %NULL with @error */
ChpSiteRecord *
chp_store_merge_site_finish (ChpStore      *self,
                             GAsyncResult  *result,
                             GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ---- an endpoint's outcome -------------------------------------------------------------- */

typedef struct
{
  char          *entry_id;
  gboolean       success;
  gint           status;
  char          *response;  /* JSON text or NULL */
  gint64         now;
  ChpSitePolicy  policy;
} ResultJob;

static void
result_job_free (ResultJob *job)
{
  g_free (job->entry_id);
  g_free (job->response);
  g_free (job);
}

/* The response shape is checked as the response of an update's one endpoint, the only form
 * the allowlist knows: the rest of that update is the endpoint as stored, checked once already. */
static gboolean
check_response (ResultJob        *job,
                ChpSiteEndpoint  *endpoint,
                GError          **error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) response = parse_object (job->response, error);
  g_autoptr(JsonNode) root = NULL;

  if (response == NULL)
    return FALSE;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "origin");
  json_builder_add_string_value (builder, endpoint->origin);
  json_builder_set_member_name (builder, "endpoints");
  json_builder_begin_array (builder);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "method");
  json_builder_add_string_value (builder, endpoint->method);
  json_builder_set_member_name (builder, "pathTemplate");
  json_builder_add_string_value (builder, endpoint->path_template);
  json_builder_set_member_name (builder, "response");
  json_builder_add_value (builder, g_steal_pointer (&response));
  json_builder_set_member_name (builder, "credential");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "kind");
  json_builder_add_string_value (builder, "none");
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "frame");
  json_builder_add_string_value (builder, endpoint->frame);
  json_builder_set_member_name (builder, "sampleStatus");
  json_builder_add_int_value (builder, job->status);
  json_builder_end_object (builder);
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);

  return chp_store_sites_check (&job->policy, json_node_get_object (root), error);
}

/* One outcome, inside the caller's transaction. */
static gboolean
apply_result (ChpStore   *self,
              ResultJob  *job,
              GError    **error)
{
  g_autoptr(ChpSiteEndpoint) endpoint = chp_store_sites_read_endpoint (self, job->entry_id, error);
  g_autoptr(GPtrArray) site = NULL;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(sqlite3_stmt) touch = NULL;
  g_autoptr(GError) refused = NULL;
  const char *response = job->response;

  if (endpoint == NULL)
    return FALSE;

  site = chp_store_sites_read_infos (self, endpoint->origin, FALSE, error);
  if (site == NULL)
    return FALSE;
  if (site->len == 0)
    {
      g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND,
                   _("%s was forgotten: nothing is learned of it until it is restored"),
                   endpoint->origin);
      return FALSE;
    }

  /* A shape the allowlist refuses is not kept, but the call still worked: its success counts
   * (a list's or an empty reply's shape must not cost the endpoint its confidence). The
   * allowlist's message names the field, never its text. */
  if (job->success && response != NULL && !check_response (job, endpoint, &refused))
    {
      g_debug ("site memory: a response's shape was not kept: %s", refused->message);
      response = NULL;
    }

  /* A miss's response is an error's shape: only a success's is kept. round() keeps the steps
   * exact (0.5 + 0.1 is 0.6, not 0.6000000000000001). */
  if (job->success)
    stmt = chp_store_sites_prepare (self,
                                    "UPDATE site_endpoints SET"
                                    " confidence = round (min (1.0, confidence + 0.1), 2),"
                                    " successes = successes + 1, misses = 0, quarantined = 0,"
                                    " sample_status = ?2,"
                                    " response_shape = coalesce (?3, response_shape),"
                                    " last_used = ?4 WHERE entry_id = ?1", error);
  else
    stmt = chp_store_sites_prepare (self,
                                    "UPDATE site_endpoints SET"
                                    " confidence = round (max (0.0, confidence - 0.25), 2),"
                                    " misses = misses + 1, quarantined = (misses + 1 >= 2),"
                                    " last_used = ?4 WHERE entry_id = ?1", error);
  if (stmt == NULL)
    return FALSE;

  chp_store_bind_text (stmt, 1, job->entry_id);
  if (job->success)
    {
      sqlite3_bind_int (stmt, 2, job->status);
      chp_store_bind_text (stmt, 3, response);
    }
  sqlite3_bind_int64 (stmt, 4, job->now);
  if (!chp_store_sites_step_done (self, stmt, error))
    return FALSE;

  touch = chp_store_sites_prepare (self, "UPDATE sites SET last_used = ?2 WHERE origin = ?1",
                                   error);
  if (touch == NULL)
    return FALSE;
  chp_store_bind_text (touch, 1, endpoint->origin);
  sqlite3_bind_int64 (touch, 2, job->now);
  if (!chp_store_sites_step_done (self, touch, error))
    return FALSE;

  return TRUE;
}

static gpointer
endpoint_result_job (ChpStore  *self,
                     gpointer   data,
                     GError   **error)
{
  ResultJob *job = data;

  if (!apply_result (self, job, error))
    return NULL;
  return chp_store_sites_read_endpoint (self, job->entry_id, error);
}

/**
 * chp_store_site_endpoint_result_async:
 * @entry_id: the endpoint's id (chp_site_entry_id())
 * @success: whether using it worked as remembered
 * @status: the response's HTTP status (a success's becomes the sample status; 0..999)
 * @response_shape: (nullable): a success's response as an update's endpoint carries it,
 *   {"contentType", "shape"}; checked by the allowlist: a refused one is not kept, and the
 *   success still counts; copied
 * @now: ms since the epoch
 *
 * A success adds 0.1 to the endpoint's confidence (at most 1), clears its misses and lifts a
 * quarantine; a miss takes 0.25 (down to 0) and the second miss in a row quarantines it.
 * Finish with chp_store_site_endpoint_result_finish().
 */
void
chp_store_site_endpoint_result_async (ChpStore            *self,
                                      const char          *entry_id,
                                      gboolean             success,
                                      gint                 status,
                                      JsonObject          *response_shape,
                                      gint64               now,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data)
{
  ResultJob *job;

  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (entry_id != NULL);

  job = g_new0 (ResultJob, 1);
  job->entry_id = g_strdup (entry_id);
  job->success = success;
  job->status = CLAMP (status, 0, 999);
  job->now = now;
  if (response_shape != NULL)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

      json_node_set_object (node, response_shape);
      job->response = json_to_string (node, FALSE);
    }
  chp_store_sites_get_policy (self, &job->policy);
  chp_store_push_job (self, JOB_WRITE, endpoint_result_job, job, (GDestroyNotify) result_job_free,
                      (GDestroyNotify) chp_site_endpoint_free,
                      chp_store_site_endpoint_result_async, cancellable, callback, user_data);
}

typedef struct
{
  GPtrArray *results;  /* ResultJob */
} ResultsJob;

static void
results_job_free (ResultsJob *job)
{
  g_ptr_array_unref (job->results);
  g_free (job);
}

/* A batch's outcomes in one transaction: one sync for them all, not one each. An endpoint the
 * memory does not hold (a session's own, a forgotten site's) has no confidence to move. */
static gpointer
endpoint_results_job (ChpStore  *self,
                      gpointer   data,
                      GError   **error)
{
  ResultsJob *job = data;

  for (guint i = 0; i < job->results->len; i++)
    {
      g_autoptr(GError) local_error = NULL;

      if (apply_result (self, g_ptr_array_index (job->results, i), &local_error))
        continue;
      if (!g_error_matches (local_error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
    }
  return GINT_TO_POINTER (TRUE);
}

/**
 * chp_store_site_endpoint_results_async:
 * @uses: (array length=n_uses): the outcomes, in the order they happened
 * @now: ms since the epoch
 *
 * Each outcome as chp_store_site_endpoint_result_async() takes one (without a response shape),
 * all in one transaction: a batch of calls costs the disk one sync. Outcomes of endpoints the
 * memory does not hold are skipped. Finish with chp_store_write_finish().
 */
void
chp_store_site_endpoint_results_async (ChpStore            *self,
                                       const ChpSiteUse    *uses,
                                       guint                n_uses,
                                       gint64               now,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data)
{
  ResultsJob *job;
  ChpSitePolicy policy;

  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (uses != NULL || n_uses == 0);

  chp_store_sites_get_policy (self, &policy);
  job = g_new0 (ResultsJob, 1);
  job->results = g_ptr_array_new_with_free_func ((GDestroyNotify) result_job_free);
  for (guint i = 0; i < n_uses; i++)
    {
      ResultJob *one = g_new0 (ResultJob, 1);

      one->entry_id = g_strdup (uses[i].entry_id);
      one->success = uses[i].success;
      one->status = CLAMP (uses[i].status, 0, 999);
      one->now = now;
      one->policy = policy;
      g_ptr_array_add (job->results, one);
    }
  chp_store_push_job (self, JOB_WRITE, endpoint_results_job, job,
                      (GDestroyNotify) results_job_free, NULL,
                      chp_store_site_endpoint_results_async, cancellable, callback, user_data);
}

/* Returns: (transfer full): the endpoint as it now stands, or %NULL with @error (NOT_FOUND for
 * an unknown endpoint or a forgotten site) */
ChpSiteEndpoint *
chp_store_site_endpoint_result_finish (ChpStore      *self,
                                       GAsyncResult  *result,
                                       GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
