/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-site-types.h: the site memory's plain records (issue 17), as the store gives them: how a
 * site works — its endpoints' shapes and the controls a person saw twice — never a value typed
 * or read on it. They cross from the database thread to the main thread whole. */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/* A forgotten site can be restored this long (DESIGN §9); then it is deleted for good. */
#define CHP_SITE_RESTORE_MS ((gint64) 24 * 3600 * 1000)

/* One endpoint a page called, by shape. @entry_id is chp_site_entry_id() of its origin, method
 * and path template. */
typedef struct
{
  char    *entry_id;
  char    *origin;
  char    *method;
  char    *path_template;
  char    *query_keys;      /* JSON array of names */
  char    *body_shape;      /* JSON {kind, keys, operation?} or NULL */
  char    *response_shape;  /* JSON {contentType, shape} or NULL */
  char    *credential;      /* "cookie", "bearer", "none" or "header:<Name>" */
  char    *frame;           /* the calling frame's origin and path */
  gint     sample_status;
  double   confidence;      /* 0..1; new endpoints start at 0.5 */
  gint     successes;
  gint     misses;          /* consecutive */
  gboolean quarantined;     /* two misses in a row; lifted by a success */
  gint64   learned_at;      /* ms since the epoch */
  gint64   last_used;       /* 0 until used */
} ChpSiteEndpoint;

#define CHP_TYPE_SITE_ENDPOINT (chp_site_endpoint_get_type ())
GType            chp_site_endpoint_get_type (void);
ChpSiteEndpoint *chp_site_endpoint_copy     (const ChpSiteEndpoint *endpoint);
void             chp_site_endpoint_free     (ChpSiteEndpoint       *endpoint);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpSiteEndpoint, chp_site_endpoint_free)

/* A control seen on the site. Its label (and key) are kept only once it was seen on two
 * distinct visits; before that the store keeps a salted hash and reports @label %NULL. */
typedef struct
{
  char   *origin;
  char   *role;
  char   *label;   /* NULL until two visits */
  char   *key;     /* NULL until two visits, or when it has none */
  gint    visits;
  gint64  first_seen;
  gint64  last_seen;
} ChpSiteControl;

#define CHP_TYPE_SITE_CONTROL (chp_site_control_get_type ())
GType           chp_site_control_get_type (void);
ChpSiteControl *chp_site_control_copy     (const ChpSiteControl *control);
void            chp_site_control_free     (ChpSiteControl       *control);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpSiteControl, chp_site_control_free)

/* A recipe kept for the site: a batch whose steps all succeeded, its steps as the agent gave
 * them with {{placeholders}} (never a typed value) and its params by name and type, both JSON in
 * the allowlist's form (chp-site-allowlist.h). Saving again under the same name replaces it. */
typedef struct
{
  char   *origin;
  char   *name;
  char   *params;     /* JSON [{name, type}] */
  char   *steps;      /* JSON [step, …] */
  gint    n_steps;
  gint64  saved_at;   /* ms since the epoch */
  gint64  last_used;  /* 0 until replayed */
} ChpSiteRecipe;

#define CHP_TYPE_SITE_RECIPE (chp_site_recipe_get_type ())
GType          chp_site_recipe_get_type (void);
ChpSiteRecipe *chp_site_recipe_copy     (const ChpSiteRecipe *recipe);
void           chp_site_recipe_free     (ChpSiteRecipe       *recipe);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpSiteRecipe, chp_site_recipe_free)

/* A site at a glance: what the person's Sites list shows. */
typedef struct
{
  char    *origin;
  gint64   created_at;
  gint64   last_visit;
  gint64   last_used;     /* last learned or used */
  gint     visits;
  char    *ready;         /* JSON {heading?, control?} or NULL */
  char    *signin;        /* JSON {path, signals} or NULL */
  gint64   forgotten_at;  /* 0 unless the person forgot it (restorable for a day) */
  guint    n_endpoints;
  guint    n_controls;    /* controls known by their label (seen on two visits) */
  guint    n_quarantined;
  guint    n_recipes;
  double   confidence;    /* mean of the endpoints', 0 when none */
} ChpSiteInfo;

#define CHP_TYPE_SITE_INFO (chp_site_info_get_type ())
GType        chp_site_info_get_type (void);
ChpSiteInfo *chp_site_info_copy     (const ChpSiteInfo *info);
void         chp_site_info_free     (ChpSiteInfo       *info);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpSiteInfo, chp_site_info_free)

/* A site with its endpoints (ChpSiteEndpoint, by path then method), its controls
 * (ChpSiteControl, by role then label; unlabelled ones too, with @label %NULL) and its recipes
 * (ChpSiteRecipe, by name). */
typedef struct
{
  ChpSiteInfo *info;
  GPtrArray   *endpoints;
  GPtrArray   *controls;
  GPtrArray   *recipes;
} ChpSiteRecord;

#define CHP_TYPE_SITE_RECORD (chp_site_record_get_type ())
GType          chp_site_record_get_type (void);
ChpSiteRecord *chp_site_record_new      (void);
ChpSiteRecord *chp_site_record_copy     (const ChpSiteRecord *record);
void           chp_site_record_free     (ChpSiteRecord       *record);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpSiteRecord, chp_site_record_free)

char          *chp_site_entry_id        (const char *origin,
                                         const char *method,
                                         const char *path_template);

G_END_DECLS
