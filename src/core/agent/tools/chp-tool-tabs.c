/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-tabs.c: browser_tabs: the tabs the person granted, asked of every connected browser at
 * once, in our words with the page's own in the untrusted wrapper. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

typedef struct
{
  GTask    *task;
  char     *device_id;
  char     *alias;
  char     *name;
  JsonNode *answer;
  GError   *error;
} TabsTarget;

static void
tabs_target_free (gpointer data)
{
  TabsTarget *target = data;

  g_free (target->device_id);
  g_free (target->alias);
  g_free (target->name);
  g_clear_pointer (&target->answer, json_node_unref);
  g_clear_error (&target->error);
  g_free (target);
}

static char *
scope_list (JsonArray *scopes)
{
  g_autoptr(GString) out = g_string_new (NULL);

  for (guint i = 0; scopes != NULL && i < json_array_get_length (scopes); i++)
    {
      JsonNode *s = json_array_get_element (scopes, i);
      const char *scope;
      g_autofree char *clean = NULL;

      if (!JSON_NODE_HOLDS_VALUE (s) || json_node_get_value_type (s) != G_TYPE_STRING)
        continue;
      scope = json_node_get_string (s);
      clean = chp_mcp_format_line (g_str_has_prefix (scope, "browser.") ? scope + 8 : scope, 60);
      g_string_append_printf (out, "%s%s", out->len > 0 ? ", " : "", clean);
    }

  return g_strdup (out->len > 0 ? out->str : "none");
}

static char *
expires_in (gint64 expires_at)
{
  gint64 left = expires_at - g_get_real_time () / 1000;

  if (left <= 0)
    return g_strdup ("expired");
  if (left < 60 * 1000)
    return g_strdup ("expires in less than a minute");
  if (left < 2 * 3600 * 1000)
    return g_strdup_printf ("expires in %" G_GINT64_FORMAT " min", left / 60000);
  return g_strdup_printf ("expires in %" G_GINT64_FORMAT " h", left / 3600000);
}

/* One granted tab: a line in our words, then its title and URL in the wrapper. */
static void
add_tab (TabsTarget  *target,
         ChpUrlFloor *floor,
         JsonObject  *tab,
         const char  *marker,
         JsonArray   *tabs,
         GString     *text)
{
  ChpFloorLevel level;
  JsonObject *entry;
  gint64 tab_id;
  g_autofree char *name = NULL;
  g_autofree char *label = NULL;
  g_autofree char *scopes = NULL;
  g_autofree char *origin = NULL;
  g_autofree char *title = NULL;
  g_autofree char *url = NULL;
  g_autofree char *page = NULL;
  g_autofree char *expiry = NULL;
  JsonNode *id = json_object_get_member (tab, "tabId");
  JsonArray *scope_array = chp_json_get_array (tab, "scopes");
  gint64 expires_at = chp_mcp_json_int (tab, "expiresAt", 0);
  const char *state = chp_mcp_json_string (tab, "state", NULL);

  if (id == NULL || !chp_tool_node_is_integer (id, &tab_id) || tab_id < 0)
    return;

  name = g_strdup_printf ("%s:%" G_GINT64_FORMAT, target->alias, tab_id);
  label = chp_mcp_format_line (chp_mcp_json_string (tab, "label", ""), 120);
  scopes = scope_list (scope_array);
  origin = chp_mcp_format_line (chp_mcp_json_string (tab, "origin", ""), 200);
  level = floor != NULL
          ? chp_tool_floor_level (floor, chp_mcp_json_string (tab, "url", ""), FALSE, NULL)
          : CHP_FLOOR_OK;
  /* A blind page shows nothing of itself, not even its title: only the site it is on. */
  title = level == CHP_FLOOR_BLIND
          ? g_strdup ("")
          : chp_mcp_format_line (chp_mcp_json_string (tab, "title", ""), 300);
  url = level == CHP_FLOOR_BLIND ? g_strdup (origin)
                                 : chp_mcp_format_line (chp_mcp_json_string (tab, "url", ""), 500);
  expiry = expires_at > 0 ? expires_in (expires_at) : g_strdup ("no expiry given");

  g_string_append_printf (text, "\n%s in %s (\"%s\") · grant \"%s\" · %s · %s%s%s\n", name,
                          target->alias, target->name, label, scopes, expiry,
                          chp_mcp_json_bool (tab, "active")
                          ? " · active" : "",
                          g_strcmp0 (state, "origin_changed") == 0
                          ? " · the tab left the granted site (calls answer origin_changed)" : "");
  if (level == CHP_FLOOR_BLIND)
    g_string_append (text, "(off limits to agents: this page answers refused_floor)\n");
  else if (level == CHP_FLOOR_HANDS_ONLY)
    g_string_append (text, "(read-only for agents: acts answer refused_floor)\n");
  page = g_strdup_printf ("title: %s\nurl: %s", title, url);
  chp_mcp_format_add_untrusted (text, marker, *origin != '\0' ? origin : "this tab", page);

  entry = json_object_new ();
  json_object_set_string_member (entry, "tab", name);
  json_object_set_string_member (entry, "browser", target->alias);
  json_object_set_string_member (entry, "browserName", target->name);
  json_object_set_string_member (entry, "title", title);
  json_object_set_string_member (entry, "url", url);
  chp_mcp_format_mark_member (entry, "title", marker, NULL);
  chp_mcp_format_mark_member (entry, "url", marker, NULL);
  json_object_set_string_member (entry, "origin", origin);
  json_object_set_boolean_member (entry, "active",
                                  chp_mcp_json_bool (tab, "active"));
  json_object_set_string_member (entry, "label", label);
  if (level != CHP_FLOOR_OK)
    json_object_set_string_member (entry, "floor", chp_floor_level_to_string (level));
  if (scope_array != NULL)
    {
      JsonArray *copy = json_array_new ();

      for (guint i = 0; i < json_array_get_length (scope_array); i++)
        {
          JsonNode *s = json_array_get_element (scope_array, i);

          if (JSON_NODE_HOLDS_VALUE (s) && json_node_get_value_type (s) == G_TYPE_STRING)
            json_array_add_string_element (copy, json_node_get_string (s));
        }
      json_object_set_array_member (entry, "scopes", copy);
    }
  if (expires_at > 0)
    json_object_set_int_member (entry, "expiresAt", expires_at);
  if (state != NULL)
    {
      g_autofree char *clean = chp_mcp_format_line (state, 40);

      json_object_set_string_member (entry, "state", clean);
    }
  json_array_add_object_element (tabs, entry);
}

static void
tabs_finish (GTask *task)
{
  ToolCall *call = call_of (task);
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  ChpUrlFloor *floor = engine != NULL ? chp_engine_get_floor (engine) : NULL;
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) errors_text = g_string_new (NULL);
  JsonObject *structured = json_object_new ();
  JsonArray *tabs = json_array_new ();
  JsonArray *errors = json_array_new ();
  guint stopped = 0;

  for (guint i = 0; i < call->targets->len; i++)
    {
      TabsTarget *target = g_ptr_array_index (call->targets, i);
      JsonArray *list;

      if (target->error != NULL)
        {
          const char *code = chp_protocol_error_code_of (target->error);
          g_autofree char *line = chp_mcp_format_line (target->error->message, 300);
          /* The browser's words, which may quote a page. */
          g_autofree char *message = chp_mcp_format_mark (call->marker, line);
          JsonObject *e = json_object_new ();

          stopped += g_str_equal (code, "stopped");
          json_object_set_string_member (e, "browser", target->alias);
          json_object_set_string_member (e, "name", target->name);
          json_object_set_string_member (e, "code", code);
          json_object_set_string_member (e, "message", message);
          json_array_add_object_element (errors, e);
          g_string_append_printf (errors_text, "\n%s (%s) did not list its tabs: %s.",
                                  target->alias,
                                  target->name, code);
          continue;
        }

      list = target->answer != NULL && JSON_NODE_HOLDS_OBJECT (target->answer)
             ? chp_json_get_array (json_node_get_object (target->answer), "tabs") : NULL;
      for (guint k = 0; list != NULL && k < json_array_get_length (list); k++)
        {
          JsonNode *tab = json_array_get_element (list, k);

          if (JSON_NODE_HOLDS_OBJECT (tab))
            add_tab (target, floor, json_node_get_object (tab), call->marker, tabs, text);
        }
    }

  /* The person stopped everything while we asked: that is the answer, not a list. */
  if (stopped > 0 && stopped == call->targets->len)
    {
      json_array_unref (tabs);
      json_array_unref (errors);
      json_object_unref (structured);
      chp_tool_return_error (task, "stopped", "The person stopped all agents", NULL);
      return;
    }

  if (json_array_get_length (tabs) == 0)
    g_string_prepend (text, "No tab is granted to you. Ask the person to grant the tabs you need: "
                      "in the Chaperone extension's popup they pick tabs, what you may do and for "
                      "how long.");
  else
    {
      JsonObject *first = json_array_get_object_element (tabs, 0);
      g_autofree char *head = g_strdup_printf ("%u granted tab%s. Use the tab ids (like %s) in the "
                                               "other tools.",
                                               json_array_get_length (tabs),
                                               json_array_get_length (tabs) == 1 ? "" : "s",
                                               json_object_get_string_member (first, "tab"));

      g_string_prepend (text, head);
    }
  g_string_append (text, errors_text->str);

  json_object_set_array_member (structured, "tabs", tabs);
  json_object_set_array_member (structured, "errors", errors);
  json_object_set_member (structured, "browsers",
                          json_node_copy (g_object_get_data (G_OBJECT (task), "browsers")));
  chp_tool_return_ok (task, text->str, structured, NULL);
}

static void
tabs_answered_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  TabsTarget *target = user_data;
  g_autoptr(GTask) task = target->task;
  ToolCall *call = call_of (task);

  target->task = NULL;
  target->answer = chp_tool_reply_finish (result, &target->error);
  if (--call->pending == 0)
    tabs_finish (task);
}

void
chp_tool_tabs (ToolCall *call)
{
  GTask *task = call->task;
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_autoptr(GString) paired = g_string_new (NULL);
  g_autoptr(JsonArray) browsers = json_array_new ();
  g_autoptr(JsonNode) browsers_node = json_node_new (JSON_NODE_ARRAY);
  GListModel *devices;

  if (engine == NULL)
    {
      chp_tool_return_error (task, "internal", "Chaperone is shutting down", NULL);
      return;
    }

  chp_tool_see_devices (call->self, engine);
  devices = G_LIST_MODEL (chp_engine_get_devices (engine));
  call->targets = g_ptr_array_new_with_free_func (tabs_target_free);
  for (guint i = 0; i < g_list_model_get_n_items (devices); i++)
    {
      g_autoptr(ChpDevice) device = g_list_model_get_item (devices, i);
      const char *alias = chp_tool_alias_of (call->self, chp_device_get_id (device));
      g_autofree char *name = chp_mcp_format_line (chp_device_get_name (device), 64);
      JsonObject *b = json_object_new ();

      json_object_set_string_member (b, "browser", alias);
      json_object_set_string_member (b, "name", name);
      json_object_set_boolean_member (b, "online", chp_device_get_online (device));
      json_array_add_object_element (browsers, b);
      g_string_append_printf (paired, "%s%s (\"%s\", %s)", paired->len > 0 ? ", " : "", alias,
                              name, chp_device_get_online (device) ? "connected" : "not connected");

      if (chp_device_get_online (device))
        {
          TabsTarget *target = g_new0 (TabsTarget, 1);

          target->device_id = g_strdup (chp_device_get_id (device));
          target->alias = g_strdup (alias);
          target->name = g_steal_pointer (&name);
          g_ptr_array_add (call->targets, target);
        }
    }
  json_node_set_array (browsers_node, browsers);
  g_object_set_data_full (G_OBJECT (task), "browsers", g_steal_pointer (&browsers_node),
                          (GDestroyNotify) json_node_unref);

  if (call->targets->len == 0)
    {
      JsonObject *structured = json_object_new ();
      g_autofree char *text = NULL;

      if (paired->len == 0)
        text = g_strdup ("No browser is connected to Chaperone: none is paired yet. Ask the person "
                         "to install the Chaperone extension in their browser and pair it: they "
                         "press Pair in the extension's popup, check that the six digits match the "
                         "ones the Chaperone app shows, and press Pair in the app. Then they grant "
                         "you tabs from the popup.");
      else
        text = g_strdup_printf ("No browser is connected to Chaperone now. Paired: %s. Ask the "
                                "person to open that browser (the Chaperone extension connects by "
                                "itself), or to pair another one from the extension's popup.",
                                paired->str);
      json_object_set_array_member (structured, "tabs", json_array_new ());
      json_object_set_array_member (structured, "errors", json_array_new ());
      json_object_set_member (structured, "browsers",
                              json_node_copy (g_object_get_data (G_OBJECT (task), "browsers")));
      chp_tool_return_ok (task, text, structured, NULL);
      return;
    }

  /* Every browser at once: a slow one does not hold up the others' tabs. */
  call->pending = call->targets->len;
  for (guint i = 0; i < call->targets->len; i++)
    {
      TabsTarget *target = g_ptr_array_index (call->targets, i);
      g_autoptr(JsonNode) params = chp_tool_params_new (NULL);

      target->task = g_object_ref (task);
      /* With the call: its trace step counts the time the requests waited to be sent. */
      chp_tool_agent_call (call->self, engine, target->device_id, "browser.tabs", params,
                           TABS_TIMEOUT_MS, g_task_get_cancellable (task), NULL, call,
                           tabs_answered_cb, target);
    }
}
