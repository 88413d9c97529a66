/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-device.c: properties for the UI to bind to; no I/O happens here. */
#include "config.h"

#include "chp-device.h"

#include "chp-crypto.h"

struct _ChpDevice
{
  GObject parent_instance;

  ChpDeviceInfo *info;
  char *fingerprint;
  gboolean online;
  gboolean stopped;
  double rtt_ms;
};

enum {
  PROP_0,
  PROP_DEVICE_ID,
  PROP_NAME,
  PROP_ORIGIN,
  PROP_BROWSER,
  PROP_FINGERPRINT,
  PROP_ONLINE,
  PROP_RTT_MS,
  PROP_LAST_SEEN,
  PROP_REVOKED,
  PROP_STOPPED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (ChpDevice, chp_device, G_TYPE_OBJECT)

static void
chp_device_finalize (GObject *object)
{
  ChpDevice *self = CHP_DEVICE (object);

  g_clear_pointer (&self->info, chp_device_info_free);
  g_clear_pointer (&self->fingerprint, g_free);

  G_OBJECT_CLASS (chp_device_parent_class)->finalize (object);
}

static void
chp_device_get_property (GObject    *object,
                         guint       prop_id,
                         GValue     *value,
                         GParamSpec *pspec)
{
  ChpDevice *self = CHP_DEVICE (object);

  switch (prop_id)
    {
    case PROP_DEVICE_ID:
      g_value_set_string (value, self->info->device_id);
      break;

    case PROP_NAME:
      g_value_set_string (value, self->info->name);
      break;

    case PROP_ORIGIN:
      g_value_set_string (value, self->info->origin);
      break;

    case PROP_BROWSER:
      g_value_set_string (value, self->info->browser);
      break;

    case PROP_FINGERPRINT:
      g_value_set_string (value, self->fingerprint);
      break;

    case PROP_ONLINE:
      g_value_set_boolean (value, self->online);
      break;

    case PROP_RTT_MS:
      g_value_set_double (value, self->rtt_ms);
      break;

    case PROP_LAST_SEEN:
      g_value_set_int64 (value, self->info->last_seen);
      break;

    case PROP_REVOKED:
      g_value_set_boolean (value, self->info->revoked_at != 0);
      break;

    case PROP_STOPPED:
      g_value_set_boolean (value, self->stopped);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_device_class_init (ChpDeviceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = chp_device_finalize;
  object_class->get_property = chp_device_get_property;

  properties[PROP_DEVICE_ID] = g_param_spec_string ("device-id", NULL, NULL, NULL, flags);
  properties[PROP_NAME] = g_param_spec_string ("name", NULL, NULL, NULL, flags);
  properties[PROP_ORIGIN] = g_param_spec_string ("origin", NULL, NULL, NULL, flags);
  properties[PROP_BROWSER] = g_param_spec_string ("browser", NULL, NULL, NULL, flags);
  properties[PROP_FINGERPRINT] = g_param_spec_string ("fingerprint", NULL, NULL, NULL, flags);
  properties[PROP_ONLINE] = g_param_spec_boolean ("online", NULL, NULL, FALSE, flags);
  properties[PROP_RTT_MS] = g_param_spec_double ("rtt-ms", NULL, NULL, -1, G_MAXDOUBLE, -1, flags);
  properties[PROP_LAST_SEEN] = g_param_spec_int64 ("last-seen", NULL, NULL, 0, G_MAXINT64, 0, flags);
  properties[PROP_REVOKED] = g_param_spec_boolean ("revoked", NULL, NULL, FALSE, flags);
  /* The person pressed Stop (the shortcut, the pill, Esc, the popup) in this browser; only a
   * person resumes. */
  properties[PROP_STOPPED] = g_param_spec_boolean ("stopped", NULL, NULL, FALSE, flags);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
chp_device_init (ChpDevice *self)
{
  self->rtt_ms = -1;
}

ChpDevice *
chp_device_new (const ChpDeviceInfo *info)
{
  ChpDevice *self;

  g_return_val_if_fail (info != NULL, NULL);

  self = g_object_new (CHP_TYPE_DEVICE, NULL);
  self->info = chp_device_info_copy (info);
  self->fingerprint = chp_key_fingerprint (info->key_x, info->key_y);

  return self;
}

const ChpDeviceInfo *
chp_device_get_info (ChpDevice *self)
{
  g_return_val_if_fail (CHP_IS_DEVICE (self), NULL);

  return self->info;
}

/* After a re-pair (key rotation), rename or revoke: notify only what changed. */
void
chp_device_update_info (ChpDevice           *self,
                        const ChpDeviceInfo *info)
{
  ChpDeviceInfo *old;

  g_return_if_fail (CHP_IS_DEVICE (self));
  g_return_if_fail (info != NULL && g_strcmp0 (info->device_id, self->info->device_id) == 0);

  old = g_steal_pointer (&self->info);
  self->info = chp_device_info_copy (info);

  g_object_freeze_notify (G_OBJECT (self));
  if (g_strcmp0 (old->name, info->name) != 0)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_NAME]);
  if (g_strcmp0 (old->origin, info->origin) != 0)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ORIGIN]);
  if (g_strcmp0 (old->browser, info->browser) != 0)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BROWSER]);
  if (g_strcmp0 (old->key_x, info->key_x) != 0 || g_strcmp0 (old->key_y, info->key_y) != 0)
    {
      g_free (self->fingerprint);
      self->fingerprint = chp_key_fingerprint (info->key_x, info->key_y);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FINGERPRINT]);
    }
  if (old->last_seen != info->last_seen)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LAST_SEEN]);
  if ((old->revoked_at != 0) != (info->revoked_at != 0))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_REVOKED]);
  g_object_thaw_notify (G_OBJECT (self));

  chp_device_info_free (old);
}

const char *
chp_device_get_id (ChpDevice *self)
{
  g_return_val_if_fail (CHP_IS_DEVICE (self), NULL);

  return self->info->device_id;
}

const char *
chp_device_get_name (ChpDevice *self)
{
  g_return_val_if_fail (CHP_IS_DEVICE (self), NULL);

  return self->info->name;
}

const char *
chp_device_get_origin (ChpDevice *self)
{
  g_return_val_if_fail (CHP_IS_DEVICE (self), NULL);

  return self->info->origin;
}

const char *
chp_device_get_browser (ChpDevice *self)
{
  g_return_val_if_fail (CHP_IS_DEVICE (self), NULL);

  return self->info->browser;
}

const char *
chp_device_get_fingerprint (ChpDevice *self)
{
  g_return_val_if_fail (CHP_IS_DEVICE (self), NULL);

  return self->fingerprint;
}

gboolean
chp_device_get_online (ChpDevice *self)
{
  g_return_val_if_fail (CHP_IS_DEVICE (self), FALSE);

  return self->online;
}

void
chp_device_set_online (ChpDevice *self,
                       gboolean   online)
{
  g_return_if_fail (CHP_IS_DEVICE (self));

  online = !!online;
  if (self->online == online)
    return;

  self->online = online;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ONLINE]);
}

double
chp_device_get_rtt_ms (ChpDevice *self)
{
  g_return_val_if_fail (CHP_IS_DEVICE (self), -1);

  return self->rtt_ms;
}

void
chp_device_set_rtt_ms (ChpDevice *self,
                       double     rtt_ms)
{
  g_return_if_fail (CHP_IS_DEVICE (self));

  if (self->rtt_ms == rtt_ms)
    return;

  self->rtt_ms = rtt_ms;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RTT_MS]);
}

gint64
chp_device_get_last_seen (ChpDevice *self)
{
  g_return_val_if_fail (CHP_IS_DEVICE (self), 0);

  return self->info->last_seen;
}

void
chp_device_set_last_seen (ChpDevice *self,
                          gint64     last_seen)
{
  g_return_if_fail (CHP_IS_DEVICE (self));

  if (self->info->last_seen == last_seen)
    return;

  self->info->last_seen = last_seen;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LAST_SEEN]);
}

gboolean
chp_device_get_revoked (ChpDevice *self)
{
  g_return_val_if_fail (CHP_IS_DEVICE (self), FALSE);

  return self->info->revoked_at != 0;
}

gboolean
chp_device_get_stopped (ChpDevice *self)
{
  g_return_val_if_fail (CHP_IS_DEVICE (self), FALSE);

  return self->stopped;
}

void
chp_device_set_stopped (ChpDevice *self,
                        gboolean   stopped)
{
  g_return_if_fail (CHP_IS_DEVICE (self));

  stopped = !!stopped;
  if (self->stopped == stopped)
    return;

  self->stopped = stopped;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STOPPED]);
}
