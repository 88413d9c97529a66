/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-site-card.c: the arrival card. A site the person's Chaperone has learned before gets,
 * on an agent's first snapshot of it in a session, a short card from memory: the reads and writes
 * of its own API that worked, the controls seen on two visits, how to tell the page is ready,
 * how sign-in shows, the recipes kept for it by name. It comes from
 * the local store, never from the network, and says only structure: every word in it was learned
 * from pages, so it is inside the untrusted wrapper like the page itself. */
#include "config.h"

#include "chp-mcp-site-card.h"

#include "chp-mcp-format.h"

/* Endpoints and controls worth a line: enough to start, not a catalog (browser_api list is). */
#define CARD_MAX_ENDPOINTS 6
#define CARD_MAX_CONTROLS  6
#define CARD_MAX_RECIPES   6

static void
append_endpoints (GString             *out,
                  const ChpSiteRecord *record,
                  gboolean             reads)
{
  guint shown = 0;

  for (guint i = 0; i < record->endpoints->len && shown < CARD_MAX_ENDPOINTS; i++)
    {
      const ChpSiteEndpoint *e = g_ptr_array_index (record->endpoints, i);
      gboolean read = g_str_equal (e->method, "GET") || g_str_equal (e->method, "HEAD");
      g_autofree char *template = NULL;

      if (read != reads || e->quarantined)
        continue;
      template = chp_mcp_format_line (e->path_template, 120);
      g_string_append_printf (out, "%s%s %s (%s, %.1f)", shown == 0 ? "" : "; ", e->method,
                              template, e->entry_id, e->confidence);
      shown++;
    }
  if (shown == 0)
    g_string_append (out, "none known");
}

/*
 * chp_mcp_site_card_recipes:
 * @max: at most this many
 *
 * Appends the site's remembered recipes, "name (param, …)", separated by "; ".
 *
 * Returns: how many were appended
 */
guint
chp_mcp_site_card_recipes (GString             *out,
                           const ChpSiteRecord *record,
                           guint                max)
{
  guint shown = 0;

  for (guint i = 0; record->recipes != NULL && i < record->recipes->len && shown < max; i++)
    {
      const ChpSiteRecipe *r = g_ptr_array_index (record->recipes, i);
      g_autoptr(JsonNode) params = json_from_string (r->params, NULL);
      JsonArray *list = params != NULL && JSON_NODE_HOLDS_ARRAY (params)
                        ? json_node_get_array (params) : NULL;

      g_string_append_printf (out, "%s%s (", shown == 0 ? "" : "; ", r->name);
      for (guint j = 0; list != NULL && j < json_array_get_length (list); j++)
        {
          JsonNode *p = json_array_get_element (list, j);
          const char *name = JSON_NODE_HOLDS_OBJECT (p)
                             ? json_object_get_string_member_with_default (
                                 json_node_get_object (p), "name", "?") : "?";

          g_string_append_printf (out, "%s%s", j == 0 ? "" : ", ", name);
        }
      g_string_append_printf (out, "%s%d step%s)", list != NULL && json_array_get_length (list) > 0
                                                   ? "; " : "", r->n_steps,
                              r->n_steps == 1 ? "" : "s");
      shown++;
    }
  return shown;
}

/*
 * chp_mcp_site_card_ready:
 *
 * Returns: (transfer full) (nullable): how the site's page shows it is ready, in a few words
 *   (`heading "Inbox"`), or %NULL when that was not learned
 */
char *
chp_mcp_site_card_ready (const ChpSiteRecord *record)
{
  g_autoptr(JsonNode) ready = NULL;
  JsonObject *o;
  const char *heading, *control;
  g_autofree char *h = NULL;
  g_autofree char *c = NULL;

  if (record->info->ready == NULL ||
      (ready = json_from_string (record->info->ready, NULL)) == NULL ||
      !JSON_NODE_HOLDS_OBJECT (ready))
    return NULL;
  o = json_node_get_object (ready);
  heading = json_object_get_string_member_with_default (o, "heading", NULL);
  control = json_object_get_string_member_with_default (o, "control", NULL);
  h = heading != NULL ? chp_mcp_format_line (heading, 80) : NULL;
  c = control != NULL ? chp_mcp_format_line (control, 80) : NULL;
  if (h != NULL && c != NULL)
    return g_strdup_printf ("heading \"%s\" and control \"%s\"", h, c);
  if (h != NULL)
    return g_strdup_printf ("heading \"%s\"", h);
  if (c != NULL)
    return g_strdup_printf ("control \"%s\"", c);
  return NULL;
}

/*
 * chp_mcp_site_card:
 * @record: the site as the store remembers it
 * @marker: the result's untrusted marker
 *
 * Returns: (transfer full) (nullable): the card, or %NULL when the memory holds nothing worth one
 */
char *
chp_mcp_site_card (const ChpSiteRecord *record,
                   const char          *marker)
{
  g_autoptr(GString) body = g_string_new (NULL);
  g_autoptr(GString) out = g_string_new (NULL);
  g_autofree char *ready = NULL;
  guint controls = 0;
  guint recipes = record != NULL && record->recipes != NULL ? record->recipes->len : 0;

  g_return_val_if_fail (record != NULL && record->info != NULL, NULL);

  ready = chp_mcp_site_card_ready (record);
  if (record->endpoints->len == 0 && record->info->n_controls == 0 && recipes == 0 &&
      ready == NULL)
    return NULL;

  g_string_append (body, "API reads: ");
  append_endpoints (body, record, TRUE);
  g_string_append (body, "\nAPI writes (held or planned like clicks): ");
  append_endpoints (body, record, FALSE);
  /* Before the controls: the card is cut at its bound, and a recipe saves the most. */
  if (recipes > 0)
    {
      g_string_append (body, "\nRecipes: ");
      chp_mcp_site_card_recipes (body, record, CARD_MAX_RECIPES);
    }
  if (ready != NULL)
    g_string_append_printf (body, "\nReady when it shows: %s", ready);
  for (guint i = 0; i < record->controls->len && controls < CARD_MAX_CONTROLS; i++)
    {
      const ChpSiteControl *c = g_ptr_array_index (record->controls, i);
      g_autofree char *label = NULL;

      /* Headings are how the page shows it is ready (above), not controls to use. */
      if (c->label == NULL || g_str_equal (c->role, "heading"))
        continue;
      label = chp_mcp_format_line (c->label, 60);
      g_string_append_printf (body, "%s%s \"%s\"", controls == 0 ? "\nControls seen before: " : ", ",
                              c->role, label);
      controls++;
    }
  if (record->info->signin != NULL)
    g_string_append_printf (body, "\nSign-in shows as: %s", record->info->signin);

  if (body->len > CHP_MCP_SITE_CARD_MAX_CHARS)
    g_string_truncate (body, g_utf8_find_prev_char (body->str, body->str +
                                                    CHP_MCP_SITE_CARD_MAX_CHARS) - body->str);

  g_string_append_printf (out, "Chaperone remembers this site from %d earlier visit(s): "
                          "browser_api route {hint} reads through its own API, faster than the "
                          "page; entries with their confidence.%s\n", record->info->visits,
                          recipes > 0 ? " browser_batch {tab, recipe, params} replays a recipe "
                          "in one call." : "");
  chp_mcp_format_add_untrusted (out, marker, record->info->origin, body->str);
  return g_string_free (g_steal_pointer (&out), FALSE);
}
