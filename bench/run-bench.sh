#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# run-bench.sh: build and run the core benchmark and the trace store's (bench/trace-bench.c), time the
# real app's start and measure its memory with the window open and closed (bench/app-bench.py), then
# run the extension benchmark (bench/extension-bench.mjs: real Chromium, the real extension and the
# core engine, against Playwright and raw CDP) when Chromium, node and playwright-core are here, and
# the agent-interface benchmark (bench/mcp-bench.mjs: chaperone-mcp beside Playwright MCP and
# Chrome DevTools MCP, installed into bench/peers when missing), and the real-site benchmark
# (bench/realsite-bench.mjs: TiddlyWiki, MailDev and Node-RED from npm, the same tasks through
# Chaperone and both peers).
#
# Usage: bench/run-bench.sh [build-dir] [chaperone-bench options…]
#   build-dir   an existing meson build directory (default: build); set up if it does not exist
#   options     passed on, e.g. --quick, --round-trips=20000 (see chaperone-bench --help);
#               --quick (or -q) is passed to the extension and MCP benchmarks too
#
# The figures are for the machine as it is: close other work first, and compare runs made on
# the same machine only.
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
[ $# -gt 0 ] && shift

# A relative build directory is looked up from here first, then from the source tree.
if [ ! -d "$build" ] && [ -d "$src/$build" ]; then
  build=$src/$build
fi

if [ ! -f "$build/build.ninja" ]; then
  echo "run-bench: setting up $build"
  meson setup "$build" "$src"
fi
ninja -C "$build" bench/chaperone-bench

echo "run-bench: running chaperone-bench (a minute or so)"
"$build/bench/chaperone-bench" "$@"

# --- The trace store: ingest, a step's cost to the caller, a million steps read, the cap --------
# Takes only --quick (100,000 steps instead of 1,000,000) of the options.

trace_args=""
for arg in "$@"; do
  case $arg in
    --quick|-q) trace_args=--quick ;;
  esac
done
ninja -C "$build" bench/chaperone-trace-bench
echo
echo "run-bench: running chaperone-trace-bench (a minute or so; --quick: seconds)"
"$build/bench/chaperone-trace-bench" $trace_args

# The extension benchmark takes only --quick of the options.
ext_args=""
for arg in "$@"; do
  case $arg in
    --quick|-q) ext_args=--quick ;;
  esac
done

# --- The real app: start to listening, idle memory with the window open and closed -------------
# bench/app-bench.py: its own Xvfb and a private session bus per run; skips a sanitizer build.

rss_status=0
app=""
for candidate in "$build/src/ui/chaperone" "$src"/build*/src/ui/chaperone; do
  [ -x "$candidate" ] && { app=$candidate; break; }
done
echo
if [ -z "$app" ]; then
  echo "app bench: skipped: no build*/src/ui/chaperone (configure with -Dui=true and build it)"
elif ! command -v Xvfb >/dev/null 2>&1 || ! command -v dbus-daemon >/dev/null 2>&1; then
  echo "app bench: skipped: Xvfb or dbus-daemon is not installed (Debian: xvfb dbus)"
else
  app_runs=5
  for arg in "$@"; do
    case $arg in --quick|-q) app_runs=2 ;; esac
  done
  python3 "$src/bench/app-bench.py" "$app" --runs "$app_runs" || rss_status=$?
fi

# --- The real app's memory after real work: bench/app-memory-bench.mjs ---------------------------
# 100,000 activity rows, a real Chromium paired through the accessibility tree, an agent reading a
# 10,000-element page and acting; RSS with the window open and closed to the tray.

mem_status=0
echo
if [ -n "$app" ] && command -v xvfb-run >/dev/null 2>&1 && command -v node >/dev/null 2>&1 \
   && [ -x "$build/src/relay/chaperone-mcp" ]; then
  CHAPERONE_APP="$app" CHAPERONE_MCP="$build/src/relay/chaperone-mcp" GSETTINGS_SCHEMA_DIR="$build/data" \
    xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \
    node "$src/bench/app-memory-bench.mjs" --json="$build/bench/app-memory-bench.json" || mem_status=$?
else
  echo "app memory bench: skipped: needs the app, chaperone-mcp, xvfb-run and node"
fi

# --- The Activity page with 100,000 audit rows: first paint and frame times ---------------------

echo
if grep -q "^with_ui\|ui=true" "$build/meson-info/intro-buildoptions.json" 2>/dev/null || [ -f "$build/src/ui/chaperone" ]; then
  if command -v xvfb-run >/dev/null 2>&1; then
    set +e
    ninja -C "$build" bench/chaperone-ui-bench && \
      GSETTINGS_BACKEND=memory xvfb-run -a -s "-screen 0 1280x800x24" "$build/bench/chaperone-ui-bench"
    # The trace browser over 1,000,000 steps: first paint of the sessions and a search.
    ninja -C "$build" bench/chaperone-ui-trace-bench && \
      GSETTINGS_BACKEND=memory xvfb-run -a -s "-screen 0 1280x800x24" "$build/bench/chaperone-ui-trace-bench"
    set -e
  else
    echo "ui bench: skipped: xvfb-run is not installed (Debian: xvfb xauth)"
  fi
else
  echo "ui bench: skipped: $build has no UI (configure with -Dui=true)"
fi

# --- The extension through the real path, against Playwright and CDP ---------------------------

ext_status=0
chromium=${CHAPERONE_CHROMIUM:-/usr/lib/chromium/chromium}
ext_skip=""
if ! command -v node >/dev/null 2>&1; then
  ext_skip="node is not installed (Debian: nodejs)"
elif [ ! -x "$chromium" ]; then
  ext_skip="no Chromium at $chromium (Debian: chromium)"
elif ! (cd "$src" && node -e "require.resolve('playwright-core')") >/dev/null 2>&1; then
  ext_skip="playwright-core is not installed (npm ci)"
fi

echo
if [ -n "$ext_skip" ]; then
  echo "extension bench: skipped: $ext_skip"
  echo "{\"extension_bench\":null,\"skipped\":\"$ext_skip\"}"
else
  ninja -C "$build" tests/chaperone-test-engine
  engine="$build/tests/chaperone-test-engine"
  if grep -q -e __asan_init -e __tsan_init -e __msan_init "$engine"; then
    echo "extension bench: skipped: $engine is built with a sanitizer"
    echo '{"extension_bench":null,"skipped":"the engine harness is built with a sanitizer"}'
  else
    echo "run-bench: running bench/extension-bench.mjs (under a minute)"
    CHAPERONE_TEST_ENGINE="$engine" CHAPERONE_CHROMIUM="$chromium" \
      node "$src/bench/extension-bench.mjs" $ext_args || ext_status=$?
  fi
fi

# --- The agent interface (MCP) beside Playwright MCP and Chrome DevTools MCP -------------------
# bench/mcp-bench.mjs: the same SDK client drives chaperone-mcp (relay → the core engine → the
# extension) and two other browser MCP servers on the same pages. The peers are installed for the
# bench alone, into bench/peers (package.json and lock committed, node_modules not).

mcp_status=0
mcp_skip=""
if ! command -v node >/dev/null 2>&1; then
  mcp_skip="node is not installed (Debian: nodejs)"
elif [ ! -x "$chromium" ]; then
  mcp_skip="no Chromium at $chromium (Debian: chromium)"
elif ! (cd "$src" && node -e "require.resolve('@modelcontextprotocol/sdk/client/index.js')") >/dev/null 2>&1; then
  mcp_skip="@modelcontextprotocol/sdk is not installed (npm ci)"
fi

echo
if [ -n "$mcp_skip" ]; then
  echo "mcp bench: skipped: $mcp_skip"
  echo "{\"mcp_bench\":null,\"skipped\":\"$mcp_skip\"}"
else
  peers="$src/bench/peers"
  if [ ! -d "$peers/node_modules/@playwright/mcp" ] || [ ! -d "$peers/node_modules/chrome-devtools-mcp" ]; then
    if command -v npm >/dev/null 2>&1; then
      echo "run-bench: installing the MCP peers into bench/peers (npm ci)"
      # A peer the registry cannot give is reported by mcp-bench and skipped; the rest still run.
      npm ci --prefix "$peers" --no-audit --no-fund >/dev/null 2>&1 ||
        npm install --prefix "$peers" --no-audit --no-fund ||
        echo "mcp bench: could not install the peers (npm said no; see above); measuring what is here"
    else
      echo "mcp bench: npm is not installed: the peers are skipped"
    fi
  fi
  mcp_args="$ext_args"
  ninja -C "$build" tests/chaperone-test-engine src/relay/chaperone-mcp || true
  engine="$build/tests/chaperone-test-engine"
  if [ -f "$engine" ] && grep -q -e __asan_init -e __tsan_init -e __msan_init "$engine"; then
    echo "mcp bench: Chaperone not measured: $engine is built with a sanitizer (the peers still are)"
    mcp_args="$mcp_args --only=playwright,devtools"
  fi
  echo "run-bench: running bench/mcp-bench.mjs (a few minutes; --quick: about two)"
  CHAPERONE_TEST_ENGINE="$engine" CHAPERONE_MCP="$build/src/relay/chaperone-mcp" CHAPERONE_CHROMIUM="$chromium" \
    node "$src/bench/mcp-bench.mjs" $mcp_args --json="$build/bench/mcp-bench.json" || mcp_status=$?
fi

# --- Real web apps (TiddlyWiki, MailDev, Node-RED from npm): the same tasks, three MCP servers --
# bench/realsite-bench.mjs: success, tool calls, bytes, wall time, approvals per task and server;
# fill and click + settle on each app's page, Chaperone's tab in front and in the background.

real_status=0
echo
if [ -n "$mcp_skip" ]; then
  echo "realsite bench: skipped: $mcp_skip"
elif ! (cd "$src" && node -e "require.resolve('tiddlywiki/package.json'); require.resolve('maildev/package.json'); require.resolve('node-red/package.json')") >/dev/null 2>&1; then
  echo "realsite bench: skipped: the real apps are not installed (npm ci)"
else
  echo "run-bench: running bench/realsite-bench.mjs (several minutes; --quick: a few)"
  CHAPERONE_TEST_ENGINE="$engine" CHAPERONE_MCP="$build/src/relay/chaperone-mcp" CHAPERONE_CHROMIUM="$chromium" \
    node "$src/bench/realsite-bench.mjs" $mcp_args --json="$build/bench/realsite-bench.json" || real_status=$?
fi

# --- The site's own API (issue 17): what capture costs a page load, what a recipe saves ---------
# bench/capture-bench.mjs: loads of a page making 30 calls with no grant, a Read grant, lean and
# deep capture; bench/recipe-bench.mjs: 20 steps as 20 tool calls and as one recipe replay.

site_status=0
echo
if [ -n "$mcp_skip" ]; then
  echo "site API benches: skipped: $mcp_skip"
else
  echo "run-bench: running bench/capture-bench.mjs and bench/recipe-bench.mjs (a few minutes)"
  CHAPERONE_CHROMIUM="$chromium" node "$src/bench/capture-bench.mjs" || site_status=$?
  CHAPERONE_TEST_ENGINE="$engine" CHAPERONE_MCP="$build/src/relay/chaperone-mcp" CHAPERONE_CHROMIUM="$chromium" \
    node "$src/bench/recipe-bench.mjs" || site_status=$?
fi

[ "$rss_status" -ne 0 ] && exit "$rss_status"
[ "$mem_status" -ne 0 ] && exit "$mem_status"
[ "$ext_status" -ne 0 ] && exit "$ext_status"
[ "$mcp_status" -ne 0 ] && exit "$mcp_status"
[ "$site_status" -ne 0 ] && exit "$site_status"
exit "$real_status"
