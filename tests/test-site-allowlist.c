/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-site-allowlist.c: the site memory's allowlist, row for row from the shared vectors
 * (tests/vectors/site-allowlist.json): what it accepts, which field it names when it refuses,
 * that its message never repeats what it refused, and which control labels it keeps out. */
#include "config.h"

#include <string.h>

#include "chp-site-allowlist.h"

static JsonObject *
load_vectors (JsonParser **parser_out)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (g_getenv ("CHAPERONE_VECTORS_DIR"),
                                            "site-allowlist.json", NULL);
  JsonObject *root;

  json_parser_load_from_file (parser, path, &error);
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  *parser_out = g_steal_pointer (&parser);
  return root;
}

/* Every string value of @node at least 8 characters long: none may appear in a refusal. */
static void
collect_strings (JsonNode  *node,
                 GPtrArray *out)
{
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObjectIter iter;
      const char *name;
      JsonNode *member;

      json_object_iter_init (&iter, json_node_get_object (node));
      while (json_object_iter_next (&iter, &name, &member))
        collect_strings (member, out);
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);

      for (guint i = 0; i < json_array_get_length (array); i++)
        collect_strings (json_array_get_element (array, i), out);
    }
  else if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING &&
           strlen (json_node_get_string (node)) >= 8)
    g_ptr_array_add (out, (gpointer) json_node_get_string (node));
}

static gboolean
index_listed (JsonArray *list,
              guint      index)
{
  for (guint i = 0; list != NULL && i < json_array_get_length (list); i++)
    if ((guint) json_array_get_int_element (list, i) == index)
      return TRUE;
  return FALSE;
}

static void
check_row (JsonObject *row)
{
  const char *name = json_object_get_string_member (row, "name");
  JsonNode *update = json_object_get_member (row, "update");
  gboolean accept = json_object_get_boolean_member (row, "accept");
  g_autofree char *bad_field = NULL;
  g_autoptr(GError) error = NULL;
  gboolean ok;

  ok = chp_site_allowlist_check (json_node_get_object (update), &bad_field, &error);
  if (ok != accept)
    g_error ("%s: %s, expected %s (%s)", name, ok ? "accepted" : "refused",
             accept ? "accepted" : "refused", error ? error->message : "no error");

  if (accept)
    {
      g_assert_no_error (error);
      g_assert_null (bad_field);
    }
  else
    {
      g_autoptr(GPtrArray) strings = g_ptr_array_new ();

      g_assert_error (error, CHP_SITE_ALLOWLIST_ERROR, CHP_SITE_ALLOWLIST_ERROR_REFUSED);
      if (g_strcmp0 (bad_field, json_object_get_string_member (row, "badField")) != 0)
        g_error ("%s: refused %s, expected %s (%s)", name, bad_field,
                 json_object_get_string_member (row, "badField"), error->message);
      g_assert_nonnull (strstr (error->message, bad_field));
      g_test_message ("%s: %s", name, error->message);

      collect_strings (update, strings);
      for (guint i = 0; i < strings->len; i++)
        if (strstr (error->message, strings->pdata[i]) != NULL)
          g_error ("%s: the refusal repeats a value: %s", name, error->message);
    }

  if (json_object_has_member (row, "personalLabels"))
    {
      JsonArray *personal = json_object_get_array_member (row, "personalLabels");
      JsonObject *object = json_node_get_object (update);
      JsonArray *controls = json_object_get_array_member (object, "controls");

      for (guint i = 0; i < json_array_get_length (controls); i++)
        {
          JsonObject *control = json_array_get_object_element (controls, i);
          const char *label = json_object_get_string_member (control, "label");

          if (chp_site_allowlist_label_is_personal (label) != index_listed (personal, i))
            g_error ("%s: controls[%u]'s label is%s personal", name, i,
                     index_listed (personal, i) ? " not" : "");
        }
    }
}

static void
test_vectors (void)
{
  g_autoptr(JsonParser) parser = NULL;
  JsonObject *root = load_vectors (&parser);
  JsonArray *rows = json_object_get_array_member (root, "vectors");
  guint accepted = 0;

  g_assert_cmpuint (json_array_get_length (rows), >=, 60);
  for (guint i = 0; i < json_array_get_length (rows); i++)
    {
      JsonObject *row = json_array_get_object_element (rows, i);

      check_row (row);
      accepted += json_object_get_boolean_member (row, "accept");
    }

  /* Both halves are there: a gate that refuses everything passes no accepted row. */
  g_assert_cmpuint (accepted, >=, 20);
  g_assert_cmpuint (json_array_get_length (rows) - accepted, >=, 40);
}

static void
test_labels (void)
{
  g_autoptr(JsonParser) parser = NULL;
  JsonObject *root = load_vectors (&parser);
  JsonArray *labels = json_object_get_array_member (root, "labels");

  for (guint i = 0; i < json_array_get_length (labels); i++)
    {
      JsonObject *row = json_array_get_object_element (labels, i);
      const char *label = json_object_get_string_member (row, "label");
      gboolean personal = json_object_get_boolean_member (row, "personal");

      if (chp_site_allowlist_label_is_personal (label) != personal)
        g_error ("“%s” is%s personal", label, personal ? " not" : "");
    }
}

/* An update that is not what the table knows, however deep, is refused and never crashes. */
static void
test_hostile_shapes (void)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *bad_field = NULL;
  g_autoptr(GError) error = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "origin");
  json_builder_add_string_value (builder, "https://example.com");
  json_builder_set_member_name (builder, "endpoints");
  json_builder_begin_array (builder);
  for (guint i = 0; i < 1000; i++)
    json_builder_begin_array (builder);
  for (guint i = 0; i < 1000; i++)
    json_builder_end_array (builder);
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);

  g_assert_false (chp_site_allowlist_check (json_node_get_object (root), &bad_field, &error));
  g_assert_error (error, CHP_SITE_ALLOWLIST_ERROR, CHP_SITE_ALLOWLIST_ERROR_REFUSED);
  g_assert_cmpstr (bad_field, ==, "endpoints[0]");
}

/* The person's data written the ways pages write it: a sentence's period after an address,
 * dots, slashes, Unicode dashes and no-break spaces between a number's groups, fullwidth and
 * Arabic-Indic digits. The rows after them look alike and are not the person's. */
static void
test_disguised_labels (void)
{
  static const char * const personal[] = {
    "Write to alice@example.com.",
    "alice@example.com-",
    "ａｌｉｃｅ＠ｅｘａｍｐｌｅ．ｃｏｍ",
    "Call 555.123.4567",
    "06.12.34.56.78",
    "030/1234567",
    "555\u2010123\u20104567",
    "555\u2013123\u20134567",
    "06\u00a012\u00a034\u00a056\u00a078",
    "０９０-１２３４-５６７８",
    "\u0660\u0669\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668",
    "Order #\uff11\uff12\uff13\uff14\uff15",
  };
  static const char * const not_personal[] = {
    "Version 1.2.3",
    "Chrome 120.0.6099.109",
    "Released 15.01.2024",
    "Archive 2024/01/15",
    "Total 42.50 EUR",
    "Step 1/3",
    "Page 1 of 20",
    "Write to us@",
    "Top 1000 songs",
  };

  for (guint i = 0; i < G_N_ELEMENTS (personal); i++)
    if (!chp_site_allowlist_label_is_personal (personal[i]))
      g_error ("“%s” is not personal", personal[i]);
  for (guint i = 0; i < G_N_ELEMENTS (not_personal); i++)
    if (chp_site_allowlist_label_is_personal (not_personal[i]))
      g_error ("“%s” is personal", not_personal[i]);
}

/* @field of a valid update set to @value: refused, naming @bad_field and saying @why. */
static void
assert_refused (const char *field,
                const char *value,
                const char *bad_field,
                const char *why)
{
  g_autofree char *json = g_strdup_printf (
    "{\"origin\":\"https://shop.example.com\","
    "\"endpoints\":[{\"method\":\"GET\",\"pathTemplate\":\"%s\","
    "\"credential\":{\"kind\":\"cookie\"},\"frame\":\"%s\",\"sampleStatus\":200}],"
    "\"ready\":{\"heading\":\"%s\"},\"signin\":{\"path\":\"%s\",\"signals\":[\"password\"]}}",
    g_str_equal (field, "pathTemplate") ? value : "/api/orders/{id}",
    g_str_equal (field, "frame") ? value : "https://shop.example.com",
    g_str_equal (field, "heading") ? value : "Your orders",
    g_str_equal (field, "signin") ? value : "/login");
  g_autoptr(JsonNode) update = json_from_string (json, NULL);
  g_autofree char *refused = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (update);
  if (chp_site_allowlist_check (json_node_get_object (update), &refused, &error))
    g_error ("%s “%s” was accepted", field, value);
  g_assert_cmpstr (refused, ==, bad_field);
  g_assert_nonnull (strstr (error->message, why));
  g_assert_null (strstr (error->message, value));
}

/* What a path or a frame keeps behind its escapes is read as the person reads it. */
static void
test_escaped_paths (void)
{
  g_autoptr(JsonNode) update = json_from_string (
    "{\"origin\":\"https://shop.example.com\","
    "\"endpoints\":[{\"method\":\"GET\",\"pathTemplate\":\"/wiki/caf%C3%A9s\","
    "\"credential\":{\"kind\":\"cookie\"},\"frame\":\"https://shop.example.com/a%20b\","
    "\"sampleStatus\":200}],\"signin\":{\"path\":\"/login\",\"signals\":[\"password\"]}}", NULL);

  assert_refused ("pathTemplate", "/u/alice%40example.com", "endpoints[0].pathTemplate",
                  "carries an email address");
  assert_refused ("pathTemplate", "/u/alice%2540example.com", "endpoints[0].pathTemplate",
                  "carries an email address");
  assert_refused ("signin", "/u/alice%40example.com", "signin.path", "carries an email address");
  assert_refused ("signin", "/call/555%2E123%2E4567", "signin.path", "carries a phone number");
  assert_refused ("frame", "https://shop.example.com/u/alice%40example.com",
                  "endpoints[0].frame", "carries an email address");
  assert_refused ("pathTemplate", "/sale/100%", "endpoints[0].pathTemplate",
                  "holds an escape that does not decode");
  assert_refused ("heading", "Call 555.123.4567", "ready.heading", "carries a phone number");
  assert_refused ("heading", "Mail alice@example.com.", "ready.heading",
                  "carries an email address");
  /* An escape that hides nothing of the person's is kept. */
  g_assert_true (chp_site_allowlist_check (json_node_get_object (update), NULL, NULL));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/site-allowlist/vectors", test_vectors);
  g_test_add_func ("/chaperone/site-allowlist/labels", test_labels);
  g_test_add_func ("/chaperone/site-allowlist/hostile-shapes", test_hostile_shapes);
  g_test_add_func ("/chaperone/site-allowlist/disguised-labels", test_disguised_labels);
  g_test_add_func ("/chaperone/site-allowlist/escaped-paths", test_escaped_paths);

  return g_test_run ();
}
