/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-site-allowlist.h: what the site memory may keep (issue 17): the shape of a site update,
 * field by field (recipes included: their structure, never a typed value), and nothing shaped
 * like a credential, a code, a key or the person's data.
 * It fails closed: anything it does not know refuses the whole update. Pure: no I/O, no GTK. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define CHP_SITE_ALLOWLIST_ERROR (chp_site_allowlist_error_quark ())

typedef enum
{
  CHP_SITE_ALLOWLIST_ERROR_REFUSED,
} ChpSiteAllowlistError;

/* The bounds of an update (the vectors in tests/vectors/site-allowlist.json hold them too). */
#define CHP_SITE_MAX_ORIGIN         200
#define CHP_SITE_MAX_UPDATE_ENDPOINTS 64
#define CHP_SITE_MAX_PATH           256
#define CHP_SITE_MAX_QUERY_KEYS     32
#define CHP_SITE_MAX_NAME           64
#define CHP_SITE_MAX_BODY_KEYS      64
#define CHP_SITE_MAX_CONTENT_TYPE   100
#define CHP_SITE_MAX_SHAPE_DEPTH    3
#define CHP_SITE_MAX_SHAPE_KEYS     64    /* per object of a shape */
#define CHP_SITE_MAX_SHAPE_TOTAL    512   /* in the whole shape */
#define CHP_SITE_MAX_FRAME          300
#define CHP_SITE_MAX_UPDATE_CONTROLS 200
#define CHP_SITE_MAX_ROLE           32
#define CHP_SITE_MAX_LABEL          120
#define CHP_SITE_MAX_SIGNALS        8
#define CHP_SITE_MAX_SIGNAL         32
#define CHP_SITE_MAX_UPDATE_RECIPES 4
#define CHP_SITE_MAX_RECIPE_STEPS   50
#define CHP_SITE_MAX_RECIPE_PARAMS  32
#define CHP_SITE_MAX_RECIPE_TEXT    200   /* a target's name, a wait's text */
#define CHP_SITE_MAX_WAIT_MS        10000

GQuark   chp_site_allowlist_error_quark       (void);

gboolean chp_site_allowlist_check             (JsonObject  *update,
                                               char       **bad_field,
                                               GError     **error);
gboolean chp_site_allowlist_label_is_personal (const char  *label);

G_END_DECLS
