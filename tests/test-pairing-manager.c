/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-pairing-manager.c: pairing limits and lockout, and why the commitment matters: without it
 * a man in the middle grinds its nonce until the six digits match; with it, it cannot. */
#include "config.h"

#include <string.h>

#include "chp-crypto.h"
#include "chp-pairing-manager.h"

#define NOW ((gint64) 1800000000000)

static ChpPairingRequest *
start (ChpPairingManager *manager,
       const char        *installation_id,
       gint64             now,
       GError           **error)
{
  gint64 retry_after = 0;
  ChpPairingRequest *request;
  g_autofree char *id = NULL;

  if (!chp_pairing_manager_admit (manager, installation_id, now, &retry_after, error))
    return NULL;

  id = chp_random_b64url (16);
  request = chp_pairing_request_new (id, installation_id, "chrome-extension://x", "Test", now + 120000);
  chp_pairing_manager_track (manager, request);

  return request;
}

static void
test_pending_limits (void)
{
  g_autoptr(ChpPairingManager) manager = chp_pairing_manager_new (NULL);
  g_autoptr(ChpPairingRequest) a = start (manager, "inst-a", NOW, NULL);
  g_autoptr(ChpPairingRequest) b = NULL;
  g_autoptr(ChpPairingRequest) c = NULL;
  g_autoptr(ChpPairingRequest) d = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (a);

  /* One pending request per installation. */
  g_assert_null (start (manager, "inst-a", NOW, &error));
  g_assert_error (error, CHP_PAIRING_ERROR, CHP_PAIRING_ERROR_BUSY);
  g_clear_error (&error);

  /* Three in all. */
  b = start (manager, "inst-b", NOW, NULL);
  c = start (manager, "inst-c", NOW, NULL);
  g_assert_nonnull (b);
  g_assert_nonnull (c);
  d = start (manager, "inst-d", NOW, &error);
  g_assert_null (d);
  g_assert_error (error, CHP_PAIRING_ERROR, CHP_PAIRING_ERROR_BUSY);

  /* An approval frees a slot and does not count toward the lock. */
  chp_pairing_request_set_code (a, "123456");
  chp_pairing_manager_show (manager, a);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (manager)), ==, 1);
  chp_pairing_manager_finish (manager, a, CHP_PAIRING_STATE_APPROVED, NOW);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (manager)), ==, 0);
  g_assert_cmpint (chp_pairing_request_get_state (a), ==, CHP_PAIRING_STATE_APPROVED);
  g_assert_cmpint (chp_pairing_manager_get_locked_until (manager), ==, 0);
}

static void
test_lockout (void)
{
  g_autoptr(ChpPairingManager) manager = chp_pairing_manager_new (NULL);
  const ChpPairingState failures[] = {
    CHP_PAIRING_STATE_REJECTED, CHP_PAIRING_STATE_EXPIRED, CHP_PAIRING_STATE_FAILED
  };
  g_autoptr(GError) error = NULL;
  gint64 retry_after = 0;

  for (guint i = 0; i < G_N_ELEMENTS (failures); i++)
    {
      g_autoptr(ChpPairingRequest) request = start (manager, "inst", NOW + i * 1000, NULL);

      g_assert_nonnull (request);
      chp_pairing_manager_finish (manager, request, failures[i], NOW + i * 1000);
    }

  /* Three failures within ten minutes: locked for ten minutes from the last. */
  g_assert_cmpint (chp_pairing_manager_get_locked_until (manager), ==, NOW + 2000 + 600000);
  g_assert_false (chp_pairing_manager_admit (manager, "other", NOW + 3000, &retry_after, &error));
  g_assert_error (error, CHP_PAIRING_ERROR, CHP_PAIRING_ERROR_LOCKED);
  g_assert_cmpint (retry_after, ==, 600000 - 1000);
  g_assert_nonnull (strstr (error->message, "10 minutes"));
  g_clear_error (&error);

  /* Ten minutes later it opens again. */
  g_assert_true (chp_pairing_manager_admit (manager, "other", NOW + 2000 + 600000, &retry_after,
                                            NULL));
  g_assert_cmpint (chp_pairing_manager_get_locked_until (manager), ==, 0);
}

static void
test_history_restores_lock (void)
{
  g_autoptr(ChpPairingManager) manager = chp_pairing_manager_new (NULL);
  g_autoptr(GPtrArray) history = g_ptr_array_new_with_free_func ((GDestroyNotify) chp_pairing_attempt_free);
  gint64 now = g_get_real_time () / 1000;
  gint64 retry_after = 0;
  g_autoptr(GError) error = NULL;

  /* What the store hands back after a restart: the lock must survive it. */
  for (guint i = 0; i < 3; i++)
    {
      ChpPairingAttempt *attempt = g_new0 (ChpPairingAttempt, 1);

      attempt->at = now - 60000 + i;
      attempt->installation_id = g_strdup ("inst");
      attempt->origin = g_strdup ("chrome-extension://x");
      attempt->outcome = CHP_PAIRING_OUTCOME_ABANDONED;
      g_ptr_array_add (history, attempt);
    }

  chp_pairing_manager_set_history (manager, history);
  g_assert_false (chp_pairing_manager_admit (manager, "inst2", now, &retry_after, &error));
  g_assert_error (error, CHP_PAIRING_ERROR, CHP_PAIRING_ERROR_LOCKED);
}

static void
test_daily_limit (void)
{
  g_autoptr(ChpPairingManager) manager = chp_pairing_manager_new (NULL);
  g_autoptr(GError) error = NULL;
  gint64 retry_after = 0;
  gint64 t = NOW;

  /* Approved attempts, spread out so the lock never trips: twenty a day, then no more. */
  for (guint i = 0; i < CHP_PAIRING_MAX_PER_DAY; i++)
    {
      g_autofree char *inst = g_strdup_printf ("inst-%u", i);
      g_autoptr(ChpPairingRequest) request = start (manager, inst, t, NULL);

      g_assert_nonnull (request);
      chp_pairing_manager_finish (manager, request, CHP_PAIRING_STATE_APPROVED, t);
      t += 60000;
    }

  g_assert_false (chp_pairing_manager_admit (manager, "one-more", t, &retry_after, &error));
  g_assert_error (error, CHP_PAIRING_ERROR, CHP_PAIRING_ERROR_RATE_LIMITED);
  g_assert_cmpint (retry_after, >, 0);
}

/* The man in the middle: it talks to the real browser (which shows code_victim) and to the
 * engine with its own key. Without a commitment it learns nonceE first, then searches nonceC. */
static void
test_grinding_without_commitment (void)
{
  const char *victim[10] = { "req-victim", "chrome-extension://abcdefghijklmnopabcdefghijklmnop",
                             "inst", "vx", "vy", "sha256:eng", "ex", "ey", "nc", "ne" };
  g_autofree char *code_victim = chp_pair_code (victim, NULL);
  const char *attacker[10] = { "req-mitm", "chrome-extension://abcdefghijklmnopabcdefghijklmnop",
                               "inst", "ax", "ay", "sha256:eng", "ex", "ey", NULL,
                               "engine-nonce-the-mitm-saw-first" };
  guint64 tries = 0;
  gint64 started = g_get_monotonic_time ();
  gboolean matched = FALSE;

  /* 10^7 tries bounds the search; the expected number is 10^6 (one in a million per try). */
  while (tries < 10000000 && !matched)
    {
      g_autofree char *nonce = g_strdup_printf ("%" G_GUINT64_FORMAT, tries++);
      g_autofree char *code = NULL;

      attacker[8] = nonce;
      code = chp_pair_code (attacker, NULL);
      matched = g_str_equal (code, code_victim);
    }

  g_test_message ("without a commitment the attacker matched code %s after %" G_GUINT64_FORMAT
                  " tries in %.1f s", code_victim, tries,
                  (g_get_monotonic_time () - started) / 1e6);
  g_assert_true (matched);
}

/* With the commitment the attacker must fix nonceC before it sees nonceE. The nonce it grinds
 * afterwards no longer opens its commitment, so the engine refuses the reveal
 * (commitment_mismatch), and each honest attempt is a single one-in-a-million guess. */
static void
test_grinding_with_commitment (void)
{
  g_autoptr(ChpPairingManager) manager = chp_pairing_manager_new (NULL);
  g_autofree char *committed = chp_random_b64url (32);
  g_autofree char *commitment = chp_pair_commitment (committed, "ax", "ay", NULL);
  guint attempts = 0;
  gint64 retry_after = 0;
  gint64 t = NOW;

  for (guint64 i = 0; i < 1000; i++)
    {
      g_autofree char *ground = g_strdup_printf ("%" G_GUINT64_FORMAT, i);
      g_autofree char *opened = chp_pair_commitment (ground, "ax", "ay", NULL);

      g_assert_cmpstr (opened, !=, commitment);
    }

  /* And it cannot simply retry: every failed attempt counts, and three lock pairing. */
  for (;;)
    {
      g_autoptr(ChpPairingRequest) request = NULL;
      g_autoptr(GError) error = NULL;

      if (!chp_pairing_manager_admit (manager, "mitm", t, &retry_after, &error))
        {
          g_assert_error (error, CHP_PAIRING_ERROR, CHP_PAIRING_ERROR_LOCKED);
          break;
        }

      request = start (manager, "mitm", t, NULL);
      chp_pairing_manager_finish (manager, request, CHP_PAIRING_STATE_FAILED, t);
      attempts++;
      t += 1000;
    }

  g_assert_cmpuint (attempts, ==, 3);
  g_test_message ("with a commitment: %u guesses of one in 10^6, then locked for %" G_GINT64_FORMAT
                  " s", attempts, retry_after / 1000);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/pairing/pending-limits", test_pending_limits);
  g_test_add_func ("/chaperone/pairing/lockout", test_lockout);
  g_test_add_func ("/chaperone/pairing/history-restores-lock", test_history_restores_lock);
  g_test_add_func ("/chaperone/pairing/daily-limit", test_daily_limit);
  g_test_add_func ("/chaperone/pairing/grinding/without-commitment",
                   test_grinding_without_commitment);
  g_test_add_func ("/chaperone/pairing/grinding/with-commitment", test_grinding_with_commitment);

  return g_test_run ();
}
