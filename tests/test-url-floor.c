/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-url-floor.c: the URL floor. Each row of tests/vectors/floor.json is a URL a page or a
 * hostile agent could present, with the level and reason a person would expect; a row that
 * passes the wrong way is a bank page an agent can read, or an ordinary site it cannot. */
#include "config.h"

#include <string.h>

#include "chp-url-floor.h"

/* tests/vectors/floor.json: the rows, the person's entries they are checked with and the bridge
 * port. The extension's tests/js/ext-floor.test.mjs runs the same rows. */
static JsonParser *vectors_parser;
static JsonObject *vectors;
static GStrv person_blind;
static GStrv person_hands;
static guint16 bridge_port;

static GStrv
strv_of (JsonArray *array)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  for (guint i = 0; i < json_array_get_length (array); i++)
    g_strv_builder_add (builder, json_array_get_string_element (array, i));
  return g_strv_builder_end (builder);
}

static void
load_vectors (void)
{
  const char *dir = g_getenv ("CHAPERONE_VECTORS_DIR");
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *person;

  g_assert_nonnull (dir);
  path = g_build_filename (dir, "floor.json", NULL);
  vectors_parser = json_parser_new ();
  json_parser_load_from_file (vectors_parser, path, &error);
  g_assert_no_error (error);
  vectors = json_node_get_object (json_parser_get_root (vectors_parser));
  person = json_object_get_object_member (vectors, "person");
  person_blind = strv_of (json_object_get_array_member (person, "blind"));
  person_hands = strv_of (json_object_get_array_member (person, "handsOnly"));
  bridge_port = json_object_get_int_member (vectors, "bridgePort");
}

static ChpUrlFloor *
make_floor (void)
{
  ChpUrlFloor *floor = chp_url_floor_new ();

  chp_url_floor_set_person_rules (floor, (const char * const *) person_blind,
                                  (const char * const *) person_hands);
  chp_url_floor_set_bridge_port (floor, bridge_port);
  return floor;
}

static void
assert_floor (ChpUrlFloor *floor,
              const char  *url,
              const char  *level,
              const char  *reason)
{
  const char *got_reason = NULL;
  ChpFloorLevel got = chp_url_floor_check (floor, url, &got_reason);

  if (!g_str_equal (chp_floor_level_to_string (got), level) || g_strcmp0 (got_reason, reason) != 0)
    g_test_message ("%s: %s/%s", url, chp_floor_level_to_string (got), got_reason);
  g_assert_cmpstr (chp_floor_level_to_string (got), ==, level);
  g_assert_cmpstr (got_reason, ==, reason);
}

static void
test_vector (gconstpointer data)
{
  JsonObject *v = (JsonObject *) data;
  g_autoptr(ChpUrlFloor) floor = make_floor ();

  assert_floor (floor, json_object_get_string_member (v, "url"),
                json_object_get_string_member (v, "level"),
                json_object_get_string_member (v, "reason"));
}

/* Every rule of src/core/policy/floor-rules.json answers its own level and reason, for its host and a
 * subdomain of it: no rule is shadowed by an earlier one, and none was mistyped out of reach. */
static void
test_builtin_rules (void)
{
  const char *path = g_getenv ("CHAPERONE_FLOOR_RULES");
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(ChpUrlFloor) floor = chp_url_floor_new ();
  g_autoptr(GError) error = NULL;
  JsonArray *groups;
  guint checked = 0;

  g_assert_nonnull (path);
  json_parser_load_from_file (parser, path, &error);
  g_assert_no_error (error);
  groups = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)),
                                         "groups");
  for (guint g = 0; g < json_array_get_length (groups); g++)
    {
      JsonArray *rules = json_object_get_array_member (json_array_get_object_element (groups, g),
                                                       "rules");

      for (guint r = 0; r < json_array_get_length (rules); r++)
        {
          JsonObject *rule = json_array_get_object_element (rules, r);
          const char *host = json_object_get_string_member (rule, "host");
          const char *rule_path = json_object_get_string_member_with_default (rule, "path", "/");
          const char *level = json_object_get_string_member (rule, "level");
          const char *reason = json_object_get_string_member (rule, "reason");
          g_autofree char *url = g_strconcat ("https://", host, rule_path, NULL);
          g_autofree char *sub = g_strconcat ("https://www.", host, rule_path, "/x", NULL);

          assert_floor (floor, url, level, reason);
          assert_floor (floor, sub, level, reason);
          checked++;
        }
    }
  g_assert_cmpuint (checked, >, 50);
}

/* A C string can hold bytes that are not text; a JS string cannot (its lone surrogate row is in
 * ext-floor.test.mjs). */
static void
test_invalid_utf8 (void)
{
  g_autoptr(ChpUrlFloor) floor = make_floor ();

  assert_floor (floor, "https://ex\xff" "ample.com/", "blind", "malformed");
}

static void
test_person_rules_count_and_replace (void)
{
  g_autoptr(ChpUrlFloor) floor = chp_url_floor_new ();
  const char * const blind[] = { "health.example", NULL };
  const char *reason = NULL;

  /* "nope/path", "*" and "" are not host patterns. */
  g_assert_cmpuint (chp_url_floor_set_person_rules (floor, (const char * const *) person_blind,
                                                    (const char * const *) person_hands), ==, 3);

  /* Setting again replaces, it does not add up. */
  g_assert_cmpuint (chp_url_floor_set_person_rules (floor, blind, NULL), ==, 0);
  g_assert_cmpint (chp_url_floor_check (floor, "https://wiki.corp.example/", &reason), ==,
                   CHP_FLOOR_OK);
  g_assert_cmpint (chp_url_floor_check (floor, "https://shop.example/", &reason), ==,
                   CHP_FLOOR_OK);
  g_assert_cmpint (chp_url_floor_check (floor, "https://health.example/", &reason), ==,
                   CHP_FLOOR_BLIND);

  /* The person cannot lower a built-in rule: an empty list changes nothing for a bank. */
  chp_url_floor_set_person_rules (floor, NULL, NULL);
  g_assert_cmpint (chp_url_floor_check (floor, "https://health.example/", &reason), ==,
                   CHP_FLOOR_OK);
  g_assert_cmpint (chp_url_floor_check (floor, "https://chase.com/", &reason), ==,
                   CHP_FLOOR_BLIND);
}

static void
test_normalize_pattern (void)
{
  static const struct { const char *in; const char *out; } rows[] = {
    { "Example.COM", "example.com" },
    { "  example.com.  ", "example.com" },
    { "*.Corp.Example", "*.corp.example" },
    { "https://user@Shop.Example:8443/a?b", "shop.example" },
    { "b\xc3\xa4nk.de", "xn--bnk-qla.de" },
    { "192.168.0.1", "192.168.0.1" },
    { "*.192.168.0.1", NULL },
    { "*", NULL },
    { "", NULL },
    { "example.com/path", NULL },
    { "exa mple.com", NULL },
    { "a..b", NULL },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *got = chp_url_floor_normalize_pattern (rows[i].in);

      g_assert_cmpstr (got, ==, rows[i].out);
    }
}

static void
test_bridge_port (void)
{
  g_autoptr(ChpUrlFloor) floor = chp_url_floor_new ();
  const char *reason = NULL;

  /* With no port set nothing on loopback is the bridge. */
  g_assert_cmpint (chp_url_floor_check (floor, "http://127.0.0.1:64333/", &reason), ==,
                   CHP_FLOOR_OK);
  chp_url_floor_set_bridge_port (floor, 80);
  g_assert_cmpuint (chp_url_floor_get_bridge_port (floor), ==, 80);
  /* The default port of the scheme counts. */
  g_assert_cmpint (chp_url_floor_check (floor, "http://localhost/", &reason), ==,
                   CHP_FLOOR_BLIND);
  g_assert_cmpstr (reason, ==, "chaperone");
  g_assert_cmpint (chp_url_floor_check (floor, "https://localhost/", &reason), ==,
                   CHP_FLOOR_OK);
}

static void
test_check_page_password (void)
{
  g_autoptr(ChpUrlFloor) floor = make_floor ();
  const char *reason = NULL;

  g_assert_cmpint (chp_url_floor_check_page (floor, "https://example.com/login", FALSE, &reason),
                   ==, CHP_FLOOR_OK);
  g_assert_cmpint (chp_url_floor_check_page (floor, "https://example.com/login", TRUE, &reason),
                   ==, CHP_FLOOR_BLIND);
  g_assert_cmpstr (reason, ==, "sign_in");
  /* A hands-only page with a password field is blind. */
  g_assert_cmpint (chp_url_floor_check_page (floor, "https://shop.example/", TRUE, &reason), ==,
                   CHP_FLOOR_BLIND);
  g_assert_cmpstr (reason, ==, "sign_in");
  /* A blind page keeps its own, more telling reason. */
  g_assert_cmpint (chp_url_floor_check_page (floor, "https://chase.com/", TRUE, &reason), ==,
                   CHP_FLOOR_BLIND);
  g_assert_cmpstr (reason, ==, "bank");
  /* And NULL for the reason is allowed. */
  g_assert_cmpint (chp_url_floor_check_page (floor, "about:blank", FALSE, NULL), ==,
                   CHP_FLOOR_BLIND);
}

static void
test_long_url (void)
{
  g_autoptr(ChpUrlFloor) floor = make_floor ();
  g_autoptr(GString) url = g_string_new ("https://example.com/?q=");
  const char *reason = NULL;

  while (url->len < CHP_URL_FLOOR_MAX_URL)
    g_string_append_c (url, 'a');
  g_assert_cmpint (chp_url_floor_check (floor, url->str, &reason), ==, CHP_FLOOR_OK);
  g_string_append_c (url, 'a');
  g_assert_cmpint (chp_url_floor_check (floor, url->str, &reason), ==, CHP_FLOOR_BLIND);
  g_assert_cmpstr (reason, ==, "malformed");
}

static void
test_finalized (void)
{
  ChpUrlFloor *floor = make_floor ();

  g_assert_finalize_object (floor);
}

int
main (int argc, char **argv)
{
  JsonArray *rows;
  int status;

  g_test_init (&argc, &argv, NULL);

  load_vectors ();
  rows = json_object_get_array_member (vectors, "vectors");
  for (guint i = 0; i < json_array_get_length (rows); i++)
    {
      JsonObject *v = json_array_get_object_element (rows, i);
      g_autofree char *path = g_strdup_printf ("/chaperone/floor/vectors/%03u-%s", i,
                                               json_object_get_string_member (v, "reason"));

      g_test_add_data_func (path, v, test_vector);
    }
  g_test_add_func ("/chaperone/floor/builtin-rules", test_builtin_rules);
  g_test_add_func ("/chaperone/floor/invalid-utf8", test_invalid_utf8);
  g_test_add_func ("/chaperone/floor/person-rules", test_person_rules_count_and_replace);
  g_test_add_func ("/chaperone/floor/normalize-pattern", test_normalize_pattern);
  g_test_add_func ("/chaperone/floor/bridge-port", test_bridge_port);
  g_test_add_func ("/chaperone/floor/check-page-password", test_check_page_password);
  g_test_add_func ("/chaperone/floor/long-url", test_long_url);
  g_test_add_func ("/chaperone/floor/finalized", test_finalized);

  status = g_test_run ();
  g_clear_pointer (&person_blind, g_strfreev);
  g_clear_pointer (&person_hands, g_strfreev);
  g_clear_object (&vectors_parser);
  return status;
}
