#!/usr/bin/env bash
# `npm start`: the embedded Dev Server on http://127.0.0.1:8288 (flags pass through).
set -euo pipefail
. "$(dirname "$0")/node24.sh"
# The dashboard is built by esbuild (dist/dashboard/) when missing or older than its sources.
node "$(dirname "$0")/build-dashboard.ts" --if-stale
# The allocator (docs/operations.md, "Allocator"): jemalloc when installed (Debian: libjemalloc2), as
# the image runs it. Under glibc's malloc RSS steps up at RocksDB's first large compaction and stays
# there (bench/soak: 29 % growth; jemalloc: 1.5 %). SLUICE_MALLOC=glibc keeps glibc's, as does an
# LD_PRELOAD of your own. glibc gets two arenas: one per RocksDB thread doubled the RSS under load.
# On a multilib host the cache lists each architecture's copy: take the one of this machine's
# (ldconfig's tag: "libc6,x86-64", "libc6,AArch64"); a 32-bit one would not load into node.
# muzzy_decay_ms:0 is jemalloc's own default: freed pages go back to the kernel once their 5 s of
# dirty decay pass. At 5000 they were MADV_FREE'd first, and such pages count in RSS (and a
# container's memory) until the kernel runs short: the soak's peak was 443 MiB, now 383.
case "$(uname -m)" in x86_64) arch=x86-64 ;; aarch64) arch=AArch64 ;; *) arch='' ;; esac
jemalloc="$( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null || true) |
  awk -v arch="$arch" '/libjemalloc\.so\.2 / && (arch == "" || index($0, "," arch ")")) {print $NF; exit}')"
if [ "${SLUICE_MALLOC:-jemalloc}" = jemalloc ] && [ -z "${LD_PRELOAD:-}" ] && [ -n "$jemalloc" ]; then
  export LD_PRELOAD="$jemalloc"
  export MALLOC_CONF="${MALLOC_CONF:-narenas:2,background_thread:true,dirty_decay_ms:5000,muzzy_decay_ms:0}"
fi
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
# V8's young generation: 16 MiB semi-spaces instead of Node's 32 (idle RSS ~185 → ~148 MiB; at 32,
# single events took ~7 % more CPU per request than at 8), and not 8 (idle ~132 MiB, but 500-event
# batches took ~10 % more CPU per event, single events ~6 % more); docs/operations.md, "Memory".
exec node --no-node-snapshot --max-semi-space-size=16 --conditions=sluice-source "$(dirname "$0")/../bin/sluice.js" dev "$@"
