#!/usr/bin/env bash
# `npm test`: every test, against real Kafka, ClickHouse and Chromium, provisioned when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase's wall time, for CI logs: `phase: <name> <seconds> s`.
phase_start=$SECONDS
phase() {
  echo "phase: $1 $((SECONDS - phase_start)) s"
  phase_start=$SECONDS
}
. scripts/node24.sh
echo "node $(node --version)"
phase 'node and dependencies'
bash tests/infra/provision.sh
phase provision
npx tsc --noEmit
npx tsc --noEmit -p dashboard
phase typecheck
# Formatter and linter (biome.jsonc), then the dependency rules, cycles included (.dependency-cruiser.cjs).
npm run --silent lint
npm run --silent depcruise
phase 'lint and dependency rules'
# The browser tests need the built dashboard (dist/dashboard/); rebuilt when its sources changed.
node scripts/build-dashboard.ts --if-stale
phase 'dashboard build'
node tests/infra/up.ts
trap 'node tests/infra/down.ts' EXIT
phase 'test services up'
log="$(mktemp)"
# Two test files at once, at least: tap's default leaves a CPU free, which on 2 cores runs the files
# one by one, though most of their time is waiting on servers, Kafka and timers. Files that must not
# share the machine (chaos: kill -9 and its timing) are serial ("serial" in package.json's tap).
jobs=$(node -p 'Math.max(2, require("node:os").availableParallelism() - 1)')
set +e
npx tap --jobs="$jobs" "$@" 2>&1 | tee "$log"
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
phase tests
echo "tests: ${pass:-0} passed, ${fail:-0} failed"
exit "$status"
