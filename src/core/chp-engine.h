/* chp-engine.h: the core assembled: identity, store, devices, pairing and bridge, started in
 * order. The app and the test harness both start exactly this. */
#pragma once

#include <gio/gio.h>

#include "chp-bridge.h"
#include "chp-device-list.h"
#include "chp-identity.h"
#include "chp-pairing-manager.h"
#include "chp-store.h"

G_BEGIN_DECLS

#define CHP_TYPE_ENGINE (chp_engine_get_type ())

G_DECLARE_FINAL_TYPE (ChpEngine, chp_engine, CHP, ENGINE, GObject)

char              *chp_engine_default_data_dir (void);

ChpEngine         *chp_engine_new              (const char          *data_dir);
const char        *chp_engine_get_data_dir     (ChpEngine           *self);
void               chp_engine_start_async      (ChpEngine           *self,
                                                guint                port,
                                                GCancellable        *cancellable,
                                                GAsyncReadyCallback  callback,
                                                gpointer             user_data);
gboolean           chp_engine_start_finish     (ChpEngine           *self,
                                                GAsyncResult        *result,
                                                GError             **error);

ChpIdentity       *chp_engine_get_identity     (ChpEngine           *self);
ChpStore          *chp_engine_get_store        (ChpEngine           *self);
ChpDeviceList     *chp_engine_get_devices      (ChpEngine           *self);
ChpPairingManager *chp_engine_get_pairing      (ChpEngine           *self);
ChpBridge         *chp_engine_get_bridge       (ChpEngine           *self);

G_END_DECLS
