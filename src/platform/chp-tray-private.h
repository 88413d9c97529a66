/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tray-private.h: shared by the parts of ChpTray (chp-tray.c, the item and its registration
 * with the watcher; chp-tray-menu.c, its com.canonical.dbusmenu menu). */
#pragma once

#include "chp-tray.h"

G_BEGIN_DECLS

#define MENU_PATH "/MenuBar"

struct _ChpTray
{
  GObject parent_instance;

  GDBusConnection *bus;   /* NULL: no session bus; the tray then never shows */
  char *app_id;
  char *icon_theme_path;  /* NULL: the icons are installed in the theme */

  ChpTrayState state;
  guint needs_count;

  guint item_registration_id;
  guint menu_registration_id;
  guint watch_id;
  GCancellable *register_cancellable;
  gboolean registered;
  guint32 layout_revision;
};

/* Deliberately no "resume": see the top of chp-tray-menu.c. */
enum {
  SIGNAL_OPEN,
  SIGNAL_SHOW_NEEDS_YOU,
  SIGNAL_STOP_ALL,
  SIGNAL_QUIT,
  N_SIGNALS
};

/* chp-tray.c */
void     chp_tray_emit                    (ChpTray     *self,
                                           int          sig);
void     chp_tray_emit_dbus_signal        (ChpTray     *self,
                                           const char  *path,
                                           const char  *interface,
                                           const char  *name,
                                           GVariant    *parameters);

/* chp-tray-menu.c */
guint    chp_tray_menu_register           (ChpTray     *self,
                                           GError     **error);
void     chp_tray_menu_update_layout      (ChpTray     *self);
void     chp_tray_menu_update_needs_count (ChpTray     *self);

G_END_DECLS
