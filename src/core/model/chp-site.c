/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-site.c: one row of the Sites list. Its origin is fixed; the rest follows the store at
 * each reload of the list, each change notified on its own so a row redraws only what moved. */
#include "config.h"

#include "chp-site.h"

struct _ChpSite
{
  GObject parent_instance;

  char *origin;
  gint visits;
  gint64 last_used;
  double confidence;
  guint n_endpoints;
  guint n_quarantined;
  guint n_recipes;
  gint64 forgotten_at;
};

enum {
  PROP_0,
  PROP_ORIGIN,
  PROP_VISITS,
  PROP_LAST_USED,
  PROP_CONFIDENCE,
  PROP_N_ENDPOINTS,
  PROP_N_QUARANTINED,
  PROP_N_RECIPES,
  PROP_FORGOTTEN,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (ChpSite, chp_site, G_TYPE_OBJECT)

static void
chp_site_finalize (GObject *object)
{
  g_free (CHP_SITE (object)->origin);

  G_OBJECT_CLASS (chp_site_parent_class)->finalize (object);
}

static void
chp_site_get_property (GObject    *object,
                       guint       prop_id,
                       GValue     *value,
                       GParamSpec *pspec)
{
  ChpSite *self = CHP_SITE (object);

  switch (prop_id)
    {
    case PROP_ORIGIN:
      g_value_set_string (value, self->origin);
      break;

    case PROP_VISITS:
      g_value_set_int (value, self->visits);
      break;

    case PROP_LAST_USED:
      g_value_set_int64 (value, self->last_used);
      break;

    case PROP_CONFIDENCE:
      g_value_set_double (value, self->confidence);
      break;

    case PROP_N_ENDPOINTS:
      g_value_set_uint (value, self->n_endpoints);
      break;

    case PROP_N_QUARANTINED:
      g_value_set_uint (value, self->n_quarantined);
      break;

    case PROP_N_RECIPES:
      g_value_set_uint (value, self->n_recipes);
      break;

    case PROP_FORGOTTEN:
      g_value_set_boolean (value, self->forgotten_at > 0);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_site_class_init (ChpSiteClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = chp_site_finalize;
  object_class->get_property = chp_site_get_property;

  properties[PROP_ORIGIN] = g_param_spec_string ("origin", NULL, NULL, NULL, flags);
  properties[PROP_VISITS] = g_param_spec_int ("visits", NULL, NULL, 0, G_MAXINT, 0, flags);
  properties[PROP_LAST_USED] =
    g_param_spec_int64 ("last-used", NULL, NULL, 0, G_MAXINT64, 0, flags);
  properties[PROP_CONFIDENCE] =
    g_param_spec_double ("confidence", NULL, NULL, 0.0, 1.0, 0.0, flags);
  properties[PROP_N_ENDPOINTS] =
    g_param_spec_uint ("n-endpoints", NULL, NULL, 0, G_MAXUINT, 0, flags);
  properties[PROP_N_QUARANTINED] =
    g_param_spec_uint ("n-quarantined", NULL, NULL, 0, G_MAXUINT, 0, flags);
  properties[PROP_N_RECIPES] =
    g_param_spec_uint ("n-recipes", NULL, NULL, 0, G_MAXUINT, 0, flags);
  properties[PROP_FORGOTTEN] = g_param_spec_boolean ("forgotten", NULL, NULL, FALSE, flags);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
chp_site_init (ChpSite *self)
{
}

/* Returns: (transfer full): the site @info describes */
ChpSite *
chp_site_new (const ChpSiteInfo *info)
{
  ChpSite *self;

  g_return_val_if_fail (info != NULL && info->origin != NULL, NULL);

  self = g_object_new (CHP_TYPE_SITE, NULL);
  self->origin = g_strdup (info->origin);
  chp_site_update (self, info);

  return self;
}

#define SET(field, prop) \
  G_STMT_START { \
    if (self->field != info->field) \
      { \
        self->field = info->field; \
        g_object_notify_by_pspec (G_OBJECT (self), properties[prop]); \
      } \
  } G_STMT_END

/* Takes @info's numbers (its origin must be this site's), notifying each that changed. */
void
chp_site_update (ChpSite           *self,
                 const ChpSiteInfo *info)
{
  gboolean was_forgotten;

  g_return_if_fail (CHP_IS_SITE (self));
  g_return_if_fail (info != NULL && g_strcmp0 (info->origin, self->origin) == 0);

  was_forgotten = self->forgotten_at > 0;
  g_object_freeze_notify (G_OBJECT (self));
  SET (visits, PROP_VISITS);
  SET (last_used, PROP_LAST_USED);
  SET (confidence, PROP_CONFIDENCE);
  SET (n_endpoints, PROP_N_ENDPOINTS);
  SET (n_quarantined, PROP_N_QUARANTINED);
  SET (n_recipes, PROP_N_RECIPES);
  self->forgotten_at = info->forgotten_at;
  if (was_forgotten != (self->forgotten_at > 0))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FORGOTTEN]);
  g_object_thaw_notify (G_OBJECT (self));
}

#undef SET

#define GETTER(type, name, expr) \
  type chp_site_get_##name (ChpSite *self) \
  { \
    g_return_val_if_fail (CHP_IS_SITE (self), (type) 0); \
    return expr; \
  }

GETTER (const char *, origin, self->origin)
GETTER (gint, visits, self->visits)
GETTER (gint64, last_used, self->last_used)
GETTER (double, confidence, self->confidence)
GETTER (guint, n_endpoints, self->n_endpoints)
GETTER (guint, n_quarantined, self->n_quarantined)
GETTER (guint, n_recipes, self->n_recipes)
GETTER (gboolean, forgotten, self->forgotten_at > 0)
GETTER (gint64, forgotten_at, self->forgotten_at)

#undef GETTER
