#!/usr/bin/env bash
# Runs every test of Gatehouse: type check, lint, unit, integration (real IdP processes) and browser
# end-to-end tests (Playwright driving Debian's Chromium). What npm cannot install is installed from
# Debian's packages when missing and running as root.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v caddy >/dev/null 2>&1 || missing+=(caddy)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# The storage tests start throwaway PostgreSQL servers; Debian keeps its binaries off PATH.
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
if ((${#missing[@]} > 0)); then
  if [ "$(id -u)" -eq 0 ]; then
    echo "Installing from Debian: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" fonts-dejavu-core >/dev/null
  else
    echo "Missing system packages: ${missing[*]}. Install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

npm run build
npm run typecheck
npm run lint
npx vitest run
npx playwright test -c e2e/playwright.config.ts
