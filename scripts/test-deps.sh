#!/usr/bin/env bash
# Installs the system services the test suite needs, once, from Debian's packages.
set -euo pipefail
need=()
# (services are added here as the suite grows: postgresql, chromium)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
