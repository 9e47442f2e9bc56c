// SLUICE_HEAP_GROWING_PERCENT (docs/operations.md, "Memory and backpressure"). Between full
// collections V8 lets its old generation grow to a multiple of what was live at the last one, up
// to 4× by its own measure of how fast it collects. This holds the multiple at 1 + percent/100. It
// is node's --heap-growing-percent, which node refuses in NODE_OPTIONS; V8 reads it at each
// collection, so setting it once the process runs works (tests/ops/heap-growing.test.ts).
import { setFlagsFromString } from 'node:v8'

/** 0 leaves V8's own heuristics (and a --heap-growing-percent on node's command line) in place. */
export function applyHeapGrowingPercent(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`)
}
