#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# run-fuzz.sh: a short libFuzzer session for `meson test --suite fuzz`.
# Usage: run-fuzz.sh <fuzz-exe> <seed-dir> <dict> <artifact-dir> <seconds> <crash-prefix>
#   [libFuzzer flags…]
# <crash-prefix> is e.g. tests/fuzz/crashes/frame: the files <crash-prefix>-* are added.
# libFuzzer writes new inputs into its first corpus directory, so it gets a scratch copy of the
# committed seeds, plus the reproducers of bugs already fixed, so that each of them is run again
# first; a crash is saved under <artifact-dir> and the test fails.
set -eu

exe=$1 seeds=$2 dict=$3 artifacts=$4 seconds=$5 crashes=$6
shift 6

work=$(mktemp -d "${TMPDIR:-/tmp}/chp-fuzz-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cp "$seeds"/* "$work"/
for old in "$crashes"-*; do
  if [ -f "$old" ]; then cp "$old" "$work"/; fi
done
mkdir -p "$artifacts"

# libFuzzer's own failure status is 77, which meson reads as "skipped": ask for 1.
exec_status=0
"$exe" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
  -error_exitcode=1 -timeout_exitcode=1 \
  -dict="$dict" -artifact_prefix="$artifacts/" "$@" "$work" || exec_status=$?

if [ "$exec_status" -ne 0 ]; then
  echo "run-fuzz.sh: $exe failed ($exec_status); reproducer in $artifacts/" >&2
fi
exit "$exec_status"
