/* chp-url-floor.c: placeholder (issue 6). */
#include "config.h"

#include "chp-url-floor.h"
