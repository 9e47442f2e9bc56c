#!/usr/bin/env bash
# `npm test`: every test, against real Kafka, ClickHouse and Chromium, provisioned when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/node24.sh
echo "node $(node --version)"
bash tests/infra/provision.sh
npx tsc --noEmit
npx tsc --noEmit -p dashboard
# Formatter and linter (biome.jsonc), then the dependency rules, cycles included (.dependency-cruiser.cjs).
npm run --silent lint
npm run --silent depcruise
# The browser tests need the built dashboard (dist/dashboard/); rebuilt when its sources changed.
node scripts/build-dashboard.ts --if-stale
node tests/infra/up.ts
trap 'node tests/infra/down.ts' EXIT
log="$(mktemp)"
set +e
npx tap "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# A plain closing line for CI: tap's summary is "# { total: N, pass: N, fail: N }".
summary=$(grep -a -E '^# \{ total: [0-9]+' "$log" | tail -n 1)
pass=$(sed -E 's/.*pass: ([0-9]+).*/\1/' <<<"$summary")
fail=$(grep -q 'fail:' <<<"$summary" && sed -E 's/.*fail: ([0-9]+).*/\1/' <<<"$summary" || echo 0)
# Then each failure again, with its diagnostics, where a log cut to its tail still shows it.
if [ "${fail:-0}" != 0 ]; then
  echo "failures:"
  awk '/^ *not ok /{on=1} on{print} on&&/^ *\.\.\.$/{on=0}' "$log" | head -n 300 || true
fi
rm -f "$log"
echo "tests: ${pass:-0} passed, ${fail:-0} failed"
exit "$status"
