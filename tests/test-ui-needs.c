/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-ui-needs.c: the Needs you cards for held acts, plans and paused agents, under a display and
 * with a real engine and a browser played by the C test client: a hold.changed event makes a card
 * with the hold's fields (a credential only by its length), Approve and Decline are the browser's
 * extension.hold.resolve, a plan is approved once and leaves, and a paused agent is resumed. */
#include "config.h"

#include <adwaita.h>

#include "chp-agent-row.h"
#include "chp-attention-row.h"
#include "chp-frame.h"
#include "chp-hold-row.h"
#include "chp-plan-row.h"
#include "chp-test-client.h"
#include "chp-ui-test.h"
#include "chp-window.h"

/* One application for every test: a second one with the same id could not register. */
static GtkApplication *app;

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
  f->engine = chp_test_engine_start ("chp-ui-needs-XXXXXX", &f->dir, &f->port);
  f->window = chp_window_new (app);
  chp_window_set_engine (f->window, f->engine);
  gtk_window_set_default_size (GTK_WINDOW (f->window), 800, 700);
  gtk_window_present (GTK_WINDOW (f->window));
  chp_ui_test_wait_frame (GTK_WIDGET (f->window));
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

/* ---- finding things on screen ------------------------------------------------------------ */

static guint
count_type (Fixture *f,
            GType    type)
{
  g_autoptr(GPtrArray) found = g_ptr_array_new ();

  chp_ui_test_find_all (GTK_WIDGET (f->window), type, found);
  return found->len;
}

/* Every label anywhere in the app's windows, visible or not: a secret must be in none. */
static gboolean
any_label_has (const char *text)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GtkWidget) window = g_list_model_get_item (toplevels, i);
      g_autoptr(GPtrArray) labels = g_ptr_array_new ();

      chp_ui_test_find_all (window, GTK_TYPE_LABEL, labels);
      for (guint j = 0; j < labels->len; j++)
        if (strstr (gtk_label_get_label (g_ptr_array_index (labels, j)), text) != NULL)
          return TRUE;
    }

  return FALSE;
}

static GtkWidget *
button_for (GtkWidget  *row,
            const char *action_name)
{
  g_autoptr(GPtrArray) buttons = g_ptr_array_new ();

  chp_ui_test_find_all (row, GTK_TYPE_BUTTON, buttons);
  for (guint i = 0; i < buttons->len; i++)
    if (g_strcmp0 (gtk_actionable_get_action_name (g_ptr_array_index (buttons, i)),
                   action_name) == 0)
      return g_ptr_array_index (buttons, i);

  g_assert_not_reached ();
}

static GtkWidget *
needs_page (Fixture *f)
{
  GtkWidget *page = chp_ui_test_find_type (GTK_WIDGET (f->window),
                                           g_type_from_name ("ChpNeedsPage"));

  g_assert_nonnull (page);
  return page;
}

/* ---- a browser ----------------------------------------------------------------------------- */

static gboolean
device_online (gpointer data)
{
  return chp_device_get_online (data);
}

static void browser_settled (Fixture *f);

static void
browser_connect (Fixture *f)
{
  g_autofree char *code = NULL;
  GListModel *requests = G_LIST_MODEL (chp_engine_get_pairing (f->engine));
  g_autoptr(ChpPairingRequest) request = NULL;
  ChpDevice *device;

  f->client = chp_test_client_new (f->port, NULL);
  code = chp_test_client_begin_pairing (f->client, NULL);
  g_assert_nonnull (code);
  g_assert_cmpuint (g_list_model_get_n_items (requests), ==, 1);
  request = g_list_model_get_item (requests, 0);
  chp_pairing_request_approve (request, FALSE);
  g_assert_true (chp_test_client_finish_pairing (f->client));
  g_assert_true (chp_test_client_connect (f->client, NULL));
  device = chp_device_list_lookup (chp_engine_get_devices (f->engine), f->client->device_id);
  g_assert_true (chp_test_spin_until (device_online, device, 5000));
  browser_settled (f);
}

static void
browser_event (Fixture    *f,
               const char *event,
               const char *data)
{
  static gint64 sequence;
  g_autoptr(JsonNode) node = json_from_string (data, NULL);
  g_autofree char *text = NULL;

  g_assert_nonnull (node);
  text = chp_frame_build_event (event, node, ++sequence, g_get_real_time () / 1000);
  chp_test_client_send (f->client, text);
}

static JsonObject *
browser_request (Fixture    *f,
                 const char *method)
{
  /* The client keeps its last message only until the next one: a reference of our own. */
  JsonObject *request = chp_test_client_next_type (f->client, "request", 5000);

  g_assert_nonnull (request);
  g_assert_cmpstr (json_object_get_string_member (request, "method"), ==, method);
  return json_object_ref (request);
}

static void
browser_answer (Fixture    *f,
                JsonObject *request,
                const char *result)
{
  g_autoptr(JsonNode) node = json_from_string (result, NULL);
  g_autofree char *text = chp_frame_build_response (json_object_get_string_member (request, "id"),
                                                    node);

  chp_test_client_send (f->client, text);
}

static void
browser_refuse (Fixture    *f,
                JsonObject *request,
                const char *code,
                const char *message)
{
  g_autofree char *text = chp_frame_build_error_response (json_object_get_string_member (request,
                                                                                         "id"),
                                                          code, message);

  chp_test_client_send (f->client, text);
}

/* The engine asks a new connection for its info and its grants, and the client answers them as
 * they come: a call of our own, sent after them and answered after them, is done once the
 * engine has read theirs. */
static void
browser_settled (Fixture *f)
{
  g_autoptr(JsonObject) request = NULL;
  ChpTestCall call = { 0 };

  chp_test_call_start (chp_engine_get_bridge (f->engine), f->client->device_id, "browser.tabs",
                       NULL, 5000, &call);
  request = browser_request (f, "browser.tabs");
  browser_answer (f, request, "{\"tabs\":[]}");
  g_assert_true (chp_test_spin_until (chp_test_call_done, &call, 5000));
  g_assert_no_error (call.error);
  chp_test_call_clear (&call);
}

typedef struct
{
  Fixture *f;
  GType type;
  guint n;
} CountWait;

static gboolean
has_n (gpointer data)
{
  CountWait *wait = data;

  return count_type (wait->f, wait->type) == wait->n;
}

static void
wait_for_cards (Fixture *f,
                GType    type,
                guint    n)
{
  CountWait wait = { f, type, n };

  g_assert_true (chp_test_spin_until (has_n, &wait, 5000));
}

#define HOLD(id, state, kind, extra) \
  "{\"holdId\":\"" id "\",\"state\":\"" state "\",\"kind\":\"" kind "\"," \
  "\"reason\":\"label\",\"word\":\"send\",\"control\":\"Send <b>now</b>\"," \
  "\"site\":\"https://shop.example\",\"fields\":[" \
  "{\"name\":\"Email\",\"value\":\"ada@example.com\"}," \
  "{\"name\":\"Password\",\"secret\":true,\"length\":8}" extra "]," \
  "\"signature\":\"9f2c\",\"tabId\":7,\"createdAt\":1}"

/* ---- holds --------------------------------------------------------------------------------- */

static void
test_hold_approve (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(JsonObject) request = NULL;
  JsonObject *params;
  GtkWidget *row;
  g_autofree char *text = NULL;

  browser_connect (f);

  /* A browser that sends a credential's value with it is broken: no card, and the value is
   * nowhere on screen. */
  browser_event (f, "hold.changed",
                 HOLD ("K0", "held", "outward",
                       ",{\"name\":\"PIN\",\"secret\":true,\"length\":7,\"value\":\"hunter2\"}"));
  /* Events are read in order: once the next hold's card shows, K0 was read, and it made none. */
  browser_event (f, "hold.changed", HOLD ("K1", "held", "outward", ""));
  wait_for_cards (f, CHP_TYPE_HOLD_ROW, 1);
  g_assert_false (any_label_has ("hunter2"));
  g_assert_cmpstr (chp_window_get_visible_page (f->window), ==, "needs-you");
  row = chp_ui_test_find_type (needs_page (f), CHP_TYPE_HOLD_ROW);
  text = chp_ui_test_all_text (row);
  g_test_message ("hold card:\n%s", text);
  g_assert_true (chp_ui_test_shows_text (row, "Send on shop.example?"));
  /* The page's label as text, not markup. */
  g_assert_true (chp_ui_test_shows_text (row, "Button: Send <b>now</b>"));
  g_assert_true (chp_ui_test_shows_text (row, "Email: ada@example.com"));
  g_assert_true (chp_ui_test_shows_text (row, "Password: filled, 8 characters"));
  g_assert_true (chp_ui_test_shows_text (row, "https://shop.example"));
  g_assert_false (any_label_has ("hunter2"));

  /* Approve is the browser's extension.hold.resolve; one press, then both buttons wait. */
  g_assert_true (gtk_widget_activate_action (row, "hold.approve", NULL));
  g_assert_false (gtk_widget_get_sensitive (button_for (row, "hold.approve")));
  g_assert_false (gtk_widget_get_sensitive (button_for (row, "hold.decline")));
  request = browser_request (f, "extension.hold.resolve");
  params = json_object_get_object_member (request, "params");
  g_assert_cmpstr (json_object_get_string_member (params, "holdId"), ==, "K1");
  g_assert_cmpstr (json_object_get_string_member (params, "outcome"), ==, "approve");
  browser_answer (f, request, HOLD ("K1", "done", "outward", ""));
  browser_event (f, "hold.changed", HOLD ("K1", "done", "outward", ""));
  wait_for_cards (f, CHP_TYPE_HOLD_ROW, 0);

  /* How a held key press or drop is said, in the app's words, from the parts the page named. */
  {
    static const struct {
      const char *members;
      const char *says[3];
    } cards[] = {
      /* A key press that is itself the act (a chat box's Enter, with no Send button): a key, not
       * a button, with the message it would send. */
      { "\"kind\":\"outward\",\"reason\":\"key\",\"word\":\"message\",\"control\":\"Enter\","
        "\"source\":\"Write your message here\",\"fields\":[{\"name\":\"Write your message here\","
        "\"value\":\"Ferry delayed by fog\"}]",
        { "Key: Enter in “Write your message here” (sends it)",
          "Write your message here: Ferry delayed by fog", NULL } },
      /* A key that saves (Control+S in an editor): the save it is. */
      { "\"kind\":\"write\",\"reason\":\"key\",\"word\":\"save\",\"control\":\"Control+s\","
        "\"fields\":[]",
        { "Key: Control+s (saves)", NULL } },
      /* A drop of something the page gave no name: still something dropped. */
      { "\"kind\":\"delete\",\"reason\":\"drop\",\"word\":\"trash\",\"control\":\"Trash\","
        "\"source\":\"\",\"fields\":[]",
        { "Drop: “(no name)” onto “Trash”", NULL } },
      /* An extension from before `source` sent both ends as one control: said as it came. */
      { "\"kind\":\"delete\",\"reason\":\"drop\",\"word\":\"trash\","
        "\"control\":\"\\\"Order 4411\\\" onto \\\"Trash\\\"\",\"fields\":[]",
        { "Drop: \"Order 4411\" onto \"Trash\"", NULL } },
    };

    for (guint i = 0; i < G_N_ELEMENTS (cards); i++)
      {
        g_autofree char *held = g_strdup_printf ("{\"holdId\":\"K%u\",\"state\":\"held\",%s,"
                                                 "\"site\":\"https://pad.example\",\"signature\":\"9f3%u\","
                                                 "\"tabId\":7,\"createdAt\":2}",
                                                 10 + i, cards[i].members, i);
        g_autofree char *declined = g_strdup_printf ("{\"holdId\":\"K%u\",\"state\":\"declined\",%s,"
                                                     "\"site\":\"https://pad.example\","
                                                     "\"signature\":\"9f3%u\",\"tabId\":7,"
                                                     "\"createdAt\":2}",
                                                     10 + i, cards[i].members, i);

        browser_event (f, "hold.changed", held);
        wait_for_cards (f, CHP_TYPE_HOLD_ROW, 1);
        row = chp_ui_test_find_type (needs_page (f), CHP_TYPE_HOLD_ROW);
        for (guint k = 0; cards[i].says[k] != NULL; k++)
          g_assert_true (chp_ui_test_shows_text (row, cards[i].says[k]));
        browser_event (f, "hold.changed", declined);
        wait_for_cards (f, CHP_TYPE_HOLD_ROW, 0);
      }
  }

  /* A drag judged by where it drops (a card onto Trash) is said as a drop, with what would be
   * dropped where, not as a button; once approved, the card goes. */
#define DROP_HOLD(state) \
  "{\"holdId\":\"K6\",\"state\":\"" state "\",\"kind\":\"delete\",\"reason\":\"drop\"," \
  "\"word\":\"trash\",\"control\":\"Trash\",\"source\":\"Order 4411\"," \
  "\"site\":\"https://board.example\",\"fields\":[],\"signature\":\"9f2f\",\"tabId\":7," \
  "\"createdAt\":3}"
  browser_event (f, "hold.changed", DROP_HOLD ("held"));
  wait_for_cards (f, CHP_TYPE_HOLD_ROW, 1);
  row = chp_ui_test_find_type (needs_page (f), CHP_TYPE_HOLD_ROW);
  g_clear_pointer (&text, g_free);
  text = chp_ui_test_all_text (row);
  g_test_message ("drop card:\n%s", text);
  g_assert_true (chp_ui_test_shows_text (row, "Delete on board.example?"));
  g_assert_true (chp_ui_test_shows_text (row, "Drop: “Order 4411” onto “Trash”"));
  g_assert_null (strstr (text, "Button:"));
  g_assert_true (gtk_widget_activate_action (row, "hold.approve", NULL));
  g_clear_pointer (&request, json_object_unref);
  request = browser_request (f, "extension.hold.resolve");
  params = json_object_get_object_member (request, "params");
  g_assert_cmpstr (json_object_get_string_member (params, "holdId"), ==, "K6");
  g_assert_cmpstr (json_object_get_string_member (params, "outcome"), ==, "approve");
  browser_answer (f, request, DROP_HOLD ("done"));
  browser_event (f, "hold.changed", DROP_HOLD ("done"));
  wait_for_cards (f, CHP_TYPE_HOLD_ROW, 0);
#undef DROP_HOLD
}

static void
test_hold_decline (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(JsonObject) request = NULL;
  g_autoptr(JsonObject) again = NULL;
  GtkWidget *row;
  GtkWidget *stack;

  browser_connect (f);
  browser_event (f, "hold.changed", HOLD ("K2", "held", "delete", ""));
  wait_for_cards (f, CHP_TYPE_HOLD_ROW, 1);
  row = chp_ui_test_find_type (needs_page (f), CHP_TYPE_HOLD_ROW);
  g_assert_true (chp_ui_test_shows_text (row, "Delete on shop.example?"));

  /* The browser refuses: the card says so and can be pressed again. */
  g_assert_true (gtk_widget_activate_action (row, "hold.decline", NULL));
  request = browser_request (f, "extension.hold.resolve");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (request, "params"),
                                                  "outcome"), ==, "decline");
  browser_refuse (f, request, "busy", "The tab is busy");
  chp_test_until (gtk_widget_get_sensitive (button_for (row, "hold.decline")));
  g_assert_true (gtk_widget_get_sensitive (button_for (row, "hold.approve")));
  g_assert_true (chp_ui_test_shows_text (row, "Nothing was done"));

  g_assert_true (gtk_widget_activate_action (row, "hold.decline", NULL));
  again = browser_request (f, "extension.hold.resolve");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (again, "params"),
                                                  "outcome"), ==, "decline");
  browser_answer (f, again, HOLD ("K2", "declined", "delete", ""));
  browser_event (f, "hold.changed", HOLD ("K2", "declined", "delete", ""));
  wait_for_cards (f, CHP_TYPE_HOLD_ROW, 0);
  stack = chp_ui_test_find_type (needs_page (f), GTK_TYPE_STACK);
  g_assert_cmpstr (gtk_stack_get_visible_child_name (GTK_STACK (stack)), ==, "empty");
}

/* ---- plans --------------------------------------------------------------------------------- */

static ChpPlan *
post_plan (Fixture    *f,
           const char *session_id,
           const char *summary)
{
  g_autofree char *text = g_strdup_printf (
    "{\"summary\":\"%s\",\"steps\":["
    "{\"kind\":\"create\",\"site\":\"shop.example\",\"summary\":\"Add a delivery address\"},"
    "{\"kind\":\"edit\",\"site\":\"shop.example\",\"summary\":\"Set it as the default\"}]}",
    summary);
  g_autoptr(JsonNode) args = json_from_string (text, NULL);
  g_autoptr(GError) error = NULL;
  ChpPlan *plan = chp_engine_post_plan (f->engine, session_id, "Test Agent",
                                        json_node_get_object (args), &error);

  g_assert_no_error (error);
  g_assert_nonnull (plan);
  return plan;
}

static void
test_plan (Fixture       *f,
           gconstpointer  data)
{
  g_autoptr(ChpAgentSession) session = chp_agent_session_new ("a1", "Test Agent",
                                                              g_get_real_time () / 1000);
  g_autoptr(ChpPlan) plan = NULL;
  g_autoptr(ChpPlan) other = NULL;
  GtkWidget *row;
  GtkWidget *agent_row;

  chp_agent_session_list_add (chp_engine_get_agent_sessions (f->engine), session);
  plan = post_plan (f, "a1", "Save my <i>address</i>");
  wait_for_cards (f, CHP_TYPE_PLAN_ROW, 1);
  row = chp_ui_test_find_type (needs_page (f), CHP_TYPE_PLAN_ROW);
  g_assert_true (chp_ui_test_shows_text (row, "Test Agent asks to follow a plan"));
  g_assert_true (chp_ui_test_shows_text (row, "Save my <i>address</i>"));
  g_assert_true (chp_ui_test_shows_text (row, "1. Create on shop.example: Add a delivery address"));
  g_assert_true (chp_ui_test_shows_text (row, "2. Edit on shop.example: Set it as the default"));
  g_assert_true (chp_ui_test_shows_text (row, "Deletes, messages and payments are never covered"));

  /* Approved once: the plan runs, and it no longer waits in Needs you. */
  g_assert_true (gtk_widget_activate_action (row, "plan.approve", NULL));
  g_assert_true (chp_plan_is_approved (plan));
  wait_for_cards (f, CHP_TYPE_PLAN_ROW, 0);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (chp_engine_get_plans (f->engine))),
                    ==, 1);

  /* The Agents page says how far it has gone. */
  agent_row = chp_ui_test_find_type (GTK_WIDGET (f->window), CHP_TYPE_AGENT_ROW);
  g_assert_nonnull (agent_row);
  g_assert_true (chp_ui_test_shows_text (agent_row, "Plan approved; no step taken yet"));
  g_assert_cmpint (chp_plan_list_use_step (chp_engine_get_plans (f->engine),
                                           chp_plan_get_id (plan), "shop.example"), ==, 1);
  g_assert_true (chp_ui_test_shows_text (agent_row, "Plan: step 1 of 2"));

  /* Declined: gone too, and not approved. */
  other = post_plan (f, "a1", "Another plan");
  wait_for_cards (f, CHP_TYPE_PLAN_ROW, 1);
  row = chp_ui_test_find_type (needs_page (f), CHP_TYPE_PLAN_ROW);
  g_assert_true (gtk_widget_activate_action (row, "plan.decline", NULL));
  wait_for_cards (f, CHP_TYPE_PLAN_ROW, 0);
  g_assert_false (chp_plan_is_approved (other));
  g_assert_cmpstr (chp_plan_get_state (other), ==, "declined");

  /* The last step ends the approved plan: the Agents page stops showing it. */
  g_assert_cmpint (chp_plan_list_use_step (chp_engine_get_plans (f->engine),
                                           chp_plan_get_id (plan), "shop.example"), ==, 2);
  chp_test_until (!chp_ui_test_shows_text (agent_row, "Plan:"));
}

static void
test_plan_while_stopped (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(ChpPlan) plan = post_plan (f, "a1", "Save my address");

  wait_for_cards (f, CHP_TYPE_PLAN_ROW, 1);

  /* Stop ends every plan: its card goes, and it was never approved. */
  chp_engine_stop_all (f->engine, "test");
  wait_for_cards (f, CHP_TYPE_PLAN_ROW, 0);
  g_assert_false (chp_plan_is_approved (plan));
  g_assert_cmpstr (chp_plan_get_state (plan), ==, "ended");
}

/* ---- agents the loop guard paused ---------------------------------------------------------- */

static void
test_attention (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(ChpAgentSession) session = chp_agent_session_new ("a1", "Test Agent",
                                                              g_get_real_time () / 1000);
  g_autoptr(ChpAgentSession) other = chp_agent_session_new ("a2", "Other Agent",
                                                            g_get_real_time () / 1000);
  GtkWidget *row;

  chp_agent_session_list_add (chp_engine_get_agent_sessions (f->engine), session);
  chp_agent_session_list_add (chp_engine_get_agent_sessions (f->engine), other);

  /* The person's own Pause needs nothing from them: with it, and with the two sessions simply
   * there, the one card that shows is the loop guard's, which came last. */
  chp_agent_session_request_pause (other);
  chp_agent_session_pause_for (session, "repeated");
  wait_for_cards (f, CHP_TYPE_ATTENTION_ROW, 1);
  g_assert_cmpint (chp_agent_session_get_state (other), ==, CHP_AGENT_SESSION_PAUSED);
  g_assert_cmpstr (chp_window_get_visible_page (f->window), ==, "needs-you");
  row = chp_ui_test_find_type (needs_page (f), CHP_TYPE_ATTENTION_ROW);
  g_assert_true (chp_ui_test_shows_text (row, "Test Agent was paused"));
  g_assert_true (chp_ui_test_shows_text (row, "It repeated the same action too many times in a row."));

  g_assert_true (gtk_widget_activate_action (row, "attention.resume", NULL));
  g_assert_cmpint (chp_agent_session_get_state (session), ==, CHP_AGENT_SESSION_RUNNING);
  g_assert_null (chp_agent_session_get_attention (session));
  wait_for_cards (f, CHP_TYPE_ATTENTION_ROW, 0);

  /* Failing, then Disconnect. */
  chp_agent_session_pause_for (session, "failing");
  wait_for_cards (f, CHP_TYPE_ATTENTION_ROW, 1);
  row = chp_ui_test_find_type (needs_page (f), CHP_TYPE_ATTENTION_ROW);
  g_assert_true (chp_ui_test_shows_text (row, "Its last three actions on a tab failed."));
  g_assert_true (gtk_widget_activate_action (row, "attention.disconnect", NULL));
  g_assert_cmpint (chp_agent_session_get_state (session), ==, CHP_AGENT_SESSION_DISCONNECTED);
  wait_for_cards (f, CHP_TYPE_ATTENTION_ROW, 0);
}

/* A pause is the agent's: two sessions of one agent that the loop guard paused are one card; the
 * Agents page says where the newer session's pause came from and why; the card's Disconnect
 * closes both sessions. */
static void
test_attention_one_per_agent (Fixture       *f,
                              gconstpointer  data)
{
  ChpAgentSessionList *sessions = chp_engine_get_agent_sessions (f->engine);
  g_autoptr(ChpAgentSession) first = chp_agent_session_new ("a1", "Test Agent 1.0",
                                                            g_get_real_time () / 1000);
  g_autoptr(ChpAgentSession) second = chp_agent_session_new ("a2", "Test Agent 1.1",
                                                             g_get_real_time () / 1000);
  g_autoptr(ChpAgentSession) third = chp_agent_session_new ("a3", "Other Agent",
                                                            g_get_real_time () / 1000);
  g_autoptr(GPtrArray) rows = g_ptr_array_new ();
  GtkWidget *row = NULL;

  chp_agent_session_set_client_key (first, "Test Agent");
  chp_agent_session_set_client_key (second, "Test Agent");
  chp_agent_session_list_add (sessions, first);
  chp_agent_session_pause_for (first, "failing");
  chp_agent_session_list_add (sessions, second);
  g_assert_cmpint (chp_agent_session_get_state (second), ==, CHP_AGENT_SESSION_PAUSED);
  /* One card, not one a session: a third agent's pause, which came after, shows as the
   * second card. */
  chp_agent_session_list_add (sessions, third);
  chp_agent_session_pause_for (third, "repeated");
  wait_for_cards (f, CHP_TYPE_ATTENTION_ROW, 2);

  chp_ui_test_find_all (GTK_WIDGET (f->window), CHP_TYPE_AGENT_ROW, rows);
  for (guint i = 0; i < rows->len; i++)
    if (chp_agent_row_get_session (g_ptr_array_index (rows, i)) == second)
      row = g_ptr_array_index (rows, i);
  g_assert_nonnull (row);
  g_assert_true (chp_ui_test_shows_text (row, "Paused with another session of this agent"));
  g_assert_true (chp_ui_test_shows_text (row, "Its last three actions on a tab failed."));

  g_ptr_array_set_size (rows, 0);
  chp_ui_test_find_all (needs_page (f), CHP_TYPE_ATTENTION_ROW, rows);
  row = NULL;
  for (guint i = 0; i < rows->len; i++)
    if (!chp_ui_test_shows_text (g_ptr_array_index (rows, i), "Other Agent"))
      row = g_ptr_array_index (rows, i);
  g_assert_nonnull (row);
  g_assert_true (gtk_widget_activate_action (row, "attention.disconnect", NULL));
  g_assert_cmpint (chp_agent_session_get_state (first), ==, CHP_AGENT_SESSION_DISCONNECTED);
  g_assert_cmpint (chp_agent_session_get_state (second), ==, CHP_AGENT_SESSION_DISCONNECTED);
  wait_for_cards (f, CHP_TYPE_ATTENTION_ROW, 1);
  g_assert_true (chp_ui_test_shows_text (chp_ui_test_find_type (needs_page (f), CHP_TYPE_ATTENTION_ROW),
                                         "Other Agent was paused"));
}

/* All kinds at once, in the page's order, in a 360 px window. */
static void
test_order_and_width (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(ChpAgentSession) session = chp_agent_session_new ("a1",
                                                              "A Rather Long Agent Client Name",
                                                              g_get_real_time () / 1000);
  g_autoptr(ChpPlan) plan = NULL;
  GtkListBox *list;
  GType order[] = { CHP_TYPE_HOLD_ROW, CHP_TYPE_PLAN_ROW, CHP_TYPE_ATTENTION_ROW };

  browser_connect (f);
  chp_agent_session_list_add (chp_engine_get_agent_sessions (f->engine), session);
  chp_agent_session_pause_for (session, "failing");
  plan = post_plan (f, "a1", "Save my address");
  browser_event (f, "hold.changed",
                 HOLD ("K3", "held", "write",
                       ",{\"name\":\"Notes\",\"value\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}"));
  wait_for_cards (f, CHP_TYPE_HOLD_ROW, 1);

  /* The cards' own list (a preferences group has one of its own too). */
  list = GTK_LIST_BOX (gtk_widget_get_parent (chp_ui_test_find_type (needs_page (f),
                                                                     CHP_TYPE_HOLD_ROW)));
  for (guint i = 0; i < G_N_ELEMENTS (order); i++)
    g_assert_true (G_TYPE_CHECK_INSTANCE_TYPE (gtk_list_box_get_row_at_index (list, (int) i),
                                               order[i]));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (list), "Change data on shop.example?"));

  chp_ui_test_show_at (GTK_WINDOW (f->window), 360, 700);
  chp_ui_test_assert_fits (GTK_WIDGET (f->window), 360, "needs you with every kind");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  app = chp_ui_test_app_new ("io.github.chaperone.Chaperone.TestNeeds",
                             "/chaperone/ui/needs/skipped");
  if (app == NULL)
    return g_test_run ();

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/chaperone/ui/needs/hold-approve", test_hold_approve);
  ADD ("/chaperone/ui/needs/hold-decline", test_hold_decline);
  ADD ("/chaperone/ui/needs/plan", test_plan);
  ADD ("/chaperone/ui/needs/plan-while-stopped", test_plan_while_stopped);
  ADD ("/chaperone/ui/needs/attention", test_attention);
  ADD ("/chaperone/ui/needs/attention-one-per-agent", test_attention_one_per_agent);
  ADD ("/chaperone/ui/needs/order-and-width", test_order_and_width);
#undef ADD

  return g_test_run ();
}
