/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-pairing-request.c: holds what the pairing window shows and carries the person's decision
 * back to the bridge through the "decided" signal. */
#include "config.h"

#include "chp-pairing-request.h"

#include "chp-crypto.h"

struct _ChpPairingRequest
{
  GObject parent_instance;

  char *request_id;
  char *installation_id;
  char *origin;
  char *browser;
  gint64 expires_at;
  char *code;
  char *existing_device_id;
  char *existing_device_name;
  gboolean replace;
  ChpPairingState state;
};

enum {
  PROP_0,
  PROP_REQUEST_ID,
  PROP_ORIGIN,
  PROP_BROWSER,
  PROP_EXPIRES_AT,
  PROP_CODE,
  PROP_STATE,
  PROP_EXISTING_DEVICE_NAME,
  N_PROPS
};

enum {
  SIGNAL_DECIDED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (ChpPairingRequest, chp_pairing_request, G_TYPE_OBJECT)

GType
chp_pairing_state_get_type (void)
{
  static gsize type_id;

  if (g_once_init_enter (&type_id))
    {
      static const GEnumValue values[] = {
        { CHP_PAIRING_STATE_CHALLENGED, "CHP_PAIRING_STATE_CHALLENGED", "challenged" },
        { CHP_PAIRING_STATE_WAITING, "CHP_PAIRING_STATE_WAITING", "waiting" },
        { CHP_PAIRING_STATE_APPROVED, "CHP_PAIRING_STATE_APPROVED", "approved" },
        { CHP_PAIRING_STATE_REJECTED, "CHP_PAIRING_STATE_REJECTED", "rejected" },
        { CHP_PAIRING_STATE_EXPIRED, "CHP_PAIRING_STATE_EXPIRED", "expired" },
        { CHP_PAIRING_STATE_FAILED, "CHP_PAIRING_STATE_FAILED", "failed" },
        { CHP_PAIRING_STATE_ABANDONED, "CHP_PAIRING_STATE_ABANDONED", "abandoned" },
        { 0, NULL, NULL }
      };
      GType type = g_enum_register_static ("ChpPairingState", values);

      g_once_init_leave (&type_id, type);
    }

  return type_id;
}

static void
chp_pairing_request_finalize (GObject *object)
{
  ChpPairingRequest *self = CHP_PAIRING_REQUEST (object);

  g_free (self->request_id);
  g_free (self->installation_id);
  g_free (self->origin);
  g_free (self->browser);
  g_free (self->code);
  g_free (self->existing_device_id);
  g_free (self->existing_device_name);

  G_OBJECT_CLASS (chp_pairing_request_parent_class)->finalize (object);
}

static void
chp_pairing_request_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  ChpPairingRequest *self = CHP_PAIRING_REQUEST (object);

  switch (prop_id)
    {
    case PROP_REQUEST_ID:
      g_value_set_string (value, self->request_id);
      break;

    case PROP_ORIGIN:
      g_value_set_string (value, self->origin);
      break;

    case PROP_BROWSER:
      g_value_set_string (value, self->browser);
      break;

    case PROP_EXPIRES_AT:
      g_value_set_int64 (value, self->expires_at);
      break;

    case PROP_CODE:
      g_value_set_string (value, self->code);
      break;

    case PROP_STATE:
      g_value_set_enum (value, self->state);
      break;

    case PROP_EXISTING_DEVICE_NAME:
      g_value_set_string (value, self->existing_device_name);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_pairing_request_class_init (ChpPairingRequestClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = chp_pairing_request_finalize;
  object_class->get_property = chp_pairing_request_get_property;

  properties[PROP_REQUEST_ID] = g_param_spec_string ("request-id", NULL, NULL, NULL, flags);
  properties[PROP_ORIGIN] = g_param_spec_string ("origin", NULL, NULL, NULL, flags);
  properties[PROP_BROWSER] = g_param_spec_string ("browser", NULL, NULL, NULL, flags);
  properties[PROP_EXPIRES_AT] =
    g_param_spec_int64 ("expires-at", NULL, NULL, 0, G_MAXINT64, 0, flags);
  properties[PROP_CODE] = g_param_spec_string ("code", NULL, NULL, NULL, flags);
  properties[PROP_STATE] =
    g_param_spec_enum ("state", NULL, NULL, CHP_TYPE_PAIRING_STATE,
                       CHP_PAIRING_STATE_CHALLENGED, flags);
  properties[PROP_EXISTING_DEVICE_NAME] =
    g_param_spec_string ("existing-device-name", NULL, NULL, NULL, flags);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * ChpPairingRequest::decided:
   * @approved: whether the person pressed Pair
   *
   * Emitted once, when the person decides in the app.
   */
  signals[SIGNAL_DECIDED] =
    g_signal_new ("decided", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_BOOLEAN);
}

static void
chp_pairing_request_init (ChpPairingRequest *self)
{
}

ChpPairingRequest *
chp_pairing_request_new (const char *request_id,
                         const char *installation_id,
                         const char *origin,
                         const char *browser,
                         gint64      expires_at)
{
  ChpPairingRequest *self = g_object_new (CHP_TYPE_PAIRING_REQUEST, NULL);

  self->request_id = g_strdup (request_id);
  self->installation_id = g_strdup (installation_id);
  self->origin = g_strdup (origin);
  self->browser = g_strdup (browser);
  self->expires_at = expires_at;

  return self;
}

const char *
chp_pairing_request_get_id (ChpPairingRequest *self)
{
  g_return_val_if_fail (CHP_IS_PAIRING_REQUEST (self), NULL);

  return self->request_id;
}

const char *
chp_pairing_request_get_installation_id (ChpPairingRequest *self)
{
  g_return_val_if_fail (CHP_IS_PAIRING_REQUEST (self), NULL);

  return self->installation_id;
}

const char *
chp_pairing_request_get_origin (ChpPairingRequest *self)
{
  g_return_val_if_fail (CHP_IS_PAIRING_REQUEST (self), NULL);

  return self->origin;
}

const char *
chp_pairing_request_get_browser (ChpPairingRequest *self)
{
  g_return_val_if_fail (CHP_IS_PAIRING_REQUEST (self), NULL);

  return self->browser;
}

gint64
chp_pairing_request_get_expires_at (ChpPairingRequest *self)
{
  g_return_val_if_fail (CHP_IS_PAIRING_REQUEST (self), 0);

  return self->expires_at;
}

const char *
chp_pairing_request_get_code (ChpPairingRequest *self)
{
  g_return_val_if_fail (CHP_IS_PAIRING_REQUEST (self), NULL);

  return self->code;
}

char *
chp_pairing_request_dup_code_display (ChpPairingRequest *self)
{
  g_return_val_if_fail (CHP_IS_PAIRING_REQUEST (self), NULL);

  return self->code ? chp_pair_code_display (self->code) : NULL;
}

ChpPairingState
chp_pairing_request_get_state (ChpPairingRequest *self)
{
  g_return_val_if_fail (CHP_IS_PAIRING_REQUEST (self), CHP_PAIRING_STATE_FAILED);

  return self->state;
}

const char *
chp_pairing_request_get_existing_device_id (ChpPairingRequest *self)
{
  g_return_val_if_fail (CHP_IS_PAIRING_REQUEST (self), NULL);

  return self->existing_device_id;
}

const char *
chp_pairing_request_get_existing_device_name (ChpPairingRequest *self)
{
  g_return_val_if_fail (CHP_IS_PAIRING_REQUEST (self), NULL);

  return self->existing_device_name;
}

gboolean
chp_pairing_request_get_replace (ChpPairingRequest *self)
{
  g_return_val_if_fail (CHP_IS_PAIRING_REQUEST (self), FALSE);

  return self->replace;
}

void
chp_pairing_request_set_code (ChpPairingRequest *self,
                              const char        *code)
{
  g_return_if_fail (CHP_IS_PAIRING_REQUEST (self));

  if (g_strcmp0 (self->code, code) == 0)
    return;

  g_free (self->code);
  self->code = g_strdup (code);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CODE]);
}

/* A new installation from an origin that already has a device: the person chooses between
 * replacing that device and adding another profile (DESIGN §3.7). */
void
chp_pairing_request_set_existing_device (ChpPairingRequest *self,
                                         const char        *device_id,
                                         const char        *name)
{
  g_return_if_fail (CHP_IS_PAIRING_REQUEST (self));

  g_free (self->existing_device_id);
  self->existing_device_id = g_strdup (device_id);
  g_free (self->existing_device_name);
  self->existing_device_name = g_strdup (name);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_EXISTING_DEVICE_NAME]);
}

void
chp_pairing_request_set_state (ChpPairingRequest *self,
                               ChpPairingState    state)
{
  g_return_if_fail (CHP_IS_PAIRING_REQUEST (self));

  if (self->state == state)
    return;

  self->state = state;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
}

/* Called only from the app's own widgets (and the core-only test harness): never from
 * anything reachable over D-Bus, the bridge or an agent. */
void
chp_pairing_request_approve (ChpPairingRequest *self,
                             gboolean           replace_existing)
{
  g_return_if_fail (CHP_IS_PAIRING_REQUEST (self));

  if (self->state != CHP_PAIRING_STATE_WAITING)
    return;

  self->replace = replace_existing && self->existing_device_id != NULL;
  g_signal_emit (self, signals[SIGNAL_DECIDED], 0, TRUE);
}

void
chp_pairing_request_reject (ChpPairingRequest *self)
{
  g_return_if_fail (CHP_IS_PAIRING_REQUEST (self));

  if (self->state != CHP_PAIRING_STATE_WAITING)
    return;

  g_signal_emit (self, signals[SIGNAL_DECIDED], 0, FALSE);
}
