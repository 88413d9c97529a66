/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-tray-harness.h: a desktop's tray host played over a private session bus: a stub
 * StatusNotifierWatcher, calls to the item and its menu, and the signals it heard. */
#pragma once

#include <gio/gio.h>

#include "chp-test-client.h"
#include "chp-tray.h"

G_BEGIN_DECLS

#define APP "io.github.chaperone.Chaperone"
#define WATCHER_NAME "org.kde.StatusNotifierWatcher"
#define ITEM_IFACE "org.kde.StatusNotifierItem"
#define MENU_IFACE "com.canonical.dbusmenu"

typedef struct
{
  GDBusConnection *connection;
  guint object_id;
  guint owner_id;
  gboolean owned;
  GPtrArray *senders;   /* who called RegisterStatusNotifierItem */
  GPtrArray *services;  /* and what they passed */
} StubWatcher;

typedef struct
{
  GTestDBus *bus;
  GDBusConnection *tray_bus;
  GDBusConnection *host_bus;
  StubWatcher *watcher;
  ChpTray *tray;
  char *icon_dir;

  guint n_open;
  guint n_needs_you;
  guint n_stop_all;
  guint n_quit;
  guint n_any_signal;
  guint n_registered_notifies;

  GPtrArray *host_signals;  /* "Member arg" of what the host heard */
} Fixture;

typedef struct
{
  int id;
  char *label;  /* "---" for a separator */
} MenuEntry;

void bus_round_trip (GDBusConnection *connection);

StubWatcher *watcher_start (GTestDBus *bus);

void watcher_stop (StubWatcher *watcher);

extern GTestDBus *test_bus;

gboolean any_signal_hook (GSignalInvocationHint *hint,
                          guint                  n_param_values,
                          const GValue          *param_values,
                          gpointer               user_data);

void make_tray (Fixture *f);

void fixture_set_up (Fixture       *f,
                     gconstpointer  data);

void fixture_tear_down (Fixture       *f,
                        gconstpointer  data);

GVariant *host_call (Fixture             *f,
                     const char          *path,
                     const char          *iface,
                     const char          *method,
                     GVariant            *parameters,
                     const GVariantType  *reply_type,
                     GError             **error);

GVariant *get_item_property (Fixture    *f,
                             const char *name);

char *get_item_string (Fixture    *f,
                       const char *name);

char *menu_path (Fixture *f);

GArray *get_menu (Fixture *f,
                  guint   *revision);

char *menu_labels (GArray *entries);

int menu_id (GArray     *entries,
             const char *label);

gboolean send_event (Fixture    *f,
                     int         id,
                     const char *event_id);

guint subscribe_host (Fixture *f);

gboolean host_heard (Fixture    *f,
                     const char *prefix);

G_END_DECLS
