/* chaperone-mcp.c: placeholder until the relay lands (issue 5). */
#include "config.h"

#include <glib.h>

int
main (int argc, char **argv)
{
  g_printerr ("chaperone-mcp: not built yet\n");
  return 1;
}
