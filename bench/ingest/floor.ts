// bench/ingest/floor.ts: the least CPU per event the embedded pipeline can cost on this machine,
// set against issue #32's target for 500-event batches (6 µs per event). Two parts:
// 1. What Sluice writes: an embedded server in this process, on a RocksDB whose writes are tallied,
//    takes bench/ingest's 500-event batches from wrk (16 connections, as bench/ingest) for a few
//    seconds. Per key space (core/keyspaces.ts): puts, range deletes and bytes per event, and how
//    many events one RocksDB write carries.
// 2. Those writes alone: a fresh RocksDB (core/rocks.ts, the server's options) takes writes of that
//    shape as fast as it can (new keys in the same order, values sampled from part 1, as many events
//    per write, one write at a time as the log makes them), then runs its flushes and compactions
//    to the end. The process's CPU (utime + stime, every thread) per event is the floor: a server that
//    parsed, validated, deduplicated and routed nothing, and answered no HTTP, would still spend it.
//    The same for the events' key space alone, for every other one, and for a store format Sluice does
//    not have (all of a write's events under one key; since data format 2 a value of E holds up to 32
//    events of one millisecond, and since format 3 each event's line only what it does not share with
//    the others, store/rocksdb-events.ts); and JSON.parse of the batch's body
//    with one JSON.stringify of each event (the least a store of JSON events needs). Since the one-pass
//    path (one-pass/index.ts) an event is written once, in E; the log (L) carries only what functions run.
// Usage: node --conditions=sluice-source bench/ingest/floor.ts [seconds]
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { loadConfig, rocksOptionsOf } from '../../config/config.ts'
import { startEmbedded } from '../../server/embedded.ts'
import { createLogger } from '../../server/log.ts'
import { registry } from '../../core/metrics.ts'
import { openRocks, type Rocks, type WriteOp } from '../../core/rocks.ts'
import { report, rocksdbIdle } from '../lib.ts'
import { cpuMicros, ensureWrk, round, wrk } from '../wrk.ts'
import { batchOf } from './events.ts'

const seconds = Number(process.argv[2] ?? 10)
const BATCH = 500
const TALLY_SECONDS = 5
const IN_FLIGHT = 1
const SAMPLES = 64
const TARGET_US = 6

/** Per key space (a key's first character, `range:` + it for range deletes): what part 1 saw written. */
interface Space {
  ops: number
  keyBytes: number
  valueBytes: number
  samples: Buffer[]
}

ensureWrk()
const body = batchOf(BATCH)
const shape = await tally()
const events = shape.events
const spaces = [...shape.spaces.entries()]
const rows: Array<Record<string, string | number>> = spaces.map(([space, s]) => ({
  case: `written: ${space}`,
  'ops/event': round(s.ops / events, 4),
  'bytes/event': round((s.keyBytes + s.valueBytes) / events),
  'events/write': round(events / shape.writes),
  'events/s': '',
  'cpu µs/event': '',
}))
const isEvents = (space: string) => space === 'E'
const replays = {
  'every key space': await replay(shape, () => true),
  'the events alone (E)': await replay(shape, isEvents),
  'all but the events': await replay(shape, (space) => !isEvents(space)),
  // A store format Sluice does not have: all the events of a write under one key.
  'every key space, the events of a write under one key': await replay(shape, () => true, { groupEvents: true }),
}
for (const [name, r] of Object.entries(replays))
  rows.push({
    case: `replayed: ${name}`,
    'ops/event': '',
    'bytes/event': '',
    'events/write': round(events / shape.writes),
    'events/s': r.eventsPerSec,
    'cpu µs/event': r.cpuPerEventUs,
  })
const json = jsonCost()
rows.push({
  case: 'JSON.parse of the body, JSON.stringify of each event',
  'ops/event': '',
  'bytes/event': '',
  'events/write': '',
  'events/s': json.eventsPerSec,
  'cpu µs/event': json.cpuPerEventUs,
})
const floorUs = round(replays['every key space'].cpuPerEventUs + json.cpuPerEventUs, 2)
const groupedUs = round(
  replays['every key space, the events of a write under one key'].cpuPerEventUs + json.cpuPerEventUs,
  2,
)
report('ingest-floor', rows, {
  seconds,
  eventsTallied: events,
  writesTallied: shape.writes,
  floorCpuPerEventUs: floorUs,
  floorWithEventsGroupedCpuPerEventUs: groupedUs,
  targetCpuPerEventUs: TARGET_US,
})
process.stdout.write(
  `\nfloor: ${floorUs} µs of CPU per event (the writes of every key space and the JSON); ${groupedUs} with the` +
    ` events of a write under one key; the target is ${TARGET_US}\n`,
)

/** Part 1: an embedded server under 500-event batches; every RocksDB write it makes, by key space. */
async function tally(): Promise<{ events: number; writes: number; spaces: Map<string, Space> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-floor-'))
  const config = loadConfig('dev', { port: '0', host: '127.0.0.1', dataDir, logLevel: 'warn' }, {})
  const rocks = await openRocks(join(dataDir, 'db'), rocksOptionsOf(config))
  const spaces = new Map<string, Space>()
  let counting = false
  let writes = 0
  const tallied: Rocks = {
    ...rocks,
    write(ops) {
      if (counting) {
        writes++
        for (const op of ops) {
          const space = op.type === 'delRange' ? `range:${op.start[0]}` : op.key[0]
          const s =
            spaces.get(space) ?? spaces.set(space, { ops: 0, keyBytes: 0, valueBytes: 0, samples: [] }).get(space)!
          s.ops++
          if (op.type === 'delRange') continue
          s.keyBytes += Buffer.byteLength(op.key)
          if (op.type !== 'put') continue
          const value = typeof op.value === 'string' ? Buffer.from(op.value) : op.value
          s.valueBytes += value.length
          if (s.samples.length < SAMPLES) s.samples.push(Buffer.from(value))
        }
      }
      return rocks.write(ops)
    },
  }
  const server = await startEmbedded(config, createLogger('warn'), { rocks: tallied })
  try {
    await wrk(`${server.url}/e/k`, body, 16, 2) // warm-up, not counted
    await sleep(1000)
    counting = true
    const run = await wrk(`${server.url}/e/k`, body, 16, TALLY_SECONDS)
    await sleep(2000) // the pipeline catches up: its writes are part of the shape
    counting = false
    return { events: (run.requests - run.non2xx) * BATCH, writes, spaces }
  } finally {
    await server.stop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

/**
 * Part 2: writes of part 1's shape, restricted to the key spaces `keep` takes, into a fresh RocksDB
 * for `seconds`, then until its flushes and compactions are done; CPU of the whole process per event.
 */
async function replay(
  { events, writes, spaces }: Awaited<ReturnType<typeof tally>>,
  keep: (space: string) => boolean,
  { groupEvents = false } = {},
): Promise<{ eventsPerSec: number; cpuPerEventUs: number }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-floor-'))
  const config = loadConfig('dev', { dataDir }, {})
  const rocks = await openRocks(join(dataDir, 'db'), rocksOptionsOf(config))
  const perWrite = Math.max(1, Math.round(events / writes))
  const kept = [...spaces].filter(([space]) => keep(space))
  // Fractions of an op per write carry over, so each space gets its share over the run.
  const owed = new Map(kept.map(([space]) => [space, 0]))
  const next = new Map(kept.map(([space]) => [space, 0]))
  let truncated = 0
  /** The n-th key of a space: its first character, then n, as long as the space's keys were. */
  const keyOf = (space: string, s: Space, n: number) =>
    space + n.toString(16).padStart(Math.max(12, Math.round(s.keyBytes / Math.max(1, s.ops)) - 1), '0')
  const opsOfWrite = (): WriteOp[] => {
    const ops: WriteOp[] = []
    for (const [space, s] of kept) {
      owed.set(space, owed.get(space)! + (s.ops / events) * perWrite)
      const grouped: Buffer[] = []
      for (; owed.get(space)! >= 1; owed.set(space, owed.get(space)! - 1)) {
        const n = next.get(space)!
        next.set(space, n + 1)
        if (space.startsWith('range:')) {
          // Retention as the log's: from where the last one ended to a few writes ago.
          const log = space.slice('range:'.length)
          const logSpace = spaces.get(log)
          const upTo = (next.get(log) ?? 0) - 8
          if (logSpace && upTo > truncated)
            ops.push({ type: 'delRange', start: keyOf(log, logSpace, truncated), end: keyOf(log, logSpace, upTo) })
          truncated = Math.max(truncated, upTo)
        } else if (groupEvents && space === 'E') grouped.push(s.samples[n % s.samples.length])
        else ops.push({ type: 'put', key: keyOf(space, s, n), value: s.samples[n % s.samples.length] })
      }
      if (grouped.length > 0)
        ops.push({ type: 'put', key: keyOf(space, s, next.get(space)!), value: Buffer.concat(grouped) })
    }
    return ops
  }
  try {
    let written = 0
    const cpuBefore = cpuMicros(process.pid)
    const started = Date.now()
    const inFlight: Array<Promise<void>> = []
    while (Date.now() - started < seconds * 1000) {
      inFlight.push(rocks.write(opsOfWrite()))
      written += perWrite
      if (inFlight.length >= IN_FLIGHT) await inFlight.shift()
    }
    await Promise.all(inFlight)
    const elapsed = (Date.now() - started) / 1000
    await rocksdbIdle(async () =>
      (await registry.getSingleMetric('sluice_rocksdb_jobs_running')!.get()).values.map((v) => v.value),
    )
    return {
      eventsPerSec: Math.round(written / elapsed),
      cpuPerEventUs: round((cpuMicros(process.pid) - cpuBefore) / written, 2),
    }
  } finally {
    await rocks.close()
    await rm(dataDir, { recursive: true, force: true })
  }
}

/** JSON.parse of the 500-event body and one JSON.stringify of each event, for `seconds`. */
function jsonCost(): { eventsPerSec: number; cpuPerEventUs: number } {
  let parsedEvents = 0
  const cpuBefore = cpuMicros(process.pid)
  const started = Date.now()
  let bytes = 0
  while (Date.now() - started < seconds * 1000) {
    for (const event of JSON.parse(body) as unknown[]) bytes += JSON.stringify(event).length
    parsedEvents += BATCH
  }
  const elapsed = (Date.now() - started) / 1000
  if (bytes === 0) throw new Error('nothing was encoded')
  return {
    eventsPerSec: Math.round(parsedEvents / elapsed),
    cpuPerEventUs: round((cpuMicros(process.pid) - cpuBefore) / parsedEvents, 2),
  }
}
