// What waits for a durable write holds no events (ingest/index.ts, one-pass/index.ts,
// bus/local-writer.ts): under
// `always` a write waits for the WAL's fdatasync, milliseconds in which V8 would otherwise copy a
// request's events through its young generation and into the old one (docs/operations.md, "Memory").
// Each case holds a write open, runs a full GC, and checks the events' objects are gone.
import t from 'tap'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import pino from 'pino'
import { createHttpServer } from '../../api/http.ts'
import { loadConfig, rocksOptionsOf } from '../../config/config.ts'
import { DEFAULTS } from '../../config/settings.ts'
import { createEnvs } from '../../control/envs.ts'
import { createKeys } from '../../control/keys.ts'
import { createRocksControlStore } from '../../control/rocksdb.ts'
import { createIngest } from '../../ingest/index.ts'
import { createOnePass } from '../../one-pass/index.ts'
import { createWriter } from '../../bus/local-writer.ts'
import type { Offsets } from '../../bus/local-offsets.ts'
import type { EventRecord } from '../../core/event.ts'
import { newUlids } from '../../core/ids.ts'
import { openRocks, type Rocks, type WriteOp } from '../../core/rocks.ts'
import { createRocksDedupStore } from '../../dedup/rocksdb.ts'
import { createRocksEventStore } from '../../store/rocksdb.ts'
import { tempDir } from '../helpers/server.ts'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as (options: { type: 'major'; execution: 'sync' }) => void
const collect = async () => {
  // Twice, a turn apart: what a settled callback dropped becomes garbage after its turn.
  for (let i = 0; i < 2; i++) {
    await new Promise((resolve) => setImmediate(resolve))
    gc({ type: 'major', execution: 'sync' })
  }
}

const dataDir = await tempDir()
const config = loadConfig('dev', { port: '0', host: '127.0.0.1', dataDir, logLevel: 'warn' }, {})
const db = await openRocks(join(dataDir, 'db'), rocksOptionsOf(config))
t.teardown(() => db.close())

/** `n` events, and weak references to their data: the caller keeps nothing else of them. */
function events(n: number): { records: EventRecord[]; data: Array<WeakRef<object>> } {
  const now = Date.now()
  const records = newUlids(n, now).map((internalId, i) => ({
    internalId,
    id: internalId,
    name: 'shop/viewed',
    data: { i, note: 'x'.repeat(64) },
    ts: now,
    env: 'production',
    receivedAt: now,
    source: { kind: 'api' as const },
  }))
  return { records, data: records.map((r) => new WeakRef(r.data)) }
}
const alive = (refs: Array<WeakRef<object>>) => refs.filter((ref) => ref.deref() !== undefined).length
/** A promise the test settles: a write whose WAL sync has not ended. */
function gate() {
  let release!: () => void
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  return { held, release }
}

t.test('an Event API request holds no event while it waits for the log', async (t) => {
  const { held, release } = gate()
  const data: Array<WeakRef<object>> = []
  const log = pino({ level: 'silent' })
  const envs = createEnvs(await createRocksControlStore(db))
  const keys = createKeys(await createRocksControlStore(db), envs)
  const ingest = createIngest(
    {
      keys,
      envs,
      // Takes weak references only, as the one pass keeps nothing of what it wrote.
      outputs: {
        incoming: {
          publish: (records) => {
            for (const record of records) data.push(new WeakRef(record.data))
            return held
          },
        },
      },
      checkEvents: () => ({ kind: 'ok' }),
      log,
    },
    { ...DEFAULTS, devMode: true },
  )
  const { app } = createHttpServer(
    { host: '127.0.0.1', port: 0, trustProxy: false, eventLimits: DEFAULTS, limits: DEFAULTS },
    log,
    [ingest.routes],
  )
  t.teardown(() => app.close())
  const body = Array.from({ length: 100 }, (_, i) => ({ name: 'shop/viewed', data: { i, note: 'x'.repeat(64) } }))
  const answer = app.inject({ method: 'POST', url: '/e/k', payload: body })
  while (data.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  await collect()
  t.equal(alive(data), 0, "none of the request's events is still in memory")
  release()
  const response = await answer
  t.equal(response.statusCode, 200, 'and it is answered once the write is durable')
  t.equal(response.json().ids.length, 100)
})

t.test('the one pass holds no event while its write is durable-pending', async (t) => {
  const { held, release } = gate()
  let committed = 0
  const onePass = createOnePass({
    // A log whose write waits for the test: as a WAL sync keeps it waiting, but keeping no op.
    commit: (ops) => {
      committed += ops.length
      return held
    },
    writeNow: () => {},
    getMany: (keys) => db.getMany(keys),
    store: createRocksEventStore(db),
    dedup: createRocksDedupStore(db, { windowMs: 86_400_000 }),
    routing: () => undefined,
  })
  const { records, data } = events(100)
  const published = onePass.publish(records.splice(0))
  let settled = false
  void published.then(() => {
    settled = true
  })
  while (committed === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  await collect()
  t.equal(settled, false, 'the publish still waits for its write')
  t.equal(alive(data), 0, "and none of its events' data is still in memory")
  release()
  await published
  t.pass('it resolves once the write does')
})

t.test("the local log's writer holds no op while RocksDB's write is pending", async (t) => {
  const { held, release } = gate()
  let written = 0
  const rocks = {
    // A write that RocksDB has taken (so its ops are copied) and whose WAL sync has not ended.
    write: (ops: WriteOp[]) => {
      written += ops.length
      return held
    },
  } as unknown as Rocks
  const offsets = { take: () => [], requeue: () => {} } as unknown as Offsets
  const writer = createWriter(rocks, offsets, 1 << 20)
  const values: Array<WeakRef<object>> = []
  const committing = (() => {
    const ops = Array.from({ length: 100 }, (_, i) => {
      const value = Buffer.from(`value ${i}`)
      values.push(new WeakRef(value))
      return { type: 'put' as const, key: `k${i}`, value }
    })
    return writer.commit(ops)
  })()
  while (written === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  await collect()
  t.equal(alive(values), 0, 'no value of the pending write is still in memory')
  release()
  await committing
  t.pass('and the commit resolves once the write does')
})
