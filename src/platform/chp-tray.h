/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tray.h: Chaperone's tray icon, a StatusNotifierItem with a com.canonical.dbusmenu menu,
 * served over GDBus; without a tray host on the desktop it waits quietly for one. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum
{
  CHP_TRAY_STATE_IDLE,
  CHP_TRAY_STATE_WORKING,
  CHP_TRAY_STATE_NEEDS_YOU,
  CHP_TRAY_STATE_STOPPED,
} ChpTrayState;

#define CHP_TYPE_TRAY_STATE (chp_tray_state_get_type ())
GType chp_tray_state_get_type (void) G_GNUC_CONST;

#define CHP_TYPE_TRAY (chp_tray_get_type ())

G_DECLARE_FINAL_TYPE (ChpTray, chp_tray, CHP, TRAY, GObject)

ChpTray      *chp_tray_new              (GDBusConnection *bus,
                                         const char      *app_id,
                                         const char      *icon_theme_path);
void          chp_tray_set_state        (ChpTray         *self,
                                         ChpTrayState     state);
ChpTrayState  chp_tray_get_state        (ChpTray         *self);
void          chp_tray_set_needs_count  (ChpTray         *self,
                                         guint            count);
guint         chp_tray_get_needs_count  (ChpTray         *self);
gboolean      chp_tray_is_registered    (ChpTray         *self);

G_END_DECLS
