#!/usr/bin/env bash
# `npm start`: the embedded Dev Server on http://127.0.0.1:8288 (flags pass through).
set -euo pipefail
. "$(dirname "$0")/node24.sh"
# The dashboard is built by esbuild (dist/dashboard/) when missing or older than its sources.
node "$(dirname "$0")/build-dashboard.ts" --if-stale
# RocksDB's threads each get a glibc malloc arena; two arenas halve the RSS under load (1.5 → 0.9 GiB in bench/ingest).
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
# V8's young generation: 8 MiB semi-spaces instead of Node's 32 (idle RSS 185 → 157 MiB, peak under
# batch load ~620 → ~510 MiB in bench/ingest, at no measurable CPU cost); docs/operations.md, "Memory".
exec node --no-node-snapshot --max-semi-space-size=8 --conditions=sluice-source "$(dirname "$0")/../bin/sluice.js" dev "$@"
