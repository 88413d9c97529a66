/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-ui-rules.c: "Always allow" as the person meets it, under a display, with a real engine, a
 * browser played by the C test client and an agent's act: the held write's card offers it (a send's
 * never does), pressing it approves the hold and lists the rule in Grants, the agent's next such
 * write never makes a card and the list says it was used once, and Revoke takes the rule away;
 * a Revoke the disk did not save is said on the row, and Revoke again retries. */
#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <sqlite3.h>

#include "chp-frame.h"
#include "chp-hold-row.h"
#include "chp-rule-row.h"
#include "chp-test-client.h"
#include "chp-ui-test.h"
#include "chp-window.h"

#define SHOP "https://shop.example"
#define HOLD_JSON \
  "{\"holdId\":\"%s\",\"state\":\"%s\",\"kind\":\"%s\",\"reason\":\"label\"," \
  "\"word\":null,\"control\":\"Save draft\",\"site\":\"" SHOP "\",\"fields\":[]," \
  "\"signature\":\"9f2c\",\"tabId\":7,\"createdAt\":1}"

static GtkApplication *app;

/* The label under @widget whose text starts with @start, or %NULL. */
static GtkLabel *
label_starting (GtkWidget  *widget,
                const char *start)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkLabel *found;

      if (GTK_IS_LABEL (child) && g_str_has_prefix (gtk_label_get_text (GTK_LABEL (child)), start))
        return GTK_LABEL (child);
      if ((found = label_starting (child, start)) != NULL)
        return found;
    }
  return NULL;
}

typedef struct
{
  ChpEngine *engine;
  char *dir;
  guint port;
  ChpWindow *window;
  ChpTestClient *client;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(ChpPairingRequest) request = NULL;
  g_autofree char *code = NULL;
  g_autoptr(ChpAgentSession) agent = chp_agent_session_new ("a1", "Test Agent 1.0", 1);
  ChpDevice *device;

  f->engine = chp_test_engine_start ("chp-ui-rules-XXXXXX", &f->dir, &f->port);
  f->window = chp_window_new (app);
  chp_window_set_engine (f->window, f->engine);
  gtk_window_set_default_size (GTK_WINDOW (f->window), 800, 700);
  gtk_window_present (GTK_WINDOW (f->window));
  chp_ui_test_wait_frame (GTK_WIDGET (f->window));

  chp_agent_session_set_client_key (agent, "Test Agent");
  chp_agent_session_list_add (chp_engine_get_agent_sessions (f->engine), agent);

  f->client = chp_test_client_new (f->port, NULL);
  code = chp_test_client_begin_pairing (f->client, NULL);
  g_assert_nonnull (code);
  request = g_list_model_get_item (G_LIST_MODEL (chp_engine_get_pairing (f->engine)), 0);
  chp_pairing_request_approve (request, FALSE);
  g_assert_true (chp_test_client_finish_pairing (f->client));
  g_assert_true (chp_test_client_connect (f->client, NULL));
  device = chp_device_list_lookup (chp_engine_get_devices (f->engine), f->client->device_id);
  chp_test_until (chp_device_get_online (device));
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_clear_pointer (&f->client, chp_test_client_free);
  g_object_add_weak_pointer (G_OBJECT (f->window), (gpointer *) &f->window);
  gtk_window_destroy (GTK_WINDOW (f->window));
  chp_test_until (f->window == NULL);
  g_clear_object (&f->engine);
  g_free (f->dir);
}

static void
send_text (Fixture    *f,
           const char *event,
           const char *id,
           const char *state,
           const char *kind,
           JsonObject *request)
{
  static gint64 sequence;
  g_autofree char *hold = g_strdup_printf (HOLD_JSON, id, state, kind);
  g_autofree char *text = NULL;
  g_autoptr(JsonNode) node = NULL;

  if (request == NULL)
    {
      node = json_from_string (hold, NULL);
      text = chp_frame_build_event (event, node, ++sequence, g_get_real_time () / 1000);
    }
  else
    {
      g_autofree char *answer = g_str_equal (state, "held")
                                ? g_strdup_printf ("{\"held\":true,\"hold\":%s}", hold)
                                : g_strdup (hold);

      node = json_from_string (answer, NULL);
      text = chp_frame_build_response (json_object_get_string_member (request, "id"), node);
    }
  chp_test_client_send (f->client, text);
}

static JsonObject *
next_request (Fixture    *f,
              const char *method)
{
  JsonObject *request = chp_test_client_next_type (f->client, "request", 5000);

  g_assert_nonnull (request);
  g_assert_cmpstr (json_object_get_string_member (request, "method"), ==, method);
  return json_object_ref (request);
}

typedef struct
{
  gboolean  done;
  JsonNode *answer;
} Act;

static void
acted_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  Act *act = user_data;

  act->answer = chp_engine_agent_call_finish (CHP_ENGINE (source), result, NULL);
  act->done = TRUE;
}

/* The agent's click, which the browser holds as @kind: its event, then its answer. */
static void
act_held (Fixture    *f,
          const char *id,
          const char *kind,
          Act        *act)
{
  g_autoptr(JsonObject) request = NULL;

  chp_engine_agent_call_as_async (f->engine, "a1", f->client->device_id, "browser.node.action",
                                  NULL, 5000, NULL, acted_cb, act);
  request = next_request (f, "browser.node.action");
  send_text (f, "hold.changed", id, "held", kind, NULL);
  send_text (f, NULL, id, "held", kind, request);
}

static GtkWidget *
only (Fixture *f,
      GType    type)
{
  g_autoptr(GPtrArray) found = g_ptr_array_new ();

  chp_ui_test_find_all (GTK_WIDGET (f->window), type, found);
  return found->len == 1 ? g_ptr_array_index (found, 0) : NULL;
}

static guint
count (Fixture *f,
       GType    type)
{
  g_autoptr(GPtrArray) found = g_ptr_array_new ();

  chp_ui_test_find_all (GTK_WIDGET (f->window), type, found);
  return found->len;
}

/* With CHAPERONE_SCREENSHOT_DIR set (meson sets it), the window as drawn, to look at. */
static void
shoot (Fixture    *f,
       const char *name)
{
  const char *dir = g_getenv ("CHAPERONE_SCREENSHOT_DIR");
  g_autoptr(GdkPaintable) paintable = NULL;
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autofree char *path = NULL;
  int width = gtk_widget_get_width (GTK_WIDGET (f->window));
  int height = gtk_widget_get_height (GTK_WIDGET (f->window));

  if (dir == NULL)
    return;
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  paintable = gtk_widget_paintable_new (GTK_WIDGET (f->window));
  /* Past the pages' crossfade. */
  for (guint i = 0; i < 30; i++)
    chp_ui_test_wait_frame (GTK_WIDGET (f->window));
  while (node == NULL)
    {
      g_autoptr(GtkSnapshot) snapshot = gtk_snapshot_new ();

      gdk_paintable_snapshot (paintable, snapshot, width, height);
      node = gtk_snapshot_to_node (snapshot);
      if (node == NULL)
        chp_ui_test_wait_frame (GTK_WIDGET (f->window));
    }
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (f->window)), node,
                                         &GRAPHENE_RECT_INIT (0, 0, width, height));
  path = g_build_filename (dir, name, NULL);
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("%s", path);
}

static void
test_always_allow (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(JsonObject) request = NULL;
  GtkWidget *row;
  GtkLabel *always;
  GtkWidget *rule_row;
  Act act = { 0 };

  /* A send: a card with Approve and Decline, and no "Always allow". */
  act_held (f, "K0", "outward", &act);
  chp_test_until (act.done && only (f, CHP_TYPE_HOLD_ROW) != NULL);
  g_clear_pointer (&act.answer, json_node_unref);
  row = only (f, CHP_TYPE_HOLD_ROW);
  g_assert_false (chp_ui_test_shows_text (row, "Always allow"));
  /* Nor does its action do anything when activated by other means: the browser's next request
   * is the Decline pressed after it. */
  gtk_widget_activate_action (row, "hold.always-allow", NULL);
  g_assert_true (gtk_widget_activate_action (row, "hold.decline", NULL));
  request = next_request (f, "extension.hold.resolve");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (request, "params"),
                                                  "outcome"), ==, "decline");
  send_text (f, NULL, "K0", "declined", "outward", request);
  g_clear_pointer (&request, json_object_unref);
  chp_test_until (count (f, CHP_TYPE_HOLD_ROW) == 0);

  /* A write by a known agent: the card offers it, naming the site and the agent. */
  act = (Act) { 0 };
  act_held (f, "K1", "write", &act);
  chp_test_until (act.done && only (f, CHP_TYPE_HOLD_ROW) != NULL);
  g_clear_pointer (&act.answer, json_node_unref);
  row = only (f, CHP_TYPE_HOLD_ROW);
  /* The agent as Chaperone knows it: its name, case-folded (the key its pauses use too); and
   * where the rule holds, as Grants says it: a rule made on this card approves the agent's
   * writes in every paired browser. Said in full, even in a 360 px window. */
  chp_ui_test_show_at (GTK_WINDOW (f->window), 360, 700);
  always = label_starting (row, "In any browser");
  g_assert_nonnull (always);
  g_assert_cmpstr (gtk_label_get_text (always), ==,
                   "In any browser, always allow changes on shop.example by test agent");
  g_assert_false (pango_layout_is_ellipsized (gtk_label_get_layout (always)));
  g_assert_true (chp_ui_test_shows_text (row, "For 1 hour"));
  shoot (f, "rules-card.png");
  chp_ui_test_assert_fits (GTK_WIDGET (f->window), 360, "a write's card with Always Allow");
  chp_ui_test_show_at (GTK_WINDOW (f->window), 800, 700);
  g_assert_cmpuint (chp_hold_row_duration_seconds (0), ==, 3600);
  g_assert_cmpuint (chp_hold_row_duration_seconds (1), <=, 24 * 3600);
  g_assert_cmpuint (chp_hold_row_duration_seconds (2), ==, 30 * 24 * 3600);

  /* Pressed: the hold is approved as Approve does, and the rule is listed in Grants. */
  g_assert_true (gtk_widget_activate_action (row, "hold.always-allow", NULL));
  request = next_request (f, "extension.hold.resolve");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (request, "params"),
                                                  "outcome"), ==, "approve");
  send_text (f, NULL, "K1", "done", "write", request);
  g_clear_pointer (&request, json_object_unref);
  chp_test_until (count (f, CHP_TYPE_HOLD_ROW) == 0 && count (f, CHP_TYPE_RULE_ROW) == 1);
  rule_row = only (f, CHP_TYPE_RULE_ROW);
  g_assert_true (chp_ui_test_shows_text (rule_row, "Changes on shop.example"));
  g_assert_true (chp_ui_test_shows_text (rule_row, "By test agent · " SHOP));
  /* A rule is not tied to the browser it was made in. */
  g_assert_true (chp_ui_test_shows_text (rule_row, "in any browser"));
  g_assert_true (chp_ui_test_shows_text (rule_row, "Not used yet"));
  chp_window_show_page (f->window, "grants");
  shoot (f, "rules-list.png");
  chp_ui_test_assert_fits (GTK_WIDGET (f->window), 360, "the Grants page with a rule");

  /* The agent's next such write: no card, and the list says it was used once. */
  act = (Act) { 0 };
  act_held (f, "K2", "write", &act);
  request = next_request (f, "extension.hold.resolve");
  g_assert_cmpuint (count (f, CHP_TYPE_HOLD_ROW), ==, 0);
  send_text (f, NULL, "K2", "done", "write", request);
  g_clear_pointer (&request, json_object_unref);
  chp_test_until (act.done);
  g_assert_nonnull (act.answer);
  g_assert_true (json_object_get_boolean_member (json_node_get_object (act.answer), "done"));
  g_clear_pointer (&act.answer, json_node_unref);
  chp_test_until (chp_ui_test_shows_text (rule_row, "Used 1 time"));
  g_assert_cmpuint (count (f, CHP_TYPE_HOLD_ROW), ==, 0);

  /* Revoke: the row goes, and the next write is a card again. */
  g_assert_true (gtk_widget_activate_action (rule_row, "rule.revoke", NULL));
  chp_test_until (count (f, CHP_TYPE_RULE_ROW) == 0);
  act = (Act) { 0 };
  act_held (f, "K3", "write", &act);
  chp_test_until (act.done && only (f, CHP_TYPE_HOLD_ROW) != NULL);
  g_clear_pointer (&act.answer, json_node_unref);
}

/* The agent's write K1 on a card, always allowed by the person: the rule's row. */
static GtkWidget *
rule_from_card (Fixture *f)
{
  g_autoptr(JsonObject) request = NULL;
  Act act = { 0 };

  act_held (f, "K1", "write", &act);
  chp_test_until (act.done && only (f, CHP_TYPE_HOLD_ROW) != NULL);
  g_clear_pointer (&act.answer, json_node_unref);
  g_assert_true (gtk_widget_activate_action (only (f, CHP_TYPE_HOLD_ROW), "hold.always-allow",
                                             NULL));
  request = next_request (f, "extension.hold.resolve");
  send_text (f, NULL, "K1", "done", "write", request);
  chp_test_until (count (f, CHP_TYPE_HOLD_ROW) == 0 && count (f, CHP_TYPE_RULE_ROW) == 1);
  return only (f, CHP_TYPE_RULE_ROW);
}

/* Another connection to the engine's database makes a rule's revoke fail as a full disk would
 * (@refuse), or lets it through again. */
static void
refuse_revokes (Fixture  *f,
                gboolean  refuse)
{
  g_autofree char *path = g_build_filename (f->dir, "chaperone.db", NULL);
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  sqlite3_busy_timeout (db, CHP_TEST_WAIT_MS);
  g_assert_cmpint (sqlite3_exec (db, refuse ? "CREATE TRIGGER disk_full BEFORE UPDATE OF "
                                 "revoked_at ON rules BEGIN SELECT RAISE (ABORT, 'database or "
                                 "disk is full'); END"
                                            : "DROP TRIGGER disk_full",
                                 NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
}

/* A Revoke the disk did not save: the row says so and stays (a restart would bring the rule
 * back), the rule lets nothing through meanwhile, and Revoke again takes it away. */
static void
test_revoke_not_saved (Fixture       *f,
                       gconstpointer  data)
{
  /* Kept, so that a row taken away too soon fails the wait below rather than the test. */
  g_autoptr(GtkWidget) rule_row = g_object_ref (rule_from_card (f));
  Act act = { 0 };

  refuse_revokes (f, TRUE);
  g_assert_true (gtk_widget_activate_action (rule_row, "rule.revoke", NULL));
  chp_test_until (chp_ui_test_shows_text (rule_row, "not saved"));
  g_assert_cmpuint (count (f, CHP_TYPE_RULE_ROW), ==, 1);
  chp_window_show_page (f->window, "grants");
  shoot (f, "rules-not-saved.png");
  chp_ui_test_assert_fits (GTK_WIDGET (f->window), 360, "a rule whose revoke was not saved");

  /* The agent's next such write is a card: the rule already matches nothing. */
  act_held (f, "K2", "write", &act);
  chp_test_until (act.done && only (f, CHP_TYPE_HOLD_ROW) != NULL);
  g_clear_pointer (&act.answer, json_node_unref);

  refuse_revokes (f, FALSE);
  g_assert_true (gtk_widget_activate_action (rule_row, "rule.revoke", NULL));
  chp_test_until (count (f, CHP_TYPE_RULE_ROW) == 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  app = chp_ui_test_app_new ("io.github.chaperone.Chaperone.TestRules",
                             "/chaperone/ui/rules/skipped");
  if (app == NULL)
    return g_test_run ();

  g_test_add ("/chaperone/ui/rules/always-allow", Fixture, NULL, fixture_setup, test_always_allow,
              fixture_teardown);
  g_test_add ("/chaperone/ui/rules/revoke-not-saved", Fixture, NULL, fixture_setup,
              test_revoke_not_saved, fixture_teardown);

  return g_test_run ();
}
