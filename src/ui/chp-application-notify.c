/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-application-notify.c: how ChpApplication tells the person that something waits for them: a
 * pairing window for every browser that asks to pair, and a desktop notification for each new
 * pairing request, handoff and hold, withdrawn as soon as its item ends. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-app"

#include "chp-application-private.h"

#include "chp-hold-row.h"
#include "chp-pairing-window.h"

#include <glib/gi18n.h>

static void
send_needs_you_notification (ChpApplication *self,
                             const char     *id,
                             const char     *title,
                             const char     *body)
{
  g_autoptr(GNotification) notification = g_notification_new (title);
  g_autoptr(GIcon) icon = g_themed_icon_new (APP_ID);

  g_notification_set_body (notification, body);
  g_notification_set_icon (notification, icon);
  g_notification_set_priority (notification, G_NOTIFICATION_PRIORITY_HIGH);

  /* Only "show me": notification buttons are D-Bus-reachable actions, and Pair or Done must
   * be pressed by a person in the app's own window (docs/security.md). */
  g_notification_set_default_action_and_target (notification, "app.show-needs-you", "s", id);

  g_application_send_notification (G_APPLICATION (self), id, notification);
  g_hash_table_add (self->notified, g_strdup (id));
}

/* The notification id of an item of one of the watched lists. */
typedef char *(*NotificationIdFunc) (gpointer item);

/* Withdraws every notification of @prefix whose item is no longer in @model (@id_of names each
 * item's notification). */
static void
withdraw_ended (ChpApplication     *self,
                const char         *prefix,
                GListModel         *model,
                NotificationIdFunc  id_of)
{
  g_autoptr(GHashTable) current = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint n = g_list_model_get_n_items (model);
  GHashTableIter iter;
  const char *id;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GObject) item = g_list_model_get_item (model, i);

      g_hash_table_add (current, id_of (item));
    }

  g_hash_table_iter_init (&iter, self->notified);
  while (g_hash_table_iter_next (&iter, (gpointer *) &id, NULL))
    {
      if (g_str_has_prefix (id, prefix) && !g_hash_table_contains (current, id))
        {
          g_application_withdraw_notification (G_APPLICATION (self), id);
          g_hash_table_iter_remove (&iter);
        }
    }
}

void
chp_application_withdraw_all (ChpApplication *self)
{
  GHashTableIter iter;
  const char *id;

  g_hash_table_iter_init (&iter, self->notified);
  while (g_hash_table_iter_next (&iter, (gpointer *) &id, NULL))
    g_application_withdraw_notification (G_APPLICATION (self), id);
  g_hash_table_remove_all (self->notified);
}

static char *
pairing_notification_id (ChpPairingRequest *request)
{
  return g_strconcat ("pairing:", chp_pairing_request_get_id (request), NULL);
}

static char *
handoff_notification_id (ChpHandoff *handoff)
{
  return g_strconcat ("handoff:", chp_handoff_get_device_id (handoff), "/",
                      chp_handoff_get_id (handoff), NULL);
}

static void
notify_pairing (ChpApplication    *self,
                ChpPairingRequest *request)
{
  g_autofree char *id = pairing_notification_id (request);
  g_autofree char *body = NULL;
  const char *browser = chp_pairing_request_get_browser (request);

  if (g_hash_table_contains (self->notified, id))
    return;

  /* No code in the notification: the comparison belongs in the pairing window, beside the
   * browser's name and origin. */
  if (browser != NULL && *browser != '\0')
    /* Translators: %s is a browser's name, as the browser gives it, e.g. "Chromium 120" */
    body = g_strdup_printf (_("%s asks to pair with Chaperone. Compare the codes before you "
                              "press Pair."), browser);
  else
    body = g_strdup (_("A browser asks to pair with Chaperone. Compare the codes before you "
                       "press Pair."));

  send_needs_you_notification (self, id, _("A browser asks to pair"), body);
}

/* The same closed set as the Needs you row: the words are ours, never the page's or the
 * agent's, so a notification cannot be made to look like a system prompt. */
static const char *
handoff_title (ChpHandoff *handoff)
{
  const char *reason = chp_handoff_get_reason (handoff);

  if (g_strcmp0 (reason, "qr") == 0)
    return _("Scan a QR code");
  if (g_strcmp0 (reason, "mfa") == 0)
    return _("Enter a verification code");
  if (g_strcmp0 (reason, "captcha") == 0)
    return _("Solve a CAPTCHA");
  if (g_strcmp0 (reason, "device") == 0)
    return _("Confirm on your device");
  if (g_strcmp0 (reason, "login") == 0)
    return _("Sign in");
  return _("Do a step in the browser");
}

void
chp_application_handoff_arrived_cb (ChpEngine      *engine,
                                    ChpHandoff     *handoff,
                                    ChpApplication *self)
{
  g_autofree char *id = handoff_notification_id (handoff);
  g_autofree char *body = NULL;
  const char *origin = chp_handoff_get_origin (handoff);

  if (g_hash_table_contains (self->notified, id))
    return;

  if (origin != NULL && *origin != '\0')
    /* Translators: %s is a site's origin, e.g. "https://example.com" */
    body = g_strdup_printf (_("An agent is waiting for you on %s."), origin);
  else
    body = g_strdup (_("An agent is waiting for you in the browser."));

  send_needs_you_notification (self, id, handoff_title (handoff), body);
}

void
chp_application_handoffs_changed_cb (GListModel     *model,
                                     guint           position,
                                     guint           removed,
                                     guint           added,
                                     ChpApplication *self)
{
  if (removed > 0)
    withdraw_ended (self, "handoff:", model, (NotificationIdFunc) handoff_notification_id);
}

static char *
hold_notification_id (ChpHold *hold)
{
  return g_strconcat ("hold:", chp_hold_get_device_id (hold), "/", chp_hold_get_id (hold), NULL);
}

/* Words by kind, ours alone: the control's label and the values stay in the window, where the
 * person decides; a notification only says that something waits and where. */
void
chp_application_hold_arrived_cb (ChpEngine      *engine,
                                 ChpHold        *hold,
                                 ChpApplication *self)
{
  g_autofree char *id = hold_notification_id (hold);
  g_autofree char *host = NULL;
  g_autofree char *body = NULL;
  const char *kind = chp_hold_get_kind (hold);
  const char *title;

  if (g_hash_table_contains (self->notified, id))
    return;

  if (g_strcmp0 (kind, "delete") == 0)
    title = _("An agent’s delete is waiting for you");
  else if (g_strcmp0 (kind, "write") == 0)
    title = _("An agent’s change is waiting for you");
  else
    title = _("An agent’s send is waiting for you");

  host = chp_hold_site_for_title (chp_hold_get_site (hold));
  /* Translators: %s is a site's host name, e.g. "shop.example" */
  body = g_strdup_printf (_("Nothing happens on %s until you approve it in Chaperone."), host);

  send_needs_you_notification (self, id, title, body);
}

void
chp_application_holds_changed_cb (GListModel     *model,
                                  guint           position,
                                  guint           removed,
                                  guint           added,
                                  ChpApplication *self)
{
  if (removed > 0)
    withdraw_ended (self, "hold:", model, (NotificationIdFunc) hold_notification_id);
}

static void
present_pairing (ChpApplication    *self,
                 ChpPairingRequest *request)
{
  ChpPairingWindow *window;
  ChpWindow *main_window;

  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (self)); l != NULL; l = l->next)
    {
      if (CHP_IS_PAIRING_WINDOW (l->data) &&
          chp_pairing_window_get_request (l->data) == request)
        {
          gtk_window_present (l->data);
          return;
        }
    }

  window = chp_pairing_window_new (GTK_APPLICATION (self), request);

  /* Kept above the main window when there is one, but not modal: two browsers may pair at once,
   * and the person may want to look at the list of paired browsers first. */
  main_window = chp_application_find_main_window (self);
  if (main_window != NULL)
    gtk_window_set_transient_for (GTK_WINDOW (window), GTK_WINDOW (main_window));

  gtk_window_present (GTK_WINDOW (window));
}

void
chp_application_pairing_items_changed_cb (GListModel     *model,
                                          guint           position,
                                          guint           removed,
                                          guint           added,
                                          ChpApplication *self)
{
  /* A finished request leaves the list, but its window stays to tell the person what happened
   * and then closes itself; only its notification goes at once. */
  if (removed > 0)
    withdraw_ended (self, "pairing:", model, (NotificationIdFunc) pairing_notification_id);

  for (guint i = position; i < position + added; i++)
    {
      g_autoptr(ChpPairingRequest) request = g_list_model_get_item (model, i);

      if (request != NULL)
        {
          present_pairing (self, request);
          notify_pairing (self, request);
        }
    }
}
