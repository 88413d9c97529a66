#!/bin/sh
# run-bench.sh: build and run the core benchmark, measure the real app's memory after start, then
# run the extension benchmark (bench/extension-bench.mjs: real Chromium, the real extension and the
# core engine, against Playwright and raw CDP) when Chromium, node and playwright-core are here, and
# the agent-interface benchmark (bench/mcp-bench.mjs: chaperone-mcp beside Playwright MCP and
# Chrome DevTools MCP, installed into bench/peers when missing).
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

# The extension benchmark takes only --quick of the options.
ext_args=""
for arg in "$@"; do
  case $arg in
    --quick|-q) ext_args=--quick ;;
  esac
done

# --- The real app's RSS after start --------------------------------------------------------
# In a subshell: its exits and its clean-up (which stops the app) end only this part.

measure_app_rss () (
set -eu
app=""
for candidate in "$build/src/ui/chaperone" "$src"/build*/src/ui/chaperone; do
  [ -x "$candidate" ] || continue
  # A sanitizer build's memory says nothing about the app's.
  if grep -q -e __asan_init -e __tsan_init -e __msan_init "$candidate"; then
    echo "run-bench: not measuring $candidate: built with a sanitizer"
    continue
  fi
  app=$candidate
  break
done

if [ -z "$app" ]; then
  echo
  echo "app RSS: skipped: no build*/src/ui/chaperone (configure with -Dui=true and build it)"
  echo '{"app_rss_kib":null,"skipped":"no build*/src/ui/chaperone"}'
  exit 0
fi
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo
  echo "app RSS: skipped: xvfb-run is not installed (Debian: xvfb xauth)"
  echo '{"app_rss_kib":null,"skipped":"no xvfb-run"}'
  exit 0
fi

app_build=$(cd "$(dirname "$app")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/chp-bench-app-XXXXXX")
group=""
pid=""

cleanup () {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -9 "$pid" 2>/dev/null || true
  fi
  # xvfb-run stops its Xvfb when the app exits; give it a moment, then end the process group
  # this script started with setsid, by its id, in case something is left.
  if [ -n "$group" ]; then
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 "$group" 2>/dev/null || break
      sleep 0.2
    done
    kill -- "-$group" 2>/dev/null || true
    wait "$group" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# The app refuses a data directory other users can read; the runtime directory must be 0700 too.
mkdir -m 700 "$tmp/data" "$tmp/run"
mkdir -p "$tmp/config" "$tmp/cache" "$tmp/share"

# The app's own pid, not xvfb-run's: the wrapper writes $$ and then execs the app.
setsid env \
  GSETTINGS_SCHEMA_DIR="$app_build/data" \
  GSETTINGS_BACKEND=memory \
  GDK_BACKEND=x11 \
  NO_AT_BRIDGE=1 \
  XDG_CONFIG_HOME="$tmp/config" \
  XDG_CACHE_HOME="$tmp/cache" \
  XDG_DATA_HOME="$tmp/share" \
  XDG_RUNTIME_DIR="$tmp/run" \
  xvfb-run -a -s "-screen 0 1280x800x24" \
  sh -c 'echo $$ > "$1"; exec "$2" --bridge-port 0 --data-dir "$3"' \
  sh "$tmp/pid" "$app" "$tmp/data" >"$tmp/log" 2>&1 &
group=$!

ready=""
for _ in $(seq 1 300); do
  [ -z "$pid" ] && [ -s "$tmp/pid" ] && pid=$(cat "$tmp/pid")
  if grep -q "bridge: listening on 127.0.0.1:" "$tmp/log" 2>/dev/null; then
    ready=yes
    break
  fi
  kill -0 "$group" 2>/dev/null || break
  sleep 0.1
done

echo
if [ -z "$ready" ] || [ -z "$pid" ]; then
  echo "app RSS: failed: the app did not log 'bridge: listening on 127.0.0.1:' within 30 s"
  echo "--- its output:"
  tail -n 20 "$tmp/log"
  echo '{"app_rss_kib":null,"skipped":"the app did not start"}'
  exit 1
fi

# Let the first frame and the idle work after start settle.
sleep 1
rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
echo "app RSS 1 s after 'bridge: listening' ($app): $rss KiB (peak $hwm KiB)"
echo "{\"app_rss_kib\":$rss,\"app_peak_rss_kib\":$hwm}"
)

set +e
measure_app_rss
rss_status=$?
set -e

# --- The Activity page with 100,000 audit rows: first paint and frame times ---------------------

echo
if grep -q "^with_ui\|ui=true" "$build/meson-info/intro-buildoptions.json" 2>/dev/null || [ -f "$build/src/ui/chaperone" ]; then
  if command -v xvfb-run >/dev/null 2>&1; then
    set +e
    ninja -C "$build" bench/chaperone-ui-bench && \
      GSETTINGS_BACKEND=memory xvfb-run -a -s "-screen 0 1280x800x24" "$build/bench/chaperone-ui-bench"
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

[ "$rss_status" -ne 0 ] && exit "$rss_status"
[ "$ext_status" -ne 0 ] && exit "$ext_status"
exit "$mcp_status"
