/* chp-url-floor.h: placeholder (issue 6). */
#pragma once

#include <glib.h>
