/* chp-redact.c: placeholder (issue 6). */
#include "config.h"

#include "chp-redact.h"
