/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-safety-settings.c: the person's floor entries and result cap as the store keeps them:
 * read back whole or not at all, changes announced only when the person makes them. */
#include "config.h"

#include "chp-safety-settings.h"

static void
changed_cb (ChpSafetySettings *safety,
            const char        *key,
            GPtrArray         *keys)
{
  g_ptr_array_add (keys, g_strdup (key));
}

static void
test_load_state (void)
{
  g_autoptr(ChpSafetySettings) safety = chp_safety_settings_new ();
  g_autoptr(GHashTable) state = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *blind = NULL;

  g_signal_connect (safety, "changed", G_CALLBACK (changed_cb), keys);
  g_assert_false (chp_safety_settings_get_stored (safety));
  g_assert_cmpuint (chp_safety_settings_get_result_max_chars (safety), ==, 8000);

  /* A damaged list is ignored whole, never half read. */
  g_hash_table_insert (state, CHP_STATE_FLOOR_BLIND, "[\"a.example\", 3]");
  g_hash_table_insert (state, CHP_STATE_FLOOR_HANDS_ONLY, "not json");
  chp_safety_settings_load_state (safety, state);
  g_assert_cmpuint (g_strv_length ((char **) chp_safety_settings_get_floor_blind (safety)), ==, 0);
  g_assert_false (chp_safety_settings_get_stored (safety));

  g_hash_table_insert (state, CHP_STATE_FLOOR_BLIND, "[\"mail.example.com\",\"*.corp.example\"]");
  g_hash_table_insert (state, CHP_STATE_RESULT_MAX_CHARS, "999999");
  chp_safety_settings_load_state (safety, state);
  g_assert_true (chp_safety_settings_get_stored (safety));
  g_assert_cmpstr (chp_safety_settings_get_floor_blind (safety)[1], ==, "*.corp.example");
  g_assert_cmpuint (chp_safety_settings_get_result_max_chars (safety), ==, 100000);
  /* Loaded values are stored already: nothing to write back. */
  g_assert_cmpuint (keys->len, ==, 0);

  blind = chp_safety_settings_to_state (safety, CHP_STATE_FLOOR_BLIND);
  g_assert_cmpstr (blind, ==, "[\"mail.example.com\",\"*.corp.example\"]");
}

static void
test_person_changes (void)
{
  g_autoptr(ChpSafetySettings) safety = chp_safety_settings_new ();
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *cap = NULL;

  g_signal_connect (safety, "changed", G_CALLBACK (changed_cb), keys);

  chp_safety_settings_add_floor_entry (safety, CHP_STATE_FLOOR_HANDS_ONLY, "wiki.example");
  chp_safety_settings_add_floor_entry (safety, CHP_STATE_FLOOR_HANDS_ONLY, "wiki.example");
  chp_safety_settings_add_floor_entry (safety, CHP_STATE_FLOOR_BLIND, "bank.example");
  chp_safety_settings_remove_floor_entry (safety, CHP_STATE_FLOOR_HANDS_ONLY, "wiki.example");
  chp_safety_settings_remove_floor_entry (safety, CHP_STATE_FLOOR_HANDS_ONLY, "wiki.example");
  /* Too small for one snapshot page: the least an agent can work with. */
  chp_safety_settings_set_result_max_chars (safety, 10);

  g_assert_cmpuint (keys->len, ==, 4);
  g_assert_cmpstr (keys->pdata[0], ==, CHP_STATE_FLOOR_HANDS_ONLY);
  g_assert_cmpstr (keys->pdata[1], ==, CHP_STATE_FLOOR_BLIND);
  g_assert_cmpstr (keys->pdata[2], ==, CHP_STATE_FLOOR_HANDS_ONLY);
  g_assert_cmpstr (keys->pdata[3], ==, CHP_STATE_RESULT_MAX_CHARS);
  g_assert_cmpstr (chp_safety_settings_get_floor_blind (safety)[0], ==, "bank.example");
  g_assert_null (chp_safety_settings_get_floor_hands_only (safety)[0]);
  g_assert_true (chp_safety_settings_get_stored (safety));
  cap = chp_safety_settings_to_state (safety, CHP_STATE_RESULT_MAX_CHARS);
  g_assert_cmpstr (cap, ==, "1000");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/safety-settings/load-state", test_load_state);
  g_test_add_func ("/chaperone/safety-settings/person-changes", test_person_changes);

  return g_test_run ();
}
