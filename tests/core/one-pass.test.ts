// The embedded event path in one pass (one-pass/index.ts, docs/design.md "One pass"): an Event API
// request's events, index entries, dedup marks and the runs the router makes of them are one RocksDB
// write, the events are written once (in the store, never on a log topic), and concurrent requests
// with one `id` store one event. The RocksDB under a real embedded server is wrapped to see its writes.
import t from 'tap'
import { join } from 'node:path'
import { Client } from '../../client/index.ts'
import { loadConfig, rocksOptionsOf } from '../../config/config.ts'
import { startEmbedded } from '../../server/embedded.ts'
import { createLogger } from '../../server/log.ts'
import { openRocks, type Rocks, type WriteOp } from '../../core/rocks.ts'
import { keyPrefix } from '../../core/keyspaces.ts'
import { createOnePass } from '../../one-pass/index.ts'
import { createRocksEventStore } from '../../store/rocksdb.ts'
import { createRocksDedupStore } from '../../dedup/rocksdb.ts'
import type { EventRecord } from '../../core/event.ts'
import { newUlids } from '../../core/ids.ts'
import pino from 'pino'
import { createLocalBus } from '../../bus/local.ts'
import { topicNames } from '../../bus/topics.ts'
import { eventually, getJson, postJson, tempDir } from '../helpers/server.ts'

const client = new Client({ id: 'one-pass' })
const paid = client.createFunction({ id: 'on-paid' }, { event: 'shop/paid' }, async ({ step }) => {
  await step.run('noted', () => 'ok')
})

const dataDir = await tempDir()
const config = loadConfig('dev', { port: '0', host: '127.0.0.1', dataDir, logLevel: 'warn' }, {})
const rocks = await openRocks(join(dataDir, 'db'), rocksOptionsOf(config))
const writes: WriteOp[][] = []
const watched: Rocks = {
  ...rocks,
  write(ops) {
    writes.push(ops)
    return rocks.write(ops)
  },
}
const server = await startEmbedded(config, createLogger('warn'), { rocks: watched, functions: [paid] })
t.teardown(() => server.stop())

const keys = (ops: WriteOp[]) => ops.flatMap((op) => (op.type === 'delRange' ? [] : [op.key]))
const has = (ops: WriteOp[], prefix: string) => keys(ops).some((k) => k.startsWith(prefix))
/** Whether `ops` put event `id`: under its own key, or as a line of a value of several (store/rocksdb-events.ts). */
const holds = (ops: WriteOp[], id: string) =>
  ops.some(
    (op) =>
      op.type === 'put' &&
      op.key.startsWith(keyPrefix('events')) &&
      (op.key === keyPrefix('events', id) ||
        String(op.value)
          .split('\n')
          .some((line) => line.startsWith(id))),
  )
const logKeys = (ops: WriteOp[], topic: string) => keys(ops).filter((k) => k.startsWith(keyPrefix('logBatches', topic)))

t.test("one write holds a request's events, their index entries, dedup marks and runs", async (t) => {
  writes.length = 0
  const events = Array.from({ length: 50 }, (_, i) => ({
    name: i % 2 === 0 ? 'shop/paid' : 'shop/viewed',
    data: { i },
    ...(i % 3 === 0 && { id: `order-${i}` }),
  }))
  const answer = await postJson(`${server.url}/e/k`, events)
  t.equal(answer.status, 200)
  const ids = (answer.body as { ids: string[] }).ids
  const holding = writes.filter((ops) => ids.some((id) => holds(ops, id)))
  t.equal(holding.length, 1, 'every event of the request is in one write')
  const [write] = holding
  for (const id of ids) t.ok(holds(write, id), `${id} is in it`)
  t.ok(has(write, keyPrefix('eventsByName')), 'with its name index entries')
  t.ok(has(write, keyPrefix('eventsByEnv')), 'its env index entries')
  t.ok(has(write, keyPrefix('dedup')), "its caller ids' dedup marks")
  t.ok(has(write, keyPrefix('dedupInternalIds')), 'the marks of events without an id')
  t.ok(has(write, keyPrefix('logBatches', 'sluice.fn.')), 'and the runs of its paid events')
  // Written once: no write of the whole test put an event on a pipeline topic.
  for (const topic of ['sluice.incoming', 'sluice.events', 'sluice.duplicates'])
    t.same(
      writes.flatMap((ops) => logKeys(ops, `${topic}\0`)),
      [],
      `nothing on ${topic}`,
    )
  // The runs went with it: each paid event runs its function.
  const paidIds = ids.filter((_, i) => i % 2 === 0)
  await eventually(async () => {
    const { body } = await getJson(`${server.url}/v1/runs?function=one-pass-on-paid&limit=100`)
    const runs = (body as { data: Array<{ event_id: string; status: string }> }).data
    const done = runs.filter((r) => paidIds.includes(r.event_id) && r.status === 'completed')
    return done.length === paidIds.length ? true : undefined
  }, 20_000)
})

t.test('concurrent requests with one id store one event; the others are its duplicates', async (t) => {
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      postJson(`${server.url}/e/k`, [{ name: 'shop/viewed', id: 'same-id', data: { i } }]),
    ),
  )
  t.ok(
    answers.every((a) => a.status === 200),
    'all answered 200',
  )
  const ids = answers.map((a) => (a.body as { ids: string[] }).ids[0])
  const stored = await Promise.all(
    ids.map(async (id) => (await getJson(`${server.url}/v1/events/${id}`)).body as { data: { duplicate_of?: string } }),
  )
  const originals = ids.filter((_, i) => stored[i].data.duplicate_of === undefined)
  t.equal(originals.length, 1, 'one original')
  t.ok(
    stored.every((s, i) => ids[i] === originals[0] || s.data.duplicate_of === originals[0]),
    'every other is a duplicate of it',
  )
})

t.test('a lookup sees the marks of a write not yet applied', async (t) => {
  // A log whose writes apply 100 ms after they are made: the next group's lookup reads RocksDB before.
  const dir = await tempDir()
  const db = await openRocks(join(dir, 'db'), rocksOptionsOf(config))
  t.teardown(() => db.close())
  const written: string[] = []
  const onePass = createOnePass({
    commit: async (ops) => {
      await new Promise((resolve) => setTimeout(resolve, 100))
      await db.write(ops)
      written.push(...keys(ops))
    },
    writeNow: () => {},
    getMany: (keys) => db.getMany(keys),
    store: createRocksEventStore(db),
    dedup: createRocksDedupStore(db, { windowMs: 86_400_000 }),
    routing: () => undefined,
  })
  const now = Date.now()
  const event = (internalId: string, id: string): EventRecord => ({
    internalId,
    id,
    name: 'shop/viewed',
    data: {},
    ts: now,
    env: 'production',
    receivedAt: now,
    source: { kind: 'api' },
  })
  const [a, b] = newUlids(2, now)
  const first = onePass.publish([event(a, 'same')])
  await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setImmediate(resolve))
  const second = onePass.publish([event(b, 'same')])
  await Promise.all([first, second])
  const store = createRocksEventStore(db)
  t.equal((await store.getEvent(a))?.duplicateOf, undefined, 'the first is the original')
  t.equal(
    (await store.getEvent(b))?.duplicateOf,
    a,
    'the second, looked up before the first was applied, its duplicate',
  )
})

t.test('events an earlier version left on `incoming` are stored after an upgrade', async (t) => {
  // What an earlier version acknowledged but had not yet deduplicated: records on `incoming`, as it wrote them.
  const dir = await tempDir()
  const earlier = loadConfig('dev', { port: '0', host: '127.0.0.1', dataDir: dir, logLevel: 'warn' }, {})
  const db = await openRocks(join(dir, 'db'), rocksOptionsOf(earlier))
  const log = createLocalBus(db, pino({ level: 'silent' }), { maxBatchRecords: 100, retentionCheckMs: 60_000 })
  const topics = topicNames(earlier.topicPrefix)
  await log.ensureTopics({ [topics.incoming]: { partitions: 1 } })
  const now = Date.now()
  const ids = newUlids(3, now)
  const left = ids.map((internalId, i) => ({
    internalId,
    id: i === 2 ? 'left-1' : i === 1 ? 'left-1' : internalId,
    name: 'shop/paid',
    data: { i },
    ts: now,
    env: 'production',
    receivedAt: now,
    source: { kind: 'api' as const },
  }))
  await log.publish(
    topics.incoming,
    left.map((e) => ({ key: `${e.env}\0${e.id}`, value: JSON.stringify(e) })),
  )
  await log.close()
  await db.close()
  const upgraded = await startEmbedded(earlier, createLogger('warn'), { functions: [paid] })
  t.teardown(() => upgraded.stop())
  const stored = await eventually(async () => {
    const found = await Promise.all(ids.map(async (id) => (await getJson(`${upgraded.url}/v1/events/${id}`)).body))
    return found.every((f) => f.data) ? (found as Array<{ data: { duplicate_of?: string } }>) : undefined
  }, 20_000)
  t.equal(stored[0].data.duplicate_of, undefined, 'stored')
  t.equal(stored[1].data.duplicate_of, undefined, 'the first of an id stored')
  t.equal(stored[2].data.duplicate_of, ids[1], 'its repeat a duplicate of it')
  await eventually(async () => {
    const { body } = await getJson(`${upgraded.url}/v1/runs?function=one-pass-on-paid&limit=100`)
    const runs = (body as { data: Array<{ event_id: string }> }).data
    return [ids[0], ids[1]].every((id) => runs.some((r) => r.event_id === id)) ? true : undefined
  }, 20_000)
  t.pass('and routed: their runs are there')
})
