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

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/site-allowlist/vectors", test_vectors);
  g_test_add_func ("/chaperone/site-allowlist/labels", test_labels);
  g_test_add_func ("/chaperone/site-allowlist/hostile-shapes", test_hostile_shapes);

  return g_test_run ();
}
