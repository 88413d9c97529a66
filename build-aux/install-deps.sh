#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs what Chaperone needs on Debian 12, and nothing when it is all there already.
#   install-deps.sh          build and run
#   install-deps.sh --test   also what the test suite needs (Xvfb, AT-SPI, clang, Chromium, Firefox ESR,
#                            Node modules)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)

build_pkgs=(
  build-essential meson ninja-build pkg-config gettext
  libglib2.0-dev libglib2.0-dev-bin libgtk-4-dev libadwaita-1-dev libjson-glib-dev
  libsoup-3.0-dev libgnutls28-dev libsqlite3-dev
  desktop-file-utils appstream
  libgdk-pixbuf2.0-bin librsvg2-common  # render the icons at build time (src/ui/meson.build)
)
test_pkgs=(
  xvfb xauth dbus dbus-x11 imagemagick xdotool
  at-spi2-core python3 python3-gi gir1.2-atspi-2.0
  clang libclang-rt-14-dev
  chromium
  firefox-esr
  nodejs npm
)

pkgs=("${build_pkgs[@]}")
if [ "${1:-}" = "--test" ]; then
  pkgs+=("${test_pkgs[@]}")
fi

missing=()
for p in "${pkgs[@]}"; do
  # nodejs may come from elsewhere than Debian (a newer one is fine): judge by the command.
  case "$p" in
    nodejs) command -v node >/dev/null && continue ;;
    npm) command -v npm >/dev/null && continue ;;
  esac
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ "${1:-}" = "--test" ]; then
  # The JS test tools (ws, playwright-core for Chromium, puppeteer-core for Firefox over WebDriver
  # BiDi, the MCP SDK as the agent) and the real web apps of
  # the real-site suite (TiddlyWiki, MailDev, Node-RED and its dashboard: tests/realsites/apps.mjs) from npm,
  # pinned by package-lock.json; served on loopback at test time, nothing fetched then.
  if [ ! -d "$here/node_modules/ws" ] || [ ! -d "$here/node_modules/playwright-core" ] ||
     [ ! -d "$here/node_modules/puppeteer-core" ] ||
     [ ! -d "$here/node_modules/@modelcontextprotocol/sdk" ] ||
     [ ! -d "$here/node_modules/tiddlywiki" ] || [ ! -d "$here/node_modules/maildev" ] ||
     [ ! -d "$here/node_modules/node-red" ] ||
     [ "$here/package-lock.json" -nt "$here/node_modules" ]; then
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  # Etherpad and Verdaccio for the same suite, each in a folder of its own: their pinned
  # dependencies are old (npm 6, socket.io 2, express 4) and would otherwise share node_modules
  # with the tests' own.
  for app in etherpad:ep_etherpad-lite verdaccio:verdaccio; do
    dir="$here/tests/realsites/${app%%:*}"
    if [ ! -d "$dir/node_modules/${app#*:}" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules" ]; then
      (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    fi
  done
fi
