/* chp-redact.h: placeholder (issue 6). */
#pragma once

#include <glib.h>
