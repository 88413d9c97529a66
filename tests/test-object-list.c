/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-object-list.c: the base of the core's lists. What the pages see of a list is its
 * items-changed signals: one per change, at the right place, with the item already gone from
 * (or already in) the list when a handler looks. */
#include "config.h"

#include "chp-object-list.h"

/* A list of GSimpleActions, only for this test: the smallest subclass there can be. */
#define TEST_TYPE_LIST (test_list_get_type ())
G_DECLARE_FINAL_TYPE (TestList, test_list, TEST, LIST, ChpObjectList)

struct _TestList
{
  ChpObjectList parent_instance;
};

G_DEFINE_FINAL_TYPE (TestList, test_list, CHP_TYPE_OBJECT_LIST)

static void
test_list_class_init (TestListClass *klass)
{
  CHP_OBJECT_LIST_CLASS (klass)->item_type = G_TYPE_SIMPLE_ACTION;
}

static void
test_list_init (TestList *self)
{
}

typedef struct
{
  GString *log;      /* "position-removed+added:items;" per signal */
} Seen;

static void
items_changed_cb (GListModel *model,
                  guint       position,
                  guint       removed,
                  guint       added,
                  Seen       *seen)
{
  g_string_append_printf (seen->log, "%u-%u+%u:", position, removed, added);
  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr(GAction) action = g_list_model_get_item (model, i);

      g_string_append (seen->log, g_action_get_name (action));
    }
  g_string_append_c (seen->log, ';');
}

static gboolean
named (gpointer      item,
       gconstpointer data)
{
  return g_str_has_prefix (g_action_get_name (item), data);
}

static GSimpleAction *
action (const char *name)
{
  return g_simple_action_new (name, NULL);
}

static void
test_object_list_changes (void)
{
  g_autoptr(TestList) list = g_object_new (TEST_TYPE_LIST, NULL);
  ChpObjectList *base = CHP_OBJECT_LIST (list);
  g_autoptr(GSimpleAction) a = action ("a");
  g_autoptr(GSimpleAction) b1 = action ("b1");
  g_autoptr(GSimpleAction) c = action ("c");
  g_autoptr(GSimpleAction) b2 = action ("b2");
  g_autoptr(GSimpleAction) d = action ("d");
  gpointer two[2] = { d, a };
  Seen seen = { g_string_new (NULL) };
  guint position = 99;

  g_signal_connect (list, "items-changed", G_CALLBACK (items_changed_cb), &seen);
  g_assert_true (g_list_model_get_item_type (G_LIST_MODEL (list)) == G_TYPE_SIMPLE_ACTION);
  g_assert_null (g_list_model_get_item (G_LIST_MODEL (list), 0));

  chp_object_list_append (base, a);
  chp_object_list_append (base, b1);
  chp_object_list_append (base, c);
  chp_object_list_append (base, b2);
  g_assert_cmpstr (seen.log->str, ==, "0-0+1:a;1-0+1:ab1;2-0+1:ab1c;3-0+1:ab1cb2;");
  g_assert_cmpuint (chp_object_list_get_len (base), ==, 4);
  g_assert_true (chp_object_list_get_item_at (base, 2) == c);
  g_assert_null (g_list_model_get_item (G_LIST_MODEL (list), 4));

  /* The first match, and where it stands; NULL looks for the item itself. */
  g_assert_true (chp_object_list_find (base, named, "b", &position) == b1);
  g_assert_cmpuint (position, ==, 1);
  g_assert_true (chp_object_list_find (base, NULL, c, &position) == c);
  g_assert_cmpuint (position, ==, 2);
  g_assert_null (chp_object_list_find (base, named, "z", NULL));

  /* Items of one kind need not stand together: each goes in a signal of its own, last first. */
  g_string_truncate (seen.log, 0);
  chp_object_list_remove_all (base, named, "b");
  g_assert_cmpstr (seen.log->str, ==, "3-1+0:ab1c;1-1+0:ac;");

  /* A splice is one signal, however much it replaces. */
  g_string_truncate (seen.log, 0);
  chp_object_list_splice (base, 0, 2, two, 2);
  g_assert_cmpstr (seen.log->str, ==, "0-2+2:da;");
  chp_object_list_remove_at (base, 1);
  g_assert_cmpstr (seen.log->str, ==, "0-2+2:da;1-1+0:d;");

  /* The list keeps its own references: the caller's may go. */
  g_assert_cmpuint (G_OBJECT (d)->ref_count, ==, 2);
  g_clear_object (&list);
  g_assert_cmpuint (G_OBJECT (d)->ref_count, ==, 1);

  g_string_free (seen.log, TRUE);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/object-list/changes", test_object_list_changes);

  return g_test_run ();
}
