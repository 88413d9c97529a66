#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Set up and run the whole test suite: install what is missing, build with warnings as errors,
# run every test under a virtual display and a private D-Bus session, run the same suite again
# under AddressSanitizer and UndefinedBehaviorSanitizer, and give the fuzzers a short run.
#   build-aux/test.sh            everything
#   build-aux/test.sh --quick    the plain build's suites only
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

build-aux/install-deps.sh --test

status=0
summary=()

configure () {
  local dir=$1; shift
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" "$@" >/dev/null
  else
    meson setup "$dir" "$@" >/dev/null
  fi
}

run_suite () {
  local name=$1 dir=$2; shift 2
  echo "=== $name"
  # Xvfb for the windows, a private session bus for AT-SPI and the app's own name.
  if xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \
       meson test -C "$dir" --print-errorlogs --num-processes 2 "$@"; then
    :
  else
    status=1
  fi
  summary+=("$(python3 build-aux/summarize-tests.py "$dir" "$name")")
}

# The same prefix as run.sh, so "meson install -C build" means the same after either command.
configure build -Dwerror=true --prefix="$HOME/.local"
ninja -C build
if [ "${1:-}" != "--quick" ]; then
  # Each end-to-end test runs once in the whole run: the ones that drive the GTK app under ASan
  # below (memory errors in the app are what they can find that nothing else can), the engine's
  # here. --quick runs them all in this pass.
  run_suite "tests" build --no-suite e2e-gtk
else
  run_suite "tests" build
fi

if [ "${1:-}" != "--quick" ]; then
  # The same suites with sanitizers, with the end-to-end tests that drive the GTK app (the app
  # under ASan, driven through the accessibility tree); the engine's end-to-end tests ran above.
  # LeakSanitizer is on: every test process, every engine harness told to quit and every app an
  # end-to-end test stops is checked for leaks when it exits, and a leak fails its test. tests/lsan-suites.supp names the leaks
  # that belong to libraries (fontconfig's caches, GLib's g_set_user_dirs), never one of ours.
  # Everything aborts on the first finding.
  configure build-asan -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debug
  ninja -C build-asan
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  LSAN_OPTIONS=suppressions=$here/tests/lsan-suites.supp:print_suppressions=0 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    run_suite "tests under ASan+UBSan+LSan" build-asan --no-suite data --no-suite fuzz \
      --no-suite e2e-engine

  # libFuzzer needs clang; a short run on the committed corpus (see tests/fuzz/README.md).
  CC=clang configure build-fuzz -Dwerror=true -Dui=false -Dfuzzing=true -Db_sanitize=address,undefined \
    -Db_lundef=false -Dbuildtype=debug -Dc_args=-fsanitize=fuzzer-no-link
  ninja -C build-fuzz
  run_suite "fuzzing (short run)" build-fuzz --suite fuzz
fi

builds=(build)
if [ "${1:-}" != "--quick" ]; then
  builds+=(build-asan build-fuzz)
fi

echo
if [ $status -ne 0 ]; then
  echo "=== why the failed tests failed (the whole output is in each build's meson-logs/testlog.txt)"
  python3 build-aux/summarize-tests.py --failures "${builds[@]}"
  echo
fi
printf '%s\n' "${summary[@]}"
python3 build-aux/summarize-tests.py --total "${builds[@]}"
exit $status
