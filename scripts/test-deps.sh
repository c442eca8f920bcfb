#!/usr/bin/env bash
# Installs the system services the test suite needs, once, from Debian's packages.
set -euo pipefail
need=()
# (services are added here as the suite grows: postgresql, chromium)
# Postgres: the run-store tests start a throwaway server (initdb + pg_ctl) themselves.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  need+=(postgresql)
fi
# Chromium: the dashboard and HTML-report tests drive Debian's browser with Playwright
# (Playwright's own browser download needs the internet); DejaVu is the pages' font.
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
