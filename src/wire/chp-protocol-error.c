/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-protocol-error.c: protocol error codes <-> strings, from the one table in chp-error-codes.h. */
#include "config.h"

#include "chp-protocol-error.h"

#include <gio/gio.h>

G_DEFINE_QUARK (chp-protocol-error-quark, chp_protocol_error)
G_DEFINE_QUARK (chp-local-error-quark, chp_local_error)

static const char * const codes[] = {
#define CHP_ERROR_CODE(name, str) str,
#include "chp-error-codes.h"
#undef CHP_ERROR_CODE
};

G_STATIC_ASSERT (G_N_ELEMENTS (codes) == CHP_PROTOCOL_ERROR_N_CODES);

const char *
chp_protocol_error_to_string (ChpProtocolError code)
{
  g_return_val_if_fail (code < CHP_PROTOCOL_ERROR_N_CODES, "internal");

  return codes[code];
}

gboolean
chp_protocol_error_from_string (const char       *str,
                                ChpProtocolError *code)
{
  g_return_val_if_fail (code != NULL, FALSE);

  if (str == NULL)
    return FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (codes); i++)
    {
      if (g_str_equal (codes[i], str))
        {
          *code = i;
          return TRUE;
        }
    }

  return FALSE;
}

/* Any error that reaches the wire gets a code: errors of other domains are internal. */
const char *
chp_protocol_error_code_of (const GError *error)
{
  if (error == NULL)
    return NULL;

  if ((error->domain == CHP_PROTOCOL_ERROR || error->domain == CHP_LOCAL_ERROR) &&
      (guint) error->code < CHP_PROTOCOL_ERROR_N_CODES)
    return codes[error->code];

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return "cancelled";

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
    return "timeout";

  return "internal";
}
