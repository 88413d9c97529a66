/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-site-card.c: the arrival card. A site the person's Chaperone has learned before gets,
 * on an agent's first snapshot of it in a session, a short card from memory: the reads and writes
 * of its own API that worked, the controls seen on two visits, how sign-in shows. It comes from
 * the local store, never from the network, and says only structure: every word in it was learned
 * from pages, so it is inside the untrusted wrapper like the page itself. */
#include "config.h"

#include "chp-mcp-site-card.h"

#include "chp-mcp-format.h"

/* Endpoints and controls worth a line: enough to start, not a catalog (browser_api list is). */
#define CARD_MAX_ENDPOINTS 6
#define CARD_MAX_CONTROLS  6

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
  guint controls = 0;

  g_return_val_if_fail (record != NULL && record->info != NULL, NULL);

  if (record->endpoints->len == 0 && record->info->n_controls == 0)
    return NULL;

  g_string_append (body, "API reads: ");
  append_endpoints (body, record, TRUE);
  g_string_append (body, "\nAPI writes (held or planned like clicks): ");
  append_endpoints (body, record, FALSE);
  for (guint i = 0; i < record->controls->len && controls < CARD_MAX_CONTROLS; i++)
    {
      const ChpSiteControl *c = g_ptr_array_index (record->controls, i);
      g_autofree char *label = NULL;

      if (c->label == NULL)
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
                          "page; entries with their confidence.\n", record->info->visits);
  chp_mcp_format_add_untrusted (out, marker, record->info->origin, body->str);
  return g_string_free (g_steal_pointer (&out), FALSE);
}
