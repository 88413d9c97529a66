#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Set up and start Chaperone from this checkout: install what is missing, build, run.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

build-aux/install-deps.sh
[ -f build/build.ninja ] || meson setup build --prefix="$HOME/.local"
ninja -C build

# Use the freshly built schema without installing anything.
export GSETTINGS_SCHEMA_DIR="$here/build/data"
exec build/src/ui/chaperone "$@"
