/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-redact.c: the app's redaction pass. Each row is page text an agent could be handed,
 * with what the agent must see instead: a secret that comes through is a leak, and ordinary
 * text that gets masked is a page the agent can no longer read. Every row is also redacted a
 * second time, which must change nothing. */
#include "config.h"

#include <string.h>

#include "chp-redact.h"

/* The rows of tests/vectors/redact.json: the extension's tests/js/ext-redact.test.mjs runs the
 * same rows, so the two redactions cannot drift apart. */
static JsonParser *vectors_parser;

static JsonArray *
load_vectors (void)
{
  const char *dir = g_getenv ("CHAPERONE_VECTORS_DIR");
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (dir);
  path = g_build_filename (dir, "redact.json", NULL);
  vectors_parser = json_parser_new ();
  json_parser_load_from_file (vectors_parser, path, &error);
  g_assert_no_error (error);
  return json_object_get_array_member (json_node_get_object (json_parser_get_root (vectors_parser)),
                                       "vectors");
}

static void assert_json_node (JsonNode *node,
                              JsonNode *want,
                              guint     expected_count);

static void
test_vector (gconstpointer data)
{
  JsonObject *v = (JsonObject *) data;
  const char *kind = json_object_get_string_member (v, "kind");
  JsonNode *input = json_object_get_member (v, "input");

  if (g_str_equal (kind, "text"))
    {
      const char *expect = json_object_get_string_member (v, "expect");
      guint expected_count = json_object_get_int_member (v, "count");
      g_autofree char *once = NULL;
      g_autofree char *twice = NULL;
      guint count = 99;
      guint again = 99;

      once = chp_redact_text (json_node_get_string (input), &count);
      g_assert_cmpstr (once, ==, expect);
      g_assert_cmpuint (count, ==, expected_count);

      /* Redacting again changes nothing. */
      twice = chp_redact_text (once, &again);
      g_assert_cmpstr (twice, ==, once);
      g_assert_cmpuint (again, ==, 0);
    }
  else if (g_str_equal (kind, "json"))
    assert_json_node (input, json_object_get_member (v, "expect"),
                      json_object_get_int_member (v, "count"));
  else if (g_str_equal (kind, "name"))
    {
      const char *name = json_node_get_string (input);
      gboolean expect = json_object_get_boolean_member (v, "expect");

      if (chp_redact_name_is_secret (name, -1) != expect)
        g_error ("\"%s\" should %sbe a secret name", name, expect ? "" : "not ");
    }
  else
    g_error ("unknown kind of vector: %s", kind);
}

/* What only a C caller can ask: a length bounds the name; overlong names are not names. */
static void
test_name_length (void)
{
  g_autofree char *long_name = g_strnfill (200, 'a');
  g_autofree char *long_secret = g_strconcat (long_name, "password", NULL);

  g_assert_true (chp_redact_name_is_secret ("password=x", 8));
  g_assert_false (chp_redact_name_is_secret ("password=x", 3));
  g_assert_false (chp_redact_name_is_secret (long_secret, -1));
}

static void
test_is_marker (void)
{
  g_assert_true (chp_redact_is_marker ("[redacted password len=8]"));
  g_assert_true (chp_redact_is_marker ("[redacted X-Api-Key len=0]"));
  g_assert_false (chp_redact_is_marker ("[redacted password len=8] "));
  g_assert_false (chp_redact_is_marker ("[redacted  len=8]"));
  g_assert_false (chp_redact_is_marker ("[redacted pass word len=8]"));
  g_assert_false (chp_redact_is_marker ("[redacted password len=]"));
  g_assert_false (chp_redact_is_marker ("[redacted password len=8"));
  g_assert_false (chp_redact_is_marker (""));
}

static void
test_invalid_utf8 (void)
{
  g_autofree char *out = NULL;
  guint count = 0;

  out = chp_redact_text ("token=a\xff" "b ok", &count);
  g_assert_true (g_utf8_validate (out, -1, NULL));
  g_assert_cmpstr (out, ==, "token=[redacted token len=3] ok");
  g_assert_cmpuint (count, ==, 1);
}

/* An unclosed quoted secret is masked up to a bound; the bound must not split a character
 * (found by comparing with the extension's redact.js, which never did). */
static void
test_bound_in_character (void)
{
  g_autoptr(GString) in = g_string_new ("\"password\": \"");
  g_autofree char *out = NULL;

  for (guint i = 0; i < 4095; i++)
    g_string_append_c (in, 'a');
  for (guint i = 0; i < 10; i++)
    g_string_append (in, "\xc3\xa9");
  out = chp_redact_text (in->str, NULL);
  g_assert_true (g_utf8_validate (out, -1, NULL));
  g_assert_null (strstr (out, "aaaaaaaa"));
  g_assert_true (g_str_has_prefix (out, "\"password\": \"[redacted password len=4096]"));
}

/* ---- JSON ---- */

static char *
to_text (JsonNode *node)
{
  return json_to_string (node, FALSE);
}

static void
assert_json_node (JsonNode *node,
                  JsonNode *want,
                  guint     expected_count)
{
  g_autoptr(JsonNode) once = NULL;
  g_autoptr(JsonNode) twice = NULL;
  g_autofree char *once_text = NULL;
  g_autofree char *want_text = NULL;
  g_autofree char *in_text = to_text (node);
  g_autofree char *after_text = NULL;
  guint count = 99;
  guint again = 99;

  once = chp_redact_json (node, &count);
  once_text = to_text (once);
  want_text = to_text (want);
  g_assert_cmpstr (once_text, ==, want_text);
  g_assert_cmpuint (count, ==, expected_count);

  /* A copy: the input is untouched. */
  after_text = to_text (node);
  g_assert_cmpstr (after_text, ==, in_text);

  twice = chp_redact_json (once, &again);
  g_assert_true (json_node_equal (twice, once));
  g_assert_cmpuint (again, ==, 0);
}

static JsonNode *
parse (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, text, -1, &error);
  g_assert_no_error (error);
  return json_node_copy (json_parser_get_root (parser));
}

static void
test_json_deep (void)
{
  g_autoptr(GString) in = g_string_new (NULL);
  g_autoptr(GString) want = g_string_new (NULL);
  g_autoptr(JsonNode) in_node = NULL;
  g_autoptr(JsonNode) want_node = NULL;

  /* 100 levels are kept as they are. */
  for (guint i = 0; i < 100; i++)
    g_string_append (in, "{\"x\":");
  g_string_append (in, "{\"token\":\"abc\"}");
  g_string_append (want, in->str);
  g_string_truncate (want, want->len - strlen ("{\"token\":\"abc\"}"));
  g_string_append (want, "{\"token\":\"[redacted token len=3]\"}");
  for (guint i = 0; i < 100; i++)
    {
      g_string_append_c (in, '}');
      g_string_append_c (want, '}');
    }
  in_node = parse (in->str);
  want_node = parse (want->str);
  assert_json_node (in_node, want_node, 1);
}

static void
test_json_too_deep (void)
{
  g_autoptr(JsonNode) root = json_node_new (JSON_NODE_ARRAY);
  g_autoptr(JsonNode) out = NULL;
  JsonNode *node = root;
  guint count = 0;
  guint depth = 0;

  /* Built by hand: json-glib's parser stops at a lower depth. */
  json_node_take_array (root, json_array_new ());
  for (guint i = 0; i < 400; i++)
    {
      JsonNode *child = json_node_new (JSON_NODE_ARRAY);

      json_node_take_array (child, json_array_new ());
      json_array_add_element (json_node_get_array (node), child);
      node = child;
    }
  json_array_add_string_element (json_node_get_array (node), "token=abc");

  out = chp_redact_json (root, &count);
  g_assert_cmpuint (count, ==, 1);
  for (node = out; JSON_NODE_HOLDS_ARRAY (node); depth++)
    node = json_array_get_element (json_node_get_array (node), 0);
  g_assert_true (JSON_NODE_HOLDS_NULL (node));
  g_assert_cmpuint (depth, <, 400);
}

static void
test_linear_time (void)
{
  static const char * const units[] = {
    "\"password\":\"", "password=\"", "eyJaaaaaaaaaa.", "Bearer ", "\"", "[redacted ",
    "-----BEGIN PRIVATE KEY-----", "password: ", "a=",
    /* The rules that look further than a word: numbers in groups, phrases, URLs. */
    "4111 ", "1-", "2 85 05 2A ", "verification code ", "482913 is your ", "https://a:",
    "ya29.", "?code=", "\xe9\xaa\x8c\xe8\xaf\x81\xe7\xa0\x81", "api key is ", "secret key: ",
  };

  /* Each unit repeated to 2 MiB: a quadratic scan would take minutes. */
  for (gsize u = 0; u < G_N_ELEMENTS (units); u++)
    {
      g_autoptr(GString) text = g_string_new (NULL);
      g_autoptr(GTimer) timer = g_timer_new ();
      g_autofree char *out = NULL;

      while (text->len < 2 * 1024 * 1024)
        g_string_append (text, units[u]);
      out = chp_redact_text (text->str, NULL);
      g_assert_nonnull (out);
      g_test_message ("%s: %.3f s", units[u], g_timer_elapsed (timer, NULL));
      g_assert_cmpfloat (g_timer_elapsed (timer, NULL), <, 10.0);
    }
}

int
main (int argc, char **argv)
{
  JsonArray *vectors;
  int status;

  g_test_init (&argc, &argv, NULL);

  vectors = load_vectors ();
  for (guint i = 0; i < json_array_get_length (vectors); i++)
    {
      JsonObject *v = json_array_get_object_element (vectors, i);
      g_autofree char *path = g_strdup_printf ("/chaperone/redact/vectors/%03u-%s", i,
                                               json_object_get_string_member (v, "name"));

      g_test_add_data_func (path, v, test_vector);
    }
  g_test_add_func ("/chaperone/redact/name-length", test_name_length);
  g_test_add_func ("/chaperone/redact/is-marker", test_is_marker);
  g_test_add_func ("/chaperone/redact/invalid-utf8", test_invalid_utf8);
  g_test_add_func ("/chaperone/redact/bound-in-character", test_bound_in_character);
  g_test_add_func ("/chaperone/redact/json/deep", test_json_deep);
  g_test_add_func ("/chaperone/redact/json/too-deep", test_json_too_deep);
  g_test_add_func ("/chaperone/redact/linear-time", test_linear_time);

  status = g_test_run ();
  g_clear_object (&vectors_parser);
  return status;
}
