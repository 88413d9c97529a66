/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-safety-settings.h: what the person set that decides how much agents may see — their URL
 * floor entries and the longest result — kept in the 0600 store, not in GSettings. */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/* Keys of the store's state table */
#define CHP_STATE_FLOOR_BLIND      "floor-blind"
#define CHP_STATE_FLOOR_HANDS_ONLY "floor-hands-only"
#define CHP_STATE_RESULT_MAX_CHARS "agent-result-max-chars"
#define CHP_STATE_STOPPED          "stopped"

/* As chp-mcp-tools.h's CHP_MCP_RESULT_MAX_CHARS_DEFAULT, which tests hold equal. */
#define CHP_SAFETY_RESULT_MAX_CHARS_DEFAULT 8000
#define CHP_SAFETY_RESULT_MAX_CHARS_MIN 1000
#define CHP_SAFETY_RESULT_MAX_CHARS_MAX 100000

#define CHP_TYPE_SAFETY_SETTINGS (chp_safety_settings_get_type ())

G_DECLARE_FINAL_TYPE (ChpSafetySettings, chp_safety_settings, CHP, SAFETY_SETTINGS, GObject)

ChpSafetySettings  *chp_safety_settings_new                 (void);
const char * const *chp_safety_settings_get_floor_blind      (ChpSafetySettings  *self);
const char * const *chp_safety_settings_get_floor_hands_only (ChpSafetySettings  *self);
void                chp_safety_settings_set_floor            (ChpSafetySettings  *self,
                                                              const char * const *blind,
                                                              const char * const *hands_only);
void                chp_safety_settings_add_floor_entry      (ChpSafetySettings  *self,
                                                              const char         *key,
                                                              const char         *pattern);
void                chp_safety_settings_remove_floor_entry   (ChpSafetySettings  *self,
                                                              const char         *key,
                                                              const char         *pattern);
guint               chp_safety_settings_get_result_max_chars (ChpSafetySettings  *self);
void                chp_safety_settings_set_result_max_chars (ChpSafetySettings  *self,
                                                              guint               max_chars);
gboolean            chp_safety_settings_get_stored           (ChpSafetySettings  *self);
void                chp_safety_settings_load_state           (ChpSafetySettings  *self,
                                                              GHashTable         *state);
char               *chp_safety_settings_to_state             (ChpSafetySettings  *self,
                                                              const char         *key);

G_END_DECLS
