/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-audit-item.c: a holder that a list view can bind before its row is read. */
#include "config.h"

#include "chp-audit-item.h"

struct _ChpAuditItem
{
  GObject parent_instance;

  ChpAuditEntry *entry;
};

enum {
  PROP_0,
  PROP_LOADED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (ChpAuditItem, chp_audit_item, G_TYPE_OBJECT)

static void
chp_audit_item_finalize (GObject *object)
{
  g_clear_pointer (&CHP_AUDIT_ITEM (object)->entry, chp_audit_entry_free);

  G_OBJECT_CLASS (chp_audit_item_parent_class)->finalize (object);
}

static void
chp_audit_item_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_LOADED:
      g_value_set_boolean (value, CHP_AUDIT_ITEM (object)->entry != NULL);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_audit_item_class_init (ChpAuditItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = chp_audit_item_finalize;
  object_class->get_property = chp_audit_item_get_property;

  properties[PROP_LOADED] =
    g_param_spec_boolean ("loaded", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
chp_audit_item_init (ChpAuditItem *self)
{
}

ChpAuditItem *
chp_audit_item_new (void)
{
  return g_object_new (CHP_TYPE_AUDIT_ITEM, NULL);
}

gboolean
chp_audit_item_get_loaded (ChpAuditItem *self)
{
  g_return_val_if_fail (CHP_IS_AUDIT_ITEM (self), FALSE);

  return self->entry != NULL;
}

/* Returns: (nullable): the row, or %NULL while it is being read */
const ChpAuditEntry *
chp_audit_item_get_entry (ChpAuditItem *self)
{
  g_return_val_if_fail (CHP_IS_AUDIT_ITEM (self), NULL);

  return self->entry;
}

void
chp_audit_item_set_entry (ChpAuditItem        *self,
                          const ChpAuditEntry *entry)
{
  g_return_if_fail (CHP_IS_AUDIT_ITEM (self));
  g_return_if_fail (entry != NULL);

  g_clear_pointer (&self->entry, chp_audit_entry_free);
  self->entry = chp_audit_entry_copy (entry);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOADED]);
}
