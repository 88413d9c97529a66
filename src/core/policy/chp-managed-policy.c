/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-managed-policy.c: the administrator's locks (docs/security.md, "Managed policy").
 *
 * A key file, group [Chaperone]:
 *   BridgePort=64333                 the bridge listens on this port, whatever Preferences say
 *   MaxGrantMinutes=60               an agent call under an older grant is refused as expired
 *   FloorBlind=bank.example;*.corp   floor entries added to the person's, which they cannot remove
 *   FloorHandsOnly=…
 *   ApiCalls=false                   no call of a site's own API (browser_api call, API batch steps)
 *   SiteLearning=false               nothing learned of a site is kept
 *   Transport=native                 browsers come in only through the native-messaging host
 *                                    (or =websocket: only over their own WebSocket)
 *
 * It fails closed: a file that is there but cannot be read, or that has a key or value this
 * version does not know (a typo of a lock the administrator meant), turns API calls and learning
 * off and says why; the app shows the error, and `chaperone doctor` names it. A policy guards the
 * person against agents and mistakes — not against their own account, which can run any program
 * it likes. */
#include "config.h"

#include "chp-managed-policy.h"

#include <glib/gi18n.h>

#define GROUP "Chaperone"
#define MAX_GRANT_MINUTES_LIMIT (7 * 24 * 60)
#define FLOOR_ENTRIES_MAX 200

struct _ChpManagedPolicy
{
  GObject  parent_instance;

  char    *path;
  gboolean present;
  char    *error;
  guint16  bridge_port;       /* 0: not locked */
  guint    max_grant_minutes; /* 0: not locked */
  GStrv    floor_blind;
  GStrv    floor_hands_only;
  gboolean api_calls;
  gboolean site_learning;
  ChpTransportLock transport;
};

G_DEFINE_FINAL_TYPE (ChpManagedPolicy, chp_managed_policy, G_TYPE_OBJECT)

static void
chp_managed_policy_finalize (GObject *object)
{
  ChpManagedPolicy *self = CHP_MANAGED_POLICY (object);

  g_free (self->path);
  g_free (self->error);
  g_strfreev (self->floor_blind);
  g_strfreev (self->floor_hands_only);

  G_OBJECT_CLASS (chp_managed_policy_parent_class)->finalize (object);
}

static void
chp_managed_policy_class_init (ChpManagedPolicyClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = chp_managed_policy_finalize;
}

static void
chp_managed_policy_init (ChpManagedPolicy *self)
{
  self->api_calls = TRUE;
  self->site_learning = TRUE;
  self->floor_blind = g_new0 (char *, 1);
  self->floor_hands_only = g_new0 (char *, 1);
}

/* No file: nothing locked. */
ChpManagedPolicy *
chp_managed_policy_new_empty (void)
{
  return g_object_new (CHP_TYPE_MANAGED_POLICY, NULL);
}

static gboolean
read_uint (GKeyFile   *kf,
           const char *key,
           guint       min,
           guint       max,
           guint      *out,
           GError    **error)
{
  g_autofree char *text = NULL;
  guint64 value;

  if (!g_key_file_has_key (kf, GROUP, key, NULL))
    return TRUE;
  text = g_key_file_get_string (kf, GROUP, key, error);
  if (text == NULL)
    return FALSE;
  g_strstrip (text);
  if (!g_ascii_string_to_unsigned (text, 10, min, max, &value, NULL))
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                   _("%s must be a number from %u to %u"), key, min, max);
      return FALSE;
    }
  *out = (guint) value;
  return TRUE;
}

static gboolean
read_bool (GKeyFile   *kf,
           const char *key,
           gboolean   *out,
           GError    **error)
{
  GError *local = NULL;
  gboolean value;

  if (!g_key_file_has_key (kf, GROUP, key, NULL))
    return TRUE;
  value = g_key_file_get_boolean (kf, GROUP, key, &local);
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  *out = value;
  return TRUE;
}

static gboolean
read_list (GKeyFile   *kf,
           const char *key,
           GStrv      *out,
           GError    **error)
{
  gsize n = 0;
  GStrv list;

  if (!g_key_file_has_key (kf, GROUP, key, NULL))
    return TRUE;
  list = g_key_file_get_string_list (kf, GROUP, key, &n, error);
  if (list == NULL)
    return FALSE;
  if (n > FLOOR_ENTRIES_MAX)
    {
      g_strfreev (list);
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                   _("%s has more than %u entries"), key, FLOOR_ENTRIES_MAX);
      return FALSE;
    }
  for (gsize i = 0; i < n; i++)
    g_strstrip (list[i]);
  g_strfreev (*out);
  *out = list;
  return TRUE;
}

static gboolean
read_transport (GKeyFile         *kf,
                ChpTransportLock *out,
                GError          **error)
{
  g_autofree char *value = NULL;

  if (!g_key_file_has_key (kf, GROUP, "Transport", NULL))
    return TRUE;
  value = g_key_file_get_string (kf, GROUP, "Transport", error);
  if (value == NULL)
    return FALSE;
  g_strstrip (value);
  if (g_str_equal (value, "websocket"))
    *out = CHP_TRANSPORT_WEBSOCKET;
  else if (g_str_equal (value, "native"))
    *out = CHP_TRANSPORT_NATIVE;
  else
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                   _("Transport is “%s”: it is “websocket” or “native”"), value);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse (ChpManagedPolicy *self,
       GKeyFile         *kf,
       GError          **error)
{
  static const char * const known[] = {
    "BridgePort", "MaxGrantMinutes", "FloorBlind", "FloorHandsOnly", "ApiCalls", "SiteLearning",
    "Transport",
  };
  g_auto(GStrv) groups = g_key_file_get_groups (kf, NULL);
  g_auto(GStrv) keys = NULL;
  guint port = 0;

  for (guint i = 0; groups[i] != NULL; i++)
    if (g_strcmp0 (groups[i], GROUP) != 0)
      {
        g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_GROUP_NOT_FOUND,
                     _("Unknown group [%s]: the only group is [%s]"), groups[i], GROUP);
        return FALSE;
      }
  keys = g_key_file_get_keys (kf, GROUP, NULL, NULL);
  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    if (!g_strv_contains (known, keys[i]))
      {
        g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND,
                     _("Unknown key %s"), keys[i]);
        return FALSE;
      }

  if (!read_uint (kf, "BridgePort", 1024, 65535, &port, error) ||
      !read_uint (kf, "MaxGrantMinutes", 1, MAX_GRANT_MINUTES_LIMIT, &self->max_grant_minutes, error) ||
      !read_list (kf, "FloorBlind", &self->floor_blind, error) ||
      !read_list (kf, "FloorHandsOnly", &self->floor_hands_only, error) ||
      !read_bool (kf, "ApiCalls", &self->api_calls, error) ||
      !read_bool (kf, "SiteLearning", &self->site_learning, error) ||
      !read_transport (kf, &self->transport, error))
    return FALSE;
  self->bridge_port = (guint16) port;
  return TRUE;
}

/**
 * chp_managed_policy_load:
 * @path: (nullable): the file; %NULL for %CHP_MANAGED_POLICY_PATH
 *
 * Returns: (transfer full): the policy; never %NULL. A missing file locks nothing; a broken one
 * locks API calls and learning off and keeps the reason (chp_managed_policy_get_error()).
 */
ChpManagedPolicy *
chp_managed_policy_load (const char *path)
{
  g_autoptr(ChpManagedPolicy) self = chp_managed_policy_new_empty ();
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GError) error = NULL;

  self->path = g_strdup (path != NULL ? path : CHP_MANAGED_POLICY_PATH);
  if (!g_key_file_load_from_file (kf, self->path, G_KEY_FILE_NONE, &error))
    {
      if (g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return g_steal_pointer (&self);
      self->present = TRUE;
    }
  else
    {
      self->present = TRUE;
      if (parse (self, kf, &error))
        return g_steal_pointer (&self);
    }

  /* Fail closed: what it could not say may have been a lock. */
  self->error = g_strdup (error->message);
  self->api_calls = FALSE;
  self->site_learning = FALSE;
  return g_steal_pointer (&self);
}

gboolean
chp_managed_policy_get_present (ChpManagedPolicy *self)
{
  g_return_val_if_fail (CHP_IS_MANAGED_POLICY (self), FALSE);
  return self->present;
}

const char *
chp_managed_policy_get_path (ChpManagedPolicy *self)
{
  g_return_val_if_fail (CHP_IS_MANAGED_POLICY (self), NULL);
  return self->path != NULL ? self->path : CHP_MANAGED_POLICY_PATH;
}

/* Returns: (nullable): why the file could not be used */
const char *
chp_managed_policy_get_error (ChpManagedPolicy *self)
{
  g_return_val_if_fail (CHP_IS_MANAGED_POLICY (self), NULL);
  return self->error;
}

/* Returns: the locked port, or 0 */
guint16
chp_managed_policy_get_bridge_port (ChpManagedPolicy *self)
{
  g_return_val_if_fail (CHP_IS_MANAGED_POLICY (self), 0);
  return self->bridge_port;
}

/* Returns: the longest a grant may serve an agent, in minutes, or 0 */
guint
chp_managed_policy_get_max_grant_minutes (ChpManagedPolicy *self)
{
  g_return_val_if_fail (CHP_IS_MANAGED_POLICY (self), 0);
  return self->max_grant_minutes;
}

const char * const *
chp_managed_policy_get_floor_blind (ChpManagedPolicy *self)
{
  g_return_val_if_fail (CHP_IS_MANAGED_POLICY (self), NULL);
  return (const char * const *) self->floor_blind;
}

const char * const *
chp_managed_policy_get_floor_hands_only (ChpManagedPolicy *self)
{
  g_return_val_if_fail (CHP_IS_MANAGED_POLICY (self), NULL);
  return (const char * const *) self->floor_hands_only;
}

gboolean
chp_managed_policy_get_api_calls (ChpManagedPolicy *self)
{
  g_return_val_if_fail (CHP_IS_MANAGED_POLICY (self), FALSE);
  return self->api_calls;
}

gboolean
chp_managed_policy_get_site_learning (ChpManagedPolicy *self)
{
  g_return_val_if_fail (CHP_IS_MANAGED_POLICY (self), FALSE);
  return self->site_learning;
}

ChpTransportLock
chp_managed_policy_get_transport (ChpManagedPolicy *self)
{
  g_return_val_if_fail (CHP_IS_MANAGED_POLICY (self), CHP_TRANSPORT_ANY);
  return self->transport;
}

/**
 * chp_managed_policy_dup_locks:
 *
 * Returns: (transfer full): one translated sentence per lock, for the app and the doctor
 */
char **
chp_managed_policy_dup_locks (ChpManagedPolicy *self)
{
  GPtrArray *b = g_ptr_array_new ();
  guint n;

  g_return_val_if_fail (CHP_IS_MANAGED_POLICY (self), NULL);

  if (self->bridge_port != 0)
    g_ptr_array_add (b, g_strdup_printf (_("The bridge port is %u"), self->bridge_port));
  if (self->max_grant_minutes != 0)
    g_ptr_array_add (b, g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                                          "Grants serve agents for at most %u minute",
                                                          "Grants serve agents for at most %u minutes",
                                                          self->max_grant_minutes),
                                             self->max_grant_minutes));
  if ((n = g_strv_length (self->floor_blind)) > 0)
    g_ptr_array_add (b, g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                                          "%u site is hidden from agents",
                                                          "%u sites are hidden from agents", n), n));
  if ((n = g_strv_length (self->floor_hands_only)) > 0)
    g_ptr_array_add (b, g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                                          "Agents may only read %u site",
                                                          "Agents may only read %u sites", n), n));
  if (!self->api_calls)
    g_ptr_array_add (b, g_strdup (_("Agents may not call a site’s own API")));
  if (!self->site_learning)
    g_ptr_array_add (b, g_strdup (_("Nothing is learned about how sites work")));
  if (self->transport == CHP_TRANSPORT_NATIVE)
    g_ptr_array_add (b, g_strdup (_("Browsers connect only through the native host")));
  else if (self->transport == CHP_TRANSPORT_WEBSOCKET)
    g_ptr_array_add (b, g_strdup (_("Browsers connect only over their own WebSocket")));
  g_ptr_array_add (b, NULL);
  return (char **) g_ptr_array_free (b, FALSE);
}
