/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-grants.c: the app's mirror of grants and handoffs. Their strings come from web pages
 * through the extension and end up on the person's screen, so malformed ones are refused whole,
 * and a grant whose time is up disappears even if the browser never says so. */
#include "config.h"

#include <string.h>

#include "chp-grant-list.h"
#include "chp-handoff-list.h"
#include "chp-protocol-error.h"

static JsonArray *
parse_array (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, text, -1, &error);
  g_assert_no_error (error);
  return json_array_ref (json_node_get_array (json_parser_get_root (parser)));
}

static JsonObject *
parse_object (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, text, -1, &error);
  g_assert_no_error (error);
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

static char *
grant_text (const char *grant_id,
            gint64      expires_at,
            const char *title)
{
  return g_strdup_printf ("{\"grantId\":\"%s\",\"taskId\":\"t1\",\"label\":\"Book a table\","
                          "\"scopes\":[\"browser.tabs.read\",\"browser.dom.read\"],"
                          "\"targets\":[{\"tabId\":7,\"frameId\":0,\"documentId\":\"D1\","
                          "\"origin\":\"https://example.org\",\"url\":\"https://example.org/a\","
                          "\"title\":\"%s\"}],"
                          "\"createdAt\":1,\"expiresAt\":%" G_GINT64_FORMAT "}",
                          grant_id, title, expires_at);
}

static gint64
in_ms (gint64 ms)
{
  return g_get_real_time () / 1000 + ms;
}

static void
test_replace_per_device (void)
{
  g_autoptr(ChpGrantList) list = chp_grant_list_new ();
  g_autofree char *g1 = grant_text ("g1", in_ms (60000), "Menu");
  g_autofree char *g2 = grant_text ("g2", in_ms (60000), "Menu");
  g_autofree char *both = g_strdup_printf ("[%s,%s]", g1, g2);
  g_autofree char *one = g_strdup_printf ("[%s]", g2);
  g_autoptr(JsonArray) a = parse_array (both);
  g_autoptr(JsonArray) b = parse_array (one);
  g_autoptr(GError) error = NULL;
  ChpGrant *grant;

  g_assert_true (chp_grant_list_set_device_grants (list, "dev-a", a, &error));
  g_assert_true (chp_grant_list_set_device_grants (list, "dev-b", b, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 3);
  g_assert_cmpuint (chp_grant_list_count_for_device (list, "dev-a"), ==, 2);

  grant = chp_grant_list_lookup (list, "dev-a", "g1");
  g_assert_nonnull (grant);
  g_assert_cmpstr (chp_grant_get_label (grant), ==, "Book a table");
  g_assert_true (chp_grant_has_scope (grant, "browser.dom.read"));
  g_assert_false (chp_grant_has_scope (grant, "browser.dom.write"));
  g_assert_cmpuint (chp_grant_get_n_targets (grant), ==, 1);
  g_assert_cmpint (chp_grant_get_target (grant, 0)->tab_id, ==, 7);
  g_assert_cmpstr (chp_grant_get_target (grant, 0)->origin, ==, "https://example.org");

  /* The same id on another device is another grant: routing never mixes browsers. */
  g_assert_null (chp_grant_list_lookup (list, "dev-b", "g1"));

  /* A device's new list replaces only its own part. */
  g_assert_true (chp_grant_list_set_device_grants (list, "dev-a", b, &error));
  g_assert_cmpuint (chp_grant_list_count_for_device (list, "dev-a"), ==, 1);
  g_assert_cmpuint (chp_grant_list_count_for_device (list, "dev-b"), ==, 1);

  chp_grant_list_remove_device (list, "dev-b");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 1);
}

static void
test_malformed_refused_whole (void)
{
  static const char *bad[] = {
    "{\"taskId\":\"t\",\"scopes\":[],\"targets\":[],\"createdAt\":1,\"expiresAt\":%s}",
    "{\"grantId\":\"\",\"scopes\":[],\"targets\":[],\"createdAt\":1,\"expiresAt\":%s}",
    "{\"grantId\":\"g\",\"scopes\":\"all\",\"targets\":[],\"createdAt\":1,\"expiresAt\":%s}",
    "{\"grantId\":\"g\",\"scopes\":[1],\"targets\":[],\"createdAt\":1,\"expiresAt\":%s}",
    "{\"grantId\":\"g\",\"scopes\":[],\"targets\":[{\"tabId\":\"7\",\"frameId\":0,\"origin\":\"o\"}],\"createdAt\":1,\"expiresAt\":%s}",
    "{\"grantId\":\"g\",\"scopes\":[],\"targets\":[{\"tabId\":7,\"frameId\":0}],\"createdAt\":1,\"expiresAt\":%s}",
    "{\"grantId\":\"g\",\"label\":\"two\\nlines\",\"scopes\":[],\"targets\":[],\"createdAt\":1,\"expiresAt\":%s}",
    "{\"grantId\":\"g\",\"scopes\":[],\"targets\":[],\"createdAt\":1}",
  };
  g_autoptr(ChpGrantList) list = chp_grant_list_new ();
  g_autofree char *good = grant_text ("good", in_ms (60000), "Fine");
  g_autofree char *expires = g_strdup_printf ("%" G_GINT64_FORMAT, in_ms (60000));
  g_autofree char *good_list = g_strdup_printf ("[%s]", good);
  g_autoptr(JsonArray) initial = parse_array (good_list);
  g_autoptr(GError) error = NULL;

  g_assert_true (chp_grant_list_set_device_grants (list, "dev", initial, &error));
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GString) one = g_string_new (bad[i]);
      g_autofree char *text = NULL;
      g_autoptr(JsonArray) array = NULL;

      g_string_replace (one, "%s", expires, 0);
      /* A good grant beside the bad one is not taken either: all or nothing. */
      text = g_strdup_printf ("[%s,%s]", good, one->str);
      array = parse_array (text);

      g_assert_false (chp_grant_list_set_device_grants (list, "dev", array, &error));
      g_assert_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS);
      g_clear_error (&error);

      /* ...and the mirror keeps what it had. */
      g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 1);
      g_assert_nonnull (chp_grant_list_lookup (list, "dev", "good"));
    }
}

static void
test_overlong_title_refused (void)
{
  g_autoptr(ChpGrantList) list = chp_grant_list_new ();
  g_autofree char *long_title = g_strnfill (2000, 'x');
  g_autofree char *grant = grant_text ("g", in_ms (60000), long_title);
  g_autofree char *text = g_strdup_printf ("[%s]", grant);
  g_autoptr(JsonArray) array = parse_array (text);
  g_autoptr(GError) error = NULL;

  g_assert_false (chp_grant_list_set_device_grants (list, "dev", array, &error));
  g_assert_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS);
}

static gboolean
quit_cb (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

static void
test_expiry (void)
{
  g_autoptr(ChpGrantList) list = chp_grant_list_new ();
  g_autofree char *past = grant_text ("past", in_ms (-1), "Old");
  g_autofree char *soon = grant_text ("soon", in_ms (100), "Soon");
  g_autofree char *later = grant_text ("later", in_ms (600000), "Later");
  g_autofree char *text = g_strdup_printf ("[%s,%s,%s]", past, soon, later);
  g_autoptr(JsonArray) array = parse_array (text);
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GError) error = NULL;

  g_assert_true (chp_grant_list_set_device_grants (list, "dev", array, &error));
  /* An already expired grant never shows. */
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 2);
  g_assert_null (chp_grant_list_lookup (list, "dev", "past"));

  /* The browser is silent (offline, say): the mirror still lets the grant go, a second after its
   * time so the browser's own word usually comes first. */
  g_timeout_add (1500, quit_cb, loop);
  g_main_loop_run (loop);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 1);
  g_assert_nonnull (chp_grant_list_lookup (list, "dev", "later"));
}

static char *
handoff_text (const char *id,
              const char *state,
              const char *reason)
{
  return g_strdup_printf ("{\"handoffId\":\"%s\",\"tabId\":7,\"url\":\"https://example.org/login\","
                          "\"title\":\"Sign in\",\"origin\":\"https://example.org\","
                          "\"reason\":\"%s\",\"message\":\"Scan the code\\nwith your phone\","
                          "\"state\":\"%s\",\"createdAt\":5}", id, reason, state);
}

static void
test_handoff_lifecycle (void)
{
  g_autoptr(ChpHandoffList) list = chp_handoff_list_new ();
  g_autofree char *waiting = handoff_text ("h1", "waiting", "qr");
  g_autofree char *done = handoff_text ("h1", "done", "qr");
  g_autofree char *stray = handoff_text ("h2", "cancelled", "mfa");
  g_autoptr(JsonObject) w = parse_object (waiting);
  g_autoptr(JsonObject) d = parse_object (done);
  g_autoptr(JsonObject) s = parse_object (stray);
  g_autoptr(ChpHandoff) arrived = NULL;
  g_autoptr(ChpHandoff) ended = NULL;
  g_autoptr(ChpHandoff) nothing = NULL;
  g_autoptr(GError) error = NULL;

  arrived = chp_handoff_list_apply (list, "dev", w, &error);
  g_assert_no_error (error);
  g_assert_nonnull (arrived);
  g_assert_true (chp_handoff_is_waiting (arrived));
  g_assert_cmpstr (chp_handoff_get_reason (arrived), ==, "qr");
  g_assert_cmpstr (chp_handoff_get_message (arrived), ==, "Scan the code\nwith your phone");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 1);

  /* The same id from another browser is another handoff. */
  g_assert_null (chp_handoff_list_lookup (list, "other", "h1"));

  ended = chp_handoff_list_apply (list, "dev", d, &error);
  g_assert_no_error (error);
  /* Whoever held it sees how it ended; the queue no longer lists it. */
  g_assert_true (ended == arrived);
  g_assert_cmpstr (chp_handoff_get_state (arrived), ==, "done");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 0);

  /* An end the app never saw begin changes nothing. */
  nothing = chp_handoff_list_apply (list, "dev", s, &error);
  g_assert_no_error (error);
  g_assert_null (nothing);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 0);
}

static void
test_handoff_refused (void)
{
  g_autoptr(ChpHandoffList) list = chp_handoff_list_new ();
  g_autofree char *reason = handoff_text ("h1", "waiting", "<b>urgent</b>");
  g_autofree char *state = handoff_text ("h1", "approved", "qr");
  g_autoptr(JsonObject) r = parse_object (reason);
  g_autoptr(JsonObject) st = parse_object (state);
  g_autoptr(GError) error = NULL;

  g_assert_null (chp_handoff_list_apply (list, "dev", r, &error));
  g_assert_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  g_clear_error (&error);
  g_assert_null (chp_handoff_list_apply (list, "dev", st, &error));
  g_assert_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  g_clear_error (&error);

  /* A flood of handoffs stops at the bound with `busy`; the ones listed stay. */
  for (guint i = 0; i < 40; i++)
    {
      g_autofree char *id = g_strdup_printf ("f%u", i);
      g_autofree char *text = handoff_text (id, "waiting", "other");
      g_autoptr(JsonObject) o = parse_object (text);
      g_autoptr(ChpHandoff) h = chp_handoff_list_apply (list, "dev", o, &error);

      if (i < 32)
        {
          g_assert_no_error (error);
          g_assert_nonnull (h);
        }
      else
        {
          g_assert_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_BUSY);
          g_assert_null (h);
          g_clear_error (&error);
        }
    }
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 32);
  chp_handoff_list_remove_device (list, "dev");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/grants/replace-per-device", test_replace_per_device);
  g_test_add_func ("/grants/malformed-refused-whole", test_malformed_refused_whole);
  g_test_add_func ("/grants/overlong-title-refused", test_overlong_title_refused);
  g_test_add_func ("/grants/expiry", test_expiry);
  g_test_add_func ("/handoffs/lifecycle", test_handoff_lifecycle);
  g_test_add_func ("/handoffs/refused", test_handoff_refused);

  return g_test_run ();
}
