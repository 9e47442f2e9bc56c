// The embedded event store at 1,000,000 events: the CPU an insert costs per event (with and without
// the indexes), then each REST filter's latency (p50/p99 over repeats). Filled through the store,
// not HTTP, to be quick. `node --conditions=sluice-source bench/store-query/run.ts [events] [repeats] [per-ms]`
// per-ms: events that share a millisecond (1 by default: each event then has its own key in E; more,
// as batches bring, share values of E, store/rocksdb-events.ts).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { StoredEvent } from '../../core/event.ts'
import { seededUlids } from '../../core/ids.ts'
import { openRocks, type WriteOp } from '../../core/rocks.ts'
import { DEFAULT_SCAN_BUDGET, createRocksEventStore } from '../../store/rocksdb.ts'
import { eventKey } from '../../store/rocksdb-events.ts'
import type { EventQuery, EventStore } from '../../store/types.ts'
import { rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { report } from '../lib.ts'

const EVENTS = Number(process.argv[2] ?? 1_000_000)
const REPEATS = Number(process.argv[3] ?? 50)
const PER_MS = Number(process.argv[4] ?? 1)
const BATCH = 1000
const NAMES = Array.from({ length: 20 }, (_, i) => `shop/event-${i}`)
const ENVS = ['production', 'production', 'production', 'staging', 'feature-x']
/** One event every 10 ms: 1M events span ~2.8 hours. */
const STEP_MS = 10
const START = Date.UTC(2026, 10, 1)
const HOT_ID_EVERY = 50 // every 50th event repeats one dedup id (a duplicate), the worst case for `id=`

function makeEvent(i: number): StoredEvent {
  const receivedAt = START + Math.floor(i / PER_MS) * STEP_MS
  // 1 in 200 got its ID from a client clock an hour behind (an off-clock event).
  const idTime = i % 200 === 7 ? receivedAt - 3_600_000 : receivedAt
  const seed = `${idTime},${Buffer.from(i.toString(16).padStart(20, '0'), 'hex').toString('base64')}`
  const internalId = seededUlids(seed, 1)[0]
  const hot = i % HOT_ID_EVERY === 1
  return {
    internalId,
    id: hot ? 'hot-id' : internalId,
    name: NAMES[i % NAMES.length],
    env: ENVS[i % ENVS.length],
    data: { order: i, total: (i % 977) * 3.5, items: [{ sku: `sku-${i % 131}`, qty: 1 + (i % 4) }] },
    ts: receivedAt,
    receivedAt,
    source: { kind: 'api', keyId: 'key_01JBENCH' },
    ...(hot && i > 1 && { duplicateOf: 'first-hot' }),
  }
}

/** CPU µs per event of `insert` over the first `count` events, in batches of BATCH (making them is not counted). */
async function insertCpu(count: number, insert: (events: StoredEvent[]) => Promise<void>): Promise<number> {
  let cpuUs = 0
  for (let at = 0; at < count; at += BATCH) {
    const events = Array.from({ length: Math.min(BATCH, count - at) }, (_, k) => makeEvent(at + k))
    const started = process.cpuUsage() // every thread's: RocksDB's flushes and compactions count too
    await insert(events)
    const used = process.cpuUsage(started)
    cpuUs += used.user + used.system
  }
  return cpuUs / count
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

interface Timing {
  p50: number
  p99: number
  events: number
  more: boolean
}

async function time(store: EventStore, q: EventQuery): Promise<Timing> {
  const ms: number[] = []
  let page = await store.queryEvents(q)
  for (let r = 0; r < REPEATS; r++) {
    const started = process.hrtime.bigint()
    page = await store.queryEvents(q)
    ms.push(Number(process.hrtime.bigint() - started) / 1e6)
  }
  ms.sort((a, b) => a - b)
  const more = page.nextCursor !== null
  return { p50: percentile(ms, 0.5), p99: percentile(ms, 0.99), events: page.events.length, more }
}

const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-store-'))
try {
  // The cost of the indexes: the same events written as the event only, then by the store.
  const bare = await openRocks(join(dir, 'bare'), rocksOptionsOf(DEFAULTS))
  const sample = Math.min(100_000, EVENTS)
  const bareUs = await insertCpu(sample, (events) =>
    bare.write(events.map((e): WriteOp => ({ type: 'put', key: eventKey(e.internalId), value: JSON.stringify(e) }))),
  )
  await bare.close()

  const rocks = await openRocks(join(dir, 'db'), rocksOptionsOf(DEFAULTS))
  const store = createRocksEventStore(rocks)
  const fillStarted = Date.now()
  const indexedUs = await insertCpu(EVENTS, (events) => store.insertEvents(events))
  const fillS = (Date.now() - fillStarted) / 1000

  const end = START + (EVENTS / PER_MS) * STEP_MS
  const mid = START + (EVENTS / PER_MS / 2) * STEP_MS
  const queries: Array<[string, Omit<EventQuery, 'limit'>]> = [
    ['name=<no match>', { name: 'shop/nothing' }],
    ['env=nope', { env: 'nope' }],
    ['received_after=<future>', { receivedAfter: Date.now() + 86_400_000 }],
    ['received_before=<before all>', { receivedBefore: START - 1 }],
    ['id=<no match>', { id: 'order-nope' }],
    ['(none)', {}],
    ['name', { name: NAMES[3] }],
    ['env=staging', { env: 'staging' }],
    ['name&env', { name: NAMES[3], env: 'staging' }],
    ['id=<one event>', { id: makeEvent(Math.floor(EVENTS / 3)).id }],
    ['received_after=<last minute>', { receivedAfter: end - 60_000 }],
    ['received_before=<middle>', { receivedBefore: mid }],
    ['after&before=<1 min in the middle>', { receivedAfter: mid - 60_000, receivedBefore: mid }],
    ['name&env&after&before', { name: NAMES[3], env: 'staging', receivedAfter: mid - 600_000, receivedBefore: mid }],
    ['cursor=<middle>&name', { name: NAMES[3], cursor: makeEvent(EVENTS / 2).internalId }],
    ['id=hot-id&name=<no match> (budget)', { id: 'hot-id', name: 'shop/nothing', includeDuplicates: true }],
  ]
  const rows: Array<Record<string, string | number>> = []
  for (const [label, q] of queries) {
    const r = await time(store, { ...q, limit: 50 })
    const cursor = r.more ? 'yes' : 'no'
    rows.push({ query: label, p50_ms: r.p50.toFixed(2), p99_ms: r.p99.toFixed(2), events: r.events, cursor })
  }
  await rocks.close()
  report('store-query', rows, {
    perMs: PER_MS,
    events: EVENTS,
    repeats: REPEATS,
    limit: 50,
    scanBudget: DEFAULT_SCAN_BUDGET,
    fillSeconds: fillS,
    insertCpuUsPerEvent: { eventOnly: Number(bareUs.toFixed(2)), withIndexes: Number(indexedUs.toFixed(2)) },
    indexCpuUsPerEvent: Number((indexedUs - bareUs).toFixed(2)),
  })
} finally {
  await rm(dir, { recursive: true, force: true })
}
