/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-url-floor.h: the URL floor (DESIGN §8): which pages an agent may never see (blind), may
 * read but not act in (hands-only), or may use within its grant (ok). Pure: no I/O, no GTK. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Ordered: a higher level always wins when several rules match. */
typedef enum {
  CHP_FLOOR_OK,
  CHP_FLOOR_HANDS_ONLY,
  CHP_FLOOR_BLIND,
} ChpFloorLevel;

/* URLs longer than this are refused whole ("malformed"): no page an agent needs has one, and it
 * keeps every check bounded. */
#define CHP_URL_FLOOR_MAX_URL 65536

#define CHP_TYPE_URL_FLOOR (chp_url_floor_get_type ())

G_DECLARE_FINAL_TYPE (ChpUrlFloor, chp_url_floor, CHP, URL_FLOOR, GObject)

ChpUrlFloor   *chp_url_floor_new                (void);
guint          chp_url_floor_set_person_rules   (ChpUrlFloor        *self,
                                                 const char * const *blind,
                                                 const char * const *hands_only);
void           chp_url_floor_set_bridge_port    (ChpUrlFloor        *self,
                                                 guint16             port);
guint16        chp_url_floor_get_bridge_port    (ChpUrlFloor        *self);
ChpFloorLevel  chp_url_floor_check              (ChpUrlFloor        *self,
                                                 const char         *url,
                                                 const char        **reason_out);
ChpFloorLevel  chp_url_floor_check_page         (ChpUrlFloor        *self,
                                                 const char         *url,
                                                 gboolean            visible_password,
                                                 const char        **reason_out);

JsonNode      *chp_url_floor_person_rules_to_json (ChpUrlFloor    *self);

char          *chp_url_floor_normalize_pattern  (const char         *pattern);
const char    *chp_floor_level_to_string        (ChpFloorLevel       level);

G_END_DECLS
