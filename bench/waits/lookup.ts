// bench/waits/lookup: the wait matcher's lookup alone, in this process: router/waits-rocksdb.ts
// `findMany` (a multi-get of the entries its in-memory index names) on a fresh RocksDB opened as the
// server opens it (core/rocks.ts, config/settings.ts DEFAULTS), holding 10,000 then 100,000 open waits
// with distinct match values (as the embedded server stores them: scope `all`). Per size: lookups of
// keys that have a wait (a hit: one registration read and parsed) and of keys that have none (a
// miss: the common case, an event nobody waits for), one key a read, 1 and 64 reads in flight, and
// 64 keys a read (as the matcher reads a batch's keys); µs of wall time per key and µs of this
// process's CPU per key (every thread: RocksDB's reads run on libuv's pool), each the best of 3
// passes. For scale, a point read (rocks.get) of a key that is there and of one that is not.
// Target: < 5 µs per lookup, whatever the number of waits.
// Usage: node --no-node-snapshot --conditions=sluice-source bench/waits/lookup.ts
//   [lookups (20000)] [open waits, e.g. 10000,100000]
import { mkdtemp, rm } from 'node:fs/promises'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { report } from '../lib.ts'
import { round } from '../wrk.ts'
import { openRocks } from '../../core/rocks.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createRocksWaitStore } from '../../router/waits-rocksdb.ts'
import { matchKey, type WaitRegistration } from '../../router/waits-types.ts'
import { keyPrefix } from '../../core/keyspaces.ts'

const lookups = Number(process.argv[2] ?? 20_000)
const sizes = (process.argv[3] ?? '10000,100000').split(',').map(Number)
const WARM_UP = 2_000
const CONCURRENT = 64
/** Each figure is the best of this many passes: on a shared machine others' work only adds. */
const PASSES = 3
const PUT_BATCH = 1_000
const loadBefore = loadavg()[0]

/** A registration as router/matcher.ts stores one for bench/waits/functions.ts's `waiter`. */
function registration(i: number, now: number): WaitRegistration {
  const runId = `01M8CAFNAV${String(i).padStart(16, '0')}`
  return {
    waitId: `${runId}\u00001`,
    kind: 'resume',
    env: 'production',
    event: 'bench/paid',
    match: 'data.order',
    value: JSON.stringify(`o-${i}`),
    sinceMs: now,
    expiresAt: now + 3_600_000,
    target: { env: 'production', functionKey: 'bench-waiter', runId, seq: 1 },
  }
}

const keyOf = (value: string) =>
  matchKey({ env: 'production', event: 'bench/paid', match: 'data.order', value: JSON.stringify(value) })

/** µs of wall time and of process CPU per lookup, `concurrency` lookups in flight; `lookup` returns what it found. */
async function time(lookup: (key: string) => Promise<number>, keys: string[], concurrency: number) {
  const cpu = process.cpuUsage()
  const started = process.hrtime.bigint()
  let next = 0
  let found = 0
  const worker = async () => {
    while (next < keys.length) {
      const n = await lookup(keys[next++])
      found += n
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  const wallUs = Number(process.hrtime.bigint() - started) / 1000
  const used = process.cpuUsage(cpu)
  return { wallUs: wallUs / keys.length, cpuUs: (used.user + used.system) / keys.length, found }
}

const rows: Array<Record<string, string | number>> = []
const summary: Record<number, Record<string, number>> = {}
for (const size of sizes) {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-waits-lookup-'))
  const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
  try {
    const store = await createRocksWaitStore(rocks, 'all')
    const now = Date.now()
    for (let from = 0; from < size; from += PUT_BATCH)
      await store.apply({
        put: Array.from({ length: Math.min(PUT_BATCH, size - from) }, (_, n) => registration(from + n, now)),
        remove: [],
      })
    const pick = (n: number) => Math.floor(Math.random() * n)
    const hitIds = Array.from({ length: lookups }, () => pick(size))
    const missIds = Array.from({ length: lookups }, () => pick(size * 10))
    const find = async (key: string) => (await store.findMany([key])).get(key)?.length ?? 0
    // As the matcher reads: the keys of a batch's events in one findMany (keys joined by \n here).
    const findBatch = async (keys: string) => {
      const found = await store.findMany(keys.split('\n'))
      return [...found.values()].reduce((n, waits) => n + waits.length, 0)
    }
    const batches = (keys: string[]) =>
      Array.from({ length: Math.ceil(keys.length / CONCURRENT) }, (_, i) =>
        keys.slice(i * CONCURRENT, (i + 1) * CONCURRENT).join('\n'),
      )
    // For scale: one point read of a key that is there (the wait's own key), or is not.
    const get = async (key: string) => ((await rocks.get(key)) === null ? 0 : 1)
    const waitKey = (i: number) => `${keyPrefix('waits', 'all\0')}${keyOf(`o-${i}`)}\0${registration(i, now).waitId}`
    await time(
      find,
      hitIds.slice(0, WARM_UP).map((i) => keyOf(`o-${i}`)),
      1,
    )
    summary[size] = {}
    const hitKeys = hitIds.map((i) => keyOf(`o-${i}`))
    const missKeys = missIds.map((i) => keyOf(`x-${i}`))
    const cases = [
      { name: 'find, a wait there', lookup: find, keys: hitKeys, hits: true },
      { name: 'find, none there', lookup: find, keys: missKeys, hits: false },
      {
        name: `find, ${CONCURRENT} keys a read, a wait there`,
        lookup: findBatch,
        keys: batches(hitKeys),
        hits: true,
        perRead: CONCURRENT,
        // A key twice in one read is found once.
        expect: batches(hitKeys).reduce((n, b) => n + new Set(b.split('\n')).size, 0),
      },
      { name: 'rocks.get, there (for scale)', lookup: get, keys: hitIds.map(waitKey), hits: true },
      { name: 'rocks.get, not there', lookup: get, keys: missIds.map((i) => waitKey(size + i)), hits: false },
    ]
    for (const c of cases) {
      const perRead = 'perRead' in c ? (c.perRead as number) : 1
      for (const concurrency of perRead === 1 ? [1, CONCURRENT] : [1]) {
        const passes = []
        for (let pass = 0; pass < PASSES; pass++) {
          const t = await time(c.lookup, c.keys, concurrency)
          const expected = 'expect' in c ? (c.expect as number) : c.hits ? hitKeys.length : 0
          if (t.found !== expected && c.lookup !== get)
            throw new Error(`lookup: ${c.name} found ${t.found} of ${expected}`)
          passes.push({ wallUs: t.wallUs / perRead, cpuUs: t.cpuUs / perRead })
        }
        const t = { wallUs: Math.min(...passes.map((p) => p.wallUs)), cpuUs: Math.min(...passes.map((p) => p.cpuUs)) }
        rows.push({
          'open waits': size,
          lookup: c.name,
          'in flight': concurrency,
          lookups: c.keys.length * perRead,
          'wall µs/lookup': round(t.wallUs, 1),
          'cpu µs/lookup': round(t.cpuUs, 1),
        })
        if (c.lookup === find)
          summary[size][`${c.hits ? 'hit' : 'miss'}${concurrency === 1 ? '' : 'InFlight64'}CpuUs`] = round(t.cpuUs, 1)
        if (c.lookup === findBatch) summary[size][`hitIn${CONCURRENT}KeyReadsCpuUs`] = round(t.cpuUs, 1)
      }
    }
  } finally {
    await rocks.close()
    await rm(dir, { recursive: true, force: true })
  }
}

report('waits-lookup', rows, {
  lookups,
  passes: PASSES,
  cpuUsPerLookup: summary,
  cpus: availableParallelism(),
  loadAvg1m: { before: round(loadBefore, 2), after: round(loadavg()[0], 2) },
  targets: { usPerLookup: 5 },
})
