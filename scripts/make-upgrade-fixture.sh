#!/usr/bin/env bash
# Makes tests/fixtures/upgrade/<NAME>.tar.gz: the data dir that Sluice at an older COMMIT leaves
# behind after an embedded server took an event key, a webhook and events (tests/fixtures/upgrade/
# write.ts, from this checkout, talks to it over HTTP), with what it made in <NAME>.json.
# tests/ops/upgrade.test.ts opens each fixture with this build.
# Usage: bash scripts/make-upgrade-fixture.sh COMMIT NAME
set -euo pipefail
commit="$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse "$1")"
name="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
cleanup() {
  [[ -n "${pid:-}" ]] && kill "$pid" 2>/dev/null || true
  git -C "$root" worktree remove --force "$work/src" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
git -C "$root" worktree add --detach "$work/src" "$commit" >&2
. "$root/scripts/node24.sh"
(cd "$work/src" && . scripts/node24.sh)
key="fixture-signing-key-$(date +%s)-0123456789abcdef"
port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
SLUICE_SIGNING_KEY="$key" SLUICE_OPS_PORT=0 node --no-node-snapshot --conditions=sluice-source "$work/src/bin/sluice.js" \
  start --port "$port" --data-dir "$work/data" > "$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.5; done
SLUICE_URL="http://127.0.0.1:$port" SLUICE_SIGNING_KEY="$key" \
  node --no-node-snapshot --conditions=sluice-source "$root/tests/fixtures/upgrade/write.ts" \
  "$commit" > "$root/tests/fixtures/upgrade/$name.json"
kill -TERM "$pid"
wait "$pid" || true
pid=""
tar -czf "$root/tests/fixtures/upgrade/$name.tar.gz" -C "$work/data" .
echo "wrote tests/fixtures/upgrade/$name.tar.gz ($(du -h "$root/tests/fixtures/upgrade/$name.tar.gz" | cut -f1))" >&2
